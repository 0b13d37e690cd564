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
// The workload side as the scheduler meets it (fill_aware_options::observe_demand; docs/adr/
// 0017-quality-method.md, "Amendment 7"): a host's typical pods are a sample of its history, and a
// stale one when the mix moves; with the wrong side of d >= c the policy takes the CPU term that loses
// (docs/quality.md, "A workload that is wrong"). With the option, PreFilter counts the pods it
// sees, each once (by name: a waiting pod is asked about again), and their own d decides as soon as
// it is two standard errors from c (the ratio estimator's, by the delta method: Var(cpu_i - d gpu_i) /
// (n mean(gpu)^2)), after at least 30 pods (the usual minimum for the normal approximation); until
// then, and whenever the pods seen do not settle the side, the configured workload's d decides.
// PreFilter runs in every scheduling cycle, before any node is filtered (scoring/scorer.hpp), so the
// count holds the pods that arrive, also those no node fits and those a host then binds by
// preemption. PreScore, which held the count before, sees neither; in a full cluster its count
// drifted to the CPU-only pods that still fit (ADR 0017, Amendment 7 addendum and Amendment 8).
// The count assumes every pod reaches PreFilter once, in arrival order, from one thread (gpusched-sim's
// trace replay: its policy, and plugin_context::counts_pods for its profile files; a profile loaded
// elsewhere has it off and refuses observeDemand: true). The batch engine reads it, adds nothing.
//
// The cluster side is recounted in PreScore (once per pod: O(nodes), no allocation), so a cluster
// that changes between pods is followed; on a CapacityVersioned cluster (a bound_cluster observed by
// node_versions, as the simulator's) only when its capacity stamp has moved since the last count
// (schedule/node_versions.hpp; stamps are process-wide). The device choice reuses PreScore's
// decision for the pod it was made for and recounts otherwise. With observe_demand the count of c and
// the pods counted are behind a mutex (one lock per PreFilter, one per PreScore); without it the decision is cached
// lock-free under the capacity stamp. The decision of the last PreScore is shared by the
// copies of one scorer (the score plugin and the device selector of a profile); pods scored
// concurrently against clusters of different CPU per GPU would race on it, which no gpusched engine
// does (one cluster per profile). Memory: 128 KiB of pod-name hashes with observe_demand (and the
// block term's, below).
//
// The block term (fill_aware_options::keep_blocks = beta; docs/adr/0017-quality-method.md,
// "Amendment 9"). A multi-GPU pod (in openb all ask for whole GPUs) needs k wholly free GPUs on one
// node. On a cluster that gives GPU back, a node's free GPUs come together again as its pods leave,
// and a one-GPU or sharing pod placed there splits the block before a waiting or later k-GPU pod
// can take it. Once the cluster has turned over (it has given back at least the GPU it holds now,
// gpu_turnover::turned_over, read from a TurnoverCounted cluster at PreScore), a placement is
// charged, in the hole term's milli-GPU, for each k-GPU shape (k >= 2) that fit the node's wholly free
// GPUs before it and does not after: beta * p_k * 1000 k, p_k the share of pods of k whole GPUs
// among the pods counted (observe_demand, from 30 pods) or else among the configured typical pods;
// a sharing pod's device is chosen with the charge (a partly used GPU keeps the block). Taking a
// node's last free GPUs costs nothing more than the shapes that fit them; splitting an 8-GPU node
// costs the most. The switch is taken at the first PreScore that finds the cluster turned over;
// two more forms (mean, by shape) with the term are built then, each with its own score cache. The
// configured p_k is taken once; the counted p_k again at the PreScore after each doubling of the
// count (from 30 pods: about log2 of the pods seen rebuilds, each dropping the two caches), so that
// it follows the arrivals rather than the pods seen by the switch (at the start of a replay, the
// pods already running: long ones more often than arrivals). A cluster that never gives GPU back
// (the FGD paper's protocol: pods never leave) and one without the hook (an extender's snapshot)
// never switch it on: their placements are exactly those without the term. With observe_demand a
// PreScore may replace the two forms: no copy of the scorer may score or choose devices while
// another thread runs its PreScore (the count's one-thread contract above already rules it out).
// Memory: about 1.6 KiB for the counts by GPU count, the configured p_k and the costs; once the term
// is on, the two forms' score caches (up to 16 MiB each, as FillAware's) beside the two unused ones.
// With drain_blocks (FillAwareRefill's default; ADR 0017, "Amendment 11") the two forms also charge a
// pod placed on a node of G GPUs lost[G] / (n + 1), n the pods holding the node counted by its GPUs
// or its CPU in use (fill_aware_scorer::drain_loss), so that nearly empty nodes are left to drain.
//
// The counted hole table (fill_aware_options::counted_holes; docs/adr/0017-quality-method.md,
// "Amendment 10"). With observe_demand the count also holds the pods of one GPU by share. From 30 pods
// and at the PreScore after each doubling of the count, hole_shares_differ compares it with the
// configured typical pods; while they differ, the two forms carry a hole table built from the count
// (demand_count::one_gpu_shares, the authors' 95 % rule) as it is at each rebuild of the forms (each
// check, and each time the block term's costs are taken again), and otherwise the configured table.
// Memory: 8 KiB more for the count by share, and the configured shares.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpusched/core/cluster.hpp"
#include "gpusched/core/cluster_totals.hpp"
#include "gpusched/core/error.hpp"
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

