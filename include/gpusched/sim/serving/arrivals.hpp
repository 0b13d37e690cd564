// Request arrivals of one inference service: a non-homogeneous Poisson process with a diurnal swing
// and bursts, sampled by thinning, or a fixed list of times (replay, tests).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numbers>
#include <string>
#include <vector>

#include "gpusched/core/error.hpp"
#include "gpusched/sim/serving/rng.hpp"

namespace gpusched::sim::serving {

// A period during which the rate is multiplied (a flash crowd, a batch client).
struct burst_window {
  double start_s = 0.0;
  double duration_s = 0.0;
  double multiplier = 1.0;
};

// lambda(t) = rate_qps * (1 + diurnal_amplitude * cos(2*pi*(t - diurnal_peak_s) / diurnal_period_s))
//             * m(t),  m(t) = the largest multiplier of the bursts covering t (1 outside bursts).
// Random bursts start as a Poisson process of random_bursts_per_day; overlapping bursts do not compound.
struct arrival_params {
  double rate_qps = 0.0;           // mean rate over a diurnal period, outside bursts
  double diurnal_amplitude = 0.0;  // 0..1
  double diurnal_period_s = 86400.0;
  double diurnal_peak_s = 0.0;  // time of the daily peak
  std::vector<burst_window> bursts;
  double random_bursts_per_day = 0.0;
  double random_burst_duration_s = 0.0;
  double random_burst_multiplier = 1.0;
};

// Throws invalid_argument_error naming the field (prefixed with `at`).
inline void validate(const arrival_params& p, const std::string& at = "arrivals.") {
  auto bad = [](double v) { return !std::isfinite(v); };
  if (bad(p.rate_qps) || p.rate_qps < 0.0) throw invalid_argument_error(at + "rate_qps", "must be >= 0");
  if (bad(p.diurnal_amplitude) || p.diurnal_amplitude < 0.0 || p.diurnal_amplitude > 1.0) {
    throw invalid_argument_error(at + "diurnal.amplitude", "must be within 0..1");
  }
  if (bad(p.diurnal_period_s) || !(p.diurnal_period_s > 0.0))
    throw invalid_argument_error(at + "diurnal.period_s", "must be > 0");
  if (bad(p.diurnal_peak_s)) throw invalid_argument_error(at + "diurnal.peak_s", "must be finite");
  for (std::size_t i = 0; i < p.bursts.size(); ++i) {
    const auto& b = p.bursts[i];
    const std::string f = at + "bursts[" + std::to_string(i) + "].";
    if (bad(b.start_s) || b.start_s < 0.0) throw invalid_argument_error(f + "start_s", "must be >= 0");
    if (bad(b.duration_s) || b.duration_s < 0.0) throw invalid_argument_error(f + "duration_s", "must be >= 0");
    if (bad(b.multiplier) || b.multiplier < 0.0 || b.multiplier > 1000.0) {
      throw invalid_argument_error(f + "multiplier", "must be within 0..1000");
    }
  }
  if (bad(p.random_bursts_per_day) || p.random_bursts_per_day < 0.0) {
    throw invalid_argument_error(at + "random_bursts.per_day", "must be >= 0");
  }
  if (bad(p.random_burst_duration_s) || p.random_burst_duration_s < 0.0) {
    throw invalid_argument_error(at + "random_bursts.duration_s", "must be >= 0");
  }
  if (bad(p.random_burst_multiplier) || p.random_burst_multiplier < 0.0 || p.random_burst_multiplier > 1000.0) {
    throw invalid_argument_error(at + "random_bursts.multiplier", "must be within 0..1000");
  }
}

// Generates arrival times in increasing order up to a horizon; +infinity after it. All randomness
// comes from the seed (random burst windows are drawn at construction from their own stream).
class arrival_process {
 public:
  static constexpr double never = std::numeric_limits<double>::infinity();

  arrival_process() = default;

  // Poisson arrivals, sampled by thinning (Lewis and Shedler, "Simulation of nonhomogeneous Poisson
  // processes by thinning", Naval Research Logistics Quarterly 26(3), 1979) against a piecewise
  // constant bound: short windows (1/288 of the diurnal period, split at burst edges) each bounded by
  // their own maximum rate, so that almost every candidate is accepted.
  arrival_process(const arrival_params& p, std::uint64_t seed, double horizon_s)
      : params_(p), rng_(derive_seed(seed, 1)), horizon_(horizon_s) {
    validate(p);
    std::vector<burst_window> windows = p.bursts;
    if (p.random_bursts_per_day > 0.0 && p.random_burst_duration_s > 0.0) {
      rng burst_rng(derive_seed(seed, 2));
      const double rate_per_s = p.random_bursts_per_day / 86400.0;
      for (double t = burst_rng.exponential(rate_per_s); t < horizon_s; t += burst_rng.exponential(rate_per_s)) {
        windows.push_back(burst_window{t, p.random_burst_duration_s, p.random_burst_multiplier});
      }
    }
    build_segments(windows);
  }

  // A fixed, sorted list of times (a replayed trace, or hand-made arrivals in tests).
  static arrival_process from_times(std::vector<double> times) {
    for (std::size_t i = 0; i < times.size(); ++i) {
      if (!std::isfinite(times[i]) || times[i] < 0.0 || (i > 0 && times[i] < times[i - 1])) {
        throw invalid_argument_error("arrivals.times[" + std::to_string(i) + "]", "must be finite, >= 0 and sorted");
      }
    }
    arrival_process a;
    a.trace_ = std::move(times);
    a.is_trace_ = true;
    a.horizon_ = never;
    return a;
  }

