// Kubernetes' NodeUnschedulable, TaintToleration and NodeAffinity filters over the node-constraint
// hooks of core/node_constraints.hpp. None allocates per node: names compare as interned pointers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpusched/core/cluster.hpp"
#include "gpusched/core/node_constraints.hpp"
#include "gpusched/core/pod.hpp"
#include "gpusched/core/reason.hpp"
#include "gpusched/preflight/preflight.hpp"

namespace gpusched {

namespace detail {

inline const label* find_label(std::span<const label> labels, label_name key) noexcept {
  for (const label& l : labels) {
    if (l.key == key) return &l;
  }
  return nullptr;
}

inline bool value_in(label_name v, const std::vector<label_name>& values) noexcept {
  for (label_name x : values) {
    if (x == v) return true;
  }
  return false;
}

// labels.Requirement.Matches (apimachinery pkg/labels/selector.go): In, NotIn, Exists,
// DoesNotExist, Gt, Lt (Gt / Lt: the label must exist and parse as an integer).
inline bool requirement_matches(const selector_requirement& q, std::span<const label> labels) noexcept {
  const label* l = find_label(labels, q.key);
  switch (q.op) {
    case selector_operator::in: return l != nullptr && value_in(l->value, q.values);
    case selector_operator::not_in: return l == nullptr || !value_in(l->value, q.values);
    case selector_operator::exists: return l != nullptr;
    case selector_operator::does_not_exist: return l == nullptr;
    case selector_operator::gt:
    case selector_operator::lt: {
      if (l == nullptr) return false;
      const auto have = l->value.integer();
      const auto want = q.values.empty() ? std::nullopt : q.values[0].integer();
      if (!have || !want) return false;
      return q.op == selector_operator::gt ? *have > *want : *have < *want;
    }
  }
  return false;
}

// A metadata.name field requirement; without the NamedNodes hook a node has no name to match.
template <class C>
bool field_matches(const selector_requirement& q, const C& c, node_index n) {
  bool equal = false;
  if constexpr (NamedNodes<C>) {
    equal = !q.values.empty() && std::string_view(traits_of<C>::node_name(c, n)) == q.values[0].str();
  }
  return q.op == selector_operator::in ? equal : !equal;
}

// nodeaffinity's nodeSelectorTerm.match (component-helpers scheduling/corev1/nodeaffinity): every
// expression and every field requirement holds. `usable` is false for an empty term or one whose
// values do not parse (placement_ref::set): such a term matches no node.
template <class C>
bool term_matches(const node_selector_term& t, bool usable, std::span<const label> labels, const C& c, node_index n) {
  if (!usable) return false;
  for (const auto& q : t.match_expressions) {
    if (!requirement_matches(q, labels)) return false;
  }
  for (const auto& q : t.match_fields) {
    if (!field_matches(q, c, n)) return false;
  }
  return true;
}

// v1helper.TolerationsTolerateTaint (component-helpers scheduling/corev1/helpers.go).
inline bool tolerated(std::span<const toleration> tolerations, const node_taint& t) noexcept {
  for (const toleration& tol : tolerations) {
    if (tol.tolerates(t)) return true;
  }
  return false;
}

// The first NoSchedule / NoExecute taint of the node no toleration tolerates
// (v1helper.FindMatchingUntoleratedTaint with helper.DoNotScheduleTaintsFilterFunc).
inline const node_taint* first_untolerated(std::span<const node_taint> taints, std::span<const toleration> tolerations) noexcept {
  for (const node_taint& t : taints) {
    if (t.effect == taint_effect::prefer_no_schedule) continue;
    if (!tolerated(tolerations, t)) return &t;
  }
  return nullptr;
}

}  // namespace detail

// NodeUnschedulable (kubernetes pkg/scheduler/framework/plugins/nodeunschedulable/
// node_unschedulable.go): a cordoned node takes only pods that tolerate the
// node.kubernetes.io/unschedulable:NoSchedule taint.
struct unschedulable_check {
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "NodeUnschedulable"; }
  template <Cluster C>
  [[nodiscard]] reason check(const C& c, const pod& p, node_index n) const {
    if (!is_unschedulable(c, n)) return reason::ok;
    static const node_taint cordon{label_name(taint_node_unschedulable), label_name(), taint_effect::no_schedule};
    return detail::tolerated(p.placement.get().tolerations, cordon) ? reason::ok : reason::node_unschedulable;
  }
  template <Cluster C>
  [[nodiscard]] reason_detail explain(const C& c, const pod& p, node_index n) const {
    const reason r = check(c, p, n);
    return {r, r == reason::ok ? std::string() : "node(s) were unschedulable", {}, false, 0, 0, 0};
  }
};

