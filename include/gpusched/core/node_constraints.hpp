// Node labels, taints and cordons; pod tolerations, node selectors and node affinity: what
// Kubernetes' NodeUnschedulable, TaintToleration and NodeAffinity plugins read
// (preflight/node_constraint_checks.hpp, scoring/node_constraint_scores.hpp).
//
// Names and values may be of any length. They are interned once, when a node or a pod is set up
// (label_name), and compared as one pointer on the hot path: checking a pod against a node never
// allocates.
//
// Optional cluster hooks (detected; a cluster without them has no labels, no taints and no cordoned
// node), as ADL free functions or by specialising node_constraint_traits<C>, for `const C& c`,
// `node_index n`:
//   node_labels(c, n)        -> std::span<const label>   (keys unique)
//   node_taints(c, n)        -> std::span<const node_taint>
//   node_unschedulable(c, n) -> bool                          spec.unschedulable (cordoned)
// in_memory_cluster implements all three from node_spec::constraints.
//
// The pod's side is pod::placement (a shared, immutable pod_placement; empty by default).
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gpusched/core/error.hpp"
#include "gpusched/core/types.hpp"

namespace gpusched {

// ---------------------------------------------------------------------------------------------
// Interned names.

namespace detail {
struct pooled_name {
  std::string text;
  bool is_integer = false;  // parses as a base-10 int64 (the Gt / Lt operators)
  std::int64_t integer = 0;
};

inline std::optional<std::int64_t> parse_int64(std::string_view s) noexcept {
  // strconv.ParseInt(s, 10, 64), as labels.Requirement reads Gt / Lt (apimachinery labels/selector.go).
  if (s.empty()) return std::nullopt;
  std::size_t i = 0;
  const bool negative = s[0] == '-';
  if (s[0] == '+' || s[0] == '-') i = 1;
  if (i == s.size()) return std::nullopt;
  std::uint64_t v = 0;
  const std::uint64_t limit = negative ? std::uint64_t{1} << 63 : (std::uint64_t{1} << 63) - 1;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return std::nullopt;
    const auto d = static_cast<std::uint64_t>(s[i] - '0');
    if (v > (limit - d) / 10) return std::nullopt;
    v = v * 10 + d;
  }
  return negative ? static_cast<std::int64_t>(0 - v) : static_cast<std::int64_t>(v);
}

// The process-wide pool: entries are never freed, so a label_name stays valid for the program's
// life. Interning locks a mutex (setup time only); comparing two label_names does not.
class name_pool {
 public:
  static name_pool& instance() {
    static name_pool p;
    return p;
  }
  const pooled_name* intern(std::string_view s) {
    if (s.empty()) return &empty_;
    const std::lock_guard<std::mutex> lock(mutex_);
    auto it = names_.find(s);
    if (it != names_.end()) return it->second.get();
    auto e = std::make_unique<pooled_name>();
    e->text = std::string(s);
    if (const auto v = parse_int64(s)) {
      e->is_integer = true;
      e->integer = *v;
    }
    const pooled_name* ptr = e.get();
    names_.emplace(std::string_view(ptr->text), std::move(e));
    return ptr;
  }
  static const pooled_name* empty() noexcept { return &empty_; }

 private:
  name_pool() = default;
  inline static const pooled_name empty_{};
  std::mutex mutex_;
  std::unordered_map<std::string_view, std::unique_ptr<pooled_name>> names_;
};
}  // namespace detail

// A label key or value, a taint key or value: any length, interned. Equal texts give equal names.
class label_name {
 public:
  label_name() noexcept = default;
  label_name(std::string_view s) : p_(detail::name_pool::instance().intern(s)) {}  // NOLINT(google-explicit-constructor)
  label_name(const char* s) : label_name(std::string_view(s)) {}                     // NOLINT(google-explicit-constructor)
  label_name(const std::string& s) : label_name(std::string_view(s)) {}              // NOLINT(google-explicit-constructor)

  [[nodiscard]] std::string_view str() const noexcept { return p_->text; }
  [[nodiscard]] bool empty() const noexcept { return p_->text.empty(); }
  [[nodiscard]] std::optional<std::int64_t> integer() const noexcept {
    return p_->is_integer ? std::optional<std::int64_t>(p_->integer) : std::nullopt;
  }
  friend bool operator==(label_name a, label_name b) noexcept { return a.p_ == b.p_; }

 private:
  const detail::pooled_name* p_ = detail::name_pool::empty();
};

