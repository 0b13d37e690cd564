// gang_preemptor: preemption for a whole gang. It evicts enough lower-priority pods for EVERY
// member of the gang to fit, or nothing; a running gang among the victims is evicted whole.
//
//   gang_preemptor pre(profile);                         // C = bound_cluster<...> (PodsOnNodes)
//   pod_gang pg = gang_from_pods(unit.pods);             // or name_members(make_gang(...))
//   // the cycle's gang_placer::place failed first (it ran the profile's PreFilter; plan runs none)
//   gang_preemption_result r = pre.plan(cluster, pg.spec, now, &budget);   // dry run, c unchanged
//   if (r) pre.apply(cluster, pg, r, now, &budget);      // one transaction: victims out, gang in
//   else puts(r.explain(pg.spec).c_str());
//
// Victim rules, as the single-pod preemptor (preemption/preemption.hpp):
//   - only pods of lower priority than the gang's (gang_spec::priority);
//   - a dev gang (any role's pod is dev) never preempts prod;
//   - with protect_guaranteed, Guaranteed pods are never victims;
//   - a pod whose preemption budget is spent (preemption_budget::is_protected) is no victim in the
//     budget's hard mode, and a budget violation in its soft mode;
//   - a running gang (pods sharing bound_pod::gang) is one unit: all of its members, on every node,
//     or none; it is a candidate only if every member is;
//   - optionally, only the pods the caller offers (a gang only if every member is offered).
//
// Search (every step on a cluster_overlay; the live cluster is never touched; each "fits" is
// gang_placer::place of the gang's minimum on the overlay, undone right after):
//   1. If the gang fits as is, no victim is needed.
//   2. Remove every candidate unit. If the gang still does not fit, preempt nothing: the answer
//      names the role still short and why the nodes rejected its next member.
//   3. Kubernetes' reprieve (kubernetes pkg/scheduler/framework/plugins/defaultpreemption/
//      default_preemption.go, SelectVictimsOnNode), cluster-wide instead of per node: add the units
//      back one by one; keep each one that still lets the whole gang fit, else it is a victim. Run
//      for two orders:
//        a. most important first across the cluster: budget violators first, then higher priority,
//           then earlier start (kubernetes pkg/scheduler/util/utils.go, MoreImportantPod);
//        b. node by node, the nodes costliest to empty first (the cost of all candidate units
//           touching a node, in the cascade below), each node's units most important first; so the
//           victims gather on the nodes cheapest to empty.
//   4. Of the two victim sets, the better by Kubernetes' pickOneNodeForPreemption cascade
//      (kubernetes pkg/scheduler/framework/preemption/preemption.go), applied to the whole victim
//      set, every gang member counted: fewest budget violations, lowest highest victim priority,
//      smallest sum of (priority + 2^31), fewest victims, latest earliest-start among the
//      highest-priority victims; on a tie, order a.
//   5. The gang is placed on the overlay without the victims, with the caller's gang_options
//      (elastic roles grow only into room that is free then): its bindings are valid on the live
//      cluster once the victims are released.
// Cost: a what-if (a gang_placer::place on the overlay) per candidate unit with a pod on a node the
// last fitting placement used, plus up to 7; 2 * (candidate units) + 7 at worst (docs/gang.md §4).
// A plan allocates (a copy of the bound pods, the units, the result); it is not a per-pod hot path.
#pragma once

#include <algorithm>
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
#include "gpusched/gang/gang.hpp"
#include "gpusched/gang/gang_pods.hpp"
#include "gpusched/gang/overlay.hpp"
#include "gpusched/gang/placement.hpp"
#include "gpusched/gang/result.hpp"
#include "gpusched/preemption/disruption_budget.hpp"
#include "gpusched/preemption/reprieve.hpp"
#include "gpusched/preemption/preemption.hpp"
#include "gpusched/preemption/preemption_budget.hpp"
#include "gpusched/schedule/schedule_one.hpp"
#include "gpusched/schedule/transaction.hpp"

