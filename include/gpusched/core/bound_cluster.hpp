// bound_cluster: bookkeeping of which pod is bound where, over any MutableCluster.
//
// It forwards every Cluster hook to the wrapped cluster and records each reservation as a bound
// pod (PodsOnNodes, GangIndexed, QosAccounted in core/bound_pods.hpp), so that preemption and
// eviction can ask which pods hold a node. The wrapped cluster keeps its API: set loads through
// base(); add nodes through add_node() (or base() when no observer keeps per-node state); reserve
// and release through the bound_cluster (or its hooks), never through base(), or the records drift
// from the resources.
//
// Observers. bound_cluster<C, O...> also tells each observer O (a compile-time pack, so a cluster
// without observers compiles to exactly the code it had before, and each call is inlined) of every
// change it makes, in the order listed, after the wrapped cluster accepted it:
//   o.reserved(const C&, const pod&, const binding&) noexcept   required
//   o.released(const C&, const pod&, const binding&) noexcept   required
//   o.attach(const C&)                 optional: the bound_cluster was built over this cluster
//   o.node_added(const C&, node_index) optional: add_node() added node n
//   o.node_changed(const C&, node_index) optional: the host changed node n through base() and
//                                      said so with changed(n) (a measured load, say)
// Observers keep derived state — running totals (core/cluster_totals.hpp), the FGD paper's GPU
// affinity tags (scoring/fgd_paper/affinity_tags.hpp), the batch node table
// (batch/node_table_observer.hpp) — instead of rival cluster types kept in step by hand. reserved
// and released run where nothing may throw any more, so they must not allocate; observer(O) gives
// the observer back.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gpusched/core/binding.hpp"
#include "gpusched/core/bound_pods.hpp"
#include "gpusched/core/cluster.hpp"
#include "gpusched/core/cluster_totals.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/core/gpu_summary.hpp"
#include "gpusched/core/in_memory_cluster.hpp"
#include "gpusched/core/pod.hpp"

namespace gpusched {

// An observer of a bound_cluster over C (see the comment at the top of this file).
template <class O, class C>
concept BindingObserver = std::is_copy_constructible_v<O> && requires(O& o, const C& c, const pod& p, const binding& b) {
  { o.reserved(c, p, b) } noexcept;
  { o.released(c, p, b) } noexcept;
};

// Memory per bound pod: an 80-byte bound_pod record, a slot holding a copy of the pod
// (sizeof(pod) + 8 bytes, plus heap for names over 15 characters and allowed models), one name-map
// entry (about 64 bytes plus the name) and 4 bytes in its gang's member list. Per node: a 24-byte
// record vector and a 48-byte qos_allocation, plus what each observer keeps.
template <MutableCluster C = in_memory_cluster, BindingObserver<C>... O>
class bound_cluster {
 public:
  bound_cluster() { attach(); }
  explicit bound_cluster(C base) : base_(std::move(base)) { attach(); }

  [[nodiscard]] C& base() noexcept { return base_; }
  [[nodiscard]] const C& base() const noexcept { return base_; }

  // The observer of type T (one of O...).
  template <class T>
  [[nodiscard]] const T& observer() const noexcept { return std::get<T>(obs_); }
  template <class T>
  [[nodiscard]] T& observer() noexcept { return std::get<T>(obs_); }

  // Adds a node to the wrapped cluster (which validates it and throws, changing nothing, on a bad
  // node) and tells the observers. An observer that runs out of memory here throws std::bad_alloc
  // with the node added to the wrapped cluster; rebuild the bound_cluster then.
  node_index add_node(const node_spec& spec)
    requires requires(C& c) { { c.add_node(spec) } -> std::convertible_to<node_index>; }
  {
    const node_index n = base_.add_node(spec);
    (node_added_to(std::get<O>(obs_), n), ...);
    return n;
  }
  // Tells the observers that node n changed through base() (a load measured, a model deployed).
  void changed(node_index n) { (node_changed_to(std::get<O>(obs_), n), ...); }

  // The clock that stamps start times of pods bound through the Cluster hooks.
  void set_time(double t) {
    if (!std::isfinite(t) || t < 0.0) throw invalid_argument_error("bound_cluster.time", "must be a finite time >= 0");
    now_ = t;
  }
  [[nodiscard]] double time() const noexcept { return now_; }