// Kubernetes' name syntax (apimachinery pkg/util/validation/validation.go): a label value is empty
// or at most 63 characters of [A-Za-z0-9-_.] beginning and ending with an alphanumeric; a label
// key (qualified name) is such a name, non-empty, optionally prefixed by a DNS subdomain of at most
// 253 characters and '/'.
namespace detail {
inline bool is_alnum(char ch) noexcept {
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
}
inline bool is_name_part(std::string_view s) noexcept {
  if (s.empty() || s.size() > 63 || !is_alnum(s.front()) || !is_alnum(s.back())) return false;
  for (char ch : s) {
    if (!is_alnum(ch) && ch != '-' && ch != '_' && ch != '.') return false;
  }
  return true;
}
inline bool is_dns_subdomain(std::string_view s) noexcept {
  if (s.empty() || s.size() > 253) return false;
  for (char ch : s) {
    if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-' || ch == '.')) return false;
  }
  return is_alnum(s.front()) && is_alnum(s.back());
}
}  // namespace detail

inline bool is_valid_label_value(std::string_view v) noexcept { return v.empty() || detail::is_name_part(v); }
inline bool is_valid_label_key(std::string_view k) noexcept {
  const auto slash = k.find('/');
  if (slash == std::string_view::npos) return detail::is_name_part(k);
  return detail::is_dns_subdomain(k.substr(0, slash)) && detail::is_name_part(k.substr(slash + 1));
}

// ---------------------------------------------------------------------------------------------
// The node's side.

struct label {
  label_name key, value;
  friend bool operator==(const label&, const label&) = default;
};

// k8s.io/api/core/v1 TaintEffect.
enum class taint_effect : std::uint8_t { no_schedule, prefer_no_schedule, no_execute };

constexpr std::string_view to_string(taint_effect e) noexcept {
  switch (e) {
    case taint_effect::no_schedule: return "NoSchedule";
    case taint_effect::prefer_no_schedule: return "PreferNoSchedule";
    case taint_effect::no_execute: return "NoExecute";
  }
  return "?";
}

struct node_taint {
  label_name key, value;
  taint_effect effect = taint_effect::no_schedule;
  friend bool operator==(const node_taint&, const node_taint&) = default;
};

// The key of the taint a cordoned node is treated as having (v1.TaintNodeUnschedulable).
inline constexpr std::string_view taint_node_unschedulable = "node.kubernetes.io/unschedulable";

// What node_spec carries for these plugins.
struct node_constraints {
  std::vector<label> labels;
  std::vector<node_taint> taints;
  bool unschedulable = false;
  friend bool operator==(const node_constraints&, const node_constraints&) = default;
};

