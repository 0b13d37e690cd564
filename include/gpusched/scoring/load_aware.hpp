// LoadAware: prefer nodes whose measured usage, plus what this pod will add, is low.
#pragma once

#include <cmath>
#include <cstdint>
#include <string_view>

#include "gpusched/scoring/formulas.hpp"
#include "gpusched/scoring/resource_usage.hpp"
#include "gpusched/scoring/scorer.hpp"

namespace gpusched {

// Koordinator's loadAwareSchedulingScorer (koordinator pkg/scheduler/plugins/loadaware/load_aware.go):
//   score = sum_r w_r * leastRequestedScore(used_r + estimated_r, allocatable_r) / sum_r w_r
// with the estimated usage of this pod, and of pods assigned since the reading, = request * factor
// (cpu 85%, memory 70%). gpusched adds the GPU
// dimension: measured SM utilisation times the node's GPU milli, plus the pod's GPU milli at 100%.
// Where a node reports no metrics, the allocation (requests) stands in for usage, so that an
// unmeasured node is neither favoured nor shunned (Koordinator scores such a node 0).
struct load_aware {
  resource_weights weights{1, 1, 1};

  [[nodiscard]] static constexpr std::string_view name() noexcept { return "LoadAware"; }

  // Round half up for the non-negative products above (llround is a libm call on the hot path).
  static constexpr std::int64_t round_nonnegative(double x) noexcept { return static_cast<std::int64_t>(x + 0.5); }

  template <Cluster C>
  [[nodiscard]] std::int64_t score(const C& c, const pod& p, node_index n) const {
    const node_state r = traits_of<C>::node_resources(c, n);
    const std::int64_t gpu_cap = std::int64_t{r.gpu_count} * gpu_milli_whole;
    std::int64_t used_cpu = r.cpu_allocated, used_mem = r.mem_allocated, used_gpu = -1;
    if constexpr (MeasuredLoad<C>) {
      if (const node_metrics* m = traits_of<C>::node_load(c, n)) {
        used_cpu = round_nonnegative(m->cpu_used * static_cast<double>(r.cpu_capacity)) +
                   m->assigned_cpu_since * formula::estimated_cpu_factor / 100;
        used_mem = round_nonnegative(m->mem_used * static_cast<double>(r.mem_capacity)) +
                   m->assigned_mem_since * formula::estimated_memory_factor / 100;
        used_gpu = round_nonnegative(m->gpu_used * static_cast<double>(gpu_cap)) + m->assigned_gpu_milli_since;
      }
    }
    if (used_gpu < 0 && weights.gpu != 0 && gpu_cap != 0) used_gpu = gpu_milli_allocated(c, n, r.gpu_count);
    resource_usage u;
    u.capacity = {r.cpu_capacity, r.mem_capacity, gpu_cap};
    u.requested = {used_cpu + p.cpu_milli * formula::estimated_cpu_factor / 100,
                   used_mem + p.memory_mib * formula::estimated_memory_factor / 100,
                   used_gpu + p.gpu_milli_total()};
    std::int64_t node_score = 0, weight_sum = 0;
    for (int k = 0; k < resource_kinds; ++k) {
      if (weights[k] == 0 || u.capacity[k] == 0) continue;
      node_score += formula::least_requested(u.requested[k], u.capacity[k]) * weights[k];
      weight_sum += weights[k];
    }
    return weight_sum == 0 ? 0 : node_score / weight_sum;
  }
};

}  // namespace gpusched