namespace gpusched {

struct gang_preemption_options {
  bool protect_guaranteed = false;  // Guaranteed pods are never victims
  gang_options placement{};         // for the final placement; the search places the minimums
};

struct gang_preemption_result {
  bool found = false;
  std::string gang;                        // the gang planned for
  std::vector<preemption_victim> victims;  // most important first; whole gangs included
  std::uint32_t gangs = 0;                 // running gangs among the victims
  victim_cost cost;                        // over every victim pod
  gang_result placement;                   // valid once the victims are released (when found)
  std::uint32_t candidate_units = 0;       // pods and gangs it may preempt
  std::uint32_t candidate_pods = 0;        // their pods
  std::uint32_t what_ifs = 0;              // what-if placements run
  std::string why_not;                     // when !found

  explicit operator bool() const noexcept { return found; }

  // "preempt 6 pod(s) for gang 't' (highest victim priority 1): a0 a1 ...; then gang 't' placed ..."
  // or "no preemption for gang 't': ..."
  [[nodiscard]] std::string explain(const gang_spec& g) const {
    if (!found) return "no preemption for gang '" + g.name + "': " + why_not;
    if (victims.empty()) return "no preemption needed: " + placement.explain(g);
    std::string s = "preempt " + std::to_string(victims.size()) + " pod(s)";
    if (gangs > 0) s += " (" + std::to_string(gangs) + " whole gang(s))";
    s += " for gang '" + g.name + "' (highest victim priority " + std::to_string(cost.highest_priority);
    if (cost.violations > 0) s += ", " + std::to_string(cost.violations) + " budget violation(s)";
    s += "):";
    for (const auto& v : victims) s += " " + v.spec.name;
    return s + "; then " + placement.explain(g);
  }
};

template <class C, class Profile>
  requires PodsOnNodes<C> && SchedulingProfile<Profile, cluster_overlay<C>>
class gang_preemptor {
 public:
  explicit gang_preemptor(Profile profile, gang_preemption_options opts = {})
      : profile_(profile), opts_(opts), search_(profile, search_options(opts.placement)),
        final_(std::move(profile), final_options(opts.placement)) {}

  [[nodiscard]] const gang_preemption_options& options() const noexcept { return opts_; }

  // The dry run. `offered`: the pods that may be victims (empty: every bound pod). Changes nothing in c.
  // `pdbs`: the PodDisruptionBudgets of the bound pods (disruption_budget.hpp; none when null),
  // taken cluster-wide over the candidates most important first, as the reprieve is.
  [[nodiscard]] gang_preemption_result plan(const C& c, const gang_spec& g, double now, const preemption_budget* budget = nullptr,
                                            std::span<const pod_id> offered = {}, const disruption_budgets* pdbs = nullptr) {
    validate(g);
    gang_preemption_result res;
    res.gang = g.name;
    c_ = &c;
    g_ = &g;
    what_ifs_ = 0;
    fit_node_.assign(num_nodes(c), 0);
    fit_list_.clear();
    search_.refresh_topology();
    final_.refresh_topology();
    cluster_overlay<C> o(c);

    if (fits(o)) {  // 1.
      res.found = true;
      final_.place(o, g, res.placement);
      res.what_ifs = what_ifs_ + 1;
      return res;
    }
    if (g.priority <= min_priority) {
      res.why_not = "priority " + std::to_string(g.priority) + " is the lowest; only lower priorities are preempted";
      return res;
    }
    collect_units(g, now, budget, offered);
    for (const unit& u : units_) {
      if (!u.eligible) continue;
      ++res.candidate_units;
      res.candidate_pods += u.count;
    }
    if (res.candidate_units == 0) {
      res.why_not = "nothing it may preempt: " + ineligible_.to_string(all_.size());
      res.what_ifs = what_ifs_;
      return res;
    }
    if (pdbs != nullptr && !pdbs->empty()) mark_pdb_violations(*pdbs);
    for (std::uint32_t k = 0; k < units_.size(); ++k) {  // 2.
      if (units_[k].eligible) remove(o, k);
    }
    if (!fits(o)) {
      res.why_not = "even with all " + std::to_string(res.candidate_pods) + " pod(s) it may preempt gone (" +
                    ineligible_.to_string(all_.size()) + "), " + short_of(g);
      res.what_ifs = what_ifs_;
      return res;
    }

    // 3a and 3b.
    importance_order(order_);
    reprieve(o, order_, victim_a_);
    node_order(order_);
    reprieve(o, order_, victim_b_);
    const victim_cost cost_a = cost_of(victim_a_);
    const victim_cost cost_b = cost_of(victim_b_);
    const bool use_b = cost_b < cost_a;  // 4.
    const std::vector<bool>& chosen = use_b ? victim_b_ : victim_a_;

    // 5.
    o.reset();
    for (std::uint32_t k = 0; k < units_.size(); ++k) {
      if (chosen[k]) remove(o, k);
    }
    if (!final_.place(o, g, res.placement)) {  // cannot happen unless the profile is not deterministic
      res.why_not = "the final placement failed on the chosen victims: " + res.placement.explain(g);
      res.what_ifs = what_ifs_ + 1;
      return res;
    }
    res.found = true;
    res.what_ifs = what_ifs_ + 1;
    importance_order(order_);
    for (const std::uint32_t k : order_) {
      if (!chosen[k]) continue;
      const unit& u = units_[k];
      if (u.gang != no_gang) ++res.gangs;
      for (std::uint32_t i = u.first; i < u.first + u.count; ++i) {
        const bound_pod& m = all_[i];
        res.victims.push_back(preemption_victim{pod(bound_traits_of<C>::bound_pod_spec(c, m.id)), m, violating_[i]});
      }
    }
    res.cost = use_b ? cost_b : cost_a;
    return res;
  }

