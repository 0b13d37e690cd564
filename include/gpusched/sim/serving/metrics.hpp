// Request-level metrics of an inference service: latency percentiles, throughput, SLO attainment.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace gpusched::sim::serving {

// Log-linear latency histogram (the layout of HdrHistogram, G. Tene): each power-of-two range of
// latencies above 10 us is split into 128 equal buckets, so every quantile is within +0.8% (1/128) of
// the exact nearest-rank value. Fixed memory (about 31 KB), no allocation and no log() per sample.
// Latencies below 10 us count as 10 us; above ~3 hours as ~3 hours.
class latency_histogram {
 public:
  static constexpr double lowest_s = 1e-5;
  static constexpr int sub_buckets = 128;  // per power of two
  static constexpr int octaves = 30;       // 1e-5 s * 2^30 ~= 1.07e4 s
  static constexpr std::size_t buckets = 1 + static_cast<std::size_t>(octaves) * sub_buckets;

  void add(double latency_s) noexcept {
    ++counts_[bucket_of(latency_s)];
    ++count_;
  }

  [[nodiscard]] std::uint64_t count() const noexcept { return count_; }

  // Nearest-rank quantile (the value of rank ceil(q*N) in sorted order), reported as the upper edge of
  // its bucket: exact <= result <= (1 + 1/128) * exact. 0 when empty.
  [[nodiscard]] double quantile(double q) const noexcept {
    if (count_ == 0) return 0.0;
    const auto rank = static_cast<std::uint64_t>(std::max(1.0, std::ceil(q * static_cast<double>(count_))));
    std::uint64_t seen = 0;
    for (std::size_t i = 0; i < buckets; ++i) {
      seen += counts_[i];
      if (seen >= rank) return upper_edge(i);
    }
    return upper_edge(buckets - 1);
  }

  void merge(const latency_histogram& o) noexcept {
    for (std::size_t i = 0; i < buckets; ++i) counts_[i] += o.counts_[i];
    count_ += o.count_;
  }

  // Bucket 0 holds [0, lowest_s); then v = x / lowest_s = m * 2^e with m in [0.5, 1) and e >= 1 goes
  // to 1 + (e - 1) * 128 + floor((m - 0.5) * 256).
  static std::size_t bucket_of(double x) noexcept {
    const double v = x / lowest_s;
    if (!(v >= 1.0)) return 0;
    int e = 0;
    const double m = std::frexp(v, &e);
    if (e > octaves) return buckets - 1;
    const auto sub = static_cast<std::size_t>((m - 0.5) * (2 * sub_buckets));
    return 1 + static_cast<std::size_t>(e - 1) * sub_buckets + sub;
  }
  static double upper_edge(std::size_t i) noexcept {
    if (i == 0) return lowest_s;
    const auto e = static_cast<int>((i - 1) / sub_buckets) + 1;
    const auto sub = static_cast<double>((i - 1) % sub_buckets);
    return std::ldexp(0.5 + (sub + 1.0) / (2 * sub_buckets), e) * lowest_s;
  }

 private:
  std::array<std::uint64_t, buckets> counts_{};
  std::uint64_t count_ = 0;
};

// Exact nearest-rank quantile of samples (for tests and small runs that keep every sample).
inline double exact_quantile(std::vector<double> samples, double q) {
  if (samples.empty()) return 0.0;
  const auto n = samples.size();
  auto rank = static_cast<std::size_t>(std::max(1.0, std::ceil(q * static_cast<double>(n))));
  if (rank > n) rank = n;
  std::nth_element(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(rank - 1), samples.end());
  return samples[rank - 1];
}

// What happened to the requests of one service. A request ends in exactly one of: completed (its
// latency is recorded), timed_out (dropped from the queue after the service's timeout), failed (lost
// in a batch whose replica crashed or was removed), rejected (no ready replica when it arrived).
struct service_metrics {
  double slo_s = 0.0;
  std::uint64_t arrived = 0;
  std::uint64_t completed = 0;
  std::uint64_t completed_within_slo = 0;
  std::uint64_t timed_out = 0;
  std::uint64_t failed = 0;
  std::uint64_t rejected = 0;
  std::uint64_t batches = 0;
  std::uint64_t batched_requests = 0;
  double latency_sum_s = 0.0;
  double queueing_sum_s = 0.0;  // time from arrival to the start of the request's batch
  latency_histogram latency;
  bool keep_samples = false;
  std::vector<double> samples;  // every latency, only when keep_samples

  void record_completion(double latency_s, double queueing_s) {
    ++completed;
    if (latency_s <= slo_s) ++completed_within_slo;
    latency_sum_s += latency_s;
    queueing_sum_s += queueing_s;
    latency.add(latency_s);
    if (keep_samples) samples.push_back(latency_s);
  }

  [[nodiscard]] std::uint64_t finished() const noexcept { return completed + timed_out + failed + rejected; }
  [[nodiscard]] double mean_latency_s() const noexcept {
    return completed == 0 ? 0.0 : latency_sum_s / static_cast<double>(completed);
  }
  [[nodiscard]] double mean_queueing_s() const noexcept {
    return completed == 0 ? 0.0 : queueing_sum_s / static_cast<double>(completed);
  }
  [[nodiscard]] double p50_s() const noexcept { return latency.quantile(0.50); }
  [[nodiscard]] double p95_s() const noexcept { return latency.quantile(0.95); }
  [[nodiscard]] double p99_s() const noexcept { return latency.quantile(0.99); }
  // Completed requests per second over `elapsed_s`.
  [[nodiscard]] double throughput_qps(double elapsed_s) const noexcept {
    return elapsed_s > 0.0 ? static_cast<double>(completed) / elapsed_s : 0.0;
  }
  // Share of finished requests that completed within the SLO; timed-out, failed and rejected
  // requests count as misses. 1 when nothing has finished.
  [[nodiscard]] double slo_attainment() const noexcept {
    const auto f = finished();
    return f == 0 ? 1.0 : static_cast<double>(completed_within_slo) / static_cast<double>(f);
  }
  [[nodiscard]] double mean_batch_size() const noexcept {
    return batches == 0 ? 0.0 : static_cast<double>(batched_requests) / static_cast<double>(batches);
  }
};

}  // namespace gpusched::sim::serving