  // Reserves b for p in the wrapped cluster and records it. Throws invalid_argument_error (and
  // changes nothing) for an invalid pod (validate(pod)), a pod of that name already bound (the same
  // pod placed twice), a bad start time, or a binding the cluster refuses.
  pod_id bind(const pod& p, const binding& b) { return bind(p, b, now_); }
  pod_id bind(const pod& p, const binding& b, double start_time) {
    validate(p);
    if (!std::isfinite(start_time) || start_time < 0.0) {
      throw invalid_argument_error("pod '" + p.name + "'.start_time", "must be a finite time >= 0");
    }
    const std::size_t nodes = num_nodes(base_);
    if (b.node >= nodes) throw invalid_argument_error("binding.node", "node index " + std::to_string(b.node) + " out of range");
    pod spec = p;  // copy first: p may live in this cluster's own storage
    // Grow every container before anything changes, so that nothing after the reserve can throw.
    if (on_node_.size() < nodes) {
      on_node_.resize(nodes);
      qos_.resize(nodes);
    }
    if (on_node_[b.node].size() == on_node_[b.node].capacity()) on_node_[b.node].reserve(2 * on_node_[b.node].size() + 4);
    pod_id id;
    if (free_.empty()) {
      if (slots_.size() == slots_.capacity()) slots_.reserve(2 * slots_.size() + 4);
      id = static_cast<pod_id>(slots_.size());
    } else {
      id = free_.back();
    }
    if (free_.capacity() < slots_.size() + 1) free_.reserve(2 * slots_.size() + 4);
    auto [name_it, inserted] = by_name_.try_emplace(spec.name, id);
    if (!inserted) throw invalid_argument_error("pod '" + spec.name + "'.name", "is already bound");
    gang_key g = no_gang;
    bool new_gang = false;
    try {
      if (!spec.gang.empty()) {
        auto git = gang_ids_.find(spec.gang);
        if (git == gang_ids_.end()) {
          if (gangs_.size() == gangs_.capacity()) gangs_.reserve(2 * gangs_.size() + 4);
          git = gang_ids_.emplace(spec.gang, static_cast<gang_key>(gangs_.size() + 1)).first;
          gangs_.emplace_back();
          new_gang = true;
        }
        g = git->second;
        if (gangs_[g - 1].size() == gangs_[g - 1].capacity()) gangs_[g - 1].reserve(2 * gangs_[g - 1].size() + 4);
      }
      traits_of<C>::reserve(base_, spec, b);
    } catch (...) {
      if (new_gang) {
        gangs_.pop_back();
        gang_ids_.erase(spec.gang);
      }
      by_name_.erase(name_it);
      throw;
    }
    // Nothing below allocates or throws.
    (std::get<O>(obs_).reserved(std::as_const(base_), spec, b), ...);
    auto& list = on_node_[b.node];
    list.push_back(make_bound_pod(spec, id, b, start_time, g));
    qos_[b.node].add(spec.qos, b.cpu_milli, b.memory_mib, +1);
    if (g != no_gang) gangs_[g - 1].push_back(id);
    slot s{std::move(spec), b.node, static_cast<std::uint32_t>(list.size() - 1), true};
    if (id == slots_.size()) {
      slots_.push_back(std::move(s));
    } else {
      free_.pop_back();
      slots_[id] = std::move(s);
    }
    ++bound_;
    return id;
  }

  // Releases a bound pod's resources and forgets it. Throws invalid_argument_error (and changes
  // nothing) when id is not bound.
  void unbind(pod_id id) {
    if (id >= slots_.size() || !slots_[id].alive) {
      throw invalid_argument_error("pod_id", "pod #" + std::to_string(id) + " is not bound");
    }
    slot& s = slots_[id];
    auto& list = on_node_[s.node];
    const bound_pod rec = list[s.index];
    traits_of<C>::release(base_, s.spec, rec.where);
    // Nothing below allocates or throws.
    (std::get<O>(obs_).released(std::as_const(base_), s.spec, rec.where), ...);
    if (s.index + 1 != list.size()) {
      list[s.index] = list.back();
      slots_[list[s.index].id].index = s.index;
    }
    list.pop_back();
    if (rec.gang != no_gang) {
      auto& members = gangs_[rec.gang - 1];
      for (std::size_t i = 0; i < members.size(); ++i) {
        if (members[i] == id) {
          members[i] = members.back();
          members.pop_back();
          break;
        }
      }
    }
    qos_[s.node].add(rec.qos, rec.where.cpu_milli, rec.where.memory_mib, -1);
    by_name_.erase(s.spec.name);
    s.alive = false;
    free_.push_back(id);
    --bound_;
  }

