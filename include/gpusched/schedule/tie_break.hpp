// How a scheduler chooses among nodes tied at the best score.
//
// Kubernetes picks uniformly at random among the tied nodes (reservoir sampling in selectHost,
// pkg/scheduler/schedule_one.go). `reservoir` does the same with the scheduler's seeded generator,
// so a decision depends on every draw made before it. `hashed` is uniform over the tied nodes as
// well, but stateless: each (seed, pod, node) gets a 64-bit key and the largest key wins, so the
// choice does not depend on the order in which pods or nodes are examined, on threads, or on the
// engine. The batch engines (gpusched/batch/, gpusched/cuda/) always use `hashed`; a scheduler
// given tie_break_rule::hashed decides exactly as they do.
#pragma once

#include <cstdint>
#include <string_view>

#include "gpusched/config.hpp"
#include "gpusched/core/splitmix64.hpp"

namespace gpusched {

enum class tie_break_rule : std::uint8_t {
  reservoir,   // uniformly, with the scheduler's seeded generator (Kubernetes' selectHost)
  hashed,      // uniformly and statelessly, by a (seed, pod, node) key: what the batch engines do
  first_node,  // the first tied node in examination order (node index order when every node is
               // scored): hosts that order their nodes (e.g. by a seeded permutation, as the FGD
               // authors' simulator names them) get a deterministic, order-driven choice
};

// A pod's identity in tie-breaking: FNV-1a (64-bit) of its name, so that it does not depend on the
// pod's position in a queue or batch.
constexpr std::uint64_t pod_tie_key(std::string_view name) noexcept {
  std::uint64_t h = 0xcbf29ce484222325ULL;  // FNV offset basis
  for (char ch : name) {
    h ^= static_cast<unsigned char>(ch);
    h *= 0x100000001b3ULL;  // FNV prime
  }
  return h;
}

// mix64: splitmix64's finaliser (core/splitmix64.hpp).

GPUSCHED_HD constexpr std::uint64_t tie_key(std::uint64_t seed, std::uint64_t pod_key, std::uint32_t node) noexcept {
  return mix64(seed ^ mix64(pod_key + 0x9E3779B97F4A7C15ULL * (std::uint64_t{node} + 1)));
}

// The order of candidates under `hashed`: higher score first, then larger key, then lower index.
GPUSCHED_HD constexpr bool ranks_before(std::int64_t score_a, std::uint64_t key_a, std::uint32_t node_a,
                                        std::int64_t score_b, std::uint64_t key_b, std::uint32_t node_b) noexcept {
  if (score_a != score_b) return score_a > score_b;
  if (key_a != key_b) return key_a > key_b;
  return node_a < node_b;
}

}  // namespace gpusched
