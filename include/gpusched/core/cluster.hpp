// The Cluster concept: how gpusched reads (and, for MutableCluster, changes) a host's inventory.
//
// A host adapts its own structures without copying them, either with free functions found by ADL
// (as Boost.Graph's num_vertices(g)) or by specialising gpusched::cluster_traits<C>. Required, for
// `const C& c`, `node_index n`, `int g`:
//   node_count(c)            -> std::size_t               number of nodes
//   node_resources(c, n)     -> node_state                CPU / memory capacity and allocation, GPU count
//   node_gpu(c, n, g)        -> gpu_device (or const&)    device g of node n, 0 <= g < gpu_count
// Optional (detected; algorithms fall back when absent):
//   node_name(c, n)          -> std::string_view          used in explanations
//   node_load(c, n)          -> const node_metrics*       measured load, nullptr when unknown
//   model_replicas(c, n, m)  -> int                       pods of model type m on node n
//   node_model_types(c, n)   -> range of {short_name model; int replicas}
//   node_named_resources(c, n) -> const named_resources_state*  pod limit, named resources (core/named_resources.hpp)
// MutableCluster adds, for `C& c`, `const pod& p`, `const binding& b`:
//   reserve(c, p, b)   take b's resources; throws and changes nothing if b does not fit the devices
//   release(c, p, b)   give back exactly what reserve(c, p, b) took
#pragma once

#include <concepts>
#include <cstddef>
#include <string>
#include <string_view>
#include <type_traits>

#include "gpusched/core/binding.hpp"
#include "gpusched/core/node.hpp"
#include "gpusched/core/pod.hpp"
#include "gpusched/core/short_name.hpp"
#include "gpusched/core/types.hpp"

