// The seed's world run by the one simulation driver (issue 17; sim/driver.hpp, ADR 0010/0016): a
// configuration of the driver, as the serving experiment is. The scheduler places replicas and
// training workers seeing only its view (device counts, or GPU-memory requests and measured node
// metrics); the world (this file, with the blocks of sim/world/) runs what really happens on the
// machines: each placed pod's processes reserve GPU memory by their framework (memory.hpp, the OOM
// rule), exit and restart under CrashLoopBackOff (crash_loop.hpp), share GPU time by the profile's
// sharing model (sharing.hpp), divide CPU by CFS shares (cpu.hpp); per service and hour a DDSketch
// (quantile_sketch.hpp) keeps the latencies, the first hour excluded; the capacity sweep bisects the
// load multiplier (load_search.hpp). docs/experiment-world.md states the model, its sources, and
// what this engine simplifies (section "The engine as run").
//
// The engine is a fluid one at 1 s steps (the declared load is 6,720 ResNet-50 requests/s on
// average: one event per request would not fit BM_SeedWorld's 10 s per day). Per step and serving
// replica: integer Poisson arrivals (its even share of the service's rate: a Service's
// round-robin), a backlog served at the replica's capacity (max_batch / the batch time at its
// current rate, or its CPU share / the per-item CPU time, whichever is less), requests whose
// backlog wait would pass timeout_ms dropped; the served requests' latencies spread evenly between
// one batch time and one batch time plus max(batch time, max_wait) on top of the backlog wait, the
// batch size the fixed point b = rate x batch_time(b) (dynamic batching in steady state). A
// dropped request counts at timeout_ms in the percentiles and not as goodput.
#pragma once

#if __has_include(<yaml-cpp/yaml.h>)

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cstdio>
#include <exception>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <numbers>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "gpusched/config.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/sim/driver.hpp"
#include "gpusched/sim/experiment/experiment.hpp"
#include "gpusched/sim/result_fields.hpp"
#include "gpusched/sim/results_json.hpp"
#include "gpusched/sim/rng.hpp"
#include "gpusched/sim/sha256.hpp"
#include "gpusched/sim/serving/arrivals.hpp"
#include "gpusched/sim/serving/rng.hpp"
#include "gpusched/sim/world/cpu.hpp"
#include "gpusched/sim/world/crash_loop.hpp"
#include "gpusched/sim/world/gpu_world.hpp"
#include "gpusched/sim/world/load_search.hpp"
#include "gpusched/sim/world/memory.hpp"
#include "gpusched/sim/world/quantile_sketch.hpp"
#include "gpusched/sim/world/sharing.hpp"
#include "gpusched/sim/world/world_scenario.hpp"

