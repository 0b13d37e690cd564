// A/B report over seeds: mean and 95% confidence interval (Student's t) of every metric of
// run_metrics for two profiles run on the same seeds, as a text table or JSON.
#pragma once

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "gpusched/core/error.hpp"
#include "gpusched/sim/experiment/experiment.hpp"

namespace gpusched::sim::experiment {

// Two-sided 95% Student t quantile t_{0.975, df}; NIST/SEMATECH e-Handbook of Statistical Methods,
// table 1.3.6.7.2 "Critical values of the Student's t distribution" (df 1..30; above 30: 1.960 normal).
inline double t975(std::size_t df) {
  static constexpr double t[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                                 2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
                                 2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
  if (df == 0) return 0.0;
  return df <= 30 ? t[df - 1] : 1.960;
}

struct mean_ci {
  double mean = 0.0;
  double half = 0.0;  // 95% CI is mean +- half; 0 with one sample
};

// Mean and t-based 95% half-width (sample standard deviation, n - 1).
inline mean_ci summarise(const std::vector<double>& x) {
  mean_ci r;
  if (x.empty()) return r;
  for (const double v : x) r.mean += v;
  r.mean /= static_cast<double>(x.size());
  if (x.size() < 2) return r;
  double ss = 0.0;
  for (const double v : x) ss += (v - r.mean) * (v - r.mean);
  const double sd = std::sqrt(ss / static_cast<double>(x.size() - 1));
  r.half = t975(x.size() - 1) * sd / std::sqrt(static_cast<double>(x.size()));
  return r;
}

struct metric_def {
  const char* name;
  double run_metrics::*field;
};

inline const std::vector<metric_def>& metric_defs() {
  static const std::vector<metric_def> d = {
      {"throughput QPS", &run_metrics::throughput_qps},
      {"P50 latency ms", &run_metrics::p50_ms},
      {"P95 latency ms", &run_metrics::p95_ms},
      {"P99 latency ms", &run_metrics::p99_ms},
      {"SLO attainment %", &run_metrics::slo_attainment_pct},
      {"GPU util mean %", &run_metrics::gpu_util_mean_pct},
      {"GPU util swing %", &run_metrics::gpu_util_swing_pct},
      {"sched success %", &run_metrics::sched_success_pct},
      {"training JCT h", &run_metrics::jct_mean_s},
      {"jobs finished", &run_metrics::jobs_finished},
      {"preemptions", &run_metrics::preemptions},
      {"partial-gang GPU h", &run_metrics::partial_gang_gpu_hours},
      {"OOM crashes", &run_metrics::oom_crashes},
      {"leak restarts", &run_metrics::leak_restarts},
      {"leak min TTF left s", &run_metrics::leak_ttf_left_min_s},
      {"jobs restarted", &run_metrics::jobs_restarted},
      {"replica pending h", &run_metrics::replicas_pending_s},
  };
  return d;
}

// Per profile, per seed results.
struct ab_result {
  std::vector<std::string> profiles;
  std::vector<std::uint64_t> seeds;
  std::vector<std::vector<run_metrics>> runs;  // [profile][seed]
};

inline ab_result run_ab(const serving::scenario& sc, const std::vector<std::string>& profiles,
                        const std::vector<std::uint64_t>& seeds, double duration_s = -1.0) {
  const serving::latency_model lm = serving::make_latency_model(sc);
  ab_result r{profiles, seeds, {}};
  for (const auto& name : profiles) {
    const profile_wiring w = resolve_profile(sc, name);
    auto& v = r.runs.emplace_back();
    for (const auto s : seeds) v.push_back(run_once(sc, lm, w, s, duration_s));
  }
  return r;
}

inline std::vector<double> column(const std::vector<run_metrics>& runs, double run_metrics::*f) {
  std::vector<double> x;
  for (const auto& m : runs) {
    x.push_back(f == &run_metrics::jct_mean_s || f == &run_metrics::replicas_pending_s ? m.*f / 3600.0 : m.*f);
  }
  return x;
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
  for (const auto& d : metric_defs()) {
    std::snprintf(buf, sizeof buf, "%-20s", d.name);
    s += buf;
    std::vector<double> means;
    for (const auto& runs : r.runs) {
      const mean_ci c = summarise(column(runs, d.field));
      means.push_back(c.mean);
      std::snprintf(buf, sizeof buf, " %12.2f +- %7.2f", c.mean, c.half);
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

inline std::string format_json(const ab_result& r) {
  std::string s = "{\"seeds\":[";
  for (std::size_t i = 0; i < r.seeds.size(); ++i) s += (i ? "," : "") + std::to_string(r.seeds[i]);
  s += "],\"profiles\":{";
  char buf[128];
  for (std::size_t p = 0; p < r.profiles.size(); ++p) {
    s += (p ? ",\"" : "\"") + r.profiles[p] + "\":{";
    bool first = true;
    for (const auto& d : metric_defs()) {
      const mean_ci c = summarise(column(r.runs[p], d.field));
      std::snprintf(buf, sizeof buf, "%s\"%s\":{\"mean\":%.6g,\"ci95\":%.6g}", first ? "" : ",", d.name, c.mean, c.half);
      s += buf;
      first = false;
    }
    s += "}";
  }
  return s + "}}\n";
}

}  // namespace gpusched::sim::experiment
