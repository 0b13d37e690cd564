// Preemption (Kubernetes' PostFilter): when no node fits a pod, the cheapest set of lower-priority
// victims whose eviction lets it fit, computed on an overlay and applied as one transaction.
//
// Kubernetes' DefaultPreemption, per candidate node (kubernetes pkg/scheduler/framework/plugins/
// defaultpreemption/default_preemption.go, SelectVictimsOnNode): remove every pod the preemptor may
// preempt; if it still does not fit, the node is no candidate; else add back as many as still let
// it fit, most important first (priority, then earlier start; kubernetes pkg/scheduler/util/
// utils.go, MoreImportantPod), budget-violating ones before the others. The node is chosen by the
// cascade of kubernetes pkg/scheduler/framework/preemption/preemption.go, pickOneNodeForPreemption:
// fewest budget violations, lowest highest-victim priority, smallest sum of (priority + 2^31),
// fewest victims, latest earliest-start among the highest-priority victims, then the first examined.
// Candidates are sampled as Kubernetes does (GetOffsetAndNumCandidates: a seeded random offset,
// max(10% of nodes, 100) candidates, stop once that many are found and one has no violation).
//
// Beyond Kubernetes:
// - A gang (pods sharing bound_pod::gang) is one victim: all of its members, on every node, or
//   none; it is eligible only if every member is, and every member counts in the cascade.
// - dev never preempts prod; with protect_guaranteed, Guaranteed pods are never victims.
// - A preemption budget (preemption_budget.hpp) protects pods preempted too often; in its soft mode
//   they count as violations instead, alongside PodDisruptionBudget violations
//   (disruption_budget.hpp; a gang violates when any member does, every violating member counts).
#pragma once

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "gpusched/core/binding.hpp"
#include "gpusched/core/bound_pods.hpp"
#include "gpusched/core/cluster.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/core/pod.hpp"
#include "gpusched/core/reason.hpp"
#include "gpusched/core/splitmix64.hpp"
#include "gpusched/preemption/disruption_budget.hpp"
#include "gpusched/preemption/reprieve.hpp"
#include "gpusched/preemption/node_overlay.hpp"
#include "gpusched/preemption/preemption_budget.hpp"
#include "gpusched/schedule/transaction.hpp"

namespace gpusched {

// What preemption needs of a profile: its checks and its device choice, run on an overlay.
template <class P, class C>
concept PreemptionProfile = PodsOnNodes<C> && requires(const P& prof, const node_overlay<C>& o, const pod& p, node_index n,
                                                      reason* out) {
  prof.filter(o, p, n, std::size_t{1}, out);
  { prof.select_gpus(o, p, n) } -> std::same_as<gpu_set>;
};

struct preemption_options {
  bool sample_candidates = true;                     // Kubernetes' candidate sampling
  std::int32_t min_candidate_nodes_percentage = 10;  // DefaultPreemptionArgs defaults
  std::int32_t min_candidate_nodes_absolute = 100;
  std::uint64_t seed = 0;                            // the sampling offset's generator
  bool protect_guaranteed = false;                   // Guaranteed pods are never victims

  void validate() const {
    if (min_candidate_nodes_percentage < 0 || min_candidate_nodes_percentage > 100) {
      throw invalid_argument_error("preemption_options.min_candidate_nodes_percentage", "must be within 0..100");
    }
    if (min_candidate_nodes_absolute < 0) {
      throw invalid_argument_error("preemption_options.min_candidate_nodes_absolute", "must be >= 0");
    }
  }
};

// kubernetes pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go, calculateNumCandidates.
constexpr std::int64_t num_preemption_candidates(std::int64_t nodes, std::int64_t percentage, std::int64_t absolute) noexcept {
  std::int64_t n = nodes * percentage / 100;
  if (n < absolute) n = absolute;
  if (n > nodes) n = nodes;
  return n;
}

struct preemption_victim {
  pod spec;             // a copy: the plan stays valid whatever happens to the cluster
  bound_pod record;     // id, binding, start, priority, gang, key as bound
  bool violating = false;  // its PodDisruptionBudget or (soft mode) preemption budget is spent
};

// The cascade's values for one candidate node, over all of its victims (whole gangs included).
struct victim_cost {
  std::int64_t violations = 0;
  std::int32_t highest_priority = std::numeric_limits<std::int32_t>::min();  // of a node with victims
  // Sum of priority + 2^31 in int64, as Kubernetes' minSumPrioritiesScoreFunc (kubernetes
  // pkg/scheduler/framework/preemption/preemption.go @00e6d95, pickOneNodeForPreemption): with
  // 2,000,000,000 priorities an int32 sum would overflow at the second victim.
  std::int64_t priority_sum = 0;
  std::int64_t count = 0;
  double earliest_start_of_highest = 0.0;

