// A quantile sketch with a relative-error guarantee: DDSketch (C. Masson, J. E. Rim, H. K. Lee,
// "DDSketch: A Fast and Fully-Mergeable Quantile Sketch with Relative-Error Guarantees", VLDB 2019),
// with a fixed, preallocated bucket range so that add() never allocates. Used for per-service,
// per-hour latency percentiles in the seed's world (docs/experiment-world.md, "Metrics").
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "gpusched/core/error.hpp"

namespace gpusched::sim::world {

class quantile_sketch {
 public:
  // Every quantile estimate of a value in [min_value, max_value] is within relative error `alpha`
  // of the true order statistic. Values below min_value count as min_value, above max_value as
  // max_value (and are counted in clamped()). alpha 0.01 over [1e-3, 1e7] is 1,152 buckets (9 KiB).
  explicit quantile_sketch(double alpha = 0.01, double min_value = 1e-3, double max_value = 1e7) {
    if (!(alpha > 0.0 && alpha < 1.0)) throw invalid_argument_error("alpha", "must be in (0, 1)");
    if (!(min_value > 0.0)) throw invalid_argument_error("min_value", "must be > 0");
    if (!(max_value > min_value)) throw invalid_argument_error("max_value", "must be > min_value");
    // DDSketch §2: gamma = (1 + alpha) / (1 - alpha); bucket i holds (gamma^(i-1), gamma^i].
    gamma_ = (1.0 + alpha) / (1.0 - alpha);
    log_gamma_ = std::log(gamma_);
    min_value_ = min_value;
    max_value_ = max_value;
    offset_ = index_of(min_value);
    counts_.assign(static_cast<std::size_t>(index_of(max_value) - offset_ + 1), 0);
  }

  void add(double x) noexcept { add(x, 1); }

  // Adds `n` equal values x (a fluid engine's batch of requests with one latency).
  void add(double x, std::uint64_t n) noexcept {
    if (n == 0) return;
    if (!(x >= min_value_)) {  // also NaN
      x = min_value_;
      clamped_ += n;
    } else if (x > max_value_) {
      x = max_value_;
      clamped_ += n;
    }
    counts_[static_cast<std::size_t>(index_of(x) - offset_)] += n;
    count_ += n;
  }

  // Adds another sketch's counts (same alpha and range; DDSketch is fully mergeable).
  void merge(const quantile_sketch& o) {
    if (o.counts_.size() != counts_.size() || o.gamma_ != gamma_ || o.offset_ != offset_) {
      throw invalid_argument_error("other", "sketches differ in alpha or range");
    }
    for (std::size_t i = 0; i < counts_.size(); ++i) counts_[i] += o.counts_[i];
    count_ += o.count_;
    clamped_ += o.clamped_;
  }

  // Empties the sketch without freeing (a new hour's window).
  void clear() noexcept {
    for (auto& c : counts_) c = 0;
    count_ = 0;
    clamped_ = 0;
  }

  [[nodiscard]] std::uint64_t count() const noexcept { return count_; }
  [[nodiscard]] std::uint64_t clamped() const noexcept { return clamped_; }
  [[nodiscard]] std::size_t buckets() const noexcept { return counts_.size(); }

  // The q-quantile (DDSketch Algorithm 2): the first bucket i whose cumulative count exceeds
  // q * (n - 1), reported as 2 gamma^i / (gamma + 1), within alpha of every value in the bucket;
  // that bucket holds the order statistic x_(floor(q (n - 1))) (0-based). NaN when empty.
  [[nodiscard]] double quantile(double q) const {
    if (!(q >= 0.0 && q <= 1.0)) throw invalid_argument_error("q", "must be in [0, 1]");
    if (count_ == 0) return std::nan("");
    const double rank = q * static_cast<double>(count_ - 1);
    std::uint64_t cum = 0;
    for (std::size_t i = 0; i < counts_.size(); ++i) {
      cum += counts_[i];
      if (static_cast<double>(cum) > rank) return estimate(static_cast<long>(i) + offset_);
    }
    return estimate(static_cast<long>(counts_.size()) - 1 + offset_);
  }

 private:
  [[nodiscard]] long index_of(double x) const noexcept {
    return static_cast<long>(std::ceil(std::log(x) / log_gamma_));
  }
  [[nodiscard]] double estimate(long i) const noexcept {
    return 2.0 * std::exp(static_cast<double>(i) * log_gamma_) / (gamma_ + 1.0);
  }

  double gamma_ = 0.0;
  double log_gamma_ = 0.0;
  double min_value_ = 0.0;
  double max_value_ = 0.0;
  long offset_ = 0;
  std::vector<std::uint64_t> counts_;
  std::uint64_t count_ = 0;
  std::uint64_t clamped_ = 0;
};

}  // namespace gpusched::sim::world