namespace gpusched::sim::world {

// Poisson(mean) counts: Knuth's multiplication method below 30 (TAOCP vol. 2, 3.4.1 F), the normal
// approximation N(mean, mean) rounded at or above (central limit theorem; error O(1/sqrt(mean))).
inline std::uint64_t poisson_count(rng& g, double mean) {
  if (!(mean > 0.0)) return 0;
  if (mean < 30.0) {
    const double limit = std::exp(-mean);
    double prod = g.uniform_open0();
    std::uint64_t k = 0;
    while (prod > limit) {
      prod *= g.uniform_open0();
      ++k;
    }
    return k;
  }
  // Box-Muller (one of the pair).
  const double z = std::sqrt(-2.0 * std::log(g.uniform_open0())) * std::cos(2.0 * std::numbers::pi * g.uniform_open0());
  return static_cast<std::uint64_t>(std::max(0.0, std::round(mean + std::sqrt(mean) * z)));
}

// The dynamic-batching steady state: the batch b that accumulates while one batch of b runs,
// b = ceil(lambda x batch_time(b) / rate), within [1, max_batch], by iteration from max_batch
// (a decreasing start reaches the largest fixed point). Returns the batch size.
inline int steady_batch(const batch_table& t, int max_batch, double lambda_per_s, double rate) {
  int b = max_batch;
  for (int i = 0; i < 8; ++i) {
    const double run_s = t.at(b) / 1000.0 / rate;
    const int nb = std::clamp(static_cast<int>(std::ceil(lambda_per_s * run_s - 1e-9)), 1, max_batch);
    if (nb == b) break;
    b = nb;
  }
  return b;
}

// One service's outcome in one run.
struct service_metrics {
  double slo_capacity_qps = 0.0;  // filled by the sweep (0 when not swept)
  double goodput_qps = 0.0;       // within the SLO, per measured second (warm-up excluded)
  double p99_ms_peak_hour = 0.0;  // P99 in the hour of the highest offered load (warm-up excluded)
  double dropped_pct = 0.0;       // requests dropped (no serving replica, or timed out) / arrived
  std::vector<double> p99_ms_by_hour;  // NaN for the warm-up and empty hours
  std::vector<std::pair<double, double>> sweep;  // (multiplier, p99_ms_peak_hour) the sweep evaluated
};

// One run's outcome (per profile and seed).
struct world_metrics {
  std::vector<service_metrics> services;
  double gpu_util_mean_pct = 0.0;  // NVML-style busy share, mean over GPUs and the whole run
  double sched_success_pct = 0.0;  // pods that ran (a worker: its gang started) / pods submitted
  double oom_kills = 0.0;          // process exits by the OOM rule (replicas and trainers)
  double leak_restarts = 0.0;      // planned restarts of leaking replicas (leak eviction)
  double replicas_pending_h = 0.0; // replica-hours submitted but not bound
  double replica_down_h = 0.0;     // replica-hours bound but not serving (starting, crash-looping)
  double preemptions = 0.0;        // pods preempted
};

inline constexpr std::array<result_field<service_metrics>, 3> service_fields{{
    {"slo_capacity_qps", "SLO capacity QPS", value_kind::real, 1, [](const service_metrics& m) { return m.slo_capacity_qps; }},
    {"goodput_qps", "goodput QPS", value_kind::real, 1, [](const service_metrics& m) { return m.goodput_qps; }},
    {"p99_ms_peak_hour", "P99 ms peak hour", value_kind::real, 1, [](const service_metrics& m) { return m.p99_ms_peak_hour; },
     true},
}};

inline constexpr std::array<result_field<world_metrics>, 7> world_fields{{
    {"gpu_util_mean_pct", "GPU util mean %", value_kind::real, 2, [](const world_metrics& m) { return m.gpu_util_mean_pct; }},
    {"sched_success_pct", "sched success %", value_kind::real, 2, [](const world_metrics& m) { return m.sched_success_pct; }},
    {"oom_kills", "OOM kills", value_kind::integer, 1, [](const world_metrics& m) { return m.oom_kills; }, true},
    {"leak_restarts", "leak restarts", value_kind::integer, 1, [](const world_metrics& m) { return m.leak_restarts; }},
    {"replicas_pending_h", "replica pending h", value_kind::real, 2, [](const world_metrics& m) { return m.replicas_pending_h; },
     true},
    {"replica_down_h", "replica down h", value_kind::real, 2, [](const world_metrics& m) { return m.replica_down_h; }, true},
    {"preemptions", "preemptions", value_kind::integer, 1, [](const world_metrics& m) { return m.preemptions; }, true},
}};

// The scheduler wiring of a world profile (sim/experiment's profile_wiring, which the driver's
// actions are built from): kube-default built in, or the profile's configuration file.
inline experiment::profile_wiring world_wiring(const world_scenario& sc, const world_profile& p) {
  experiment::profile_wiring w;
  if (p.config.empty()) {
    w = experiment::kube_default_wiring();
  } else {
    std::ifstream in(p.config);
    if (!in) throw file_error(sc.file, p.line, "profiles." + p.name + ": cannot open config '" + p.config + "'");
    std::stringstream ss;
    ss << in.rdbuf();
    w.config_text = ss.str();
    w.config_source = p.config;
  }
  w.name = p.name;
  w.gang_all_or_nothing = p.gangs_all_or_nothing;
  w.two_tier_queue = p.two_tier_queue;
  w.queue.dev_share_period = static_cast<int>(p.dev_share_period);
  w.preemption = p.preemption;
  w.preemption_budget = p.preemption_budget;
  if (p.preemption_budget) {
    w.budget = budget_options{static_cast<int>(p.budget_max), p.budget_window_s, p.budget_cooldown_s, true};
  }
  const auto c = experiment::detail::permille(p.overcommit_cpu), m = experiment::detail::permille(p.overcommit_memory);
  w.overcommit.burstable = qos_ceiling{c, m, 1000};
  w.overcommit.best_effort = qos_ceiling{c, m, 1000};
  w.fit = w.overcommits() ? experiment::fit_mode::overcommit : experiment::fit_mode::profile;
  w.leak_eviction = false;  // the world's own leak eviction acts (below); the library's detector is not wired
  try {
    w.queue.validate();
    if (w.preemption_budget) w.budget.validate();
    w.overcommit.validate("overcommit");
  } catch (const invalid_argument_error& e) {
    throw file_error(sc.file, p.line, "profiles." + p.name + ": " + e.what());
  }
  if (p.sharing == sharing_mode::mps) {
    if (sc.mps_constants_csv.empty() || sc.mps_util_csv.empty()) {
      throw file_error(sc.file, p.line,
                       "profiles." + p.name + ": sharing mps needs devices.mps (constants_csv, util_csv)");
    }
    for (const auto& sv : sc.services) {
      if (sc.models[sv.model].mps_proxy.empty()) {
        throw file_error(sc.file, p.line, "profiles." + p.name + ": sharing mps needs models." +
                                              sc.models[sv.model].name + ".mps_proxy");
      }
    }
  }
  return w;
}

namespace detail {

// A pod as the profile's scheduler sees it.
inline pod view_pod(const world_scenario& sc, const world_profile& p, const std::string& name, const world_requests& rq,
                    int gpus, const std::string& model, int priority, tier t, qos_class q) {
  auto b = make_pod(name);
  b.cpu(static_cast<milli>(std::llround(rq.cpu_milli))).memory(static_cast<mib>(std::llround(rq.memory_mib)));
  if (p.view == gpu_view::memory) {
    // gpushare: GPU memory is the accounted quantity; compute is not (a token share of 1 milli).
    b.gpu_share(1, gpus).gpu_memory(static_cast<std::int32_t>(std::llround(rq.gpu_memory_mib)));
  } else if (p.sharing == sharing_mode::exclusive) {
    b.gpus(gpus);
  } else {
    // The device plugin's time-slicing: nvidia.com/gpu counts replicas of a device (replicas_per_gpu
    // per GPU), no memory. A worker's n replicas are spread over n devices here.
    b.gpu_share(static_cast<std::int32_t>(gpu_milli_whole / sc.replicas_per_gpu), gpus);
  }
  if (!model.empty()) b.model(model);
  b.priority(priority).qos(q);
  if (t == tier::prod) {
    b.prod();
  } else {
    b.dev();
  }
  return b.build();
}

// One process (CUDA context) in the world: a replica's server, or one GPU of a training worker.
struct process {
  std::uint32_t pod = 0;
  int gpu = 0;  // global GPU index
  int service = -1, replica = -1, job = -1;
  framework_memory framework = framework_memory::pytorch_caching;
  double base_mib = 0.0, ws_mib = 0.0, limit_mib = 0.0;
  double cpu_request_milli = 0.0, cpu_demand_milli = 0.0, cpu_alloc_milli = 0.0;
  bool alive = false;
  double next_start = 0.0;
  double serve_from = std::numeric_limits<double>::infinity();
  crash_loop_backoff backoff;
  double leak_mib_per_s = 0.0, leak_from = std::numeric_limits<double>::infinity();
  // serving state
  double backlog = 0.0, credit = 0.0, rho = 0.0;
  int batch = 1;  // the steady batch of the last step (its MPS pressure)
  // leak eviction's readings since this incarnation started: (t, working set)
  int readings = 0;
  double first_t = 0.0, first_ws = 0.0;
  bool gone = false;
};

struct gpu_state {
  std::vector<std::size_t> procs;  // indices into processes
  std::vector<double> reserved;    // parallel to procs (memory.hpp's try_reserve)
  double busy_s = 0.0;
};

class world_observer {
 public:
  world_observer(const world_scenario& sc, const world_profile& p, experiment::detail::serving_workload& wl,
                 experiment::experiment_cluster& cl, scheduling_queue& queue, bool two_tier, std::uint64_t seed,
                 double multiplier, double T)
      : sc_(sc), p_(p), wl_(wl), cl_(cl), queue_(queue), two_tier_(two_tier), T_(T), g_(serving::derive_seed(seed, 17)) {
    slice_ = sc.slice;
    if (p.switch_cost_ms) slice_.switch_cost_ms = *p.switch_cost_ms;
    sharing_.mode = p.sharing;
    sharing_.slice = slice_;
    if (p.sharing == sharing_mode::mps) load_mps();
    gpus_.resize(static_cast<std::size_t>(sc.node_count) * static_cast<std::size_t>(sc.gpus_per_node));
    tables_.reserve(sc.models.size());
    for (const auto& m : sc.models) tables_.push_back(batch_table{m.batch_ms});
    hours_ = static_cast<std::size_t>(std::ceil(T / 3600.0));
    for (std::size_t s = 0; s < sc.services.size(); ++s) {
      arrivals_.emplace_back(sc.services[s].arrivals, serving::derive_seed(seed, 100 + s), T);
      sketches_.emplace_back(hours_, quantile_sketch(sc.sketch_alpha, sc.sketch_min_ms, sc.sketch_max_ms));
      offered_.emplace_back(hours_, 0.0);
    }
    multiplier_ = multiplier;
    good_.assign(sc.services.size(), 0.0);
    arrived_.assign(sc.services.size(), 0.0);
    dropped_.assign(sc.services.size(), 0.0);
    job_running_.assign(wl.pods.size(), 0);
    node_busy_.assign(static_cast<std::size_t>(sc.node_count), 0.0);
    node_cpu_used_.assign(static_cast<std::size_t>(sc.node_count), 0.0);
    svc_procs_.resize(sc.services.size());
    for (const auto& r : wl.pods) replica_pods_ += r.service >= 0 ? 1 : 0;
    pod_procs_.resize(wl.pods.size());
  }

