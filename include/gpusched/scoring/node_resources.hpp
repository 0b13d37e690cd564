// Kubernetes' NodeResourcesFit scoring strategies and NodeResourcesBalancedAllocation.
#pragma once

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
}  // namespace detail

// NodeResourcesFit, scoringStrategy LeastAllocated: favours nodes with more free resources.
struct least_allocated {
  resource_weights weights{};
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "LeastAllocated"; }
  template <Cluster C>
  [[nodiscard]] std::int64_t score(const C& c, const pod& p, node_index n) const {
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
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "MostAllocated"; }
  template <Cluster C>
  [[nodiscard]] std::int64_t score(const C& c, const pod& p, node_index n) const {
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
    return formula::requested_to_capacity_ratio(u.requested.data(), u.capacity.data(), weights.as_array().data(),
                                                resource_kinds, util_.data(), score_.data(), static_cast<int>(util_.size()));
  }
};

// NodeResourcesBalancedAllocation: favours nodes whose resource fractions stay close together.
struct balanced_allocation {
  resource_weights weights{};  // non-zero marks the resources taken into account
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "NodeResourcesBalancedAllocation"; }
  template <Cluster C>
  [[nodiscard]] std::int64_t score(const C& c, const pod& p, node_index n) const {
    const resource_usage u = usage_with(c, p, n, weights.gpu != 0);
    return formula::balanced_allocation_of(u.requested.data(), u.capacity.data(), weights.as_array().data(), resource_kinds);
  }
};

}  // namespace gpusched
