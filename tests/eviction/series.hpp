// Generated free-memory series for the leak detector's tests (docs/eviction.md, "Guarantees"):
// seeded with the simulator's portable generator, so every platform sees the same series.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <numbers>

#include "gpusched/eviction/leak_detector.hpp"
#include "gpusched/sim/rng.hpp"

namespace leak_series {

// Uniform in [lo, hi).
inline double uniform(gpusched::sim::rng& g, double lo, double hi) {
  return lo + (hi - lo) * (1.0 - g.uniform_open0());
}

// N(0, sd^2) by Box and Muller, "A Note on the Generation of Random Normal Deviates", Ann. Math. Stat. 29 (1958).
inline double normal(gpusched::sim::rng& g, double sd) {
  const double u1 = g.uniform_open0(), u2 = g.uniform_open0();
  return sd * std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

// A reading as nvidia-smi gives it: whole MiB, never negative.
inline std::int32_t mib(double free) { return static_cast<std::int32_t>(std::llround(std::max(0.0, free))); }

// Records one device's reading and checks it.
inline bool feed(gpusched::gpu_memory_monitor& m, gpusched::leak_report& rep, double t, double free) {
  const std::array<std::int32_t, 1> r{mib(free)};
  m.record(0, t, r);
  return m.check(0, rep);
}

// When a linear leak of `rate` MiB/s from `f0` MiB free, read every `dt` s from t = 0, is first
// flagged; full = true when the device filled (a reading of 0) before that.
struct outcome {
  double t = 0.0;     // time of the flagging reading
  double left = 0.0;  // true seconds to full at that time: (f0 - rate t) / rate
  bool full = false;
  gpusched::leak_rule rule = gpusched::leak_rule::none;
};
inline outcome linear_leak(double f0, double rate, double dt, gpusched::leak_detector_options o = {}) {
  gpusched::gpu_memory_monitor m(o);
  gpusched::leak_report rep;
  for (long k = 0;; ++k) {
    const double t = static_cast<double>(k) * dt, f = f0 - rate * t;
    if (f <= 0.0) return {t, 0.0, true, gpusched::leak_rule::none};
    if (feed(m, rep, t, f)) return {t, f / rate, false, rep.devices[0].rule};
  }
}

}  // namespace leak_series