// d counted from pods, with its standard error as an estimate of the workload's (the header comment).
struct demand_count {
  static constexpr double min_pods = 30;  // the normal approximation's usual minimum
  double n = 0, cpu = 0, gpu = 0, cpu2 = 0, gpu2 = 0, cpu_gpu = 0;  // sums over the pods counted
  std::array<double, max_gpus_per_node + 1> whole_gpus{};             // pods of k whole GPUs counted, by k
  std::array<double, gpu_milli_whole + 1> one_gpu{};                  // pods of one GPU counted, by milli

  void add(const pod& p) noexcept {
    const double c = static_cast<double>(p.cpu_milli);
    const double g = static_cast<double>(p.gpu_milli) * p.num_gpu;
    n += 1, cpu += c, gpu += g, cpu2 += c * c, gpu2 += g * g, cpu_gpu += c * g;
    if (p.gpu_milli == gpu_milli_whole && p.num_gpu > 0 && p.num_gpu <= max_gpus_per_node) {
      whole_gpus[static_cast<std::size_t>(p.num_gpu)] += 1;
    }
    if (p.num_gpu == 1 && p.gpu_milli > 0 && p.gpu_milli <= gpu_milli_whole) {
      one_gpu[static_cast<std::size_t>(p.gpu_milli)] += 1;
    }
  }
  // The one-GPU shapes counted as typical pods (the hole table's q), by the authors' rule for typical
  // pods (typical_pod_options: the most frequent kinds until they cover 95 % of the pods, their
  // shares then taken among those kept). A kind here is a one-GPU share, or all other pods together
  // (CPU-only and multi-GPU), where the configured typical pods tell shapes apart by CPU and model too.
  [[nodiscard]] std::vector<one_gpu_share> one_gpu_shares() const {
    std::vector<std::pair<double, std::int32_t>> kinds;  // (pods, milli); milli 0: the other pods
    double one = 0.0;
    for (std::size_t m = 1; m < one_gpu.size(); ++m) {
      if (one_gpu[m] > 0) kinds.emplace_back(one_gpu[m], static_cast<std::int32_t>(m));
      one += one_gpu[m];
    }
    if (n > one) kinds.emplace_back(n - one, 0);
    // More pods first; equal counts keep the smaller share first, the other pods last. (The authors'
    // rule breaks ties by CPU, then by share, larger first; the count has no CPU to break them by.
    // The measurements of Amendment 10 were made with this order.)
    std::stable_sort(kinds.begin(), kinds.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    const double cover = n * typical_pod_options{}.popularity_threshold_pct / 100;
    double kept = 0.0;
    std::size_t k = 0;
    while (k < kinds.size() && kept < cover) kept += kinds[k++].first;
    std::vector<one_gpu_share> q;
    for (std::size_t i = 0; i < k; ++i) {
      if (kinds[i].second > 0) q.push_back({kinds[i].second, kinds[i].first / kept});
    }
    return q;
  }
  // d in milli-CPU per whole GPU; 0 without GPU demand.
  [[nodiscard]] double cpu_per_gpu() const noexcept { return gpu > 0 ? cpu / gpu * gpu_milli_whole : 0.0; }
  // Its standard error, same unit; infinite below min_pods or without GPU demand.
  [[nodiscard]] double standard_error() const noexcept {
    if (n < min_pods || gpu <= 0) return std::numeric_limits<double>::infinity();
    const double d = cpu / gpu;                                       // per milli-GPU
    const double residual2 = cpu2 - 2 * d * cpu_gpu + d * d * gpu2;  // sum of (cpu_i - d gpu_i)^2
    const double variance = (residual2 > 0 ? residual2 : 0.0) / (n - 1);
    return std::sqrt(variance / n) / (gpu / n) * gpu_milli_whole;
  }
  // Whether the pods counted settle the side of c (two standard errors), and which side.
  [[nodiscard]] std::optional<bool> binds(double cluster_cpu_per_gpu) const noexcept {
    const double se = standard_error();
    if (!std::isfinite(se) || cluster_cpu_per_gpu <= 0) return std::nullopt;
    const double d = cpu_per_gpu();
    if (std::abs(d - cluster_cpu_per_gpu) <= 2 * se) return std::nullopt;
    return d >= cluster_cpu_per_gpu;
  }
};

// The counted hole table's switch (fill_aware_options::counted_holes; ADR 0017, "Amendment 10"). The
// hole table reads the workload as categories: each one-GPU share s (milli) with its share q(s) of
// all pods, and the rest (CPU-only and multi-GPU pods). Whether the pods counted differ from the
// configured typical pods there by more than the configured table can tell apart: the total variation
// distance between the two, against the configured table's own resolution (typical pods cover 95 %
// of the pods they come from, the authors' rule, so up to 5 % of the mass may sit elsewhere) plus two
// sampling errors of the count (half the sum over categories of sqrt(p (1 - p) / n)).
inline bool hole_shares_differ(std::span<const one_gpu_share> configured, const demand_count& seen) {
  if (seen.n < demand_count::min_pods) return false;
  std::array<double, gpu_milli_whole + 1> conf{};
  double conf_one = 0.0;
  for (const auto& [m, pr] : configured) {
    if (m < 1 || m > gpu_milli_whole) continue;
    conf[static_cast<std::size_t>(m)] += pr;
    conf_one += pr;
  }
  double seen_one = 0.0, distance = 0.0, noise = 0.0;
  for (std::size_t m = 1; m < conf.size(); ++m) {
    const double q = seen.one_gpu[m] / seen.n;
    seen_one += q;
    distance += std::abs(q - conf[m]);
    noise += std::sqrt(q * (1 - q) / seen.n);
  }
  const double rest = std::max(0.0, 1 - seen_one);
  distance += std::abs(rest - std::max(0.0, 1 - conf_one));
  noise += std::sqrt(rest * (1 - rest) / seen.n);
  const double resolution = 1 - typical_pod_options{}.popularity_threshold_pct / 100;
  return distance / 2 > resolution + 2 * (noise / 2);
}

// The names of the pods counted (observe_demand): 4,096 sets of 4 name hashes, the most recently
// asked first in each set. A pod asked about again (a waiting pod, retried) is recognised unless four
// other pods of its set were asked about in between; a single slot per hash would count two waiting
// pods of one slot again at every retry. 128 KiB, allocated once.
class seen_names {
 public:
  static constexpr std::size_t ways = 4;
  static constexpr std::size_t sets = 4096;
  static std::size_t set_of(std::string_view name) noexcept { return std::hash<std::string_view>{}(name) % sets; }

