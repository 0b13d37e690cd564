// What the FGD paper's baseline scorers read of a node: CPU left, GPU share left in total, and the
// normalisation constants of the authors' simulator.
#pragma once

#include <cstdint>

#include "gpusched/core/cluster.hpp"
#include "gpusched/core/types.hpp"

namespace gpusched::fgd_paper {

// pkg/type/open-gpu-share/utils/const.go: MaxSpecCpu = 128000, MaxSpecGpu = 8000 (milli).
inline constexpr double max_spec_cpu = 128000.0;
inline constexpr std::int64_t max_spec_gpu = 8000;

// NodeResource of pkg/type/resource.go, reduced to what the scorers use.
struct node_left {
  milli cpu_left = 0;        // MilliCpuLeft: allocatable - requested
  milli gpu_left_total = 0;  // GetTotalMilliGpuLeft: sum of MilliGpuLeftList
  int gpus = 0;
  int fully_free = 0;  // GetFullyFreeGpuNum: devices with all 1000 milli free
};

template <Cluster C>
node_left read_node_left(const C& c, node_index n) {
  const node_state s = traits_of<C>::node_resources(c, n);
  node_left l;
  l.cpu_left = s.cpu_capacity - s.cpu_allocated;
  l.gpus = s.gpu_count;
  for (int g = 0; g < s.gpu_count; ++g) {
    const std::int32_t f = traits_of<C>::node_gpu(c, n, g).milli_free;
    l.gpu_left_total += f;
    l.fully_free += f == gpu_milli_whole ? 1 : 0;
  }
  return l;
}

}  // namespace gpusched::fgd_paper