  // The MutableCluster reserve hook, as a member (bind without the pod id).
  void reserve(const pod& p, const binding& b) { bind(p, b); }

  // The MutableCluster release hook: the pod is found by name and b must be its recorded binding.
  // Throws invalid_argument_error (and changes nothing) for a pod that is not bound (a release of a
  // pod never placed, or released twice) or a binding that is not its own.
  void release(const pod& p, const binding& b) {
    const bound_pod* rec = find(p.name);
    if (rec == nullptr) throw invalid_argument_error("pod '" + p.name + "'.name", "is not bound");
    if (!(rec->where == b)) {
      throw invalid_argument_error("binding", "does not match the recorded binding of pod '" + p.name + "'");
    }
    unbind(rec->id);
  }

  [[nodiscard]] std::span<const bound_pod> pods_on(node_index n) const noexcept {
    if (n >= on_node_.size()) return {};
    return on_node_[n];
  }
  [[nodiscard]] const bound_pod* find(pod_id id) const noexcept {
    if (id >= slots_.size() || !slots_[id].alive) return nullptr;
    return &on_node_[slots_[id].node][slots_[id].index];
  }
  [[nodiscard]] const bound_pod* find(std::string_view name) const {
    auto it = by_name_.find(std::string(name));
    return it == by_name_.end() ? nullptr : find(it->second);
  }
  // The full pod of a bound id (unspecified for an id that is not bound).
  [[nodiscard]] const pod& spec(pod_id id) const noexcept { return slots_[id].spec; }
  [[nodiscard]] std::span<const pod_id> gang(gang_key g) const noexcept {
    if (g == no_gang || g > gangs_.size()) return {};
    return gangs_[g - 1];
  }
  [[nodiscard]] gang_key gang_of(std::string_view name) const {
    auto it = gang_ids_.find(std::string(name));
    return it == gang_ids_.end() ? no_gang : it->second;
  }
  [[nodiscard]] qos_allocation qos_on(node_index n) const noexcept {
    return n < qos_.size() ? qos_[n] : qos_allocation{};
  }
  [[nodiscard]] std::size_t bound_count() const noexcept { return bound_; }

  // Same wrapped cluster and the same pods bound with the same records, node by node.
  friend bool operator==(const bound_cluster& a, const bound_cluster& b) {
    if (!(a.base_ == b.base_) || a.bound_ != b.bound_) return false;
    const std::size_t n = std::max(a.on_node_.size(), b.on_node_.size());
    for (std::size_t i = 0; i < n; ++i) {
      const auto x = a.pods_on(static_cast<node_index>(i));
      const auto y = b.pods_on(static_cast<node_index>(i));
      if (x.size() != y.size()) return false;
      for (std::size_t k = 0; k < x.size(); ++k) {
        if (!(x[k] == y[k]) || a.spec(x[k].id).name != b.spec(y[k].id).name) return false;
      }
      if (!(a.qos_on(static_cast<node_index>(i)) == b.qos_on(static_cast<node_index>(i)))) return false;
    }
    return true;
  }

 private:
  struct slot {
    pod spec;
    node_index node = 0;
    std::uint32_t index = 0;  // position in on_node_[node]
    bool alive = false;
  };

  void attach() {
    ((attach_to(std::get<O>(obs_))), ...);
  }
  template <class T>
  void attach_to(T& o) {
    if constexpr (requires { o.attach(std::as_const(base_)); }) o.attach(std::as_const(base_));
  }
  template <class T>
  void node_added_to(T& o, node_index n) {
    if constexpr (requires { o.node_added(std::as_const(base_), n); }) o.node_added(std::as_const(base_), n);
  }
  template <class T>
  void node_changed_to(T& o, node_index n) {
    if constexpr (requires { o.node_changed(std::as_const(base_), n); }) o.node_changed(std::as_const(base_), n);
  }

