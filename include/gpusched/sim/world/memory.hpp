// The seed's world (issue 17): GPU memory as it really is, not as the scheduler counts it. A
// process's device footprint follows its framework's allocator; a GPU has no memory isolation
// under time-slicing, MPS (Volta) or gpushare, so an allocation that does not fit fails in the
// process that made it. Sources: docs/experiment-world.md, "Memory".
#pragma once

#include <algorithm>
#include <cstddef>
#include <limits>
#include <span>

#include "gpusched/core/error.hpp"

namespace gpusched::sim::world {

// How a framework's allocator takes device memory.
//   tf_grab_all: TensorFlow's default: at start-up the BFC allocator reserves the free memory less
//     MinSystemMemory (tensorflow/core/common_runtime/gpu/gpu_device.cc) and never asks the driver
//     again; a working set beyond it fails inside TensorFlow (ResourceExhausted).
//   tf_growth: `tf.config.experimental.set_memory_growth(gpu, True)` / allow_growth: "the runtime
//     initialization will not allocate all memory on the device"; the reservation grows with the
//     working set and is not released (TensorFlow guide "Use a GPU": memory is not released, to
//     avoid fragmentation).
//   pytorch_caching: PyTorch's caching allocator keeps freed blocks ("unused memory managed by the
//     allocator will still show as if used in nvidia-smi", torch.cuda memory management notes), so
//     the reservation is the peak working set.
enum class framework_memory { tf_grab_all, tf_growth, pytorch_caching };

// TensorFlow's MinSystemMemory (gpu_device.cc): memory left to the system when TF grabs the device:
// 225 MiB below 2 GiB available, else max(300 MiB, 5% of the available memory).
inline double tf_min_system_memory_mib(double available_mib) noexcept {
  if (available_mib < 2048.0) return 225.0;
  return std::max(300.0, 0.05 * available_mib);
}

// The device memory a process reserves when it starts with `working_set_mib` (weights + first
// batch), given `free_mib` free on the device at that moment. TF grab-all takes
// free - MinSystemMemory(free) (at least its working set: if that is more than the free memory the
// start-up allocation fails, see try_reserve); the others take their working set.
// `limit_mib` > 0 is a per-process limit the framework is configured with (gpushare's documented
// use: TF's per_process_gpu_memory_fraction, or PyTorch's set_per_process_memory_fraction, set
// from the pod's GPU-memory request): TF then reserves exactly the limit (gpu_device.cc: total *
// fraction), the growing allocators still take their working set.
inline double initial_reservation_mib(framework_memory f, double working_set_mib, double free_mib,
                                      double limit_mib = 0.0) noexcept {
  if (f == framework_memory::tf_grab_all) {
    if (limit_mib > 0.0) return std::max(working_set_mib, limit_mib);
    return std::max(working_set_mib, free_mib - tf_min_system_memory_mib(free_mib));
  }
  return working_set_mib;
}

// The extra device memory a process must obtain from the driver when its working set grows to
// `working_set_mib` while it holds `reserved_mib`: 0 if the working set fits the reservation; the
// difference for the growing allocators; +infinity when the process fails on its own whatever its
// neighbours hold: TF grab-all (its BFC allocator never asks the driver again) and any framework
// growing past its configured `limit_mib` (> 0).
inline double growth_request_mib(framework_memory f, double reserved_mib, double working_set_mib,
                                 double limit_mib = 0.0) noexcept {
  if (working_set_mib <= reserved_mib) return 0.0;
  if (f == framework_memory::tf_grab_all || (limit_mib > 0.0 && working_set_mib > limit_mib)) {
    return std::numeric_limits<double>::infinity();
  }
  return working_set_mib - reserved_mib;
}

// One GPU's memory: what each process holds (the world's view, nvidia-smi's "used").
//
// The OOM rule (no memory isolation): process `who` asks the driver for `extra_mib` more. If the
// sum of every process's reservation plus `extra_mib` exceeds `capacity_mib`, the allocation fails
// in `who` (cudaMalloc returns cudaErrorMemoryAllocation to its caller; a GPU has no OOM killer
// that picks another process) and `who` exits; nothing else changes. Otherwise `who` holds it.
// Returns true when the allocation succeeded. `extra_mib` = +infinity (TF grab-all growing past its
// reservation) always fails. Allocation-free.
inline bool try_reserve(double capacity_mib, std::span<double> reserved_mib, std::size_t who, double extra_mib) {
  if (who >= reserved_mib.size()) throw invalid_argument_error("who", "no such process on this GPU");
  if (!(extra_mib >= 0.0)) throw invalid_argument_error("extra_mib", "must be >= 0");
  double used = 0.0;
  for (double r : reserved_mib) used += r;
  if (used + extra_mib > capacity_mib) return false;
  reserved_mib[who] += extra_mib;
  return true;
}

}  // namespace gpusched::sim::world
