// LoadAware: prefer nodes whose measured usage, plus what this pod will add, is low.
#pragma once

#include <array>
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

  template <Cluster C>
  [[nodiscard]] std::int64_t score(const C& c, const pod& p, node_index n) const {
    const node_state r = traits_of<C>::node_resources(c, n);
    const std::int64_t gpu_cap = std::int64_t{r.gpu_count} * gpu_milli_whole;
    const node_metrics* m = nullptr;
    if constexpr (MeasuredLoad<C>) m = traits_of<C>::node_load(c, n);
    const bool measured = m != nullptr;
    const node_metrics none{};
    const node_metrics& mm = measured ? *m : none;
    // The GPU allocation is only read where it is needed (it walks the node's devices).
    const std::int64_t gpu_alloc = (!measured && weights.gpu != 0 && gpu_cap != 0) ? gpu_milli_allocated(c, n, r.gpu_count) : 0;
    const std::int64_t used[resource_kinds] = {
        formula::load_aware_used(measured, mm.cpu_used, r.cpu_capacity, mm.assigned_cpu_since, formula::estimated_cpu_factor, r.cpu_allocated),
        formula::load_aware_used(measured, mm.mem_used, r.mem_capacity, mm.assigned_mem_since, formula::estimated_memory_factor, r.mem_allocated),
        formula::load_aware_used(measured, mm.gpu_used, gpu_cap, mm.assigned_gpu_milli_since, 100, gpu_alloc)};
    const std::int64_t requested[resource_kinds] = {used[0] + estimated_request(p)[0], used[1] + estimated_request(p)[1],
                                                    used[2] + estimated_request(p)[2]};
    const std::int64_t capacity[resource_kinds] = {r.cpu_capacity, r.mem_capacity, gpu_cap};
    const std::int64_t w[resource_kinds] = {weights.cpu, weights.memory, weights.gpu};
    constexpr formula::integer_division div[resource_kinds] = {};
    return formula::least_requested_mean(requested, capacity, w, div, formula::integer_division{});
  }

  // The usage this pod adds, as Koordinator estimates it: cpu 85%, memory 70% of the request; GPU
  // milli at 100%.
  [[nodiscard]] static std::array<std::int64_t, resource_kinds> estimated_request(const pod& p) noexcept {
    return {formula::estimated_usage(p.cpu_milli, formula::estimated_cpu_factor),
            formula::estimated_usage(p.memory_mib, formula::estimated_memory_factor), p.gpu_milli_total()};
  }
};

}  // namespace gpusched
