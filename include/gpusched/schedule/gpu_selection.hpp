// Which devices inside the chosen node a pod gets (the Reserve step's device policy).
//
// A GpuSelector `s` provides, for `const C& c`, `const pod& p`, `node_index n`:
//   s.select(c, p, n) -> gpu_set   the devices to use; 0 when the pod cannot be placed there
//   s.name()          -> std::string_view
#pragma once

#include <concepts>
#include <cstdint>
#include <string_view>

#include "gpusched/core/binding.hpp"
#include "gpusched/core/cluster.hpp"
#include "gpusched/preflight/gpu_check.hpp"

namespace gpusched {

template <class S, class C>
concept GpuSelector = Cluster<C> && requires(const S& s, const C& c, const pod& p, node_index n) {
  { s.select(c, p, n) } -> std::same_as<gpu_set>;
  { s.name() } -> std::convertible_to<std::string_view>;
};

// The best-fit device choice, for any rule saying whether a device can host one GPU of the pod
// (`fits(const gpu_device&)`; the model is checked here): shares take the fitting devices with the
// least free share, lowest index among equals; whole GPUs the lowest-index fitting devices.
// Returns 0 when fewer than num_gpu devices fit.
template <Cluster C, class Fits>
[[nodiscard]] gpu_set best_fit_select(const C& c, const pod& p, node_index n, Fits&& fits) {
  if (!p.wants_gpu()) return 0;
  const int count = traits_of<C>::node_resources(c, n).gpu_count;
  gpu_set chosen = 0;
  for (int k = 0; k < p.num_gpu; ++k) {
    int best = -1;
    std::int32_t best_free = 0;
    for (int g = 0; g < count; ++g) {
      if ((chosen >> g) & 1U) continue;
      const gpu_device& d = traits_of<C>::node_gpu(c, n, g);
      if (!p.model_allowed(d.model) || !fits(d)) continue;
      if (p.gpu_milli == gpu_milli_whole) {  // whole GPUs: lowest index first
        best = g;
        break;
      }
      if (best < 0 || d.milli_free < best_free) {
        best = g;
        best_free = d.milli_free;
      }
    }
    if (best < 0) return 0;
    chosen |= gpu_set{1} << best;
  }
  return chosen;
}

// Best fit, as the FGD authors' simulator allocates (hkust-adsl/kubernetes-scheduler-simulator):
// a GPU-share pod goes to the fitting device with the least free share (lowest index among equals);
// whole-GPU pods take the lowest-index wholly free devices. Multi-device shares take the num_gpu
// fitting devices with the least free share.
struct best_fit_gpus {
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "BestFit"; }

  template <Cluster C>
  [[nodiscard]] gpu_set select(const C& c, const pod& p, node_index n) const {
    return best_fit_select(c, p, n, [&](const gpu_device& d) {
      return device_fits(d.milli_free, d.mem_free_mib, p.gpu_milli, p.gpu_mem_mib);
    });
  }
};

}  // namespace gpusched
