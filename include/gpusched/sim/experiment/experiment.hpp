// The seed's motivating experiment (issue 7): a cluster-level driver over one simulated period.
// Service replicas and training gangs arrive as pods; a scheduling profile places them on an
// in_memory_cluster built like the serving engine's nodes; the serving engine (one clock with the
// driver) turns the placements into request latencies. Two profiles run on the same arrival sequence
// per seed. See docs/experiment.md for what each profile wires and what is simplified.
#pragma once

#include <algorithm>
#include <bit>
#include <fstream>
#include <sstream>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <unordered_map>
#include <vector>

#include "gpusched/core/bound_cluster.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/core/in_memory_cluster.hpp"
#include "gpusched/eviction/eviction_plan.hpp"
#include "gpusched/eviction/leak_detector.hpp"
#include "gpusched/overcommit/overcommit_fit.hpp"
#include "gpusched/overcommit/overcommit_policy.hpp"
#include "gpusched/preemption/preemption.hpp"
#include "gpusched/preemption/preemption_budget.hpp"
#include "gpusched/profile/static_profile.hpp"
#include "gpusched/queue/queue_sort.hpp"
#include "gpusched/queue/scheduling_queue.hpp"
#include "gpusched/gang/gang.hpp"
#include "gpusched/gang/placement.hpp"
#include "gpusched/profile/config_yaml.hpp"
#include "gpusched/schedule/schedule_one.hpp"
#include "gpusched/sim/driver.hpp"
#include "gpusched/sim/serving/engine.hpp"
#include "gpusched/sim/serving/engine_observer.hpp"
#include "gpusched/sim/serving/scenario.hpp"

namespace gpusched::sim::experiment {

enum class fit_mode : std::uint8_t { profile, overcommit };

// How a profile treats gangs, which scheduler configuration it runs, and which of the library's
// mechanisms the driver wires for it. Every switch can be set per profile in the scenario file
// (profiles[].queue / gangs / preemption / overcommit / leak_eviction; docs/experiment.md).
struct profile_wiring {
  std::string name;
  std::string config_text;        // a KubeSchedulerConfiguration (first profile used)
  std::string config_source;      // for errors
  bool gang_all_or_nothing = false;  // false: members bound one by one, partial gangs hold GPUs
  // Pending order: false, priority sort (higher first, then submission order); true, gpusched's
  // two-tier scheduling_queue (queue/scheduling_queue.hpp) with `queue`.
  bool two_tier_queue = false;
  queue_options queue{};
  // Kubernetes DefaultPreemption (preemption/preemption.hpp) for a pod that fits nowhere; the
  // library's dev-never-preempts-prod rule always holds. With `preemption_budget`, pods preempted
  // `budget.max_preemptions` times are protected (preemption/preemption_budget.hpp).
  bool preemption = false;
  bool preemption_budget = false;
  budget_options budget{};
  // Burstable / BestEffort CPU and memory ceilings (overcommit/overcommit_policy.hpp), permille;
  // 1000/1000: no overcommit.
  overcommit_policy overcommit{};
  // Which check NodeResourcesFit's filter is (the profile's configuration text is never changed):
  // `profile`, the plugin the configuration names; `overcommit`, overcommit_fit with the ceilings
  // above instead (same GPU rule as gpu_check), run after the profile's other checks.
  // resolve_profile sets `overcommit` exactly when the ceilings overcommit.
  fit_mode fit = fit_mode::profile;
  // Planned restart of a replica on a device whose free memory will run out within the horizon
  // (eviction/leak_detector.hpp); resolve_profile sets leak.startup_s to the engine's startup_s.
  bool leak_eviction = false;
  leak_detector_options leak{};
  eviction_options eviction{true, 0.10};  // prod Guaranteed replicas are the leakers: allowed

