// FillAware: gpusched's own fragmentation-aware GPU placement, a lookahead over the workload's
// arrival distribution that asks where the GPU share left over by a placement will *eventually* be
// filled, not only whether the very next pod could use it (FGD's question).
//
// gpusched's heuristic (not a published formula). A node's cost is
//   cost(n) = sum over its devices g of E(free_g)  +  cpu_weight * S(n)
// and a placement scores how much it lowers that cost. Higher is better.
//
// E(h), the expected eventual waste of a device with h milli-GPU free, comes from the workload's
// one-GPU pod shapes (typical_workload, as FGD uses): with q(s) the share of pods that ask for one
// GPU with s milli and Q(h) = sum_{s <= h} q(s),
//   E(0) = 0,   E(h) = (1 - L(h)) * h + L(h) * sum_{s <= h} q(s) E(h - s) / Q(h),   L(h) = min(1, kappa Q(h)).
// L(h) is the chance that the hole is refilled before the run ends: a hole that only rare shapes fit
// competes with many others for few pods and stays empty (L small: E ~ h), while one that common
// shapes fit is refilled, recursively, by the shapes that fit. kappa (fill_competition) is how many
// later arrivals a hole effectively sees; with kappa -> infinity every fillable hole counts as filled.
//
// S(n) = max(0, free GPU milli - cpu_left * 1000 / r) is the GPU share the node's CPU cannot serve at
// the workload's mean CPU per GPU r (milli-CPU per 1000 milli-GPU of the GPU shapes): CPU-only and
// CPU-heavy pods go where CPU is plentiful relative to free GPUs, so GPUs are not stranded.
//
// Devices: a one-GPU share pod tries each fitting device (distinct free shares only) and takes the
// best, first index on ties; other pods take the lowest-index devices with the share (whole GPUs:
// the lowest-index free ones). The node's model filter, CPU and memory are the preflight's business.
//
// Scores are raw, in thousandths of a milli-GPU of cost saved (not 0..100): use the scorer alone or
// give the other plugins weights on that scale. Constants were chosen on the openb default trace
// (seeds 42-47); see docs/simulator.md for how they generalise. Memory: 8 KiB for the table; on a
// NodeVersioned cluster (the replay's) a score cache of 16 bytes per (pod shape, node) pair scored,
// at most 16 MiB (score_nodes).
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "gpusched/config.hpp"
#include "gpusched/core/binding.hpp"
#include "gpusched/core/cluster.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/core/pod.hpp"
#include "gpusched/schedule/node_versions.hpp"
#include "gpusched/scoring/fragmentation.hpp"
#include "gpusched/scoring/scorer.hpp"
#include "gpusched/scoring/typical_pods.hpp"

