// Leak detection from per-device GPU memory readings over time (the seed's leak: a node whose free
// GPU memory keeps falling), decided by the time left before the device is full.
//
// For each device the monitor keeps the last `window` readings (t_i, f_i) of free memory since the
// node's last reset() and, at each check, flags the device when either rule holds (docs/eviction.md):
//
//  1. Floor (acts at once): the last interval fell, the one before it too (when there is one: a
//     single step is not a rate), and the last reading is at most what one more interval takes at
//     the slower of those rates. No statistics: the next reading would find the device full.
//  2. Time left: on the segment after the last level shift (below), ordinary least squares gives the
//     slope b and its standard error se(b); the fall is significant at level `false_positive_rate`
//     (b + t * se < 0, t the one-sided Student-t quantile with n - 2 degrees of freedom), and the
//     time to exhaustion at the fastest rate the data allow, F / (-b + t * se), with F the last
//     reading less one residual standard deviation (the reading's own noise), is within the
//     horizon plus one reading interval. The horizon is one reading interval (detection) +
//     plan_s + startup_s (a restart): a device not flagged now still has the horizon at the next
//     reading, so a linear leak is flagged with at least the horizon left whenever it can be.
//     Two guards keep what is not a leak out:
//     - level shifts: a pod starting or ending moves free memory in one step; a single mean shift
//       (Hinkley 1970) that fits the segment better than a line cuts it there (up to 4 cuts), so a
//       step is never extrapolated as a slope;
//     - lower envelope: the last quarter of the window must reach below the earlier readings by at
//       least half of what the fitted fall predicts (less 3 residual standard deviations of noise
//       allowance): a sawtooth whose minimum does not fall (a caching allocator, a periodic batch)
//       only revisits levels it has reached and recovered from before.
//
// Memory per node: window * (8 + 4 * devices) bytes of readings (64 readings of 8 devices: 2,560
// bytes) plus 48 bytes; per monitor, 2 x window doubles (Student-t quantiles, reciprocals); per
// reused report, its devices and 2 x window doubles of workspace. check() into a reused report does
// not allocate.
#pragma once

#include <algorithm>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "gpusched/core/binding.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/core/types.hpp"

namespace gpusched {

struct leak_detector_options {
  std::size_t window = 64;            // readings kept per node
  std::size_t min_samples = 3;        // readings (after the last level shift) the time-left rule needs; >= 3
  double startup_s = 30.0;            // a restarted replica's start-up (model load)
  double plan_s = 0.0;                // planning and eviction (add the pods' termination grace period)
  double false_positive_rate = 1e-5;  // one-sided level of the slope test, per check and device
  // Optional gates kept from the slope-threshold detector (0 = off, the default): a leak slower than
  // min_slope_mib_per_s, or with R^2 below min_r2 on its segment, is not flagged by the time-left rule.
  double min_slope_mib_per_s = 0.0;
  double min_r2 = 0.0;
  double horizon_s = 0.0;  // > 0: a horizon at least this long (flag earlier)

  void validate() const {
    if (window < 3 || window > 100000)
      throw invalid_argument_error("leak_detector_options.window", "must be within 3..100000");
    if (min_samples < 3 || min_samples > window) {
      throw invalid_argument_error("leak_detector_options.min_samples", "must be within 3..window");
    }
    if (!std::isfinite(startup_s) || startup_s < 0.0) {
      throw invalid_argument_error("leak_detector_options.startup_s", "must be a finite number >= 0");
    }
    if (!std::isfinite(plan_s) || plan_s < 0.0) {
      throw invalid_argument_error("leak_detector_options.plan_s", "must be a finite number >= 0");
    }
    if (!(false_positive_rate > 0.0 && false_positive_rate < 0.5)) {
      throw invalid_argument_error("leak_detector_options.false_positive_rate", "must be within (0, 0.5)");
    }
    if (!std::isfinite(min_slope_mib_per_s) || min_slope_mib_per_s < 0.0) {
      throw invalid_argument_error("leak_detector_options.min_slope_mib_per_s", "must be a finite number >= 0");
    }
    if (!std::isfinite(min_r2) || min_r2 < 0.0 || min_r2 > 1.0) {
      throw invalid_argument_error("leak_detector_options.min_r2", "must be within 0..1");
    }
    if (!std::isfinite(horizon_s) || horizon_s < 0.0) {
      throw invalid_argument_error("leak_detector_options.horizon_s", "must be a finite number >= 0");
    }
  }
};

enum class leak_rule : std::uint8_t { none, floor, time_left };

struct device_trend {
  int gpu = 0;
  std::int32_t free_mib = 0;     // last reading
  double slope_mib_per_s = 0.0;  // fitted on the judged segment
  double r2 = 0.0;
  double seconds_to_exhaustion = std::numeric_limits<double>::infinity();  // at the fastest plausible rate
  bool leaking = false;
  leak_rule rule = leak_rule::none;
  double slope_se = 0.0;             // standard error of the slope
  double rate_high_mib_per_s = 0.0;  // -slope + t * se: the fastest fall the data allow
  double horizon_s = 0.0;            // the horizon this check used (interval + plan + start-up)
  std::size_t segment = 0;           // readings judged (after the last level shift)
};

struct leak_report {
  node_index node = 0;
  bool leaking = false;
  gpu_set leaking_gpus = 0;
  std::size_t samples = 0;
  std::vector<device_trend> devices;
  std::vector<double> workspace;  // check()'s scratch (2 x window doubles), kept for the next call

