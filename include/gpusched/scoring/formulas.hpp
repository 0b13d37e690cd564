// The published scoring formulas, each written once as a GPUSCHED_HD function over plain integers
// so that the per-pod path, the CPU batch engine and the CUDA kernels share them.
#pragma once

#include <cmath>
#include <cstdint>

#include "gpusched/config.hpp"

namespace gpusched::formula {

inline constexpr std::int64_t max_score = 100;

// kubernetes pkg/scheduler/framework/plugins/noderesources/least_allocated.go, leastRequestedScore
GPUSCHED_HD constexpr std::int64_t least_requested(std::int64_t requested, std::int64_t capacity) noexcept {
  if (capacity == 0) return 0;
  if (requested > capacity) return 0;
  return ((capacity - requested) * max_score) / capacity;
}

// kubernetes pkg/scheduler/framework/plugins/noderesources/most_allocated.go, mostRequestedScore
GPUSCHED_HD constexpr std::int64_t most_requested(std::int64_t requested, std::int64_t capacity) noexcept {
  if (capacity == 0) return 0;
  if (requested > capacity) requested = capacity;  // pods with no requests get minimum values
  return (requested * max_score) / capacity;
}

// kubernetes pkg/scheduler/framework/plugins/helper/shape_score.go, BuildBrokenLinearFunction:
// piecewise-linear over (utilisation, score) points sorted by utilisation, integer interpolation.
GPUSCHED_HD constexpr std::int64_t broken_linear(const std::int64_t* util, const std::int64_t* score, int points,
                                                 std::int64_t p) noexcept {
  for (int i = 0; i < points; ++i) {
    if (p <= util[i]) {
      if (i == 0) return score[0];
      return score[i - 1] + (score[i] - score[i - 1]) * (p - util[i - 1]) / (util[i] - util[i - 1]);
    }
  }
  return score[points - 1];
}

// kubernetes pkg/scheduler/framework/plugins/noderesources/balanced_allocation.go,
// balancedResourceScorer: 1 - std of the requested/allocatable fractions (each capped at 1),
// with std = |f0 - f1| / 2 for two resources; truncated to int64.
GPUSCHED_HD std::int64_t balanced_allocation(const double* fractions, int count) noexcept {
  double std_dev = 0.0;
  if (count == 2) {
    std_dev = std::fabs((fractions[0] - fractions[1]) / 2);
  } else if (count > 2) {
    double total = 0.0;
    for (int i = 0; i < count; ++i) total += fractions[i];
    const double mean = total / count;
    double sum = 0.0;
    for (int i = 0; i < count; ++i) sum += (fractions[i] - mean) * (fractions[i] - mean);
    std_dev = std::sqrt(sum / count);
  }
  return static_cast<std::int64_t>((1 - std_dev) * static_cast<double>(max_score));
}

// Koordinator's estimated usage of a pod not yet reflected in metrics: request * factor / 100,
// factors cpu 85, memory 70 (koordinator pkg/scheduler/plugins/loadaware/estimator/default_estimator.go).
inline constexpr std::int64_t estimated_cpu_factor = 85;
inline constexpr std::int64_t estimated_memory_factor = 70;

// FGD's mapping of a fragmentation change to a score (Weng et al., USENIX ATC'23, and the authors'
// simulator): sigmoid of the negated change in expected fragmentation (GPU milli), scaled to 0..100,
// in the authors' order of operations, int64(sigmoid(x) * 100) (fgd_score.go, plugin_utils.go), so
// that the truncation agrees with theirs to the last bit.
GPUSCHED_HD std::int64_t fgd_score(double delta_frag_milli) noexcept {
  const double x = -delta_frag_milli / 1000.0;
  return static_cast<std::int64_t>(1.0 / (1.0 + std::exp(-x)) * static_cast<double>(max_score));
}

}  // namespace gpusched::formula
