// FillAwareBinding: FillAware (scoring/fill_aware.hpp) whose CPU-stranding term follows the resource
// that binds. gpusched's heuristic, not a published formula (docs/adr/0017-quality-method.md).
//
// FillAware's CPU term S(n) counts the GPU share a node's CPU cannot serve. It has two forms:
//   mean:     S(n) = max(0, free GPU - CPU left / r), r the workload's GPU shapes' mean CPU per GPU;
//   by shape: S(n) = sum_k w_k max(0, free GPU - CPU left / r_k), each GPU shape k at its own ratio.
// The mean form is zero on every node whose CPU covers its free GPUs at the mean: it steers CPU-heavy
// pods away from nodes about to strand GPU, and otherwise leaves the choice to the hole term. The
// by-shape form also sees that CPU-hungry shapes stop fitting long before the mean says so; that is
// what matters when CPU runs out before GPU does, and a distortion when it does not (it then
// charges placements for CPU that is not scarce; docs/quality.md measures both).
//
// Which resource binds is a property of the workload against the cluster, with no constant to
// choose: the workload's CPU demand per GPU demand, over all its typical shapes including CPU-only
// pods,
//   d = sum_k p_k cpu_k / sum_k p_k gpu_milli_k num_gpu_k          (milli-CPU per milli-GPU),
// against the cluster's CPU per GPU, c = sum_n cpu_capacity_n / sum_n 1000 gpu_count_n. If d >= c,
// pods arriving in the workload's proportions exhaust the CPU before the GPU (at any fill level: both
// sides scale with the number of pods), so S is taken by shape; otherwise the mean form is used. The
// threshold is the definition of a binding resource, not a fitted constant. As in FGD (Weng et al.,
// ATC'23), the typical workload is the reference; here it also decides which resource binds.
//
// The cluster side is recounted in PreScore (once per pod: O(nodes), no allocation), so a cluster
// that changes between pods is followed; on a CapacityVersioned cluster (a bound_cluster observed by
// node_versions, as the simulator's) only when its capacity stamp has moved since the last count
// (schedule/node_versions.hpp). The device choice reuses PreScore's decision for the pod it was made
// for and recounts otherwise. The decision of the last
// PreScore is shared by the copies of one scorer (the score plugin and the device selector of a
// profile); pods scored concurrently against clusters of different CPU per GPU would race on it,
// which no gpusched engine does (one cluster per profile).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "gpusched/core/cluster.hpp"
#include "gpusched/core/pod.hpp"
#include "gpusched/schedule/node_versions.hpp"
#include "gpusched/scoring/fill_aware.hpp"
#include "gpusched/scoring/scorer.hpp"
#include "gpusched/scoring/typical_pods.hpp"

namespace gpusched {

// d above, in milli-CPU per whole GPU (1000 milli-GPU); 0 when the workload has no GPU demand.
inline double workload_cpu_per_gpu(const typical_workload& w) {
  double cpu = 0.0, gpu = 0.0;
  for (const auto& t : w.pods()) {
    cpu += t.probability * static_cast<double>(t.cpu_milli);
    gpu += t.probability * static_cast<double>(t.gpu_milli) * t.num_gpu;
  }
  return gpu > 0 ? cpu / gpu * gpu_milli_whole : 0.0;
}

// c above, in milli-CPU per whole GPU; 0 for a cluster without GPUs.
template <Cluster C>
double cluster_cpu_per_gpu(const C& c) {
  double cpu = 0.0, gpus = 0.0;
  const std::size_t nodes = traits_of<C>::node_count(c);
  for (std::size_t i = 0; i < nodes; ++i) {
    const node_state s = traits_of<C>::node_resources(c, static_cast<node_index>(i));
    cpu += static_cast<double>(s.cpu_capacity);
    gpus += static_cast<double>(s.gpu_count);
  }
  return gpus > 0 ? cpu / gpus : 0.0;
}

// The rule: CPU binds when the workload asks at least as much CPU per GPU as the cluster has.
constexpr bool cpu_binds(double workload_cpu_per_gpu, double cluster_cpu_per_gpu) noexcept {
  return cluster_cpu_per_gpu > 0 && workload_cpu_per_gpu >= cluster_cpu_per_gpu;
}

class fill_aware_binding_scorer {
 public:
  // o's cpu_by_shape flags are set by the scorer for its two forms; the other fields apply to both.
  explicit fill_aware_binding_scorer(const typical_workload& w, fill_aware_options o = {})
      : mean_(w, with_shape(o, false)), shape_(w, with_shape(o, true)), demand_(workload_cpu_per_gpu(w)),
        state_(std::make_shared<shared_state>()) {}

  [[nodiscard]] static constexpr std::string_view name() noexcept { return "FillAwareBinding"; }
  [[nodiscard]] double demand() const noexcept { return demand_; }  // the workload's d, milli-CPU per GPU