  // Counts victim v (violating: its preemption budget is spent) into the cascade's values.
  void add(const bound_pod& v, bool violating) noexcept {
    violations += violating ? 1 : 0;
    priority_sum += std::int64_t{v.priority} + (std::int64_t{1} << 31);
    if (count++ == 0 || v.priority > highest_priority) {
      highest_priority = v.priority;
      earliest_start_of_highest = v.start_time;
    } else if (v.priority == highest_priority && v.start_time < earliest_start_of_highest) {
      earliest_start_of_highest = v.start_time;
    }
  }

  // Lexicographic order of pickOneNodeForPreemption's criteria; true when a is strictly better.
  friend bool operator<(const victim_cost& a, const victim_cost& b) noexcept {
    if (a.violations != b.violations) return a.violations < b.violations;
    if (a.highest_priority != b.highest_priority) return a.highest_priority < b.highest_priority;
    if (a.priority_sum != b.priority_sum) return a.priority_sum < b.priority_sum;
    if (a.count != b.count) return a.count < b.count;
    return a.earliest_start_of_highest > b.earliest_start_of_highest;
  }
};

struct preemption_result {
  bool found = false;
  node_index node = 0;
  binding preemptor_binding{};
  std::vector<preemption_victim> victims;  // most important first; gang members on other nodes included
  victim_cost cost;
  std::uint32_t gangs = 0;  // gangs among the victims
  // Why nodes were not candidates (each examined node counts once).
  std::uint32_t examined = 0;
  std::uint32_t candidates = 0;
  std::uint32_t no_eligible_victims = 0;      // nothing on it the pod may preempt
  std::uint32_t does_not_fit = 0;             // would not fit even with every eligible pod gone
  std::uint32_t fits_without_preemption = 0;  // fits already: no victim needed there
  std::string ineligible;                     // why the pod may preempt nothing at all, if so

  explicit operator bool() const noexcept { return found; }

  [[nodiscard]] std::string explain(std::string_view node_name = {}) const {
    if (!ineligible.empty()) return "no preemption: " + ineligible;
    if (!found) {
      return "no preemption: 0/" + std::to_string(examined) + " nodes can be freed: " + std::to_string(no_eligible_victims) +
             " hold nothing the pod may preempt, " + std::to_string(does_not_fit) + " would not fit it even then, " +
             std::to_string(fits_without_preemption) + " fit it already";
    }
    std::string s = "preempt " + std::to_string(victims.size()) + " pod(s)";
    if (gangs > 0) s += " (" + std::to_string(gangs) + " whole gang(s))";
    s += " on " + (node_name.empty() ? "node #" + std::to_string(node) : std::string(node_name)) + ", chosen among " +
         std::to_string(candidates) + " candidate(s): highest victim priority " + std::to_string(cost.highest_priority);
    if (cost.violations > 0) s += ", " + std::to_string(cost.violations) + " budget violation(s)";
    s += ";";
    for (const auto& v : victims) s += " " + v.spec.name;
    return s;
  }
};

template <class C, class Profile>
  requires PodsOnNodes<C> && PreemptionProfile<Profile, C>
class preemptor {
 public:
  explicit preemptor(Profile profile, preemption_options opts = {})
      : profile_(std::move(profile)), opts_(opts), rng_(opts.seed ^ 0xD1B54A32D192ED03ULL) {
    opts_.validate();
  }

  [[nodiscard]] const preemption_options& options() const noexcept { return opts_; }

