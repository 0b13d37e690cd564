// cluster_overlay: a what-if view of a cluster. Reservations and releases change only the overlay,
// never the live state, so "would this gang fit if these pods left?" can run the very placement code
// that would run for real.
//
// It models MutableCluster and forwards the optional hooks of the base (names, racks, measured load,
// served models). Served-model counts and measured load are the base's: a what-if release does not
// lower them, which makes the what-if answer at most as optimistic as the live one.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/core/binding.hpp"
#include "gpusched/core/cluster.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/core/named_resources.hpp"
#include "gpusched/core/pod.hpp"
#include "gpusched/gang/rack.hpp"

namespace gpusched {

// Memory: 4 bytes per node of the base (allocated on the first change) plus about 600 bytes per node
// the overlay changed, and a copy of the node's named-resources record (core/named_resources.hpp)
// for a node that has one: pods reserved or released in the overlay count against its `pods` and
// named resources. reset() forgets the changes and keeps the storage.
template <Cluster C>
class cluster_overlay {
 public:
  explicit cluster_overlay(const C& base) : base_(&base) {}

  [[nodiscard]] const C& base() const noexcept { return *base_; }
  [[nodiscard]] std::size_t changed_nodes() const noexcept { return used_; }

  void reset() noexcept {
    for (std::size_t i = 0; i < used_; ++i) slot_[deltas_[i].node] = -1;
    used_ = 0;
  }

  [[nodiscard]] node_state resources(node_index n) const {
    node_state r = traits_of<C>::node_resources(*base_, n);
    if (const delta* d = find(n)) {
      r.cpu_allocated += d->cpu;
      r.mem_allocated += d->mem;
    }
    return r;
  }

  [[nodiscard]] gpu_device gpu(node_index n, int g) const {
    gpu_device dev = traits_of<C>::node_gpu(*base_, n, g);
    if (const delta* d = find(n)) {
      dev.milli_free -= d->share[static_cast<std::size_t>(g)];
      dev.mem_free_mib -= d->gpu_mem[static_cast<std::size_t>(g)];
    }
    return dev;
  }

  // Takes b's resources in the overlay. As in_memory_cluster, a GPU share is never overcommitted and
  // allocations stay within max_quantity: throws (and changes nothing) otherwise. GPU memory is the
  // selectors' business here (the overlay does not know the base's overcommit ceiling).
  void reserve(const pod& p, const binding& b) {
    check(b);
    const node_state r = resources(b.node);
    if (b.cpu_milli > max_quantity - r.cpu_allocated) {
      throw invalid_argument_error("binding.cpu_milli", "would take node #" + std::to_string(b.node) + "'s allocated CPU beyond 2^50");
    }
    if (b.memory_mib > max_quantity - r.mem_allocated) {
      throw invalid_argument_error("binding.memory_mib", "would take node #" + std::to_string(b.node) + "'s allocated memory beyond 2^50");
    }
    for_each_gpu(b.gpus, [&](int g) {
      if (gpu(b.node, g).milli_free < b.gpu_milli) {
        throw invalid_argument_error("binding.gpus", "GPU " + std::to_string(g) + " of node #" + std::to_string(b.node) +
                                                         " has less free share than " + std::to_string(b.gpu_milli));
      }
    });
    if (const named_resources_state* s = named(b.node)) {
      for (const named_quantity& q : p.scalars) {
        const auto* slot = s->find(q.name);
        if (slot != nullptr && q.amount > max_quantity - slot->requested) {
          throw invalid_argument_error("pod '" + p.name + "'.scalars", "would take node #" + std::to_string(b.node) + "'s requested " +
                                                                         std::string(q.name.str()) + " beyond 2^50");
        }
      }
    }
    apply(p, b, +1);
  }

  // Gives back b's resources in the overlay (a victim leaving, or a what-if reservation undone).
  // Throws (and changes nothing) when that would leave a negative allocation or a device with more
  // than a whole GPU or more than its memory free: b is not held.
  void release(const pod& p, const binding& b) {
    check(b);
    const node_state r = resources(b.node);
    if (b.cpu_milli > r.cpu_allocated) {
      throw invalid_argument_error("binding.cpu_milli", "gives back more CPU than node #" + std::to_string(b.node) + " has allocated");
    }
    if (b.memory_mib > r.mem_allocated) {
      throw invalid_argument_error("binding.memory_mib", "gives back more memory than node #" + std::to_string(b.node) + " has allocated");
    }
    for_each_gpu(b.gpus, [&](int g) {
      const gpu_device d = gpu(b.node, g);
      if (d.milli_free + b.gpu_milli > gpu_milli_whole) {
        throw invalid_argument_error("binding.gpus", "GPU " + std::to_string(g) + " of node #" + std::to_string(b.node) +
                                                         " would have more than a whole GPU free");
      }
      if (std::int64_t{d.mem_free_mib} + b.gpu_mem_mib > d.mem_total_mib) {
        throw invalid_argument_error("binding.gpu_mem_mib", "GPU " + std::to_string(g) + " of node #" + std::to_string(b.node) +
                                                                " would have more than its memory free");
      }
    });
    if (const named_resources_state* s = named(b.node)) {
      if (s->allowed_pods != no_pod_limit && s->pod_count == 0) {
        throw invalid_argument_error("binding.node", "node #" + std::to_string(b.node) + " has no pod to release");
      }
      for (const named_quantity& q : p.scalars) {
        const auto* slot = s->find(q.name);
        if (slot != nullptr && slot->requested < q.amount) {
          throw invalid_argument_error("pod '" + p.name + "'.scalars", "gives back more " + std::string(q.name.str()) + " than node #" +
                                                                         std::to_string(b.node) + " has requested");
        }
      }
    }
    apply(p, b, -1);
  }