  // The rate at time t (requests per second).
  [[nodiscard]] double rate(double t) const noexcept {
    double r = params_.rate_qps;
    if (params_.diurnal_amplitude > 0.0) {
      r *= 1.0 + params_.diurnal_amplitude *
                     std::cos(2.0 * std::numbers::pi * (t - params_.diurnal_peak_s) / params_.diurnal_period_s);
    }
    return r * multiplier_at(t);
  }

  // The next arrival time (non-decreasing), or `never`.
  double next() noexcept {
    if (is_trace_) return cursor_ < trace_.size() ? trace_[cursor_++] : never;
    if (!(params_.rate_qps > 0.0)) return never;
    while (true) {
      if (t_ >= horizon_) return never;
      if (t_ >= window_end_) open_window();
      if (!(bound_ > 0.0)) {
        t_ = window_end_;
        continue;
      }
      const double dt = rng_.exponential(bound_);
      if (t_ + dt >= window_end_) {  // memoryless: restart the draw at the window's end
        t_ = window_end_;
        continue;
      }
      t_ += dt;
      const double u = rng_.uniform_open0() * bound_;
      if (u <= floor_ || u <= rate(t_)) return t_;  // below the window's minimum rate: no cos() needed
    }
  }

  [[nodiscard]] const std::vector<burst_window>& burst_segments() const noexcept { return segments_; }

 private:
  // Merges the windows into disjoint, sorted segments carrying the largest covering multiplier.
  void build_segments(const std::vector<burst_window>& windows) {
    std::vector<double> cuts;
    for (const auto& w : windows) {
      if (w.duration_s <= 0.0) continue;
      cuts.push_back(w.start_s);
      cuts.push_back(w.start_s + w.duration_s);
    }
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    for (std::size_t i = 0; i + 1 < cuts.size(); ++i) {
      const double a = cuts[i];
      const double b = cuts[i + 1];
      double m = 0.0;
      bool covered = false;
      for (const auto& w : windows) {
        if (w.duration_s > 0.0 && w.start_s <= a && a < w.start_s + w.duration_s) {
          m = covered ? std::max(m, w.multiplier) : w.multiplier;
          covered = true;
        }
      }
      if (covered) segments_.push_back(burst_window{a, b - a, m});
    }
  }

  [[nodiscard]] double multiplier_at(double t) const noexcept {
    // The last segment starting at or before t (segments are few: a binary search is enough).
    auto it = std::upper_bound(segments_.begin(), segments_.end(), t,
                               [](double x, const burst_window& s) { return x < s.start_s; });
    if (it == segments_.begin()) return 1.0;
    --it;
    return t < it->start_s + it->duration_s ? it->multiplier : 1.0;
  }

  // Starts the window at t_: up to the next grid point, burst edge or the horizon; bound_ is the
  // largest rate within it (the diurnal cosine peaks inside or at an end; the burst multiplier is
  // constant inside).
  void open_window() noexcept {
    const double a = t_;
    const double step = params_.diurnal_period_s / 288.0;
    double b = (std::floor(a / step) + 1.0) * step;
    auto seg = std::upper_bound(segments_.begin(), segments_.end(), a,
                                [](double x, const burst_window& w) { return x < w.start_s; });
    if (seg != segments_.end()) b = std::min(b, seg->start_s);
    if (seg != segments_.begin()) {
      const auto& cur = *(seg - 1);
      if (a < cur.start_s + cur.duration_s) b = std::min(b, cur.start_s + cur.duration_s);
    }
    b = std::min(b, horizon_);
    if (!(b > a)) b = std::nextafter(a, never);
    double max_cos = 1.0;
    double min_cos = -1.0;
    if (params_.diurnal_amplitude > 0.0) {
      const double pa = (a - params_.diurnal_peak_s) / params_.diurnal_period_s;
      const double pb = (b - params_.diurnal_peak_s) / params_.diurnal_period_s;
      const double ca = std::cos(2.0 * std::numbers::pi * pa);
      const double cb = std::cos(2.0 * std::numbers::pi * pb);
      if (std::floor(pa) == std::floor(pb) && std::floor(pa) != pa) max_cos = std::max(ca, cb);  // no peak inside
      if (std::floor(pa - 0.5) == std::floor(pb - 0.5) && std::floor(pa - 0.5) != pa - 0.5) {    // no trough inside
        min_cos = std::min(ca, cb);
      }
    }
    const double base = params_.rate_qps * multiplier_at(a);
    window_end_ = b;
    bound_ = base * (1.0 + params_.diurnal_amplitude * max_cos) * (1.0 + 1e-12);
    floor_ = base * (1.0 + params_.diurnal_amplitude * min_cos) * (1.0 - 1e-12);
  }

  arrival_params params_;
  rng rng_{0};
  double horizon_ = never;
  double t_ = 0.0;
  double window_end_ = 0.0;
  double bound_ = 0.0;  // the largest rate in the current window
  double floor_ = 0.0;  // the smallest
  std::vector<burst_window> segments_;
  std::vector<double> trace_;
  std::size_t cursor_ = 0;
  bool is_trace_ = false;
};

}  // namespace gpusched::sim::serving