namespace gpusched {

struct fill_aware_options {
  double fill_competition = 50.0;  // kappa: L(h) = min(1, kappa * Q(h))
  double cpu_weight = 0.5;         // weight of CPU-stranded GPU share against hole waste
  double cpu_per_gpu = 0.0;        // r, milli-CPU per whole GPU; 0: the workload's GPU shapes' mean
  // Experimental (docs/adr/0017-quality-method.md; off by default, the policy's results unchanged):
  // S(n) as the expectation over the workload's GPU shapes of the share stranded at each shape's own
  // CPU per GPU, instead of at the mean ratio r. cpu_per_gpu is then unused.
  bool cpu_by_shape = false;
  // Experimental (the control of ADR 0017's experiment, off): only CPU-only pods are scored by shape,
  // GPU pods keep the mean ratio. cpu_by_shape, when set, scores every pod by shape.
  bool cpu_by_shape_cpu_only = false;
  // Refill chance per sharing pod (docs/adr/0017-quality-method.md, "Amendment 2"; 0: off, the
  // policy's results unchanged). When > 0, kappa = fill_per_sharing_pod / P_share, P_share the
  // workload's share of pods that ask for part of one GPU (sharing_pod_share): a hole competes with
  // the other holes, which the sharing pods make, for the later arrivals that fit it, so the arrivals
  // a hole sees scale with 1 / P_share. fill_competition is then unused.
  double fill_per_sharing_pod = 0.0;
  // FillAwareBinding / FillAwareRefill only (scoring/fill_aware_binding.hpp; off: the decision of the
  // configured workload alone). The workload's CPU per GPU d is also counted from the pods PreFilter
  // sees, and decides which CPU term is used once it is two standard errors from the cluster's.
  bool observe_demand = false;
  // FillAwareBinding / FillAwareRefill only: beta of the block term (docs/adr/0017-quality-method.md,
  // "Amendment 9"; 0: off). Once the cluster has turned over (gpu_turnover::turned_over, on a
  // TurnoverCounted cluster), a placement that leaves a node's wholly free GPUs unable to hold a k-GPU
  // pod (k >= 2) where they could before costs beta * p_k * 1000 k milli-GPU, p_k the share of pods
  // of k whole GPUs among the pods counted (observe_demand) or else among the configured typical
  // pods. Within 0..7 (fill_aware_binding_scorer::max_keep_blocks).
  double keep_blocks = 0.0;
  // FillAwareBinding / FillAwareRefill only, with the block term on (docs/adr/0017-quality-method.md,
  // "Amendment 11"; off: only the shapes a placement takes away now are charged). A node of G GPUs is
  // a G-GPU block again once the pods on it have all left; a pod placed there while n pods hold it
  // delays that by 1 / (n + 1) of a pod's lifetime, so it also costs lost[G] / (n + 1)
  // (fill_aware_scorer::drain_loss; a GPU pod on a node with no GPU in use pays the block term's
  // lost[G] instead).
  bool drain_blocks = false;
  // FillAwareBinding / FillAwareRefill only, with observe_demand (docs/adr/0017-quality-method.md,
  // "Amendment 10"; off: the configured typical pods' table throughout). While the one-GPU shares of
  // the pods counted differ from the configured typical pods' by more than that table can resolve
  // (hole_shares_differ, checked as the count doubles), the hole table E is built from the count.
  bool counted_holes = false;
  // With cpu_by_shape (FillAwareBinding's form when CPU binds; docs/adr/0017-quality-method.md,
  // "Amendment 12"; 0: off). A CPU-only pod's saving also falls by cpu_only_fit times the node's CPU
  // surplus after it, the CPU left over what its free GPUs need at the mean ratio r, in milli-GPU
  // (cpu_left x 1000 / r - free GPU milli): among nodes where it strands about as much, the pod goes
  // where the least CPU is left beyond the GPUs' need, keeping large surpluses for the CPU-heavy GPU
  // pods that only such nodes can take. Within 0..1; the charge is at most a quarter of
  // fill_aware_scorer::score_offset.
  double cpu_only_fit = 0.0;
};

// fill_per_sharing_pod of the gpusched policy (FillAwareRefill): FillAware's kappa = 50, chosen on the openb
// default trace (seeds 42-47), times that trace's P_share = 0.3732 (its 35 typical shapes), so that
// the default trace keeps kappa = 50 and other workloads scale it by 1 / P_share (ADR 0017,
// "Amendment 2"). Re-expresses the existing constant; no value was fitted to another trace.
inline constexpr double refill_fill_per_sharing_pod = 50.0 * 0.3732;

// The share of the workload's pods (typical shapes, CPU-only ones included) that ask for part of
// one GPU: the pods that leave partial-GPU holes. 0 for a workload without them.
inline double sharing_pod_share(const typical_workload& w) {
  double total = 0.0, sharing = 0.0;
  for (const auto& t : w.pods()) {
    total += t.probability;
    if (t.num_gpu == 1 && t.gpu_milli > 0 && t.gpu_milli < gpu_milli_whole) sharing += t.probability;
  }
  return total > 0 ? sharing / total : 0.0;
}

// The kappa of the hole table under options o for a workload whose share of sharing pods is
// share (sharing_pod_share): fill_competition, or fill_per_sharing_pod / share.
inline double fill_competition_at(double share, const fill_aware_options& o) {
  if (!(o.fill_per_sharing_pod >= 0.0) || !std::isfinite(o.fill_per_sharing_pod)) {
    throw invalid_argument_error("fill_aware_options.fill_per_sharing_pod", "must be a finite number >= 0");
  }
  if (o.fill_per_sharing_pod == 0.0) return o.fill_competition;
  // No sharing pods: no hole has a competitor made by the workload; every hole it can fill is refilled.
  return share > 0 ? o.fill_per_sharing_pod / share : std::numeric_limits<double>::max();
}

// The kappa of the hole table under options o: fill_competition, or fill_per_sharing_pod / P_share.
inline double effective_fill_competition(const typical_workload& w, const fill_aware_options& o) {
  return fill_competition_at(sharing_pod_share(w), o);
}

// A one-GPU pod shape of the hole table: its share of one GPU (milli) and its probability among all
// the workload's pods.
struct one_gpu_share {
  std::int32_t milli = 0;
  double probability = 0.0;
};

// The one-GPU shapes of a workload as the hole table reads them.
inline std::vector<one_gpu_share> one_gpu_shares(const typical_workload& w) {
  double total = 0.0;
  for (const auto& t : w.pods()) total += t.probability;
  std::vector<one_gpu_share> q;
  for (const auto& t : w.pods()) {
    if (t.num_gpu == 1) q.push_back({t.gpu_milli, total > 0 ? t.probability / total : 0.0});
  }
  return q;
}

// E(h) for h = 0..1000 (see the header comment), from the one-GPU shapes q.
inline std::vector<double> hole_waste_table(std::span<const one_gpu_share> q, double kappa) {
  if (!(kappa >= 0.0) || !std::isfinite(kappa))
    throw invalid_argument_error("fill_aware_options.fill_competition", "must be a finite number >= 0");
  std::vector<double> e(gpu_milli_whole + 1, 0.0);
  for (int h = 1; h <= gpu_milli_whole; ++h) {
    double fit = 0.0, refill = 0.0;
    for (const auto& [s, pr] : q) {
      if (s <= h) {
        fit += pr;
        refill += pr * e[static_cast<std::size_t>(h - s)];
      }
    }
    const double l = std::min(1.0, kappa * fit);
    e[static_cast<std::size_t>(h)] = (1 - l) * h + (fit > 0 ? l * refill / fit : 0.0);
  }
  return e;
}

// E(h) for h = 0..1000 from the workload's one-GPU shapes.
inline std::vector<double> hole_waste_table(const typical_workload& w, double kappa) {
  return hole_waste_table(one_gpu_shares(w), kappa);
}

// The workload's mean CPU per whole GPU over its GPU shapes (milli-CPU per 1000 milli-GPU).
inline double mean_cpu_per_gpu(const typical_workload& w) {
  double cpu = 0.0, gpu = 0.0;
  for (const auto& t : w.pods()) {
    if (t.num_gpu == 0) continue;
    cpu += t.probability * static_cast<double>(t.cpu_milli);
    gpu += t.probability * static_cast<double>(t.gpu_milli) * t.num_gpu;
  }
  return gpu > 0 ? cpu / gpu * gpu_milli_whole : 0.0;
}

// GPU share a node's CPU cannot serve at r milli-CPU per GPU.
GPUSCHED_HD constexpr double cpu_stranded_gpu_milli(double free_gpu_milli, double cpu_left,
                                                    double cpu_per_gpu) noexcept {
  if (cpu_per_gpu <= 0) return 0.0;
  const double servable = cpu_left * gpu_milli_whole / cpu_per_gpu;
  return free_gpu_milli > servable ? free_gpu_milli - (servable > 0 ? servable : 0.0) : 0.0;
}

struct fill_aware_pick {
  double saved = 0.0;  // cost before - cost after (higher is better)
  gpu_set gpus = 0;
  bool fits = false;
};

// FillAware's evaluation over plain arrays: free_milli per device, cpu_left, the devices of a model
// the pod accepts, the pod (cpu, per-GPU share, GPU count), the table E[0..1000], r and the CPU weight.
GPUSCHED_HD fill_aware_pick fill_aware_evaluate(const std::int32_t* free_milli, int gpus, milli cpu_left,
                                                gpu_set device_ok, milli pod_cpu, std::int32_t pod_milli,
                                                std::int32_t pod_num, const double* e, double cpu_per_gpu,
                                                double cpu_weight) noexcept {
  fill_aware_pick best;
  milli idle = 0;
  for (int g = 0; g < gpus; ++g) idle += free_milli[g];
  const double stranded_before =
      cpu_stranded_gpu_milli(static_cast<double>(idle), static_cast<double>(cpu_left), cpu_per_gpu);
  const double stranded_after = cpu_stranded_gpu_milli(static_cast<double>(idle - milli{pod_milli} * pod_num),
                                                       static_cast<double>(cpu_left - pod_cpu), cpu_per_gpu);
  const double cpu_saved = cpu_weight * (stranded_before - stranded_after);
  if (pod_num == 1 && pod_milli < gpu_milli_whole) {
    for (int i = 0; i < gpus; ++i) {
      if (((device_ok >> i) & 1U) == 0 || free_milli[i] < pod_milli) continue;
      // A device with the same free share as an earlier one saves exactly as much and so never
      // beats it (strict >): no same_free_as_earlier pass, which was quadratic in the devices.
      const double saved = e[free_milli[i]] - e[free_milli[i] - pod_milli] + cpu_saved;
      if (!best.fits || saved > best.saved) {
        best.fits = true;
        best.saved = saved;
        best.gpus = gpu_set{1} << i;
      }
    }
    return best;
  }
  double saved = cpu_saved;
  gpu_set taken = 0;
  for (std::int32_t k = 0; k < pod_num; ++k) {
    const int pick = sub_next_device(free_milli, gpus, device_ok, taken, pod_milli);
    if (pick < 0) return best;
    taken |= gpu_set{1} << pick;
    saved += e[free_milli[pick]] - e[free_milli[pick] - pod_milli];
  }
  best.fits = true;
  best.saved = saved;
  best.gpus = taken;
  return best;
}

class fill_aware_scorer {
 public:
  explicit fill_aware_scorer(const typical_workload& w, fill_aware_options o = {}) : opts_(o) {
    if (!(o.cpu_weight >= 0.0) || !std::isfinite(o.cpu_weight)) {
      throw invalid_argument_error("fill_aware_options.cpu_weight", "must be a finite number >= 0");
    }
    if (!(o.cpu_per_gpu >= 0.0) || !std::isfinite(o.cpu_per_gpu)) {
      throw invalid_argument_error("fill_aware_options.cpu_per_gpu", "must be a finite number >= 0");
    }
    if (!(o.cpu_only_fit >= 0.0 && o.cpu_only_fit <= 1.0)) {
      throw invalid_argument_error("fill_aware_options.cpu_only_fit", "must be within 0..1");
    }
    table_ = std::make_shared<const std::vector<double>>(hole_waste_table(w, effective_fill_competition(w, o)));
    cpu_per_gpu_ = o.cpu_per_gpu > 0 ? o.cpu_per_gpu : mean_cpu_per_gpu(w);
    if (o.cpu_by_shape || o.cpu_by_shape_cpu_only) {
      double total = 0.0;
      for (const auto& t : w.pods()) {
        if (t.num_gpu > 0 && t.gpu_milli > 0) total += t.probability;
      }
      for (const auto& t : w.pods()) {
        if (t.num_gpu == 0 || t.gpu_milli == 0 || total <= 0) continue;
        const double gpu = static_cast<double>(t.gpu_milli) * t.num_gpu;
        const double r = static_cast<double>(t.cpu_milli) * gpu_milli_whole / gpu;
        ratios_.emplace_back(r, t.probability / total);
      }
    }
  }

