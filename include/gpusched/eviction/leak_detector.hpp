// Leak detection from per-device GPU memory readings over time (the seed's leak: a node whose free
// GPU memory keeps falling).
//
// For each device, the last `window` readings (t_i, f_i) of free memory are fitted by ordinary
// least squares (e.g. Montgomery, Peck, Vining, Introduction to Linear Regression Analysis, ch. 2):
//   slope b = Sxy / Sxx,   R^2 = Sxy^2 / (Sxx * Syy),
//   Sxx = sum (t_i - t_mean)^2,  Sxy = sum (t_i - t_mean)(f_i - f_mean),  Syy = sum (f_i - f_mean)^2.
// A device leaks when at least min_samples readings are held, b <= -min_slope_mib_per_s (falling
// fast enough), R^2 >= min_r2 (falling steadily, not a single step or noise), and — when horizon_s
// is set — the projected exhaustion f_last / -b comes within horizon_s. A node leaks when any of
// its devices does. Readings taken across a pod's start or end mix a step into the trend: call
// reset(node) when the node's pods change.
// Memory per node: window * (8 + 4 * devices) bytes (30 readings of 8 devices: 1,200 bytes).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "gpusched/core/binding.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/core/types.hpp"

namespace gpusched {

struct leak_detector_options {
  std::size_t window = 30;            // readings kept per node
  std::size_t min_samples = 10;       // readings needed before judging
  double min_slope_mib_per_s = 1.0;   // free memory must fall at least this fast
  double min_r2 = 0.8;                // and this steadily
  double horizon_s = 0.0;             // > 0: only when projected exhaustion is this close

  void validate() const {
    if (window < 2 || window > 100000) throw invalid_argument_error("leak_detector_options.window", "must be within 2..100000");
    if (min_samples < 2 || min_samples > window) {
      throw invalid_argument_error("leak_detector_options.min_samples", "must be within 2..window");
    }
    if (!std::isfinite(min_slope_mib_per_s) || min_slope_mib_per_s <= 0.0) {
      throw invalid_argument_error("leak_detector_options.min_slope_mib_per_s", "must be a finite number > 0");
    }
    if (!std::isfinite(min_r2) || min_r2 < 0.0 || min_r2 > 1.0) {
      throw invalid_argument_error("leak_detector_options.min_r2", "must be within 0..1");
    }
    if (!std::isfinite(horizon_s) || horizon_s < 0.0) {
      throw invalid_argument_error("leak_detector_options.horizon_s", "must be a finite number >= 0");
    }
  }
};

struct device_trend {
  int gpu = 0;
  std::int32_t free_mib = 0;  // last reading
  double slope_mib_per_s = 0.0;
  double r2 = 0.0;
  double seconds_to_exhaustion = std::numeric_limits<double>::infinity();
  bool leaking = false;
};

struct leak_report {
  node_index node = 0;
  bool leaking = false;
  gpu_set leaking_gpus = 0;
  std::size_t samples = 0;
  std::vector<device_trend> devices;

  [[nodiscard]] std::string explain() const {
    if (!leaking) return "node #" + std::to_string(node) + ": no leak (" + std::to_string(samples) + " readings)";
    std::string s = "node #" + std::to_string(node) + " leaks GPU memory:";
    for (const auto& d : devices) {
      if (!d.leaking) continue;
      s += " GPU " + std::to_string(d.gpu) + " free " + std::to_string(d.free_mib) + " MiB falling " +
           std::to_string(static_cast<long long>(std::llround(-d.slope_mib_per_s))) + " MiB/s (R^2 " +
           std::to_string(static_cast<int>(std::lround(d.r2 * 100))) + "%), exhausted in " +
           std::to_string(static_cast<long long>(d.seconds_to_exhaustion)) + " s;";
    }
    return s;
  }
};

// Ordinary least-squares slope and R^2 of y over t (n >= 2 distinct times).
struct ols_fit {
  double slope = 0.0;
  double r2 = 0.0;
};
inline ols_fit least_squares(std::span<const double> t, std::span<const double> y) noexcept {
  const std::size_t n = t.size();
  double tm = 0.0, ym = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    tm += t[i];
    ym += y[i];
  }
  tm /= static_cast<double>(n);
  ym /= static_cast<double>(n);
  double sxx = 0.0, sxy = 0.0, syy = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const double dt = t[i] - tm, dy = y[i] - ym;
    sxx += dt * dt;
    sxy += dt * dy;
    syy += dy * dy;
  }
  ols_fit f;
  if (sxx <= 0.0) return f;
  f.slope = sxy / sxx;
  f.r2 = syy > 0.0 ? (sxy * sxy) / (sxx * syy) : 0.0;  // flat series: no trend to explain
  return f;
}

