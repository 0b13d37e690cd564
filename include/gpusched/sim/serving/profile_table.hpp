// gpu-let's profile tables: solo duration and L2/DRAM utilisation per model and batch size
// (UTIL.CSV) and the constants of the pairwise interference model (INT_MODEL_CONSTANT.CSV).
// Source: casys-kaist/glet resource/<gpu>/; Choi et al., USENIX ATC'22. See docs/serving.md.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/core/error.hpp"
#include "gpusched/sim/serving/csv.hpp"

namespace gpusched::sim::serving {

// The unit of UTIL.CSV's duration column: the 2080 Ti file holds seconds despite its "(ms)" header,
// the 3080 file milliseconds (see data/interference/README.md).
enum class duration_unit { seconds, milliseconds };

// One profiled (or interpolated) point. Utilisations are fractions of the whole GPU (0..1), measured
// with the model alone on the GPU.
struct util_point {
  int batch = 0;
  double duration_s = 0.0;  // solo duration of one batch
  double sm = 0.0;
  double l2 = 0.0;
  double dram = 0.0;
};

// One model's profiled points, sorted by batch size.
struct model_profile {
  std::string name;
  std::vector<util_point> points;

  [[nodiscard]] int min_batch() const noexcept { return points.empty() ? 0 : points.front().batch; }
  [[nodiscard]] int max_batch() const noexcept { return points.empty() ? 0 : points.back().batch; }

  // Linear interpolation between the two neighbouring profiled batch sizes (gpu-let interpolates
  // linearly too, scheduler/interference_model.cpp, but only between powers of two; we use every
  // profiled size). Throws invalid_argument_error outside [min_batch, max_batch].
  [[nodiscard]] util_point at(int batch) const {
    if (points.empty() || batch < min_batch() || batch > max_batch()) {
      throw invalid_argument_error("batch", "model '" + name + "' is profiled for batch sizes " +
                                                std::to_string(min_batch()) + ".." + std::to_string(max_batch()) +
                                                ", got " + std::to_string(batch));
    }
    const auto hi =
        std::lower_bound(points.begin(), points.end(), batch, [](const util_point& p, int b) { return p.batch < b; });
    if (hi->batch == batch) return *hi;
    const auto lo = hi - 1;
    const double t = static_cast<double>(batch - lo->batch) / static_cast<double>(hi->batch - lo->batch);
    auto lerp = [t](double a, double b) { return a + (b - a) * t; };
    return util_point{batch, lerp(lo->duration_s, hi->duration_s), lerp(lo->sm, hi->sm), lerp(lo->l2, hi->l2),
                      lerp(lo->dram, hi->dram)};
  }
};

// UTIL.CSV: header "bench,batch,avg_duration(..),SM_util(%),l2_util(%),mem_util(%),...", then one row
// per (model, batch). Every malformed row is a file_error with file:line.
class util_table {
 public:
  util_table() = default;

