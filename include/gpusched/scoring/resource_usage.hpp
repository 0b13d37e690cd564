// Requested-after-placement and capacity per resource, the input of the NodeResources scorers.
#pragma once

#include <array>
#include <cstdint>

#include "gpusched/core/cluster.hpp"
#include "gpusched/core/pod.hpp"

namespace gpusched {

enum class resource_kind : std::uint8_t { cpu = 0, memory = 1, gpu = 2 };
inline constexpr int resource_kinds = 3;

// Weight per resource; a zero weight leaves the resource out (Kubernetes' `resources` list).
// Kubernetes' default is cpu 1, memory 1 (pkg/scheduler/apis/config/v1/defaults.go).
struct resource_weights {
  std::int64_t cpu = 1;
  std::int64_t memory = 1;
  std::int64_t gpu = 0;  // GPU milli, as nvidia.com/gpu would be weighted
  [[nodiscard]] constexpr std::int64_t operator[](int r) const noexcept { return r == 0 ? cpu : r == 1 ? memory : gpu; }
  [[nodiscard]] constexpr std::array<std::int64_t, 3> as_array() const noexcept { return {cpu, memory, gpu}; }
};

struct resource_usage {
  std::array<std::int64_t, resource_kinds> requested{};  // node allocation plus the pod's request
  std::array<std::int64_t, resource_kinds> capacity{};
};

template <Cluster C>
std::int64_t gpu_milli_allocated(const C& c, node_index n, int gpu_count) {
  std::int64_t used = 0;
  for (int g = 0; g < gpu_count; ++g) used += gpu_milli_whole - traits_of<C>::node_gpu(c, n, g).milli_free;
  return used;
}

// Kubernetes computes the requested amount as the node's requested plus the pod's request
// (noderesources/resource_allocation.go, calculateResourceAllocatableRequest).
// A scalar (extended) resource the pod does not request is left out of the score: upstream returns
// allocatable 0, requested 0 for it and the scorers skip a zero allocatable (resource_allocation.go
// at kubernetes commit b170451c, "bypass scoring on this resource"). cpu and memory are always
// scored. So with need_gpu the GPU dimension has capacity 0 (skipped by every formula) for a pod that
// asks for no GPU; without need_gpu (the GPU weight is 0) it is not read at all.
template <Cluster C>
resource_usage usage_with(const C& c, const pod& p, node_index n, bool need_gpu) {
  const node_state r = traits_of<C>::node_resources(c, n);
  resource_usage u;
  u.requested = {r.cpu_allocated + p.cpu_milli, r.mem_allocated + p.memory_mib, 0};
  u.capacity = {r.cpu_capacity, r.mem_capacity, std::int64_t{r.gpu_count} * gpu_milli_whole};
  if (need_gpu) {
    if (p.gpu_milli_total() == 0) {
      u.capacity[2] = 0;
    } else {
      u.requested[2] = gpu_milli_allocated(c, n, r.gpu_count) + p.gpu_milli_total();
    }
  }
  return u;
}

}  // namespace gpusched