// TaintToleration's filter (tainttoleration/taint_toleration.go, Filter): every NoSchedule and
// NoExecute taint must be tolerated; PreferNoSchedule taints only lower the score
// (scoring/node_constraint_scores.hpp).
struct taint_toleration {
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "TaintToleration"; }
  template <Cluster C>
  [[nodiscard]] reason check(const C& c, const pod& p, node_index n) const {
    return detail::first_untolerated(taints_of(c, n), p.placement.get().tolerations) == nullptr ? reason::ok
                                                                                                 : reason::untolerated_taint;
  }
  // Upstream's text: "node(s) had untolerated taint {key: value}".
  template <Cluster C>
  [[nodiscard]] reason_detail explain(const C& c, const pod& p, node_index n) const {
    const node_taint* t = detail::first_untolerated(taints_of(c, n), p.placement.get().tolerations);
    if (t == nullptr) return {};
    return {reason::untolerated_taint,
            "node(s) had untolerated taint {" + std::string(t->key.str()) + ": " + std::string(t->value.str()) + "}",
            {}, false, 0, 0, 0};
  }
};

// NodeAffinity's filter (nodeaffinity/node_affinity.go, Filter, with
// nodeaffinity.GetRequiredNodeAffinity): the pod's nodeSelector (every pair a label of the node)
// and its required node affinity (any term matches). `added` is the plugin's addedAffinity
// (NodeAffinityArgs), enforced on every pod before the pod's own.
struct node_affinity {
  std::optional<std::vector<node_selector_term>> added;  // addedAffinity.requiredDuringScheduling...

  [[nodiscard]] static constexpr std::string_view name() noexcept { return "NodeAffinity"; }

  template <Cluster C>
  [[nodiscard]] reason check(const C& c, const pod& p, node_index n) const {
    return why(c, p, n) == 0 ? reason::ok : reason::node_affinity_mismatch;
  }
  template <Cluster C>
  [[nodiscard]] reason_detail explain(const C& c, const pod& p, node_index n) const {
    switch (why(c, p, n)) {
      case 0: return {};
      case 1: return {reason::node_affinity_mismatch, "node(s) didn't match scheduler-enforced node affinity", {}, false, 0, 0, 0};
      default: return {reason::node_affinity_mismatch, "node(s) didn't match Pod's node affinity/selector", {}, false, 0, 0, 0};
    }
  }

 private:
  // 0: fits; 1: the added (scheduler-enforced) affinity fails; 2: the pod's own.
  template <Cluster C>
  int why(const C& c, const pod& p, node_index n) const {
    const auto labels = labels_of(c, n);
    if (added && !any_term(*added, nullptr, labels, c, n)) return 1;
    const placement_ref& ref = p.placement;
    const pod_placement& pl = ref.get();
    for (const label& want : pl.node_selector) {
      const label* have = detail::find_label(labels, want.key);
      if (have == nullptr || have->value != want.value) return 2;
    }
    if (pl.required && !any_term(*pl.required, &ref, labels, c, n)) return 2;
    return 0;
  }
  template <Cluster C>
  static bool any_term(const std::vector<node_selector_term>& terms, const placement_ref* ref, std::span<const label> labels,
                       const C& c, node_index n) {
    for (std::size_t i = 0; i < terms.size(); ++i) {
      const bool usable = ref != nullptr ? ref->required_term_usable(i) : term_usable(terms[i]);
      if (detail::term_matches(terms[i], usable, labels, c, n)) return true;
    }
    return false;
  }
  static bool term_usable(const node_selector_term& t) noexcept {
    return !(t.match_expressions.empty() && t.match_fields.empty());
  }
};

}  // namespace gpusched
