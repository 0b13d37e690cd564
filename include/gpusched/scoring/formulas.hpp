// The published scoring formulas, each written once as a GPUSCHED_HD function over plain values so
// that the per-pod plugins, the CPU batch engine (gpusched/batch/) and the CUDA kernels
// (gpusched/cuda/) call the very same code.
//
// A formula that divides takes the division as a parameter: the per-pod path passes
// integer_division (Kubernetes' int64 arithmetic); the batch engines pass reciprocal_division, which
// returns the same quotient from doubles holding integers (exact on a stated domain, see below), so
// that loops over nodes vectorise. Every other step of the formula is shared text.
#pragma once

#include <cmath>
#include <cstdint>

#include "gpusched/config.hpp"
#include "gpusched/core/types.hpp"

// The CPU batch engine instantiates these templates on 4- and 8-double vectors in a build for any
// x86-64 target and inlines them into its AVX2 / AVX-512 kernels only (batch/simd.hpp). GCC warns
// that such a template's out-of-line ABI would depend on the target (-Wpsabi); where the warning
// has a location it is off from here on (the rest needs -Wno-psabi, which the CMake target adds).
#if defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__)
#pragma GCC diagnostic ignored "-Wpsabi"
#elif defined(__clang__) && !defined(__CUDACC__)
#if __has_warning("-Wpsabi")
#pragma clang diagnostic ignored "-Wpsabi"
#endif
#endif