  [[nodiscard]] static constexpr std::string_view name() noexcept { return "FillAware"; }
  [[nodiscard]] std::span<const double> hole_waste() const noexcept { return *table_; }
  [[nodiscard]] double cpu_per_gpu() const noexcept { return cpu_per_gpu_; }

  // The block term (fill_aware_options::keep_blocks; FillAwareBinding switches it on,
  // scoring/fill_aware_binding.hpp): lost[k], k = 0..max_gpus_per_node, is the cost in milli-GPU of a
  // placement after which node n's wholly free GPUs no longer hold k GPUs where they did before; the
  // placement's saving falls by the sum of lost[k] over the k it takes away, and a sharing pod's
  // device is chosen with it (add_block_term); with fill_aware_options::drain_blocks it also falls
  // by the drain, lost[G] / (n + 1) on a node of G GPUs (drain_loss). All zero: off. Clears the
  // score cache. Throws invalid_argument_error for a negative or non-finite cost or a sum of costs of
  // score_offset / 2 or more (a score must stay positive), changing nothing.
  void set_block_costs(std::span<const double> lost) {
    if (lost.size() > block_cost_.size())
      throw invalid_argument_error("block costs", "at most max_gpus_per_node + 1 entries");
    for (const double x : lost) {
      if (!(x >= 0.0) || !std::isfinite(x)) throw invalid_argument_error("block costs", "must be finite and >= 0");
    }
    double total = 0.0;
    for (const double x : lost) total += x;
    if (!(total < score_offset / 2)) throw invalid_argument_error("block costs", "must sum to less than 500000 milli-GPU");
    double sum = 0.0;
    for (std::size_t k = 0; k < block_cost_.size(); ++k) {
      block_lost_[k] = k < lost.size() ? lost[k] : 0.0;
      sum += block_lost_[k];
      block_cost_[k] = sum;
    }
    memo_ = memo{};
  }

