// Bound pods: which pods run on which node, with what priority, start time, gang, tier and QoS.
//
// The Cluster concept (core/cluster.hpp) describes resources only. Preemption and eviction also
// need the pods that hold them; a host exposes those through these optional hooks, found by ADL
// (or through a specialisation of bound_pod_traits<C>). For `const C& c`, `node_index n`,
// `pod_id id`, `gang_key g`:
//   PodsOnNodes:
//     bound_pods(c, n)          -> std::span<const bound_pod>   the pods bound on node n
//     bound_pod_spec(c, id)     -> const pod&                   the full pod (for release and reports)
//   GangIndexed (optional; algorithms scan every node when absent):
//     gang_members(c, g)        -> std::span<const pod_id>      every bound member of gang g
//     find_bound_pod(c, id)     -> const bound_pod*             nullptr when id is not bound
//   QosAccounted (optional; overcommit uses it to keep Guaranteed requests within capacity):
//     node_qos_allocation(c, n) -> qos_allocation               CPU / memory requests per QoS class
//
// gpusched::bound_cluster (core/bound_cluster.hpp) models all three over any MutableCluster.
#pragma once

#include <array>
#include <concepts>
#include <cstdint>
#include <span>
#include <string_view>
#include <type_traits>

#include "gpusched/core/binding.hpp"
#include "gpusched/core/cluster.hpp"
#include "gpusched/core/pod.hpp"
#include "gpusched/core/types.hpp"

namespace gpusched {

using pod_id = std::uint32_t;   // a bound pod's handle, unique while it is bound
using gang_key = std::uint32_t;  // a host's interned gang name; no_gang for a pod alone
inline constexpr gang_key no_gang = 0;

// What the algorithms read of a running pod (80 bytes); the rest stays in bound_pod_spec().
struct bound_pod {
  pod_id id = 0;
  gang_key gang = no_gang;
  binding where{};
  double start_time = 0.0;     // seconds, when it was bound
  std::uint64_t key = 0;       // identity that survives re-binding (pod_key(name)): preemption budgets
  std::int32_t priority = 0;   // any int32 (core/types.hpp)
  std::int32_t gang_min_members = 0;
  tier tier_ = tier::dev;
  qos_class qos = qos_class::burstable;
  friend bool operator==(const bound_pod&, const bound_pod&) = default;
};

// FNV-1a, 64 bit (Fowler, Noll, Vo; http://www.isthe.com/chongo/tech/comp/fnv/): a stable key for a
// pod name, so that a workload keeps its history when it is bound again after a preemption.
constexpr std::uint64_t pod_key(std::string_view name) noexcept {
  std::uint64_t h = 14695981039346656037ULL;
  for (char ch : name) {
    h ^= static_cast<std::uint8_t>(ch);
    h *= 1099511628211ULL;
  }
  return h;
}

inline bound_pod make_bound_pod(const pod& p, pod_id id, const binding& b, double start_time, gang_key g) noexcept {
  bound_pod r;
  r.id = id;
  r.gang = g;
  r.where = b;
  r.start_time = start_time;
  r.key = pod_key(p.name);
  r.priority = p.priority;
  r.gang_min_members = p.gang_min_members;
  r.tier_ = p.tier_;
  r.qos = p.qos;
  return r;
}

// CPU and memory requests bound on one node, per QoS class (indexed by qos_class).
struct qos_allocation {
  std::array<milli, 3> cpu{};
  std::array<mib, 3> memory{};

