// The FGD paper's DotProd baseline (Tetris-style alignment of the pod with the node's free resources).
#pragma once

#include <cstdint>
#include <string_view>

#include "gpusched/core/cluster.hpp"
#include "gpusched/core/pod.hpp"
#include "gpusched/scoring/fgd_paper/node_vectors.hpp"
#include "gpusched/scoring/scorer.hpp"

namespace gpusched::fgd_paper {

// hkust-adsl/kubernetes-scheduler-simulator pkg/simulator/plugin/dot_product_score.go with the
// experiments' dimExtMethod "merge" and normMethod "max": node vector [cpu left, GPU milli left in
// total] and pod vector [cpu, gpu_milli * num_gpu], each divided by [MaxSpecCpu, MaxSpecGpu];
// score = int64(100 * (1 - dot / 2)): the node whose free resources align least with the pod wins,
// which packs. A node with less CPU left than the pod asks scores 0. Devices: best_fit_gpus.
struct dot_product {
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "DotProductScore"; }

  template <Cluster C>
  [[nodiscard]] std::int64_t score(const C& c, const pod& p, node_index n) const {
    const node_left l = read_node_left(c, n);
    if (l.cpu_left < p.cpu_milli) return 0;
    const double node_cpu = static_cast<double>(l.cpu_left) / max_spec_cpu;
    const double node_gpu = static_cast<double>(l.gpu_left_total) / static_cast<double>(max_spec_gpu);
    const double pod_cpu = static_cast<double>(p.cpu_milli) / max_spec_cpu;
    const double pod_gpu = static_cast<double>(p.gpu_milli_total()) / static_cast<double>(max_spec_gpu);
    double s = node_cpu * pod_cpu + node_gpu * pod_gpu;
    s /= 2.0;
    s = 1 - s;
    return static_cast<std::int64_t>(100.0 * s);
  }
};

}  // namespace gpusched::fgd_paper