  // Applies a plan as one transaction: the victims are released and every placed member of pg is
  // bound as pg.member(...). The plan is checked first (the same gang, every victim still bound as
  // planned, every member still passing the profile's checks once the victims leave); a stale plan
  // throws invalid_argument_error and changes nothing. On success each victim's preemption is
  // recorded in the budget.
  void apply(C& c, const pod_gang& pg, const gang_preemption_result& plan, double now, preemption_budget* budget = nullptr)
    requires MutableCluster<C>
  {
    if (!plan.found) throw invalid_argument_error("gang_preemption_plan", "holds no plan to apply");
    if (plan.gang != pg.spec.name) {
      throw invalid_argument_error("gang_preemption_plan", "is for gang '" + plan.gang + "', not '" + pg.spec.name + "'");
    }
    for (const auto& v : plan.victims) {
      const bound_pod* b = find_bound(c, v.record.id, v.record.where.node);
      if (b == nullptr || !(*b == v.record)) {
        throw invalid_argument_error("gang_preemption_plan", "victim '" + v.spec.name + "' is no longer bound as planned");
      }
    }
    {  // the members, confirmed by the profile's checks one by one on the state the victims leave
      cluster_overlay<C> o(c);
      for (const auto& v : plan.victims) o.release(v.spec, v.record.where);
      for (const member_binding& m : plan.placement.members) {
        const pod& p = pg.member(m);
        reason r = reason::ok;
        if (m.where.node < num_nodes(c)) profile_.filter(o, p, m.where.node, 1, &r);
        if (m.where.node >= num_nodes(c) || r != reason::ok) {
          throw invalid_argument_error("gang_preemption_plan", "member '" + p.name + "' no longer fits node #" +
                                                                   std::to_string(m.where.node) + " once the victims leave");
        }
        o.reserve(p, m.where);  // throws when a device lacks the share
      }
    }
    transaction<C> tx(c, plan.placement.members.size());
    for (const auto& v : plan.victims) tx.release(v.spec, v.record.where);
    for (const member_binding& m : plan.placement.members) tx.reserve(pg.member(m), m.where);
    tx.commit();
    if (budget != nullptr) {
      for (const auto& v : plan.victims) budget->record(v.record.key, now);
    }
  }

  // plan + apply when found. The cluster is unchanged when nothing is found.
  gang_preemption_result preempt(C& c, const pod_gang& pg, double now, preemption_budget* budget = nullptr,
                                 std::span<const pod_id> offered = {}, const disruption_budgets* pdbs = nullptr)
    requires MutableCluster<C>
  {
    gang_preemption_result r = plan(c, pg.spec, now, budget, offered, pdbs);
    if (r.found) apply(c, pg, r, now, budget);
    return r;
  }

 private:
  struct unit {
    std::uint32_t first = 0, count = 0;  // members: all_[first, first + count)
    gang_key gang = no_gang;
    std::int32_t priority = std::numeric_limits<std::int32_t>::min();  // most important member's
    double start = std::numeric_limits<double>::infinity();  // earliest member start
    std::uint64_t key = std::numeric_limits<std::uint64_t>::max();
    bool violating = false;
    bool eligible = true;
  };

