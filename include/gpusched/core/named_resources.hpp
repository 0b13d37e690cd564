// Resources by name (docs/adr/0015-resources-by-name.md): a node's allocatable pod count and any
// number of named scalar resources ("example.com/foo", "hugepages-2Mi", "ephemeral-storage"), what
// Kubernetes' NodeResourcesFit filters and scores beside cpu and memory.
//
// Names are interned once, when a node or a pod is set up (resource_name), and compared as one
// pointer on the hot path. GPUs are not named resources: they stay devices (core/node.hpp).
//
// The optional cluster hook (detected; a cluster without it has no pod limit and no named
// resources, and keeps its layout and speed), as an ADL free function or by specialising
// named_resource_traits<C>, for `const C& c`, `node_index n`:
//   node_named_resources(c, n) -> const named_resources_state*   nullptr: no pod limit, no named resource
// in_memory_cluster implements it from node_spec::pods and node_spec::scalars.
#pragma once

#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "gpusched/core/error.hpp"
#include "gpusched/core/node_constraints.hpp"
#include "gpusched/core/types.hpp"

namespace gpusched {

// The names that are not named scalar resources: cpu, memory and pods have their own fields, and
// nvidia.com/gpu is the GPU devices.
inline bool is_reserved_resource_name(std::string_view s) noexcept {
  return s == "cpu" || s == "memory" || s == "pods" || s == "nvidia.com/gpu";
}

// A resource name, any length, interned. Kubernetes' resource names are qualified names
// (k8s.io/api/core/v1 ResourceName; apimachinery IsQualifiedName), the syntax of label keys.
class resource_name {
 public:
  resource_name() noexcept = default;
  // Throws invalid_argument_error naming `field` for a name that is not a qualified name or that
  // has its own field (cpu, memory, pods, nvidia.com/gpu).
  explicit resource_name(std::string_view s, const std::string& field = "resource") {
    if (!is_valid_label_key(s)) {
      throw invalid_argument_error(field, "'" + std::string(s.substr(0, 80)) + "' is not a valid resource name");
    }
    if (is_reserved_resource_name(s)) {
      throw invalid_argument_error(field, "'" + std::string(s) +
                                              "' has its own field (cpu_milli, memory_mib, pods, GPU devices), not a named resource");
    }
    n_ = label_name(s);
  }
  [[nodiscard]] std::string_view str() const noexcept { return n_.str(); }
  [[nodiscard]] bool empty() const noexcept { return n_.empty(); }
  friend bool operator==(resource_name a, resource_name b) noexcept { return a.n_ == b.n_; }

 private:
  label_name n_;
};

// Kubernetes' IsScalarResourceName (pkg/scheduler/util, v1helper): every named resource but
// ephemeral-storage, which Kubernetes keeps as a native resource. The scorers skip a scalar the pod
// does not request and score ephemeral-storage always (noderesources/resource_allocation.go,
// calculateResourceAllocatableRequest).
inline bool is_scalar_resource(resource_name r) noexcept { return r.str() != "ephemeral-storage"; }

// An amount of a named resource, in the resource's own unit (bytes for hugepages and
// ephemeral-storage, counts for extended resources; Kubernetes' Quantity.Value()).
struct named_quantity {
  resource_name name;
  std::int64_t amount = 0;
  friend bool operator==(const named_quantity&, const named_quantity&) = default;
};

// node_spec::pods when the node has no pod limit.
inline constexpr std::int64_t no_pod_limit = -1;

// What the hook reports for one node.
struct named_resources_state {
  std::int64_t allowed_pods = no_pod_limit;  // Kubernetes' Allocatable.AllowedPodNumber; no_pod_limit: none
  std::int64_t pod_count = 0;                // pods on the node (counted where allowed_pods is set)
  // Pods on the node that request no CPU / no memory, for Kubernetes' NonZeroRequested (the scorers'
  // non-zero request defaults, scoring/resource_usage.hpp); counted since the record exists.
  std::int64_t zero_cpu_pods = 0;
  std::int64_t zero_memory_pods = 0;
  struct scalar {
    resource_name name;
    std::int64_t allocatable = 0;
    std::int64_t requested = 0;  // by the pods on the node
    friend bool operator==(const scalar&, const scalar&) = default;
  };
  std::vector<scalar> scalars;  // unique names

