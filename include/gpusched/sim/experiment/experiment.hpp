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
#include "gpusched/sim/serving/engine.hpp"
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
      "      formula: BalanceAfter\n";
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

using experiment_cluster = bound_cluster<in_memory_cluster>;

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

// Runs one profile on one seed. `duration_s` < 0 uses the scenario's.
inline run_metrics run_once(const serving::scenario& sc, const serving::latency_model& lm, const profile_wiring& w,
                            std::uint64_t seed, double duration_s = -1.0) {
  using namespace serving;
  using C = experiment_cluster;
  const double T = duration_s < 0.0 ? sc.duration_s : duration_s;
  auto cfg = wired_config<C>(w);
  auto opts = cfg.profiles.front().options;
  opts.seed = seed;
  scheduler<C, dynamic_profile<C>> sched(cfg.profiles.front().profile, opts);
  // gpusched's gangs: gang_placer over the same profile (all members reserved, or nothing changed).
  gang_placer<dynamic_profile<C>> placer(cfg.profiles.front().profile);
  // Preemption's what-if runs the fit filters only (Kubernetes' PostFilter re-runs Filter plugins):
  // CPU, memory and GPU fit under the profile's ceilings (overcommit_fit with no overcommit accepts
  // exactly what NodeResourcesFit + GPUCheck accept), devices best fit as the profile's selector.
  auto fit_only = make_profile(checks(overcommit_fit{w.overcommit}), scores());
  preemption_options po;
  po.seed = seed;
  preemptor<C, decltype(fit_only)> pre(fit_only, po);
  preemption_budget budget(w.budget);
  preemption_budget* bud = w.preemption_budget ? &budget : nullptr;
  scheduling_queue queue(w.queue);
  priority_sort_queue by_priority;  // kube-default's order (queue/queue_sort.hpp)
  gpu_memory_monitor monitor(w.leak);
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
  queue.set_capacity({np.cpu_milli * np.count, np.memory_mib * np.count,
                      static_cast<milli>(np.gpus_per_node) * gpu_milli_whole * np.count});

  std::vector<detail::pod_rec> pods;
  std::uint64_t seq = 0;
  for (std::size_t i = 0; i < sc.services.size(); ++i) {
    const auto& s = sc.services[i];
    int k = 0;
    for (; k < s.replicas; ++k) pods.push_back(detail::pod_rec{replica_pod(s, k), static_cast<int>(i), k, -1, seq++, 0.0});
    for (const auto& st : s.scale_up) {
      for (int m = 0; m < st.replicas; ++m, ++k)
        pods.push_back(detail::pod_rec{replica_pod(s, k), static_cast<int>(i), k, -1, seq++, st.at_s});
    }
  }
  const auto jobs_in = expand_training(sc);
  std::vector<detail::job_rec> jobs(jobs_in.size());
  for (std::size_t j = 0; j < jobs_in.size(); ++j) {
    jobs[j].submit = jobs_in[j].submit_s;
    jobs[j].duration = jobs_in[j].duration_s;
    for (pod& p : training_pods(jobs_in[j])) {
      jobs[j].pods.push_back(pods.size());
      pods.push_back(detail::pod_rec{std::move(p), -1, -1, static_cast<int>(j), seq++, jobs_in[j].submit_s});
    }
  }
  std::unordered_map<std::string, std::size_t> by_name;
  for (std::size_t i = 0; i < pods.size(); ++i) by_name.emplace(pods[i].p.name, i);
  std::size_t submitted = 0;
  for (const auto& r : pods) submitted += r.submit < T ? 1 : 0;

  run_metrics out;
  double now = 0.0;
  std::vector<milli> cpu_demand(static_cast<std::size_t>(np.count), 0);
  auto set_cpu = [&](node_index n, milli d) {
    cpu_demand[n] += d;
    e.set_node_cpu_demand(n, cpu_demand[n]);
    monitor.reset(n);  // the node's tenants changed: a step, not a trend
  };
  auto replica_of = [&](const detail::pod_rec& r) {
    return su.replicas[static_cast<std::size_t>(r.service)][static_cast<std::size_t>(r.replica)];
  };
  // Records a reservation the cluster already holds.
  auto on_bound = [&](detail::pod_rec& r, const binding& b) {
    r.bound = true;
    r.where = b;
    set_cpu(b.node, r.p.cpu_milli);
    if (r.service >= 0) {
      r.ran = true;
      e.place_replica(replica_of(r), e.slot(b.node, std::countr_zero(b.gpus)));
    }
  };
  // Records a release the cluster already did (preemption's transaction) and requeues the pod.
  auto on_released = [&](detail::pod_rec& r) {
    r.bound = false;
    set_cpu(r.where.node, -r.p.cpu_milli);
    if (r.service >= 0) e.remove_replica(replica_of(r));
    if (w.two_tier_queue) queue.released(r.p);
  };
  auto push = [&](detail::pod_rec& r) {
    if (r.queued) return;
    if (w.two_tier_queue) {
      queue.push(r.p, now);
    } else {
      by_priority.push(r.p, now, r.seq);  // equal priorities in submission (pod) order
    }
    r.queued = true;
  };

  double held_partial_gpu_s = 0.0;
  auto start_job = [&](detail::job_rec& j) {
    j.started = true;
    j.start = now;
    j.end = now + j.duration;
    const training_config& tc = *jobs_in[static_cast<std::size_t>(&j - jobs.data())].config;
    for (const std::size_t pi : j.pods) {
      auto& r = pods[pi];
      r.ran = true;
      for_each_gpu(r.where.gpus, [&](int g) {
        j.externals.push_back(e.add_external(e.slot(r.where.node, g), lm.id(tc.proxy_model), tc.proxy_batch,
                                             r.where.gpu_milli, r.where.gpu_mem_mib));
      });
    }
  };
  auto stop_job = [&](detail::job_rec& j) {
    for (const auto x : j.externals) e.remove_external(x);
    j.externals.clear();
  };

  // Kubernetes preemption for pod r (PostFilter): victims leave (whole gangs), r takes their place.
  auto try_preempt = [&](detail::pod_rec& r) -> bool {
    if (!w.preemption) return false;
    const preemption_result plan = pre.plan(cl, r.p, now, bud);
    if (!plan) return false;
    pre.apply(cl, r.p, plan, now, bud);
    out.preemptions += static_cast<double>(plan.victims.size());
    for (const auto& v : plan.victims) {
      auto& vr = pods[by_name.at(v.spec.name)];
      on_released(vr);
      if (vr.job >= 0) {
        auto& vj = jobs[static_cast<std::size_t>(vr.job)];
        if (vj.started) {  // no checkpoint in this model: the job starts over
          stop_job(vj);
          vj.started = false;
          out.jobs_restarted += 1.0;
        }
      }
    }
    on_bound(r, plan.preemptor_binding);
    for (const auto& v : plan.victims) push(pods[by_name.at(v.spec.name)]);
    return true;
  };

  // Places one pending unit (a pod, or a whole gang under all-or-nothing); rejections for the queue.
  rejection_counts why;
  std::vector<char> gang_tried(jobs.size(), 0);
  auto place_unit = [&](std::size_t idx) -> bool {
    auto& r = pods[idx];
    why = rejection_counts{};
    if (r.bound) return true;
    if (r.job < 0 || !w.gang_all_or_nothing) {
      const schedule_result res = sched.place_one(cl, r.p);
      bool ok = static_cast<bool>(res);
      if (ok) {
        on_bound(r, res.where);
      } else {
        why = res.rejections;
        // A gang's members do not preempt under all-or-nothing (one member's room is not the gang's).
        ok = try_preempt(r);
      }
      if (r.job >= 0) {
        auto& j = jobs[static_cast<std::size_t>(r.job)];
        bool all = true;
        for (const std::size_t pi : j.pods) all = all && pods[pi].bound;
        if (all && !j.started) start_job(j);
      }
      return ok;
    }
    auto& j = jobs[static_cast<std::size_t>(r.job)];
    if (gang_tried[static_cast<std::size_t>(r.job)]) return false;
    gang_tried[static_cast<std::size_t>(r.job)] = 1;
    // One role per member so that each keeps its own pod (and name) in the cluster's records.
    auto gb = make_gang(jobs_in[static_cast<std::size_t>(r.job)].name);
    for (const std::size_t pi : j.pods) gb.role(pods[pi].p.name, pods[pi].p, 1);
    const gang_spec g = gb.priority(r.p.priority).submitted(j.submit);
    const gang_result gr = placer.place(cl, g);
    if (!gr) {
      why = gr.failure.rejections;
      return false;
    }
    for (const member_binding& mb : gr.members) on_bound(pods[j.pods[mb.role]], mb.where);
    start_job(j);
    return true;
  };

  // One scheduling cycle over any QueueSort: each unit popped once (a gang is one unit in the
  // two-tier queue; the priority sort pops pods, and a gang member places its whole gang under
  // all-or-nothing), then scheduled or unschedulable with its rejections.
  auto drain = [&](auto& q) {
    while (auto u = q.pop(now)) {
      bool ok = true;
      for (const pod* pp : u->pods) {
        const std::size_t i = by_name.at(pp->name);
        ok = place_unit(i) && ok;
        if (!ok && w.gang_all_or_nothing && pods[i].job >= 0) break;
      }
      if (ok) {
        for (const pod* pp : u->pods) pods[by_name.at(pp->name)].queued = false;
        q.scheduled(u->ticket, now);
      } else {
        q.unschedulable(u->ticket, now, why);
      }
    }
  };
  auto cycle = [&] {
    cl.set_time(now);
    std::fill(gang_tried.begin(), gang_tried.end(), 0);
    if (w.two_tier_queue) {
      drain(queue);
    } else {
      drain(by_priority);
    }
  };

  // Leak eviction: per-device free memory readings; a node whose device will be full within the
  // detector's horizon (reading interval + start-up) gets its leaking replica restarted in place (a
  // planned restart, before the device fills up).
  std::vector<std::int32_t> free_buf(static_cast<std::size_t>(np.gpus_per_node));
  leak_report rep;
  double ttf_left_min = std::numeric_limits<double>::infinity();
  auto check_leaks = [&] {
    for (node_index n = 0; n < static_cast<node_index>(np.count); ++n) {
      for (int g = 0; g < np.gpus_per_node; ++g) {
        const gpu_slot sl = e.slot(n, g);
        free_buf[static_cast<std::size_t>(g)] =
            static_cast<std::int32_t>(std::max(0.0, e.gpu_memory_total_mib(sl) - e.gpu_memory_used_mib(sl)));
      }
      monitor.record(n, now, free_buf);
      if (!monitor.check(n, rep)) continue;
      const eviction_plan plan = plan_eviction(
          cl, rep,
          [&](const bound_pod& bp) -> std::int64_t {
            const auto& r = pods[by_name.at(bound_pod_spec(cl, bp.id).name)];
            if (r.service < 0) return -1;
            return static_cast<std::int64_t>(e.replica_memory_mib(replica_of(r)));
          },
          w.eviction);
      bool acted = false;
      for (const auto& c : plan.evict()) {
        const auto& r = pods[by_name.at(c.name)];
        if (r.service < 0) continue;  // a training worker does not leak in this model: left alone
        const replica_id rid = replica_of(r);
        const gpu_slot sl = e.gpu_of(rid);
        if (const double rate = e.gpu_leak_rate_mib_per_s(sl); rate > 0.0) {
          ttf_left_min = std::min(ttf_left_min, (e.gpu_memory_total_mib(sl) - e.gpu_memory_used_mib(sl)) / rate);
        }
        e.remove_replica(rid);
        e.place_replica(rid, sl);  // the replacement starts clean on the same device
        out.leak_restarts += 1.0;
        acted = true;
      }
      if (acted) monitor.reset(n);
    }
  };

  // Event times: pod arrivals, completions, utilisation samples.
  const double dt = sc.utilisation_sample_s;
  const std::size_t gpus = static_cast<std::size_t>(np.count) * static_cast<std::size_t>(np.gpus_per_node);
  std::vector<double> last_busy(gpus, 0.0);
  std::vector<double> node_busy(static_cast<std::size_t>(np.count), 0.0);
  double umin = std::numeric_limits<double>::infinity(), umax = 0.0, usum = 0.0;
  std::size_t samples = 0;
  double next_sample = dt;
  bool sampled = false;
  while (true) {
    bool changed = now == 0.0;
    for (auto& r : pods) {
      if (!r.arrived && r.submit <= now && r.submit < T) {
        r.arrived = changed = true;
        if (r.job >= 0) jobs[static_cast<std::size_t>(r.job)].submitted = true;
        push(r);
      }
    }
    for (auto& j : jobs) {
      if (j.started && !j.finished && j.end <= now) {
        j.finished = changed = true;
        stop_job(j);
        for (const std::size_t pi : j.pods) {
          auto& r = pods[pi];
          cl.release(r.p, r.where);
          on_released(r);
        }
        out.jct_mean_s += j.end - j.submit;
        out.jobs_finished += 1.0;
        if (w.two_tier_queue) queue.on_cluster_event(cluster_event::resources_released, now);
      }
    }
    // The two-tier queue's backoffs and parking resolve with time: it is offered every sample too.
    if (changed || (sampled && w.two_tier_queue)) cycle();
    sampled = false;
    if (now >= T) break;
    double t = std::min(next_sample, T);
    for (const auto& r : pods) {
      if (!r.arrived && r.submit < T) t = std::min(t, r.submit);
    }
    for (const auto& j : jobs) {
      if (j.started && !j.finished) t = std::min(t, j.end);
    }
    for (const auto& r : pods) {  // GPUs held by gangs that have not started, over [now, t)
      if (r.bound && r.job >= 0 && !jobs[static_cast<std::size_t>(r.job)].started)
        held_partial_gpu_s += (t - now) * r.where.gpu_count();
      if (r.service >= 0 && r.arrived && !r.bound) out.replicas_pending_s += t - now;
    }
    e.run_until(t);
    now = t;
    for (const auto& n : e.take_notifications()) {  // crashes restart by themselves (engine.auto_restart)
      if (n.what == notification::kind::replica_oom) {
        out.oom_crashes += 1.0;
        ttf_left_min = 0.0;
        monitor.reset(e.node_of(n.gpu));
      }
    }
    if (now >= next_sample) {
      sampled = true;
      double busy = 0.0;
      for (gpu_slot g = 0; g < gpus; ++g) {
        const double b = e.gpu_busy_seconds(g);
        busy += b - last_busy[g];
        node_busy[e.node_of(g)] += b - last_busy[g];
        last_busy[g] = b;
      }
      const double u = busy / (static_cast<double>(gpus) * dt);
      // The node-metrics reading LoadAware scores against (Koordinator's NodeMetric): CPU demand and
      // memory requests over capacity, mean GPU busy share over the last sample interval.
      for (node_index n = 0; n < static_cast<node_index>(np.count); ++n) {
        node_metrics m;
        m.cpu_used = std::min(1.0, static_cast<double>(cpu_demand[n]) / static_cast<double>(np.cpu_milli));
        m.mem_used = std::min(1.0, static_cast<double>(cl.base().resources(n).mem_allocated) /
                                       static_cast<double>(np.memory_mib));
        m.gpu_used = std::min(1.0, node_busy[n] / (static_cast<double>(np.gpus_per_node) * dt));
        node_busy[n] = 0.0;
        cl.base().set_load(n, &m);
      }
      if (w.leak_eviction) check_leaks();
      umin = std::min(umin, u);
      umax = std::max(umax, u);
      usum += u;
      ++samples;
      next_sample += dt;
    }
  }

  latency_histogram all;
  std::uint64_t completed = 0, arrived = 0, within = 0;
  for (const service_id s : su.services) {
    const auto& m = e.metrics(s);
    all.merge(m.latency);
    completed += m.completed;
    arrived += m.arrived;
    within += m.completed_within_slo;
  }
  out.throughput_qps = static_cast<double>(completed) / T;
  out.p50_ms = all.quantile(0.50) * 1e3;
  out.p95_ms = all.quantile(0.95) * 1e3;
  out.p99_ms = all.quantile(0.99) * 1e3;
  out.slo_attainment_pct = arrived == 0 ? 0.0 : 100.0 * static_cast<double>(within) / static_cast<double>(arrived);
  out.gpu_util_mean_pct = samples == 0 ? 0.0 : 100.0 * usum / static_cast<double>(samples);
  out.gpu_util_swing_pct = samples == 0 ? 0.0 : 100.0 * (umax - umin);
  std::size_t ran = 0;
  for (const auto& r : pods) ran += r.ran ? 1 : 0;
  out.sched_success_pct = submitted == 0 ? 100.0 : 100.0 * static_cast<double>(ran) / static_cast<double>(submitted);
  if (out.jobs_finished > 0) out.jct_mean_s /= out.jobs_finished;
  out.partial_gang_gpu_hours = held_partial_gpu_s / 3600.0;
  out.leak_ttf_left_min_s = std::isfinite(ttf_left_min) ? ttf_left_min : 0.0;
  return out;
}

}  // namespace gpusched::sim::experiment