  // Why bound pods are not candidates, each pod counted once under its first failing rule.
  struct ineligible_counts {
    std::uint32_t priority = 0, prod = 0, guaranteed = 0, budget = 0, not_offered = 0, gang_partner = 0;
    [[nodiscard]] std::string to_string(std::size_t bound) const {
      return std::to_string(bound) + " running pod(s): " + std::to_string(priority) + " of priority >= the gang's, " +
             std::to_string(prod) + " prod (the gang is dev), " + std::to_string(guaranteed) + " Guaranteed, " +
             std::to_string(budget) + " protected by the preemption budget, " + std::to_string(not_offered) +
             " not offered, " + std::to_string(gang_partner) + " in a gang with such a member";
    }
  };

  // Every placement of a plan is a what-if inside the gang's scheduling cycle (PostFilter): the
  // cycle's own gang_placer::place ran PreFilter, so none of these runs it again.
  static gang_options final_options(gang_options o) {
    o.pre_filter = false;
    return o;
  }
  static gang_options search_options(gang_options o) {
    o.elastic = false;
    return final_options(o);
  }

  // 0 eligible, 1 eligible but violating; else the rule that excludes it (counted).
  int classify(const bound_pod& v, const gang_spec& g, bool dev, double now, const preemption_budget* budget,
               std::span<const pod_id> offered, bool count) {
    auto no = [&](std::uint32_t& field) {
      if (count) ++field;
      return -1;
    };
    if (v.priority >= g.priority) return no(ineligible_.priority);
    if (dev && v.tier_ == tier::prod) return no(ineligible_.prod);
    if (opts_.protect_guaranteed && v.qos == qos_class::guaranteed) return no(ineligible_.guaranteed);
    if (!offered.empty() && !std::binary_search(offered_.begin(), offered_.end(), v.id)) return no(ineligible_.not_offered);
    if (budget != nullptr && budget->is_protected(v, now)) return budget->options().hard ? no(ineligible_.budget) : 1;
    return 0;
  }

  void collect_units(const gang_spec& g, double now, const preemption_budget* budget, std::span<const pod_id> offered) {
    bool dev = false;
    for (const auto& r : g.roles) dev = dev || r.member.tier_ == tier::dev;
    offered_.assign(offered.begin(), offered.end());
    std::sort(offered_.begin(), offered_.end());
    ineligible_ = ineligible_counts{};
    all_.clear();
    const std::size_t nodes = num_nodes(*c_);
    for (std::size_t n = 0; n < nodes; ++n) {
      for (const bound_pod& bp : bound_traits_of<C>::bound_pods(*c_, static_cast<node_index>(n))) all_.push_back(bp);
    }
    std::sort(all_.begin(), all_.end(),
              [](const bound_pod& a, const bound_pod& b) { return a.gang != b.gang ? a.gang < b.gang : a.id < b.id; });
    units_.clear();
    violating_.assign(all_.size(), false);
    for (std::uint32_t i = 0; i < all_.size();) {
      unit u;
      u.first = i;
      u.gang = all_[i].gang;
      std::uint32_t end = i + 1;
      if (u.gang != no_gang) {
        while (end < all_.size() && all_[end].gang == u.gang) ++end;
      }
      u.count = end - i;
      bool partner_out = false;
      for (std::uint32_t k = i; k < end; ++k) {
        const bound_pod& m = all_[k];
        const int e = classify(m, g, dev, now, budget, offered, true);
        if (e < 0) partner_out = true;
        if (e == 1) u.violating = violating_[k] = true;
        u.priority = std::max(u.priority, m.priority);
        u.start = std::min(u.start, m.start_time);
        u.key = std::min(u.key, m.key);
      }
      if (partner_out) {
        u.eligible = false;
        for (std::uint32_t k = i; k < end; ++k) {
          if (classify(all_[k], g, dev, now, budget, offered, false) >= 0) ++ineligible_.gang_partner;
        }
      }
      units_.push_back(u);
      i = end;
    }
  }

