// The FGD paper's GpuPacking baseline: prefer partly used GPUs, then partly used nodes, then idle nodes.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string_view>

#include "gpusched/core/cluster.hpp"
#include "gpusched/core/pod.hpp"
#include "gpusched/scoring/fgd_paper/node_vectors.hpp"
#include "gpusched/scoring/scorer.hpp"

namespace gpusched::fgd_paper {

// hkust-adsl/kubernetes-scheduler-simulator pkg/simulator/plugin/gpu_packing_score.go,
// getPackingScore (integer arithmetic as there):
//   all devices free:                 max(33 - free devices, free devices)
//   needs some wholly free device:    max(50 - wholly free devices used, 33)
//   fits on partly used devices only: max(100 - (sum of free*100/1000 over the devices used)/10, 50)
// The devices "used" are those NodeResource.Sub would take: the fitting ones with the least free
// share first. CPU-only pods score 0 everywhere. Devices: best_fit_gpus.
struct gpu_packing {
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "GpuPackingScore"; }

  template <Cluster C>
  [[nodiscard]] std::int64_t score(const C& c, const pod& p, node_index n) const {
    if (p.gpu_milli <= 0) return 0;
    const node_left l = read_node_left(c, n);
    if (l.fully_free == l.gpus) {
      return std::max<std::int64_t>(max_node_score / 3 - l.fully_free, l.fully_free);
    }
    // Devices in ascending order of free share (stable), taken while they fit.
    std::int32_t want = p.num_gpu;
    std::int64_t free_used = 0;  // sum over the devices used of free * 100 / 1000
    int whole_used = 0;
    std::uint64_t taken = 0;
    while (want > 0) {
      int pick = -1;
      std::int32_t pick_free = 0;
      for (int g = 0; g < l.gpus; ++g) {
        if ((taken >> g) & 1U) continue;
        const std::int32_t f = traits_of<C>::node_gpu(c, n, g).milli_free;
        if (f < p.gpu_milli) continue;
        if (pick < 0 || f < pick_free) {
          pick = g;
          pick_free = f;
        }
      }
      if (pick < 0) return 0;  // the authors return an error status; the filter excludes this case
      taken |= std::uint64_t{1} << pick;
      --want;
      free_used += std::int64_t{pick_free} * 100 / gpu_milli_whole;
      whole_used += pick_free == gpu_milli_whole ? 1 : 0;
    }
    if (whole_used > 0) return std::max<std::int64_t>(max_node_score / 2 - whole_used, max_node_score / 3);
    return std::max<std::int64_t>(max_node_score - free_used / 10, max_node_score / 2);
  }

 private:
  static constexpr std::int64_t max_node_score = 100;
};

}  // namespace gpusched::fgd_paper