  seen_names() : tags_(sets * ways, 0) {}
  // Whether `name` is new to the table; it becomes the most recent of its set either way (a new name
  // takes the place of the least recent).
  bool insert(std::string_view name) noexcept {
    const std::uint64_t h = std::hash<std::string_view>{}(name);
    const std::uint64_t tag = h | 1;  // 0 marks an empty way
    std::uint64_t* w = tags_.data() + (h % sets) * ways;
    std::size_t i = 0;
    while (i < ways && w[i] != tag) ++i;
    const bool fresh = i == ways;
    if (fresh) i = ways - 1;
    for (; i > 0; --i) w[i] = w[i - 1];
    w[0] = tag;
    return fresh;
  }

 private:
  std::vector<std::uint64_t> tags_;
};

class fill_aware_binding_scorer {
 public:
  // o's cpu_by_shape flags are set by the scorer for its two forms; the other fields apply to both.
  explicit fill_aware_binding_scorer(const typical_workload& w, fill_aware_options o = {})
      : mean_(w, with_shape(o, false)), shape_(w, with_shape(o, true)), demand_(workload_cpu_per_gpu(w)),
        keep_blocks_(o.keep_blocks), counted_holes_(o.counted_holes && o.observe_demand),
        configured_holes_(counted_holes_ ? one_gpu_shares(w) : std::vector<one_gpu_share>{}),
        state_(std::make_shared<shared_state>()) {
    if (!(o.keep_blocks >= 0.0 && o.keep_blocks <= max_keep_blocks)) {
      throw invalid_argument_error("fill_aware_options.keep_blocks", "must be within 0..7");
    }
    double total = 0.0;
    for (const auto& t : w.pods()) total += t.probability;
    for (const auto& t : w.pods()) {
      if (t.num_gpu >= 2 && t.gpu_milli == gpu_milli_whole && total > 0) {
        configured_share_[static_cast<std::size_t>(t.num_gpu)] += t.probability / total;
      }
    }
    if (o.observe_demand) state_->seen = std::make_unique<seen_names>();
  }