  // The hole table from the one-GPU shapes q (one_gpu_share: probabilities among all the pods q was
  // taken from) in place of the workload's it was built with; kappa as the options say, at q's share
  // of sharing pods (fill_competition_at). The counted table of FillAwareBinding (counted_holes).
  // Clears the score cache. Throws invalid_argument_error for a share outside 1..1000 milli or a
  // probability outside 0..1, changing nothing.
  void set_hole_shares(std::span<const one_gpu_share> q) {
    double share = 0.0;
    for (const auto& [m, pr] : q) {
      if (m < 1 || m > gpu_milli_whole) {
        throw invalid_argument_error("hole shares", "a share must be within 1..1000 milli");
      }
      if (!(pr >= 0.0 && pr <= 1.0)) throw invalid_argument_error("hole shares", "a probability must be within 0..1");
      if (m < gpu_milli_whole) share += pr;
    }
    table_ = std::make_shared<const std::vector<double>>(hole_waste_table(q, fill_competition_at(share, opts_)));
    memo_ = memo{};
  }

  // cpu_by_shape: E over the GPU shapes k (probability w_k) of cpu_stranded_gpu_milli at r_k.
  [[nodiscard]] double stranded_by_shape(double free_gpu_milli, double cpu_left) const noexcept {
    double s = 0.0;
    for (const auto& [r, w] : ratios_) s += w * cpu_stranded_gpu_milli(free_gpu_milli, cpu_left, r);
    return s;
  }

