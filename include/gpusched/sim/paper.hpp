// The FGD paper's experiment protocol (Weng et al., USENIX ATC'23), as the authors' simulator runs it
// (hkust-adsl/kubernetes-scheduler-simulator pkg/simulator/core.go Simulate, simulator.go
// SortClusterPods / TunePodsByNodeTotalResource / tuneUpPods / tuneDownPods):
//   1. the trace's pods in name order, shuffled with the seed;
//   2. tuning to `tune` x cluster GPU capacity: below it, clones of pods drawn uniformly (with
//      replacement) from the trace are appended until the next clone's per-GPU share would pass the
//      target (the authors' stop test adds gpu_milli, not gpu_milli * num_gpu, and stops at the first
//      clone that would overshoot); above it, random pods are removed until the demand fits;
//   3. arrivals only, no departures; each pod is tried once, in order; a pod that fits nowhere
//      fails and is never retried;
//   4. after every pod: arrived GPU share (failed pods included), allocated GPU share, and the
//      cluster's fragmentation over the trace's typical pod shapes;
//   5. nodes in a seeded random order (the authors prefix node names with a random permutation,
//      syncClusterResourceList), and ties between equally scored nodes go to the first node in that
//      order. Kubernetes' selectHost would break ties uniformly at random, but the authors' results
//      are only reproduced with the order-driven rule (see docs/simulator.md: with random ties FGD
//      allocates 90.5%, not 95.4%); their scheduler is a fork (mental2008/kubernetes v1.20.5-minor)
//      we could not read. The Random baseline keeps the uniform rule: it scores every node alike.
// Randomness comes from gpusched::sim::rng seeded with the seed, not Go's math/rand, so runs agree
// with the authors' in distribution (means over seeds), not pod for pod.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <span>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "gpusched/core/error.hpp"
#include "gpusched/core/pod.hpp"
#include "gpusched/overcommit/overcommit_fit.hpp"
#include "gpusched/overcommit/overcommit_policy.hpp"
#include "gpusched/profile/static_profile.hpp"
#include "gpusched/queue/queue_sort.hpp"
#include "gpusched/schedule/schedule_one.hpp"
#include "gpusched/sim/driver.hpp"
#include "gpusched/sim/metrics.hpp"
#include "gpusched/sim/rng.hpp"
#include "gpusched/sim/replay_cluster.hpp"
#include "gpusched/sim/trace.hpp"