  void add(qos_class q, milli c, mib m, int sign = +1) noexcept {
    cpu[static_cast<std::size_t>(q)] += sign * c;
    memory[static_cast<std::size_t>(q)] += sign * m;
  }
  // Requests of q and of every class more protected than q (Guaranteed < Burstable < BestEffort).
  [[nodiscard]] milli cpu_through(qos_class q) const noexcept {
    milli s = 0;
    for (std::size_t i = 0; i <= static_cast<std::size_t>(q); ++i) s += cpu[i];
    return s;
  }
  [[nodiscard]] mib memory_through(qos_class q) const noexcept {
    mib s = 0;
    for (std::size_t i = 0; i <= static_cast<std::size_t>(q); ++i) s += memory[i];
    return s;
  }
  friend bool operator==(const qos_allocation&, const qos_allocation&) = default;
};

namespace adl {
void bound_pods() = delete;
void bound_pod_spec() = delete;
void gang_members() = delete;
void find_bound_pod() = delete;
void node_qos_allocation() = delete;

template <class C> auto call_bound_pods(const C& c, node_index n) -> decltype(bound_pods(c, n)) { return bound_pods(c, n); }
template <class C> auto call_bound_pod_spec(const C& c, pod_id id) -> decltype(bound_pod_spec(c, id)) { return bound_pod_spec(c, id); }
template <class C> auto call_gang_members(const C& c, gang_key g) -> decltype(gang_members(c, g)) { return gang_members(c, g); }
template <class C> auto call_find_bound_pod(const C& c, pod_id id) -> decltype(find_bound_pod(c, id)) { return find_bound_pod(c, id); }
template <class C> auto call_node_qos_allocation(const C& c, node_index n) -> decltype(node_qos_allocation(c, n)) { return node_qos_allocation(c, n); }
}  // namespace adl

// Specialise to adapt a type without free functions; the primary template forwards to ADL.
template <class C>
struct bound_pod_traits {
  template <class T = C> static auto bound_pods(const T& c, node_index n) -> decltype(adl::call_bound_pods(c, n)) { return adl::call_bound_pods(c, n); }
  template <class T = C> static auto bound_pod_spec(const T& c, pod_id id) -> decltype(adl::call_bound_pod_spec(c, id)) { return adl::call_bound_pod_spec(c, id); }
  template <class T = C> static auto gang_members(const T& c, gang_key g) -> decltype(adl::call_gang_members(c, g)) { return adl::call_gang_members(c, g); }
  template <class T = C> static auto find_bound_pod(const T& c, pod_id id) -> decltype(adl::call_find_bound_pod(c, id)) { return adl::call_find_bound_pod(c, id); }
  template <class T = C> static auto node_qos_allocation(const T& c, node_index n) -> decltype(adl::call_node_qos_allocation(c, n)) { return adl::call_node_qos_allocation(c, n); }
};

template <class C>
using bound_traits_of = bound_pod_traits<std::remove_cvref_t<C>>;

template <class C>
concept PodsOnNodes = Cluster<C> && requires(const C& c, node_index n, pod_id id) {
  { bound_traits_of<C>::bound_pods(c, n) } -> std::convertible_to<std::span<const bound_pod>>;
  { bound_traits_of<C>::bound_pod_spec(c, id) } -> std::convertible_to<const pod&>;
};

template <class C>
concept GangIndexed = PodsOnNodes<C> && requires(const C& c, gang_key g, pod_id id) {
  { bound_traits_of<C>::gang_members(c, g) } -> std::convertible_to<std::span<const pod_id>>;
  { bound_traits_of<C>::find_bound_pod(c, id) } -> std::convertible_to<const bound_pod*>;
};

// The bound pod `id`, expected on `node`: through the cluster's gang index where it has one, else
// by a scan of that node's pods. nullptr when it is not bound (there).
template <PodsOnNodes C>
const bound_pod* find_bound(const C& c, pod_id id, node_index node) {
  if constexpr (GangIndexed<C>) {
    return bound_traits_of<C>::find_bound_pod(c, id);
  } else {
    if (node >= num_nodes(c)) return nullptr;
    for (const bound_pod& bp : bound_traits_of<C>::bound_pods(c, node)) {
      if (bp.id == id) return &bp;
    }
    return nullptr;
  }
}

template <class C>
concept QosAccounted = Cluster<C> && requires(const C& c, node_index n) {
  { bound_traits_of<C>::node_qos_allocation(c, n) } -> std::convertible_to<qos_allocation>;
};

}  // namespace gpusched
