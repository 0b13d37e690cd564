// node_versions: a stamp per node that changes whenever the node's state may have changed, so that
// scorers with a per-node cache (fgd_scorer, scoring/fgd.hpp) can tell an unchanged node from its
// stamp alone instead of re-reading and comparing its devices on every call (issue 14, item 3).
//
// A cluster may provide, found by ADL, `node_state_version(c, n) -> std::uint64_t` (concept
// NodeVersioned). The contract: two calls that return the same stamp for node n see the same
// resources and devices of node n, on whichever cluster object they were made. A bound_cluster
// observed by node_versions provides it: every reservation, release, node_changed(n) and added node
// takes a fresh stamp from one process-wide counter, so a stamp is never given twice, and a copy
// of the cluster (which copies the stamps with the state they describe) cannot reuse one either.
// Changes made through base() without changed(n) are outside the contract, as for every observer
// (core/bound_cluster.hpp). 8 bytes per node.
//
// It also keeps one stamp for the cluster's capacity, `cluster_capacity_version(c)` (concept
// CapacityVersioned): fresh when the observer is attached, a node is added or changed(n) is called,
// and left alone by reservations and releases, so two calls that return the same stamp see the same
// nodes with the same capacities. Scorers that derive something from the whole cluster's capacity
// (FillAwareBinding's CPU per GPU) recount only when it moves. 8 bytes in all. A host that provides
// the hook itself keeps the same contract: a stamp below 2^62, never the same for two different
// capacities on any cluster object of the process (a process-wide counter does it; a counter per
// cluster does not).
#pragma once

#include <atomic>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "gpusched/core/binding.hpp"
#include "gpusched/core/bound_cluster.hpp"
#include "gpusched/core/cluster.hpp"
#include "gpusched/core/pod.hpp"
#include "gpusched/core/reason.hpp"
#include "gpusched/core/short_name.hpp"

namespace gpusched {

namespace detail {
inline std::atomic<std::uint64_t> node_version_clock{0};
// A stamp never returned before in this process (0 is never returned).
inline std::uint64_t fresh_node_version() noexcept {
  return node_version_clock.fetch_add(1, std::memory_order_relaxed) + 1;
}
}  // namespace detail

namespace adl {
void node_state_version() = delete;
template <class C>
auto call_node_state_version(const C& c, node_index n) -> decltype(node_state_version(c, n)) {
  return node_state_version(c, n);
}
}  // namespace adl

template <class C>
concept NodeVersioned = Cluster<C> && requires(const C& c, node_index n) {
  { adl::call_node_state_version(c, n) } -> std::convertible_to<std::uint64_t>;
};

namespace adl {
void cluster_capacity_version() = delete;
template <class C>
auto call_cluster_capacity_version(const C& c) -> decltype(cluster_capacity_version(c)) {
  return cluster_capacity_version(c);
}
}  // namespace adl

template <class C>
concept CapacityVersioned = Cluster<C> && requires(const C& c) {
  { adl::call_cluster_capacity_version(c) } -> std::convertible_to<std::uint64_t>;
};

// The observer: one stamp per node.
class node_versions {
 public:
  [[nodiscard]] std::uint64_t of(node_index n) const noexcept { return stamps_[n]; }
  // The capacity stamp (above): moves with added and changed nodes, not with reservations.
  [[nodiscard]] std::uint64_t capacity_version() const noexcept { return capacity_; }

  template <Cluster C>
  void attach(const C& c) {
    stamps_.resize(num_nodes(c));
    for (auto& s : stamps_) s = detail::fresh_node_version();
    capacity_ = detail::fresh_node_version();
  }
  template <Cluster C>
  void node_added(const C&, node_index n) {
    if (stamps_.size() <= n) stamps_.resize(std::size_t{n} + 1);
    stamps_[n] = detail::fresh_node_version();
    capacity_ = detail::fresh_node_version();
  }
  template <Cluster C>
  void node_changed(const C&, node_index n) noexcept {
    stamps_[n] = detail::fresh_node_version();
    capacity_ = detail::fresh_node_version();
  }
  template <class C>
  void reserved(const C&, const pod&, const binding& b) noexcept {
    stamps_[b.node] = detail::fresh_node_version();
  }
  template <class C>
  void released(const C&, const pod&, const binding& b) noexcept {
    stamps_[b.node] = detail::fresh_node_version();
  }