  [[nodiscard]] std::string explain() const {
    if (!leaking) return "node #" + std::to_string(node) + ": no leak (" + std::to_string(samples) + " readings)";
    std::string s = "node #" + std::to_string(node) + " leaks GPU memory:";
    for (const auto& d : devices) {
      if (!d.leaking) continue;
      s += " GPU " + std::to_string(d.gpu) + " free " + std::to_string(d.free_mib) + " MiB";
      if (d.rule == leak_rule::floor) {
        s += " gone within the next reading (floor);";
        continue;
      }
      s += " falling " + std::to_string(static_cast<long long>(std::llround(-d.slope_mib_per_s))) + " MiB/s (at most " +
           std::to_string(static_cast<long long>(std::llround(d.rate_high_mib_per_s))) + "), full in " +
           std::to_string(static_cast<long long>(d.seconds_to_exhaustion)) + " s or more, horizon " +
           std::to_string(static_cast<long long>(std::llround(d.horizon_s))) + " s;";
    }
    return s;
  }
};

// Ordinary least-squares slope and R^2 of y over t (n >= 2 distinct times).
struct ols_fit {
  double slope = 0.0;
  double r2 = 0.0;
};
// Montgomery, Peck, Vining, Introduction to Linear Regression Analysis, ch. 2: b = Sxy / Sxx, R^2 = Sxy^2 / (Sxx Syy).
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
  explicit gpu_memory_monitor(leak_detector_options o = {}) : o_(o) {
    o_.validate();
    // One-sided upper quantile t_{1-alpha, dof} for dof = 1 .. window - 2 (Boost.Math students_t).
    inv_.assign(o_.window + 1, 0.0);
    for (std::size_t k = 1; k <= o_.window; ++k) inv_[k] = 1.0 / static_cast<double>(k);
    t_crit_.assign(o_.window, 0.0);
    for (std::size_t dof = 1; dof + 2 <= o_.window; ++dof) {
      const boost::math::students_t dist(static_cast<double>(dof));
      t_crit_[dof] = boost::math::quantile(boost::math::complement(dist, o_.false_positive_rate));
    }
  }

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
    if (n < nodes_.size() && nodes_[n].count > 0) {
      const series& s = nodes_[n];
      if (free_mib.size() != s.devices) {
        throw invalid_argument_error("gpu_memory_monitor.free_mib", "node #" + std::to_string(n) + " had " +
                                                                        std::to_string(s.devices) + " devices, got " +
                                                                        std::to_string(free_mib.size()));
      }
      if (!(t > s.last_t)) throw invalid_argument_error("gpu_memory_monitor.time", "must increase for each node");
    }
    if (n >= nodes_.size()) nodes_.resize(static_cast<std::size_t>(n) + 1);
    series& s = nodes_[n];
    if (s.count == 0) {
      s.devices = free_mib.size();
      if (s.t.size() != o_.window) s.t.assign(o_.window, 0.0);
      if (s.free.size() != o_.window * s.devices) s.free.assign(o_.window * s.devices, 0);
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

  // Forgets node n's readings (its pods changed, or it was repaired). Keeps the storage.
  void reset(node_index n) noexcept {
    if (n < nodes_.size()) nodes_[n].count = 0;
  }

  // Judges node n into `r` (its `devices` reused: no allocation once it has room). Returns r.leaking.
  bool check(node_index n, leak_report& r) const {
    r.node = n;
    r.leaking = false;
    r.leaking_gpus = 0;
    r.samples = 0;
    r.devices.clear();
    if (n >= nodes_.size() || nodes_[n].count == 0) return false;
    const series& s = nodes_[n];
    r.samples = s.count;
    // The ring laid out in time order once: times relative to the first reading, then one device's
    // readings at a time.
    if (r.workspace.size() < 2 * s.count) r.workspace.resize(2 * o_.window);
    double* t = r.workspace.data();
    double* y = t + s.count;
    const double t0 = s.t[s.head];
    for (std::size_t i = 0, at = s.head; i < s.count; ++i, at = at + 1 == o_.window ? 0 : at + 1) t[i] = s.t[at] - t0;
    for (std::size_t g = 0; g < s.devices; ++g) {
      for (std::size_t i = 0, at = s.head; i < s.count; ++i, at = at + 1 == o_.window ? 0 : at + 1) {
        y[i] = static_cast<double>(s.free[at * s.devices + g]);
      }
      const device_trend d = judge(std::span<const double>(t, s.count), std::span<const double>(y, s.count), g);
      if (d.leaking) {
        r.leaking = true;
        r.leaking_gpus |= gpu_set{1} << g;
      }
      r.devices.push_back(d);
    }
    return r.leaking;
  }

  [[nodiscard]] leak_report check(node_index n) const {
    leak_report r;
    check(n, r);
    return r;
  }

  // Every node that leaks now, lowest index first.
  [[nodiscard]] std::vector<node_index> leaking_nodes() const {
    std::vector<node_index> out;
    leak_report r;
    for (std::size_t n = 0; n < nodes_.size(); ++n) {
      if (check(static_cast<node_index>(n), r)) out.push_back(static_cast<node_index>(n));
    }
    return out;
  }

 private:
  struct series {
    std::vector<double> t;           // ring of window times
    std::vector<std::int32_t> free;  // ring of window x devices readings
    std::size_t head = 0, count = 0, devices = 0;
    double last_t = 0.0;
  };

  // A least-squares line: slope, SSE, Sxx, Syy.
  struct line_fit {
    double slope = 0.0, sse = 0.0, sxx = 0.0, syy = 0.0;
  };

  // Montgomery, Peck, Vining ch. 2: b = Sxy / Sxx, SSE = Syy - b Sxy, over readings [a, b).
  static line_fit fit_line(std::span<const double> t, std::span<const double> y, std::size_t a,
                           std::size_t b) noexcept {
    const double n = static_cast<double>(b - a);
    double tm = 0.0, ym = 0.0;
    for (std::size_t i = a; i < b; ++i) {
      tm += t[i];
      ym += y[i];
    }
    tm /= n;
    ym /= n;
    double sxx = 0.0, sxy = 0.0, syy = 0.0;
    for (std::size_t i = a; i < b; ++i) {
      const double dt = t[i] - tm, dy = y[i] - ym;
      sxx += dt * dt;
      sxy += dt * dy;
      syy += dy * dy;
    }
    line_fit f;
    f.sxx = sxx;
    f.syy = syy;
    if (sxx <= 0.0) return f;
    f.slope = sxy / sxx;
    f.sse = std::max(0.0, syy - f.slope * sxy);
    return f;
  }

  // The best single mean shift over readings [a, b), each side >= 2 readings: its SSE and where the
  // second level starts (Hinkley 1970, Biometrika 57(1): the ML change point minimises the two-segment SSE).
  std::pair<double, std::size_t> best_shift(std::span<const double> y, std::size_t a, std::size_t b) const noexcept {
    const double y0 = y[a];  // offset: better conditioned sums
    double sum = 0.0, sq = 0.0;
    for (std::size_t i = a; i < b; ++i) {
      const double v = y[i] - y0;
      sum += v;
      sq += v * v;
    }
    double ls = 0.0, lq = 0.0, best = std::numeric_limits<double>::infinity();
    std::size_t at = a;
    for (std::size_t k = a; k + 2 < b; ++k) {  // left = [a, k], right = [k + 1, b)
      const double v = y[k] - y0;
      ls += v;
      lq += v * v;
      if (k == a) continue;  // the left side needs 2 readings
      const double rs = sum - ls, rq = sq - lq;
      const double sse = (lq - ls * ls * inv_[k + 1 - a]) + (rq - rs * rs * inv_[b - k - 1]);
      if (sse < best) {
        best = sse;
        at = k + 1;
      }
    }
    return {best, at};
  }

  // One device's readings y at times t (time order, relative).
  device_trend judge(std::span<const double> t, std::span<const double> y, std::size_t g) const {
    device_trend d;
    d.gpu = static_cast<int>(g);
    const std::size_t n = y.size();
    d.free_mib = static_cast<std::int32_t>(y[n - 1]);
    if (n < 2) return d;
    const double last = y[n - 1];
    const double interval = t[n - 1] - t[n - 2];
    d.horizon_s = std::max(o_.horizon_s, interval + o_.plan_s + o_.startup_s);

    // Rule 1, the floor: the last interval fell, the one before it too (a single step is not a rate;
    // right after a reset there is no interval before), and one more interval at the slower of the
    // two rates empties the device.
    {
      const double r1 = (y[n - 2] - last) / interval;
      const double r0 = n >= 3 ? (y[n - 3] - y[n - 2]) / (t[n - 2] - t[n - 3]) : r1;
      const double rate = std::min(r0, r1);
      if (rate > 0.0 && last <= interval * rate) {
        d.leaking = true;
        d.rule = leak_rule::floor;
        d.slope_mib_per_s = -rate;
        d.rate_high_mib_per_s = std::max(r0, r1);
        d.seconds_to_exhaustion = last / d.rate_high_mib_per_s;
        d.segment = std::min<std::size_t>(n, 3);
        return d;
      }
    }

    // Level shifts: cut at the best mean shift while it fits better than a line (at most 4 cuts).
    std::size_t a = 0;
    line_fit f = fit_line(t, y, a, n);
    for (int cuts = 0; cuts < 4 && n - a >= 4; ++cuts) {
      const auto [sse_shift, at] = best_shift(y, a, n);
      if (!(sse_shift < f.sse)) break;
      a = at;
      f = fit_line(t, y, a, n);
    }
    const std::size_t m = n - a;
    d.segment = m;
    d.slope_mib_per_s = f.slope;
    d.r2 = f.syy > 0.0 ? std::max(0.0, 1.0 - f.sse / f.syy) : 0.0;
    if (m < 3 || m < o_.min_samples || f.sxx <= 0.0) return d;

    // Rule 2, time left. se(b) = sqrt(SSE / (m - 2) / Sxx), t test on the slope and its one-sided
    // bound b + t se (Montgomery, Peck, Vining, 5th ed., sections 2.3.1 and 2.4.1).
    const double resid_sd = std::sqrt(f.sse / static_cast<double>(m - 2));
    d.slope_se = resid_sd / std::sqrt(f.sxx);
    const double tq = t_crit_[m - 2];
    d.rate_high_mib_per_s = -f.slope + tq * d.slope_se;
    const bool falling = f.slope + tq * d.slope_se < 0.0;
    if (!falling) return d;
    // Free memory now: the last reading less one residual sd (its own noise; 0 for an exact line).
    d.seconds_to_exhaustion = std::max(0.0, last - resid_sd) / d.rate_high_mib_per_s;
    if (d.seconds_to_exhaustion > d.horizon_s + interval) return d;
    if (o_.min_slope_mib_per_s > 0.0 && -f.slope < o_.min_slope_mib_per_s) return d;
    if (o_.min_r2 > 0.0 && d.r2 < o_.min_r2) return d;

    // Lower envelope over the whole window: the last quarter must make new lows, at least half of
    // what the fitted fall predicts between the earlier part's end and now, less 3 residual sd.
    const std::size_t q = std::max<std::size_t>(1, n / 4);
    double early = std::numeric_limits<double>::infinity(), recent = early;
    for (std::size_t i = 0; i < n - q; ++i) early = std::min(early, y[i]);
    for (std::size_t i = n - q; i < n; ++i) recent = std::min(recent, y[i]);
    const double expected = -f.slope * (t[n - 1] - t[n - q - 1]);
    if (early - recent < 0.5 * expected - 3.0 * resid_sd) return d;

    d.leaking = true;
    d.rule = leak_rule::time_left;
    return d;
  }

  leak_detector_options o_;
  std::vector<double> t_crit_;  // t_crit_[dof]
  std::vector<double> inv_;     // inv_[k] = 1 / k
  std::vector<series> nodes_;
};

}  // namespace gpusched
