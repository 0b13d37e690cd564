// Throughput as capacity (issue 17 item 5): the highest offered load at which a service still meets
// its P99 SLO, found by bisection on a monotone predicate, as gpu-let (Choi et al. ATC'22) and
// Clockwork (Gujarati et al. OSDI'20) report serving capacity. docs/experiment-world.md, "Metrics".
#pragma once

#include <cstddef>
#include <optional>

#include "gpusched/core/error.hpp"

namespace gpusched::sim::world {

struct load_search_result {
  double load = 0.0;           // the highest load seen to pass
  double first_failing = 0.0;  // the lowest load seen to fail (= hi when hi passes)
  std::size_t evaluations = 0;
};

// `passes(load)` must be monotone: true up to some load x*, false above it. Returns nullopt when
// `lo` already fails; {hi, hi} when `hi` passes; otherwise bisects [lo, hi] until the bracket
// (load, first_failing] is at most `tolerance` wide, so x* - load <= tolerance. Evaluations:
// 2 + ceil(log2((hi - lo) / tolerance)).
template <class Pred>
std::optional<load_search_result> highest_passing_load(double lo, double hi, double tolerance, Pred&& passes) {
  if (!(lo >= 0.0)) throw invalid_argument_error("lo", "must be >= 0");
  if (!(hi > lo)) throw invalid_argument_error("hi", "must be > lo");
  if (!(tolerance > 0.0)) throw invalid_argument_error("tolerance", "must be > 0");
  load_search_result r;
  r.evaluations = 1;
  if (!passes(lo)) return std::nullopt;
  ++r.evaluations;
  if (passes(hi)) {
    r.load = r.first_failing = hi;
    return r;
  }
  double good = lo;
  double bad = hi;
  while (bad - good > tolerance) {
    const double mid = good + (bad - good) / 2.0;
    ++r.evaluations;
    if (passes(mid)) {
      good = mid;
    } else {
      bad = mid;
    }
  }
  r.load = good;
  r.first_failing = bad;
  return r;
}

}  // namespace gpusched::sim::world
