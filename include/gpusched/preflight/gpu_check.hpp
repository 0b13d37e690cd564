// gpu_check: the seed's GPUCheck — GPU count, share, memory per device and allowed GPU models.
#pragma once

#include <cstdint>
#include <string_view>

#include "gpusched/config.hpp"
#include "gpusched/core/binding.hpp"
#include "gpusched/core/cluster.hpp"
#include "gpusched/core/gpu_summary.hpp"
#include "gpusched/preflight/preflight.hpp"

namespace gpusched {

// One device can host one GPU of the pod's request when its free share and free memory cover it.
GPUSCHED_HD constexpr bool device_fits(std::int32_t milli_free, std::int32_t mem_free_mib, std::int32_t want_milli,
                                       std::int32_t want_mem_mib) noexcept {
  return milli_free >= want_milli && mem_free_mib >= want_mem_mib;
}

// The GPUCheck verdict from the number of devices of an allowed model on which device_fits holds.
GPUSCHED_HD constexpr bool gpu_request_fits(std::int32_t num_gpu, std::int32_t fitting_devices) noexcept {
  return num_gpu == 0 || fitting_devices >= num_gpu;
}

// GPUCheck: a pod asking for num_gpu GPUs of gpu_milli share each fits a node when at least
// num_gpu devices of an allowed model have that share and gpu_mem_mib of memory free. A whole-GPU
// request (gpu_milli == 1000) therefore needs wholly free devices. CPU-only pods always pass.
// The reasons are checked from the coarsest to the finest, so that the count of each says what to
// fix: no GPU, wrong model, too few devices, too little share, too little memory.
struct gpu_check {
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "GPUCheck"; }

  template <Cluster C>
  [[nodiscard]] reason check(const C& c, const pod& p, node_index n) const {
    if (!p.wants_gpu()) return reason::ok;
    const int count = traits_of<C>::node_resources(c, n).gpu_count;
    if (count == 0) return reason::no_gpu;
    const bool any_model = p.allowed_models.empty();
    if constexpr (GpuSummarized<C>) {
      // With every model allowed, allowed = count; the summary decides without the device loop
      // wherever it pins down the loop's counts (core/gpu_summary.hpp).
      if (any_model) {
        const gpu_free_summary s = adl::call_node_gpu_summary(c, n);
        if (count < p.num_gpu) return reason::insufficient_gpu_count;
        if (s.max_free_milli < p.gpu_milli) return reason::insufficient_gpu_share;  // with_share = 0
        if (p.gpu_mem_mib <= s.min_free_mem) {  // every device has the memory: with_both = with_share
          if (p.num_gpu == 1) return reason::ok;  // one device has the share
          if (p.gpu_milli >= gpu_milli_whole) {   // with_share = the wholly free devices
            return s.whole_free >= p.num_gpu ? reason::ok : reason::insufficient_gpu_share;
          }
        }
      }
    }
    int allowed = 0, with_share = 0, with_both = 0;
    for (int g = 0; g < count; ++g) {
      const gpu_device& d = traits_of<C>::node_gpu(c, n, g);
      // Branch-free counting: which devices are free varies from node to node, so branches here
      // mispredict (measured: the loop dominated BM_ScheduleOne before this form).
      const int ok_model = (any_model || p.model_allowed(d.model)) ? 1 : 0;
      allowed += ok_model;
      with_share += ok_model & (d.milli_free >= p.gpu_milli ? 1 : 0);
      with_both += ok_model & (device_fits(d.milli_free, d.mem_free_mib, p.gpu_milli, p.gpu_mem_mib) ? 1 : 0);
    }
    if (gpu_request_fits(p.num_gpu, with_both)) return reason::ok;
    if (allowed == 0) return reason::gpu_model_not_allowed;
    if (allowed < p.num_gpu) return reason::insufficient_gpu_count;
    if (with_share < p.num_gpu) return reason::insufficient_gpu_share;
    return reason::insufficient_gpu_memory;
  }
};

}  // namespace gpusched
