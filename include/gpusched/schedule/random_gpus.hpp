// A GPU selector that picks uniformly among the devices that fit a GPU-share pod.
#pragma once

#include <cstdint>
#include <string_view>

#include "gpusched/core/binding.hpp"
#include "gpusched/core/cluster.hpp"
#include "gpusched/core/splitmix64.hpp"
#include "gpusched/preflight/gpu_check.hpp"
#include "gpusched/schedule/gpu_selection.hpp"

namespace gpusched {

// The FGD authors' "random" device policy (hkust-adsl/kubernetes-scheduler-simulator
// pkg/simulator/plugin/open_gpu_share.go, allocateGpuIdBasedOnRandomFit), used by their Random
// baseline: a GPU-share pod goes to a device drawn uniformly among those with enough free share
// (reservoir sampling in index order); whole-GPU pods take the lowest-index free devices as with
// best_fit_gpus. Seeded; the generator advances on every share pod, so a selector object is not
// meant to be shared between threads.
class random_gpus {
 public:
  explicit random_gpus(std::uint64_t seed = 0) noexcept : state_(seed ^ 0xD1B54A32D192ED03ULL) {}
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "RandomFit"; }

  template <Cluster C>
  [[nodiscard]] gpu_set select(const C& c, const pod& p, node_index n) const {
    if (!p.wants_gpu()) return 0;
    if (p.num_gpu != 1 || p.gpu_milli >= gpu_milli_whole) return best_fit_gpus{}.select(c, p, n);
    const int count = traits_of<C>::node_resources(c, n).gpu_count;
    int chosen = -1;
    std::uint64_t seen = 0;
    for (int g = 0; g < count; ++g) {
      const gpu_device& d = traits_of<C>::node_gpu(c, n, g);
      if (!p.model_allowed(d.model) || !device_fits(d.milli_free, d.mem_free_mib, p.gpu_milli, p.gpu_mem_mib)) continue;
      ++seen;
      if (next() % seen == 0) chosen = g;
    }
    return chosen < 0 ? 0 : gpu_set{1} << chosen;
  }

 private:
  std::uint64_t next() const noexcept { return splitmix64(state_); }
  mutable std::uint64_t state_;
};

}  // namespace gpusched