namespace gpusched::sim {

struct paper_options {
  double tune = 1.3;                       // target GPU demand, x cluster GPU capacity; <= 0 leaves the trace as is
  std::uint64_t seed = 42;                 // the authors use 42..51
  bool shuffle = true;                     // SHUFFLE_POD in their run scripts
  bool record_events = true;               // keep one event_sample per pod
  tie_break_rule ties = tie_break_rule::first_node;  // among equal scores, in the seeded node order
  // gpusched's: a pod that fits nowhere may preempt lower-priority pods (the driver's preempt
  // action, Kubernetes' DefaultPreemption); the victims are gone for good, as failed pods are. Off
  // in the paper's protocol.
  bool preemption = false;
};

namespace detail {
inline std::string plain_number(double x) {  // 1.3 -> "1.3" (std::to_string gives "1.300000")
  std::ostringstream s;
  s << x;
  return s.str();
}
}  // namespace detail

// The most arrivals the tuning may produce: 2^24 (16.8 million). Tuning up clones pods until their
// GPU demand reaches tune x capacity, so a trace whose pods request little GPU against a large
// cluster needs very many clones (none at all reach the target when no pod requests a GPU). The
// limit keeps the arrival list and the per-arrival events (32 bytes each) under about 600 MB; the
// openb default trace tuned to 130% has about 10,800 arrivals.
inline constexpr std::size_t max_paper_arrivals = std::size_t{1} << 24;

// The arrival sequence: indices into the (name-sorted) trace pods; clones repeat an index.
// Tuning up a trace that requests no GPU, or that would need more than max_paper_arrivals arrivals
// (estimated from the trace's mean GPU demand per pod before any clone is drawn, and checked again
// while drawing), throws invalid_argument_error naming paper_options.tune.
inline std::vector<std::uint32_t> paper_arrivals(std::span<const pod> pods, milli gpu_capacity, const paper_options& o,
                                                 rng& r) {
  if (!(o.tune <= 100.0)) throw invalid_argument_error("paper_options.tune", "must be a number <= 100");
  if (pods.size() > max_paper_arrivals) {
    throw invalid_argument_error("trace.pods", std::to_string(pods.size()) + " pods, more than the limit of " +
                                                   std::to_string(max_paper_arrivals) + " arrivals");
  }
  std::vector<std::uint32_t> order(pods.size());
  for (std::size_t i = 0; i < pods.size(); ++i) order[i] = static_cast<std::uint32_t>(i);
  if (o.shuffle) r.shuffle(std::span<std::uint32_t>(order));
  if (o.tune <= 0 || pods.empty()) return order;
  milli total = 0;
  for (const pod& p : pods) total += p.gpu_milli_total();
  const double target = o.tune * static_cast<double>(gpu_capacity);
  if (static_cast<double>(total) < target) {
    // Each clone adds on average total / n; reaching the target takes about n (target - total) / total.
    const double n = static_cast<double>(pods.size());
    const double need = total > 0 ? n + n * (target - static_cast<double>(total)) / static_cast<double>(total) : 0.0;
    if (total == 0 || need > static_cast<double>(max_paper_arrivals)) {
      const std::string why =
          total == 0
              ? "no pod of the trace requests a GPU, so no number of clones reaches the target"
              : "reaching it at the trace's mean of " + detail::plain_number(static_cast<double>(total) / n) +
                    " GPU milli per pod takes about " +
                    (need < 1e18 ? std::to_string(static_cast<std::uint64_t>(need)) : detail::plain_number(need)) +
                    " arrivals, more than the limit of " + std::to_string(max_paper_arrivals);
      throw invalid_argument_error("paper_options.tune", "tuning to " + detail::plain_number(o.tune) +
                                                             " x the GPU capacity of " + std::to_string(gpu_capacity) +
                                                             " milli: " + why +
                                                             " (tune <= 0 replays the trace as it is)");
    }
  }
  if (static_cast<double>(total) > target) {  // tuneDownPods
    while (static_cast<double>(total) > target && !order.empty()) {
      const auto idx = static_cast<std::size_t>(r.below(order.size()));
      total -= pods[order[idx]].gpu_milli_total();
      order.erase(order.begin() + static_cast<std::ptrdiff_t>(idx));
    }
  } else if (static_cast<double>(total) < target) {  // tuneUpPods
    for (;;) {
      const auto idx = static_cast<std::uint32_t>(r.below(pods.size()));
      if (static_cast<double>(total + pods[idx].gpu_milli) > target) break;
      if (order.size() == max_paper_arrivals) {  // the draws ran far past the estimate above
        throw invalid_argument_error("paper_options.tune", "tuning to " + detail::plain_number(o.tune) +
                                                               " x the GPU capacity takes more than the limit of " +
                                                               std::to_string(max_paper_arrivals) + " arrivals");
      }
      total += pods[idx].gpu_milli_total();
      order.push_back(idx);
    }
  }
  return order;
}

struct paper_result {
  std::string policy;
  std::uint64_t seed = 0;
  double tune = 0.0;
  milli gpu_capacity = 0;
  std::size_t pods_arrived = 0;
  std::size_t pods_failed = 0;
  event_sample final{};
  std::vector<event_sample> events;                    // one per arrival, when recorded
  std::map<std::string, std::size_t> failed_by_shape;  // shape_key -> failed pods
  std::size_t preemptions = 0;                           // pods placed by preempting others (paper_options::preemption)
  std::size_t pods_preempted = 0;                        // placed, then preempted: the victims
  std::map<std::string, std::size_t> preempted_by_shape;  // shape_key -> preempted pods
  double seconds = 0.0;                                // wall time of the replay

