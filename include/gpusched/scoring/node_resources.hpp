// Kubernetes' NodeResourcesFit scoring strategies and NodeResourcesBalancedAllocation.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "gpusched/core/error.hpp"
#include "gpusched/scoring/formulas.hpp"
#include "gpusched/scoring/resource_usage.hpp"
#include "gpusched/scoring/scorer.hpp"

namespace gpusched {

namespace detail {
inline constexpr formula::integer_division int_div3[resource_kinds] = {};

// LeastAllocated's / MostAllocated's weighted mean over cpu, memory, GPU and named resources: the
// same per-resource formulas and the same resource_weighted_mean as the three-resource path.
template <bool Least>
std::int64_t named_requested_mean(const scored_resources& u) noexcept {
  std::int64_t scores[max_scored_resources];
  for (int r = 0; r < u.count; ++r) {
    scores[r] = Least ? formula::least_requested(u.requested[r], u.capacity[r]) : formula::most_requested(u.requested[r], u.capacity[r]);
  }
  return formula::resource_weighted_mean(scores, u.weight, u.capacity, u.count, formula::integer_division{});
}
}  // namespace detail

// NodeResourcesFit, scoringStrategy LeastAllocated: favours nodes with more free resources.
struct least_allocated {
  resource_weights weights{};
  std::vector<named_weight> named{};  // named resources scored beside cpu / memory / GPU (at most 13)
  nonzero_requests nonzero{};         // Kubernetes' non-zero request defaults (off by default)
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "LeastAllocated"; }
  template <Cluster C>
  [[nodiscard]] std::int64_t score(const C& c, const pod& p, node_index n) const {
    if (!named.empty() || nonzero.enabled) {
      scored_resources u;
      scored_usage(c, p, n, weights, named, u, nonzero);
      return detail::named_requested_mean<true>(u);
    }
    const resource_usage u = usage_with(c, p, n, weights.gpu != 0);
    const std::int64_t requested[3] = {u.requested[0], u.requested[1], u.requested[2]};
    const std::int64_t capacity[3] = {u.capacity[0], u.capacity[1], u.capacity[2]};
    const std::int64_t w[3] = {weights.cpu, weights.memory, weights.gpu};
    return formula::least_requested_mean(requested, capacity, w, detail::int_div3, formula::integer_division{});
  }
};

// NodeResourcesFit, scoringStrategy MostAllocated: bin packing.
struct most_allocated {
  resource_weights weights{};
  std::vector<named_weight> named{};  // as least_allocated
  nonzero_requests nonzero{};         // as least_allocated
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "MostAllocated"; }
  template <Cluster C>
  [[nodiscard]] std::int64_t score(const C& c, const pod& p, node_index n) const {
    if (!named.empty() || nonzero.enabled) {
      scored_resources u;
      scored_usage(c, p, n, weights, named, u, nonzero);
      return detail::named_requested_mean<false>(u);
    }
    const resource_usage u = usage_with(c, p, n, weights.gpu != 0);
    const std::int64_t requested[3] = {u.requested[0], u.requested[1], u.requested[2]};
    const std::int64_t capacity[3] = {u.capacity[0], u.capacity[1], u.capacity[2]};
    const std::int64_t w[3] = {weights.cpu, weights.memory, weights.gpu};
    return formula::most_requested_mean(requested, capacity, w, detail::int_div3, formula::integer_division{});
  }
};

// NodeResourcesFit, scoringStrategy RequestedToCapacityRatio: a piecewise-linear shape over
// utilisation 0..100 with scores 0..10 (config units), scaled by MaxNodeScore / MaxCustomPriorityScore
// = 10 (noderesources/requested_to_capacity_ratio.go), averaged with math.Round over resources whose
// score is positive.
struct requested_to_capacity_ratio {
  struct point {
    std::int64_t utilization;  // 0..100
    std::int64_t score;        // 0..10
  };
  resource_weights weights{};
  std::vector<std::int64_t> util_;   // validated shape, ascending utilisation
  std::vector<std::int64_t> score_;  // scaled to 0..100
  std::vector<named_weight> named{};  // as least_allocated
  nonzero_requests nonzero{};         // as least_allocated