 private:
  std::vector<std::uint64_t> stamps_;
  std::uint64_t capacity_ = 0;
};

// The NodeVersioned hook of a bound_cluster observed by node_versions.
template <class C, class... O>
  requires(std::is_same_v<node_versions, O> || ...)
std::uint64_t node_state_version(const bound_cluster<C, O...>& c, node_index n) noexcept {
  return c.template observer<node_versions>().of(n);
}

// The CapacityVersioned hook of the same.
template <class C, class... O>
  requires(std::is_same_v<node_versions, O> || ...)
std::uint64_t cluster_capacity_version(const bound_cluster<C, O...>& c) noexcept {
  return c.template observer<node_versions>().capacity_version();
}

static_assert(NodeVersioned<bound_cluster<in_memory_cluster, node_versions>> && !NodeVersioned<bound_cluster<>>);
static_assert(CapacityVersioned<bound_cluster<in_memory_cluster, node_versions>> && !CapacityVersioned<bound_cluster<>>);

// Whether a profile's filter verdict on a node depends only on the node's resources and devices and
// on the pod's shape (CPU, memory, GPU count, share, GPU memory, allowed models): then a verdict
// cached under a node's stamp stays right until the stamp moves (filter_memo). True for static
// profiles whose checks are all NodeResourcesFit and GPUCheck (the simulator's profiles); any other
// check may read something else (taints, load, time), so the default is false.
template <class K>
inline constexpr bool check_reads_shape_only = false;
struct resource_fit;
struct gpu_check;
template <>
inline constexpr bool check_reads_shape_only<resource_fit> = true;
template <>
inline constexpr bool check_reads_shape_only<gpu_check> = true;

template <class Profile>
inline constexpr bool filter_reads_shape_only = false;
template <class... K>
struct check_list;
template <class Checks, class Scores, class Selector>
class static_profile;
template <class... K, class Scores, class Selector>
inline constexpr bool filter_reads_shape_only<static_profile<check_list<K...>, Scores, Selector>> =
    (check_reads_shape_only<K> && ...);

// Filter verdicts cached per (pod shape, node) under the node's stamp, for the scheduler's per-node
// path on a NodeVersioned cluster (schedule/schedule_one.hpp): in a trace replay a placement changes
// one node, so a pod re-checks only the nodes changed since its shape was last filtered. 9 bytes per
// (shape, node) pair, at most max_pairs pairs (least recently used shapes are evicted). Not
// thread-safe (it belongs to one scheduler); a copy starts empty.
class filter_memo {
 public:
  static constexpr std::size_t max_pairs = std::size_t{1} << 20;

  filter_memo() = default;
  filter_memo(const filter_memo&) noexcept {}
  filter_memo& operator=(const filter_memo&) noexcept {
    slots_.clear();
    last_ = no_slot;
    return *this;
  }
  ~filter_memo() = default;

  // As prof.filter(c, p, first, count, out), from the cache where a node's stamp has not moved.
  template <class Profile, class C>
  void filter(const Profile& prof, const C& c, const pod& p, node_index first, std::size_t count, reason* out) {
    slot* s = slot_for(p, num_nodes(c));
    if (s == nullptr) {
      prof.filter(c, p, first, count, out);
      return;
    }
    for (std::size_t i = 0; i < count; ++i) {
      const auto n = static_cast<node_index>(first + i);
      const std::uint64_t stamp = adl::call_node_state_version(c, n);
      if (s->stamp[n] != stamp) {
        prof.filter(c, p, n, 1, &s->verdict[n]);
        s->stamp[n] = stamp;
      }
      out[i] = s->verdict[n];
    }
  }

 private:
  static constexpr std::size_t no_slot = ~std::size_t{0};
  struct slot {
    milli cpu = 0;
    mib memory = 0;
    std::int32_t num_gpu = 0;
    std::int32_t gpu_milli = 0;
    std::int32_t gpu_mem = 0;
    std::vector<short_name> models;
    std::uint64_t last_use = 0;
    std::vector<std::uint64_t> stamp;  // 0: none (stamps start at 1)
    std::vector<reason> verdict;
    [[nodiscard]] bool matches(const pod& p) const noexcept {
      return cpu == p.cpu_milli && memory == p.memory_mib && num_gpu == p.num_gpu && gpu_milli == p.gpu_milli &&
             gpu_mem == p.gpu_mem_mib && models == p.allowed_models;
    }
  };

  slot* slot_for(const pod& p, std::size_t node_count) {
    if (last_ != no_slot && slots_[last_].stamp.size() == node_count && slots_[last_].matches(p)) return &slots_[last_];
    if (node_count == 0 || max_pairs / node_count == 0) return nullptr;
    ++clock_;
    std::size_t i = 0;
    for (; i < slots_.size(); ++i) {
      if (slots_[i].matches(p)) break;
    }
    if (i == slots_.size()) {
      if (slots_.size() < max_pairs / node_count) {
        slots_.emplace_back();
      } else {  // evict the least recently used shape
        i = 0;
        for (std::size_t j = 1; j < slots_.size(); ++j) {
          if (slots_[j].last_use < slots_[i].last_use) i = j;
        }
      }
      slot& s = slots_[i];
      s.cpu = p.cpu_milli;
      s.memory = p.memory_mib;
      s.num_gpu = p.num_gpu;
      s.gpu_milli = p.gpu_milli;
      s.gpu_mem = p.gpu_mem_mib;
      s.models = p.allowed_models;
      s.stamp.clear();
    }
    slot& s = slots_[i];
    if (s.stamp.size() != node_count) {
      s.stamp.assign(node_count, 0);
      s.verdict.assign(node_count, reason::ok);
    }
    s.last_use = clock_;
    last_ = i;
    return &s;
  }

  std::vector<slot> slots_;
  std::size_t last_ = no_slot;
  std::uint64_t clock_ = 0;
};

}  // namespace gpusched