  // Cost saved by the best placement of p on n, in thousandths of a milli-GPU, offset so that it is
  // positive (score_offset - cost growth); 0 when p does not fit n's devices.
  static constexpr double score_offset = 1e6;  // milli-GPU: above any cost growth of one placement
  template <Cluster C>
  [[nodiscard]] std::int64_t score(const C& c, const pod& p, node_index n) const {
    const fill_aware_pick pick = evaluate(c, p, n);
    return pick.fits ? round_half_away((score_offset + pick.saved) * 1000.0) : 0;
  }

  // SpanScorer: score(c, p, n) for each of nodes. On a NodeVersioned cluster
  // (schedule/node_versions.hpp) a node whose stamp is the one its score for p's shape was cached
  // under keeps that score: in a replay one placement changes one node, so a pod re-evaluates only
  // the nodes changed since its shape was last scored (perf, issue 14: FillAware's evaluation was
  // about 40 % of an openb replay). The cache serves the first thread that scores through this
  // object; other threads compute every score, so a scorer shared between threads stays correct.
  template <Cluster C>
  void score_nodes(const C& c, const pod& p, std::span<const node_index> nodes, std::int64_t* out) const {
    if constexpr (NodeVersioned<C>) {
      if (memo::slot* sl = memo_.slot_for(p, num_nodes(c)); sl != nullptr) {
        for (std::size_t j = 0; j < nodes.size(); ++j) {
          const node_index n = nodes[j];
          const std::uint64_t stamp = adl::call_node_state_version(c, n);
          if (sl->stamp[n] != stamp) {
            sl->score[n] = score(c, p, n);
            sl->stamp[n] = stamp;
          }
          out[j] = sl->score[n];
        }
        return;
      }
    }
    for (std::size_t j = 0; j < nodes.size(); ++j) out[j] = score(c, p, nodes[j]);
  }

