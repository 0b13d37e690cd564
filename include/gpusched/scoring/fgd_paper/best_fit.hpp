// The FGD paper's BestFit baseline: the node with the least CPU and GPU left after placement wins.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>
#include <string_view>

#include "gpusched/core/cluster.hpp"
#include "gpusched/core/pod.hpp"
#include "gpusched/scoring/fgd_paper/node_vectors.hpp"
#include "gpusched/scoring/scorer.hpp"

namespace gpusched::fgd_paper {

// hkust-adsl/kubernetes-scheduler-simulator pkg/simulator/plugin/best_fit_score.go,
// getBestFitScore: int64(100 * (1 - 0.5 (cpu left - cpu) / MaxSpecCpu - 0.5 (GPU milli left -
// gpu_milli * num_gpu) / MaxSpecGpu)), or -1 when the pod does not fit; then NormalizeScore
// (plugin_utils.go): min-max onto 0..100 with integer division, all 0 when every node scores the
// same. Devices: best_fit_gpus.
struct best_fit {
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "BestFitScore"; }

  template <Cluster C>
  [[nodiscard]] std::int64_t score(const C& c, const pod& p, node_index n) const {
    const node_left l = read_node_left(c, n);
    const double free_vec[2] = {static_cast<double>(l.cpu_left), static_cast<double>(l.gpu_left_total)};
    const double req_vec[2] = {static_cast<double>(p.cpu_milli), static_cast<double>(p.gpu_milli_total())};
    const double max_spec[2] = {max_spec_cpu, static_cast<double>(max_spec_gpu)};
    double s = 0;
    for (int i = 0; i < 2; ++i) {
      if (free_vec[i] < req_vec[i]) return -1;
      s += (free_vec[i] - req_vec[i]) / max_spec[i] * 0.5;
    }
    s = (1.0 - s) * 100.0;
    return static_cast<std::int64_t>(s);
  }

  // plugin_utils.go NormalizeScore.
  static void normalize(std::span<std::int64_t> scores) noexcept {
    std::int64_t highest = -std::numeric_limits<std::int64_t>::max(), lowest = std::numeric_limits<std::int64_t>::max();
    for (std::int64_t s : scores) {
      highest = std::max(highest, s);
      lowest = std::min(lowest, s);
    }
    const std::int64_t old_range = highest - lowest, new_range = 100;
    for (std::int64_t& s : scores) s = old_range == 0 ? 0 : (s - lowest) * new_range / old_range;
  }
};

}  // namespace gpusched::fgd_paper