  void remove(cluster_overlay<C>& o, std::uint32_t k) {
    const unit& u = units_[k];
    for (std::uint32_t i = u.first; i < u.first + u.count; ++i) {
      o.release(bound_traits_of<C>::bound_pod_spec(*c_, all_[i].id), all_[i].where);
    }
  }
  void add_back(cluster_overlay<C>& o, std::uint32_t k) {
    const unit& u = units_[k];
    for (std::uint32_t i = u.first; i < u.first + u.count; ++i) {
      o.reserve(bound_traits_of<C>::bound_pod_spec(*c_, all_[i].id), all_[i].where);
    }
  }

  // Would the gang's minimum fit on o? Leaves o as it was. On success, remembers the nodes the
  // placement used (fit_node_).
  bool fits(cluster_overlay<C>& o) {
    ++what_ifs_;
    if (!search_.place(o, *g_, scratch_)) return false;
    for (const node_index n : fit_list_) fit_node_[n] = 0;
    fit_list_.clear();
    for (const auto& m : scratch_.members) {
      if (fit_node_[m.where.node] == 0) {
        fit_node_[m.where.node] = 1;
        fit_list_.push_back(m.where.node);
      }
    }
    release_gang(o, *g_, scratch_);
    return true;
  }

  // Does unit k have a pod on a node the last successful placement used?
  bool touches_fit(std::uint32_t k) const {
    const unit& u = units_[k];
    for (std::uint32_t i = u.first; i < u.first + u.count; ++i) {
      if (fit_node_[all_[i].where.node] != 0) return true;
    }
    return false;
  }

  std::string short_of(const gang_spec& g) const {
    const gang_failure& f = scratch_.failure;
    const std::string role = f.role < g.roles.size() ? g.roles[f.role].name : "?";
    return "role '" + role + "' got " + std::to_string(f.placed) + " of the " + std::to_string(f.needed) +
           " members it needs; for the next one " + f.rejections.to_string();
  }

  // Kubernetes' reprieve over `order`; o starts with every candidate unit removed and ends so.
  // A unit with no pod on the nodes of the last placement that fitted is reprieved without a
  // what-if: adding it back leaves those nodes as they were, so that placement still fits (checks
  // are per node; the overlay only ever gains pods the placement does not touch). That makes the
  // cost grow with the units near the gang, not with all candidates. If any unit was reprieved so
  // after the last what-if, the end state is checked once; should the search's heuristic not find
  // a placement there, the reprieve runs again checking every unit.
  void reprieve(cluster_overlay<C>& o, const std::vector<std::uint32_t>& order, std::vector<bool>& victim) {
    for (int pass = 0; pass < 2; ++pass) {
      const bool shortcut = pass == 0;
      if (shortcut) fits(o);  // the placement on every candidate removed (it fits: step 2), remembered
      victim.assign(units_.size(), false);
      const bool unchecked = detail::reprieve_units(
          order, [&](std::uint32_t k) { add_back(o, k); }, [&](std::uint32_t k) { remove(o, k); },
          [&] { return fits(o); }, [&](std::uint32_t k) { return !shortcut || touches_fit(k); },
          [&](std::uint32_t k) { victim[k] = true; });
      const bool done = !unchecked || fits(o);
      for (const std::uint32_t k : order) {  // back to every candidate removed
        if (!victim[k]) remove(o, k);
      }
      if (done) return;
    }
  }

  bool more_important(std::uint32_t a, std::uint32_t b) const {
    if (units_[a].violating != units_[b].violating) return units_[a].violating;
    return importance_before(a, b);
  }
  // MoreImportantPod, then the unit index (preemption/reprieve.hpp).
  bool importance_before(std::uint32_t a, std::uint32_t b) const {
    const int c = detail::importance_compare(units_[a], units_[b]);
    return c != 0 ? c < 0 : a < b;
  }

  // Kubernetes' filterPodsWithPDBViolation over every candidate pod, most important first
  // (MoreImportantPod, members of a unit together): a violating pod marks its unit violating.
  void mark_pdb_violations(const disruption_budgets& pdbs) {
    order_.clear();
    for (std::uint32_t k = 0; k < units_.size(); ++k) {
      if (units_[k].eligible) order_.push_back(k);
    }
    std::sort(order_.begin(), order_.end(), [&](std::uint32_t a, std::uint32_t b) { return importance_before(a, b); });
    detail::take_pdb_violations(tally_, pdbs, order_, [&](std::uint32_t k, const auto& take) {
      unit& u = units_[k];
      for (std::uint32_t i = u.first; i < u.first + u.count; ++i) {
        if (take(all_[i].key)) u.violating = violating_[i] = true;
      }
    });
  }

