// Helpers shared by the gang tests: the profile they place with, a GPU pod, and a scorer that
// records PreFilter calls.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/core/cluster.hpp"
#include "gpusched/core/pod.hpp"
#include "gpusched/preflight/gpu_check.hpp"
#include "gpusched/preflight/resource_fit.hpp"
#include "gpusched/profile/static_profile.hpp"

namespace gang_test {

// The GPU check, then NodeResourcesFit; no scorers (the first feasible node wins).
inline auto fit_profile() {
  using namespace gpusched;
  return make_profile(checks(gpu_check{}, resource_fit{}), scores());
}

// 1 core, 1 GiB and `gpus` whole GPUs at `priority`.
inline gpusched::pod gpu_pod(const std::string& name, int priority, int gpus) {
  return gpusched::make_pod(name).cpu(1000).memory(1024).gpus(gpus).priority(priority);
}

// A scorer with a PreFilter hook (scoring/scorer.hpp) that records the pods it is asked about.
struct prefilter_log {
  std::shared_ptr<std::vector<std::string>> seen = std::make_shared<std::vector<std::string>>();
  static constexpr std::string_view name() noexcept { return "PreFilterLog"; }
  template <gpusched::Cluster C>
  std::int64_t score(const C&, const gpusched::pod&, gpusched::node_index) const { return 0; }
  template <gpusched::Cluster C>
  void pre_filter(const C&, const gpusched::pod& p) const { seen->push_back(p.name); }
};

}  // namespace gang_test