class gpu_memory_monitor {
 public:
  explicit gpu_memory_monitor(leak_detector_options o = {}) : o_(o) { o_.validate(); }

  [[nodiscard]] const leak_detector_options& options() const noexcept { return o_; }

  // One reading of node n at time t: free MiB of each device. Validated (finite increasing times,
  // values >= 0, the same device count as before); throws and records nothing on bad input.
  void record(node_index n, double t, std::span<const std::int32_t> free_mib) {
    if (!std::isfinite(t)) throw invalid_argument_error("gpu_memory_monitor.time", "must be finite");
    if (free_mib.empty() || free_mib.size() > static_cast<std::size_t>(max_gpus_per_node)) {
      throw invalid_argument_error("gpu_memory_monitor.free_mib", "must hold 1..64 device readings");
    }
    for (std::size_t g = 0; g < free_mib.size(); ++g) {
      if (free_mib[g] < 0) {
        throw invalid_argument_error("gpu_memory_monitor.free_mib[" + std::to_string(g) + "]", "must be >= 0");
      }
    }
    if (n >= nodes_.size()) nodes_.resize(static_cast<std::size_t>(n) + 1);
    series& s = nodes_[n];
    if (s.count > 0) {
      if (free_mib.size() != s.devices) {
        throw invalid_argument_error("gpu_memory_monitor.free_mib", "node #" + std::to_string(n) + " had " +
                                                                       std::to_string(s.devices) + " devices, got " +
                                                                       std::to_string(free_mib.size()));
      }
      if (!(t > s.last_t)) throw invalid_argument_error("gpu_memory_monitor.time", "must increase for each node");
    } else {
      s.devices = free_mib.size();
      s.t.assign(o_.window, 0.0);
      s.free.assign(o_.window * s.devices, 0);
      s.head = 0;
    }
    const std::size_t at = (s.head + s.count) % o_.window;
    s.t[at] = t;
    for (std::size_t g = 0; g < s.devices; ++g) s.free[at * s.devices + g] = free_mib[g];
    if (s.count < o_.window) {
      ++s.count;
    } else {
      s.head = (s.head + 1) % o_.window;
    }
    s.last_t = t;
  }

  // Forgets node n's readings (its pods changed, or it was repaired).
  void reset(node_index n) noexcept {
    if (n < nodes_.size()) nodes_[n].count = 0;
  }

  [[nodiscard]] leak_report check(node_index n) const {
    leak_report r;
    r.node = n;
    if (n >= nodes_.size() || nodes_[n].count == 0) return r;
    const series& s = nodes_[n];
    r.samples = s.count;
    std::vector<double> t(s.count), y(s.count);
    const double t0 = s.t[s.head];
    for (std::size_t i = 0; i < s.count; ++i) t[i] = s.t[(s.head + i) % o_.window] - t0;  // relative: better conditioned
    r.devices.reserve(s.devices);
    for (std::size_t g = 0; g < s.devices; ++g) {
      for (std::size_t i = 0; i < s.count; ++i) y[i] = s.free[((s.head + i) % o_.window) * s.devices + g];
      device_trend d;
      d.gpu = static_cast<int>(g);
      d.free_mib = s.free[((s.head + s.count - 1) % o_.window) * s.devices + g];
      if (s.count >= 2) {
        const ols_fit f = least_squares(t, y);
        d.slope_mib_per_s = f.slope;
        d.r2 = f.r2;
        if (f.slope < 0.0) d.seconds_to_exhaustion = static_cast<double>(d.free_mib) / -f.slope;
      }
      d.leaking = s.count >= o_.min_samples && d.slope_mib_per_s <= -o_.min_slope_mib_per_s && d.r2 >= o_.min_r2 &&
                  (o_.horizon_s <= 0.0 || d.seconds_to_exhaustion <= o_.horizon_s);
      if (d.leaking) {
        r.leaking = true;
        r.leaking_gpus |= gpu_set{1} << g;
      }
      r.devices.push_back(d);
    }
    return r;
  }

  // Every node that leaks now, lowest index first.
  [[nodiscard]] std::vector<node_index> leaking_nodes() const {
    std::vector<node_index> out;
    for (std::size_t n = 0; n < nodes_.size(); ++n) {
      if (nodes_[n].count >= o_.min_samples && check(static_cast<node_index>(n)).leaking) out.push_back(static_cast<node_index>(n));
    }
    return out;
  }

 private:
  struct series {
    std::vector<double> t;             // ring of window times
    std::vector<std::int32_t> free;    // ring of window x devices readings
    std::size_t head = 0, count = 0, devices = 0;
    double last_t = 0.0;
  };
  leak_detector_options o_;
  std::vector<series> nodes_;
};

}  // namespace gpusched