namespace gpusched {

// A node's CPU and memory as the scheduler sees them. Allocated may exceed capacity only under an
// overcommit ceiling.
struct node_state {
  milli cpu_capacity = 0;
  milli cpu_allocated = 0;
  mib mem_capacity = 0;
  mib mem_allocated = 0;
  int gpu_count = 0;
  friend bool operator==(const node_state&, const node_state&) = default;
};

namespace adl {
// Poison pills: only ADL-found overloads are candidates (the std::ranges customisation idiom).
void node_count() = delete;
void node_resources() = delete;
void node_gpu() = delete;
void node_name() = delete;
void node_load() = delete;
void model_replicas() = delete;
void node_model_types() = delete;
void reserve() = delete;
void release() = delete;

// Trailing decltype return types keep a missing overload a substitution failure, so the optional
// hooks below can be detected.
template <class C> auto call_node_count(const C& c) -> decltype(node_count(c)) { return node_count(c); }
template <class C> auto call_node_resources(const C& c, node_index n) -> decltype(node_resources(c, n)) { return node_resources(c, n); }
template <class C> auto call_node_gpu(const C& c, node_index n, int g) -> decltype(node_gpu(c, n, g)) { return node_gpu(c, n, g); }
template <class C> auto call_node_name(const C& c, node_index n) -> decltype(node_name(c, n)) { return node_name(c, n); }
template <class C> auto call_node_load(const C& c, node_index n) -> decltype(node_load(c, n)) { return node_load(c, n); }
template <class C> auto call_model_replicas(const C& c, node_index n, const short_name& m) -> decltype(model_replicas(c, n, m)) { return model_replicas(c, n, m); }
template <class C> auto call_node_model_types(const C& c, node_index n) -> decltype(node_model_types(c, n)) { return node_model_types(c, n); }
template <class C> auto call_reserve(C& c, const pod& p, const binding& b) -> decltype(reserve(c, p, b)) { return reserve(c, p, b); }
template <class C> auto call_release(C& c, const pod& p, const binding& b) -> decltype(release(c, p, b)) { return release(c, p, b); }
}  // namespace adl

// Near-miss detection (issue 19): a host hook with the right name and a wrong signature would
// otherwise be ignored silently (the optional hooks are detected). `any_arg` converts to any
// parameter type, so a probe call finds a function of that name for C whatever its parameters;
// when the probe succeeds and the exact call does not, cluster_traits<C> stops the build with a
// static_assert naming the hook, the expected signature and docs/concepts.md.
namespace hook_probe {
using probe::any_arg;  // core/node_constraints.hpp
void node_name() = delete;
void node_load() = delete;
void model_replicas() = delete;
void node_model_types() = delete;
void node_rack() = delete;
// A function of this name found by ADL for C, with 1 to 4 parameters of any type.
#define GPUSCHED_HOOK_NAMED(hook)                                                              \
  template <class C>                                                                            \
  concept named_##hook = requires(C& c, any_arg a) { hook(c, a); } ||                           \
                         requires(C& c, any_arg a) { hook(c, a, a); } ||                        \
                         requires(C& c, any_arg a) { hook(c, a, a, a); } || requires(C& c) { hook(c); }
GPUSCHED_HOOK_NAMED(node_name);
GPUSCHED_HOOK_NAMED(node_load);
GPUSCHED_HOOK_NAMED(model_replicas);
GPUSCHED_HOOK_NAMED(node_model_types);
GPUSCHED_HOOK_NAMED(node_rack);
#undef GPUSCHED_HOOK_NAMED
// The exact forms (the optional-hook concepts below, spelled on the ADL call).
template <class C>
concept exact_node_name = requires(const C& c, node_index n) { { node_name(c, n) } -> std::convertible_to<std::string_view>; };
template <class C>
concept exact_node_load = requires(const C& c, node_index n) { { node_load(c, n) } -> std::convertible_to<const node_metrics*>; };
template <class C>
concept exact_model_replicas = requires(const C& c, node_index n, const short_name& m) {
  { model_replicas(c, n, m) } -> std::convertible_to<int>;
};
template <class C>
concept exact_node_model_types = requires(const C& c, node_index n) { node_model_types(c, n); };
template <class C>
concept exact_node_rack = requires(const C& c, node_index n) { { node_rack(c, n) } -> std::convertible_to<std::string_view>; };

template <class C>
inline constexpr bool near_miss_node_name = named_node_name<C> && !exact_node_name<C>;
template <class C>
inline constexpr bool near_miss_node_load = named_node_load<C> && !exact_node_load<C>;
template <class C>
inline constexpr bool near_miss_model_replicas = named_model_replicas<C> && !exact_model_replicas<C>;
template <class C>
inline constexpr bool near_miss_node_model_types = named_node_model_types<C> && !exact_node_model_types<C>;
template <class C>
inline constexpr bool near_miss_node_rack = named_node_rack<C> && !exact_node_rack<C>;
}  // namespace hook_probe

// Specialise cluster_traits<C> to adapt a type without free functions; the primary template
// forwards to the ADL free functions. A specialisation provides the same static members.
template <class C>
struct cluster_traits {
  static_assert(!hook_probe::near_miss_node_name<C>,
                "gpusched: hook node_name(c, n) has the wrong signature; expected "
                "`std::string_view node_name(const C&, gpusched::node_index)` (docs/concepts.md, Optional hooks)");
  static_assert(!hook_probe::near_miss_node_load<C>,
                "gpusched: hook node_load(c, n) has the wrong signature; expected "
                "`const gpusched::node_metrics* node_load(const C&, gpusched::node_index)` (docs/concepts.md, Optional hooks)");
  static_assert(!hook_probe::near_miss_model_replicas<C>,
                "gpusched: hook model_replicas(c, n, m) has the wrong signature; expected "
                "`int model_replicas(const C&, gpusched::node_index, const gpusched::short_name&)` (docs/concepts.md, Optional hooks)");
  static_assert(!hook_probe::near_miss_node_model_types<C>,
                "gpusched: hook node_model_types(c, n) has the wrong signature; expected "
                "`node_model_types(const C&, gpusched::node_index)` returning a range of {short_name model; int replicas} "
                "(docs/concepts.md, Optional hooks)");
  static_assert(!hook_probe::near_miss_node_rack<C>,
                "gpusched: hook node_rack(c, n) has the wrong signature; expected "
                "`std::string_view node_rack(const C&, gpusched::node_index)` (docs/concepts.md, Optional hooks)");
  template <class T = C> static auto node_count(const T& c) -> decltype(adl::call_node_count(c)) { return adl::call_node_count(c); }
  template <class T = C> static auto node_resources(const T& c, node_index n) -> decltype(adl::call_node_resources(c, n)) { return adl::call_node_resources(c, n); }
  template <class T = C> static auto node_gpu(const T& c, node_index n, int g) -> decltype(adl::call_node_gpu(c, n, g)) { return adl::call_node_gpu(c, n, g); }
  template <class T = C> static auto node_name(const T& c, node_index n) -> decltype(adl::call_node_name(c, n)) { return adl::call_node_name(c, n); }
  template <class T = C> static auto node_load(const T& c, node_index n) -> decltype(adl::call_node_load(c, n)) { return adl::call_node_load(c, n); }
  template <class T = C> static auto model_replicas(const T& c, node_index n, const short_name& m) -> decltype(adl::call_model_replicas(c, n, m)) { return adl::call_model_replicas(c, n, m); }
  template <class T = C> static auto node_model_types(const T& c, node_index n) -> decltype(adl::call_node_model_types(c, n)) { return adl::call_node_model_types(c, n); }
  template <class T = C> static auto reserve(T& c, const pod& p, const binding& b) -> decltype(adl::call_reserve(c, p, b)) { return adl::call_reserve(c, p, b); }
  template <class T = C> static auto release(T& c, const pod& p, const binding& b) -> decltype(adl::call_release(c, p, b)) { return adl::call_release(c, p, b); }
};

template <class C>
using traits_of = cluster_traits<std::remove_cvref_t<C>>;

// Read access to nodes, their CPU / memory and their GPU devices.
template <class C>
concept Cluster = requires(const C& c, node_index n, int g) {
  { traits_of<C>::node_count(c) } -> std::convertible_to<std::size_t>;
  { traits_of<C>::node_resources(c, n) } -> std::convertible_to<node_state>;
  { traits_of<C>::node_gpu(c, n, g) } -> std::convertible_to<gpu_device>;
};

// A Cluster whose resources gpusched may reserve and release on concrete GPU indices.
template <class C>
concept MutableCluster = Cluster<C> && requires(C& c, const pod& p, const binding& b) {
  traits_of<C>::reserve(c, p, b);
  traits_of<C>::release(c, p, b);
};

// Optional hooks, detected and used under if constexpr.
template <class C>
concept NamedNodes = requires(const C& c, node_index n) {
  { traits_of<C>::node_name(c, n) } -> std::convertible_to<std::string_view>;
};
template <class C>
concept MeasuredLoad = requires(const C& c, node_index n) {
  { traits_of<C>::node_load(c, n) } -> std::convertible_to<const node_metrics*>;
};
template <class C>
concept ServedModels = requires(const C& c, node_index n, const short_name& m) {
  { traits_of<C>::model_replicas(c, n, m) } -> std::convertible_to<int>;
  traits_of<C>::node_model_types(c, n);
};

// The Cluster concept's requirements one by one, each with a readable message, for the entry
// points (scheduler, schedule_one's callers) to static_assert instead of a constraint dump:
//   static_assert(gpusched::require_cluster<C>());
template <class C>
consteval bool require_cluster() {
  static_assert(requires(const C& c) { { traits_of<C>::node_count(c) } -> std::convertible_to<std::size_t>; },
                "gpusched: the cluster type has no hook `std::size_t node_count(const C&)` (a free function next to "
                "the type, found by ADL, or a cluster_traits<C> specialisation; docs/concepts.md, Cluster)");
  static_assert(requires(const C& c, node_index n) { { traits_of<C>::node_resources(c, n) } -> std::convertible_to<node_state>; },
                "gpusched: the cluster type has no hook `gpusched::node_state node_resources(const C&, "
                "gpusched::node_index)` (docs/concepts.md, Cluster)");
  static_assert(requires(const C& c, node_index n, int g) { { traits_of<C>::node_gpu(c, n, g) } -> std::convertible_to<gpu_device>; },
                "gpusched: the cluster type has no hook `gpusched::gpu_device node_gpu(const C&, gpusched::node_index, "
                "int)` (docs/concepts.md, Cluster)");
  return Cluster<C>;
}

// MutableCluster's extra requirements, as require_cluster.
template <class C>
consteval bool require_mutable_cluster() {
  static_assert(require_cluster<C>());
  static_assert(requires(C& c, const pod& p, const binding& b) { traits_of<C>::reserve(c, p, b); },
                "gpusched: this needs a MutableCluster: no hook `reserve(C&, const gpusched::pod&, const "
                "gpusched::binding&)` (docs/concepts.md, MutableCluster)");
  static_assert(requires(C& c, const pod& p, const binding& b) { traits_of<C>::release(c, p, b); },
                "gpusched: this needs a MutableCluster: no hook `release(C&, const gpusched::pod&, const "
                "gpusched::binding&)` (docs/concepts.md, MutableCluster)");
  return MutableCluster<C>;
}

// Convenience accessors used by the algorithms.
template <Cluster C>
std::size_t num_nodes(const C& c) { return traits_of<C>::node_count(c); }

template <Cluster C>
std::string node_label(const C& c, node_index n) {
  if constexpr (NamedNodes<C>) {
    return std::string(traits_of<C>::node_name(c, n));
  } else {
    return "node#" + std::to_string(n);
  }
}

}  // namespace gpusched