  static util_table parse(std::string_view text, const std::string& file, duration_unit unit) {
    const auto rows = parse_csv_text(text);
    if (rows.empty()) throw file_error(file, 1, "empty file, expected a header row");
    const auto& h = rows.front();
    static constexpr std::string_view expected[] = {"bench", "batch", "avg_duration", "SM_util", "l2_util", "mem_util"};
    if (h.fields.size() < 6) throw file_error(file, h.line, "header has fewer than 6 columns");
    for (std::size_t i = 0; i < 6; ++i) {
      if (h.fields[i].rfind(expected[i], 0) != 0) {
        throw file_error(file, h.line,
                         "header column " + std::to_string(i + 1) + " is '" + h.fields[i] + "', expected '" +
                             std::string(expected[i]) + "...'");
      }
    }
    const double to_seconds = unit == duration_unit::seconds ? 1.0 : 1e-3;
    util_table t;
    for (std::size_t r = 1; r < rows.size(); ++r) {
      const auto& row = rows[r];
      if (row.fields.size() != h.fields.size()) {
        throw file_error(
            file, row.line,
            "expected " + std::to_string(h.fields.size()) + " columns, got " + std::to_string(row.fields.size()));
      }
      if (row.fields[0].empty()) throw file_error(file, row.line, "bench: empty model name");
      const long long batch = parse_csv_int(row.fields[1], file, row.line, "batch");
      if (batch < 1 || batch > 4096) throw file_error(file, row.line, "batch: must be within 1..4096");
      util_point p;
      p.batch = static_cast<int>(batch);
      p.duration_s = parse_csv_double(row.fields[2], file, row.line, "avg_duration") * to_seconds;
      if (!(p.duration_s > 0.0)) throw file_error(file, row.line, "avg_duration: must be > 0");
      auto pct = [&](std::size_t col, std::string_view name) {
        const double v = parse_csv_double(row.fields[col], file, row.line, name);
        if (v < 0.0 || v > 100.0) throw file_error(file, row.line, std::string(name) + ": must be within 0..100 %");
        return v / 100.0;
      };
      p.sm = pct(3, "SM_util");
      p.l2 = pct(4, "l2_util");
      p.dram = pct(5, "mem_util");
      auto it = std::lower_bound(t.models_.begin(), t.models_.end(), row.fields[0],
                                 [](const model_profile& m, const std::string& n) { return m.name < n; });
      if (it == t.models_.end() || it->name != row.fields[0])
        it = t.models_.insert(it, model_profile{row.fields[0], {}});
      auto pos = std::lower_bound(it->points.begin(), it->points.end(), p.batch,
                                  [](const util_point& q, int b) { return q.batch < b; });
      if (pos != it->points.end() && pos->batch == p.batch) {
        throw file_error(file, row.line, "duplicate row for " + row.fields[0] + " batch " + std::to_string(p.batch));
      }
      it->points.insert(pos, p);
    }
    if (t.models_.empty()) throw file_error(file, rows.back().line, "no data rows");
    return t;
  }

  static util_table load(const std::string& path, duration_unit unit) {
    return parse(read_text_file(path), path, unit);
  }

  [[nodiscard]] const model_profile* find(std::string_view model) const noexcept {
    for (const auto& m : models_) {
      if (m.name == model) return &m;
    }
    return nullptr;
  }
  [[nodiscard]] const std::vector<model_profile>& models() const noexcept { return models_; }

 private:
  std::vector<model_profile> models_;  // sorted by name
};

// INT_MODEL_CONSTANT.CSV: one header row and one row of five numbers, the coefficients of
//   alpha_A = c0*l2_A + c1*l2_B + c2*dram_A + c3*dram_B + c4   (gpu-let, Choi et al. ATC'22, §4.3;
// glet scheduler/interference_model.cpp).
struct interference_constants {
  double l2_self = 0.0;     // c0
  double l2_other = 0.0;    // c1
  double dram_self = 0.0;   // c2
  double dram_other = 0.0;  // c3
  double constant = 1.0;    // c4

  static interference_constants parse(std::string_view text, const std::string& file) {
    const auto rows = parse_csv_text(text);
    if (rows.size() != 2) {
      throw file_error(
          file, rows.empty() ? 1 : rows.back().line,
          "expected a header row and exactly one row of constants, got " + std::to_string(rows.size()) + " rows");
    }
    static constexpr std::string_view names[] = {"l2_util_m1", "l2_util_m2", "dram_util_m1", "dram_util_m2",
                                                 "constant"};
    const auto& h = rows[0];
    if (h.fields.size() != 5) throw file_error(file, h.line, "header must have 5 columns");
    for (std::size_t i = 0; i < 5; ++i) {
      if (h.fields[i] != names[i]) {
        throw file_error(file, h.line,
                         "header column " + std::to_string(i + 1) + " is '" + h.fields[i] + "', expected '" +
                             std::string(names[i]) + "'");
      }
    }
    const auto& r = rows[1];
    if (r.fields.size() != 5) {
      throw file_error(file, r.line, "expected 5 columns, got " + std::to_string(r.fields.size()));
    }
    interference_constants c;
    c.l2_self = parse_csv_double(r.fields[0], file, r.line, names[0]);
    c.l2_other = parse_csv_double(r.fields[1], file, r.line, names[1]);
    c.dram_self = parse_csv_double(r.fields[2], file, r.line, names[2]);
    c.dram_other = parse_csv_double(r.fields[3], file, r.line, names[3]);
    c.constant = parse_csv_double(r.fields[4], file, r.line, names[4]);
    return c;
  }

  static interference_constants load(const std::string& path) { return parse(read_text_file(path), path); }
};

}  // namespace gpusched::sim::serving
