// binding: a pod's request placed on one node and a concrete set of GPU devices.
#pragma once

#include <bit>
#include <cstdint>

#include "gpusched/core/pod.hpp"
#include "gpusched/core/types.hpp"

namespace gpusched {

// Bit g of a gpu_set is GPU index g on the node.
using gpu_set = std::uint64_t;

struct binding {
  node_index node = 0;
  gpu_set gpus = 0;             // the devices the pod uses
  milli cpu_milli = 0;
  mib memory_mib = 0;
  std::int32_t gpu_milli = 0;    // share taken on each device in `gpus`
  std::int32_t gpu_mem_mib = 0;  // GPU memory taken on each device in `gpus`

  [[nodiscard]] int gpu_count() const noexcept { return std::popcount(gpus); }
  friend bool operator==(const binding&, const binding&) = default;
};

inline binding make_binding(const pod& p, node_index node, gpu_set gpus) noexcept {
  return binding{node, gpus, p.cpu_milli, p.memory_mib, p.gpu_milli, p.gpu_mem_mib};
}

// Calls f(g) for each GPU index g in s, lowest first.
template <class F>
constexpr void for_each_gpu(gpu_set s, F&& f) {
  while (s != 0) {
    const int g = std::countr_zero(s);
    f(g);
    s &= s - 1;
  }
}

}  // namespace gpusched
