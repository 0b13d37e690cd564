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

  // The rejection with fit.go's InsufficientResource quantities: "Insufficient cpu (requested 3000,
  // used 2000, capacity 4000)"; capacity is the ceiling under overcommit.
  template <Cluster C>
  [[nodiscard]] reason_detail explain(const C& c, const pod& p, node_index n) const {
    const node_state r = traits_of<C>::node_resources(c, n);
    switch (check(c, p, n)) {
      case reason::insufficient_cpu:
        return insufficient_resource(reason::insufficient_cpu, "cpu", p.cpu_milli, r.cpu_allocated,
                                     overcommit_ceiling(r.cpu_capacity, cpu_ratio_permille));
      case reason::insufficient_memory:
        return insufficient_resource(reason::insufficient_memory, "memory", p.memory_mib, r.mem_allocated,
                                     overcommit_ceiling(r.mem_capacity, memory_ratio_permille));
      default: return {};
    }
  }
};

}  // namespace gpusched