  // --- the driver's hooks ---
  void placed(std::uint32_t j, const binding& b, double now, bool /*waited*/) {
    auto& r = wl_.pods[j];
    r.bound = true;
    r.where = b;
    if (r.service >= 0) r.ran = true;
    for_each_gpu(b.gpus, [&](int gi) { start_process(j, global_gpu(b.node, gi), now); });
  }
  void released(std::uint32_t j, const binding& /*where*/, bool preempted) {
    auto& r = wl_.pods[j];
    if (preempted) ++out_.preemptions;
    r.bound = false;
    for (const std::size_t pi : pod_procs_[j]) remove_process(pi);
    pod_procs_[j].clear();
    if (two_tier_) queue_.released(r.p);
  }
  void gang_started(std::uint32_t g, double /*now*/) {
    set_job(g, 1);
    for (std::size_t i = 0; i < wl_.pods.size(); ++i) {
      if (wl_.pods[i].job == static_cast<int>(g)) wl_.pods[i].ran = true;
    }
  }
  void gang_stopped(std::uint32_t g) { set_job(g, 0); }
  void gang_finished(std::uint32_t g, double /*now*/) { set_job(g, 0); }

  template <class D>
  void advance(const D&, double from, double to) {
    advance_to(std::max(from, clock_), to);
  }

  template <class D>
  void sample(const D&, double t) {
    advance_to(clock_, t);
    cpu_step();
    if (p_.measured_metrics) set_loads(t);
    if (p_.leak_eviction) leak_eviction(t);
  }

  // The run's metrics.
  world_metrics finish() {
    advance_to(clock_, T_);
    world_metrics& m = out_;
    const double measured = std::max(1e-9, T_ - sc_.warmup_s);
    const std::size_t first_hour = static_cast<std::size_t>(std::ceil(sc_.warmup_s / 3600.0 - 1e-9));
    for (std::size_t s = 0; s < sc_.services.size(); ++s) {
      service_metrics sm;
      sm.goodput_qps = good_[s] / measured;
      sm.dropped_pct = arrived_[s] > 0 ? 100.0 * dropped_[s] / arrived_[s] : 0.0;
      std::size_t peak = first_hour;
      for (std::size_t h = first_hour; h < hours_; ++h) {
        if (offered_[s][h] > offered_[s][peak]) peak = h;
        sm.p99_ms_by_hour.push_back(sketches_[s][h].count() ? sketches_[s][h].quantile(0.99) : std::nan(""));
      }
      sm.p99_ms_peak_hour = peak < hours_ && sketches_[s][peak].count() ? sketches_[s][peak].quantile(0.99) : 0.0;
      m.services.push_back(std::move(sm));
    }
    double busy = 0.0;
    for (const auto& g : gpus_) busy += g.busy_s;
    m.gpu_util_mean_pct = 100.0 * busy / (static_cast<double>(gpus_.size()) * T_);
    std::size_t ran = 0, submitted = 0;
    for (const auto& r : wl_.pods) {
      ran += r.ran ? 1 : 0;
      submitted += r.submit < T_ ? 1 : 0;
    }
    m.sched_success_pct = submitted == 0 ? 100.0 : 100.0 * static_cast<double>(ran) / static_cast<double>(submitted);
    return m;
  }

 private:
  [[nodiscard]] int global_gpu(node_index n, int gi) const { return static_cast<int>(n) * sc_.gpus_per_node + gi; }

  void set_job(std::uint32_t g, char on) {
    if (g >= job_running_.size()) job_running_.resize(static_cast<std::size_t>(g) + 1, 0);
    job_running_[g] = on;
  }

  void start_process(std::uint32_t j, int gpu, double now) {
    const auto& r = wl_.pods[j];
    process pr;
    pr.pod = j;
    pr.gpu = gpu;
    pr.backoff = crash_loop_backoff(sc_.restarts);
    pr.next_start = now;
    if (r.service >= 0) {
      const auto& s = sc_.services[static_cast<std::size_t>(r.service)];
      const auto& m = sc_.models[s.model];
      pr.service = r.service;
      pr.replica = r.replica;
      pr.framework = m.framework;
      pr.base_mib = m.working_set_mib;
      pr.limit_mib = p_.framework_limit ? s.requests.gpu_memory_mib : 0.0;
      pr.cpu_request_milli = s.requests.cpu_milli;
      for (const auto& l : sc_.leaks) {
        if (l.service == static_cast<std::size_t>(r.service) && l.replica == r.replica) {
          pr.leak_mib_per_s = l.mib_per_min / 60.0;
          pr.leak_from = l.at_s;
        }
      }
    } else {
      const auto& t = sc_.training[static_cast<std::size_t>(train_kind_[static_cast<std::size_t>(r.job)])];
      pr.job = r.job;
      pr.framework = t.framework;
      pr.base_mib = t.working_set_mib_per_gpu;
      pr.limit_mib = p_.framework_limit ? t.requests.gpu_memory_mib : 0.0;
      pr.cpu_request_milli = t.requests.cpu_milli / t.gpus_per_worker;
      pr.cpu_demand_milli = t.cpu_demand_milli_per_gpu;
    }
    if (p_.tf_memory_growth && pr.framework == framework_memory::tf_grab_all) pr.framework = framework_memory::tf_growth;
    pr.ws_mib = pr.base_mib;
    pr.cpu_alloc_milli = std::numeric_limits<double>::infinity();
    const std::size_t pi = procs_.size();
    procs_.push_back(std::move(pr));
    pod_procs_[j].push_back(pi);
    auto& g = gpus_[static_cast<std::size_t>(gpu)];
    g.procs.push_back(pi);
    g.reserved.push_back(0.0);
    if (r.service >= 0) svc_procs_[static_cast<std::size_t>(r.service)].push_back(pi);
    if (p_.sharing == sharing_mode::exclusive && g.procs.size() > 1) {
      throw invalid_argument_error("world", "an exclusive GPU got a second process (a scheduler view bug)");
    }
  }