  // GpuSelector: the devices of the best placement on n (0 when p does not fit).
  template <Cluster C>
  [[nodiscard]] gpu_set select(const C& c, const pod& p, node_index n) const {
    if (!p.wants_gpu()) return 0;
    const fill_aware_pick pick = evaluate(c, p, n);
    return pick.fits ? pick.gpus : 0;
  }

 private:
  template <Cluster C>
  fill_aware_pick evaluate(const C& c, const pod& p, node_index n) const {
    const node_state s = traits_of<C>::node_resources(c, n);
    const int gpus = std::min(s.gpu_count, max_gpus_per_node);
    std::int32_t free[max_gpus_per_node];
    gpu_set ok = 0;
    if (p.allowed_models.empty()) {  // every device's model is allowed: no per-device name compare
      for (int g = 0; g < gpus; ++g) free[g] = traits_of<C>::node_gpu(c, n, g).milli_free;
      ok = gpus >= 64 ? ~gpu_set{0} : (gpu_set{1} << gpus) - 1;
    } else {
      for (int g = 0; g < gpus; ++g) {
        const gpu_device& d = traits_of<C>::node_gpu(c, n, g);
        free[g] = d.milli_free;
        if (p.model_allowed(d.model)) ok |= gpu_set{1} << g;
      }
    }
    const milli cpu_left = s.cpu_capacity - s.cpu_allocated;
    fill_aware_pick pick;
    if (!opts_.cpu_by_shape && !(opts_.cpu_by_shape_cpu_only && p.num_gpu == 0)) {
      pick = fill_aware_evaluate(free, gpus, cpu_left, ok, p.cpu_milli, p.gpu_milli, p.num_gpu, table_->data(),
                                 cpu_per_gpu_, opts_.cpu_weight);
    } else {
      // The hole term alone (r = 0 switches the mean-ratio term off), then the CPU term by shape: it
      // is the same for every device choice, so adding it afterwards ranks devices as before.
      pick = fill_aware_evaluate(free, gpus, cpu_left, ok, p.cpu_milli, p.gpu_milli, p.num_gpu, table_->data(), 0.0,
                                 0.0);
      if (pick.fits) {
        const double idle = static_cast<double>(gpu_milli_idle(free, gpus));
        const double after_gpu = idle - static_cast<double>(milli{p.gpu_milli} * p.num_gpu);
        const double after_cpu = static_cast<double>(cpu_left - p.cpu_milli);
        pick.saved += opts_.cpu_weight * (stranded_by_shape(idle, static_cast<double>(cpu_left)) -
                                          stranded_by_shape(after_gpu, after_cpu));
        if (p.num_gpu == 0 && opts_.cpu_by_shape && opts_.cpu_only_fit > 0.0 && cpu_per_gpu_ > 0.0) {
          // At most a quarter of score_offset, so that a node of absurd CPU (or a workload of almost
          // no CPU per GPU) cannot drive a fitting pod's score to 0 or below.
          const double surplus = after_cpu * gpu_milli_whole / cpu_per_gpu_ - idle;
          pick.saved -= std::min(opts_.cpu_only_fit * surplus, score_offset / 4);
        }
      }
    }
    if (block_cost_.back() > 0.0 && pick.fits) add_block_term(free, gpus, ok, p, s, pick);
    return pick;
  }

