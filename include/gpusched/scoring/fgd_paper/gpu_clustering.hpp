// The FGD paper's GpuClustering baseline: put pods of the same GPU shape together.
#pragma once

#include <array>
#include <concepts>
#include <cstdint>
#include <string_view>

#include "gpusched/core/cluster.hpp"
#include "gpusched/core/pod.hpp"
#include "gpusched/scoring/fgd_paper/node_vectors.hpp"
#include "gpusched/scoring/scorer.hpp"

namespace gpusched::fgd_paper {

// A pod's GPU affinity tag (pkg/type/open-gpu-share/utils/pod.go GetGpuAffinityFromPodAnnotation):
// "no-gpu", "share-gpu" (one device, a share below 1000) or "<k>-gpu" (k whole devices). The
// authors reject multi-device shares; gpusched gives them tags of their own.
// Index: 0 no-gpu, 1 share-gpu, 1 + k for k whole GPUs, 1 + 64 + k for k shared devices.
inline constexpr int gpu_affinity_tag_count = 2 + 2 * max_gpus_per_node;
constexpr int gpu_affinity_tag(const pod& p) noexcept {
  if (p.num_gpu <= 0) return 0;
  if (p.gpu_milli >= gpu_milli_whole) return 1 + p.num_gpu;
  return p.num_gpu == 1 ? 1 : 1 + max_gpus_per_node + p.num_gpu;
}

// GpuAffinity of a node (pkg/utils/utils.go GetNodeResourceViaNodeInfo): how many of its pods
// carry each tag, CPU-only pods not counted. 260 bytes per node.
struct gpu_affinity {
  std::array<std::uint16_t, gpu_affinity_tag_count> pods{};
  std::uint16_t distinct = 0;  // tags with at least one pod

  void add(const pod& p) noexcept {
    const int t = gpu_affinity_tag(p);
    if (t != 0 && pods[static_cast<std::size_t>(t)]++ == 0) ++distinct;
  }
  void remove(const pod& p) noexcept {
    const int t = gpu_affinity_tag(p);
    if (t != 0 && pods[static_cast<std::size_t>(t)] > 0 && --pods[static_cast<std::size_t>(t)] == 0) --distinct;
  }
  friend bool operator==(const gpu_affinity&, const gpu_affinity&) = default;
};

namespace adl {
void gpu_affinity_of() = delete;
template <class C>
auto call_gpu_affinity_of(const C& c, node_index n) -> decltype(gpu_affinity_of(c, n)) {
  return gpu_affinity_of(c, n);
}
}  // namespace adl

// A cluster that knows the GPU affinity tags of each node's pods: `gpu_affinity_of(c, n)`, found by
// ADL, returns the node's gpu_affinity. The Cluster concept carries no per-pod record, so a host (or
// gpusched's simulator) keeps one gpu_affinity per node, updated on bind and unbind.
template <class C>
concept GpuAffinitySource = Cluster<C> && requires(const C& c, node_index n) {
  { adl::call_gpu_affinity_of(c, n) } -> std::convertible_to<const gpu_affinity&>;
};

// pkg/simulator/plugin/gpu_clustering_score.go (integer arithmetic as there), with
// left = GPU milli left on the node and fill = 25 * (MaxSpecGpu - left) / MaxSpecGpu:
//   the node hosts pods of the pod's tag and no other tag:   fill + 75
//   the node hosts pods of the pod's tag and other tags:     fill + 50
//   the node hosts no GPU pod:                               fill + 25
//   the node hosts GPU pods of other tags only:              fill
// CPU-only pods score 0 everywhere. Devices: best_fit_gpus.
struct gpu_clustering {
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "GpuClusteringScore"; }

  template <GpuAffinitySource C>
  [[nodiscard]] std::int64_t score(const C& c, const pod& p, node_index n) const {
    const int tag = gpu_affinity_tag(p);
    if (tag == 0) return 0;
    const gpu_affinity& a = adl::call_gpu_affinity_of(c, n);
    const std::int64_t fill = 100 / 4 * (max_spec_gpu - read_node_left(c, n).gpu_left_total) / max_spec_gpu;
    if (a.pods[static_cast<std::size_t>(tag)] > 0) return fill + (a.distinct == 1 ? 100 * 3 / 4 : 100 * 2 / 4);
    return fill + (a.distinct == 0 ? 100 / 4 : 0);
  }
};

}  // namespace gpusched::fgd_paper