  [[nodiscard]] std::size_t slot_of(const gpu_state& g, std::size_t pi) const {
    return static_cast<std::size_t>(std::find(g.procs.begin(), g.procs.end(), pi) - g.procs.begin());
  }

  void remove_process(std::size_t pi) {
    process& pr = procs_[pi];
    auto& g = gpus_[static_cast<std::size_t>(pr.gpu)];
    const std::size_t k = slot_of(g, pi);
    g.procs.erase(g.procs.begin() + static_cast<std::ptrdiff_t>(k));
    g.reserved.erase(g.reserved.begin() + static_cast<std::ptrdiff_t>(k));
    if (pr.service >= 0) {
      drop(static_cast<std::size_t>(pr.service), pr.backlog, clock_);
      auto& v = svc_procs_[static_cast<std::size_t>(pr.service)];
      v.erase(std::find(v.begin(), v.end(), pi));
    }
    pr.alive = false;
    pr.gone = true;
  }

  // A process exits by the OOM rule; the kubelet restarts it after its back-off.
  void oom_kill(std::size_t pi, double t) {
    process& pr = procs_[pi];
    ++out_.oom_kills;
    auto& g = gpus_[static_cast<std::size_t>(pr.gpu)];
    g.reserved[slot_of(g, pi)] = 0.0;
    pr.alive = false;
    if (pr.service >= 0) {
      drop(static_cast<std::size_t>(pr.service), pr.backlog, t);
      pr.backlog = 0.0;
    }
    pr.serve_from = std::numeric_limits<double>::infinity();
    pr.next_start = t + pr.backoff.on_exit(t);
  }

  void try_start(std::size_t pi, double t) {
    process& pr = procs_[pi];
    auto& g = gpus_[static_cast<std::size_t>(pr.gpu)];
    double used = 0.0;
    for (const double x : g.reserved) used += x;
    pr.ws_mib = pr.base_mib;
    const double need = initial_reservation_mib(pr.framework, pr.base_mib, sc_.gpu_memory_mib - used, pr.limit_mib);
    if (try_reserve(sc_.gpu_memory_mib, g.reserved, slot_of(g, pi), need)) {
      pr.alive = true;
      pr.next_start = std::numeric_limits<double>::infinity();
      pr.serve_from = t + (pr.service >= 0 ? sc_.startup_s : 0.0);
      pr.backlog = pr.credit = pr.rho = 0.0;
      pr.readings = 0;
    } else {
      oom_kill(pi, t);
    }
  }

  void drop(std::size_t s, double n, double t) {
    if (!(n > 0.0)) return;
    dropped_[s] += n;
    record(s, t, sc_.services[s].timeout_ms, static_cast<std::uint64_t>(std::llround(n)));
  }

  void record(std::size_t s, double t, double ms, std::uint64_t n) {
    if (t < sc_.warmup_s || n == 0) return;
    const std::size_t h = std::min(hours_ - 1, static_cast<std::size_t>(t / 3600.0));
    sketches_[s][h].add(ms, n);
  }

  [[nodiscard]] bool runnable_trainer(const process& pr) const {
    return pr.job >= 0 && pr.alive && static_cast<std::size_t>(pr.job) < job_running_.size() &&
           job_running_[static_cast<std::size_t>(pr.job)] != 0;
  }

  // The rate of replica `pi` on its GPU now: the sharing model with the expected number of runnable
  // contexts (itself, the running trainers, the other replicas' busy fractions of the last step).
  [[nodiscard]] double replica_rate(std::size_t pi) {
    const process& me = procs_[pi];
    if (sharing_.mode == sharing_mode::exclusive) return 1.0;
    if (sharing_.mode == sharing_mode::mps) {
      // gpu-let's pair model, each neighbour weighted by its expected runnable fraction (sharing.hpp's
      // mps_expected_rate): running trainers 1, the other replicas their busy fraction of the last step.
      nb_.clear();
      for (const std::size_t q : gpus_[static_cast<std::size_t>(me.gpu)].procs) {
        if (q == pi) continue;
        const process& o = procs_[q];
        if (runnable_trainer(o)) nb_.push_back(mps_neighbour{trainer_util_, 1.0});
        if (o.service >= 0 && o.alive && o.rho > 0.0) nb_.push_back(mps_neighbour{replica_util(o), o.rho});
      }
      return mps_expected_rate(sharing_.mps, replica_util(me), nb_);
    }
    double k = 1.0;
    for (const std::size_t q : gpus_[static_cast<std::size_t>(me.gpu)].procs) {
      if (q == pi) continue;
      const process& o = procs_[q];
      if (runnable_trainer(o)) k += 1.0;
      if (o.service >= 0 && o.alive) k += o.rho;
    }
    if (k <= 1.0) return 1.0;
    return slice_.quantum_ms / (k * (slice_.quantum_ms + slice_.switch_cost_ms));
  }

  void advance_to(double from, double to) {
    double t = from;
    while (t < to) {
      const double next = std::min(to, std::floor(t + 1e-9) + 1.0);
      step(t, next - t);
      t = next;
    }
    clock_ = std::max(clock_, to);
  }

  // One world step [t, t + dt).
  void step(double t, double dt) {
    if (!(dt > 0.0)) return;
    // Pending (re)starts, then working-set growth (leaks): the OOM rule.
    for (auto& g : gpus_) {
      for (std::size_t k = 0; k < g.procs.size(); ++k) {
        const std::size_t pi = g.procs[k];
        process& pr = procs_[pi];
        if (!pr.alive && t >= pr.next_start) try_start(pi, t);
        if (pr.alive && pr.leak_mib_per_s > 0.0 && t >= pr.leak_from) {
          pr.ws_mib += pr.leak_mib_per_s * dt;
          const double extra = growth_request_mib(pr.framework, g.reserved[k], pr.ws_mib, pr.limit_mib);
          if (extra > 0.0 && !try_reserve(sc_.gpu_memory_mib, g.reserved, k, extra)) oom_kill(pi, t);
        }
      }
    }
    // Requests.
    for (std::size_t s = 0; s < sc_.services.size(); ++s) serve(s, t, dt);
    // GPU busy: NVML's utilization.gpu, with the expected runnable contexts.
    for (auto& g : gpus_) {
      double k = 0.0;
      for (const std::size_t pi : g.procs) {
        const process& pr = procs_[pi];
        if (runnable_trainer(pr)) k += 1.0;
        if (pr.service >= 0 && pr.alive) k += pr.rho;
      }
      double busy = std::min(1.0, k);
      // Under MPS kernels of the clients run at once: no switch gaps.
      if (k > 1.0 && sharing_.mode != sharing_mode::exclusive && sharing_.mode != sharing_mode::mps) {
        busy *= slice_.quantum_ms / (slice_.quantum_ms + slice_.switch_cost_ms);
      }
      g.busy_s += busy * dt;
    }
    // Pending and down replica time.
    for (std::size_t i = 0; i < replica_pods_; ++i) {  // replicas come first in the workload
      const auto& r = wl_.pods[i];
      if (r.submit <= t && !r.bound) out_.replicas_pending_h += dt / 3600.0;
    }
  }

