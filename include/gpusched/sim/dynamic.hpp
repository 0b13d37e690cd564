// Dynamic replay of a trace with its own clock: pods arrive at creation_time, run, and leave; pods
// that fit nowhere wait in a queue and are retried when resources are freed.
//
// Rules (gpusched's; the FGD paper replays arrivals only):
//   - A pod arrives at creation_time and is tried at once.
//   - A placed pod runs for its trace duration, deletion_time - scheduled_time (or - creation_time
//     for pods the real cluster never scheduled), then leaves and frees its resources.
//   - A pod that does not fit waits, by arrival (dynamic_options::queue, fifo: the library's
//     fifo_queue) or by priority, then arrival (priority: Kubernetes' PrioritySort, the default queue
//     sort of kube-scheduler, priority_sort_queue; queue/queue_sort.hpp).
//     After each batch of departures the queue is retried in order; within one pass a pod that asks
//     exactly what a failed one asked is not tried (driver_options::skip_failed_shapes: the pass
//     only takes resources away; with preemption the priority must match too, and a preemption
//     lets every pod be tried again). A waiting pod is withdrawn at its deletion_time (the user
//     gave up).
//   - Events at the same second: departures, then withdrawals, then the queue, then arrivals (the
//     order of the simulation driver, sim/driver.hpp, which runs this replay).
//   - With dynamic_options::preemption, a pod that fits nowhere may preempt lower-priority pods;
//     the victims wait in the queue again.
//   - time_scale > 1 compresses the arrival clock (arrival = creation_time / time_scale) while
//     durations and patience stay as in the trace: the real trace is lightly loaded (pods live 0.3
//     days on average; the 1213 nodes hold about 0.2% of GPU capacity on time average), so
//     queueing only shows under compression.
// Metrics: time-weighted GPU allocation and pending pods over the arrival window [first arrival,
// last arrival] (the trace's long-running pods would otherwise stretch the horizon far past the load),
// queueing delay of placed pods (start - arrival), and samples of the cluster state at a fixed period
// until the last event.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <numeric>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "gpusched/core/error.hpp"
#include "gpusched/core/gpu_summary.hpp"
#include "gpusched/queue/queue_sort.hpp"
#include "gpusched/schedule/schedule_one.hpp"
#include "gpusched/sim/driver.hpp"
#include "gpusched/sim/metrics.hpp"
#include "gpusched/sim/paper.hpp"
#include "gpusched/sim/rng.hpp"
#include "gpusched/sim/replay_cluster.hpp"
#include "gpusched/sim/trace.hpp"

