// resource_fit: CPU and memory fit, with an optional overcommit ceiling per resource.
#pragma once

#include <string_view>

#include "gpusched/config.hpp"
#include "gpusched/core/cluster.hpp"
#include "gpusched/preflight/preflight.hpp"

namespace gpusched {

// Kubernetes' NodeResourcesFit filter for CPU and memory
// (kubernetes pkg/scheduler/framework/plugins/noderesources/fit.go, fitsRequest), extended with a
// ceiling: allocated + request <= capacity * ratio (ratio 1.0 by default, i.e. no overcommit).
struct resource_fit {
  std::int64_t cpu_ratio_permille = 1000;
  std::int64_t memory_ratio_permille = 1000;

  [[nodiscard]] static constexpr std::string_view name() noexcept { return "NodeResourcesFit"; }

  template <Cluster C>
  [[nodiscard]] reason check(const C& c, const pod& p, node_index n) const {
    const node_state r = traits_of<C>::node_resources(c, n);
    if (!within_ceiling(r.cpu_allocated, p.cpu_milli, r.cpu_capacity, cpu_ratio_permille)) return reason::insufficient_cpu;
    if (!within_ceiling(r.mem_allocated, p.memory_mib, r.mem_capacity, memory_ratio_permille)) return reason::insufficient_memory;
    return reason::ok;
  }
};

}  // namespace gpusched