  void serve(std::size_t s, double t, double dt) {
    const auto& sv = sc_.services[s];
    const auto& tbl = tables_[sv.model];
    const double lambda = multiplier_ * arrivals_[s].rate(t);
    if (t >= sc_.warmup_s) offered_[s][std::min(hours_ - 1, static_cast<std::size_t>(t / 3600.0))] += lambda * dt;
    serving_.clear();
    for (const std::size_t pi : svc_procs_[s]) {
      const process& pr = procs_[pi];
      if (pr.alive && t >= pr.serve_from) {
        serving_.push_back(pi);
      } else {
        out_.replica_down_h += dt / 3600.0;
      }
    }
    if (serving_.empty()) {
      const auto n = poisson_count(g_, lambda * dt);
      arrived_[s] += static_cast<double>(n);
      drop(s, static_cast<double>(n), t);
      return;
    }
    const double share = lambda / static_cast<double>(serving_.size());
    const double item_cpu_s = sc_.models[sv.model].cpu_ms_per_item / 1000.0;
    for (const std::size_t pi : serving_) {
      process& pr = procs_[pi];
      const auto a = static_cast<double>(poisson_count(g_, share * dt));
      arrived_[s] += a;
      const double r = replica_rate(pi);
      double mu = sv.max_batch / (tbl.at(sv.max_batch) / 1000.0 / r);
      if (item_cpu_s > 0.0 && std::isfinite(pr.cpu_alloc_milli)) mu = std::min(mu, pr.cpu_alloc_milli / 1000.0 / item_cpu_s);
      pr.credit += mu * dt;
      const double have = pr.backlog + a;
      const double served = std::min(have, std::floor(pr.credit));
      pr.credit -= served;
      if (served >= have) pr.credit = std::min(pr.credit, 1.0);  // idle capacity is not banked
      const double wait_before_s = pr.backlog / mu;
      pr.backlog = have - served;
      // Requests whose backlog wait passes the timeout are dropped.
      const double max_backlog = mu * sv.timeout_ms / 1000.0;
      if (pr.backlog > max_backlog) {
        drop(s, std::floor(pr.backlog - max_backlog), t);
        pr.backlog -= std::floor(pr.backlog - max_backlog);
      }
      const double wait_s = 0.5 * (wait_before_s + pr.backlog / mu);
      pr.rho = std::min(1.0, share / mu);
      pr.cpu_demand_milli = share * item_cpu_s * 1000.0;  // what its preprocessing would use
      if (served <= 0.0) continue;
      const int b = steady_batch(tbl, sv.max_batch, std::min(share, mu), r);
      pr.batch = b;
      const double run_ms = tbl.at(b) / r;
      const double lo = wait_s * 1000.0 + run_ms;
      const double span = std::max(run_ms, sv.max_wait_ms);
      const auto n = static_cast<std::uint64_t>(served);
      std::uint64_t left = n;
      for (int q = 0; q < 4; ++q) {
        const std::uint64_t part = q == 3 ? left : n / 4;
        left -= part;
        const double ms = lo + span * (q + 0.5) / 4.0;
        record(s, t, ms, part);
        if (ms <= sv.slo_ms && t >= sc_.warmup_s) good_[s] += static_cast<double>(part);
      }
    }
  }

  // MPS (profile sharing: mps): gpu-let's constants and, per model, its proxy's UTIL.CSV points
  // (docs/experiment-world.md, "The engine as run"). A replica presses as its proxy at its batch
  // (clamped to the profiled sizes), a trainer as the heaviest proxy at its largest profiled batch
  // (the maximum L2 and DRAM utilisation over the proxies); both at share 1 (MPS without an active
  // thread percentage: every client may use every SM).
  void load_mps() {
    sharing_.mps = serving::interference_constants::load(sc_.mps_constants_csv);
    const auto table = serving::util_table::load(sc_.mps_util_csv, serving::duration_unit::seconds);
    proxies_.resize(sc_.models.size());
    for (std::size_t i = 0; i < sc_.models.size(); ++i) {
      const auto& m = sc_.models[i];
      if (m.mps_proxy.empty()) continue;
      const serving::model_profile* mp = table.find(m.mps_proxy);
      if (!mp) {
        throw file_error(sc_.file, m.mps_proxy_line,
                         "models." + m.name + ".mps_proxy: '" + m.mps_proxy + "' is not a model of " +
                             sc_.mps_util_csv);
      }
      proxies_[i] = *mp;
      const auto top = mp->at(mp->max_batch());
      trainer_util_.l2 = std::max(trainer_util_.l2, top.l2);
      trainer_util_.dram = std::max(trainer_util_.dram, top.dram);
    }
    nb_.reserve(64);
  }

  [[nodiscard]] serving::tenant_util replica_util(const process& pr) const {
    const auto& mp = proxies_[sc_.services[static_cast<std::size_t>(pr.service)].model];
    const auto u = mp.at(std::clamp(pr.batch, mp.min_batch(), mp.max_batch()));
    return serving::scaled_util(u.l2, u.dram, 1.0);
  }

  // CFS division of each node's CPU among the containers' demands (cpu.hpp), every sample.
  void cpu_step() {
    for (int n = 0; n < sc_.node_count; ++n) {
      claims_.clear();
      idx_.clear();
      for (int gi = 0; gi < sc_.gpus_per_node; ++gi) {
        for (const std::size_t pi : gpus_[static_cast<std::size_t>(global_gpu(static_cast<node_index>(n), gi))].procs) {
          const process& pr = procs_[pi];
          if (!pr.alive) continue;
          const double demand = pr.service >= 0 ? pr.cpu_demand_milli : (runnable_trainer(pr) ? pr.cpu_demand_milli : 0.0);
          claims_.push_back(cpu_claim{demand, pr.cpu_request_milli, 0.0});
          idx_.push_back(pi);
        }
      }
      alloc_.assign(claims_.size(), 0.0);
      cpu_allocation(sc_.cpu_milli, claims_, alloc_);
      double used = 0.0;
      for (std::size_t i = 0; i < idx_.size(); ++i) {
        used += alloc_[i];
        process& pr = procs_[idx_[i]];
        // A replica's preprocessing gets its CFS allocation; uncontended (all its demand) it is not
        // the bottleneck: +infinity.
        pr.cpu_alloc_milli = alloc_[i] + 1e-9 >= claims_[i].demand_milli ? std::numeric_limits<double>::infinity() : alloc_[i];
      }
      node_cpu_used_[static_cast<std::size_t>(n)] = used;
    }
  }