  // The largest keep_blocks: a placement then loses at most 7 x 1000 x 64 milli-GPU (every pod of
  // 64 whole GPUs), below the half of fill_aware_scorer::score_offset that set_block_costs allows.
  static constexpr double max_keep_blocks = 7.0;

  [[nodiscard]] static constexpr std::string_view name() noexcept { return "FillAwareBinding"; }
  [[nodiscard]] double demand() const noexcept { return demand_; }  // the configured workload's d, milli-CPU per GPU
  [[nodiscard]] bool observes_demand() const noexcept { return state_->seen != nullptr; }
  // The pods counted when the hole table was last taken from the count (counted_holes: at each check
  // that finds the count differs, and each time the block term's costs are taken again meanwhile); 0
  // while the configured typical pods' table is in use. Not for a thread that races PreScore.
  [[nodiscard]] double holes_counted_at() const noexcept { return state_->holes_counted_at; }
  // The pods PreFilter has counted (observe_demand; empty otherwise).
  [[nodiscard]] demand_count observed() const {
    if (!observes_demand()) return {};
    const std::lock_guard lock(state_->mutex);
    return state_->observed;
  }

  // Whether S is taken by shape on cluster c (the rule above).
  template <Cluster C>
  [[nodiscard]] bool by_shape(const C& c) const {
    if (!observes_demand()) return decide_configured(c);
    const std::lock_guard lock(state_->mutex);
    return decide(c);
  }

  // PreFilter: counts p (observe_demand; nothing otherwise). Reads nothing of the cluster.
  template <Cluster C>
  void pre_filter(const C&, const pod& p) const {
    if (!observes_demand()) return;
    const std::lock_guard lock(state_->mutex);
    count(p);
  }

