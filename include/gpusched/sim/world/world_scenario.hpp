// The seed's world scenario (issue 17): data/scenarios/seed-world.yaml read into typed values, for
// sim/world/run_world.hpp. Strict as the serving scenario reader (profile/yaml_strict.hpp through
// serving::yaml_detail::reader): an unknown or duplicate key, a wrong type, a quoted or ambiguous
// number or a value out of range is a file_error with file:line and the field; nothing is returned.
// Every key and its meaning: docs/experiment-world.md.
#pragma once

#if __has_include(<yaml-cpp/yaml.h>)

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gpusched/core/error.hpp"
#include "gpusched/core/types.hpp"
#include "gpusched/sim/serving/arrivals.hpp"
#include "gpusched/sim/serving/csv.hpp"
#include "gpusched/sim/serving/scenario_yaml.hpp"
#include "gpusched/sim/world/crash_loop.hpp"
#include "gpusched/sim/world/memory.hpp"
#include "gpusched/sim/world/sharing.hpp"

namespace gpusched::sim::world {

struct world_requests {  // the scheduler's view of one pod (per worker for training)
  double gpu_memory_mib = 0.0;
  double cpu_milli = 0.0;
  double memory_mib = 0.0;
};

struct world_model {
  std::string name;
  framework_memory framework = framework_memory::pytorch_caching;
  std::vector<std::pair<int, double>> batch_ms;  // sorted by batch
  double working_set_mib = 0.0;
  double cpu_ms_per_item = 0.0;
  std::string mps_proxy;       // gpu-let's UTIL.CSV model that stands for it under MPS ("": none)
  std::size_t mps_proxy_line = 0;
};

struct world_scale_step {
  double at_s = 0.0;
  int replicas = 0;
};

struct world_service {
  std::string name;
  std::size_t model = 0;  // index into models
  int replicas = 0;
  std::vector<world_scale_step> scale_up;
  int max_batch = 1;
  double max_wait_ms = 0.0, slo_ms = 0.0, timeout_ms = 0.0;
  world_requests requests;
  int priority = 0;
  tier tier_ = tier::prod;
  serving::arrival_params arrivals;
};

struct world_training {
  std::string name;
  double mean_interarrival_s = 0.0, first_s = 0.0;
  int count = 0, workers = 1, gpus_per_worker = 1;
  framework_memory framework = framework_memory::pytorch_caching;
  double working_set_mib_per_gpu = 0.0;
  double duration_s = 0.0;
  // CPU the data loader uses per GPU (milli): cpu_milli_per_gpu, or throughput_per_gpu x cpu_ms_per_item.
  double cpu_demand_milli_per_gpu = 0.0;
  world_requests requests;
  int priority = 0;
  tier tier_ = tier::dev;
};

struct world_leak {
  double at_s = 0.0;
  std::size_t service = 0;
  int replica = 0;
  double mib_per_min = 0.0;
};

enum class gpu_view : std::uint8_t { device_count, memory };

struct world_profile {
  std::string name;
  std::size_t line = 0;
  sharing_mode sharing = sharing_mode::exclusive;
  std::string config;  // "" : kube-default (built in); else a KubeSchedulerConfiguration file (resolved)
  gpu_view view = gpu_view::device_count;
  bool measured_metrics = false;
  bool two_tier_queue = false;
  double dev_share_period = 0.0;
  bool gangs_all_or_nothing = false;
  bool preemption = true;  // kube-default's DefaultPreemption; gpusched: with its budget
  bool preemption_budget = false;
  double budget_max = 0.0, budget_window_s = 0.0, budget_cooldown_s = 0.0;
  double overcommit_cpu = 1.0, overcommit_memory = 1.0;
  bool leak_eviction = false;
  int leak_window = 30, leak_min_samples = 10;
  double leak_min_slope_mib_per_s = 1.0, leak_min_r2 = 0.8;
  bool framework_limit = false;  // each framework capped at its GPU-memory request
  bool tf_memory_growth = false;
  std::optional<double> switch_cost_ms;  // overrides devices.time_slicing.switch_cost_ms
};

struct world_scenario {
  std::string file, name, status;
  std::string text;  // the file's text as read (its SHA-256 identifies the input of a result)
  double duration_s = 86400.0, warmup_s = 3600.0;
  std::vector<std::uint64_t> seeds;
  int node_count = 0, gpus_per_node = 8, nvlink_islands = 1;
  std::string gpu_model;
  double gpu_memory_mib = 0.0, cpu_milli = 0.0, memory_mib = 0.0;
  time_slice_params slice;
  int replicas_per_gpu = 1;
  std::string mps_constants_csv, mps_util_csv;
  std::vector<world_model> models;
  std::vector<world_service> services;
  std::vector<world_training> training;
  std::vector<world_leak> leaks;
  crash_loop_params restarts;
  double startup_s = 0.0;
  double sample_s = 60.0;
  double sketch_alpha = 0.01, sketch_min_ms = 1e-3, sketch_max_ms = 1e7;
  double sweep_lo = 0.0, sweep_hi = 4.0, sweep_tolerance = 0.01;
  std::vector<std::string> keys;
  std::vector<world_profile> profiles;