  // LoadAware's node metrics from the world (Koordinator's NodeMetric): CPU used, memory requested,
  // GPU busy over the last sample interval.
  void set_loads(double /*t*/) {
    if (metrics_.empty()) metrics_.resize(static_cast<std::size_t>(sc_.node_count));
    for (int n = 0; n < sc_.node_count; ++n) {
      double busy = 0.0;
      for (int gi = 0; gi < sc_.gpus_per_node; ++gi) busy += gpus_[static_cast<std::size_t>(global_gpu(static_cast<node_index>(n), gi))].busy_s;
      const auto nn = static_cast<std::size_t>(n);
      node_metrics& m = metrics_[nn];
      m.cpu_used = std::min(1.0, node_cpu_used_[nn] / sc_.cpu_milli);
      m.mem_used = std::min(1.0, static_cast<double>(cl_.base().resources(static_cast<node_index>(n)).mem_allocated) / sc_.memory_mib);
      m.gpu_used = std::min(1.0, (busy - node_busy_[nn]) / (sc_.gpus_per_node * sc_.sample_s));
      node_busy_[nn] = busy;
      cl_.base().set_load(static_cast<node_index>(n), &m);
    }
  }

  // Leak eviction (gpusched): the working-set readings of each serving replica since it started;
  // with at least min_samples readings, a slope >= min_slope_mib_per_s and the limit (or the free
  // device memory) reached within one reading interval plus start-up, the replica is restarted in
  // place before it fails (a planned restart: down for startup_s, not an OOM).
  void leak_eviction(double t) {
    for (const auto& list : svc_procs_) {
      for (const std::size_t pi : list) leak_check(pi, t);
    }
  }

  void leak_check(std::size_t pi, double t) {
    process& pr = procs_[pi];
    if (!pr.alive) return;
    if (pr.readings++ == 0) {
      pr.first_t = t;
      pr.first_ws = pr.ws_mib;
      return;
    }
    if (pr.readings < p_.leak_min_samples) return;
    const double slope = (pr.ws_mib - pr.first_ws) / std::max(1e-9, t - pr.first_t);
    if (slope < p_.leak_min_slope_mib_per_s) return;
    auto& g = gpus_[static_cast<std::size_t>(pr.gpu)];
    double used = 0.0;
    for (const double x : g.reserved) used += x;
    double headroom = sc_.gpu_memory_mib - used + g.reserved[slot_of(g, pi)] - pr.ws_mib;
    if (pr.limit_mib > 0.0) headroom = std::min(headroom, pr.limit_mib - pr.ws_mib);
    if (pr.framework == framework_memory::tf_grab_all && pr.limit_mib <= 0.0) headroom = g.reserved[slot_of(g, pi)] - pr.ws_mib;
    if (headroom / slope > sc_.sample_s + sc_.startup_s) return;
    ++out_.leak_restarts;
    drop(static_cast<std::size_t>(pr.service), pr.backlog, t);
    g.reserved[slot_of(g, pi)] = 0.0;
    pr.alive = false;
    pr.next_start = t;  // started again at once (no back-off: not a crash)
  }

 public:
  std::vector<int> train_kind_;  // per training job (gang): its index in sc.training

 private:
  const world_scenario& sc_;
  const world_profile& p_;
  experiment::detail::serving_workload& wl_;
  experiment::experiment_cluster& cl_;
  scheduling_queue& queue_;
  bool two_tier_;
  double T_;
  rng g_;
  time_slice_params slice_;
  sharing_params sharing_;
  std::vector<serving::model_profile> proxies_;  // per model (mps only)
  serving::tenant_util trainer_util_;            // (mps only)
  std::vector<mps_neighbour> nb_;                // scratch
  std::vector<batch_table> tables_;
  std::vector<gpu_state> gpus_;
  std::vector<process> procs_;
  std::vector<std::vector<std::size_t>> pod_procs_;
  std::vector<serving::arrival_process> arrivals_;
  std::vector<std::vector<quantile_sketch>> sketches_;
  std::vector<std::vector<double>> offered_;
  std::vector<double> good_, arrived_, dropped_;
  std::vector<char> job_running_;
  std::vector<std::size_t> serving_, idx_;
  std::vector<cpu_claim> claims_;
  std::vector<double> alloc_, node_busy_;
  std::vector<double> node_cpu_used_;
  std::vector<std::vector<std::size_t>> svc_procs_;  // per service: its replicas' live processes
  std::size_t replica_pods_ = 0;
  std::vector<node_metrics> metrics_;
  std::size_t hours_ = 0;
  double multiplier_ = 1.0, clock_ = 0.0;
  world_metrics out_;
};

}  // namespace detail

// Training arrivals of one seed: per stream, first_s then exponential gaps with the declared mean
// (a Poisson process), at most `count`, before T.
struct training_arrival {
  std::size_t kind = 0;
  double submit_s = 0.0;
};
inline std::vector<training_arrival> draw_training(const world_scenario& sc, std::uint64_t seed, double T) {
  std::vector<training_arrival> out;
  for (std::size_t k = 0; k < sc.training.size(); ++k) {
    const auto& t = sc.training[k];
    rng g(serving::derive_seed(seed, 200 + k));
    double at = t.first_s;
    for (int i = 0; i < t.count && at < T; ++i) {
      out.push_back({k, at});
      at += g.exponential(1.0 / t.mean_interarrival_s);
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.submit_s < b.submit_s; });
  return out;
}

// Runs one profile on one seed at `multiplier` x the declared request rates. `duration_s` < 0: the
// scenario's. The driver's configuration is the serving experiment's (sim/experiment/run_once):
// arrivals enter the queue, a cycle when anything arrived or finished (and at every sample for
// the two-tier queue), the horizon ends the run with pods running.
inline world_metrics run_world_once(const world_scenario& sc, const world_profile& p, std::uint64_t seed,
                                    double multiplier = 1.0, double duration_s = -1.0) {
  using C = experiment::experiment_cluster;
  const double T = duration_s < 0.0 ? sc.duration_s : duration_s;
  const experiment::profile_wiring w = world_wiring(sc, p);
  experiment::wired_run<C> run(w, seed);

  C cl;
  for (int n = 0; n < sc.node_count; ++n) {
    node_spec ns{"node-" + std::to_string(n), static_cast<milli>(sc.cpu_milli), static_cast<mib>(sc.memory_mib), {}, "rack-0"};
    const int per = sc.gpus_per_node / sc.nvlink_islands;
    for (int i = 0; i < sc.nvlink_islands; ++i) {
      ns.add_gpus(per, sc.gpu_model, static_cast<std::int32_t>(sc.gpu_memory_mib), static_cast<std::int16_t>(i));
    }
    cl.base().add_node(ns);
  }
  run.queue.set_capacity({static_cast<milli>(sc.cpu_milli) * sc.node_count, static_cast<mib>(sc.memory_mib) * sc.node_count,
                          static_cast<milli>(sc.gpus_per_node) * gpu_milli_whole * sc.node_count});

  experiment::detail::serving_workload wl;
  std::uint64_t seq = 0;
  for (std::size_t i = 0; i < sc.services.size(); ++i) {
    const auto& s = sc.services[i];
    auto add = [&](int k, double at) {
      pod pd = detail::view_pod(sc, p, s.name + "-" + std::to_string(k), s.requests, 1, sc.models[s.model].name, s.priority,
                                s.tier_, qos_class::guaranteed);
      wl.pods.push_back(experiment::detail::pod_rec{std::move(pd), static_cast<int>(i), k, -1, seq++, at});
    };
    int k = 0;
    for (; k < s.replicas; ++k) add(k, 0.0);
    for (const auto& st : s.scale_up) {
      for (int m = 0; m < st.replicas; ++m, ++k) add(k, st.at_s);
    }
  }
  const auto jobs = draw_training(sc, seed, T);
  std::vector<int> kinds;
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    const auto& t = sc.training[jobs[j].kind];
    kinds.push_back(static_cast<int>(jobs[j].kind));
    const std::string gang = t.name + "-" + std::to_string(j);
    for (int wk = 0; wk < t.workers; ++wk) {
      pod pd = detail::view_pod(sc, p, gang + "-w" + std::to_string(wk), t.requests, t.gpus_per_worker, "", t.priority,
                                t.tier_, qos_class::burstable);
      pd.gang = gang;
      pd.gang_min_members = t.workers;
      pd.submit_time = jobs[j].submit_s;
      wl.pods.push_back(experiment::detail::pod_rec{std::move(pd), -1, -1, static_cast<int>(j), seq++, jobs[j].submit_s});
    }
  }
  for (std::size_t i = 0; i < wl.pods.size(); ++i) {
    const auto& r = wl.pods[i];
    wl.by_name.emplace(r.p.name, i);
    wl.times.push_back(driver_job{r.submit, r.job < 0 ? never : sc.training[jobs[static_cast<std::size_t>(r.job)].kind].duration_s, never});
  }

