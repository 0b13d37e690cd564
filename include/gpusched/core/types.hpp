// The scheduling vocabulary: units, QoS classes, tiers.
#pragma once

#include <cstdint>
#include <string_view>

namespace gpusched {

using node_index = std::uint32_t;  // position of a node in a Cluster, 0..node_count-1
using milli = std::int64_t;        // CPU in milli-cores; GPU share in milli-GPUs (1000 = one GPU)
using mib = std::int64_t;          // memory in MiB

inline constexpr std::int32_t gpu_milli_whole = 1000;  // one whole GPU
inline constexpr int max_gpus_per_node = 64;           // GPU sets are 64-bit masks
// The priority range every pod is validated against (core/pod.hpp); one place to widen it.
inline constexpr int min_priority = 0;
inline constexpr int max_priority = 10;
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
