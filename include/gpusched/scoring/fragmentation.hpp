// GPU fragmentation of a node with respect to a workload of typical pod shapes (Weng et al., "Beware
// of Fragmentation: Scheduling GPU-Sharing Workloads with Fragmentation Gradient Descent", USENIX
// ATC'23), written once over plain arrays so that the per-pod scorer, the simulator's metrics, the
// batch engine and CUDA kernels share it.
//
// Every function follows the authors' simulator, hkust-adsl/kubernetes-scheduler-simulator
// pkg/utils/frag.go (GetNodePodFrag, CanNodeHostPodOnGpuMemory, GetGpuFragMilliByNodeResAndPodRes,
// NodeGpuShareFragAmount, FragAmountSumExceptQ3). Units: milli-CPU and milli-GPU (1000 = one GPU).
#pragma once

#include <cmath>
#include <cstdint>

#include "gpusched/config.hpp"
#include "gpusched/core/binding.hpp"
#include "gpusched/core/types.hpp"
#include "gpusched/scoring/formulas.hpp"

namespace gpusched {

// std::llround without the libm call (FillAware called it 4.9 M times per openb replay): the
// integer part, plus one away from zero when the dropped fraction is at least one half. Equal to
// std::llround for every |x| < 2^63: x - trunc(x) is exact (x's fraction bits; 0 from 2^52 up).
GPUSCHED_HD constexpr std::int64_t round_half_away(double x) noexcept {
  const auto t = static_cast<std::int64_t>(x);
  const double frac = x - static_cast<double>(t);
  return t + (frac >= 0.5 ? 1 : 0) - (frac <= -0.5 ? 1 : 0);
}

// How a node relates to one pod shape (frag.go's Q1..Q4, XL, XR, NoAccess).
enum class frag_class : std::uint8_t {
  q1_lack_both = 0,  // neither enough GPU share nor CPU
  q2_lack_gpu = 1,   // CPU fits, GPUs do not
  q3_satisfied = 2,  // the shape fits
  q4_lack_cpu = 3,   // GPUs fit, CPU does not
  xl_satisfied = 4,  // CPU-only shape, CPU fits (its idle GPUs are still fragment to it)
  xr_lack_cpu = 5,   // CPU-only shape, CPU does not fit
  no_access = 6,     // the shape may not use this node's GPU model
};
inline constexpr int frag_class_count = 7;

// A pod shape of the target workload as the fragmentation math sees it. `weight` is its
// probability (the shapes of a workload sum to 1).
struct frag_shape {
  milli cpu_milli = 0;
  std::int32_t gpu_milli = 0;  // per GPU; 0 for a CPU-only shape
  std::int32_t num_gpu = 0;
  double weight = 0.0;
};

// resource.go NodeResource.Sub, one step: of the devices in `allowed` not yet `taken` that have
// gpu_milli free, the one with the least free share (lowest index among equals); -1 when none.
GPUSCHED_HD constexpr int sub_next_device(const std::int32_t* free_milli, int gpus, gpu_set allowed, gpu_set taken,
                                          std::int32_t gpu_milli) noexcept {
  int pick = -1;
  for (int g = 0; g < gpus; ++g) {
    if (((allowed >> g) & 1U) == 0 || ((taken >> g) & 1U) != 0 || free_milli[g] < gpu_milli) continue;
    if (pick < 0 || free_milli[g] < free_milli[pick]) pick = g;
  }
  return pick;
}

// fgd_score.go: a share pod is tried on each allowed device with room, but a device whose free
// share equals an earlier allowed device's scores the same, so only the first of them is tried.
GPUSCHED_HD constexpr bool same_free_as_earlier(const std::int32_t* free_milli, gpu_set allowed, int i) noexcept {
  for (int j = 0; j < i; ++j) {
    if (((allowed >> j) & 1U) != 0 && free_milli[j] == free_milli[i]) return true;
  }
  return false;
}

// Free GPU milli summed over the node's devices.
GPUSCHED_HD constexpr milli gpu_milli_idle(const std::int32_t* free_milli, int gpus) noexcept {
  milli s = 0;
  for (int g = 0; g < gpus; ++g) s += free_milli[g];
  return s;
}

// frag.go CanNodeHostPodOnGpuMemory: at least num_gpu devices have gpu_milli free.
GPUSCHED_HD constexpr bool gpus_can_host(const std::int32_t* free_milli, int gpus, std::int32_t gpu_milli,
                                         std::int32_t num_gpu) noexcept {
  std::int32_t want = num_gpu;
  for (int g = 0; g < gpus; ++g) {
    if (free_milli[g] >= gpu_milli && --want <= 0) return true;
  }
  return false;
}

// frag.go GetGpuFragMilliByNodeResAndPodRes: free share on devices too small for gpu_milli.
GPUSCHED_HD constexpr milli gpu_frag_milli(const std::int32_t* free_milli, int gpus, std::int32_t gpu_milli) noexcept {
  milli s = 0;
  for (int g = 0; g < gpus; ++g) {
    if (free_milli[g] < gpu_milli) s += free_milli[g];
  }
  return s;
}

// frag.go GetNodePodFrag. `accessible` says whether the shape may use the node's GPU model.
GPUSCHED_HD constexpr frag_class node_frag_class(const std::int32_t* free_milli, int gpus, milli cpu_left,
                                                 bool accessible, const frag_shape& s) noexcept {
  const bool cpu_ok = cpu_left >= s.cpu_milli;
  if (s.gpu_milli == 0) return cpu_ok ? frag_class::xl_satisfied : frag_class::xr_lack_cpu;
  if (!accessible) return frag_class::no_access;
  if (gpus_can_host(free_milli, gpus, s.gpu_milli, s.num_gpu)) {
    return cpu_ok ? frag_class::q3_satisfied : frag_class::q4_lack_cpu;
  }
  return cpu_ok ? frag_class::q2_lack_gpu : frag_class::q1_lack_both;
}

// Fragment amount of a node per class, in milli-GPU, weighted by shape probability.
struct frag_amount {
  double by_class[frag_class_count] = {};