  [[nodiscard]] double pct(double milli_value) const noexcept {
    return gpu_capacity > 0 ? milli_value / static_cast<double>(gpu_capacity) * 100.0 : 0.0;
  }
  [[nodiscard]] double final_arrived_pct() const noexcept { return pct(static_cast<double>(final.arrived_gpu_milli)); }
  [[nodiscard]] double final_allocation_pct() const noexcept {
    return pct(static_cast<double>(final.allocated_gpu_milli));
  }
  [[nodiscard]] double final_frag_amount_pct() const noexcept { return pct(final.frag_gpu_milli); }
  [[nodiscard]] double final_frag_ratio_pct() const noexcept {
    return final.idle_gpu_milli > 0 ? final.frag_gpu_milli / final.idle_gpu_milli * 100.0 : 0.0;
  }
  // The allocation the authors' analysis reports at an arrived percentage (bucket mean).
  [[nodiscard]] std::vector<bucket_point> curve(int max_pct) const {
    return bucket_by_arrived(events, gpu_capacity, max_pct);
  }
};

// The preempt action both replays switch on with `preemption`: Kubernetes' DefaultPreemption over
// the fit checks only (CPU, memory and GPU as NodeResourcesFit + GPUCheck accept them:
// overcommit_fit without overcommit), as Kubernetes' PostFilter re-runs the Filter plugins.
inline auto replay_fit_profile() { return make_profile(checks(overcommit_fit{overcommit_policy{}}), scores()); }
using replay_preempt_action = preempt_action<replay_cluster, decltype(replay_fit_profile())>;

namespace detail {
// The paper protocol's jobs: arrival k at time k runs the trace pod order[k] and stays. The k-th
// copy (k >= 1) of a trace pod bound is recorded under the name "<name>#<k>", since the cluster
// records bound pods by name; scheduling sees the pod under its own name.
class paper_workload {
 public:
  paper_workload(const trace& t, const std::vector<std::uint32_t>& order)
      : t_(&t), order_(&order), copy_(order.size(), unnumbered), bound_(t.requests.size(), 0) {}

  [[nodiscard]] std::size_t size() const noexcept { return order_->size(); }
  [[nodiscard]] driver_job job(std::uint32_t j) const noexcept { return driver_job{static_cast<double>(j), never, never}; }
  [[nodiscard]] const pod& spec(std::uint32_t j) const noexcept { return t_->requests[(*order_)[j]]; }
  [[nodiscard]] std::uint32_t trace_index(std::uint32_t j) const noexcept { return (*order_)[j]; }
  const pod& bound_spec(std::uint32_t j) {
    if (copy_[j] == unnumbered) copy_[j] = bound_[(*order_)[j]]++;
    if (copy_[j] == 0) return spec(j);
    clone_ = spec(j);  // reuses the buffer's capacity
    clone_.name += "#" + std::to_string(copy_[j]);
    return clone_;
  }
  // The protocol never queues a pod (driver_options::requeue is off), so no pod comes back.
  [[nodiscard]] std::uint32_t job_of(const pod&) const {
    throw invalid_argument_error("paper_workload", "the paper protocol queues no pod");
  }

 private:
  static constexpr std::uint32_t unnumbered = std::numeric_limits<std::uint32_t>::max();
  const trace* t_;
  const std::vector<std::uint32_t>* order_;
  std::vector<std::uint32_t> copy_;   // which copy of its trace pod each job is bound as
  std::vector<std::uint32_t> bound_;  // copies of each trace pod numbered so far
  pod clone_;
};

// The paper protocol's metrics: arrived GPU (failed pods included), one event_sample per arrival,
// failed (and preempted) pods by shape, fragmentation kept up to date on every placement and release.
struct paper_observer {
  const replay_cluster* c;
  paper_workload* w;
  frag_tracker* frag;
  paper_result* res;
  bool record;
  milli arrived_gpu = 0;