// Throws invalid_argument_error naming the field ("node 'a'.labels[1].key") for a malformed key or
// value, or a label key given twice. `at` is the node's prefix ("node 'a'.").
inline void validate(const node_constraints& k, const std::string& at) {
  for (std::size_t i = 0; i < k.labels.size(); ++i) {
    const std::string f = at + "labels[" + std::to_string(i) + "].";
    if (!is_valid_label_key(k.labels[i].key.str())) {
      throw invalid_argument_error(f + "key", "'" + std::string(k.labels[i].key.str()) + "' is not a valid label key");
    }
    if (!is_valid_label_value(k.labels[i].value.str())) {
      throw invalid_argument_error(f + "value", "'" + std::string(k.labels[i].value.str()) + "' is not a valid label value");
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (k.labels[j].key == k.labels[i].key) {
        throw invalid_argument_error(f + "key", "'" + std::string(k.labels[i].key.str()) + "' is given twice");
      }
    }
  }
  for (std::size_t i = 0; i < k.taints.size(); ++i) {
    const std::string f = at + "taints[" + std::to_string(i) + "].";
    if (!is_valid_label_key(k.taints[i].key.str())) {
      throw invalid_argument_error(f + "key", "'" + std::string(k.taints[i].key.str()) + "' is not a valid taint key");
    }
    if (!is_valid_label_value(k.taints[i].value.str())) {
      throw invalid_argument_error(f + "value", "'" + std::string(k.taints[i].value.str()) + "' is not a valid taint value");
    }
    if (static_cast<unsigned>(k.taints[i].effect) > static_cast<unsigned>(taint_effect::no_execute)) {
      throw invalid_argument_error(f + "effect", "is not a taint effect");
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The pod's side.

enum class toleration_operator : std::uint8_t { equal, exists };

// k8s.io/api/core/v1 Toleration. An empty key with `exists` tolerates every taint; no effect
// (std::nullopt) matches every effect.
struct toleration {
  label_name key;
  toleration_operator op = toleration_operator::equal;
  label_name value;
  std::optional<taint_effect> effect;

  // Toleration.ToleratesTaint (k8s.io/api/core/v1/toleration.go; the alpha Lt / Gt operators of
  // Kubernetes 1.35 are not modelled).
  [[nodiscard]] bool tolerates(const node_taint& t) const noexcept {
    if (effect && *effect != t.effect) return false;
    if (!key.empty() && key != t.key) return false;
    return op == toleration_operator::exists || value == t.value;
  }
};

enum class selector_operator : std::uint8_t { in, not_in, exists, does_not_exist, gt, lt };

// A NodeSelectorRequirement: on a label key (matchExpressions) or on the node's name (matchFields,
// key "metadata.name", In / NotIn only).
struct selector_requirement {
  label_name key;
  selector_operator op = selector_operator::in;
  std::vector<label_name> values;
};

// A NodeSelectorTerm: every requirement must hold. An empty term matches no node (v1 API); a term
// whose values are not valid label values matches no node either (nodeaffinity: the requirement
// fails to parse, and Kubernetes' API server admits such values).
struct node_selector_term {
  std::vector<selector_requirement> match_expressions;
  std::vector<selector_requirement> match_fields;
};

struct preferred_term {
  std::int32_t weight = 1;  // 1..100
  node_selector_term preference;
};

// Node placement as a pod asks for it (PodSpec tolerations, nodeSelector and
// affinity.nodeAffinity).
struct pod_placement {
  std::vector<toleration> tolerations;
  std::vector<label> node_selector;                   // every pair must be a label of the node
  std::optional<std::vector<node_selector_term>> required;  // requiredDuringScheduling...: any term (absent: none)
  std::vector<preferred_term> preferred;                   // preferredDuringScheduling...
};

// Throws invalid_argument_error naming the field for what Kubernetes' API server refuses (an
// invalid key, In / NotIn without values, Exists / DoesNotExist with values, Gt / Lt without exactly
// one integer, matchFields other than metadata.name In / NotIn with one value, a preferred weight
// outside 1..100, a toleration with an empty key and operator Equal or with a value and Exists).
// `at` prefixes the field ("pod 'p'.placement.").
inline void validate(const pod_placement& pl, const std::string& at) {
  for (std::size_t i = 0; i < pl.tolerations.size(); ++i) {
    const toleration& t = pl.tolerations[i];
    const std::string f = at + "tolerations[" + std::to_string(i) + "].";
    if (!t.key.empty() && !is_valid_label_key(t.key.str())) throw invalid_argument_error(f + "key", "is not a valid key");
    if (t.key.empty() && t.op != toleration_operator::exists) {
      throw invalid_argument_error(f + "operator", "must be Exists when the key is empty");
    }
    if (t.op == toleration_operator::exists && !t.value.empty()) {
      throw invalid_argument_error(f + "value", "must be empty when the operator is Exists");
    }
    if (static_cast<unsigned>(t.op) > static_cast<unsigned>(toleration_operator::exists)) {
      throw invalid_argument_error(f + "operator", "is not a toleration operator");
    }
  }
  for (std::size_t i = 0; i < pl.node_selector.size(); ++i) {
    const std::string f = at + "node_selector[" + std::to_string(i) + "].";
    if (!is_valid_label_key(pl.node_selector[i].key.str())) throw invalid_argument_error(f + "key", "is not a valid label key");
  }
  const auto check_term = [](const node_selector_term& term, const std::string& f) {
    for (std::size_t r = 0; r < term.match_expressions.size(); ++r) {
      const selector_requirement& q = term.match_expressions[r];
      const std::string g = f + "match_expressions[" + std::to_string(r) + "].";
      if (!is_valid_label_key(q.key.str())) {
        throw invalid_argument_error(g + "key", "'" + std::string(q.key.str()) + "' is not a valid label key");
      }
      switch (q.op) {
        case selector_operator::in:
        case selector_operator::not_in:
          if (q.values.empty()) throw invalid_argument_error(g + "values", "must be given for In and NotIn");
          break;
        case selector_operator::exists:
        case selector_operator::does_not_exist:
          if (!q.values.empty()) throw invalid_argument_error(g + "values", "must be empty for Exists and DoesNotExist");
          break;
        case selector_operator::gt:
        case selector_operator::lt:
          if (q.values.size() != 1 || !q.values[0].integer()) {
            throw invalid_argument_error(g + "values", "must be exactly one integer for Gt and Lt");
          }
          break;
        default: throw invalid_argument_error(g + "operator", "is not a node selector operator");
      }
    }
    for (std::size_t r = 0; r < term.match_fields.size(); ++r) {
      const selector_requirement& q = term.match_fields[r];
      const std::string g = f + "match_fields[" + std::to_string(r) + "].";
      if (q.key.str() != "metadata.name") throw invalid_argument_error(g + "key", "only metadata.name is supported");
      if (q.op != selector_operator::in && q.op != selector_operator::not_in) {
        throw invalid_argument_error(g + "operator", "must be In or NotIn for metadata.name");
      }
      if (q.values.size() != 1) throw invalid_argument_error(g + "values", "must be exactly one node name");
    }
  };
  if (pl.required && pl.required->empty()) throw invalid_argument_error(at + "required", "must have at least one term");
  if (pl.required) {
    for (std::size_t i = 0; i < pl.required->size(); ++i) check_term((*pl.required)[i], at + "required[" + std::to_string(i) + "].");
  }
  for (std::size_t i = 0; i < pl.preferred.size(); ++i) {
    const std::string f = at + "preferred[" + std::to_string(i) + "].";
    if (pl.preferred[i].weight < 1 || pl.preferred[i].weight > 100) throw invalid_argument_error(f + "weight", "must be within 1..100");
    check_term(pl.preferred[i].preference, f + "preference.");
  }
}

// What a pod holds: a shared, immutable pod_placement (none, the common case, costs one pointer
// and copies freely). set() validates, and notes once which terms hold a value that is not a valid
// label value (such a term matches no node, as in Kubernetes), so that matching does no string work.
class placement_ref {
 public:
  placement_ref() noexcept = default;
  [[nodiscard]] const pod_placement& get() const noexcept { return p_ ? p_->spec : empty().spec; }
  [[nodiscard]] bool has_value() const noexcept { return p_ != nullptr; }
  [[nodiscard]] bool required_term_usable(std::size_t i) const noexcept { return p_ && p_->required_ok[i] != 0; }
  [[nodiscard]] bool preferred_term_usable(std::size_t i) const noexcept { return p_ && p_->preferred_ok[i] != 0; }
  // Validated (throws invalid_argument_error naming the field and changes nothing).
  void set(pod_placement pl, const std::string& at = "pod.placement.") {
    validate(pl, at);
    auto r = std::make_shared<resolved>();
    if (pl.required) {
      for (const auto& t : *pl.required) r->required_ok.push_back(usable(t) ? 1 : 0);
    }
    for (const auto& t : pl.preferred) r->preferred_ok.push_back(usable(t.preference) ? 1 : 0);
    r->spec = std::move(pl);
    p_ = std::move(r);
  }
  void reset() noexcept { p_.reset(); }

 private:
  struct resolved {
    pod_placement spec;
    std::vector<std::uint8_t> required_ok, preferred_ok;
  };
  static bool usable(const node_selector_term& t) {
    if (t.match_expressions.empty() && t.match_fields.empty()) return false;  // an empty term matches nothing
    for (const auto& q : t.match_expressions) {
      for (const auto& v : q.values) {
        if (!is_valid_label_value(v.str())) return false;
      }
    }
    return true;
  }
  static const resolved& empty() noexcept {
    static const resolved e{};
    return e;
  }
  std::shared_ptr<const resolved> p_;
};

// ---------------------------------------------------------------------------------------------
// The cluster hooks.

namespace adl {
void node_labels() = delete;
void node_taints() = delete;
void node_unschedulable() = delete;
template <class C> auto call_node_labels(const C& c, node_index n) -> decltype(node_labels(c, n)) { return node_labels(c, n); }
template <class C> auto call_node_taints(const C& c, node_index n) -> decltype(node_taints(c, n)) { return node_taints(c, n); }
template <class C> auto call_node_unschedulable(const C& c, node_index n) -> decltype(node_unschedulable(c, n)) { return node_unschedulable(c, n); }
}  // namespace adl

// The argument of every hook near-miss probe (here, core/named_resources.hpp, core/cluster.hpp):
// it converts to any parameter type, so a probe call finds a host function of a hook's name
// whatever its parameters.
namespace probe {
struct any_arg {
  template <class T>
  operator T() const;  // NOLINT(google-explicit-constructor): declared only, used in unevaluated probes
};
}  // namespace probe

// Near-miss detection, as core/cluster.hpp's hook_probe (issue 19): a hook with the right name and a
// wrong signature stops the build with a message naming it, instead of being ignored.
namespace constraint_probe {
using probe::any_arg;
void node_labels() = delete;
void node_taints() = delete;
void node_unschedulable() = delete;
template <class C>
concept named_node_labels = requires(C& c, any_arg a) { node_labels(c, a); } || requires(C& c, any_arg a) { node_labels(c, a, a); } ||
                            requires(C& c) { node_labels(c); };
template <class C>
concept named_node_taints = requires(C& c, any_arg a) { node_taints(c, a); } || requires(C& c, any_arg a) { node_taints(c, a, a); } ||
                            requires(C& c) { node_taints(c); };
template <class C>
concept named_node_unschedulable = requires(C& c, any_arg a) { node_unschedulable(c, a); } ||
                                   requires(C& c, any_arg a) { node_unschedulable(c, a, a); } || requires(C& c) { node_unschedulable(c); };
template <class C>
concept exact_node_labels = requires(const C& c, node_index n) { { node_labels(c, n) } -> std::convertible_to<std::span<const label>>; };
template <class C>
concept exact_node_taints = requires(const C& c, node_index n) { { node_taints(c, n) } -> std::convertible_to<std::span<const node_taint>>; };
template <class C>
concept exact_node_unschedulable = requires(const C& c, node_index n) { { node_unschedulable(c, n) } -> std::convertible_to<bool>; };
}  // namespace constraint_probe

// Specialise to adapt a type without free functions (as cluster_traits).
template <class C>
struct node_constraint_traits {
  static_assert(!(constraint_probe::named_node_labels<C> && !constraint_probe::exact_node_labels<C>),
                "gpusched: hook node_labels(c, n) has the wrong signature; expected "
                "`std::span<const gpusched::label> node_labels(const C&, gpusched::node_index)` (docs/concepts.md, Optional hooks)");
  static_assert(!(constraint_probe::named_node_taints<C> && !constraint_probe::exact_node_taints<C>),
                "gpusched: hook node_taints(c, n) has the wrong signature; expected "
                "`std::span<const gpusched::node_taint> node_taints(const C&, gpusched::node_index)` (docs/concepts.md, Optional hooks)");
  static_assert(!(constraint_probe::named_node_unschedulable<C> && !constraint_probe::exact_node_unschedulable<C>),
                "gpusched: hook node_unschedulable(c, n) has the wrong signature; expected "
                "`bool node_unschedulable(const C&, gpusched::node_index)` (docs/concepts.md, Optional hooks)");
  template <class T = C> static auto node_labels(const T& c, node_index n) -> decltype(adl::call_node_labels(c, n)) { return adl::call_node_labels(c, n); }
  template <class T = C> static auto node_taints(const T& c, node_index n) -> decltype(adl::call_node_taints(c, n)) { return adl::call_node_taints(c, n); }
  template <class T = C> static auto node_unschedulable(const T& c, node_index n) -> decltype(adl::call_node_unschedulable(c, n)) { return adl::call_node_unschedulable(c, n); }
};

template <class C>
using constraint_traits_of = node_constraint_traits<std::remove_cvref_t<C>>;

template <class C>
concept LabelledNodes = requires(const C& c, node_index n) {
  { constraint_traits_of<C>::node_labels(c, n) } -> std::convertible_to<std::span<const label>>;
};
template <class C>
concept TaintedNodes = requires(const C& c, node_index n) {
  { constraint_traits_of<C>::node_taints(c, n) } -> std::convertible_to<std::span<const node_taint>>;
};
template <class C>
concept CordonableNodes = requires(const C& c, node_index n) {
  { constraint_traits_of<C>::node_unschedulable(c, n) } -> std::convertible_to<bool>;
};

// The hooks with their fallbacks.
template <class C>
std::span<const label> labels_of(const C& c, node_index n) {
  if constexpr (LabelledNodes<C>) {
    return constraint_traits_of<C>::node_labels(c, n);
  } else {
    return {};
  }
}
template <class C>
std::span<const node_taint> taints_of(const C& c, node_index n) {
  if constexpr (TaintedNodes<C>) {
    return constraint_traits_of<C>::node_taints(c, n);
  } else {
    return {};
  }
}
template <class C>
bool is_unschedulable(const C& c, node_index n) {
  if constexpr (CordonableNodes<C>) {
    return constraint_traits_of<C>::node_unschedulable(c, n);
  } else {
    return false;
  }
}

}  // namespace gpusched