  void importance_order(std::vector<std::uint32_t>& order) const {
    order.clear();
    for (std::uint32_t k = 0; k < units_.size(); ++k) {
      if (units_[k].eligible) order.push_back(k);
    }
    std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return more_important(a, b); });
  }

  victim_cost cost_of(const std::vector<bool>& victim) const {
    victim_cost cost;
    for (std::uint32_t k = 0; k < units_.size(); ++k) {
      if (!victim[k]) continue;
      for (std::uint32_t i = units_[k].first; i < units_[k].first + units_[k].count; ++i) {
        cost.add(all_[i], violating_[i]);
      }
    }
    return cost;
  }

  // 3b: nodes costliest to empty first (ties: lower index first), each node's units by importance.
  void node_order(std::vector<std::uint32_t>& order) {
    const std::size_t nodes = num_nodes(*c_);
    node_cost_.assign(nodes, victim_cost{});
    node_has_.assign(nodes, false);
    std::vector<std::uint32_t> by_importance;
    importance_order(by_importance);
    for (const std::uint32_t k : by_importance) {
      const unit& u = units_[k];
      for (std::uint32_t i = u.first; i < u.first + u.count; ++i) {
        const node_index n = all_[i].where.node;
        bool seen = false;  // the unit counts once per node it touches, every member included
        for (std::uint32_t j = u.first; j < i; ++j) seen = seen || all_[j].where.node == n;
        if (seen) continue;
        node_has_[n] = true;
        for (std::uint32_t j = u.first; j < u.first + u.count; ++j) node_cost_[n].add(all_[j], violating_[j]);
      }
    }
    std::vector<node_index> ns;
    for (std::size_t n = 0; n < nodes; ++n) {
      if (node_has_[n]) ns.push_back(static_cast<node_index>(n));
    }
    std::stable_sort(ns.begin(), ns.end(), [&](node_index a, node_index b) { return node_cost_[b] < node_cost_[a]; });
    // Node by node in that order, each node's units in importance order: (node rank, importance
    // position) pairs sorted, so the cost is O(pods log pods), not nodes x units.
    std::vector<std::uint32_t> rank(nodes, 0);
    for (std::size_t r = 0; r < ns.size(); ++r) rank[ns[r]] = static_cast<std::uint32_t>(r);
    std::vector<std::pair<std::uint32_t, std::uint32_t>> at;  // (node rank, position in by_importance)
    for (std::uint32_t pos = 0; pos < by_importance.size(); ++pos) {
      const unit& u = units_[by_importance[pos]];
      for (std::uint32_t i = u.first; i < u.first + u.count; ++i) at.emplace_back(rank[all_[i].where.node], pos);
    }
    std::sort(at.begin(), at.end());
    std::vector<bool> taken(units_.size(), false);
    order.clear();
    for (const auto& [r, pos] : at) {
      const std::uint32_t k = by_importance[pos];
      if (taken[k]) continue;
      taken[k] = true;
      order.push_back(k);
    }
  }

  Profile profile_;
  gang_preemption_options opts_;
  gang_placer<Profile> search_;  // minimums only
  gang_placer<Profile> final_;   // the caller's gang_options
  const C* c_ = nullptr;
  const gang_spec* g_ = nullptr;
  std::uint32_t what_ifs_ = 0;
  std::vector<std::uint8_t> fit_node_;  // per node: used by the last placement that fitted
  std::vector<node_index> fit_list_;
  gang_result scratch_;
  ineligible_counts ineligible_;
  std::vector<pod_id> offered_;
  std::vector<bound_pod> all_;
  std::vector<bool> violating_;  // per pod of all_: a PDB or (soft mode) preemption budget violation
  disruption_tally tally_;
  std::vector<unit> units_;
  std::vector<std::uint32_t> order_;
  std::vector<bool> victim_a_, victim_b_;
  std::vector<victim_cost> node_cost_;
  std::vector<bool> node_has_;
};

}  // namespace gpusched
