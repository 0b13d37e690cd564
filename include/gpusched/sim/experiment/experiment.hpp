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
#include <vector>

#include "gpusched/core/error.hpp"
#include "gpusched/core/in_memory_cluster.hpp"
#include "gpusched/gang/gang.hpp"
#include "gpusched/gang/placement.hpp"
#include "gpusched/profile/config_yaml.hpp"
#include "gpusched/schedule/schedule_one.hpp"
#include "gpusched/sim/serving/engine.hpp"
#include "gpusched/sim/serving/scenario.hpp"

namespace gpusched::sim::experiment {

// How a profile treats gangs, and which scheduler configuration it runs.
struct profile_wiring {
  std::string name;
  std::string config_text;        // a KubeSchedulerConfiguration (first profile used)
  std::string config_source;      // for errors
  bool gang_all_or_nothing = false;  // false: members bound one by one, partial gangs hold GPUs
};

// kube-default: LeastAllocated + BalancedAllocation (Kubernetes' default score plugins, equal
// weights: pkg/scheduler/apis/config/v1/default_plugins.go). GPUCheck stands in for the device
// plugin's own fit (Kubernetes would not bind a pod to a node without free devices).
inline profile_wiring kube_default_wiring() {
  return profile_wiring{"kube-default",
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
                        "        weight: 1\n",
                        "<kube-default>", false};
}

// Resolves a scenario's profile entry: "kube-default" is built in; anything else needs `config`
// (a file, resolved against the scenario's folder) and schedules gangs all-or-nothing.
inline profile_wiring resolve_profile(const serving::scenario& sc, const std::string& name) {
  if (name == "kube-default") return kube_default_wiring();
  for (const auto& p : sc.profiles) {
    if (p.name != name) continue;
    if (p.config.empty()) throw file_error(sc.file, p.line, "profiles: '" + name + "' needs a config file");
    const std::string& path = p.config;  // already resolved against the scenario's folder by the loader
    std::ifstream in(path);
    if (!in) throw file_error(sc.file, p.line, "profiles: cannot open config '" + path + "'");
    std::stringstream ss;
    ss << in.rdbuf();
    return profile_wiring{name, ss.str(), path, true};
  }
  throw invalid_argument_error("profiles", "no profile named '" + name + "' in " + sc.file);
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
  double preemptions = 0.0;
  double partial_gang_gpu_hours = 0.0;  // GPUs held by members of gangs that had not started
  double oom_crashes = 0.0;             // replicas killed by a full GPU (leaks), restarted in place
};

namespace detail {

struct pod_rec {
  pod p;
  int service = -1;  // >= 0: a replica of this service
  int replica = -1;  // index within service
  int job = -1;      // >= 0: a worker of this training job
  std::uint64_t seq = 0;
  bool bound = false;
  bool ran = false;
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

// Runs one profile on one seed. `duration_s` < 0 uses the scenario's.
inline run_metrics run_once(const serving::scenario& sc, const serving::latency_model& lm, const profile_wiring& w,
                            std::uint64_t seed, double duration_s = -1.0) {
  using namespace serving;
  const double T = duration_s < 0.0 ? sc.duration_s : duration_s;
  auto cfg = parse_scheduler_config<in_memory_cluster>(w.config_text, w.config_source);
  if (cfg.profiles.empty()) throw invalid_argument_error("profiles", w.config_source + " has no profile");
  auto opts = cfg.profiles.front().options;
  opts.seed = seed;
  scheduler<in_memory_cluster, dynamic_profile<in_memory_cluster>> sched(cfg.profiles.front().profile, opts);
  // gpusched's gangs: gang_placer over the same profile (all members reserved, or nothing changed).
  gang_placer<dynamic_profile<in_memory_cluster>> placer(cfg.profiles.front().profile);

  serving_engine e(lm, sc.engine);
  const serving_setup su = populate(e, sc, lm, seed);
  in_memory_cluster cl;
  const auto& np = sc.nodes;
  for (int n = 0; n < np.count; ++n) {
    node_spec ns{"node-" + std::to_string(n), np.cpu_milli, np.memory_mib, {}, "rack-0"};
    const int per = np.gpus_per_node / std::max(1, np.nvlink_islands);
    for (int i = 0; i < np.nvlink_islands; ++i) ns.add_gpus(per, np.gpu_model, np.gpu_memory_mib, static_cast<std::int16_t>(i));
    cl.add_node(ns);
  }

  std::vector<detail::pod_rec> pods;
  std::uint64_t seq = 0;
  for (std::size_t i = 0; i < sc.services.size(); ++i) {
    for (int k = 0; k < sc.services[i].replicas; ++k) {
      pods.push_back(detail::pod_rec{replica_pod(sc.services[i], k), static_cast<int>(i), k, -1, seq++});
    }
  }
  const auto jobs_in = expand_training(sc);
  std::vector<detail::job_rec> jobs(jobs_in.size());
  for (std::size_t j = 0; j < jobs_in.size(); ++j) {
    jobs[j].submit = jobs_in[j].submit_s;
    jobs[j].duration = jobs_in[j].duration_s;
    for (pod& p : training_pods(jobs_in[j])) {
      jobs[j].pods.push_back(pods.size());
      pods.push_back(detail::pod_rec{std::move(p), -1, -1, static_cast<int>(j), seq++});
    }
  }
  std::size_t submitted = 0;
  for (const auto& r : pods) submitted += (r.job < 0 || jobs[static_cast<std::size_t>(r.job)].submit < T) ? 1 : 0;

  std::vector<milli> cpu_demand(static_cast<std::size_t>(np.count), 0);
  auto set_cpu = [&](node_index n, milli d) {
    cpu_demand[n] += d;
    e.set_node_cpu_demand(n, cpu_demand[n]);
  };
  auto bind = [&](detail::pod_rec& r) -> bool {
    const schedule_result res = sched.place_one(cl, r.p);
    if (!res) return false;
    r.bound = true;
    r.where = res.where;
    set_cpu(res.where.node, r.p.cpu_milli);
    return true;
  };
  auto unbind = [&](detail::pod_rec& r) {
    release(cl, r.p, r.where);
    set_cpu(r.where.node, -r.p.cpu_milli);
    r.bound = false;
  };

  run_metrics out;
  double held_partial_gpu_s = 0.0;
  double now = 0.0;
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

  // One scheduling cycle: pending pods in priority order (higher first), then submission order.
  std::vector<std::size_t> order;
  auto cycle = [&] {
    order.clear();
    for (std::size_t i = 0; i < pods.size(); ++i) {
      const auto& r = pods[i];
      if (r.bound) continue;
      if (r.job >= 0) {
        const auto& j = jobs[static_cast<std::size_t>(r.job)];
        if (!j.submitted || j.finished) continue;
      }
      order.push_back(i);
    }
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return pods[a].p.priority > pods[b].p.priority; });
    for (std::size_t k = 0; k < order.size(); ++k) {
      auto& r = pods[order[k]];
      if (r.bound) continue;
      if (r.service >= 0) {
        if (bind(r)) {
          r.ran = true;
          e.place_replica(su.replicas[static_cast<std::size_t>(r.service)][static_cast<std::size_t>(r.replica)],
                          e.slot(r.where.node, std::countr_zero(r.where.gpus)));
        }
        continue;
      }
      auto& j = jobs[static_cast<std::size_t>(r.job)];
      if (w.gang_all_or_nothing) {  // every member or none: gang_placer (docs/gang.md)
        const training_config& tc = *jobs_in[static_cast<std::size_t>(r.job)].config;
        const gang_spec g = make_gang(jobs_in[static_cast<std::size_t>(r.job)].name)
                                .role("worker", r.p, tc.workers)
                                .priority(r.p.priority)
                                .submitted(j.submit);
        const gang_result gr = placer.place(cl, g);
        if (!gr) continue;
        for (const member_binding& mb : gr.members) {
          auto& m = pods[j.pods[mb.ordinal]];
          m.bound = true;
          m.where = mb.where;
          set_cpu(mb.where.node, m.p.cpu_milli);
        }
      } else {
        bind(r);  // one by one: a partial gang keeps what it got
      }
      bool all = true;
      for (const std::size_t pi : j.pods) all = all && pods[pi].bound;
      if (all && !j.started) start_job(j);
    }
  };

