// The serving experiment's scenario: every parameter in one value (read from YAML by
// scenario_yaml.hpp), and the steps that turn it into a latency model, a populated serving_engine,
// and the pods a cluster simulator schedules. Format: docs/serving.md, default data/scenarios/seed.yaml.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gpusched/core/error.hpp"
#include "gpusched/core/pod.hpp"
#include "gpusched/core/types.hpp"
#include "gpusched/sim/serving/arrivals.hpp"
#include "gpusched/sim/serving/engine.hpp"
#include "gpusched/sim/serving/engine_types.hpp"
#include "gpusched/sim/serving/latency_model.hpp"
#include "gpusched/sim/serving/profile_table.hpp"
#include "gpusched/sim/serving/rng.hpp"

namespace gpusched::sim::serving {

// Identical GPU nodes.
struct node_pool_config {
  int count = 16;
  int gpus_per_node = 8;
  std::string gpu_model = "V100M32";
  std::int32_t gpu_memory_mib = 32768;
  milli cpu_milli = 80000;
  mib memory_mib = 524288;
  int nvlink_islands = 2;
};

struct model_config {
  std::string name;
  double gpu_scale = 1.0;
  double cpu_ms_per_item = 0.0;
  std::size_t line = 0;
};

struct latency_model_config {
  std::string util_csv;  // resolved against the scenario file's folder
  std::string constants_csv;
  duration_unit unit = duration_unit::seconds;
  share_scaling scaling = share_scaling::amdahl_sm;
  std::string multi_tenant = "sum_of_excess";  // the only rule so far (interference.hpp)
  std::vector<model_config> models;
  std::size_t line = 0;
};

struct service_config {
  std::string name;
  std::string model;
  int replicas = 1;
  std::int32_t gpu_share_milli = 1000;
  std::int32_t gpu_memory_mib = 0;
  milli cpu_milli = 0;
  mib memory_mib = 0;
  int priority = 8;
  tier tier_ = tier::prod;
  int max_batch = 1;
  double max_wait_s = 0.0;
  double slo_s = 0.2;
  double timeout_s = no_timeout;
  routing_policy routing = routing_policy::round_robin;
  arrival_params arrivals;
  // Replicas added during the period (a scale-up): `replicas` more pods of this service are
  // submitted at `at_s` and stay. Replica indices continue after the initial `replicas`.
  struct scale_step {
    double at_s = 0.0;
    int replicas = 0;
    std::size_t line = 0;
  };
  std::vector<scale_step> scale_up;
  std::size_t line = 0;