namespace gpusched::sim {

// The order of the waiting pods in a dynamic replay. fifo: arrival order (gpusched-sim's default,
// the figures in docs/quality.md). priority: higher priority first, then arrival, as Kubernetes'
// PrioritySort (pkg/scheduler/framework/plugins/queuesort/priority_sort.go), kube-scheduler's
// default; the same as fifo while every pod has one priority (the openb traces as read).
enum class queue_order : std::uint8_t { fifo, priority };

struct dynamic_options {
  std::uint64_t seed = 42;  // node order (ties) as in the paper protocol
  tie_break_rule ties = tie_break_rule::first_node;
  std::int64_t sample_period = 6 * 3600;  // seconds between samples
  double time_scale = 1.0;                // arrival clock compression (>= 1 raises the load)
  // gpusched's: a pod that fits nowhere may preempt lower-priority pods (the driver's preempt
  // action, Kubernetes' DefaultPreemption); victims wait in the queue again. Off by default.
  bool preemption = false;
  queue_order queue = queue_order::fifo;  // the order in which waiting pods are retried
  // Points at which the arrival window [first arrival, last arrival] is sampled, evenly spaced from
  // its start to its end (k / (n - 1) of the window, k = 0..n-1; one point: the start): pods
  // pending, running, GPU allocated and fragmented over the load, which the periodic samples
  // (sample_period) miss when time_scale compresses the window to seconds; each is the state just
  // after the events of its second (fewer points when the replay ends first). 0: none.
  std::size_t window_samples = 20;
};

// The most samples one dynamic replay records: 2^24 (about 1.1 GB of dynamic_sample). The default
// period (6 hours) gives about 1,200 over the openb default trace's horizon; a period that would pass
// the limit is refused before the replay starts.
inline constexpr std::size_t max_dynamic_samples = std::size_t{1} << 24;

// The cluster at `time`: a periodic sample holds the state just before the events of that second,
// a window point (dynamic_options::window_samples) the state just after them. The unallocated GPU is
// split by where it is: whole_free_gpu_milli in wholly free GPUs, partly_free_gpu_milli in the free
// share of partly used ones. The GPU the waiting pods ask for is split by pod kind: one GPU (whole or
// a share) or several. Taking one costs a pass over the nodes' GPU summaries and the waiting pods.
struct dynamic_sample {
  std::int64_t time = 0;  // seconds
  milli allocated_gpu_milli = 0;
  std::size_t running = 0;
  std::size_t pending = 0;
  double frag_gpu_milli = 0.0;
  milli whole_free_gpu_milli = 0;
  milli waiting_one_gpu_milli = 0;    // the GPU asked by waiting pods of one GPU
  milli waiting_multi_gpu_milli = 0;  // the GPU asked by waiting pods of two or more GPUs

  // The free share of partly used GPUs, on a cluster of `capacity` milli-GPU.
  [[nodiscard]] milli partly_free_gpu_milli(milli capacity) const noexcept {
    return capacity - allocated_gpu_milli - whole_free_gpu_milli;
  }
};

struct dynamic_result {
  std::string policy;
  std::uint64_t seed = 0;
  milli gpu_capacity = 0;
  std::int64_t start = 0, end = 0;  // seconds: first and last arrival (the window of the time averages)
  std::int64_t last_event = 0;      // the last departure or withdrawal
  std::size_t pods = 0;
  std::size_t placed = 0;             // placed at some point
  std::size_t placed_after_wait = 0;  // of those, after waiting in the queue
  std::size_t withdrawn = 0;          // gave up while waiting (deletion_time reached)
  std::size_t max_pending = 0;
  double time_weighted_allocation_pct = 0.0;
  double time_weighted_pending = 0.0;
  double time_weighted_frag_amount_pct = 0.0;  // FGD's fragmentation (GPU share, typical pods) over the window
  // The part of time_weighted_allocation_pct held by runs that preemption later ended: a victim starts
  // over (no checkpoint), so the GPU it held until then was allocated but its work is lost. Counts the
  // victims' own runs (a gang's other members are not counted; the openb replays have no gangs).
  double time_weighted_preempted_allocation_pct = 0.0;
  double mean_delay = 0.0, p50_delay = 0.0, p95_delay = 0.0, p99_delay = 0.0, max_delay = 0.0;  // seconds
  std::vector<dynamic_sample> samples;
  std::vector<dynamic_sample> window;  // dynamic_options::window_samples points of the arrival window
  std::map<std::string, std::size_t> withdrawn_by_shape;
  // Pods and withdrawn pods by priority (pod::priority; with --priority-by-qos the QoS class's): who
  // waits out their deadline when a policy's choices make some pods wait longer.
  std::map<std::int32_t, std::size_t> pods_by_priority, withdrawn_by_priority;
  std::size_t preemptions = 0;  // pods placed by preempting others (dynamic_options::preemption)
  std::size_t preempted = 0;    // runs ended by preemption: the victims
  std::map<std::string, std::size_t> preempted_by_shape;
  double seconds = 0.0;