  // frag.go FragAmountSumExceptQ3: the node's fragmentation, F_n in the paper.
  [[nodiscard]] GPUSCHED_HD constexpr double fragment() const noexcept {
    double out = 0.0;
    for (int i = 0; i < frag_class_count; ++i) {
      if (i != static_cast<int>(frag_class::q3_satisfied)) out += by_class[i];
    }
    return out;
  }
  // Sum over every class: the node's idle GPU milli (when the weights sum to 1).
  [[nodiscard]] GPUSCHED_HD constexpr double idle() const noexcept {
    double out = 0.0;
    for (int i = 0; i < frag_class_count; ++i) out += by_class[i];
    return out;
  }
  GPUSCHED_HD constexpr frag_amount& operator+=(const frag_amount& o) noexcept {
    for (int i = 0; i < frag_class_count; ++i) by_class[i] += o.by_class[i];
    return *this;
  }
};

// frag.go NodeGpuShareFragAmount: for each shape m with probability p_m, a node that can host m
// counts the share of devices too small for m (milli < m's per-GPU share) as fragment (class Q2)
// and the rest as satisfied (Q3); a node that cannot host m counts all its idle GPU milli under
// the class that says why, and so does every CPU-only shape. accessible[i] tells whether shape i
// may use this node's GPU model. Accumulation order is the authors', so the sums match bit for bit.
GPUSCHED_HD constexpr frag_amount node_frag_amount(const std::int32_t* free_milli, int gpus, milli cpu_left,
                                                   const frag_shape* shapes, const std::uint8_t* accessible,
                                                   int count) noexcept {
  frag_amount fa;
  const milli idle = gpu_milli_idle(free_milli, gpus);
  for (int i = 0; i < count; ++i) {
    const frag_shape& s = shapes[i];
    if (s.weight < 0.0 || s.weight > 1.0) continue;  // frag.go skips (and logs) a bad frequency
    const frag_class c = node_frag_class(free_milli, gpus, cpu_left, accessible[i] != 0, s);
    if (c == frag_class::q3_satisfied) {
      const milli small = gpu_frag_milli(free_milli, gpus, s.gpu_milli);
      fa.by_class[static_cast<int>(frag_class::q2_lack_gpu)] += s.weight * static_cast<double>(small);
      fa.by_class[static_cast<int>(frag_class::q3_satisfied)] += s.weight * static_cast<double>(idle - small);
    } else {
      fa.by_class[static_cast<int>(c)] += s.weight * static_cast<double>(idle);
    }
  }
  return fa;
}

// frag.go NodeGpuShareFragAmountScore: the node's expected fragmentation F_n (milli-GPU).
GPUSCHED_HD constexpr double node_fragmentation(const std::int32_t* free_milli, int gpus, milli cpu_left,
                                                const frag_shape* shapes, const std::uint8_t* accessible,
                                                int count) noexcept {
  return node_frag_amount(free_milli, gpus, cpu_left, shapes, accessible, count).fragment();
}

// The FGD score of a change of fragmentation, in the authors' arithmetic:
// int64(sigmoid((F_before - F_after) / 1000) * MaxNodeScore), sigmoid(x) = 1 / (1 + exp(-x))
// (fgd_score.go calculateGpuShareFragExtendScore and plugin_utils.go sigmoid). Truncated, so that
// every change of less than about 40 milli-GPU scores the same.
GPUSCHED_HD std::int64_t fgd_paper_score(double frag_before, double frag_after) noexcept {
  return formula::fgd_score(frag_after - frag_before);
}

// The same sigmoid without the truncation, in micro-points (0..100'000'000): gpusched's "fine"
// variant, which ranks nodes whose fragmentation changes differ by less than 40 milli-GPU.
inline constexpr std::int64_t fgd_fine_scale = 1'000'000;
GPUSCHED_HD std::int64_t fgd_fine_score(double frag_before, double frag_after) noexcept {
  const double x = (frag_before - frag_after) / 1000;
  return round_half_away(1.0 / (1.0 + std::exp(-x)) * 100.0 * static_cast<double>(fgd_fine_scale));
}

}  // namespace gpusched