  // The dry run: which victims would let p fit, and where. Changes nothing in c. `pdbs`: the
  // PodDisruptionBudgets of the bound pods (none when null).
  [[nodiscard]] preemption_result plan(const C& c, const pod& p, double now, const preemption_budget* budget = nullptr,
                                       const disruption_budgets* pdbs = nullptr) {
    preemption_result res;
    const std::size_t all = num_nodes(c);
    if (p.priority <= min_priority) {
      res.ineligible = "priority " + std::to_string(p.priority) + " is the lowest; only lower priorities are preempted";
      return res;
    }
    if (all == 0) return res;
    c_ = &c;
    pod_ = &p;
    now_ = now;
    budget_ = (budget != nullptr && !budget->empty()) ? budget : nullptr;
    pdbs_ = (pdbs != nullptr && !pdbs->empty()) ? pdbs : nullptr;
    if constexpr (!GangIndexed<C>) build_gang_index(c);

    const std::size_t want = opts_.sample_candidates
                                 ? static_cast<std::size_t>(num_preemption_candidates(static_cast<std::int64_t>(all),
                                                                                      opts_.min_candidate_nodes_percentage,
                                                                                      opts_.min_candidate_nodes_absolute))
                                 : all;
    const std::size_t offset = opts_.sample_candidates ? static_cast<std::size_t>(next_random() % all) : 0;
    node_overlay<C> overlay(c);
    bool have_best = false;
    victim_cost best_cost;
    node_index best_node = 0;
    gpu_set best_gpus = 0;
    std::size_t non_violating = 0, violating = 0;
    for (std::size_t i = 0; i < all; ++i) {
      const auto n = static_cast<node_index>((offset + i) % all);
      ++res.examined;
      victim_cost cost;
      switch (select_victims(overlay, n, cost)) {
        case outcome::no_victims: ++res.no_eligible_victims; continue;
        case outcome::no_fit: ++res.does_not_fit; continue;
        case outcome::fits_already: ++res.fits_without_preemption; continue;
        case outcome::candidate: break;
      }
      const gpu_set gpus = p.wants_gpu() ? profile_.select_gpus(overlay, p, n) : 0;
      if (p.wants_gpu() && gpus == 0) {  // the checks and the device choice disagree: not a candidate
        ++res.does_not_fit;
        continue;
      }
      ++res.candidates;
      (cost.violations == 0 ? non_violating : violating) += 1;
      if (!have_best || cost < best_cost) {
        have_best = true;
        best_cost = cost;
        best_node = n;
        best_gpus = gpus;
        best_victims_.swap(cur_victims_);
      }
      if (opts_.sample_candidates && non_violating > 0 && non_violating + violating >= want) break;
    }
    if (!have_best) return res;

    res.found = true;
    res.node = best_node;
    res.preemptor_binding = make_binding(p, best_node, best_gpus);
    res.cost = best_cost;
    res.victims.reserve(best_victims_.size());
    gang_key last_gang = no_gang;
    for (const auto& [rec, viol] : best_victims_) {
      res.victims.push_back(preemption_victim{pod(bound_traits_of<C>::bound_pod_spec(c, rec.id)), rec, viol});
      if (rec.gang != no_gang && rec.gang != last_gang) ++res.gangs;
      last_gang = rec.gang;
    }
    return res;
  }

  // Applies a plan as one transaction: the victims are released and p is reserved on the planned
  // binding. The plan is checked against c first (every victim still bound as planned, p still
  // fitting once they leave); a stale plan throws invalid_argument_error and changes nothing. On
  // success each victim's preemption is recorded in the budget.
  void apply(C& c, const pod& p, const preemption_result& plan, double now, preemption_budget* budget = nullptr)
    requires MutableCluster<C>
  {
    if (!plan.found) throw invalid_argument_error("preemption_plan", "holds no plan to apply");
    for (const auto& v : plan.victims) {
      const bound_pod* now_bound = find_bound(c, v.record.id, v.record.where.node);
      if (now_bound == nullptr || !(*now_bound == v.record)) {
        throw invalid_argument_error("preemption_plan", "victim '" + v.spec.name + "' is no longer bound as planned");
      }
    }
    node_overlay<C> overlay(c);
    overlay.focus(plan.node);
    for (const auto& v : plan.victims) overlay.remove(v.record);
    reason r = reason::ok;
    profile_.filter(overlay, p, plan.node, 1, &r);
    bool devices_free = true;
    for_each_gpu(plan.preemptor_binding.gpus, [&](int g) {
      if (g >= overlay.resources(plan.node).gpu_count || overlay.gpu(plan.node, g).milli_free < p.gpu_milli) devices_free = false;
    });
    if (r != reason::ok || !devices_free || plan.preemptor_binding.node != plan.node) {
      throw invalid_argument_error("preemption_plan", "pod '" + p.name + "' no longer fits node #" +
                                                          std::to_string(plan.node) + " once the victims leave");
    }
    {
      transaction<C> tx(c, 1);
      for (const auto& v : plan.victims) tx.release(v.spec, v.record.where);
      tx.reserve(p, plan.preemptor_binding);
      tx.commit();
    }
    if (budget != nullptr) {
      for (const auto& v : plan.victims) budget->record(v.record.key, now);
    }
  }

