// Kubernetes' NodeResourcesFit scoring strategies and NodeResourcesBalancedAllocation.
#pragma once

#include <cmath>
#include <cstdint>
#include <string_view>
#include <vector>

#include "gpusched/core/error.hpp"
#include "gpusched/scoring/formulas.hpp"
#include "gpusched/scoring/resource_usage.hpp"
#include "gpusched/scoring/scorer.hpp"

namespace gpusched {

namespace detail {
// The weighted mean used by least/most allocated: resources with zero capacity are skipped
// (noderesources/least_allocated.go, leastResourceScorer).
template <class F>
constexpr std::int64_t weighted_resource_mean(const resource_usage& u, const resource_weights& w, F&& per_resource) {
  std::int64_t node_score = 0, weight_sum = 0;
  for (int r = 0; r < resource_kinds; ++r) {
    if (w[r] == 0 || u.capacity[r] == 0) continue;
    node_score += per_resource(u.requested[r], u.capacity[r]) * w[r];
    weight_sum += w[r];
  }
  return weight_sum == 0 ? 0 : node_score / weight_sum;
}
}  // namespace detail

// NodeResourcesFit, scoringStrategy LeastAllocated: favours nodes with more free resources.
struct least_allocated {
  resource_weights weights{};
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "LeastAllocated"; }
  template <Cluster C>
  [[nodiscard]] std::int64_t score(const C& c, const pod& p, node_index n) const {
    return detail::weighted_resource_mean(usage_with(c, p, n, weights.gpu != 0), weights, formula::least_requested);
  }
};

// NodeResourcesFit, scoringStrategy MostAllocated: bin packing.
struct most_allocated {
  resource_weights weights{};
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "MostAllocated"; }
  template <Cluster C>
  [[nodiscard]] std::int64_t score(const C& c, const pod& p, node_index n) const {
    return detail::weighted_resource_mean(usage_with(c, p, n, weights.gpu != 0), weights, formula::most_requested);
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
    const resource_usage u = usage_with(c, p, n, weights.gpu != 0);
    const int points = static_cast<int>(util_.size());
    std::int64_t node_score = 0, weight_sum = 0;
    for (int r = 0; r < resource_kinds; ++r) {
      if (weights[r] == 0 || u.capacity[r] == 0) continue;
      const std::int64_t req = u.requested[r], cap = u.capacity[r];
      const std::int64_t util = req > cap ? 100 : req * 100 / cap;
      const std::int64_t s = formula::broken_linear(util_.data(), score_.data(), points, util);
      if (s > 0) {
        node_score += s * weights[r];
        weight_sum += weights[r];
      }
    }
    if (weight_sum == 0) return 0;
    return static_cast<std::int64_t>(std::round(static_cast<double>(node_score) / static_cast<double>(weight_sum)));
  }
};

// NodeResourcesBalancedAllocation: favours nodes whose resource fractions stay close together.
struct balanced_allocation {
  resource_weights weights{};  // non-zero marks the resources taken into account
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "NodeResourcesBalancedAllocation"; }
  template <Cluster C>
  [[nodiscard]] std::int64_t score(const C& c, const pod& p, node_index n) const {
    const resource_usage u = usage_with(c, p, n, weights.gpu != 0);
    double fractions[resource_kinds];
    int count = 0;
    for (int r = 0; r < resource_kinds; ++r) {
      if (weights[r] == 0 || u.capacity[r] == 0) continue;
      const double f = static_cast<double>(u.requested[r]) / static_cast<double>(u.capacity[r]);
      fractions[count++] = f > 1 ? 1 : f;
    }
    return formula::balanced_allocation(fractions, count);
  }
};

}  // namespace gpusched
