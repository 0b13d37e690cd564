// The scheduling queue's policy: aging, tier share, backoff, timeouts — and their formulas.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "gpusched/core/error.hpp"
#include "gpusched/core/types.hpp"

namespace gpusched {

// Aging lifts a waiting unit one level per age_step_s, up to the starving level: one above every
// real priority, where order is strict FIFO by ready time, so that no later unit can overtake it.
// Priorities are int32 (core/types.hpp), so the starving level is 2^31, an int64. Aging works in
// the seed's band: a unit of base priority p <= seed_max_priority (10) climbs to p + k and is
// starving once p + k > seed_max_priority, exactly as with the old 0..10 range; a unit above the
// band (Kubernetes' priority classes, e.g. 1,000,000 or system-cluster-critical 2,000,000,000) is
// ordered by its priority alone, as kube-scheduler's PrioritySort does, and never ages.
inline constexpr std::int64_t starving_level = std::int64_t{max_priority} + 1;

struct queue_options {
  double age_step_s = 60.0;  // a: seconds of waiting per level of effective priority
  // P: when both tiers have ready units, every P-th such pop takes dev (dev's guaranteed share is
  // 1/P of contended pops); 0 means prod strictly first (dev runs only when prod is empty).
  std::int32_t dev_share_period = 0;
  double initial_backoff_s = 1.0;        // kubernetes podInitialBackoffSeconds
  double max_backoff_s = 10.0;           // kubernetes podMaxBackoffSeconds
  double max_unschedulable_s = 300.0;    // kubernetes DefaultPodMaxInUnschedulablePodsDuration
  double timeout_s = 0.0;                // 0: never; else a unit queued this long is reported and dropped
  std::size_t history = 8;               // failed attempts kept per unit for its report

  // Throws invalid_argument_error naming the field.
  void validate() const {
    auto positive = [](double v, const char* f) {
      if (!std::isfinite(v) || v <= 0.0) throw invalid_argument_error(f, "must be a finite number > 0");
    };
    positive(age_step_s, "queue_options.age_step_s");
    positive(initial_backoff_s, "queue_options.initial_backoff_s");
    positive(max_backoff_s, "queue_options.max_backoff_s");
    positive(max_unschedulable_s, "queue_options.max_unschedulable_s");
    if (max_backoff_s < initial_backoff_s) {
      throw invalid_argument_error("queue_options.max_backoff_s", "must be >= initial_backoff_s");
    }
    if (dev_share_period < 0 || dev_share_period == 1) {
      throw invalid_argument_error("queue_options.dev_share_period", "must be 0 (prod strictly first) or >= 2, got " +
                                                                         std::to_string(dev_share_period));
    }
    if (!std::isfinite(timeout_s) || timeout_s < 0.0) {
      throw invalid_argument_error("queue_options.timeout_s", "must be a finite number >= 0");
    }
  }
};

// Effective priority after waiting `waited` seconds: for p <= seed_max_priority, p + k while that
// is <= seed_max_priority, else starving_level, with k = floor(waited / a) taken exactly as the
// largest k with k * a <= waited (the queue computes the same without a division on its hot path);
// p itself above the band.
constexpr std::int64_t effective_priority(std::int32_t base, double waited, double age_step_s) noexcept {
  if (base > seed_max_priority || !(waited > 0.0)) return base;
  const std::int64_t to_starve = std::int64_t{seed_max_priority} + 1 - base;  // levels to climb, >= 1
  const double x = waited / age_step_s;
  if (x >= static_cast<double>(to_starve + 1)) return starving_level;
  auto k = static_cast<std::int64_t>(x);
  if (static_cast<double>(k + 1) * age_step_s <= waited) {
    ++k;
  } else if (k > 0 && static_cast<double>(k) * age_step_s > waited) {
    --k;
  }
  return k >= to_starve ? starving_level : base + k;
}

// Backoff after the n-th failed attempt: min(initial * 2^(n-1), max), 0 for n == 0
// (kubernetes pkg/scheduler/backend/queue/backoff_queue.go, calculateBackoffDuration).
constexpr double backoff_duration(int attempts, double initial, double max) noexcept {
  if (attempts <= 0) return 0.0;
  double d = initial;
  for (int i = 1; i < attempts; ++i) {
    if (d > max - d) return max;  // doubling would pass max (the upstream overflow-safe form)
    d += d;
  }
  return d < max ? d : max;
}

}  // namespace gpusched