  [[nodiscard]] const world_profile& profile(const std::string& n) const {
    for (const auto& p : profiles) {
      if (p.name == n) return p;
    }
    throw invalid_argument_error("--profiles", "no profile named '" + n + "' in " + file);
  }
};

namespace world_yaml {

using serving::yaml_detail::reader;
inline constexpr double big = serving::yaml_detail::big;

inline framework_memory parse_framework(const reader& r, const YAML::Node& v, const std::string& path) {
  const std::string s = r.text(v, path);
  if (s == "tf_grab_all") return framework_memory::tf_grab_all;
  if (s == "tf_growth") return framework_memory::tf_growth;
  if (s == "pytorch_caching") return framework_memory::pytorch_caching;
  r.fail(v, path, "expected tf_grab_all, tf_growth or pytorch_caching, got '" + s + "'");
}

inline sharing_mode parse_sharing(const reader& r, const YAML::Node& v, const std::string& path) {
  const std::string s = r.text(v, path);
  if (s == "exclusive") return sharing_mode::exclusive;
  if (s == "time_slicing") return sharing_mode::time_slicing;
  if (s == "mps") return sharing_mode::mps;
  if (s == "memory_accounted") return sharing_mode::memory_accounted;
  r.fail(v, path, "expected exclusive, time_slicing, mps or memory_accounted, got '" + s + "'");
}

inline world_requests parse_requests(const reader& r, const YAML::Node& n, const std::string& path) {
  r.allow_keys(n, path, {"gpu_memory_mib", "cpu_milli", "memory_mib"});
  return {r.req_number(n, "gpu_memory_mib", path, 0.0, 1e9), r.req_number(n, "cpu_milli", path, 0.0, 1e9),
          r.req_number(n, "memory_mib", path, 0.0, 1e12)};
}

// {batch: value, ...} with integer batches >= 1, sorted on return.
inline std::vector<std::pair<int, double>> parse_batch_map(const reader& r, const YAML::Node& n,
                                                           const std::string& path) {
  r.expect_map(n, path);
  std::vector<std::pair<int, double>> out;
  for (auto it = n.begin(); it != n.end(); ++it) {
    const int b = static_cast<int>(r.integer(it->first, path + " key", 1, 1 << 20));
    out.emplace_back(b, r.number(it->second, path + "." + std::to_string(b), 1e-9, big));
  }
  if (out.empty()) r.fail(n, path, "must list at least one batch size");
  std::sort(out.begin(), out.end());
  return out;
}

inline void parse_profile_keys(const reader& r, const YAML::Node& n, const std::string& path, world_profile& p,
                               const world_scenario& sc, const std::string& base_dir) {
  if (const auto v = n["sharing"]; v.IsDefined()) p.sharing = parse_sharing(r, v, path + ".sharing");
  if (const auto v = n["scheduler"]; v.IsDefined()) {
    const std::string s = r.text(v, path + ".scheduler");
    if (s != "kube-default") r.fail(v, path + ".scheduler", "expected kube-default (or give `config`), got '" + s + "'");
    p.config.clear();
  }
  if (const auto v = n["config"]; v.IsDefined()) {
    p.config = serving::yaml_detail::resolve(base_dir, r.text(v, path + ".config"));
  }
  if (const auto v = n["view"]; v.IsDefined()) {
    const std::string vp = path + ".view";
    r.allow_keys(v, vp, {"gpu", "metrics"});
    const std::string g = r.req_text(v, "gpu", vp);
    if (g == "device_count") {
      p.view = gpu_view::device_count;
    } else if (g == "memory") {
      p.view = gpu_view::memory;
    } else {
      r.fail(v["gpu"], vp + ".gpu", "expected device_count or memory, got '" + g + "'");
    }
    if (const auto m = v["metrics"]; m.IsDefined()) {
      const std::string ms = r.text(m, vp + ".metrics");
      if (ms != "measured" && ms != "none") r.fail(m, vp + ".metrics", "expected measured or none, got '" + ms + "'");
      p.measured_metrics = ms == "measured";
    }
  }
  if (const auto v = n["queue"]; v.IsDefined()) {
    const std::string s = r.text(v, path + ".queue");
    if (s != "two_tier" && s != "priority") r.fail(v, path + ".queue", "expected two_tier or priority, got '" + s + "'");
    p.two_tier_queue = s == "two_tier";
  }
  if (n["dev_share_period"].IsDefined()) {
    p.dev_share_period = static_cast<double>(r.integer(n["dev_share_period"], path + ".dev_share_period", 0, 1000000));
  }
  if (const auto v = n["gangs"]; v.IsDefined()) {
    const std::string s = r.text(v, path + ".gangs");
    if (s != "one_by_one" && s != "all_or_nothing") {
      r.fail(v, path + ".gangs", "expected one_by_one or all_or_nothing, got '" + s + "'");
    }
    p.gangs_all_or_nothing = s == "all_or_nothing";
  }
  if (const auto v = n["preemption"]; v.IsDefined()) {
    const std::string pp = path + ".preemption";
    r.allow_keys(v, pp, {"enabled", "budget"});
    p.preemption = r.boolean(r.required(v, "enabled", pp), pp + ".enabled");
    if (const auto b = v["budget"]; b.IsDefined()) {
      const std::string bp = pp + ".budget";
      r.allow_keys(b, bp, {"max_preemptions", "window_s", "cooldown_s"});
      p.preemption_budget = true;
      p.budget_max = static_cast<double>(r.req_integer(b, "max_preemptions", bp, 0, 1000000));
      p.budget_window_s = r.req_number(b, "window_s", bp, 0.0, big);
      p.budget_cooldown_s = r.req_number(b, "cooldown_s", bp, 0.0, big);
    }
  }
  if (const auto v = n["overcommit"]; v.IsDefined()) {
    const std::string op = path + ".overcommit";
    if (v.IsScalar()) {
      const std::string s = r.text(v, op);
      if (s != "none") r.fail(v, op, "expected none or {cpu, memory}, got '" + s + "'");
      p.overcommit_cpu = p.overcommit_memory = 1.0;
    } else {
      r.allow_keys(v, op, {"cpu", "memory"});
      p.overcommit_cpu = r.number_or(v, "cpu", op, 1.0, 1.0, 10.0);
      p.overcommit_memory = r.number_or(v, "memory", op, 1.0, 1.0, 10.0);
    }
  }
  if (const auto v = n["leak_eviction"]; v.IsDefined()) {
    const std::string lp = path + ".leak_eviction";
    r.allow_keys(v, lp, {"enabled", "window", "min_samples", "min_slope_mib_per_s", "min_r2"});
    p.leak_eviction = r.boolean(r.required(v, "enabled", lp), lp + ".enabled");
    p.leak_window = static_cast<int>(r.integer_or(v, "window", lp, p.leak_window, 2, 100000));
    p.leak_min_samples = static_cast<int>(r.integer_or(v, "min_samples", lp, p.leak_min_samples, 2, 100000));
    p.leak_min_slope_mib_per_s = r.number_or(v, "min_slope_mib_per_s", lp, p.leak_min_slope_mib_per_s, 0.0, big);
    p.leak_min_r2 = r.number_or(v, "min_r2", lp, p.leak_min_r2, 0.0, 1.0);
  }
  if (const auto v = n["framework_limit"]; v.IsDefined()) {
    const std::string s = r.text(v, path + ".framework_limit");
    if (s != "request" && s != "none") r.fail(v, path + ".framework_limit", "expected request or none, got '" + s + "'");
    p.framework_limit = s == "request";
  }
  if (const auto v = n["tf_memory_growth"]; v.IsDefined()) p.tf_memory_growth = r.boolean(v, path + ".tf_memory_growth");
  if (const auto v = n["switch_cost_ms"]; v.IsDefined()) p.switch_cost_ms = r.number(v, path + ".switch_cost_ms", 0.0, 1e6);
  (void)sc;
}

inline world_scenario parse_root(const reader& r, const YAML::Node& root, const std::string& base_dir) {
  world_scenario sc;
  sc.file = r.file();
  r.allow_keys(root, "scenario",
               {"name", "status", "duration_s", "warmup_s", "seeds", "nodes", "devices", "models", "services",
                "training", "leaks", "restarts", "metrics", "profiles"});
  sc.name = r.req_text(root, "name", "name");
  sc.status = r.req_text(root, "status", "status");
  if (sc.status != "declared" && sc.status != "run") r.fail(root["status"], "status", "expected declared or run");
  sc.duration_s = r.req_number(root, "duration_s", "duration_s", 1e-9, serving::max_duration_s);
  sc.warmup_s = r.req_number(root, "warmup_s", "warmup_s", 0.0, sc.duration_s);
  r.each(r.required(root, "seeds", "seeds"), "seeds", [&](const YAML::Node& v, const std::string& p) {
    sc.seeds.push_back(static_cast<std::uint64_t>(r.integer(v, p, 0, (1LL << 62))));
  });
  {
    const YAML::Node n = r.required(root, "nodes", "nodes");
    r.allow_keys(n, "nodes",
                 {"count", "gpus_per_node", "gpu_model", "gpu_memory_mib", "cpu_milli", "memory_mib", "nvlink_islands"});
    sc.node_count = static_cast<int>(r.req_integer(n, "count", "nodes", 1, 100000));
    sc.gpus_per_node = static_cast<int>(r.req_integer(n, "gpus_per_node", "nodes", 1, 64));
    sc.gpu_model = r.req_text(n, "gpu_model", "nodes");
    sc.gpu_memory_mib = r.req_number(n, "gpu_memory_mib", "nodes", 1.0, 1e7);
    sc.cpu_milli = r.req_number(n, "cpu_milli", "nodes", 1.0, 1e9);
    sc.memory_mib = r.req_number(n, "memory_mib", "nodes", 1.0, 1e12);
    sc.nvlink_islands = static_cast<int>(r.integer_or(n, "nvlink_islands", "nodes", 1, 1, sc.gpus_per_node));
    if (sc.gpus_per_node % sc.nvlink_islands != 0) {
      r.fail(n["nvlink_islands"], "nodes.nvlink_islands", "must divide gpus_per_node");
    }
  }
  {
    const YAML::Node n = r.required(root, "devices", "devices");
    r.allow_keys(n, "devices", {"time_slicing", "mps"});
    const YAML::Node ts = r.required(n, "time_slicing", "devices");
    r.allow_keys(ts, "devices.time_slicing", {"quantum_ms", "switch_cost_ms", "replicas_per_gpu"});
    sc.slice.quantum_ms = r.req_number(ts, "quantum_ms", "devices.time_slicing", 1e-9, 1e6);
    sc.slice.switch_cost_ms = r.req_number(ts, "switch_cost_ms", "devices.time_slicing", 0.0, 1e6);
    sc.replicas_per_gpu = static_cast<int>(r.req_integer(ts, "replicas_per_gpu", "devices.time_slicing", 1, 1000));
    if (const YAML::Node m = n["mps"]; m.IsDefined()) {
      r.allow_keys(m, "devices.mps", {"constants_csv", "util_csv"});
      sc.mps_constants_csv = serving::yaml_detail::resolve(base_dir, r.req_text(m, "constants_csv", "devices.mps"));
      sc.mps_util_csv = serving::yaml_detail::resolve(base_dir, r.req_text(m, "util_csv", "devices.mps"));
    }
  }
  r.each(r.required(root, "models", "models"), "models", [&](const YAML::Node& n, const std::string& p) {
    r.allow_keys(n, p, {"name", "framework", "precision", "throughput_per_s", "batch_ms", "working_set_mib",
                        "cpu_ms_per_item", "mps_proxy"});
    world_model m;
    m.name = r.req_text(n, "name", p);
    m.framework = parse_framework(r, r.required(n, "framework", p), p + ".framework");
    m.batch_ms = parse_batch_map(r, r.required(n, "batch_ms", p), p + ".batch_ms");
    if (n["throughput_per_s"].IsDefined()) (void)parse_batch_map(r, n["throughput_per_s"], p + ".throughput_per_s");
    if (n["precision"].IsDefined()) (void)r.text(n["precision"], p + ".precision");
    if (const YAML::Node mp = n["mps_proxy"]; mp.IsDefined()) {
      r.allow_keys(mp, p + ".mps_proxy", {"model"});
      m.mps_proxy = r.req_text(mp, "model", p + ".mps_proxy");
      m.mps_proxy_line = r.line(mp);
    }
    m.working_set_mib = r.req_number(n, "working_set_mib", p, 1e-9, 1e7);
    m.cpu_ms_per_item = r.req_number(n, "cpu_ms_per_item", p, 0.0, 1e6);
    sc.models.push_back(std::move(m));
  });
  r.each(r.required(root, "services", "services"), "services", [&](const YAML::Node& n, const std::string& p) {
    r.allow_keys(n, p, {"name", "model", "replicas", "scale_up", "max_batch", "max_wait_ms", "slo_ms", "timeout_ms",
                        "requests", "priority", "tier", "arrivals"});
    world_service s;
    s.name = r.req_text(n, "name", p);
    const std::string model = r.req_text(n, "model", p);
    const auto it = std::find_if(sc.models.begin(), sc.models.end(), [&](const world_model& m) { return m.name == model; });
    if (it == sc.models.end()) r.fail(n["model"], p + ".model", "no model named '" + model + "'");
    s.model = static_cast<std::size_t>(it - sc.models.begin());
    s.replicas = static_cast<int>(r.req_integer(n, "replicas", p, 0, 100000));
    r.each(n["scale_up"], p + ".scale_up", [&](const YAML::Node& st, const std::string& sp) {
      r.allow_keys(st, sp, {"at_s", "replicas"});
      s.scale_up.push_back({r.req_number(st, "at_s", sp, 0.0, big), static_cast<int>(r.req_integer(st, "replicas", sp, 0, 100000))});
    });
    s.max_batch = static_cast<int>(r.req_integer(n, "max_batch", p, 1, 1 << 20));
    if (s.max_batch > it->batch_ms.back().first) {
      r.fail(n["max_batch"], p + ".max_batch", "larger than model '" + model + "''s largest batch_ms entry");
    }
    s.max_wait_ms = r.req_number(n, "max_wait_ms", p, 0.0, 1e9);
    s.slo_ms = r.req_number(n, "slo_ms", p, 1e-9, 1e9);
    s.timeout_ms = r.req_number(n, "timeout_ms", p, 1e-9, 1e9);
    if (s.timeout_ms < s.slo_ms) r.fail(n["timeout_ms"], p + ".timeout_ms", "must be >= slo_ms");
    s.requests = parse_requests(r, r.required(n, "requests", p), p + ".requests");
    s.priority = static_cast<int>(r.req_integer(n, "priority", p, 0, 10));
    s.tier_ = serving::yaml_detail::parse_tier(r, r.required(n, "tier", p), p + ".tier");
    s.arrivals = serving::yaml_detail::parse_arrivals(r, r.required(n, "arrivals", p), p + ".arrivals");
    sc.services.push_back(std::move(s));
  });
  r.each(root["training"], "training", [&](const YAML::Node& n, const std::string& p) {
    r.allow_keys(n, p, {"name", "arrivals", "workers", "gpus_per_worker", "framework", "working_set_mib_per_gpu",
                        "throughput_per_gpu", "duration_s", "cpu_ms_per_item", "cpu_milli_per_gpu", "requests",
                        "priority", "tier"});
    world_training t;
    t.name = r.req_text(n, "name", p);
    const YAML::Node a = r.required(n, "arrivals", p);
    r.allow_keys(a, p + ".arrivals", {"poisson_mean_interarrival_s", "first_s", "count"});
    t.mean_interarrival_s = r.req_number(a, "poisson_mean_interarrival_s", p + ".arrivals", 1e-9, big);
    t.first_s = r.req_number(a, "first_s", p + ".arrivals", 0.0, big);
    t.count = static_cast<int>(r.req_integer(a, "count", p + ".arrivals", 0, 100000));
    t.workers = static_cast<int>(r.req_integer(n, "workers", p, 1, 10000));
    t.gpus_per_worker = static_cast<int>(r.req_integer(n, "gpus_per_worker", p, 1, sc.gpus_per_node));
    t.framework = parse_framework(r, r.required(n, "framework", p), p + ".framework");
    t.working_set_mib_per_gpu = r.req_number(n, "working_set_mib_per_gpu", p, 1e-9, 1e7);
    t.duration_s = r.req_number(n, "duration_s", p, 1e-9, big);
    const bool per_item = n["cpu_ms_per_item"].IsDefined(), per_gpu = n["cpu_milli_per_gpu"].IsDefined();
    if (per_item == per_gpu) r.fail(n, p, "give exactly one of cpu_ms_per_item (with throughput_per_gpu) and cpu_milli_per_gpu");
    if (per_item) {
      const double tp = r.req_number(n, "throughput_per_gpu", p, 1e-9, 1e9);
      t.cpu_demand_milli_per_gpu = tp * r.number(n["cpu_ms_per_item"], p + ".cpu_ms_per_item", 0.0, 1e6);
    } else {
      if (n["throughput_per_gpu"].IsDefined()) (void)r.number(n["throughput_per_gpu"], p + ".throughput_per_gpu", 1e-9, 1e9);
      t.cpu_demand_milli_per_gpu = r.number(n["cpu_milli_per_gpu"], p + ".cpu_milli_per_gpu", 0.0, 1e9);
    }
    t.requests = parse_requests(r, r.required(n, "requests", p), p + ".requests");
    t.priority = static_cast<int>(r.req_integer(n, "priority", p, 0, 10));
    t.tier_ = serving::yaml_detail::parse_tier(r, r.required(n, "tier", p), p + ".tier");
    sc.training.push_back(std::move(t));
  });
  r.each(root["leaks"], "leaks", [&](const YAML::Node& n, const std::string& p) {
    r.allow_keys(n, p, {"at_s", "service", "replica", "mib_per_min"});
    world_leak l;
    l.at_s = r.req_number(n, "at_s", p, 0.0, big);
    const std::string s = r.req_text(n, "service", p);
    const auto it = std::find_if(sc.services.begin(), sc.services.end(), [&](const world_service& x) { return x.name == s; });
    if (it == sc.services.end()) r.fail(n["service"], p + ".service", "no service named '" + s + "'");
    l.service = static_cast<std::size_t>(it - sc.services.begin());
    l.replica = static_cast<int>(r.req_integer(n, "replica", p, 0, 100000));
    l.mib_per_min = r.req_number(n, "mib_per_min", p, 0.0, 1e9);
    sc.leaks.push_back(l);
  });
  {
    const YAML::Node n = r.required(root, "restarts", "restarts");
    r.allow_keys(n, "restarts", {"initial_s", "max_s", "startup_s"});
    sc.restarts.initial_s = r.req_number(n, "initial_s", "restarts", 1e-9, 1e9);
    sc.restarts.max_s = r.req_number(n, "max_s", "restarts", sc.restarts.initial_s, 1e9);
    sc.startup_s = r.req_number(n, "startup_s", "restarts", 0.0, 1e9);
  }
  {
    const YAML::Node n = r.required(root, "metrics", "metrics");
    r.allow_keys(n, "metrics", {"sample_s", "quantile_sketch", "percentiles", "capacity_sweep", "keys"});
    sc.sample_s = r.req_number(n, "sample_s", "metrics", 1e-3, sc.duration_s);
    if (const YAML::Node q = n["quantile_sketch"]; q.IsDefined()) {
      r.allow_keys(q, "metrics.quantile_sketch", {"alpha", "min_ms", "max_ms"});
      sc.sketch_alpha = r.req_number(q, "alpha", "metrics.quantile_sketch", 1e-9, 0.5);
      sc.sketch_min_ms = r.req_number(q, "min_ms", "metrics.quantile_sketch", 1e-12, 1e12);
      sc.sketch_max_ms = r.req_number(q, "max_ms", "metrics.quantile_sketch", sc.sketch_min_ms, 1e15);
    }
    if (const YAML::Node v = n["percentiles"]; v.IsDefined()) {
      const std::string s = r.text(v, "metrics.percentiles");
      if (s != "per_service_per_hour") r.fail(v, "metrics.percentiles", "expected per_service_per_hour, got '" + s + "'");
    }
    if (const YAML::Node c = n["capacity_sweep"]; c.IsDefined()) {
      r.allow_keys(c, "metrics.capacity_sweep", {"multiplier", "predicate"});
      const YAML::Node m = r.required(c, "multiplier", "metrics.capacity_sweep");
      const std::string mp = "metrics.capacity_sweep.multiplier";
      r.allow_keys(m, mp, {"lo", "hi", "tolerance"});
      sc.sweep_lo = r.req_number(m, "lo", mp, 0.0, 1e6);
      sc.sweep_hi = r.req_number(m, "hi", mp, sc.sweep_lo, 1e6);
      if (!(sc.sweep_hi > sc.sweep_lo)) r.fail(m["hi"], mp + ".hi", "must be > lo");
      sc.sweep_tolerance = r.req_number(m, "tolerance", mp, 1e-9, 1e6);
      if (const YAML::Node pr = c["predicate"]; pr.IsDefined()) {
        const std::string s = r.text(pr, "metrics.capacity_sweep.predicate");
        if (s != "p99_peak_hour_ms <= slo_ms") {
          r.fail(pr, "metrics.capacity_sweep.predicate", "expected 'p99_peak_hour_ms <= slo_ms', got '" + s + "'");
        }
      }
    }
    r.each(n["keys"], "metrics.keys", [&](const YAML::Node& v, const std::string& p) { sc.keys.push_back(r.text(v, p)); });
  }
  r.each(r.required(root, "profiles", "profiles"), "profiles", [&](const YAML::Node& n, const std::string& p) {
    r.allow_keys(n, p, {"name", "base", "sharing", "scheduler", "config", "view", "queue", "dev_share_period", "gangs",
                        "preemption", "overcommit", "leak_eviction", "framework_limit", "tf_memory_growth",
                        "switch_cost_ms"});
    world_profile w;
    const std::string name = r.req_text(n, "name", p);
    if (const YAML::Node b = n["base"]; b.IsDefined()) {
      const std::string base = r.text(b, p + ".base");
      const auto it = std::find_if(sc.profiles.begin(), sc.profiles.end(), [&](const world_profile& x) { return x.name == base; });
      if (it == sc.profiles.end()) r.fail(b, p + ".base", "no earlier profile named '" + base + "'");
      w = *it;
    }
    for (const auto& o : sc.profiles) {
      if (o.name == name) r.fail(n["name"], p + ".name", "'" + name + "' is given twice");
    }
    w.name = name;
    w.line = r.line(n);
    parse_profile_keys(r, n, p, w, sc, base_dir);
    sc.profiles.push_back(std::move(w));
  });
  for (const auto& l : sc.leaks) {
    const auto& s = sc.services[l.service];
    int most = s.replicas;
    for (const auto& st : s.scale_up) most += st.replicas;
    if (l.replica >= most) throw file_error(sc.file, 0, "leaks: replica " + std::to_string(l.replica) + " of " + s.name + " never exists");
  }
  return sc;
}

}  // namespace world_yaml

// Whether a scenario text is a world scenario (it has the top-level key `devices`); a serving
// scenario (sim/serving/scenario_yaml.hpp) has none.
inline bool is_world_scenario_text(const std::string& text) {
  try {
    const YAML::Node root = YAML::Load(text);
    return root.IsMap() && root["devices"].IsDefined();
  } catch (const YAML::Exception&) {
    return false;  // the serving reader reports the syntax error with its line
  }
}

// Parses world scenario text; `file` names it in errors, relative paths resolve against `base_dir`.
inline world_scenario parse_world_scenario(const std::string& text, const std::string& file,
                                           const std::string& base_dir = "") {
  const yaml_strict::document doc(text, file);
  const world_yaml::reader r(doc);
  if (!doc.root().IsMap()) doc.fail(doc.root(), "expected a mapping at the top level");
  try {
    world_scenario sc = world_yaml::parse_root(r, doc.root(), base_dir);
    sc.text = text;
    return sc;
  } catch (const YAML::Exception& e) {
    throw file_error(file, e.mark.line >= 0 ? static_cast<std::size_t>(e.mark.line) + 1 : 0, "YAML: " + e.msg);
  }
}

inline world_scenario load_world_scenario(const std::string& path) {
  return parse_world_scenario(serving::read_text_file(path), path, std::filesystem::path(path).parent_path().string());
}

}  // namespace gpusched::sim::world

#endif  // __has_include(<yaml-cpp/yaml.h>)