  [[nodiscard]] double days() const noexcept { return static_cast<double>(end - start) / 86400.0; }
};

namespace detail {
// The dynamic replay's jobs: trace pod i arrives at arrive[i] (the scaled clock), runs its trace
// duration and waits until deadline[i].
struct dynamic_workload {
  const trace* t;
  const std::vector<std::int64_t>* arrive;
  const std::vector<std::int64_t>* deadline;
  std::vector<driver_job> jobs;

  [[nodiscard]] std::size_t size() const noexcept { return jobs.size(); }
  [[nodiscard]] const driver_job& job(std::uint32_t j) const noexcept { return jobs[j]; }
  [[nodiscard]] const pod& spec(std::uint32_t j) const noexcept { return t->requests[j]; }
  [[nodiscard]] const pod& bound_spec(std::uint32_t j) const noexcept { return t->requests[j]; }
  [[nodiscard]] std::uint32_t job_of(const pod& p) const noexcept {
    return static_cast<std::uint32_t>(&p - t->requests.data());
  }
};

// The dynamic replay's metrics (see the top of this file).
struct dynamic_observer {
  const replay_cluster* c;
  const dynamic_workload* w;
  frag_tracker* frag;
  dynamic_result* res;
  std::vector<double> delays{};
  std::vector<double> started{};  // per job: when its current run started (placed)
  double alloc_integral = 0.0, pending_integral = 0.0, frag_integral = 0.0;
  double preempted_integral = 0.0;  // milli-GPU seconds, within the window, of runs preemption ended
  double last = 0.0;
  std::size_t window_points = 0;  // dynamic_options::window_samples