  // The base's pod limit and named resources of node n with the overlay's changes; nullptr when the
  // node has neither.
  [[nodiscard]] const named_resources_state* named(node_index n) const {
    if constexpr (NamedResources<C>) {
      if (const delta* d = find(n)) return d->has_named ? &d->named : nullptr;
      return named_resources_of(*base_, n);
    } else {
      return nullptr;
    }
  }

  friend std::size_t node_count(const cluster_overlay& o) { return num_nodes(*o.base_); }
  friend node_state node_resources(const cluster_overlay& o, node_index n) { return o.resources(n); }
  friend gpu_device node_gpu(const cluster_overlay& o, node_index n, int g) { return o.gpu(n, g); }
  friend void reserve(cluster_overlay& o, const pod& p, const binding& b) { o.reserve(p, b); }
  friend void release(cluster_overlay& o, const pod& p, const binding& b) { o.release(p, b); }
  friend decltype(auto) node_name(const cluster_overlay& o, node_index n)
    requires NamedNodes<C>
  {
    return traits_of<C>::node_name(*o.base_, n);
  }
  friend decltype(auto) node_load(const cluster_overlay& o, node_index n)
    requires MeasuredLoad<C>
  {
    return traits_of<C>::node_load(*o.base_, n);
  }
  // The base's pod limits and named resources, with the pods reserved and released in the overlay.
  friend const named_resources_state* node_named_resources(const cluster_overlay& o, node_index n)
    requires NamedResources<C>
  {
    return o.named(n);
  }
  friend decltype(auto) model_replicas(const cluster_overlay& o, node_index n, const short_name& m)
    requires ServedModels<C>
  {
    return traits_of<C>::model_replicas(*o.base_, n, m);
  }
  friend decltype(auto) node_model_types(const cluster_overlay& o, node_index n)
    requires ServedModels<C>
  {
    return traits_of<C>::node_model_types(*o.base_, n);
  }
  friend decltype(auto) node_rack(const cluster_overlay& o, node_index n)
    requires RackedNodes<C>
  {
    return rack_adl::call_node_rack(*o.base_, n);
  }

 private:
  struct delta {
    node_index node = 0;
    milli cpu = 0;
    mib mem = 0;
    std::array<std::int32_t, max_gpus_per_node> share{};
    std::array<std::int32_t, max_gpus_per_node> gpu_mem{};
    bool has_named = false;
    named_resources_state named{};  // the base's record with the changes, when the node has one
  };

  const delta* find(node_index n) const noexcept {
    if (n >= slot_.size() || slot_[n] < 0) return nullptr;
    return &deltas_[static_cast<std::size_t>(slot_[n])];
  }

  void check(const binding& b) const {
    const std::size_t n = num_nodes(*base_);
    if (b.node >= n) throw invalid_argument_error("binding.node", "node index " + std::to_string(b.node) + " out of range");
    const int count = traits_of<C>::node_resources(*base_, b.node).gpu_count;
    if (count < 64 && (b.gpus >> count) != 0) throw invalid_argument_error("binding.gpus", "names a GPU index the node does not have");
    if (b.gpu_milli < 0 || b.gpu_milli > gpu_milli_whole) throw invalid_argument_error("binding.gpu_milli", "must be within 0..1000");
    if (b.cpu_milli < 0 || b.cpu_milli > max_quantity) throw invalid_argument_error("binding.cpu_milli", "must be within 0..2^50");
    if (b.memory_mib < 0 || b.memory_mib > max_quantity) throw invalid_argument_error("binding.memory_mib", "must be within 0..2^50");
    if (b.gpu_mem_mib < 0) throw invalid_argument_error("binding.gpu_mem_mib", "must be >= 0");
  }

  // Allocation happens here, before any change, so a failed allocation leaves the overlay as it was.
  delta& slot_for(node_index n) {
    if (slot_.empty()) slot_.assign(num_nodes(*base_), -1);
    if (slot_[n] < 0) {
      if (used_ == deltas_.size()) deltas_.emplace_back();
      delta& d = deltas_[used_];
      d.node = n;
      d.cpu = 0;
      d.mem = 0;
      d.share = {};
      d.gpu_mem = {};
      d.has_named = false;
      if constexpr (NamedResources<C>) {
        if (const named_resources_state* s = named_resources_of(*base_, n)) {
          d.named = *s;  // may allocate (reuses the slot's storage from before a reset)
          d.has_named = true;
        }
      }
      slot_[n] = static_cast<std::int32_t>(used_++);
    }
    return deltas_[static_cast<std::size_t>(slot_[n])];
  }

  void apply(const pod& p, const binding& b, int sign) {
    delta& d = slot_for(b.node);
    if (d.has_named) d.named.count(p, sign);  // as in_memory_cluster's record
    d.cpu += sign * b.cpu_milli;
    d.mem += sign * b.memory_mib;
    for_each_gpu(b.gpus, [&](int g) {
      d.share[static_cast<std::size_t>(g)] += sign * b.gpu_milli;
      d.gpu_mem[static_cast<std::size_t>(g)] += sign * b.gpu_mem_mib;
    });
  }

  const C* base_;
  std::vector<std::int32_t> slot_;
  std::vector<delta> deltas_;
  std::size_t used_ = 0;
};

}  // namespace gpusched