  // PreScore: the form of the CPU term for p, from the count so far; counts nothing. The batch engine
  // runs it too (batch/host_forms.hpp) and never PreFilter: a batch scores a table's pods in threads,
  // before any check and in no arrival order, so it reads the count and adds nothing to it.
  template <Cluster C>
  score_status pre_score(const C& c, const pod& p) const {
    bool shape = false;
    if (!observes_demand()) {
      shape = decide_configured(c);
      if constexpr (TurnoverCounted<C>) {  // the configured p_k: taken once
        if (keep_blocks_ > 0 && !state_->blocks_decided.load(std::memory_order_acquire) &&
            adl::call_cluster_gpu_turnover(c).turned_over()) {
          const std::lock_guard lock(state_->mutex);
          if (!state_->blocks_decided.load(std::memory_order_relaxed)) renew_forms(false, true);
        }
      }
    } else {
      const std::lock_guard lock(state_->mutex);
      shape = decide(c);
      const demand_count& seen = state_->observed;
      bool holes = state_->holes_counted_at > 0;
      bool renew = false;
      // The counted hole table: the switch checked from min_pods pods and again each time the count
      // doubles; the table taken from the count while it differs, the configured one otherwise.
      if (counted_holes_ && seen.n >= std::max(2 * state_->holes_checked_at, demand_count::min_pods)) {
        state_->holes_checked_at = seen.n;
        const bool counted = hole_shares_differ(configured_holes_, seen);
        renew = counted || holes;
        holes = counted;
      }
      bool blocks = false;
      if constexpr (TurnoverCounted<C>) {  // the counted p_k: taken again each time the count doubles
        blocks = keep_blocks_ > 0 && (state_->blocks_decided.load(std::memory_order_relaxed)
                                          ? seen.n >= std::max(2 * state_->blocks_counted_at, demand_count::min_pods)
                                          : adl::call_cluster_gpu_turnover(c).turned_over());
      }
      if (renew || blocks) renew_forms(holes, blocks);
    }
    state_->by_shape.store(shape, std::memory_order_relaxed);
    state_->cluster.store(&c, std::memory_order_relaxed);
    state_->pod.store(&p, std::memory_order_relaxed);
    return score_status::ok;
  }

  // Whether the block term is on (keep_blocks, once the cluster has turned over), and its lost[k]:
  // the cost of taking away a node's room for a k-GPU pod (all zero until the switch). Not for a
  // thread that races the PreScore that sets them.
  [[nodiscard]] bool keeps_blocks() const noexcept {
    return state_->blocks_decided.load(std::memory_order_acquire) && state_->blocks_on;
  }
  [[nodiscard]] std::array<double, max_gpus_per_node + 1> block_costs() const {
    if (!state_->blocks_decided.load(std::memory_order_acquire)) return {};
    return state_->block_lost;
  }

  template <Cluster C>
  [[nodiscard]] std::int64_t score(const C& c, const pod& p, node_index n) const {
    return form(state_->by_shape.load(std::memory_order_relaxed)).score(c, p, n);
  }

  // SpanScorer: the chosen form's score_nodes, so each form's per-node score cache
  // (fill_aware_scorer::score_nodes) serves the replay; the scores are score()'s.
  template <Cluster C>
  void score_nodes(const C& c, const pod& p, std::span<const node_index> nodes, std::int64_t* out) const {
    form(state_->by_shape.load(std::memory_order_relaxed)).score_nodes(c, p, nodes, out);
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
    return form(shape).select(c, p, n);
  }

 private:
  // The form in use: by shape or at the mean, with the counted hole table and the block term once
  // they are on.
  [[nodiscard]] const fill_aware_scorer& form(bool shape) const noexcept {
    if (const counted_forms* f = state_->forms_ready.load(std::memory_order_acquire)) return shape ? f->shape : f->mean;
    return shape ? shape_ : mean_;
  }

  // Under the mutex: the two forms built anew from mean_ and shape_ (their score caches start empty),
  // with the hole table from the count if `holes` (taken from the count as it is now) and the block
  // term, its costs taken again if `take_blocks`; none while neither is on. The forms are built
  // before any state changes, so a throw (memory) leaves the scorer as it was.
  void renew_forms(bool holes, bool take_blocks) const {
    const demand_count& seen = state_->observed;
    std::array<double, max_gpus_per_node + 1> lost = state_->block_lost;
    bool blocks_on = state_->blocks_on;
    if (take_blocks) {  // lost[k] = keep_blocks * p_k * 1000 k, k >= 2: p_k counted (from min_pods) or configured
      std::array<double, max_gpus_per_node + 1> share = configured_share_;
      if (observes_demand() && seen.n >= demand_count::min_pods) {
        for (std::size_t k = 0; k < share.size(); ++k) share[k] = k >= 2 ? seen.whole_gpus[k] / seen.n : 0.0;
      }
      blocks_on = false;
      for (std::size_t k = 2; k < share.size(); ++k) {
        lost[k] = keep_blocks_ * share[k] * static_cast<double>(gpu_milli_whole) * static_cast<double>(k);
        blocks_on = blocks_on || lost[k] > 0;
      }
    }
    std::unique_ptr<counted_forms> f;
    if (holes || blocks_on) {
      f = std::make_unique<counted_forms>(counted_forms{mean_, shape_});
      if (holes) {
        const std::vector<one_gpu_share> q = seen.one_gpu_shares();
        f->mean.set_hole_shares(q);
        f->shape.set_hole_shares(q);
      }
      if (blocks_on) {
        f->mean.set_block_costs(lost);
        f->shape.set_block_costs(lost);
      }
    }
    state_->holes_counted_at = holes ? seen.n : 0.0;
    if (take_blocks) {
      state_->block_lost = lost;
      state_->blocks_on = blocks_on;
      state_->blocks_counted_at = seen.n;
    }
    state_->forms_ready.store(f.get(), std::memory_order_release);
    state_->forms = std::move(f);
    if (take_blocks) state_->blocks_decided.store(true, std::memory_order_release);
  }