  // The state now, as a sample at time t. The wholly free GPUs come from the cluster's per-node GPU
  // summary (core/gpu_summary.hpp), which the cluster keeps at every reservation and release.
  template <class D>
  [[nodiscard]] dynamic_sample snapshot(const D& d, std::int64_t t) const {
    dynamic_sample s{t, totals(*c).gpu_milli_allocated(), d.running(), d.pending(), frag->total().fragment()};
    const std::size_t nodes = traits_of<replay_cluster>::node_count(*c);
    for (std::size_t i = 0; i < nodes; ++i) {
      const gpu_free_summary g = adl::call_node_gpu_summary(*c, static_cast<node_index>(i));
      s.whole_free_gpu_milli += milli{g.whole_free} * gpu_milli_whole;
    }
    d.for_each_waiting([&](const pod& p) {
      (p.num_gpu > 1 ? s.waiting_multi_gpu_milli : s.waiting_one_gpu_milli) += p.gpu_milli_total();
    });
    return s;
  }
  template <class D>
  void sample(const D& d, double t) {
    res->samples.push_back(snapshot(d, static_cast<std::int64_t>(t)));
  }
  template <class D>
  void advance(const D& d, double from, double to) {  // the state held over [from, to), within the window
    const auto end = static_cast<double>(res->end);
    const double dt = std::min(to, end) - std::min(from, end);
    const milli alloc = totals(*c).gpu_milli_allocated();
    const double frag_now = frag->total().fragment();
    alloc_integral += static_cast<double>(alloc) * dt;
    pending_integral += static_cast<double>(d.pending()) * dt;
    frag_integral += frag_now * dt;
    // Window points in [from, to) see the state held there (at the first arrival: after its events).
    while (res->window.size() < window_points) {
      const double t = window_point(res->window.size());
      if (!(t < to)) break;
      res->window.push_back(snapshot(d, static_cast<std::int64_t>(std::floor(t))));
    }
    last = to;
  }
  [[nodiscard]] double window_point(std::size_t k) const noexcept {
    if (window_points < 2) return static_cast<double>(res->start);
    return static_cast<double>(res->start) +
           static_cast<double>(res->end - res->start) * static_cast<double>(k) / static_cast<double>(window_points - 1);
  }
  void placed(std::uint32_t j, const binding& b, double now, bool waited) {
    frag->update(*c, b.node);
    ++res->placed;
    if (waited) ++res->placed_after_wait;
    delays.push_back(now - w->job(j).arrive);
    started[j] = now;
  }
  // The driver calls advance(from, now) before any event of `now`, so `last` is the time of release.
  void released(std::uint32_t j, const binding& b, bool preempted) {
    frag->update(*c, b.node);
    if (preempted) {
      const auto end = static_cast<double>(res->end);  // the run's part within the window, as alloc_integral
      const auto held = static_cast<double>(milli{b.gpu_milli} * b.gpu_count());  // what the cluster counted
      preempted_integral += held * (std::min(last, end) - std::min(started[j], end));
      ++res->preempted;
      ++res->preempted_by_shape[shape_key(w->spec(j))];
    }
  }
  void withdrawn(std::uint32_t j) {
    ++res->withdrawn;
    ++res->withdrawn_by_shape[shape_key(w->spec(j))];
    ++res->withdrawn_by_priority[w->spec(j).priority];
  }
  template <class D>
  void step(const D& d, double) noexcept {
    res->preemptions = d.preemptors();
    res->max_pending = std::max(res->max_pending, d.pending());
  }
};

// fifo_order or priority_order, chosen at run time, so that the replay is compiled once.
struct chosen_queue_order {
  bool by_priority = false;
  [[nodiscard]] bool before(const pod& a, const pod& b) const noexcept {
    return by_priority ? priority_order::before(a, b) : fifo_order::before(a, b);
  }
};

}  // namespace detail

// Replays the trace with its own clock: a configuration of the simulation driver (sim/driver.hpp)
// with the queue of o.queue, the trace's durations and deadlines, samples every o.sample_period and
// skip_failed_shapes (the rules at the top of this file).
template <class Profile>
requires SchedulingProfile<Profile, replay_cluster> dynamic_result run_dynamic(const trace& t, Profile profile,
                                                                            const dynamic_options& o,
                                                                            std::string policy_name = {}) {
  check_replayable(t);
  if (!t.has_times()) {
    throw invalid_argument_error("trace.pods",
                                 "dynamic mode needs creation_time and deletion_time (11-column pod file)");
  }
  if (o.sample_period <= 0) throw invalid_argument_error("dynamic_options.sample_period", "must be > 0");
  if (o.queue != queue_order::fifo && o.queue != queue_order::priority)
    throw invalid_argument_error("dynamic_options.queue", "must be queue_order::fifo or queue_order::priority");
  if (!(o.time_scale >= 1.0 && o.time_scale <= 1e9))
    throw invalid_argument_error("dynamic_options.time_scale", "must be within 1..1e9");
  const auto wall = std::chrono::steady_clock::now();
  rng r(o.seed);
  std::vector<node_spec> nodes(t.nodes);
  r.shuffle(std::span<node_spec>(nodes));
  replay_cluster c = make_replay_cluster(nodes);
  schedule_options so;
  so.seed = o.seed;
  so.tie_break = o.ties;
  scheduler<replay_cluster, Profile> s(std::move(profile), so);
  frag_tracker frag(*t.typical, c);

  const std::size_t n = t.pods.size();
  std::vector<std::int64_t> arrive(n), deadline(n);  // on the (scaled) simulation clock
  for (std::size_t i = 0; i < n; ++i) {
    arrive[i] = std::llround(static_cast<double>(t.pods[i].creation_time) / o.time_scale);
    deadline[i] = arrive[i] + (t.pods[i].deletion_time - t.pods[i].creation_time);
  }
  std::vector<std::uint32_t> arrivals(n);  // the first and the last arrival
  std::iota(arrivals.begin(), arrivals.end(), 0U);
  std::stable_sort(arrivals.begin(), arrivals.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return arrive[a] < arrive[b]; });
  auto duration = [&](std::uint32_t i) {
    const openb_pod& p = t.pods[i];
    return p.deletion_time - (p.scheduled_time ? *p.scheduled_time : p.creation_time);
  };
  {
    // A pod waits at most until its deadline and then runs its duration, so the last event comes at
    // most max(deadline + duration) - first arrival after the start; the samples over that horizon
    // must stay within max_dynamic_samples.
    std::int64_t horizon = 0;
    const std::int64_t first = arrive[arrivals.front()];
    for (std::uint32_t i = 0; i < n; ++i) horizon = std::max(horizon, deadline[i] + duration(i) - first);
    if (horizon / o.sample_period >= static_cast<std::int64_t>(max_dynamic_samples)) {
      throw invalid_argument_error(
          "dynamic_options.sample_period",
          std::to_string(o.sample_period) + " s over the trace's horizon of up to " + std::to_string(horizon) +
              " s gives more than " + std::to_string(max_dynamic_samples) + " samples; use at least " +
              std::to_string(horizon / static_cast<std::int64_t>(max_dynamic_samples) + 1) + " s");
    }
  }