  // The block term on a pick. A pod of whole GPUs loses the same blocks whichever free GPUs it takes
  // (each shrinks the node's free block by one), so only its saving moves. A sharing pod may take a
  // partly used device instead of a wholly free one: its device is chosen again over the same
  // candidates as fill_aware_evaluate's (strict >, first index on ties), the hole saving of each less
  // the blocks its taking would split; the rest of the saving (the CPU terms) is the same for every
  // device.
  void add_block_term(const std::int32_t* free, int gpus, gpu_set ok, const pod& p, const node_state& s,
                      fill_aware_pick& pick) const {
    if (opts_.drain_blocks) pick.saved -= drain_loss(free, gpus, p, s);
    if (p.num_gpu != 1 || p.gpu_milli >= gpu_milli_whole) {
      pick.saved -= block_loss(free, gpus, pick.gpus);
      return;
    }
    const double* e = table_->data();
    const auto hole_saving = [&](int g) { return e[free[g]] - e[free[g] - p.gpu_milli]; };
    double split = -1.0;  // what taking any one wholly free GPU costs (the same for each), once needed
    int chosen = 0;
    while (((pick.gpus >> chosen) & 1U) == 0) ++chosen;
    const double rest = pick.saved - hole_saving(chosen);
    bool found = false;
    for (int g = 0; g < gpus; ++g) {
      if (((ok >> g) & 1U) == 0 || free[g] < p.gpu_milli) continue;
      if (free[g] >= gpu_milli_whole && split < 0.0) split = block_loss(free, gpus, gpu_set{1} << g);
      const double saved = rest + hole_saving(g) - (free[g] >= gpu_milli_whole ? split : 0.0);
      if (!found || saved > pick.saved) {
        found = true;
        pick.saved = saved;
        pick.gpus = gpu_set{1} << g;
      }
    }
  }

  // The blocks lost by taking `taken` from a node whose devices have `free` milli free: the cost of
  // the k-GPU shapes that fit its wholly free GPUs before and not after, block_cost_[w_before] -
  // block_cost_[w_after].
  [[nodiscard]] double block_loss(const std::int32_t* free, int gpus, gpu_set taken) const noexcept {
    int before = 0, after = 0;
    for (int g = 0; g < gpus; ++g) {
      if (free[g] < gpu_milli_whole) continue;
      ++before;
      after += ((taken >> g) & 1U) == 0 ? 1 : 0;
    }
    return block_cost_[static_cast<std::size_t>(before)] - block_cost_[static_cast<std::size_t>(after)];
  }

  // The whole node's drain (fill_aware_options::drain_blocks): a pod placed on a node of G GPUs
  // costs lost[G] / (n + 1), n the pods holding the node. Were the remaining lifetimes of those n
  // pods independent and exponential, the node would empty after H_n mean lifetimes (H_n the n-th
  // harmonic number: the maximum of n exponentials, by Renyi's representation of their order
  // statistics), and one more pod adds H_(n+1) - H_n = 1 / (n + 1). A scorer reads devices, not pods,
  // so n = max(b, G x CPU allocated / CPU capacity), b the GPUs in use: the pods counted by the GPUs
  // they hold (a shared GPU once) or by the CPU they hold in units of the node's CPU per GPU,
  // whichever is more (CPU-only pods hold no GPU and must leave too). A GPU pod on a node with no
  // GPU in use pays nothing here: it takes the G-GPU shape now, which the block term charges
  // (lost[G], the drain's cost at n = 0). The same for every device of the node, so it moves the
  // node's score and not the device chosen (ADR 0017, "Amendment 11").
  [[nodiscard]] double drain_loss(const std::int32_t* free, int gpus, const pod& p,
                                  const node_state& s) const noexcept {
    if (gpus == 0) return 0.0;  // no GPU: no block to drain
    int busy = 0;
    for (int g = 0; g < gpus; ++g) busy += free[g] < gpu_milli_whole ? 1 : 0;
    if (busy == 0 && p.num_gpu > 0) return 0.0;
    double n = busy;
    if (s.cpu_capacity > 0) {
      const double held = static_cast<double>(gpus) * static_cast<double>(s.cpu_allocated);  // G x CPU held
      n = std::max(n, held / static_cast<double>(s.cpu_capacity));
    }
    return block_lost_[static_cast<std::size_t>(gpus)] / (n + 1.0);
  }

