// The extender's Prometheus metrics, written in the text exposition format 0.0.4
// (https://prometheus.io/docs/instrumenting/exposition_formats/). Lock-free counters; the
// histograms' bucket bounds are fixed at construction.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

#include "gpusched/core/reason.hpp"

namespace gpusched::extender {

enum class verb : std::uint8_t { filter, prioritize, preempt, bind, count_ };
inline constexpr std::array<std::string_view, 4> verb_names{"filter", "prioritize", "preempt", "bind"};

// Latency buckets in seconds: 50 us .. 2.5 s.
inline constexpr std::array<double, 12> latency_bounds{5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 1e-2, 2.5e-2, 0.1, 0.5, 2.5};

class histogram {
 public:
  void observe(double seconds) noexcept {
    std::size_t b = 0;
    while (b < latency_bounds.size() && seconds > latency_bounds[b]) ++b;
    buckets_[b].fetch_add(1, std::memory_order_relaxed);
    // Sum kept in nanoseconds so that it can be atomic.
    sum_ns_.fetch_add(static_cast<std::uint64_t>(seconds * 1e9), std::memory_order_relaxed);
  }
  void write(std::string& out, std::string_view name, std::string_view labels) const {
    std::uint64_t cumulative = 0;
    for (std::size_t b = 0; b <= latency_bounds.size(); ++b) {
      cumulative += buckets_[b].load(std::memory_order_relaxed);
      const std::string le = b < latency_bounds.size() ? format(latency_bounds[b]) : "+Inf";
      out += std::string(name) + "_bucket{" + std::string(labels) + ",le=\"" + le + "\"} " + std::to_string(cumulative) + "\n";
    }
    out += std::string(name) + "_sum{" + std::string(labels) + "} " + format(static_cast<double>(sum_ns_.load()) / 1e9) + "\n";
    out += std::string(name) + "_count{" + std::string(labels) + "} " + std::to_string(cumulative) + "\n";
  }
  static std::string format(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", v);
    return buf;
  }

 private:
  std::array<std::atomic<std::uint64_t>, latency_bounds.size() + 1> buckets_{};
  std::atomic<std::uint64_t> sum_ns_{0};
};

// What the /metrics page shows about the cluster; filled by the caller under its state lock.
struct cluster_gauges {
  std::uint64_t nodes = 0;
  std::uint64_t pods_bound = 0;
  std::uint64_t gpus = 0;
  std::int64_t gpu_milli_capacity = 0;
  std::int64_t gpu_milli_allocated = 0;
  std::int64_t cpu_milli_capacity = 0;
  std::int64_t cpu_milli_allocated = 0;
};

class metrics {
 public:
  void decision(verb v, bool ok, double seconds) noexcept {
    const auto i = static_cast<std::size_t>(v);
    (ok ? ok_ : error_)[i].fetch_add(1, std::memory_order_relaxed);
    latency_[i].observe(seconds);
  }
  void rejection(reason r) noexcept { rejections_[static_cast<std::size_t>(r)].fetch_add(1, std::memory_order_relaxed); }
  void unresolvable_node() noexcept { unknown_nodes_.fetch_add(1, std::memory_order_relaxed); }
  void watch_event(bool relist) noexcept { (relist ? relists_ : watch_events_).fetch_add(1, std::memory_order_relaxed); }

  [[nodiscard]] std::string render(const cluster_gauges& g) const {
    std::string out;
    out.reserve(8192);
    out += "# HELP gpusched_extender_requests_total Extender requests answered, by verb and result.\n";
    out += "# TYPE gpusched_extender_requests_total counter\n";
    for (std::size_t v = 0; v < verb_names.size(); ++v) {
      const std::string l = "verb=\"" + std::string(verb_names[v]) + "\"";
      out += "gpusched_extender_requests_total{" + l + ",result=\"ok\"} " + std::to_string(ok_[v].load()) + "\n";
      out += "gpusched_extender_requests_total{" + l + ",result=\"error\"} " + std::to_string(error_[v].load()) + "\n";
    }
    out += "# HELP gpusched_extender_request_duration_seconds Time to answer an extender request, by verb.\n";
    out += "# TYPE gpusched_extender_request_duration_seconds histogram\n";
    for (std::size_t v = 0; v < verb_names.size(); ++v) {
      latency_[v].write(out, "gpusched_extender_request_duration_seconds", "verb=\"" + std::string(verb_names[v]) + "\"");
    }
    out += "# HELP gpusched_extender_node_rejections_total Nodes filtered out, by gpusched's reason.\n";
    out += "# TYPE gpusched_extender_node_rejections_total counter\n";
    for (std::size_t r = 1; r < reason_count; ++r) {
      out += "gpusched_extender_node_rejections_total{reason=\"" + std::string(to_string(static_cast<reason>(r))) + "\"} " +
             std::to_string(rejections_[r].load()) + "\n";
    }
    out += "gpusched_extender_node_rejections_total{reason=\"unknown or untranslatable node\"} " +
           std::to_string(unknown_nodes_.load()) + "\n";
    out += "# HELP gpusched_extender_watch_events_total Node and pod events applied from the API server's watch.\n";
    out += "# TYPE gpusched_extender_watch_events_total counter\n";
    out += "gpusched_extender_watch_events_total " + std::to_string(watch_events_.load()) + "\n";
    out += "# HELP gpusched_extender_relists_total Full lists of nodes and pods (start, 410 Gone, reconnect).\n";
    out += "# TYPE gpusched_extender_relists_total counter\n";
    out += "gpusched_extender_relists_total " + std::to_string(relists_.load()) + "\n";
    auto gauge = [&](const char* name, const char* help, std::int64_t v) {
      out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " gauge\n" + name + " " + std::to_string(v) + "\n";
    };
    gauge("gpusched_cluster_nodes", "Nodes in the extender's state.", static_cast<std::int64_t>(g.nodes));
    gauge("gpusched_cluster_pods_bound", "Pods holding resources in the extender's state.", static_cast<std::int64_t>(g.pods_bound));
    gauge("gpusched_cluster_gpus", "GPU devices in the extender's state.", static_cast<std::int64_t>(g.gpus));
    gauge("gpusched_cluster_gpu_milli_capacity", "GPU share capacity, milli-GPUs (1000 per device).", g.gpu_milli_capacity);
    gauge("gpusched_cluster_gpu_milli_allocated", "GPU share reserved by bound pods, milli-GPUs.", g.gpu_milli_allocated);
    gauge("gpusched_cluster_cpu_milli_capacity", "CPU capacity, milli-cores.", g.cpu_milli_capacity);
    gauge("gpusched_cluster_cpu_milli_allocated", "CPU reserved by bound pods, milli-cores.", g.cpu_milli_allocated);
    return out;
  }

 private:
  static constexpr std::size_t verbs = static_cast<std::size_t>(verb::count_);
  std::array<std::atomic<std::uint64_t>, verbs> ok_{};
  std::array<std::atomic<std::uint64_t>, verbs> error_{};
  std::array<histogram, verbs> latency_{};
  std::array<std::atomic<std::uint64_t>, reason_count> rejections_{};
  std::atomic<std::uint64_t> unknown_nodes_{0};
  std::atomic<std::uint64_t> watch_events_{0};
  std::atomic<std::uint64_t> relists_{0};
};

}  // namespace gpusched::extender
