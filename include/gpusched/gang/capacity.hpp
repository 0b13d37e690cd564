// member_capacity: how many copies of one member's request a node can still take.
//
// Gang packing asks this once per node and member shape instead of scheduling every member on its
// own, which is what keeps a 1,000-member gang on 10,000 nodes within milliseconds. The figure is
// the packing's estimate; the profile's checks stay the authority: each member is confirmed by the
// profile on the live state before it is reserved (gang/placement.hpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>

#include "gpusched/core/cluster.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/core/pod.hpp"
#include "gpusched/core/types.hpp"
#include "gpusched/preflight/gpu_check.hpp"

namespace gpusched {

// CPU and memory ceilings the estimate assumes, in permille of capacity (1000: no overcommit).
// Set them to the ratios of the profile's resource_fit; a lower figure only makes packing
// conservative, never wrong, since the profile confirms every member.
struct capacity_limits {
  std::int64_t cpu_ratio_permille = 1000;
  std::int64_t memory_ratio_permille = 1000;
};

inline void validate(const capacity_limits& l) {
  // capacity (< 2^50, node validation) * ratio must stay within int64.
  if (l.cpu_ratio_permille < 1 || l.cpu_ratio_permille > 4000) {
    throw invalid_argument_error("capacity_limits.cpu_ratio_permille", "must be within 1..4000");
  }
  if (l.memory_ratio_permille < 1 || l.memory_ratio_permille > 4000) {
    throw invalid_argument_error("capacity_limits.memory_ratio_permille", "must be within 1..4000");
  }
}

namespace detail {
// Copies that a resource with `free` left can take at `each` per copy (unbounded when each == 0).
constexpr std::int64_t copies(std::int64_t free, std::int64_t each) noexcept {
  if (each <= 0) return std::numeric_limits<std::int64_t>::max();
  return free <= 0 ? 0 : free / each;
}
}  // namespace detail

// The largest k such that k copies of a request for `per_copy` distinct devices fit on devices that
// can each serve units[d] copies: sum_d min(units[d], k) >= k * per_copy. (Each copy uses a device at
// most once; the condition is the max-flow bound of that bipartite assignment and is tight.)
inline std::int64_t distinct_device_copies(const std::int64_t* units, int devices, int per_copy) noexcept {
  std::int64_t sum = 0;
  for (int d = 0; d < devices; ++d) sum += units[d];
  if (per_copy <= 1) return sum;
  std::int64_t lo = 0, hi = sum / per_copy;  // f(k) = sum min(u, k) - k * per_copy is concave, f(0) = 0
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo + 1) / 2;
    std::int64_t s = 0;
    for (int d = 0; d < devices; ++d) s += std::min(units[d], mid);
    if (s >= mid * per_copy) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

// How many copies of p node n can take now, at most `cap_at`. CPU and memory under the ceilings of
// `lim`; GPUs: per device of an allowed model, the copies its free share and free memory allow
// (whole-GPU requests need wholly free devices), combined over distinct devices per copy.
template <Cluster C>
std::int64_t member_capacity(const C& c, const pod& p, node_index n, const capacity_limits& lim, std::int64_t cap_at) {
  const node_state r = traits_of<C>::node_resources(c, n);
  std::int64_t k = cap_at;
  k = std::min(k, detail::copies(r.cpu_capacity * lim.cpu_ratio_permille / 1000 - r.cpu_allocated, p.cpu_milli));
  k = std::min(k, detail::copies(r.mem_capacity * lim.memory_ratio_permille / 1000 - r.mem_allocated, p.memory_mib));
  if (k <= 0 || !p.wants_gpu()) return std::max<std::int64_t>(k, 0);
  std::int64_t units[max_gpus_per_node];
  const int count = std::min(r.gpu_count, max_gpus_per_node);
  for (int g = 0; g < count; ++g) {
    const gpu_device& d = traits_of<C>::node_gpu(c, n, g);
    units[g] = 0;
    if (!p.model_allowed(d.model) || !device_fits(d.milli_free, d.mem_free_mib, p.gpu_milli, p.gpu_mem_mib)) continue;
    units[g] = std::min({detail::copies(d.milli_free, p.gpu_milli), detail::copies(d.mem_free_mib, p.gpu_mem_mib), k});
  }
  return std::min(k, distinct_device_copies(units, count, p.num_gpu));
}

}  // namespace gpusched