  void arrived(std::uint32_t j) noexcept { arrived_gpu += w->spec(j).gpu_milli_total(); }
  void placed(std::uint32_t, const binding& b, double, bool) { frag->update(*c, b.node); }
  void failed(std::uint32_t j) {
    ++res->pods_failed;
    ++res->failed_by_shape[shape_key(w->spec(j))];
  }
  void released(std::uint32_t j, const binding& b, bool preempted) {
    frag->update(*c, b.node);
    if (preempted) {
      ++res->pods_preempted;
      ++res->preempted_by_shape[shape_key(w->spec(j))];
    }
  }
  template <class D>
  void step(const D& d, double) {
    res->preemptions = d.preemptors();
    const event_sample e{arrived_gpu, totals(*c).gpu_milli_allocated(), frag->total().fragment(), frag->total().idle()};
    if (record) res->events.push_back(e);
    res->final = e;
  }
};

// Runs the driver over the replay's configuration, with the preempt action when `preemption`.
template <class W, class Q, class Place, class Observer>
void drive_replay(replay_cluster& c, W& w, Q& q, Place& place, Observer& obs, const driver_options& o, bool preemption,
                  std::uint64_t seed) {
  if (preemption) {
    preemption_options po;
    po.seed = seed;
    drive(c, w, q, place, obs, o, replay_preempt_action(replay_fit_profile(), po));
  } else {
    drive(c, w, q, place, obs, o);
  }
}
}  // namespace detail

namespace detail {
// The paper protocol's driver configuration, for run_paper and for tools that watch the same replay
// with another observer (sim/bound/frag_kinds.hpp): the arrival order and the node order drawn from
// o.seed, the cluster, the scheduler, the workload. Calls run(c, w, drive), where drive(observer)
// runs the driver once with that observer; returns what run returns.
template <class Profile, class Run>
decltype(auto) with_paper_replay(const trace& t, Profile profile, const paper_options& o, Run&& run) {
  check_replayable(t);
  rng r(o.seed);
  const std::vector<std::uint32_t> order = paper_arrivals(t.requests, t.gpu_milli_capacity, o, r);
  std::vector<node_spec> nodes(t.nodes);
  r.shuffle(std::span<node_spec>(nodes));
  replay_cluster c = make_replay_cluster(nodes);
  schedule_options so;
  so.seed = o.seed;
  so.tie_break = o.ties;
  scheduler<replay_cluster, Profile> s(std::move(profile), so);
  paper_workload w(t, order);
  auto drive_with = [&](auto& observer) {
    fifo_queue unused;  // the protocol never queues: a pod that fits nowhere fails
    driver_options d;
    d.requeue = false;
    drive_replay(c, w, unused, s, observer, d, o.preemption, o.seed);
  };
  return run(c, w, drive_with);
}
}  // namespace detail

// Replays the trace under the paper's protocol with `profile` (any SchedulingProfile over
// replay_cluster): a configuration of the simulation driver (sim/driver.hpp) whose jobs arrive one
// per second in the protocol's order, stay once placed and fail for good when they fit nowhere
// (driver_options::requeue off). The scheduler's tie-break is seeded with o.seed. A trace without
// pods, without nodes or without GPUs throws invalid_argument_error: every metric is a share of GPU
// capacity.
template <class Profile>
requires SchedulingProfile<Profile, replay_cluster> paper_result run_paper(const trace& t, Profile profile,
                                                                        const paper_options& o,
                                                                        std::string policy_name = {}) {
  const auto start = std::chrono::steady_clock::now();
  paper_result res;
  res.policy = std::move(policy_name);
  res.seed = o.seed;
  res.tune = o.tune;
  detail::with_paper_replay(t, std::move(profile), o, [&](replay_cluster& c, detail::paper_workload& w, auto& drive) {
    frag_tracker frag(*t.typical, c);
    res.gpu_capacity = totals(c).gpu_milli_capacity();
    if (o.record_events) res.events.reserve(w.size());
    detail::paper_observer obs{&c, &w, &frag, &res, o.record_events};
    drive(obs);
    res.pods_arrived = w.size();
  });
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return res;
}

}  // namespace gpusched::sim