  [[nodiscard]] const scalar* find(resource_name r) const noexcept {
    for (const scalar& s : scalars) {
      if (s.name == r) return &s;
    }
    return nullptr;
  }
  // fit.go: len(nodeInfo.Pods)+1 > allowedPodNumber.
  [[nodiscard]] bool too_many_pods() const noexcept { return allowed_pods != no_pod_limit && pod_count + 1 > allowed_pods; }
  // A pod bound (sign +1) or released (-1): it counts against `pods`, against the non-zero request
  // defaults when it requests no CPU / memory, and its named amounts against the node's. Pod is
  // gpusched::pod (a template only because core/pod.hpp includes this header).
  template <class Pod>
  void count(const Pod& p, int sign) noexcept {
    if (allowed_pods != no_pod_limit) pod_count += sign;
    if (p.cpu_milli == 0) zero_cpu_pods += sign;
    if (p.memory_mib == 0) zero_memory_pods += sign;
    for (const named_quantity& q : p.scalars) {
      for (scalar& slot : scalars) {
        if (slot.name == q.name) slot.requested += sign * q.amount;
      }
    }
  }
  friend bool operator==(const named_resources_state&, const named_resources_state&) = default;
};

// Throws invalid_argument_error naming the field (at() + "scalars[1].amount") for an amount outside
// 0..2^50 or a name given twice. Allocates nothing when the list is valid: at() (the owner's field
// prefix, "pod 'p'.") is called only to build the error.
template <class At>
void validate_named(const std::vector<named_quantity>& qs, At&& at_fn) {
  const auto fail = [&](std::size_t i, const char* field, const std::string& why) {
    throw invalid_argument_error(at_fn() + "scalars[" + std::to_string(i) + "]." + field, why);
  };
  for (std::size_t i = 0; i < qs.size(); ++i) {
    if (qs[i].name.empty()) fail(i, "name", "must not be empty");
    if (qs[i].amount < 0 || qs[i].amount > max_quantity) fail(i, "amount", "must be within 0..2^50");
    for (std::size_t j = 0; j < i; ++j) {
      if (qs[j].name == qs[i].name) fail(i, "name", "'" + std::string(qs[i].name.str()) + "' is given twice");
    }
  }
}

namespace adl {
void node_named_resources() = delete;
template <class C>
auto call_node_named_resources(const C& c, node_index n) -> decltype(node_named_resources(c, n)) {
  return node_named_resources(c, n);
}
}  // namespace adl

namespace named_probe {
using probe::any_arg;  // core/node_constraints.hpp
void node_named_resources() = delete;
template <class C>
concept named = requires(C& c, any_arg a) { node_named_resources(c, a); } ||
                requires(C& c, any_arg a) { node_named_resources(c, a, a); } || requires(C& c) { node_named_resources(c); };
template <class C>
concept exact = requires(const C& c, node_index n) {
  { node_named_resources(c, n) } -> std::convertible_to<const named_resources_state*>;
};
}  // namespace named_probe

// Specialise to adapt a type without free functions (as cluster_traits).
template <class C>
struct named_resource_traits {
  static_assert(!(named_probe::named<C> && !named_probe::exact<C>),
                "gpusched: hook node_named_resources(c, n) has the wrong signature; expected "
                "`const gpusched::named_resources_state* node_named_resources(const C&, gpusched::node_index)` "
                "(docs/concepts.md, Optional hooks)");
  template <class T = C>
  static auto node_named_resources(const T& c, node_index n) -> decltype(adl::call_node_named_resources(c, n)) {
    return adl::call_node_named_resources(c, n);
  }
};

template <class C>
concept NamedResources = requires(const C& c, node_index n) {
  { named_resource_traits<std::remove_cvref_t<C>>::node_named_resources(c, n) } -> std::convertible_to<const named_resources_state*>;
};

// The hook with its fallback (nullptr: no pod limit, no named resources).
template <class C>
const named_resources_state* named_resources_of(const C& c, node_index n) {
  if constexpr (NamedResources<C>) {
    return named_resource_traits<std::remove_cvref_t<C>>::node_named_resources(c, n);
  } else {
    return nullptr;
  }
}

}  // namespace gpusched
