// preemption_budget: a workload preempted k times within a window is not preemptible for a
// cooldown once it runs again, so that long low-priority work completes (the seed's first open
// question).
//
// For a bound pod v (start time s, identity key) at time t:
//   protected(v, t)  <=>  #{preemptions of key in (s - W, s]} >= k  and  t < s + C
// k = max_preemptions, W = window_s, C = cooldown_s. With C >= the work's run time D and
// W >= k * (R + D), where R bounds the time from a preemption to the next start, the work is
// preempted at most k times and completes within (k + 1) * (R + D) of its first start
// (docs/preemption.md). In soft mode a protected pod may still be chosen, counted as a budget
// violation (the role of a PodDisruptionBudget in Kubernetes' cascade).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "gpusched/core/bound_pods.hpp"
#include "gpusched/core/error.hpp"

namespace gpusched {

struct budget_options {
  int max_preemptions = 2;   // k
  double window_s = 3600.0;  // W
  double cooldown_s = 1800.0;  // C
  bool hard = true;          // false: protected pods may be victims, counted as violations

  void validate() const {
    if (max_preemptions < 1) throw invalid_argument_error("budget_options.max_preemptions", "must be >= 1");
    if (!std::isfinite(window_s) || window_s <= 0.0) throw invalid_argument_error("budget_options.window_s", "must be a finite number > 0");
    if (!std::isfinite(cooldown_s) || cooldown_s < 0.0) {
      throw invalid_argument_error("budget_options.cooldown_s", "must be a finite number >= 0");
    }
  }
};

class preemption_budget {
 public:
  explicit preemption_budget(budget_options o = {}) : o_(o) { o_.validate(); }

  [[nodiscard]] const budget_options& options() const noexcept { return o_; }
  [[nodiscard]] bool empty() const noexcept { return history_.empty(); }

  // One preemption of the workload `key` (bound_pod::key, pod_key(name)) at time t. Keeps the k
  // most recent times, which is all the rule reads.
  void record(std::uint64_t key, double t) {
    if (!std::isfinite(t)) throw invalid_argument_error("preemption_budget.time", "must be finite");
    auto& times = history_[key];
    if (times.capacity() < static_cast<std::size_t>(o_.max_preemptions)) times.reserve(static_cast<std::size_t>(o_.max_preemptions));
    if (times.size() == static_cast<std::size_t>(o_.max_preemptions)) times.erase(times.begin());
    times.push_back(t);
  }

  // Preemptions of key recorded within (from, to].
  [[nodiscard]] int count(std::uint64_t key, double from, double to) const {
    auto it = history_.find(key);
    if (it == history_.end()) return 0;
    int n = 0;
    for (double t : it->second) n += (t > from && t <= to) ? 1 : 0;
    return n;
  }

  [[nodiscard]] bool is_protected(const bound_pod& v, double now) const {
    if (history_.empty() || now >= v.start_time + o_.cooldown_s) return false;
    return count(v.key, v.start_time - o_.window_s, v.start_time) >= o_.max_preemptions;
  }

  // Forgets workloads whose last preemption is older than `before` (bounded memory over long runs).
  void forget_before(double before) {
    for (auto it = history_.begin(); it != history_.end();) {
      if (it->second.empty() || it->second.back() < before) {
        it = history_.erase(it);
      } else {
        ++it;
      }
    }
  }

 private:
  budget_options o_;
  std::unordered_map<std::uint64_t, std::vector<double>> history_;  // ascending, at most k per key
};

}  // namespace gpusched