  // Scores cached per (pod shape, node) under the node's stamp: 16 bytes per pair, at most
  // max_pairs pairs (least recently used shapes are evicted). A copy of the scorer starts empty.
  class memo {
   public:
    static constexpr std::size_t max_pairs = std::size_t{1} << 20;
    struct slot {
      milli cpu = 0;
      std::int32_t gpu_milli = 0;
      std::int32_t num_gpu = 0;
      std::vector<short_name> models;
      std::uint64_t last_use = 0;
      std::vector<std::uint64_t> stamp;  // 0: none (stamps start at 1)
      std::vector<std::int64_t> score;
      [[nodiscard]] bool matches(const pod& p) const noexcept {
        return cpu == p.cpu_milli && gpu_milli == p.gpu_milli && num_gpu == p.num_gpu && models == p.allowed_models;
      }
    };

    memo() = default;
    memo(const memo&) noexcept {}
    memo& operator=(const memo&) noexcept {  // the scorer assigned to may score differently: start empty
      slots_.clear();
      owner_.store(std::thread::id{}, std::memory_order_relaxed);
      last_ = std::numeric_limits<std::size_t>::max();
      return *this;
    }
    ~memo() = default;

    // The slot of p's shape sized for node_count nodes, or null when this thread does not own the
    // cache (or node_count is 0 or too large for max_pairs).
    slot* slot_for(const pod& p, std::size_t node_count) {
      const std::thread::id me = std::this_thread::get_id();
      std::thread::id none{};
      if (owner_.load(std::memory_order_relaxed) != me && !owner_.compare_exchange_strong(none, me)) return nullptr;
      if (last_ < slots_.size() && slots_[last_].stamp.size() == node_count && slots_[last_].matches(p)) {
        return &slots_[last_];
      }
      if (node_count == 0 || max_pairs / node_count == 0) return nullptr;
      ++clock_;
      for (std::size_t i = 0; i < slots_.size(); ++i) {
        if (slots_[i].matches(p)) {
          if (slots_[i].stamp.size() != node_count) reset(slots_[i], node_count);
          slots_[i].last_use = clock_;
          last_ = i;
          return &slots_[i];
        }
      }
      std::size_t i = slots_.size();
      if (slots_.size() < max_pairs / node_count) {
        slots_.emplace_back();
      } else {  // evict the least recently used shape
        i = 0;
        for (std::size_t j = 1; j < slots_.size(); ++j) {
          if (slots_[j].last_use < slots_[i].last_use) i = j;
        }
      }
      slot& sl = slots_[i];
      sl.cpu = p.cpu_milli;
      sl.gpu_milli = p.gpu_milli;
      sl.num_gpu = p.num_gpu;
      sl.models = p.allowed_models;
      sl.last_use = clock_;
      reset(sl, node_count);
      last_ = i;
      return &sl;
    }

   private:
    static void reset(slot& sl, std::size_t node_count) {
      sl.stamp.assign(node_count, 0);
      sl.score.assign(node_count, 0);
    }
    std::atomic<std::thread::id> owner_{};
    std::vector<slot> slots_;
    std::size_t last_ = std::numeric_limits<std::size_t>::max();
    std::uint64_t clock_ = 0;
  };

  std::shared_ptr<const std::vector<double>> table_;
  std::array<double, max_gpus_per_node + 1> block_cost_{};  // keep_blocks: sum over k <= w of lost[k]; back() 0: off
  std::array<double, max_gpus_per_node + 1> block_lost_{};  // lost[k] itself (drain_blocks)
  std::vector<std::pair<double, double>> ratios_;  // cpu_by_shape: (milli-CPU per GPU, probability) per GPU shape
  double cpu_per_gpu_ = 0.0;
  fill_aware_options opts_;
  mutable memo memo_;
};

}  // namespace gpusched