  [[nodiscard]] bool overcommits() const noexcept {
    return overcommit.burstable.cpu_permille != 1000 || overcommit.burstable.memory_permille != 1000 ||
           overcommit.best_effort.cpu_permille != 1000 || overcommit.best_effort.memory_permille != 1000;
  }
};

// kube-default: LeastAllocated + BalancedAllocation (Kubernetes' default score plugins, equal
// weights: pkg/scheduler/apis/config/v1/default_plugins.go). GPUCheck stands in for the device
// plugin's own fit (Kubernetes would not bind a pod to a node without free devices). Priority sort,
// members one by one, Kubernetes preemption without a budget, no overcommit, no leak eviction.
inline profile_wiring kube_default_wiring() {
  profile_wiring w;
  w.name = "kube-default";
  w.config_text =
      "apiVersion: kubescheduler.config.k8s.io/v1beta2\n"
      "kind: KubeSchedulerConfiguration\n"
      "profiles:\n"
      "- schedulerName: kube-default\n"
      "  plugins:\n"
      "    preFilter:\n"
      "      enabled:\n"
      "      - name: GPUCheck\n"
      "    score:\n"
      "      enabled:\n"
      "      - name: NodeResourcesFit\n"
      "        weight: 1\n"
      "      - name: NodeResourcesBalancedAllocation\n"
      "        weight: 1\n"
      // The experiment keeps the balance-after-placement formula that its published numbers were
      // measured with; moving it to Kubernetes' current one (ChangeInBalance, PR #135573) is tracked
      // separately (docs/plugins.md).
      "  pluginConfig:\n"
      "  - name: NodeResourcesBalancedAllocation\n"
      "    args:\n"
      "      formula: BalanceAfter\n"
      // Kubernetes' scorers count a pod without a CPU or memory request as 100m / 200 MiB
      // (GetNonzeroRequests, pkg/scheduler/util); gpusched's option, on as in Kubernetes (ADR 0015).
      "  - name: NodeResourcesFit\n"
      "    args:\n"
      "      nonZeroRequests: true\n";
  w.config_source = "<kube-default>";
  w.preemption = true;
  return w;
}

// gpusched's defaults beyond its configuration file (issue 7's profile): two-tier queue, gangs all
// or nothing, preemption with the budget, overcommit 1.2 (overcommit_policy.hpp's
// seed_overcommit_policy), leak eviction.
inline void apply_gpusched_defaults(profile_wiring& w) {
  w.gang_all_or_nothing = true;
  w.two_tier_queue = true;
  w.preemption = true;
  w.preemption_budget = true;
  w.overcommit = seed_overcommit_policy();
  w.fit = fit_mode::overcommit;
  w.leak_eviction = true;
}

namespace detail {
inline std::int64_t permille(double ratio) { return static_cast<std::int64_t>(std::llround(ratio * 1000.0)); }

// The scenario entry's switches over the profile's defaults; bad values are file_error at its line.
inline void apply_overrides(profile_wiring& w, const serving::scenario& sc, const serving::profile_config& p) {
  try {
    if (p.two_tier_queue) w.two_tier_queue = *p.two_tier_queue;
    if (p.dev_share_period) w.queue.dev_share_period = *p.dev_share_period;
    if (p.gang_all_or_nothing) w.gang_all_or_nothing = *p.gang_all_or_nothing;
    if (p.preemption) w.preemption = *p.preemption;
    if (p.preemption_budget) {
      w.preemption_budget = *p.preemption_budget;
      if (*p.preemption_budget) w.budget = budget_options{p.budget_max_preemptions, p.budget_window_s, p.budget_cooldown_s, true};
    }
    if (p.overcommit_cpu || p.overcommit_memory) {
      const std::int64_t c = permille(p.overcommit_cpu.value_or(1.0)), m = permille(p.overcommit_memory.value_or(1.0));
      w.overcommit.burstable = qos_ceiling{c, m, 1000};
      w.overcommit.best_effort = qos_ceiling{c, m, 1000};
    }
    if (p.leak_eviction) {
      w.leak_eviction = *p.leak_eviction;
      w.leak.window = p.leak_window;
      w.leak.min_samples = p.leak_min_samples;
      w.leak.min_slope_mib_per_s = p.leak_min_slope_mib_per_s;
      w.leak.min_r2 = p.leak_min_r2;
    }
    w.leak.startup_s = sc.engine.startup_s;  // a planned restart takes the engine's model load
    w.fit = w.overcommits() ? fit_mode::overcommit : fit_mode::profile;
    w.leak.validate();
    w.queue.validate();
    w.budget.validate();
    w.overcommit.validate("overcommit");
  } catch (const invalid_argument_error& e) {
    throw file_error(sc.file, p.line, "profiles." + p.name + ": " + e.what());
  }
}
}  // namespace detail

// Resolves a scenario's profile entry: "kube-default" is built in; anything else needs `config`
// (a file, resolved against the scenario's folder) and takes gpusched's defaults. The entry's
// switches (if listed) override either.
inline profile_wiring resolve_profile(const serving::scenario& sc, const std::string& name) {
  const serving::profile_config* entry = nullptr;
  for (const auto& p : sc.profiles) {
    if (p.name == name) entry = &p;
  }
  if (name == "kube-default") {
    profile_wiring w = kube_default_wiring();
    w.leak.startup_s = sc.engine.startup_s;
    if (entry != nullptr) detail::apply_overrides(w, sc, *entry);
    return w;
  }
  if (entry == nullptr) throw invalid_argument_error("profiles", "no profile named '" + name + "' in " + sc.file);
  const auto& p = *entry;
  if (p.config.empty()) throw file_error(sc.file, p.line, "profiles: '" + name + "' needs a config file");
  const std::string& path = p.config;  // already resolved against the scenario's folder by the loader
  std::ifstream in(path);
  if (!in) throw file_error(sc.file, p.line, "profiles: cannot open config '" + path + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  profile_wiring w;
  w.name = name;
  w.config_text = ss.str();
  w.config_source = path;
  apply_gpusched_defaults(w);
  w.leak.startup_s = sc.engine.startup_s;
  detail::apply_overrides(w, sc, p);
  return w;
}

// One run's business metrics.
struct run_metrics {
  double throughput_qps = 0.0;   // completed requests / duration, all services
  double p50_ms = 0.0, p95_ms = 0.0, p99_ms = 0.0;  // all services' latencies together
  double slo_attainment_pct = 0.0;  // completed within SLO / arrived
  double gpu_util_mean_pct = 0.0;   // busy share of all GPUs, mean over samples
  double gpu_util_swing_pct = 0.0;  // max - min of the sampled cluster-wide busy share
  double sched_success_pct = 0.0;   // pods that ran (a worker: its whole gang started) / pods submitted
  double jct_mean_s = 0.0;          // training jobs finished in the period: finish - submit
  double jobs_finished = 0.0;
  double preemptions = 0.0;             // pods preempted (each gang member counts)
  double partial_gang_gpu_hours = 0.0;  // GPUs held by members of gangs that had not started
  double oom_crashes = 0.0;             // replicas killed by a full GPU (leaks), restarted in place
  double leak_restarts = 0.0;           // planned restarts of leaking replicas (leak eviction)
  // Per leak stopped in the run, the time its GPU had left before full (a planned restart: free
  // memory over the GPU's leak rate then; an OOM crash: 0); the least of them, 0 when none stopped.
  double leak_ttf_left_min_s = 0.0;
  double jobs_restarted = 0.0;          // running training jobs preempted (restarted from scratch)
  double replicas_pending_s = 0.0;      // replica-seconds submitted but not bound (capacity shortfall)
};

namespace detail {

struct pod_rec {
  pod p;
  int service = -1;  // >= 0: a replica of this service
  int replica = -1;  // index within service
  int job = -1;      // >= 0: a worker of this training job
  std::uint64_t seq = 0;
  double submit = 0.0;  // when it becomes pending
  bool arrived = false;
  bool bound = false;
  bool ran = false;
  bool queued = false;  // two-tier queue: holds a ticket
  binding where{};
};

struct job_rec {
  double submit = 0.0, duration = 0.0;
  std::vector<std::size_t> pods;
  bool submitted = false, started = false, finished = false;
  double start = 0.0, end = 0.0;
  std::vector<serving::external_id> externals;
};

}  // namespace detail

// The experiment's one cluster state: the serving engine follows its bindings (replicas placed and
// removed, node CPU demand) as an observer of the bookkeeping decorator (sim/serving/engine_observer.hpp).
using experiment_cluster = bound_cluster<in_memory_cluster, serving::engine_observer>;

// The wiring's scheduler configuration, parsed as written. With fit_mode::overcommit the registry
// binds NodeResourcesFit's filter to nothing (its args are still checked) and overcommit_fit runs
// after the profile's checks, so CPU and memory are decided under the ceilings.
template <Cluster C = experiment_cluster>
scheduler_config<C> wired_config(const profile_wiring& w) {
  plugin_registry<C> reg = plugin_registry<C>::builtins();
  if (w.fit == fit_mode::overcommit) {
    const auto fit = *reg.find_check("NodeResourcesFit");
    reg.add_check("NodeResourcesFit", [fit](dynamic_profile<C>&, const plugin_args& a) {
      dynamic_profile<C> scratch;  // decodes and validates the args, as the plugin would
      fit(scratch, a);
    });
  }
  auto cfg = parse_scheduler_config<C>(w.config_text, w.config_source, reg);
  if (cfg.profiles.empty()) throw invalid_argument_error("profiles", w.config_source + " has no profile");
  if (w.fit == fit_mode::overcommit) cfg.profiles.front().profile.add_check(overcommit_fit{w.overcommit});
  return cfg;
}

namespace detail {

// The experiment's jobs for the driver (sim/driver.hpp): one per pod, replicas first, then the
// training workers, in submission order (seq); the workers of training job k form gang k. A replica
// runs until the horizon; a gang for its job's duration.
struct serving_workload {
  std::vector<pod_rec> pods;
  std::vector<driver_job> times;
  std::unordered_map<std::string, std::size_t> by_name;

  [[nodiscard]] std::size_t size() const noexcept { return pods.size(); }
  [[nodiscard]] const driver_job& job(std::uint32_t j) const { return times[j]; }
  [[nodiscard]] const pod& spec(std::uint32_t j) const { return pods[j].p; }
  [[nodiscard]] const pod& bound_spec(std::uint32_t j) const { return pods[j].p; }
  [[nodiscard]] std::uint32_t job_of(const pod& p) const { return static_cast<std::uint32_t>(by_name.at(p.name)); }
  [[nodiscard]] std::uint32_t gang_of(std::uint32_t j) const {
    return pods[j].job < 0 ? no_gang_index : static_cast<std::uint32_t>(pods[j].job);
  }
  [[nodiscard]] std::uint64_t seq(std::uint32_t j) const { return pods[j].seq; }  // equal priorities: submission order
};

// The driver's observer: runs the serving engine (one clock with the driver) and keeps the metrics.
// Placements reach the engine through the cluster (replicas and CPU demand: the cluster's
// engine_observer); here a started gang adds its proxy load; between steps the engine runs and its
// OOM crashes are counted; samples read utilisation, set the node loads LoadAware scores against and,
// with leak eviction, restart leaking replicas.
class serving_observer {
 public:
  serving_observer(serving::serving_engine& e, const serving::latency_model& lm, const serving::serving_setup& su,
                   const serving::scenario& sc, experiment_cluster& cl, serving_workload& wl,
                   const std::vector<serving::training_job>& jobs_in, const profile_wiring& w, scheduling_queue& queue,
                   run_metrics& out)
      : e_(e), lm_(lm), su_(su), sc_(sc), cl_(cl), wl_(wl), jobs_in_(jobs_in), w_(w), queue_(queue), out_(out),
        monitor_(w.leak), jobs_(jobs_in.size()),
        free_buf_(static_cast<std::size_t>(sc.nodes.gpus_per_node)),
        last_busy_(static_cast<std::size_t>(sc.nodes.count) * static_cast<std::size_t>(sc.nodes.gpus_per_node), 0.0),
        node_busy_(static_cast<std::size_t>(sc.nodes.count), 0.0) {
    for (std::size_t j = 0; j < jobs_in.size(); ++j) {
      jobs_[j].submit = jobs_in[j].submit_s;
      jobs_[j].duration = jobs_in[j].duration_s;
    }
    for (std::size_t i = 0; i < wl.pods.size(); ++i) {
      if (wl.pods[i].job >= 0) jobs_[static_cast<std::size_t>(wl.pods[i].job)].pods.push_back(i);
    }
  }

  void arrived(std::uint32_t j) {
    pod_rec& r = wl_.pods[j];
    r.arrived = true;
    if (r.job >= 0) jobs_[static_cast<std::size_t>(r.job)].submitted = true;
  }
  void placed(std::uint32_t j, const binding& b, double /*now*/, bool /*waited*/) {
    pod_rec& r = wl_.pods[j];
    r.bound = true;
    r.where = b;
    monitor_.reset(b.node);  // the node's tenants changed: a step, not a trend
    if (r.service >= 0) r.ran = true;
  }
  void released(std::uint32_t j, const binding& /*where*/, bool preempted) {
    pod_rec& r = wl_.pods[j];
    if (preempted) out_.preemptions += 1.0;
    r.bound = false;
    monitor_.reset(r.where.node);
    if (w_.two_tier_queue) queue_.released(r.p);
  }
  void gang_started(std::uint32_t g, double now) {
    job_rec& j = jobs_[g];
    j.started = true;
    j.start = now;
    j.end = now + j.duration;
    const serving::training_config& tc = *jobs_in_[g].config;
    for (const std::size_t pi : j.pods) {
      pod_rec& r = wl_.pods[pi];
      r.ran = true;
      for_each_gpu(r.where.gpus, [&](int gi) {
        j.externals.push_back(e_.add_external(e_.slot(r.where.node, gi), lm_.id(tc.proxy_model), tc.proxy_batch,
                                              r.where.gpu_milli, r.where.gpu_mem_mib));
      });
    }
  }
  void gang_stopped(std::uint32_t g) {  // preempted while running: no checkpoint in this model, it starts over
    stop_job(jobs_[g]);
    jobs_[g].started = false;
    out_.jobs_restarted += 1.0;
  }
  void gang_finished(std::uint32_t g, double /*now*/) {
    job_rec& j = jobs_[g];
    j.finished = true;
    stop_job(j);
    out_.jct_mean_s += j.end - j.submit;
    out_.jobs_finished += 1.0;
  }
  template <class D>
  void advance(const D&, double /*from*/, double to) {
    advance_to(to);
  }
  template <class D>
  void sample(const D&, double t) {
    advance_to(t);
    const auto& np = sc_.nodes;
    const double dt = sc_.utilisation_sample_s;
    const std::size_t gpus = last_busy_.size();
    double busy = 0.0;
    for (serving::gpu_slot g = 0; g < gpus; ++g) {
      const double b = e_.gpu_busy_seconds(g);
      busy += b - last_busy_[g];
      node_busy_[e_.node_of(g)] += b - last_busy_[g];
      last_busy_[g] = b;
    }
    const double u = busy / (static_cast<double>(gpus) * dt);
    // The node-metrics reading LoadAware scores against (Koordinator's NodeMetric): CPU demand and
    // memory requests over capacity, mean GPU busy share over the last sample interval.
    for (node_index n = 0; n < static_cast<node_index>(np.count); ++n) {
      node_metrics m;
      const milli cpu = cl_.observer<serving::engine_observer>().cpu_demand(n);
      m.cpu_used = std::min(1.0, static_cast<double>(cpu) / static_cast<double>(np.cpu_milli));
      m.mem_used = std::min(1.0, static_cast<double>(cl_.base().resources(n).mem_allocated) /
                                     static_cast<double>(np.memory_mib));
      m.gpu_used = std::min(1.0, node_busy_[n] / (static_cast<double>(np.gpus_per_node) * dt));
      node_busy_[n] = 0.0;
      cl_.base().set_load(n, &m);
    }
    if (w_.leak_eviction) check_leaks(t);
    umin_ = std::min(umin_, u);
    umax_ = std::max(umax_, u);
    usum_ += u;
    ++samples_;
  }

  // The run's metrics from the engine and what was observed.
  void finish(double T) {
    serving::latency_histogram all;
    std::uint64_t completed = 0, arrived = 0, within = 0;
    for (const serving::service_id s : su_.services) {
      const auto& m = e_.metrics(s);
      all.merge(m.latency);
      completed += m.completed;
      arrived += m.arrived;
      within += m.completed_within_slo;
    }
    out_.throughput_qps = static_cast<double>(completed) / T;
    out_.p50_ms = all.quantile(0.50) * 1e3;
    out_.p95_ms = all.quantile(0.95) * 1e3;
    out_.p99_ms = all.quantile(0.99) * 1e3;
    out_.slo_attainment_pct = arrived == 0 ? 0.0 : 100.0 * static_cast<double>(within) / static_cast<double>(arrived);
    out_.gpu_util_mean_pct = samples_ == 0 ? 0.0 : 100.0 * usum_ / static_cast<double>(samples_);
    out_.gpu_util_swing_pct = samples_ == 0 ? 0.0 : 100.0 * (umax_ - umin_);
    std::size_t ran = 0, submitted = 0;
    for (const auto& r : wl_.pods) {
      ran += r.ran ? 1 : 0;
      submitted += r.submit < T ? 1 : 0;
    }
    out_.sched_success_pct =
        submitted == 0 ? 100.0 : 100.0 * static_cast<double>(ran) / static_cast<double>(submitted);
    if (out_.jobs_finished > 0) out_.jct_mean_s /= out_.jobs_finished;
    out_.partial_gang_gpu_hours = held_partial_gpu_s_ / 3600.0;
    out_.leak_ttf_left_min_s = std::isfinite(ttf_left_min_) ? ttf_left_min_ : 0.0;
  }

 private:
  [[nodiscard]] serving::replica_id replica_of(const pod_rec& r) const {
    return su_.replicas[static_cast<std::size_t>(r.service)][static_cast<std::size_t>(r.replica)];
  }
  void stop_job(job_rec& j) {
    for (const auto x : j.externals) e_.remove_external(x);
    j.externals.clear();
  }

  // Runs the engine to t: GPUs held by gangs that have not started and replicas not bound are
  // counted over [clock, t); OOM crashes restart by themselves (engine.auto_restart).
  void advance_to(double t) {
    if (!(t > clock_)) return;
    for (const auto& r : wl_.pods) {
      if (r.bound && r.job >= 0 && !jobs_[static_cast<std::size_t>(r.job)].started)
        held_partial_gpu_s_ += (t - clock_) * r.where.gpu_count();
      if (r.service >= 0 && r.arrived && !r.bound) out_.replicas_pending_s += t - clock_;
    }
    e_.run_until(t);
    clock_ = t;
    for (const auto& n : e_.take_notifications()) {
      if (n.what == serving::notification::kind::replica_oom) {
        out_.oom_crashes += 1.0;
        ttf_left_min_ = 0.0;
        monitor_.reset(e_.node_of(n.gpu));
      }
    }
  }

  // Leak eviction: per-device free memory readings; a node whose device will be full within the
  // detector's horizon (reading interval + start-up) gets its leaking replica restarted in place (a
  // planned restart, before the device fills up).
  void check_leaks(double now) {
    const auto& np = sc_.nodes;
    for (node_index n = 0; n < static_cast<node_index>(np.count); ++n) {
      for (int g = 0; g < np.gpus_per_node; ++g) {
        const serving::gpu_slot sl = e_.slot(n, g);
        free_buf_[static_cast<std::size_t>(g)] =
            static_cast<std::int32_t>(std::max(0.0, e_.gpu_memory_total_mib(sl) - e_.gpu_memory_used_mib(sl)));
      }
      monitor_.record(n, now, free_buf_);
      if (!monitor_.check(n, rep_)) continue;
      const eviction_plan plan = plan_eviction(
          cl_, rep_,
          [&](const bound_pod& bp) -> std::int64_t {
            const auto& r = wl_.pods[wl_.by_name.at(bound_pod_spec(cl_, bp.id).name)];
            if (r.service < 0) return -1;
            return static_cast<std::int64_t>(e_.replica_memory_mib(replica_of(r)));
          },
          w_.eviction);
      bool acted = false;
      for (const auto& c : plan.evict()) {
        const auto& r = wl_.pods[wl_.by_name.at(c.name)];
        if (r.service < 0) continue;  // a training worker does not leak in this model: left alone
        const serving::replica_id rid = replica_of(r);
        const serving::gpu_slot sl = e_.gpu_of(rid);
        if (const double rate = e_.gpu_leak_rate_mib_per_s(sl); rate > 0.0) {
          ttf_left_min_ = std::min(ttf_left_min_, (e_.gpu_memory_total_mib(sl) - e_.gpu_memory_used_mib(sl)) / rate);
        }
        e_.remove_replica(rid);
        e_.place_replica(rid, sl);  // the replacement starts clean on the same device
        out_.leak_restarts += 1.0;
        acted = true;
      }
      if (acted) monitor_.reset(n);
    }
  }

  serving::serving_engine& e_;
  const serving::latency_model& lm_;
  const serving::serving_setup& su_;
  const serving::scenario& sc_;
  experiment_cluster& cl_;
  serving_workload& wl_;
  const std::vector<serving::training_job>& jobs_in_;
  const profile_wiring& w_;
  scheduling_queue& queue_;
  run_metrics& out_;
  gpu_memory_monitor monitor_;
  std::vector<job_rec> jobs_;
  std::vector<std::int32_t> free_buf_;
  leak_report rep_;
  std::vector<double> last_busy_, node_busy_;
  double clock_ = 0.0, held_partial_gpu_s_ = 0.0;
  double umin_ = std::numeric_limits<double>::infinity(), umax_ = 0.0, usum_ = 0.0;
  double ttf_left_min_ = std::numeric_limits<double>::infinity();
  std::size_t samples_ = 0;
};

}  // namespace detail

// What a run drives with, wired from one profile_wiring and seed (shared by run_once and the
// world's run_world_once): the scheduler over the configured profile, gpusched's gangs (gang_placer
// over the same profile: all members reserved, or nothing changed), the preemptor, and the queue
// (two-tier, or kube-default's priority sort, queue/queue_sort.hpp). Preemption's what-if runs the
// fit filters only (Kubernetes' PostFilter re-runs Filter plugins): CPU, memory and GPU fit under
// the profile's ceilings (overcommit_fit with no overcommit accepts exactly what NodeResourcesFit +
// GPUCheck accept), devices best fit as the profile's selector. Not movable: the preemptor points
// at the budget.
template <class C>
struct wired_run {
  using fit_profile = decltype(make_profile(checks(overcommit_fit{}), scores()));

  wired_run(const profile_wiring& w, std::uint64_t seed)
      : cfg(wired_config<C>(w)),
        sched(cfg.profiles.front().profile, seeded(cfg.profiles.front().options, seed)),
        gangs(cfg.profiles.front().profile, w.gang_all_or_nothing),
        budget(w.budget),
        preempt(make_profile(checks(overcommit_fit{w.overcommit}), scores()), preemption_seed(seed),
                w.preemption_budget ? &budget : nullptr, w.preemption),
        queue(w.queue),
        two_tier(w.two_tier_queue) {}
  wired_run(const wired_run&) = delete;
  wired_run& operator=(const wired_run&) = delete;

  // The driver over this wiring's queue; the preemptor and gang placer are moved into it (once).
  template <class W, class Observer>
  void drive(C& cl, W& wl, Observer& obs, const driver_options& o) {
    if (two_tier) {
      sim::drive(cl, wl, queue, sched, obs, o, std::move(preempt), std::move(gangs));
    } else {
      sim::drive(cl, wl, by_priority, sched, obs, o, std::move(preempt), std::move(gangs));
    }
  }

  scheduler_config<C> cfg;
  scheduler<C, dynamic_profile<C>> sched;
  gang_action<dynamic_profile<C>> gangs;
  preemption_budget budget;
  preempt_action<C, fit_profile> preempt;
  scheduling_queue queue;
  priority_sort_queue by_priority;
  bool two_tier;

 private:
  static schedule_options seeded(schedule_options o, std::uint64_t seed) {
    o.seed = seed;
    return o;
  }
  static preemption_options preemption_seed(std::uint64_t seed) {
    preemption_options po;
    po.seed = seed;
    return po;
  }
};

// Runs one profile on one seed. `duration_s` < 0 uses the scenario's. A configuration of the
// simulation driver (sim/driver.hpp, ADR 0010): arrivals only enter the queue (two-tier, or priority
// sort in submission order), a cycle runs when anything arrived or finished (and, for the two-tier
// queue, at every sample), the place / preempt / gang actions come from the wiring, and the period
// ends at the horizon with pods still running.
inline run_metrics run_once(const serving::scenario& sc, const serving::latency_model& lm, const profile_wiring& w,
                            std::uint64_t seed, double duration_s = -1.0) {
  using namespace serving;
  using C = experiment_cluster;
  const double T = duration_s < 0.0 ? sc.duration_s : duration_s;
  wired_run<C> run(w, seed);
  w.eviction.validate();

  serving_engine e(lm, sc.engine);
  const serving_setup su = populate(e, sc, lm, seed);
  C cl;
  const auto& np = sc.nodes;
  for (int n = 0; n < np.count; ++n) {
    node_spec ns{"node-" + std::to_string(n), np.cpu_milli, np.memory_mib, {}, "rack-0"};
    const int per = np.gpus_per_node / std::max(1, np.nvlink_islands);
    for (int i = 0; i < np.nvlink_islands; ++i) ns.add_gpus(per, np.gpu_model, np.gpu_memory_mib, static_cast<std::int16_t>(i));
    cl.base().add_node(ns);
  }
  run.queue.set_capacity({np.cpu_milli * np.count, np.memory_mib * np.count,
                          static_cast<milli>(np.gpus_per_node) * gpu_milli_whole * np.count});

  detail::serving_workload wl;
  std::uint64_t seq = 0;
  for (std::size_t i = 0; i < sc.services.size(); ++i) {
    const auto& s = sc.services[i];
    int k = 0;
    for (; k < s.replicas; ++k) wl.pods.push_back(detail::pod_rec{replica_pod(s, k), static_cast<int>(i), k, -1, seq++, 0.0});
    for (const auto& st : s.scale_up) {
      for (int m = 0; m < st.replicas; ++m, ++k)
        wl.pods.push_back(detail::pod_rec{replica_pod(s, k), static_cast<int>(i), k, -1, seq++, st.at_s});
    }
  }
  const auto jobs_in = expand_training(sc);
  for (std::size_t j = 0; j < jobs_in.size(); ++j) {
    for (pod& p : training_pods(jobs_in[j])) {
      wl.pods.push_back(detail::pod_rec{std::move(p), -1, -1, static_cast<int>(j), seq++, jobs_in[j].submit_s});
    }
  }
  engine_observer::replica_map replicas;
  for (std::size_t i = 0; i < wl.pods.size(); ++i) {
    const auto& r = wl.pods[i];
    wl.by_name.emplace(r.p.name, i);
    wl.times.push_back(driver_job{r.submit, r.job < 0 ? never : jobs_in[static_cast<std::size_t>(r.job)].duration_s, never});
    if (r.service >= 0) {
      replicas.emplace(r.p.name, su.replicas[static_cast<std::size_t>(r.service)][static_cast<std::size_t>(r.replica)]);
    }
  }
  follow_engine(cl, e, std::move(replicas));  // from here on the engine follows the cluster's bindings

  run_metrics out;
  detail::serving_observer obs(e, lm, su, sc, cl, wl, jobs_in, w, run.queue, out);
  driver_options o;
  o.queue_arrivals = true;
  o.sample_period = sc.utilisation_sample_s;
  o.first_sample = sc.utilisation_sample_s;
  o.sample_steps = true;
  o.cycle_after_sample = w.two_tier_queue;  // its backoffs and parking resolve with time
  o.horizon = T;
  run.drive(cl, wl, obs, o);
  obs.finish(T);
  return out;
}

}  // namespace gpusched::sim::experiment
