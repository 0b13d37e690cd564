// node_overlay: a dry-run view of a cluster in which the pods of one node may leave and come back
// (the what-if of preemption), without touching the live state.
//
// It models the Cluster concept (and forwards the optional hooks of the cluster it views), so the
// same preflight checks and device selectors run on it unchanged. Only the focused node differs:
// its CPU / memory allocation, its devices' free share and memory, and its per-QoS allocation.
// Measured load and served-model counts are the live ones (a reading cannot be undone).
// The focused node's pod count and named resources (core/named_resources.hpp) follow too, so a
// victim frees its pod slot and its named amounts: a copy of the node's record when it has one (no
// copy, no allocation, when it has none: the common cluster).
// Memory: one node's copy, 2 KiB of devices, about 150 bytes and the named record's scalars; nothing
// per node of the cluster.
#pragma once

#include <array>
#include <cstddef>
#include <limits>
#include <string_view>
#include <type_traits>

#include "gpusched/core/binding.hpp"
#include "gpusched/core/bound_pods.hpp"
#include "gpusched/core/cluster.hpp"
#include "gpusched/core/named_resources.hpp"
#include "gpusched/core/node.hpp"

namespace gpusched {

template <Cluster C>
class node_overlay {
  using base_gpu = decltype(traits_of<C>::node_gpu(std::declval<const C&>(), node_index{}, 0));

 public:
  // Devices are returned by reference when the viewed cluster does so, else by value.
  using gpu_ref = std::conditional_t<std::is_lvalue_reference_v<base_gpu>, const gpu_device&, gpu_device>;
  static constexpr node_index none = std::numeric_limits<node_index>::max();

  explicit node_overlay(const C& base) noexcept : base_(&base) {}

  [[nodiscard]] const C& base() const noexcept { return *base_; }
  [[nodiscard]] node_index focused() const noexcept { return node_; }

  // Starts a what-if on node n from its live state.
  void focus(node_index n) {
    node_ = n;
    res_ = traits_of<C>::node_resources(*base_, n);
    for (int g = 0; g < res_.gpu_count; ++g) gpus_[static_cast<std::size_t>(g)] = traits_of<C>::node_gpu(*base_, n, g);
    if constexpr (QosAccounted<C>) qos_ = bound_traits_of<C>::node_qos_allocation(*base_, n);
    has_named_ = false;
    if constexpr (NamedResources<C>) {
      if (const named_resources_state* s = named_resources_of(*base_, n)) {
        named_ = *s;  // reuses the copy's storage from the last focus
        has_named_ = true;
      }
    }
  }

  // A pod bound on the focused node leaves (its resources come free) or comes back.
  void remove(const bound_pod& v) noexcept { apply(v, -1); }
  void add_back(const bound_pod& v) noexcept { apply(v, +1); }

  [[nodiscard]] node_state resources(node_index n) const {
    return n == node_ ? res_ : node_state(traits_of<C>::node_resources(*base_, n));
  }
  [[nodiscard]] gpu_ref gpu(node_index n, int g) const {
    if (n == node_) return gpus_[static_cast<std::size_t>(g)];
    return traits_of<C>::node_gpu(*base_, n, g);
  }
  [[nodiscard]] qos_allocation qos(node_index n) const
    requires QosAccounted<C>
  {
    return n == node_ ? qos_ : qos_allocation(bound_traits_of<C>::node_qos_allocation(*base_, n));
  }
  [[nodiscard]] const named_resources_state* named(node_index n) const
    requires NamedResources<C>
  {
    if (n == node_) return has_named_ ? &named_ : nullptr;
    return named_resources_of(*base_, n);
  }

 private:
  void apply(const bound_pod& v, int sign) noexcept {
    const binding& b = v.where;
    if (b.node != node_) return;
    res_.cpu_allocated += sign * b.cpu_milli;
    res_.mem_allocated += sign * b.memory_mib;
    for_each_gpu(b.gpus, [&](int g) {
      gpus_[static_cast<std::size_t>(g)].milli_free -= sign * b.gpu_milli;
      gpus_[static_cast<std::size_t>(g)].mem_free_mib -= sign * b.gpu_mem_mib;
    });
    qos_.add(v.qos, b.cpu_milli, b.memory_mib, sign);
    if (has_named_) apply_named(v, sign);
  }

  // As in_memory_cluster's record: the pod counts against `pods`, against the non-zero request
  // defaults when it requests no CPU / memory, and its named amounts against the node's.
  void apply_named(const bound_pod& v, int sign) noexcept {
    if (named_.allowed_pods != no_pod_limit) named_.pod_count += sign;
    if (v.where.cpu_milli == 0) named_.zero_cpu_pods += sign;
    if (v.where.memory_mib == 0) named_.zero_memory_pods += sign;
    if constexpr (PodsOnNodes<C>) {
      for (const named_quantity& q : bound_traits_of<C>::bound_pod_spec(*base_, v.id).scalars) {
        for (auto& slot : named_.scalars) {
          if (slot.name == q.name) slot.requested += sign * q.amount;
        }
      }
    }
  }

  const C* base_;
  node_index node_ = none;
  node_state res_{};
  qos_allocation qos_{};
  std::array<gpu_device, max_gpus_per_node> gpus_{};
  bool has_named_ = false;
  named_resources_state named_{};  // the focused node's record, when it has one
};

template <class C>
std::size_t node_count(const node_overlay<C>& o) { return num_nodes(o.base()); }
template <class C>
node_state node_resources(const node_overlay<C>& o, node_index n) { return o.resources(n); }
template <class C>
typename node_overlay<C>::gpu_ref node_gpu(const node_overlay<C>& o, node_index n, int g) { return o.gpu(n, g); }
template <NamedNodes C>
std::string_view node_name(const node_overlay<C>& o, node_index n) { return traits_of<C>::node_name(o.base(), n); }
template <MeasuredLoad C>
const node_metrics* node_load(const node_overlay<C>& o, node_index n) { return traits_of<C>::node_load(o.base(), n); }
template <ServedModels C>
int model_replicas(const node_overlay<C>& o, node_index n, const short_name& m) {
  return traits_of<C>::model_replicas(o.base(), n, m);
}
template <ServedModels C>
decltype(auto) node_model_types(const node_overlay<C>& o, node_index n) { return traits_of<C>::node_model_types(o.base(), n); }
template <QosAccounted C>
qos_allocation node_qos_allocation(const node_overlay<C>& o, node_index n) { return o.qos(n); }
// The base's pod limits and named resources, the focused node's with its victims removed.
template <NamedResources C>
const named_resources_state* node_named_resources(const node_overlay<C>& o, node_index n) {
  return o.named(n);
}

}  // namespace gpusched