namespace gpusched::formula {

inline constexpr std::int64_t max_score = 100;

// ---------------------------------------------------------------------------------------------
// Numbers. The formulas below that the batch engines vectorise are templates over a number type
// T: std::int64_t (the per-pod plugins: Kubernetes' int64 arithmetic), double holding integers
// (the CUDA kernels), or a SIMD vector of doubles (the CPU batch engine; gpusched/batch/simd.hpp
// specialises number_traits for it). They are written so that every operation means the same for
// all three: no short-circuit && / ||, no casts to T, only selects (c ? a : b).

template <class T>
struct number_traits {
  template <class U>
  GPUSCHED_HD static constexpr T from(U v) noexcept { return static_cast<T>(v); }
  // Toward zero, for floating T holding a value within int32.
  GPUSCHED_HD static constexpr T truncate(T x) noexcept { return static_cast<T>(static_cast<std::int32_t>(x)); }
  // The same for x >= 0 (a vector type may do that more cheaply: batch/simd.hpp).
  GPUSCHED_HD static constexpr T truncate_nonnegative(T x) noexcept { return truncate(x); }
  // a > b ? a : b, lane by lane (x86's maxpd is exactly this, operand order included).
  GPUSCHED_HD static constexpr T larger(T a, T b) noexcept { return a > b ? a : b; }
};

// T with every lane equal to v.
template <class T, class U>
GPUSCHED_HD constexpr T splat(U v) noexcept { return number_traits<T>::from(v); }

// ---------------------------------------------------------------------------------------------
// Division policies: floor(num / den) for num >= 0 and den > 0. For den == 0 they return 0 (the
// formulas discard that value).

// The reference: Go's / on int64.
struct integer_division {
  GPUSCHED_HD constexpr std::int64_t operator()(std::int64_t num, std::int64_t den) const noexcept {
    return den == 0 ? 0 : num / den;
  }
};

// floor(num / den) from a precomputed reciprocal rcp = 1.0 / den (0 when den == 0), for values
// holding integers with 0 <= num < 2^52, 0 < den <= 2^40 and a quotient below 2^10. Exact on that
// domain: (num + 0.5) / den lies at least 0.5 / den >= 2^-41 away from every integer, while the
// computed product (num + 0.5) * rcp differs from it by at most 2^10 * 2^-52 = 2^-42 (two
// roundings of relative error 2^-53 each), so truncating the product gives the quotient. No
// branch, no correction step: loops over nodes vectorise. The formulas below only divide
// numerators within 0..100 * den. (In the spirit of Granlund & Montgomery, "Division by invariant
// integers using multiplication", PLDI 1994: one reciprocal per divisor, reused.)
template <class T = double>
struct reciprocal_division {
  T rcp{};
  GPUSCHED_HD T operator()(T num, T /*den*/) const noexcept {
    return number_traits<T>::truncate_nonnegative((num + splat<T>(0.5)) * rcp);  // num >= 0, rcp >= 0
  }
};

// The batch engines use reciprocal_division on values within this bound (capacities, allocations,
// usages and requests, checked by gpusched::batch::node_table and pod_table): then every divisor is
// at most 2^40 and every numerator, (capacity - requested) * 100 and the like, below 2^52.
inline constexpr std::int64_t reciprocal_domain_limit = std::int64_t{1} << 40;

// ---------------------------------------------------------------------------------------------
// Kubernetes' NodeResources scores.

// kubernetes pkg/scheduler/framework/plugins/noderesources/least_allocated.go, leastRequestedScore
// (requested above capacity, or no capacity: 0).
template <class T, class Divide>
GPUSCHED_HD constexpr T least_requested_with(T requested, T capacity, Divide divide) noexcept {
  const T zero{};
  const T free = capacity - requested;
  const T q = divide(number_traits<T>::larger(free, zero) * splat<T>(max_score), capacity);
  return ((capacity == zero) | (requested > capacity)) ? zero : q;
}
GPUSCHED_HD constexpr std::int64_t least_requested(std::int64_t requested, std::int64_t capacity) noexcept {
  return least_requested_with(requested, capacity, integer_division{});
}

// leastRequestedScore as the batch engines evaluate it per (pod, node) pair, the node's part
// prepared once: free_scaled = (capacity - base) * 100 + 0.5, request_scaled = request * 100,
// rcp = 1 / capacity (0 for no capacity). On the reciprocal domain (every value below 2^52, so exact
// in a double) it equals least_requested_with(base + request, capacity, reciprocal_division{rcp}):
// free_scaled - request_scaled is exactly (capacity - requested) * 100 + 0.5, reciprocal_division's
// numerator; a negative free amount (requested above capacity) becomes 0.5, whose quotient
// truncates to 0 as the upstream 0 does; no capacity has rcp 0, hence 0.
template <class T>
GPUSCHED_HD constexpr T least_requested_prepared(T free_scaled, T request_scaled, T rcp) noexcept {
  const T x = free_scaled - request_scaled;
  const T half = splat<T>(0.5);
  return number_traits<T>::truncate_nonnegative(number_traits<T>::larger(x, half) * rcp);  // rcp >= 0
}

// kubernetes pkg/scheduler/framework/plugins/noderesources/most_allocated.go, mostRequestedScore
// (pods with no requests get minimum values; requested above capacity counts as capacity).
template <class T, class Divide>
GPUSCHED_HD constexpr T most_requested_with(T requested, T capacity, Divide divide) noexcept {
  const T zero{};
  const T capped = requested > capacity ? capacity : requested;
  const T q = divide(capped * splat<T>(max_score), capacity);
  return capacity == zero ? zero : q;
}
GPUSCHED_HD constexpr std::int64_t most_requested(std::int64_t requested, std::int64_t capacity) noexcept {
  return most_requested_with(requested, capacity, integer_division{});
}

// The weighted mean of per-resource scores used by LeastAllocated, MostAllocated and Koordinator's
// LoadAware: sum_r score_r * w_r / sum_r w_r over resources with a non-zero weight and a non-zero
// capacity, 0 when there are none (noderesources/least_allocated.go, leastResourceScorer;
// koordinator load_aware.go, loadAwareSchedulingScorer). `divide` divides by the weight sum.
template <class T, class Divide>
GPUSCHED_HD constexpr T resource_weighted_mean(const T* scores, const T* weights, const T* capacities, int count,
                                               Divide divide) noexcept {
  const T zero{};
  T sum = zero, weight_sum = zero;
  for (int r = 0; r < count; ++r) {
    const auto used = (weights[r] != zero) & (capacities[r] != zero);
    sum += used ? scores[r] * weights[r] : zero;
    weight_sum += used ? weights[r] : zero;
  }
  const T q = divide(sum, weight_sum);
  return weight_sum == zero ? zero : q;
}

// The weight sum resource_weighted_mean divides by, for a node with these capacities.
template <class T>
GPUSCHED_HD constexpr T resource_weight_sum(const T* weights, const T* capacities, int count) noexcept {
  T weight_sum{};
  for (int r = 0; r < count; ++r) weight_sum += (weights[r] != T{} && capacities[r] != T{}) ? weights[r] : T{};
  return weight_sum;
}

// LeastAllocated's (and LoadAware's) node score over the three resources (cpu, memory, GPU milli):
// leastRequestedScore per resource, then their weighted mean. per_resource[r] divides by
// capacity[r]; by_weight_sum by the weight sum.
template <class T, class Divide>
GPUSCHED_HD constexpr T least_requested_mean(const T (&requested)[3], const T (&capacity)[3], const T (&weights)[3],
                                             const Divide (&per_resource)[3], Divide by_weight_sum) noexcept {
  const T scores[3] = {least_requested_with(requested[0], capacity[0], per_resource[0]),
                       least_requested_with(requested[1], capacity[1], per_resource[1]),
                       least_requested_with(requested[2], capacity[2], per_resource[2])};
  return resource_weighted_mean(scores, weights, capacity, 3, by_weight_sum);
}

// MostAllocated's node score: mostRequestedScore per resource, then their weighted mean.
template <class T, class Divide>
GPUSCHED_HD constexpr T most_requested_mean(const T (&requested)[3], const T (&capacity)[3], const T (&weights)[3],
                                            const Divide (&per_resource)[3], Divide by_weight_sum) noexcept {
  const T scores[3] = {most_requested_with(requested[0], capacity[0], per_resource[0]),
                       most_requested_with(requested[1], capacity[1], per_resource[1]),
                       most_requested_with(requested[2], capacity[2], per_resource[2])};
  return resource_weighted_mean(scores, weights, capacity, 3, by_weight_sum);
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

// kubernetes noderesources/requested_to_capacity_ratio.go, requestedToCapacityRatioScorer: per
// resource the utilisation percentage (100 above capacity) mapped through the shape; the resources
// whose score is positive are averaged with math.Round. shape_score is already scaled to 0..100.
GPUSCHED_HD std::int64_t requested_to_capacity_ratio(const std::int64_t* requested, const std::int64_t* capacity,
                                                            const std::int64_t* weights, int count,
                                                            const std::int64_t* shape_util,
                                                            const std::int64_t* shape_score, int points) noexcept {
  std::int64_t node_score = 0, weight_sum = 0;
  for (int r = 0; r < count; ++r) {
    if (weights[r] == 0 || capacity[r] == 0) continue;
    const std::int64_t util = requested[r] > capacity[r] ? 100 : requested[r] * 100 / capacity[r];
    const std::int64_t s = broken_linear(shape_util, shape_score, points, util);
    if (s > 0) {
      node_score += s * weights[r];
      weight_sum += weights[r];
    }
  }
  if (weight_sum == 0) return 0;
  return static_cast<std::int64_t>(std::round(static_cast<double>(node_score) / static_cast<double>(weight_sum)));
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

// The balanced-allocation score from requested and capacity per resource: the fractions of the
// resources with a non-zero weight and capacity, each capped at 1.
GPUSCHED_HD std::int64_t balanced_allocation_of(const std::int64_t* requested, const std::int64_t* capacity,
                                                const std::int64_t* weights, int count) noexcept {
  double fractions[16];  // cpu, memory, GPU and named resources (scoring/resource_usage.hpp, max_scored_resources)
  int used = 0;
  for (int r = 0; r < count && r < 16; ++r) {
    if (weights[r] == 0 || capacity[r] == 0) continue;
    const double f = static_cast<double>(requested[r]) / static_cast<double>(capacity[r]);
    fractions[used++] = f > 1 ? 1 : f;
  }
  return balanced_allocation(fractions, used);
}

// ---------------------------------------------------------------------------------------------
// Koordinator's LoadAware and gpusched's own factors.

// Koordinator's estimated usage of a pod not yet reflected in metrics: request * factor / 100,
// factors cpu 85, memory 70 (koordinator pkg/scheduler/plugins/loadaware/estimator/default_estimator.go).
inline constexpr std::int64_t estimated_cpu_factor = 85;
inline constexpr std::int64_t estimated_memory_factor = 70;

GPUSCHED_HD constexpr std::int64_t estimated_usage(std::int64_t request, std::int64_t factor_percent) noexcept {
  return request * factor_percent / 100;
}

// A node's usage as LoadAware sees it for one resource: the measured fraction of capacity
// (rounded) plus the estimated usage of what was assigned since the reading (at `factor_percent`),
// or, where the node reports no metrics, its allocation.
GPUSCHED_HD std::int64_t load_aware_used(bool measured, double used_fraction, std::int64_t capacity,
                                                std::int64_t assigned_since, std::int64_t factor_percent,
                                                std::int64_t allocated) noexcept {
  if (!measured) return allocated;
  // Round half up (llround is a libm call on the hot path; the products are non-negative).
  return static_cast<std::int64_t>(used_fraction * static_cast<double>(capacity) + 0.5) +
         estimated_usage(assigned_since, factor_percent);
}

// gpusched's ModelAffinity rule (no published formula): 50 neutral, +50 when the node serves the
// pod's model type, -50 when it serves a model type that interferes with it. `Mask` is bool, or a
// SIMD comparison result when T is a SIMD vector. `fifty` scaled by a plugin weight w gives w times
// the score (every value an integer: exact), so a batch kernel need not multiply per node.
template <class T, class Mask>
GPUSCHED_HD constexpr T model_affinity_score(bool has_model_type, Mask serves_same, Mask serves_interfering,
                                             T fifty = splat<T>(50)) noexcept {
  const T zero{};
  const T s = fifty + (serves_same ? fifty : zero) - (serves_interfering ? fifty : zero);
  return has_model_type ? s : fifty;
}

// gpusched's QoSAware rule: a Guaranteed pod scores leastRequestedScore, a BestEffort pod
// mostRequestedScore, of one resource (GPU milli for GPU pods, CPU otherwise); Burstable is 50.
template <class T, class Divide>
GPUSCHED_HD constexpr T qos_aware_score(qos_class q, T requested, T capacity, Divide divide) noexcept {
  const T least = least_requested_with(requested, capacity, divide);
  const T most = most_requested_with(requested, capacity, divide);
  return q == qos_class::burstable ? splat<T>(50) : (q == qos_class::guaranteed ? least : most);
}

// Kubernetes' DefaultNormalizeScore for one score, given the highest score of the feasible nodes
// (floored at 0): scale so that the highest becomes max_priority; with reverse, max_priority - scaled
// (kubernetes pkg/scheduler/framework/plugins/helper/normalize_score.go). `divide` divides by
// max_count.
template <class T, class Divide>
GPUSCHED_HD constexpr T default_normalized(T score, T max_count, T max_priority, bool reverse, Divide divide) noexcept {
  const T scaled = divide(max_priority * score, max_count);
  const T out = reverse ? max_priority - scaled : scaled;
  return max_count == T{} ? (reverse ? max_priority : score) : out;
}

// FGD's mapping of a fragmentation change to a score (Weng et al., USENIX ATC'23, and the authors'
// simulator): sigmoid of the negated change in expected fragmentation (GPU milli), scaled to 0..100,
// in the authors' order of operations, int64(sigmoid(x) * 100) (fgd_score.go, plugin_utils.go), so
// that the truncation agrees with theirs to the last bit.
GPUSCHED_HD std::int64_t fgd_score(double delta_frag_milli) noexcept {
  const double x = -delta_frag_milli / 1000.0;
  return static_cast<std::int64_t>(1.0 / (1.0 + std::exp(-x)) * static_cast<double>(max_score));
}

}  // namespace gpusched::formula
