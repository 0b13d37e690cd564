// The PreflightCheck concept (Kubernetes' PreFilter/Filter): can this pod run on this node at all?
//
// For a check `k`, `const C& c` (a Cluster), `const pod& p`, `node_index n`:
//   k.check(c, p, n) -> reason     reason::ok, or why the node cannot take the pod
//   k.name()         -> std::string_view   the plugin name used in configs ("GPUCheck")
#pragma once

#include <concepts>
#include <cstdint>
#include <string_view>

#include "gpusched/config.hpp"
#include "gpusched/core/cluster.hpp"
#include "gpusched/core/pod.hpp"
#include "gpusched/core/reason.hpp"

namespace gpusched {

template <class K, class C>
concept PreflightCheck = Cluster<C> && requires(const K& k, const C& c, const pod& p, node_index n) {
  { k.check(c, p, n) } -> std::same_as<reason>;
  { k.name() } -> std::convertible_to<std::string_view>;
};

// Overcommit ceiling: allocated + request must stay within capacity * ratio.
// Ratios are in permille (1000 = no overcommit, 1200 = the seed's 120%). The ceiling depends on the
// node only, so batch engines compute it once per node and compare per pod.
// Without overcommit (1000, the default) the ceiling is the capacity itself: no division on the
// per-pod path (capacity * 1000 / 1000 == capacity for every capacity below 2^53).
GPUSCHED_HD constexpr std::int64_t overcommit_ceiling(std::int64_t capacity, std::int64_t ratio_permille) noexcept {
  return ratio_permille == 1000 ? capacity : capacity * ratio_permille / 1000;
}
GPUSCHED_HD constexpr bool fits_under_ceiling(std::int64_t allocated, std::int64_t request, std::int64_t ceiling) noexcept {
  return allocated + request <= ceiling;
}
GPUSCHED_HD constexpr bool within_ceiling(std::int64_t allocated, std::int64_t request, std::int64_t capacity,
                                          std::int64_t ratio_permille) noexcept {
  return fits_under_ceiling(allocated, request, overcommit_ceiling(capacity, ratio_permille));
}

}  // namespace gpusched
