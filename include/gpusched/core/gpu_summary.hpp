// gpu_summary: a per-node summary of free GPU devices that decides GPUCheck without walking the
// devices for the common requests (issue 14, item 3), kept by observing a bound_cluster
// (core/bound_cluster.hpp).
//
// A cluster may provide, found by ADL, `node_gpu_summary(c, n) -> gpu_free_summary` (concept
// GpuSummarized): the largest free share and the smallest free memory over node n's devices and
// the number of wholly free devices (free share 1000). gpu_check (preflight/gpu_check.hpp) then
// decides these requests from the summary alone, with the per-device loop's verdict and reason:
//   - any model allowed, too few devices                     -> insufficient_gpu_count
//   - any model allowed, no device with the share            -> insufficient_gpu_share
//   - any model allowed, every device has the GPU memory asked (so memory never decides):
//       one device                                           -> fits (a device has the share)
//       whole GPUs                                           -> fits iff enough wholly free devices
// and walks the devices otherwise. A bound_cluster<C, ..., gpu_summary, ...> provides the hook
// (core/bound_cluster.hpp); the
// summary of a node is re-read after each reservation and release on it (O(devices) once per
// placement instead of once per check). 12 bytes per node.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "gpusched/core/binding.hpp"
#include "gpusched/core/cluster.hpp"
#include "gpusched/core/pod.hpp"
#include "gpusched/core/types.hpp"

namespace gpusched {

struct gpu_free_summary {
  std::int32_t max_free_milli = -1;  // -1: no device
  std::int32_t min_free_mem = 0;     // the smallest free GPU memory of a device (0: no device)
  std::int32_t whole_free = 0;  // devices with the whole share free
  friend bool operator==(const gpu_free_summary&, const gpu_free_summary&) = default;
};

// The summary of node n, read device by device.
template <Cluster C>
gpu_free_summary read_gpu_summary(const C& c, node_index n) {
  gpu_free_summary s;
  const int count = traits_of<C>::node_resources(c, n).gpu_count;
  for (int g = 0; g < count; ++g) {
    const auto& d = traits_of<C>::node_gpu(c, n, g);
    s.max_free_milli = d.milli_free > s.max_free_milli ? d.milli_free : s.max_free_milli;
    s.min_free_mem = (g == 0 || d.mem_free_mib < s.min_free_mem) ? d.mem_free_mib : s.min_free_mem;
    s.whole_free += d.milli_free >= gpu_milli_whole ? 1 : 0;
  }
  return s;
}

namespace adl {
void node_gpu_summary() = delete;
template <class C>
auto call_node_gpu_summary(const C& c, node_index n) -> decltype(node_gpu_summary(c, n)) {
  return node_gpu_summary(c, n);
}
}  // namespace adl

template <class C>
concept GpuSummarized = Cluster<C> && requires(const C& c, node_index n) {
  { adl::call_node_gpu_summary(c, n) } -> std::convertible_to<gpu_free_summary>;
};

// The observer: one summary per node.
class gpu_summary {
 public:
  [[nodiscard]] const gpu_free_summary& of(node_index n) const noexcept { return nodes_[n]; }

  template <Cluster C>
  void attach(const C& c) {
    const std::size_t n = num_nodes(c);
    nodes_.assign(n, gpu_free_summary{});
    for (std::size_t i = 0; i < n; ++i) nodes_[i] = read_gpu_summary(c, static_cast<node_index>(i));
  }
  template <Cluster C>
  void node_added(const C& c, node_index n) {
    if (nodes_.size() <= n) nodes_.resize(std::size_t{n} + 1);
    nodes_[n] = read_gpu_summary(c, n);
  }
  template <Cluster C>
  void node_changed(const C& c, node_index n) noexcept {
    nodes_[n] = read_gpu_summary(c, n);
  }
  template <class C>
  void reserved(const C& c, const pod&, const binding& b) noexcept {
    if (b.gpus != 0) nodes_[b.node] = read_gpu_summary(c, b.node);
  }
  template <class C>
  void released(const C& c, const pod&, const binding& b) noexcept {
    if (b.gpus != 0) nodes_[b.node] = read_gpu_summary(c, b.node);
  }

 private:
  std::vector<gpu_free_summary> nodes_;
};

}  // namespace gpusched
