// The scheduling vocabulary: units, QoS classes, tiers.
#pragma once

#include <cstdint>
#include <limits>
#include <string_view>

namespace gpusched {

using node_index = std::uint32_t;  // position of a node in a Cluster, 0..node_count-1
using milli = std::int64_t;        // CPU in milli-cores; GPU share in milli-GPUs (1000 = one GPU)
using mib = std::int64_t;          // memory in MiB

inline constexpr std::int32_t gpu_milli_whole = 1000;  // one whole GPU
inline constexpr int max_gpus_per_node = 64;           // GPU sets are 64-bit masks
// Priorities are Kubernetes' int32 (k8s.io/api/core/v1 PodSpec.Priority, int32): every pod is
// validated against this range (core/pod.hpp). Kubernetes' system-cluster-critical class is
// 2,000,000,000 (pkg/apis/scheduling/types.go, SystemCriticalPriority).
inline constexpr std::int32_t min_priority = std::numeric_limits<std::int32_t>::min();
inline constexpr std::int32_t max_priority = std::numeric_limits<std::int32_t>::max();
// The seed's ModelJob priority band 0..10, kept as a named range for inputs that speak it (scenario
// YAML, the ModelJob mapping below) and as the band the scheduling queue ages (queue/queue_policy.hpp).
inline constexpr std::int32_t seed_min_priority = 0;
inline constexpr std::int32_t seed_max_priority = 10;
// The largest CPU (milli) or memory (MiB) quantity a node, a pod, a binding or a node's running
// allocation may hold: 2^50 keeps products with percentages and permille ratios inside int64.
inline constexpr std::int64_t max_quantity = std::int64_t{1} << 50;

// Kubernetes QoS classes; the openb trace's LS (latency-sensitive) maps to guaranteed and BE to
// best_effort.
enum class qos_class : std::uint8_t { guaranteed, burstable, best_effort };
// Two-tier isolation: prod (serving) and dev (training, experiments).
enum class tier : std::uint8_t { prod, dev };

constexpr std::string_view to_string(qos_class q) noexcept {
  switch (q) {
    case qos_class::guaranteed: return "Guaranteed";
    case qos_class::burstable: return "Burstable";
    case qos_class::best_effort: return "BestEffort";
  }
  return "?";
}
constexpr std::string_view to_string(tier t) noexcept { return t == tier::prod ? "prod" : "dev"; }

}  // namespace gpusched
