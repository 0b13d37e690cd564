// JSON for result fields (sim/result_fields.hpp) with nlohmann/json: the field list itself and one
// field's per-seed values with their mean, sample standard deviation and 95% half-width. The
// shapes are those of docs/results.schema.json.
#pragma once

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gpusched/sim/result_fields.hpp"

namespace gpusched::sim {

// A value in the field's kind: an integer field's values are whole numbers, written without a point.
template <class R>
nlohmann::ordered_json value_json(const result_field<R>& f, double v) {
  if (f.kind == value_kind::integer && std::isfinite(v)) return static_cast<std::int64_t>(std::llround(v));
  return v;
}

// [{"key", "label", "kind", "precision", "lower_is_better"}, ...] in the list's order.
template <class Fields>
nlohmann::ordered_json fields_json(const Fields& fields) {
  auto out = nlohmann::ordered_json::array();
  for (const auto& f : fields) {
    out.push_back({{"key", f.key},
                   {"label", f.label},
                   {"kind", kind_name(f.kind)},
                   {"precision", f.precision},
                   {"lower_is_better", f.lower_is_better}});
  }
  return out;
}

// {"values": [per seed], "mean", "sd", "ci95"} (ci95: the half-width of the 95% t interval).
template <class R>
nlohmann::ordered_json summary_json(const result_field<R>& f, const std::vector<double>& values) {
  const mean_ci c = summarise(values);
  auto v = nlohmann::ordered_json::array();
  for (const double x : values) v.push_back(value_json(f, x));
  return {{"values", v}, {"mean", c.mean}, {"sd", c.sd}, {"ci95", c.half}};
}

}  // namespace gpusched::sim