  static fill_aware_options with_shape(fill_aware_options o, bool shape) {
    o.cpu_by_shape = shape;
    o.cpu_by_shape_cpu_only = false;
    return o;
  }

  // Without observe_demand (no lock): the configured d against c, the decision cached under a
  // CapacityVersioned cluster's capacity stamp in one word, stamp x 4 + 2 (a count was made) +
  // decision, so that a stamp is never read beside another stamp's decision and the initial 0 never
  // matches a stamp.
  template <Cluster C>
  bool decide_configured(const C& c) const {
    if constexpr (CapacityVersioned<C>) {
      const std::uint64_t stamp = adl::call_cluster_capacity_version(c);
      const std::uint64_t last = state_->decided.load(std::memory_order_relaxed);
      if ((last & 2) != 0 && last >> 2 == stamp) return (last & 1) != 0;
      const bool shape = cpu_binds(demand_, cluster_cpu_per_gpu(c));
      state_->decided.store(stamp << 2 | 2 | std::uint64_t{shape}, std::memory_order_relaxed);
      return shape;
    } else {
      return cpu_binds(demand_, cluster_cpu_per_gpu(c));
    }
  }

  // With observe_demand, under the mutex: c (counted again only when a CapacityVersioned cluster's
  // capacity stamp moves), then the pods counted if they settle the side, else the configured d.
  template <Cluster C>
  bool decide(const C& c) const {
    double cluster = 0.0;
    if constexpr (CapacityVersioned<C>) {
      const std::uint64_t stamp = adl::call_cluster_capacity_version(c);
      shared_state& s = *state_;
      if (s.counted_stamp != stamp) {  // stamps are never 0 and never reused (node_versions.hpp)
        s.counted_cpu_per_gpu = cluster_cpu_per_gpu(c);
        s.counted_stamp = stamp;
      }
      cluster = s.counted_cpu_per_gpu;
    } else {
      cluster = cluster_cpu_per_gpu(c);
    }
    if (const std::optional<bool> seen = state_->observed.binds(cluster)) return *seen;
    return cpu_binds(demand_, cluster);
  }

  // Under the mutex: p into the count unless its name is in the seen table (a pod asked about
  // again; seen_names). A pod without a name is counted each time.
  void count(const pod& p) const {
    if (!p.name.empty() && !state_->seen->insert(p.name)) return;
    state_->observed.add(p);
  }