 private:
  enum class outcome : std::uint8_t { candidate, no_victims, no_fit, fits_already };
  enum class eligibility : std::uint8_t { no, yes, violating };

  struct unit {
    gang_key gang = no_gang;
    std::uint32_t local = 0;  // index in the node's pods (single pods)
    std::int32_t priority = 0;  // most important member's
    double start = 0.0;         // earliest member start
    std::uint64_t key = 0;
    bool violating = false;
    bool eligible = true;  // a gang is eligible only if every member is
    bool victim = false;
    std::uint32_t pdb_first = 0;  // a gang's members' PDB flags start here in member_pdb_
  };

  eligibility eligible(const bound_pod& v) const {
    if (v.priority >= pod_->priority) return eligibility::no;
    if (pod_->tier_ == tier::dev && v.tier_ == tier::prod) return eligibility::no;
    if (opts_.protect_guaranteed && v.qos == qos_class::guaranteed) return eligibility::no;
    if (budget_ != nullptr && budget_->is_protected(v, now_)) {
      return budget_->options().hard ? eligibility::no : eligibility::violating;
    }
    return eligibility::yes;
  }

  // Kubernetes' SelectVictimsOnNode with gangs as units; fills cur_victims_ and cost.
  outcome select_victims(node_overlay<C>& overlay, node_index n, victim_cost& cost) {
    const std::span<const bound_pod> pods = bound_traits_of<C>::bound_pods(*c_, n);
    units_.clear();
    unit_of_.assign(pods.size(), none);
    bool any = false;
    for (std::size_t i = 0; i < pods.size(); ++i) {
      const bound_pod& bp = pods[i];
      if (bp.gang != no_gang) {
        std::uint32_t u = none;
        for (std::uint32_t k = 0; k < units_.size(); ++k) {
          if (units_[k].gang == bp.gang) u = k;
        }
        if (u != none) {
          unit_of_[i] = u;
          continue;
        }
        unit g{bp.gang, static_cast<std::uint32_t>(i), std::numeric_limits<std::int32_t>::min(),
               std::numeric_limits<double>::infinity(), bp.key, false, true, false};
        for_each_gang_member(bp.gang, [&](const bound_pod& m) {
          const eligibility e = eligible(m);
          if (e == eligibility::no) g.eligible = false;
          if (e == eligibility::violating) g.violating = true;
          g.priority = std::max(g.priority, m.priority);
          g.start = std::min(g.start, m.start_time);
          g.key = std::min(g.key, m.key);
        });
        units_.push_back(g);  // kept even when ineligible, so that its other members are skipped
        unit_of_[i] = static_cast<std::uint32_t>(units_.size() - 1);
        any = any || g.eligible;
        continue;
      }
      const eligibility e = eligible(bp);
      if (e == eligibility::no) continue;
      units_.push_back(unit{no_gang, static_cast<std::uint32_t>(i), bp.priority, bp.start_time, bp.key,
                            e == eligibility::violating, true, false});
      unit_of_[i] = static_cast<std::uint32_t>(units_.size() - 1);
      any = true;
    }
    if (!any) return outcome::no_victims;

    overlay.focus(n);
    for (std::size_t i = 0; i < pods.size(); ++i) {
      if (unit_of_[i] != none && units_[unit_of_[i]].eligible) overlay.remove(pods[i]);
    }
    if (!fits(overlay, n)) return outcome::no_fit;

    // The potential victims most important first (MoreImportantPod), then PDB violations taken in
    // that order on a fresh copy of the allowances (filterPodsWithPDBViolation).
    order_.clear();
    for (std::uint32_t k = 0; k < units_.size(); ++k) {
      if (units_[k].eligible) order_.push_back(k);
    }
    const auto by_importance = [&](std::uint32_t a, std::uint32_t b) {
      return detail::importance_compare(units_[a], units_[b]) < 0;
    };
    std::sort(order_.begin(), order_.end(), by_importance);
    member_pdb_.clear();
    if (pdbs_ != nullptr) {
      detail::take_pdb_violations(tally_, *pdbs_, order_, [&](std::uint32_t k, const auto& take) {
        unit& u = units_[k];
        if (u.gang == no_gang) {
          u.violating = take(pods[u.local].key) || u.violating;
          return;
        }
        u.pdb_first = static_cast<std::uint32_t>(member_pdb_.size());
        for_each_gang_member(u.gang, [&](const bound_pod& m) {
          const bool v = take(m.key);
          member_pdb_.push_back(v ? 1 : 0);
          u.violating = u.violating || v;
        });
      });
    }
    // Reprieve, most important first, violating units before the others.
    std::stable_sort(order_.begin(), order_.end(),
                     [&](std::uint32_t a, std::uint32_t b) { return units_[a].violating && !units_[b].violating; });
    bool any_victim = false;
    detail::reprieve_units(
        order_, [&](std::uint32_t k) { apply_unit(overlay, pods, k, +1); },
        [&](std::uint32_t k) { apply_unit(overlay, pods, k, -1); }, [&] { return fits(overlay, n); },
        [](std::uint32_t) { return true; },
        [&](std::uint32_t k) {
          units_[k].victim = true;
          any_victim = true;
        });
    if (!any_victim) return outcome::fits_already;

    // Victims, most important first (order_ is by importance within each violation class).
    cur_victims_.clear();
    std::stable_sort(order_.begin(), order_.end(), by_importance);
    for (const std::uint32_t k : order_) {
      const unit& u = units_[k];
      if (!u.victim) continue;
      if (u.gang == no_gang) {
        cur_victims_.emplace_back(pods[u.local], u.violating);
      } else {
        std::uint32_t j = u.pdb_first;
        for_each_gang_member(u.gang, [&](const bound_pod& m) {
          const bool pdb = pdbs_ != nullptr && member_pdb_[j++] != 0;
          cur_victims_.emplace_back(m, pdb || (budget_ != nullptr && budget_->is_protected(m, now_)));
        });
      }
    }
    cost = victim_cost{};
    for (const auto& [v, viol] : cur_victims_) cost.add(v, viol);
    return outcome::candidate;
  }