  C base_;
  [[no_unique_address]] std::tuple<O...> obs_;
  double now_ = 0.0;
  std::size_t bound_ = 0;
  std::vector<std::vector<bound_pod>> on_node_;
  std::vector<qos_allocation> qos_;
  std::vector<slot> slots_;
  std::vector<pod_id> free_;
  std::unordered_map<std::string, pod_id> by_name_;
  std::unordered_map<std::string, gang_key> gang_ids_;
  std::vector<std::vector<pod_id>> gangs_;  // members of gang key k at k - 1
};

// Cluster hooks, forwarded to the wrapped cluster.
template <class C, class... O>
std::size_t node_count(const bound_cluster<C, O...>& c) { return num_nodes(c.base()); }
template <class C, class... O>
node_state node_resources(const bound_cluster<C, O...>& c, node_index n) { return traits_of<C>::node_resources(c.base(), n); }
template <class C, class... O>
decltype(auto) node_gpu(const bound_cluster<C, O...>& c, node_index n, int g) { return traits_of<C>::node_gpu(c.base(), n, g); }
template <NamedNodes C, class... O>
std::string_view node_name(const bound_cluster<C, O...>& c, node_index n) { return traits_of<C>::node_name(c.base(), n); }
template <MeasuredLoad C, class... O>
const node_metrics* node_load(const bound_cluster<C, O...>& c, node_index n) { return traits_of<C>::node_load(c.base(), n); }
template <ServedModels C, class... O>
int model_replicas(const bound_cluster<C, O...>& c, node_index n, const short_name& m) {
  return traits_of<C>::model_replicas(c.base(), n, m);
}
template <ServedModels C, class... O>
decltype(auto) node_model_types(const bound_cluster<C, O...>& c, node_index n) { return traits_of<C>::node_model_types(c.base(), n); }
template <NamedResources C, class... O>
const named_resources_state* node_named_resources(const bound_cluster<C, O...>& c, node_index n) {
  return named_resources_of(c.base(), n);
}
template <class C, class... O>
void reserve(bound_cluster<C, O...>& c, const pod& p, const binding& b) { c.bind(p, b); }
template <class C, class... O>
void release(bound_cluster<C, O...>& c, const pod& p, const binding& b) { c.release(p, b); }

// Bound-pod hooks.
template <class C, class... O>
std::span<const bound_pod> bound_pods(const bound_cluster<C, O...>& c, node_index n) noexcept { return c.pods_on(n); }
template <class C, class... O>
const pod& bound_pod_spec(const bound_cluster<C, O...>& c, pod_id id) noexcept { return c.spec(id); }
template <class C, class... O>
std::span<const pod_id> gang_members(const bound_cluster<C, O...>& c, gang_key g) noexcept { return c.gang(g); }
template <class C, class... O>
const bound_pod* find_bound_pod(const bound_cluster<C, O...>& c, pod_id id) noexcept { return c.find(id); }
template <class C, class... O>
qos_allocation node_qos_allocation(const bound_cluster<C, O...>& c, node_index n) noexcept { return c.qos_on(n); }

// The GpuSummarized hook of a bound_cluster observed by gpu_summary (core/gpu_summary.hpp).
template <class C, class... O>
  requires(std::is_same_v<gpu_summary, O> || ...)
const gpu_free_summary& node_gpu_summary(const bound_cluster<C, O...>& c, node_index n) noexcept {
  return c.template observer<gpu_summary>().of(n);
}

// The TurnoverCounted hook of a bound_cluster observed by cluster_totals (core/cluster_totals.hpp).
template <class C, class... O>
  requires(std::is_same_v<cluster_totals, O> || ...)
gpu_turnover cluster_gpu_turnover(const bound_cluster<C, O...>& c) noexcept {
  const cluster_totals& t = c.template observer<cluster_totals>();
  return {t.gpu_milli_allocated(), t.gpu_milli_released()};
}

static_assert(MutableCluster<bound_cluster<>> && GangIndexed<bound_cluster<>> && QosAccounted<bound_cluster<>>);
static_assert(NamedNodes<bound_cluster<>> && MeasuredLoad<bound_cluster<>> && ServedModels<bound_cluster<>>);
static_assert(NamedResources<bound_cluster<>>);
static_assert(GpuSummarized<bound_cluster<in_memory_cluster, gpu_summary>> && !GpuSummarized<bound_cluster<>>);
static_assert(TurnoverCounted<bound_cluster<in_memory_cluster, cluster_totals>> && !TurnoverCounted<bound_cluster<>>);

}  // namespace gpusched