  // Whether S is taken by shape on cluster c (the rule above).
  template <Cluster C>
  [[nodiscard]] bool by_shape(const C& c) const {
    if constexpr (CapacityVersioned<C>) {
      // One word, stamp x 4 + 2 (a count was made) + decision, so that a stamp is never read beside
      // another stamp's decision and the initial 0 never matches a stamp.
      const std::uint64_t stamp = adl::call_cluster_capacity_version(c);
      const std::uint64_t last = state_->counted.load(std::memory_order_relaxed);
      if ((last & 2) != 0 && last >> 2 == stamp) return (last & 1) != 0;
      const bool shape = cpu_binds(demand_, cluster_cpu_per_gpu(c));
      state_->counted.store(stamp << 2 | 2 | std::uint64_t{shape}, std::memory_order_relaxed);
      return shape;
    } else {
      return cpu_binds(demand_, cluster_cpu_per_gpu(c));
    }
  }

  template <Cluster C>
  score_status pre_score(const C& c, const pod& p) const {
    state_->by_shape.store(by_shape(c), std::memory_order_relaxed);
    state_->cluster.store(&c, std::memory_order_relaxed);
    state_->pod.store(&p, std::memory_order_relaxed);
    return score_status::ok;
  }

  template <Cluster C>
  [[nodiscard]] std::int64_t score(const C& c, const pod& p, node_index n) const {
    return state_->by_shape.load(std::memory_order_relaxed) ? shape_.score(c, p, n) : mean_.score(c, p, n);
  }

  // SpanScorer: the chosen form's score_nodes, so each form's per-node score cache
  // (fill_aware_scorer::score_nodes) serves the replay; the scores are score()'s.
  template <Cluster C>
  void score_nodes(const C& c, const pod& p, std::span<const node_index> nodes, std::int64_t* out) const {
    if (state_->by_shape.load(std::memory_order_relaxed)) {
      shape_.score_nodes(c, p, nodes, out);
    } else {
      mean_.score_nodes(c, p, nodes, out);
    }
  }

  // GpuSelector: recounts the cluster, since a profile may choose devices without scoring (one
  // feasible node).
  template <Cluster C>
  [[nodiscard]] gpu_set select(const C& c, const pod& p, node_index n) const {
    if (!p.wants_gpu()) return 0;
    // The decision of this pod's PreScore on this cluster, taken once (nothing binds between a
    // cycle's PreScore and its device choice); otherwise (no PreScore ran, or a second call) a recount.
    const void* scored = &p;
    const bool same = state_->cluster.load(std::memory_order_relaxed) == static_cast<const void*>(&c) &&
                      state_->pod.compare_exchange_strong(scored, nullptr, std::memory_order_relaxed);
    const bool shape = same ? state_->by_shape.load(std::memory_order_relaxed) : by_shape(c);
    return shape ? shape_.select(c, p, n) : mean_.select(c, p, n);
  }

 private:
  static fill_aware_options with_shape(fill_aware_options o, bool shape) {
    o.cpu_by_shape = shape;
    o.cpu_by_shape_cpu_only = false;
    return o;
  }

  fill_aware_scorer mean_;
  fill_aware_scorer shape_;
  double demand_ = 0.0;
  // The last PreScore's decision, and the pod and cluster it was made for (select's one-shot reuse).
  struct shared_state {
    std::atomic<bool> by_shape{false};
    std::atomic<const void*> pod{nullptr};
    std::atomic<const void*> cluster{nullptr};
    // The last count on a CapacityVersioned cluster: its capacity stamp x 4 + 2 + the decision; 0
    // before the first.
    std::atomic<std::uint64_t> counted{0};
  };
  std::shared_ptr<shared_state> state_;
};

// FillAwareRefill, gpusched's policy: FillAwareBinding whose hole refill chance is taken per sharing
// pod, kappa = fill_per_sharing_pod / P_share (refill_fill_per_sharing_pod unless the options say
// otherwise; docs/adr/0017-quality-method.md, amendments 2 and 3). A type of its own for its name.
class fill_aware_refill_scorer : public fill_aware_binding_scorer {
 public:
  explicit fill_aware_refill_scorer(const typical_workload& w) : fill_aware_refill_scorer(w, defaults()) {}
  fill_aware_refill_scorer(const typical_workload& w, fill_aware_options o) : fill_aware_binding_scorer(w, o) {}

  [[nodiscard]] static constexpr std::string_view name() noexcept { return "FillAwareRefill"; }
  // FillAware's defaults with fill_per_sharing_pod = refill_fill_per_sharing_pod.
  [[nodiscard]] static fill_aware_options defaults() noexcept {
    fill_aware_options o;
    o.fill_per_sharing_pod = refill_fill_per_sharing_pod;
    return o;
  }
};

}  // namespace gpusched
