// The seed's world (issue 17): how the processes on one GPU share its time. One small interface,
// four device-sharing models, chosen per profile. Sources and worked examples:
// docs/experiment-world.md, "Device sharing".
#pragma once

#include <cstddef>
#include <span>
#include <string>

#include "gpusched/core/error.hpp"
#include "gpusched/sim/serving/interference.hpp"
#include "gpusched/sim/serving/profile_table.hpp"

namespace gpusched::sim::world {

// exclusive: the NVIDIA device plugin hands out whole GPUs (`nvidia.com/gpu: 1`), one process each.
// time_slicing: the device plugin's `sharing.timeSlicing.replicas: N` advertises N pods per GPU with
//   no memory or fault isolation (NVIDIA k8s-device-plugin README, "Shared Access to GPUs"); the
//   contexts take turns on the whole GPU.
// mps: NVIDIA MPS: kernels of the clients run at once on SM partitions; slowdown by gpu-let's pair
//   model (sim/serving/interference.hpp, Choi et al. ATC'22).
// memory_accounted: gpushare-style (AliyunContainerService/gpushare-scheduler-extender): the
//   scheduler counts GPU memory (`aliyun.com/gpu-mem`) but nothing isolates compute, so the
//   processes time-slice exactly as under time_slicing; the difference is who may share (scheduler
//   view), not how they run.
enum class sharing_mode { exclusive, time_slicing, mps, memory_accounted };

// One process (CUDA context) on a GPU, as the world sees it.
struct gpu_context {
  bool runnable = false;      // has GPU work now (a trainer: always; a replica: while a batch runs)
  serving::tenant_util util;  // solo L2/DRAM utilisation scaled by its MPS share (used by mps only)
};

// Time-slicing between CUDA contexts: each runnable context gets the whole GPU for one quantum in
// turn, and every switch costs `switch_cost_ms` of idle GPU. NVIDIA documents neither value
// (nvidia-smi compute-policy --set-timeslice offers only default/short/medium/long): both are
// declared assumptions, docs/experiment-world.md.
struct time_slice_params {
  double quantum_ms = 2.0;
  double switch_cost_ms = 0.1;
};

struct sharing_params {
  sharing_mode mode = sharing_mode::exclusive;
  time_slice_params slice{};
  serving::interference_constants mps{};  // gpu-let's c0..c4 (INT_MODEL_CONSTANT.CSV)

  // Throws invalid_argument_error naming the field.
  void validate() const {
    if (!(slice.quantum_ms > 0.0)) throw invalid_argument_error("slice.quantum_ms", "must be > 0");
    if (!(slice.switch_cost_ms >= 0.0)) throw invalid_argument_error("slice.switch_cost_ms", "must be >= 0");
  }
};

// The share of GPU time one of k >= 2 always-runnable contexts gets under round-robin time-slicing:
// per round of k quanta the GPU does k*Q useful work in k*(Q + c), and each context gets Q of it,
//   rate = Q / (k * (Q + c)).
// One runnable context runs alone at full speed (no switch).
inline double time_slice_rate(const time_slice_params& p, std::size_t runnable) noexcept {
  if (runnable <= 1) return 1.0;
  return p.quantum_ms / (static_cast<double>(runnable) * (p.quantum_ms + p.switch_cost_ms));
}

// rates: for each context, the speed at which its GPU work progresses now, as a fraction of its
// solo speed (a batch of solo duration t that runs at a constant rate r takes t / r); 0 for a
// context with no work. The engine recomputes the rates whenever the runnable set changes, so a
// batch's duration follows its neighbours (processor sharing), not the state when it started.
//   exclusive:               1 (more than one context is a scheduler bug: invalid_argument_error)
//   time_slicing, memory_accounted: time_slice_rate(k), k = number of runnable contexts
//   mps:                     1 / alpha_i, alpha_i = 1 + sum over runnable j != i of
//                            (pairwise_slowdown(i, j) - 1)   (serving::multi_tenant_slowdown's rule)
// `out` must be at least as long as `contexts`. Allocation-free.
inline void rates(const sharing_params& p, std::span<const gpu_context> contexts, std::span<double> out) {
  if (out.size() < contexts.size()) throw invalid_argument_error("out", "shorter than contexts");
  std::size_t runnable = 0;
  for (const auto& c : contexts) runnable += c.runnable ? 1U : 0U;
  switch (p.mode) {
    case sharing_mode::exclusive:
      if (contexts.size() > 1) {
        throw invalid_argument_error("contexts", "an exclusive GPU holds " + std::to_string(contexts.size()) +
                                                     " processes; the whole-GPU device plugin allows one");
      }
      for (std::size_t i = 0; i < contexts.size(); ++i) out[i] = contexts[i].runnable ? 1.0 : 0.0;
      return;
    case sharing_mode::time_slicing:
    case sharing_mode::memory_accounted: {
      const double r = time_slice_rate(p.slice, runnable);
      for (std::size_t i = 0; i < contexts.size(); ++i) out[i] = contexts[i].runnable ? r : 0.0;
      return;
    }
    case sharing_mode::mps:
      for (std::size_t i = 0; i < contexts.size(); ++i) {
        if (!contexts[i].runnable) {
          out[i] = 0.0;
          continue;
        }
        double excess = 0.0;
        for (std::size_t j = 0; j < contexts.size(); ++j) {
          if (j == i || !contexts[j].runnable) continue;
          excess += serving::pairwise_slowdown(p.mps, contexts[i].util, contexts[j].util) - 1.0;
        }
        out[i] = 1.0 / (1.0 + excess);
      }
      return;
  }
}

// The fluid engine's MPS rate (sim/world/run_world.hpp): rates()'s mps rule with each neighbour
// counted by the expected fraction of the time it is runnable (a running trainer 1, a replica its
// busy fraction), alpha = 1 + sum_j weight_j (alpha_pair(self, j) - 1); with every weight 1 it is
// rates()'s rule exactly, and with no neighbour (or all weights 0) the rate is 1.
struct mps_neighbour {
  serving::tenant_util util;
  double weight = 1.0;  // expected runnable fraction, 0..1
};

inline double mps_expected_rate(const serving::interference_constants& c, serving::tenant_util self,
                                std::span<const mps_neighbour> others) noexcept {
  double excess = 0.0;
  for (const auto& o : others) excess += o.weight * (serving::pairwise_slowdown(c, self, o.util) - 1.0);
  return 1.0 / (1.0 + excess);
}

// NVML's utilization.gpu over an instant: the GPU is busy while any context runs a kernel. Under
// time-slicing the switch gaps are idle: busy share = k*Q / (k*(Q + c)) with k >= 2 runnable.
inline double busy_share(const sharing_params& p, std::span<const gpu_context> contexts) noexcept {
  std::size_t runnable = 0;
  for (const auto& c : contexts) runnable += c.runnable ? 1U : 0U;
  if (runnable == 0) return 0.0;
  if ((p.mode == sharing_mode::time_slicing || p.mode == sharing_mode::memory_accounted) && runnable >= 2) {
    return p.slice.quantum_ms / (p.slice.quantum_ms + p.slice.switch_cost_ms);
  }
  return 1.0;
}

}  // namespace gpusched::sim::world