  detail::world_observer obs(sc, p, wl, cl, run.queue, w.two_tier_queue, seed, multiplier, T);
  obs.train_kind_ = kinds;
  driver_options o;
  o.queue_arrivals = true;
  o.sample_period = sc.sample_s;
  o.first_sample = sc.sample_s;
  o.sample_steps = true;
  o.cycle_after_sample = w.two_tier_queue;
  o.horizon = T;
  run.drive(cl, wl, obs, o);
  return obs.finish();
}

// One profile and seed with the capacity sweep: per service, the highest multiplier f of the
// declared rate curve at which the peak hour's P99 meets the SLO (load_search.hpp bisection over
// [sweep_lo, sweep_hi] to sweep_tolerance; runs at equal f are shared between services), times the
// service's mean rate. The returned metrics are the run at f = 1 with the capacities filled in.
inline world_metrics run_world_swept(const world_scenario& sc, const world_profile& p, std::uint64_t seed,
                                     double duration_s = -1.0, bool sweep = true) {
  std::map<double, world_metrics> runs;
  auto at = [&](double f) -> const world_metrics& {
    auto it = runs.find(f);
    if (it == runs.end()) it = runs.emplace(f, run_world_once(sc, p, seed, f, duration_s)).first;
    return it->second;
  };
  world_metrics base = at(1.0);
  if (!sweep) return base;
  for (std::size_t s = 0; s < sc.services.size(); ++s) {
    const double slo = sc.services[s].slo_ms;
    const auto found = highest_passing_load(sc.sweep_lo, sc.sweep_hi, sc.sweep_tolerance, [&](double f) {
      if (f == 0.0) return true;  // no requests: nothing misses the SLO
      return at(f).services[s].p99_ms_peak_hour <= slo;
    });
    base.services[s].slo_capacity_qps = found ? found->load * sc.services[s].arrivals.rate_qps : 0.0;
  }
  for (const auto& [f, m] : runs) {
    for (std::size_t s = 0; s < sc.services.size(); ++s) base.services[s].sweep.emplace_back(f, m.services[s].p99_ms_peak_hour);
  }
  return base;
}

// Per profile, per seed results.
struct world_ab {
  std::string scenario, file;
  std::vector<std::string> profiles, services;
  std::vector<std::uint64_t> seeds;
  std::vector<std::vector<world_metrics>> runs;  // [profile][seed]
  double duration_s = 0.0;
  bool swept = true;
  std::vector<std::array<std::string, 3>> inputs;  // (role, path, SHA-256): the scenario and each profile's config
};