  // Event times: submissions, completions, utilisation samples.
  const double dt = sc.utilisation_sample_s;
  const std::size_t gpus = static_cast<std::size_t>(np.count) * static_cast<std::size_t>(np.gpus_per_node);
  std::vector<double> last_busy(gpus, 0.0);
  std::vector<double> node_busy(static_cast<std::size_t>(np.count), 0.0);
  double umin = std::numeric_limits<double>::infinity(), umax = 0.0, usum = 0.0;
  std::size_t samples = 0;
  double next_sample = dt;
  while (true) {
    bool changed = now == 0.0;
    for (auto& j : jobs) {
      if (!j.submitted && j.submit <= now && j.submit < T) j.submitted = changed = true;
      if (j.started && !j.finished && j.end <= now) {
        j.finished = changed = true;
        for (const auto x : j.externals) e.remove_external(x);
        for (const std::size_t pi : j.pods) unbind(pods[pi]);
        out.jct_mean_s += j.end - j.submit;
        out.jobs_finished += 1.0;
      }
    }
    if (changed) cycle();
    if (now >= T) break;
    double t = std::min(next_sample, T);
    for (const auto& j : jobs) {
      if (!j.submitted && j.submit < T) t = std::min(t, j.submit);
      if (j.started && !j.finished) t = std::min(t, j.end);
    }
    for (const auto& r : pods) {  // GPUs held by gangs that have not started, over [now, t)
      if (r.bound && r.job >= 0 && !jobs[static_cast<std::size_t>(r.job)].started)
        held_partial_gpu_s += (t - now) * r.where.gpu_count();
    }
    e.run_until(t);
    now = t;
    for (const auto& n : e.take_notifications()) {  // crashes restart by themselves (engine.auto_restart)
      if (n.what == notification::kind::replica_oom) out.oom_crashes += 1.0;
    }
    if (now >= next_sample) {
      double busy = 0.0;
      for (gpu_slot g = 0; g < gpus; ++g) {
        const double b = e.gpu_busy_seconds(g);
        busy += b - last_busy[g];
        last_busy[g] = b;
      }
      const double u = busy / (static_cast<double>(gpus) * dt);
      // The node-metrics reading LoadAware scores against (Koordinator's NodeMetric): CPU demand and
      // memory requests over capacity, mean GPU busy share over the last sample interval.
      for (node_index n = 0; n < static_cast<node_index>(np.count); ++n) {
        node_metrics m;
        m.cpu_used = std::min(1.0, static_cast<double>(cpu_demand[n]) / static_cast<double>(np.cpu_milli));
        m.mem_used = std::min(1.0, static_cast<double>(cl.resources(n).mem_allocated) /
                                       static_cast<double>(np.memory_mib));
        m.gpu_used = std::min(1.0, node_busy[n] / (static_cast<double>(np.gpus_per_node) * dt));
        node_busy[n] = 0.0;
        cl.set_load(n, &m);
      }
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
  return out;
}

}  // namespace gpusched::sim::experiment
