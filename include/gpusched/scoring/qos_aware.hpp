// QoSAware: latency-sensitive pods spread across GPUs, best-effort pods pack.
#pragma once

#include <cstdint>
#include <string_view>

#include "gpusched/scoring/formulas.hpp"
#include "gpusched/scoring/resource_usage.hpp"
#include "gpusched/scoring/scorer.hpp"

namespace gpusched {

// gpusched's QoS factor: a Guaranteed pod prefers nodes whose GPUs are least allocated after it
// lands (fewer co-tenants, less interference: LeastAllocated on GPU milli); a BestEffort pod prefers
// the most allocated (MostAllocated on GPU milli), keeping free GPUs whole for the pods that need
// them; Burstable is neutral (50). CPU-only pods use CPU instead of GPU milli.
struct qos_aware {
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "QoSAware"; }

  template <Cluster C>
  [[nodiscard]] std::int64_t score(const C& c, const pod& p, node_index n) const {
    if (p.qos == qos_class::burstable) return 50;  // without reading the node
    const resource_usage u = usage_with(c, p, n, p.wants_gpu());
    const int k = p.wants_gpu() ? 2 : 0;
    return formula::qos_aware_score(p.qos, u.requested[k], u.capacity[k], formula::integer_division{});
  }
};

}  // namespace gpusched