  dynamic_result res;
  res.policy = std::move(policy_name);
  res.seed = o.seed;
  res.gpu_capacity = totals(c).gpu_milli_capacity();
  res.pods = n;
  for (const pod& p : t.requests) ++res.pods_by_priority[p.priority];
  // Every priority present from the start: the replay's withdrawals then never insert into the map.
  for (const auto& pc : res.pods_by_priority) res.withdrawn_by_priority[pc.first] = 0;
  res.start = arrive[arrivals.front()];
  res.end = arrive[arrivals.back()];
  detail::dynamic_workload w{&t, &arrive, &deadline, {}};
  w.jobs.reserve(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    w.jobs.push_back(driver_job{static_cast<double>(arrive[i]), static_cast<double>(duration(i)),
                                static_cast<double>(deadline[i])});
  }
  detail::dynamic_observer obs{&c, &w, &frag, &res};
  obs.delays.reserve(n);
  obs.started.assign(n, 0.0);
  obs.last = static_cast<double>(res.start);
  obs.window_points = o.window_samples;
  res.window.reserve(o.window_samples);
  // fifo_queue or priority_sort_queue (queue/queue_sort.hpp), by o.queue
  sorted_queue<detail::chosen_queue_order> pending(detail::chosen_queue_order{o.queue == queue_order::priority});
  driver_options d;
  d.sample_period = static_cast<double>(o.sample_period);
  d.skip_failed_shapes = true;
  detail::drive_replay(c, w, pending, s, obs, d, o.preemption, o.seed);
  std::vector<double>& delays = obs.delays;
  const double alloc_integral = obs.alloc_integral, pending_integral = obs.pending_integral;
  const double frag_integral = obs.frag_integral, preempted_integral = obs.preempted_integral;
  const std::int64_t last = static_cast<std::int64_t>(obs.last);
  res.last_event = last;
  const double span = static_cast<double>(res.end - res.start);
  if (span > 0) {
    res.time_weighted_allocation_pct = alloc_integral / span / static_cast<double>(res.gpu_capacity) * 100.0;
    res.time_weighted_pending = pending_integral / span;
    res.time_weighted_frag_amount_pct = frag_integral / span / static_cast<double>(res.gpu_capacity) * 100.0;
    res.time_weighted_preempted_allocation_pct =
        preempted_integral / span / static_cast<double>(res.gpu_capacity) * 100.0;
  }
  if (!delays.empty()) {
    std::sort(delays.begin(), delays.end());
    auto q = [&](double f) { return delays[static_cast<std::size_t>(f * static_cast<double>(delays.size() - 1))]; };
    res.mean_delay = std::accumulate(delays.begin(), delays.end(), 0.0) / static_cast<double>(delays.size());
    res.p50_delay = q(0.50);
    res.p95_delay = q(0.95);
    res.p99_delay = q(0.99);
    res.max_delay = delays.back();
  }
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall).count();
  return res;
}

}  // namespace gpusched::sim
