// load_threshold: reject nodes whose measured usage is above a threshold (Koordinator LoadAware filter).
#pragma once

#include <string_view>

#include "gpusched/config.hpp"
#include "gpusched/core/cluster.hpp"
#include "gpusched/preflight/preflight.hpp"

namespace gpusched {

// Which measured usage fraction exceeds its threshold, checked in the order cpu, memory, GPU:
// 0 none, 1 cpu, 2 memory, 3 GPU (Koordinator's filterNodeUsage fails strictly above a threshold).
GPUSCHED_HD constexpr int load_threshold_exceeded(double cpu_used, double mem_used, double gpu_used, double cpu_max,
                                                  double mem_max, double gpu_max) noexcept {
  return cpu_used > cpu_max ? 1 : mem_used > mem_max ? 2 : gpu_used > gpu_max ? 3 : 0;
}

// Koordinator's LoadAwareScheduling Filter: a node whose measured usage exceeds the threshold of a
// resource is filtered out; nodes without metrics pass. Defaults follow Koordinator
// (koordinator pkg/scheduler/apis/config/v1beta3/defaults.go: cpu 65%, memory 95%); the GPU
// threshold is gpusched's addition and is off (100%) by default.
struct load_threshold {
  double cpu = 0.65;
  double memory = 0.95;
  double gpu = 1.0;

  [[nodiscard]] static constexpr std::string_view name() noexcept { return "LoadAwareFilter"; }

  template <Cluster C>
  [[nodiscard]] reason check(const C& c, const pod& /*p*/, node_index n) const {
    if constexpr (MeasuredLoad<C>) {
      const node_metrics* m = traits_of<C>::node_load(c, n);
      if (m == nullptr) return reason::ok;
      switch (load_threshold_exceeded(m->cpu_used, m->mem_used, m->gpu_used, cpu, memory, gpu)) {
        case 1: return reason::cpu_load_too_high;
        case 2: return reason::memory_load_too_high;
        case 3: return reason::gpu_load_too_high;
        default: break;
      }
    }
    return reason::ok;
  }
};

}  // namespace gpusched
