// Results that list their fields once (issue 12, issue 19 "machine-readable results"): a result's
// fields are declared in one list -- snake_case key with the unit last (gpu_util_mean_pct,
// failed_pods, jct_mean_h, p99_ms), display label, integer or real, digits in the table -- and the
// text table, the JSON (tools/gpusched_sim.cpp, sim/experiment/report.hpp) and the Python dicts
// (python/src/_core/register_sim.cpp, register_experiment.cpp) are all rendered from that list, so
// they carry the same keys. Also the statistics every report uses: mean, sample standard deviation
// and the 95% confidence half-width over seeds.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace gpusched::sim {

enum class value_kind : std::uint8_t { integer, real };

[[nodiscard]] constexpr std::string_view kind_name(value_kind k) noexcept {
  return k == value_kind::integer ? "integer" : "real";
}

// One field of a result of type R. `get` reads one run's value in the unit of `key`.
template <class R>
struct result_field {
  std::string_view key;    // snake_case, unit last: _pct, _ms, _s, _h, _pods, _qps ...
  std::string_view label;  // the text table's label
  value_kind kind = value_kind::real;
  int precision = 2;  // digits after the point in the text table
  double (*get)(const R&) = nullptr;
  bool lower_is_better = false;  // for figures that colour a change as better or worse
  int width = 0;                 // the text table's column width (0: the table's own layout)
};

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
  double sd = 0.0;    // sample standard deviation (n - 1); 0 with one sample
};

// Mean, sample standard deviation and t-based 95% half-width (t_{0.975,n-1} sd / sqrt(n)).
inline mean_ci summarise(const std::vector<double>& x) {
  mean_ci r;
  if (x.empty()) return r;
  for (const double v : x) r.mean += v;
  r.mean /= static_cast<double>(x.size());
  if (x.size() < 2) return r;
  double ss = 0.0;
  for (const double v : x) ss += (v - r.mean) * (v - r.mean);
  r.sd = std::sqrt(ss / static_cast<double>(x.size() - 1));
  r.half = t975(x.size() - 1) * r.sd / std::sqrt(static_cast<double>(x.size()));
  return r;
}

// One field's values over runs (seeds), in the field's unit.
template <class R, class Runs>
std::vector<double> values_of(const result_field<R>& f, const Runs& runs) {
  std::vector<double> v;
  for (const auto& r : runs) v.push_back(f.get(r));
  return v;
}

}  // namespace gpusched::sim
