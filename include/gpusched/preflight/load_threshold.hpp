// load_threshold: reject nodes whose measured usage is above a threshold (Koordinator LoadAware filter).
#pragma once

#include <string_view>

#include "gpusched/core/cluster.hpp"
#include "gpusched/preflight/preflight.hpp"

namespace gpusched {

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
      if (m->cpu_used > cpu) return reason::cpu_load_too_high;
      if (m->mem_used > memory) return reason::memory_load_too_high;
      if (m->gpu_used > gpu) return reason::gpu_load_too_high;
    }
    return reason::ok;
  }
};

}  // namespace gpusched