  fill_aware_scorer mean_;
  fill_aware_scorer shape_;
  double demand_ = 0.0;
  double keep_blocks_ = 0.0;
  bool counted_holes_ = false;  // counted_holes with observe_demand
  std::vector<one_gpu_share> configured_holes_;  // the configured typical pods' (counted_holes_ only)
  std::array<double, max_gpus_per_node + 1> configured_share_{};  // p_k of the configured typical pods
  struct counted_forms {
    fill_aware_scorer mean, shape;  // mean_ and shape_ with the counted hole table and the block term
  };
  // The last PreScore's decision, and the pod and cluster it was made for (select's one-shot reuse);
  // the count of c; the pods counted (observe_demand). Shared by the copies of one scorer.
  struct shared_state {
    std::atomic<bool> by_shape{false};
    std::atomic<const void*> pod{nullptr};
    std::atomic<const void*> cluster{nullptr};
    std::atomic<std::uint64_t> decided{0};  // decide_configured's cache; 0 before the first count
    std::mutex mutex;  // observe_demand: guards the fields below
    std::uint64_t counted_stamp = 0;  // 0: c not counted yet
    double counted_cpu_per_gpu = 0.0;
    demand_count observed;
    std::unique_ptr<seen_names> seen;  // the pods counted (observe_demand; null otherwise)
    // The block term and the counted hole table: set under the mutex (blocks_decided and forms_ready
    // last, with release order) and read without it; with observe_demand they are set again as the
    // count doubles, in PreScore, which the count's host runs on one thread, before it scores the pod.
    std::atomic<bool> blocks_decided{false};
    double blocks_counted_at = 0.0;  // the pods counted when the term was last set
    bool blocks_on = false;          // some block_lost[k] > 0 (keep_blocks > 0 and multi-GPU pods)
    std::array<double, max_gpus_per_node + 1> block_lost{};
    double holes_checked_at = 0.0;  // the pods counted when the switch was last checked
    double holes_counted_at = 0.0;  // the pods counted when the hole table was last taken; 0: configured
    std::unique_ptr<counted_forms> forms;  // null: neither is on
    std::atomic<const counted_forms*> forms_ready{nullptr};  // forms.get(), published
  };
  std::shared_ptr<shared_state> state_;
};

// keep_blocks of the gpusched policy (FillAwareRefill; ADR 0017, "Amendment 9"): beta = 3, chosen
// against 10 on two 300-node clusters drawn from the openb nodes under sustained load (node seeds 7
// and 8, docs/quality.md; beta = 1 was checked there later) and checked on four clusters not used
// for the choice. It acts only once the cluster has turned over, so the paper protocol's results do
// not depend on it.
inline constexpr double refill_keep_blocks = 3.0;

// cpu_only_fit of the gpusched policy (FillAwareRefill; ADR 0017, "Amendment 12"): 0.01, chosen on
// seven draws each of gen-cpu250 and gen-cpu300 (generator seeds 1-7; 0.001 to 1, then 0.005 to
// 0.02) and checked on five more of each (seeds 8-12) not looked at before. It acts only in the
// by-shape form, when the workload's CPU binds.
inline constexpr double refill_cpu_only_fit = 0.01;

// FillAwareRefill, gpusched's policy: FillAwareBinding whose hole refill chance is taken per sharing
// pod, kappa = fill_per_sharing_pod / P_share (refill_fill_per_sharing_pod unless the options say
// otherwise; docs/adr/0017-quality-method.md, amendments 2 and 3), which counts the pods it sees
// for its CPU term (observe_demand, Amendment 7), and which keeps GPU blocks for multi-GPU pods once
// the cluster has turned over (keep_blocks = refill_keep_blocks, Amendment 9), and which, when CPU
// binds, sends CPU-only pods where the least CPU is left beyond the free GPUs' need (cpu_only_fit =
// refill_cpu_only_fit, Amendment 12). A type of its own for its name.
class fill_aware_refill_scorer : public fill_aware_binding_scorer {
 public:
  explicit fill_aware_refill_scorer(const typical_workload& w) : fill_aware_refill_scorer(w, defaults()) {}
  fill_aware_refill_scorer(const typical_workload& w, fill_aware_options o) : fill_aware_binding_scorer(w, o) {}

  [[nodiscard]] static constexpr std::string_view name() noexcept { return "FillAwareRefill"; }
  // FillAware's defaults with fill_per_sharing_pod = refill_fill_per_sharing_pod, keep_blocks =
  // refill_keep_blocks, drain_blocks, counted_holes and cpu_only_fit = refill_cpu_only_fit;
  // observe_demand off
  // (a host that hands it every pod once, in order, on one thread may turn it on, as the simulator's
  // policy does: ADR 0017, "Amendment 7").
  [[nodiscard]] static fill_aware_options defaults() noexcept {
    fill_aware_options o;
    o.fill_per_sharing_pod = refill_fill_per_sharing_pod;
    o.keep_blocks = refill_keep_blocks;
    o.drain_blocks = true;   // acts only with the block term (Amendment 11)
    o.counted_holes = true;  // acts only with observe_demand (Amendment 10)
    o.cpu_only_fit = refill_cpu_only_fit;  // acts only in the by-shape form (Amendment 12)
    return o;
  }
};

}  // namespace gpusched
