// The vocabulary of the serving engine: services, replicas, GPUs, notifications.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/core/error.hpp"
#include "gpusched/core/types.hpp"
#include "gpusched/sim/serving/latency_model.hpp"

namespace gpusched::sim::serving {

using service_id = std::uint32_t;
using replica_id = std::uint32_t;
using gpu_slot = std::uint32_t;     // dense index of a GPU over all nodes, in add_node order
using external_id = std::uint32_t;  // a non-serving tenant of a GPU (a training worker)
inline constexpr gpu_slot no_gpu = std::numeric_limits<gpu_slot>::max();
inline constexpr replica_id no_replica = std::numeric_limits<replica_id>::max();
inline constexpr double no_timeout = std::numeric_limits<double>::infinity();

// Which ready replica an arriving request goes to.
enum class routing_policy : std::uint8_t {
  round_robin,        // kube-proxy IPVS "rr", Envoy ROUND_ROBIN
  least_outstanding,  // fewest queued + running requests (Envoy LEAST_REQUEST with all choices); ties: lowest id
};

inline routing_policy parse_routing_policy(std::string_view s, const std::string& field) {
  if (s == "round_robin") return routing_policy::round_robin;
  if (s == "least_outstanding") return routing_policy::least_outstanding;
  throw invalid_argument_error(
      field, "unknown routing policy '" + std::string(s) + "' (expected round_robin or least_outstanding)");
}

// An inference service. Batching follows Triton's dynamic batcher (max_batch_size and
// max_queue_delay_microseconds, docs "Dynamic Batcher"): an idle replica starts a batch as soon as
// max_batch requests wait or the oldest has waited max_wait_s.
struct service_spec {
  std::string name;
  model_id model = 0;
  int max_batch = 1;
  double max_wait_s = 0.0;
  double slo_s = 0.2;
  double timeout_s = no_timeout;        // a request that waited longer when its batch forms is dropped
  std::int32_t gpu_share_milli = 1000;  // the replica's partition of its GPU (1000 = whole GPU)
  std::int32_t gpu_memory_mib = 0;      // memory of one replica on its GPU
  routing_policy routing = routing_policy::round_robin;
};

enum class replica_state : std::uint8_t {
  unplaced,  // created, waiting for a GPU (the cluster simulator places it)
  starting,  // placed, loading the model (engine_options::startup_s)
  ready,     // serving
  crashed,   // out of GPU memory; restarts after engine_options::restart_delay_s when auto_restart
  removed,   // taken off its GPU by the cluster simulator (eviction, preemption, scale-down)
};

constexpr std::string_view to_string(replica_state s) noexcept {
  switch (s) {
    case replica_state::unplaced:
      return "unplaced";
    case replica_state::starting:
      return "starting";
    case replica_state::ready:
      return "ready";
    case replica_state::crashed:
      return "crashed";
    case replica_state::removed:
      return "removed";
  }
  return "?";
}

// What the engine tells the cluster simulator (drained with serving_engine::take_notifications).
struct notification {
  enum class kind : std::uint8_t {
    replica_ready,  // finished starting (or restarting) and now takes requests
    replica_oom,    // crashed: its GPU ran out of memory (requests in it failed)
    leak_started,   // a scheduled leak began on a live replica
    leak_skipped,   // a scheduled leak found its replica not running
  };
  double time = 0.0;
  kind what = kind::replica_ready;
  replica_id replica = 0;
  gpu_slot gpu = no_gpu;
};

struct engine_options {
  double startup_s = 0.0;         // placement -> ready (model load)
  double restart_delay_s = 10.0;  // OOM crash -> restarted on the same GPU (kubelet's first back-off is 10 s)
  bool auto_restart = true;       // restart crashed replicas in place; off: the cluster simulator decides
  bool keep_samples = false;      // keep every latency (exact quantiles; memory grows with requests)
};

// A FIFO of request arrival times that keeps its storage: after warm-up it never allocates.
class time_fifo {
 public:
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
  [[nodiscard]] double front() const noexcept { return buf_[head_]; }
  void push(double t) {
    if (size_ == buf_.size()) grow();
    buf_[(head_ + size_) & (buf_.size() - 1)] = t;
    ++size_;
  }
  double pop() noexcept {
    const double t = buf_[head_];
    head_ = (head_ + 1) & (buf_.size() - 1);
    --size_;
    return t;
  }
  void clear() noexcept {
    head_ = 0;
    size_ = 0;
  }

 private:
  void grow() {
    std::vector<double> n(buf_.empty() ? 16 : buf_.size() * 2);  // power of two: index by mask
    for (std::size_t i = 0; i < size_; ++i) n[i] = buf_[(head_ + i) & (buf_.size() - 1)];
    buf_.swap(n);
    head_ = 0;
  }
  std::vector<double> buf_;
  std::size_t head_ = 0;
  std::size_t size_ = 0;
};

}  // namespace gpusched::sim::serving
