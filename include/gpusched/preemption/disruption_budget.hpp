// PodDisruptionBudgets as preemption sees them: a budget allows `disruptions_allowed` more
// evictions of the pods it covers (policy/v1 PodDisruptionBudget, status.disruptionsAllowed).
//
// Pods carry no labels in gpusched, so membership is explicit: the host says which pods (by name,
// as bound_pod::key = pod_key(name)) a budget covers, which is what a label selector resolves to.
// A pod may be covered by several budgets.
//
// Violation, as Kubernetes' filterPodsWithPDBViolation (kubernetes pkg/scheduler/framework/plugins/
// defaultpreemption/default_preemption.go @5def93b): the potential victims are taken most important
// first with a fresh copy of every budget's allowance; for each budget covering the pod, in the
// order they were added: if its allowance is <= 0 the pod violates (the remaining budgets are not
// looked at), else the allowance is decremented. Violating victims are reprieved first and their
// number leads the node cascade (NumPDBViolations, pickOneNodeForPreemption).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gpusched/core/bound_pods.hpp"
#include "gpusched/core/error.hpp"

namespace gpusched {

class disruption_budgets {
 public:
  // Adds budget `name` allowing `disruptions_allowed` evictions; returns its index. Throws
  // invalid_argument_error naming the field (and changes nothing) for an empty or repeated name.
  // A negative allowance is accepted as Kubernetes reports it (it behaves as 0).
  std::uint32_t add(std::string name, std::int32_t disruptions_allowed) {
    if (name.empty()) throw invalid_argument_error("pdb.name", "must not be empty");
    for (const auto& n : names_) {
      if (n == name) throw invalid_argument_error("pdb '" + name + "'.name", "is already a budget");
    }
    names_.push_back(std::move(name));
    allowed_.push_back(disruptions_allowed);
    return static_cast<std::uint32_t>(names_.size() - 1);
  }

  // Budget `pdb` covers the pod named `pod_name`. Throws naming "pdb 'x'" for an unknown budget.
  void cover(std::string_view pod_name, std::string_view pdb) {
    if (pod_name.empty()) throw invalid_argument_error("pdb '" + std::string(pdb) + "'.pods", "a pod name must not be empty");
    const std::uint32_t i = index_of(pdb);
    auto& list = covered_[pod_key(pod_name)];
    for (std::uint32_t j : list) {
      if (j == i) return;
    }
    list.push_back(i);
  }

  [[nodiscard]] std::size_t size() const noexcept { return names_.size(); }
  [[nodiscard]] bool empty() const noexcept { return names_.empty(); }
  [[nodiscard]] const std::string& name(std::uint32_t i) const { return names_.at(i); }
  [[nodiscard]] std::int32_t disruptions_allowed(std::uint32_t i) const { return allowed_.at(i); }
  [[nodiscard]] std::span<const std::int32_t> allowances() const noexcept { return allowed_; }

  // The budgets covering the pod with this key, in the order they were added.
  [[nodiscard]] std::span<const std::uint32_t> budgets_of(std::uint64_t key) const noexcept {
    const auto it = covered_.find(key);
    if (it == covered_.end()) return {};
    return it->second;
  }

  [[nodiscard]] std::uint32_t index_of(std::string_view pdb) const {
    for (std::size_t i = 0; i < names_.size(); ++i) {
      if (names_[i] == pdb) return static_cast<std::uint32_t>(i);
    }
    throw invalid_argument_error("pdb '" + std::string(pdb) + "'", "is not a budget (add it first)");
  }

 private:
  std::vector<std::string> names_;
  std::vector<std::int32_t> allowed_;
  std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> covered_;
};

// One pass of filterPodsWithPDBViolation: reset() with a fresh copy of the allowances, then take()
// each potential victim, most important first. Reuses its storage: allocation-free after warm-up.
class disruption_tally {
 public:
  void reset(const disruption_budgets* b) {
    b_ = (b != nullptr && !b->empty()) ? b : nullptr;
    left_.clear();
    if (b_ != nullptr) left_.assign(b_->allowances().begin(), b_->allowances().end());
  }
  // True when evicting the pod with this key would violate one of its budgets.
  bool take(std::uint64_t key) noexcept {
    if (b_ == nullptr) return false;
    for (const std::uint32_t i : b_->budgets_of(key)) {
      if (left_[i] <= 0) return true;
      --left_[i];
    }
    return false;
  }
  [[nodiscard]] bool active() const noexcept { return b_ != nullptr; }

 private:
  const disruption_budgets* b_ = nullptr;
  std::vector<std::int32_t> left_;
};

}  // namespace gpusched
