// A/B report over seeds: mean and 95% confidence interval (Student's t) of every metric of
// run_metrics for two profiles run on the same seeds, as a text table or JSON (nlohmann/json, like
// gpusched-sim; docs/results.schema.json), both rendered from metric_fields.
#pragma once

#include <array>
#include <cmath>
#include <cstdio>
#include <functional>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/config.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/sim/experiment/experiment.hpp"
#include "gpusched/sim/result_fields.hpp"
#include "gpusched/sim/results_json.hpp"
#include "gpusched/sim/sha256.hpp"

namespace gpusched::sim::experiment {

using sim::mean_ci;
using sim::summarise;
using sim::t975;

// run_metrics' fields, listed once (sim/result_fields.hpp): the table's rows, the JSON's keys and
// Python's dict keys. Durations the table shows in hours are read in hours (jct_mean_h,
// replicas_pending_h). Precision 2 for every row, counts included, as the table has always printed.
inline constexpr std::array<result_field<run_metrics>, 17> metric_fields{{
    {"throughput_qps", "throughput QPS", value_kind::real, 2, [](const run_metrics& m) { return m.throughput_qps; }},
    {"p50_ms", "P50 latency ms", value_kind::real, 2, [](const run_metrics& m) { return m.p50_ms; }, true},
    {"p95_ms", "P95 latency ms", value_kind::real, 2, [](const run_metrics& m) { return m.p95_ms; }, true},
    {"p99_ms", "P99 latency ms", value_kind::real, 2, [](const run_metrics& m) { return m.p99_ms; }, true},
    {"slo_attainment_pct", "SLO attainment %", value_kind::real, 2,
     [](const run_metrics& m) { return m.slo_attainment_pct; }},
    {"gpu_util_mean_pct", "GPU util mean %", value_kind::real, 2, [](const run_metrics& m) { return m.gpu_util_mean_pct; }},
    {"gpu_util_swing_pct", "GPU util swing %", value_kind::real, 2,
     [](const run_metrics& m) { return m.gpu_util_swing_pct; }, true},
    {"sched_success_pct", "sched success %", value_kind::real, 2, [](const run_metrics& m) { return m.sched_success_pct; }},
    {"jct_mean_h", "training JCT h", value_kind::real, 2, [](const run_metrics& m) { return m.jct_mean_s / 3600.0; },
     true},
    {"jobs_finished", "jobs finished", value_kind::integer, 2, [](const run_metrics& m) { return m.jobs_finished; }},
    {"preemptions", "preemptions", value_kind::integer, 2, [](const run_metrics& m) { return m.preemptions; }, true},
    {"partial_gang_gpu_h", "partial-gang GPU h", value_kind::real, 2,
     [](const run_metrics& m) { return m.partial_gang_gpu_hours; }, true},
    {"oom_crashes", "OOM crashes", value_kind::integer, 2, [](const run_metrics& m) { return m.oom_crashes; }, true},
    {"leak_restarts", "leak restarts", value_kind::integer, 2, [](const run_metrics& m) { return m.leak_restarts; }},
    {"leak_ttf_left_min_s", "leak min TTF left s", value_kind::real, 2,
     [](const run_metrics& m) { return m.leak_ttf_left_min_s; }},
    {"jobs_restarted", "jobs restarted", value_kind::integer, 2, [](const run_metrics& m) { return m.jobs_restarted; },
     true},
    {"replicas_pending_h", "replica pending h", value_kind::real, 2,
     [](const run_metrics& m) { return m.replicas_pending_s / 3600.0; }, true},
}};

// A file a result was computed from, with its SHA-256 (built-in texts: the hash of the text).
struct input_file {
  std::string role;  // "scenario", "profile:<name>"
  std::string path;  // as given; "<kube-default>" for the built-in configuration
  std::string sha256;
};

// Per profile, per seed results, and what produced them.
struct ab_result {
  std::vector<std::string> profiles;
  std::vector<std::uint64_t> seeds;
  std::vector<std::vector<run_metrics>> runs;  // [profile][seed]
  std::string scenario;                        // the scenario's name
  double duration_s = 0.0;                     // simulated per run
  std::vector<input_file> inputs;
};

// The files behind a scenario's results: the scenario, its latency table (if it names one) and each
// profile's configuration (the built-in kube-default: its text), with their SHA-256.
inline std::vector<input_file> inputs_of(const serving::scenario& sc, const std::vector<profile_wiring>& wirings) {
  std::vector<input_file> in;
  in.push_back({"scenario", sc.file, sim::sha256_file(sc.file)});
  if (!sc.latency.util_csv.empty()) in.push_back({"latency_util", sc.latency.util_csv, sim::sha256_file(sc.latency.util_csv)});
  if (!sc.latency.constants_csv.empty()) {
    in.push_back({"latency_constants", sc.latency.constants_csv, sim::sha256_file(sc.latency.constants_csv)});
  }
  for (const auto& w : wirings) in.push_back({"profile:" + w.name, w.config_source, sim::sha256_hex(w.config_text)});
  return in;
}

// Per run hook for progress reports: (runs done, runs in all, profile, seed).
using run_observer = std::function<void(std::size_t, std::size_t, const std::string&, std::uint64_t)>;

inline ab_result run_ab(const serving::scenario& sc, const std::vector<std::string>& profiles,
                        const std::vector<std::uint64_t>& seeds, double duration_s = -1.0,
                        const run_observer& on_run = {}) {
  const serving::latency_model lm = serving::make_latency_model(sc);
  ab_result r{profiles, seeds, {}, sc.name, duration_s < 0.0 ? sc.duration_s : duration_s, {}};
  std::vector<profile_wiring> wirings;
  for (const auto& name : profiles) wirings.push_back(resolve_profile(sc, name));
  r.inputs = inputs_of(sc, wirings);
  const std::size_t total = profiles.size() * seeds.size();
  std::size_t done = 0;
  for (std::size_t p = 0; p < profiles.size(); ++p) {
    auto& v = r.runs.emplace_back();
    for (const auto s : seeds) {
      v.push_back(run_once(sc, lm, wirings[p], s, duration_s));
      if (on_run) on_run(++done, total, profiles[p], s);
    }
  }
  return r;
}

inline std::string format_table(const ab_result& r) {
  std::string s;
  char buf[256];
  std::snprintf(buf, sizeof buf, "%-20s", "metric (95% CI)");
  s += buf;
  for (const auto& p : r.profiles) {
    std::snprintf(buf, sizeof buf, " %22s", p.c_str());
    s += buf;
  }
  if (r.profiles.size() == 2) s += "      change";
  s += "\n";
  for (const auto& f : metric_fields) {
    std::snprintf(buf, sizeof buf, "%-20s", std::string(f.label).c_str());
    s += buf;
    std::vector<double> means;
    for (const auto& runs : r.runs) {
      const mean_ci c = summarise(values_of(f, runs));
      means.push_back(c.mean);
      std::snprintf(buf, sizeof buf, " %12.*f +- %7.*f", f.precision, c.mean, f.precision, c.half);
      s += buf;
    }
    if (means.size() == 2) {
      if (means[0] != 0.0) {
        std::snprintf(buf, sizeof buf, " %+10.1f%%", 100.0 * (means[1] - means[0]) / std::fabs(means[0]));
      } else {
        std::snprintf(buf, sizeof buf, " %11s", "n/a");
      }
      s += buf;
    }
    s += "\n";
  }
  return s;
}

// The JSON of docs/results.schema.json ("kind": "scenario_ab"): the tool and its version, the
// scenario, the inputs with their SHA-256, the field list, and per profile and metric the per-seed
// values, the mean, the sample standard deviation and the 95% half-width. Keys are metric_fields'.
inline nlohmann::ordered_json to_json(const ab_result& r, std::string_view tool = "gpusched") {
  using json = nlohmann::ordered_json;
  json j;
  j["tool"] = tool;
  j["version"] = GPUSCHED_VERSION_STRING;
  j["kind"] = "scenario_ab";
  j["scenario"] = r.scenario;
  j["duration_s"] = r.duration_s;
  j["seeds"] = r.seeds;
  j["profiles"] = r.profiles;
  j["inputs"] = json::array();
  for (const auto& in : r.inputs) j["inputs"].push_back({{"role", in.role}, {"path", in.path}, {"sha256", in.sha256}});
  j["fields"] = sim::fields_json(metric_fields);
  json& res = j["results"] = json::object();
  for (std::size_t p = 0; p < r.profiles.size(); ++p) {
    json& pj = res[r.profiles[p]] = json::object();
    for (const auto& f : metric_fields) pj[std::string(f.key)] = sim::summary_json(f, values_of(f, r.runs[p]));
  }
  return j;
}

inline std::string format_json(const ab_result& r, std::string_view tool = "gpusched") {
  return to_json(r, tool).dump(1) + "\n";
}

}  // namespace gpusched::sim::experiment