  void apply_unit(node_overlay<C>& overlay, std::span<const bound_pod> pods, std::uint32_t k, int sign) {
    const unit& u = units_[k];
    if (u.gang == no_gang) {
      sign > 0 ? overlay.add_back(pods[u.local]) : overlay.remove(pods[u.local]);
      return;
    }
    for (std::size_t i = 0; i < pods.size(); ++i) {
      if (unit_of_[i] == k) sign > 0 ? overlay.add_back(pods[i]) : overlay.remove(pods[i]);
    }
  }

  bool fits(const node_overlay<C>& overlay, node_index n) const {
    reason r = reason::ok;
    profile_.filter(overlay, *pod_, n, 1, &r);
    return r == reason::ok;
  }

  template <class F>
  void for_each_gang_member(gang_key g, F&& f) const {
    if constexpr (GangIndexed<C>) {
      for (const pod_id id : bound_traits_of<C>::gang_members(*c_, g)) {
        const bound_pod* m = bound_traits_of<C>::find_bound_pod(*c_, id);
        if (m != nullptr) f(*m);
      }
    } else {
      auto it = std::lower_bound(gang_index_.begin(), gang_index_.end(), g,
                                 [](const bound_pod& a, gang_key k) { return a.gang < k; });
      for (; it != gang_index_.end() && it->gang == g; ++it) f(*it);
    }
  }

  void build_gang_index(const C& c) {
    gang_index_.clear();
    const std::size_t all = num_nodes(c);
    for (std::size_t n = 0; n < all; ++n) {
      for (const bound_pod& bp : bound_traits_of<C>::bound_pods(c, static_cast<node_index>(n))) {
        if (bp.gang != no_gang) gang_index_.push_back(bp);
      }
    }
    std::sort(gang_index_.begin(), gang_index_.end(),
              [](const bound_pod& a, const bound_pod& b) { return a.gang != b.gang ? a.gang < b.gang : a.id < b.id; });
  }

  std::uint64_t next_random() noexcept { return splitmix64(rng_); }

  static constexpr std::uint32_t none = std::numeric_limits<std::uint32_t>::max();

  Profile profile_;
  preemption_options opts_;
  std::uint64_t rng_;
  // Per-call context and scratch, reused so that a decision allocates nothing after warm-up
  // except the plan it returns.
  const C* c_ = nullptr;
  const pod* pod_ = nullptr;
  double now_ = 0.0;
  const preemption_budget* budget_ = nullptr;
  const disruption_budgets* pdbs_ = nullptr;
  disruption_tally tally_;
  std::vector<std::uint8_t> member_pdb_;
  std::vector<unit> units_;
  std::vector<std::uint32_t> unit_of_;
  std::vector<std::uint32_t> order_;
  std::vector<std::pair<bound_pod, bool>> cur_victims_, best_victims_;
  std::vector<bound_pod> gang_index_;
};

}  // namespace gpusched