// Runs every (profile, seed) on `jobs` threads; `on_run(done, total, profile, seed)` after each
// (called under a lock).
inline world_ab run_world_ab(const world_scenario& sc, const std::vector<std::string>& profiles,
                             const std::vector<std::uint64_t>& seeds, unsigned jobs = 1, double duration_s = -1.0,
                             bool sweep = true,
                             const std::function<void(std::size_t, std::size_t, const std::string&, std::uint64_t)>& on_run = {}) {
  world_ab r;
  r.scenario = sc.name;
  r.file = sc.file;
  r.profiles = profiles;
  r.seeds = seeds;
  r.duration_s = duration_s < 0.0 ? sc.duration_s : duration_s;
  r.swept = sweep;
  for (const auto& s : sc.services) r.services.push_back(s.name);
  r.inputs.push_back({"scenario", sc.file, sha256_hex(sc.text)});
  std::vector<const world_profile*> ps;
  for (const auto& n : profiles) {
    ps.push_back(&sc.profile(n));
    const auto w = world_wiring(sc, *ps.back());  // a bad profile fails before any run
    r.inputs.push_back({"profile:" + n, w.config_source, sha256_hex(w.config_text)});
  }
  r.runs.assign(profiles.size(), std::vector<world_metrics>(seeds.size()));
  const std::size_t total = profiles.size() * seeds.size();
  std::size_t next = 0, done = 0;
  std::mutex mu;
  std::exception_ptr error;
  auto worker = [&] {
    for (;;) {
      std::size_t k;
      {
        std::lock_guard<std::mutex> lock(mu);
        if (next >= total || error) return;
        k = next++;
      }
      const std::size_t pi = k / seeds.size(), si = k % seeds.size();
      try {
        world_metrics m = run_world_swept(sc, *ps[pi], seeds[si], duration_s, sweep);
        std::lock_guard<std::mutex> lock(mu);
        r.runs[pi][si] = std::move(m);
        ++done;
        if (on_run) on_run(done, total, profiles[pi], seeds[si]);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu);
        if (!error) error = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  const unsigned n = std::max(1U, std::min<unsigned>(jobs, static_cast<unsigned>(total)));
  for (unsigned i = 1; i < n; ++i) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
  return r;
}

inline std::vector<service_metrics> service_runs(const std::vector<world_metrics>& runs, std::size_t s) {
  std::vector<service_metrics> v;
  for (const auto& m : runs) v.push_back(m.services[s]);
  return v;
}

// The A/B table: per service its fields, then the cluster's; mean +- 95% half-width over seeds.
inline std::string format_world_table(const world_ab& r) {
  std::string out;
  char buf[256];
  std::snprintf(buf, sizeof buf, "%-34s", "metric (mean +- 95% CI)");
  out += buf;
  for (const auto& p : r.profiles) {
    std::snprintf(buf, sizeof buf, " %24s", p.c_str());
    out += buf;
  }
  out += "\n";
  auto row = [&](const std::string& label, int precision, auto values_of_profile) {
    std::snprintf(buf, sizeof buf, "%-34s", label.c_str());
    out += buf;
    for (std::size_t p = 0; p < r.profiles.size(); ++p) {
      const mean_ci c = summarise(values_of_profile(p));
      std::snprintf(buf, sizeof buf, " %13.*f +- %8.*f", precision, c.mean, precision, c.half);
      out += buf;
    }
    out += "\n";
  };
  for (std::size_t s = 0; s < r.services.size(); ++s) {
    for (const auto& f : service_fields) {
      if (f.key == "slo_capacity_qps" && !r.swept) continue;
      row(r.services[s] + " " + std::string(f.label), f.precision,
          [&](std::size_t p) { return values_of(f, service_runs(r.runs[p], s)); });
    }
  }
  for (const auto& f : world_fields) {
    row(std::string(f.label), f.precision, [&](std::size_t p) { return values_of(f, r.runs[p]); });
  }
  return out;
}

// JSON: per profile, per service the service fields and per cluster the world fields, each with
// its per-seed values, mean, sd and 95% half-width (sim/results_json.hpp's shape); the sweep's
// points per service and seed (for python/tools/plot_world.py).
inline nlohmann::ordered_json world_to_json(const world_ab& r, std::string_view tool = "gpusched") {
  using json = nlohmann::ordered_json;
  json j;
  j["tool"] = tool;
  j["version"] = GPUSCHED_VERSION_STRING;
  j["kind"] = "world_ab";
  j["scenario"] = r.scenario;
  j["file"] = r.file;
  j["duration_s"] = r.duration_s;
  j["seeds"] = r.seeds;
  j["profiles"] = r.profiles;
  j["services"] = r.services;
  j["inputs"] = json::array();
  for (const auto& in : r.inputs) j["inputs"].push_back({{"role", in[0]}, {"path", in[1]}, {"sha256", in[2]}});
  j["service_fields"] = fields_json(service_fields);
  j["fields"] = fields_json(world_fields);
  json& res = j["results"] = json::object();
  for (std::size_t p = 0; p < r.profiles.size(); ++p) {
    json& pj = res[r.profiles[p]] = json::object();
    for (std::size_t s = 0; s < r.services.size(); ++s) {
      json& sj = pj[r.services[s]] = json::object();
      const auto runs = service_runs(r.runs[p], s);
      for (const auto& f : service_fields) {
        if (f.key == "slo_capacity_qps" && !r.swept) continue;
        sj[std::string(f.key)] = summary_json(f, values_of(f, runs));
      }
      json sw = json::array();
      for (std::size_t k = 0; k < runs.size(); ++k) {
        json pts = json::array();
        for (const auto& [f, p99] : runs[k].sweep) pts.push_back({f, p99});
        sw.push_back({{"seed", r.seeds[k]}, {"points", pts}});
      }
      sj["sweep"] = sw;
      json hours = json::array();
      for (std::size_t k = 0; k < runs.size(); ++k) {
        json hs = json::array();
        for (const double v : runs[k].p99_ms_by_hour) hs.push_back(std::isfinite(v) ? json(v) : json(nullptr));
        hours.push_back(hs);
      }
      sj["p99_ms_by_hour"] = hours;
    }
    for (const auto& f : world_fields) pj[std::string(f.key)] = summary_json(f, values_of(f, r.runs[p]));
  }
  return j;
}

// gpusched-sim --scenario <world file> (tools/gpusched_sim.cpp dispatches here): the A/B table, or
// the JSON, of `profiles_text` (comma-separated; empty: kube-exclusive,kube-timeslice,gpusched) over
// `seeds` (empty: the scenario's), with the capacity sweep, on `jobs` threads. Progress lines on
// stderr when `progress`. Errors: "error: ..." on stderr and 2.
inline bool is_world_scenario_file(const std::string& path) {
  try {
    return is_world_scenario_text(serving::read_text_file(path));
  } catch (const std::exception&) {
    return false;
  }
}

inline int run_world_main(const std::string& file, const std::string& profiles_text,
                          const std::vector<std::uint64_t>& seeds_given, double duration, bool as_json, unsigned jobs,
                          bool progress) {
  try {
    const world_scenario sc = load_world_scenario(file);
    std::vector<std::string> profiles;
    const std::string text = profiles_text.empty() ? "kube-exclusive,kube-timeslice,gpusched" : profiles_text;
    std::size_t a = 0;
    while (a <= text.size()) {
      const std::size_t b = std::min(text.find(',', a), text.size());
      const std::string name = text.substr(a, b - a);
      if (name.empty()) throw invalid_argument_error("--profiles", "empty name in '" + text + "'");
      if (std::find(profiles.begin(), profiles.end(), name) != profiles.end()) {
        throw invalid_argument_error("--profiles", "'" + name + "' is given twice");
      }
      profiles.push_back(name);
      a = b + 1;
    }
    const auto seeds = seeds_given.empty() ? sc.seeds : seeds_given;
    const auto t0 = std::chrono::steady_clock::now();
    const auto r = run_world_ab(sc, profiles, seeds, jobs, duration, true,
                                [&](std::size_t done, std::size_t total, const std::string& p, std::uint64_t s) {
                                  if (progress) {
                                    std::fprintf(stderr, "[%zu/%zu] %s seed %llu\n", done, total, p.c_str(),
                                                 static_cast<unsigned long long>(s));
                                  }
                                });
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (as_json) {
      std::fputs((world_to_json(r, "gpusched-sim").dump(1) + "\n").c_str(), stdout);
    } else {
      std::printf("%s: %zu seeds, %.0f s simulated per run, capacity sweep on, %.1f s wall\n", sc.name.c_str(),
                  seeds.size(), r.duration_s, wall);
      std::fputs(format_world_table(r).c_str(), stdout);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
  return std::fflush(stdout) == 0 ? 0 : 1;
}

}  // namespace gpusched::sim::world

#endif  // __has_include(<yaml-cpp/yaml.h>)