  // Initial replicas plus every scale-up step.
  [[nodiscard]] int total_replicas() const noexcept {
    int n = replicas;
    for (const auto& st : scale_up) n += st.replicas;
    return n;
  }
};

// `count` jobs submitted `every_s` apart from `submit_s`; each a gang of `workers` pods.
struct training_config {
  std::string name;
  int count = 1;
  double submit_s = 0.0;
  double every_s = 0.0;
  int workers = 1;
  int gpus_per_worker = 1;
  std::int32_t gpu_milli = gpu_milli_whole;  // per GPU
  std::int32_t gpu_memory_mib = 0;           // per GPU
  milli cpu_milli = 0;                       // per worker
  mib memory_mib = 0;                        // per worker
  int priority = 2;
  tier tier_ = tier::dev;
  double duration_s = 3600.0;            // solo run time
  std::string proxy_model = "resnet50";  // how it presses on GPU neighbours (interference.hpp)
  int proxy_batch = 32;
  std::size_t line = 0;
};

struct leak_config {
  double at_s = 0.0;
  std::string service;
  int replica = 0;
  double mib_per_min = 0.0;
  std::size_t line = 0;
};

// A scheduling profile to compare; `config` names its configuration file (empty: built in).
// Resolved by the integration step against the profile registry.
// Every mechanism switch is optional: unset means the profile's default (kube-default: priority
// queue, members one by one, Kubernetes preemption without a budget, no overcommit, no leak
// eviction; any other profile: two-tier queue, gangs all or nothing, preemption with the budget,
// overcommit 1.2 for Burstable / BestEffort CPU and memory, leak eviction). docs/experiment.md.
struct profile_config {
  std::string name;
  std::string config;
  std::optional<bool> two_tier_queue;         // queue: two_tier | priority
  std::optional<int> dev_share_period;        // queue_options.dev_share_period (0 or >= 2)
  std::optional<bool> gang_all_or_nothing;    // gangs: all_or_nothing | one_by_one
  std::optional<bool> preemption;             // preemption.enabled
  std::optional<bool> preemption_budget;      // preemption.budget present (and not `budget: none`)
  int budget_max_preemptions = 2;             // preemption.budget.max_preemptions (k)
  double budget_window_s = 3600.0;            // preemption.budget.window_s (W)
  double budget_cooldown_s = 1800.0;          // preemption.budget.cooldown_s (C)
  std::optional<double> overcommit_cpu;       // overcommit.cpu: Burstable / BestEffort ceiling ratio
  std::optional<double> overcommit_memory;    // overcommit.memory
  std::optional<bool> leak_eviction;          // leak_eviction.enabled
  std::size_t leak_window = 30;               // leak_eviction.window (readings)
  std::size_t leak_min_samples = 10;          // leak_eviction.min_samples
  double leak_min_slope_mib_per_s = 1.0;      // leak_eviction.min_slope_mib_per_s
  double leak_min_r2 = 0.8;                   // leak_eviction.min_r2
  std::size_t line = 0;
};

struct scenario {
  std::string file;  // where it was read from (for file:line errors)
  std::string name;
  double duration_s = 86400.0;
  std::vector<std::uint64_t> seeds;
  node_pool_config nodes;
  latency_model_config latency;
  engine_options engine;
  double utilisation_sample_s = 60.0;
  std::vector<service_config> services;
  std::vector<training_config> training;
  std::vector<leak_config> leaks;
  std::vector<profile_config> profiles;
};

// Loads the scenario's profile tables and builds its latency model. Errors: file_error naming the
// scenario line of the offending entry (or the table's own file:line).
inline latency_model make_latency_model(const scenario& sc) {
  const auto& lc = sc.latency;
  const util_table table = util_table::load(lc.util_csv, lc.unit);
  const interference_constants constants = interference_constants::load(lc.constants_csv);
  std::vector<model_latency_params> params;
  for (const auto& m : lc.models) {
    const model_profile* p = table.find(m.name);
    if (p == nullptr)
      throw file_error(sc.file, m.line, "latency_model.models: '" + m.name + "' is not in " + lc.util_csv);
    if (p->min_batch() != 1)
      throw file_error(sc.file, m.line, "latency_model.models: '" + m.name + "' is not profiled at batch 1");
    params.push_back(model_latency_params{m.name, m.gpu_scale, m.cpu_ms_per_item / 1000.0});
  }
  return latency_model(table, constants, std::move(params), lc.scaling);
}

// Checks what needs the latency model: service and proxy models known, batch sizes profiled, leak
// targets existing. file_error with the scenario line.
inline void check_against_model(const scenario& sc, const latency_model& lm) {
  auto find = [&](const std::string& name) -> std::optional<model_id> {
    for (std::size_t i = 0; i < lm.model_count(); ++i) {
      if (lm.name(static_cast<model_id>(i)) == name) return static_cast<model_id>(i);
    }
    return std::nullopt;
  };
  for (const auto& s : sc.services) {
    const auto m = find(s.model);
    if (!m)
      throw file_error(sc.file, s.line,
                       "services." + s.name + ".model: '" + s.model + "' is not in latency_model.models");
    if (s.max_batch > lm.max_batch(*m)) {
      throw file_error(sc.file, s.line,
                       "services." + s.name + ".max_batch: " + std::to_string(s.max_batch) +
                           " is above the profiled maximum " + std::to_string(lm.max_batch(*m)));
    }
  }
  for (const auto& t : sc.training) {
    const auto m = find(t.proxy_model);
    if (!m) {
      throw file_error(
          sc.file, t.line,
          "training." + t.name + ".interference_proxy.model: '" + t.proxy_model + "' is not in latency_model.models");
    }
    if (t.proxy_batch > lm.max_batch(*m)) {
      throw file_error(sc.file, t.line,
                       "training." + t.name + ".interference_proxy.batch: above the profiled maximum " +
                           std::to_string(lm.max_batch(*m)));
    }
  }
}

// Handles of what populate() created.
struct serving_setup {
  std::vector<service_id> services;               // in scenario order
  std::vector<std::vector<replica_id>> replicas;  // per service, unplaced
};

// The seed of service i's arrivals under run seed `seed`: independent of every other service and of
// anything a scheduling profile does, so that two profiles replay the same arrival sequence.
constexpr std::uint64_t arrival_seed(std::uint64_t seed, std::size_t service_index) noexcept {
  return derive_seed(seed, 0x5E41'0000ULL + service_index);
}

// Adds the scenario's nodes, services (with seeded arrivals over duration_s), unplaced replicas
// and scheduled leaks to an empty engine. Everything is checked before the engine changes.
inline serving_setup populate(serving_engine& e, const scenario& sc, const latency_model& lm, std::uint64_t seed) {
  if (e.node_count() != 0 || e.service_count() != 0)
    throw invalid_argument_error("engine", "populate() needs an empty engine");
  check_against_model(sc, lm);
  for (const auto& l : sc.leaks) {
    bool found = false;
    for (const auto& s : sc.services) {
      if (s.name == l.service) {
        if (l.replica >= s.replicas) {
          throw file_error(sc.file, l.line,
                           "leaks.replica: service '" + s.name + "' has " + std::to_string(s.replicas) +
                               " replicas (0-based index)");
        }
        found = true;
      }
    }
    if (!found) throw file_error(sc.file, l.line, "leaks.service: no service named '" + l.service + "'");
  }
  serving_setup out;
  for (int n = 0; n < sc.nodes.count; ++n)
    e.add_node(sc.nodes.gpus_per_node, sc.nodes.gpu_memory_mib, sc.nodes.cpu_milli);
  for (std::size_t i = 0; i < sc.services.size(); ++i) {
    const auto& s = sc.services[i];
    service_spec sp;
    sp.name = s.name;
    sp.model = lm.id(s.model);
    sp.max_batch = s.max_batch;
    sp.max_wait_s = s.max_wait_s;
    sp.slo_s = s.slo_s;
    sp.timeout_s = s.timeout_s;
    sp.gpu_share_milli = s.gpu_share_milli;
    sp.gpu_memory_mib = s.gpu_memory_mib;
    sp.routing = s.routing;
    const service_id id = e.add_service(sp, arrival_process(s.arrivals, arrival_seed(seed, i), sc.duration_s));
    out.services.push_back(id);
    out.replicas.emplace_back();
    for (int r = 0; r < s.total_replicas(); ++r) out.replicas.back().push_back(e.add_replica(id));
  }
  for (const auto& l : sc.leaks) {
    for (std::size_t i = 0; i < sc.services.size(); ++i) {
      if (sc.services[i].name == l.service) {
        e.schedule_leak(out.replicas[i][static_cast<std::size_t>(l.replica)], l.at_s, l.mib_per_min / 60.0);
      }
    }
  }
  return out;
}

// The pod a cluster simulator schedules for replica `index` of service `s` (prod tier, Guaranteed,
// one GPU share). Its name is "<service>-<index>".
inline pod replica_pod(const service_config& s, int index) {
  auto b = make_pod(s.name + "-" + std::to_string(index));
  b.cpu(s.cpu_milli)
      .memory(s.memory_mib)
      .gpu_share(s.gpu_share_milli)
      .gpu_memory(s.gpu_memory_mib)
      .model(s.model)
      .priority(s.priority)
      .qos(qos_class::guaranteed);
  if (s.tier_ == tier::prod)
    b.prod();
  else
    b.dev();
  return b.build();
}

// One concrete training job of a training_config stream.
struct training_job {
  std::string name;  // "<config name>-<k>"
  double submit_s = 0.0;
  double duration_s = 0.0;
  const training_config* config = nullptr;
};

inline std::vector<training_job> expand_training(const scenario& sc) {
  std::vector<training_job> jobs;
  for (const auto& t : sc.training) {
    for (int k = 0; k < t.count; ++k) {
      jobs.push_back(training_job{t.name + "-" + std::to_string(k), t.submit_s + k * t.every_s, t.duration_s, &t});
    }
  }
  return jobs;
}

// The gang of worker pods of a training job (gang name = job name, min members = workers).
inline std::vector<pod> training_pods(const training_job& j) {
  const training_config& t = *j.config;
  std::vector<pod> pods;
  for (int w = 0; w < t.workers; ++w) {
    auto b = make_pod(j.name + "-w" + std::to_string(w));
    b.cpu(t.cpu_milli)
        .memory(t.memory_mib)
        .gpu_share(t.gpu_milli, t.gpus_per_worker)
        .gpu_memory(t.gpu_memory_mib)
        .model(t.proxy_model)
        .priority(t.priority)
        .qos(qos_class::burstable)
        .gang(j.name, t.workers)
        .submitted(j.submit_s);
    if (t.tier_ == tier::prod)
      b.prod();
    else
      b.dev();
    pods.push_back(b.build());
  }
  return pods;
}

}  // namespace gpusched::sim::serving
