// Shared set-up for the preemption tests: a bound_cluster of GPU nodes and a two-check profile.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpusched/core/bound_cluster.hpp"
#include "gpusched/preemption/preemption.hpp"
#include "gpusched/preflight/gpu_check.hpp"
#include "gpusched/preflight/resource_fit.hpp"
#include "gpusched/profile/static_profile.hpp"
#include "support/builders.hpp"
#include "support/fit_profile.hpp"

namespace fx {

using cluster = gpusched::bound_cluster<>;

inline auto fit_profile() { return testing::gpu_first_profile(); }
using profile = decltype(fit_profile());
using preemptor = gpusched::preemptor<cluster, profile>;

inline gpusched::node_index add_node(cluster& c, const std::string& name, int gpus, gpusched::milli cpu = 64000,
                                     gpusched::mib mem = 262144) {
  return c.base().add_node(testing::gpu_node(name, cpu, mem, gpus));
}

// Binds p on node n's devices `gpus`, started at `start`.
inline gpusched::pod_id run(cluster& c, const gpusched::pod& p, gpusched::node_index n, gpusched::gpu_set gpus,
                            double start) {
  return c.bind(p, gpusched::make_binding(p, n, gpus), start);
}

using testing::gpu_pod;

// Options that look at every node (no candidate sampling), so that outcomes are known by hand.
inline gpusched::preemption_options all_nodes() {
  gpusched::preemption_options o;
  o.sample_candidates = false;
  return o;
}

// Upstream's negPriority, lowPriority, midPriority, highPriority, veryHighPriority
// (pkg/scheduler/framework/plugins/defaultpreemption/default_preemption_test.go).
inline constexpr std::int32_t neg = -100, low = 0, mid = 100, high = 1000, very_high = 10000;

inline std::vector<std::string> victim_names(const gpusched::preemption_result& r) {
  std::vector<std::string> v;
  for (const auto& x : r.victims) v.push_back(x.spec.name);
  return v;
}

}  // namespace fx