  requested_to_capacity_ratio() : requested_to_capacity_ratio({{0, 0}, {100, 10}}) {}  // the MostAllocated-like default
  explicit requested_to_capacity_ratio(const std::vector<point>& shape, resource_weights w = {}) : weights(w) {
    if (shape.empty()) throw invalid_argument_error("requestedToCapacityRatio.shape", "must have at least one point");
    for (std::size_t i = 0; i < shape.size(); ++i) {
      const std::string f = "requestedToCapacityRatio.shape[" + std::to_string(i) + "]";
      if (shape[i].utilization < 0 || shape[i].utilization > 100) throw invalid_argument_error(f + ".utilization", "must be within 0..100");
      if (shape[i].score < 0 || shape[i].score > 10) throw invalid_argument_error(f + ".score", "must be within 0..10");
      if (i > 0 && shape[i].utilization <= shape[i - 1].utilization) {
        throw invalid_argument_error(f + ".utilization", "must be strictly increasing");
      }
      util_.push_back(shape[i].utilization);
      score_.push_back(shape[i].score * (max_node_score / 10));
    }
  }
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "RequestedToCapacityRatio"; }

  template <Cluster C>
  [[nodiscard]] std::int64_t score(const C& c, const pod& p, node_index n) const {
    if (!named.empty() || nonzero.enabled) {
      scored_resources s;
      scored_usage(c, p, n, weights, named, s, nonzero);
      return formula::requested_to_capacity_ratio(s.requested, s.capacity, s.weight, s.count, util_.data(), score_.data(),
                                                  static_cast<int>(util_.size()));
    }
    const resource_usage u = usage_with(c, p, n, weights.gpu != 0);
    return formula::requested_to_capacity_ratio(u.requested.data(), u.capacity.data(), weights.as_array().data(),
                                                resource_kinds, util_.data(), score_.data(), static_cast<int>(util_.size()));
  }
};

// Which of Kubernetes' two BalancedAllocation scores (docs/plugins.md):
//   change  (default) the change in balance that placing the pod makes, as Kubernetes scores since
//           PR #135573 ("Update scoring function for balanced allocation to consider change to the
//           node's balance"; formula read from its merged diff): 50 + (50 + score_with_pod - score_without_pod) / 2, each
//           score (1 - std(fractions)) x 100 truncated; 75 for no change, 100 from perfectly imbalanced
//           to perfectly balanced, 50 the reverse;
//   after   the balance with the pod alone, (1 - std(fractions)) x 100 (Kubernetes v1.22 to that PR;
//           noderesources/balanced_allocation.go balancedResourceScorer, commit 02d7708a).
enum class balance_formula : std::uint8_t { change, after };

// PR #135573's combination of the balance scores with and without the pod (Go int64 arithmetic;
// the numerator is never negative, so truncation and floor agree).
GPUSCHED_HD constexpr std::int64_t balance_change_score(std::int64_t with_pod, std::int64_t without_pod) noexcept {
  return formula::max_score / 2 + (formula::max_score / 2 + with_pod - without_pod) / 2;
}

// NodeResourcesBalancedAllocation: favours nodes whose resource fractions stay close together.
struct balanced_allocation {
  resource_weights weights{};  // non-zero marks the resources taken into account
  balance_formula formula = balance_formula::change;
  std::vector<named_weight> named{};  // as least_allocated (BalancedAllocation's args.resources)
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "NodeResourcesBalancedAllocation"; }
  template <Cluster C>
  [[nodiscard]] std::int64_t score(const C& c, const pod& p, node_index n) const {
    if (!named.empty()) {
      scored_resources u;
      scored_usage(c, p, n, weights, named, u);
      const std::int64_t with_pod = formula::balanced_allocation_of(u.requested, u.capacity, u.weight, u.count);
      if (formula == balance_formula::after) return with_pod;
      std::int64_t before[max_scored_resources];
      for (int r = 0; r < u.count; ++r) before[r] = u.requested[r] - u.pod_request[r];
      return balance_change_score(with_pod, formula::balanced_allocation_of(before, u.capacity, u.weight, u.count));
    }
    const resource_usage u = usage_with(c, p, n, weights.gpu != 0);
    const auto w = weights.as_array();
    const std::int64_t with_pod =
        formula::balanced_allocation_of(u.requested.data(), u.capacity.data(), w.data(), resource_kinds);
    if (formula == balance_formula::after) return with_pod;
    const std::array<std::int64_t, resource_kinds> before = {u.requested[0] - p.cpu_milli, u.requested[1] - p.memory_mib,
                                                             weights.gpu != 0 ? u.requested[2] - p.gpu_milli_total() : 0};
    return balance_change_score(with_pod,
                                formula::balanced_allocation_of(before.data(), u.capacity.data(), w.data(), resource_kinds));
  }
};

}  // namespace gpusched
