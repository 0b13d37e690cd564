// The seed's world (issue 17): CPU as it is used, not as it is requested. Under contention the
// Linux CFS scheduler divides a node's CPU among containers in proportion to their cpu.shares,
// which the kubelet derives from the CPU *request*; a container never gets more than its demand
// or its limit (CFS quota). Sources: docs/experiment-world.md, "CPU".
#pragma once

#include <algorithm>
#include <cstddef>
#include <limits>
#include <span>

#include "gpusched/core/error.hpp"

namespace gpusched::sim::world {

// One container's CPU on a node: what it would use uncontended (the world), what it requested and
// its limit (the scheduler's view; limit 0 = none).
struct cpu_claim {
  double demand_milli = 0.0;
  double request_milli = 0.0;
  double limit_milli = 0.0;
};

// cpu.shares from a request (kubelet pkg/kubelet/cm/helpers_linux.go MilliCPUToShares:
// shares = milli * 1024 / 1000, at least MinShares = 2).
inline double cpu_shares(double request_milli) noexcept { return std::max(2.0, request_milli * 1024.0 / 1000.0); }

// Weighted max-min fair division of `capacity_milli` (CFS with cpu.shares as weights): each
// container gets min(cap_i, lambda * w_i), cap_i = min(demand, limit), with lambda the largest level
// at which the total fits. `out[i]` receives container i's CPU (milli). O(n^2), allocation-free.
inline void cpu_allocation(double capacity_milli, std::span<const cpu_claim> claims, std::span<double> out) {
  if (out.size() < claims.size()) throw invalid_argument_error("out", "shorter than claims");
  if (!(capacity_milli >= 0.0)) throw invalid_argument_error("capacity_milli", "must be >= 0");
  constexpr double unset = -1.0;
  double remaining = capacity_milli;
  double weight_left = 0.0;
  for (std::size_t i = 0; i < claims.size(); ++i) {
    if (claims[i].demand_milli < 0.0) throw invalid_argument_error("demand_milli", "must be >= 0");
    out[i] = unset;
    weight_left += cpu_shares(claims[i].request_milli);
  }
  auto cap = [](const cpu_claim& c) {
    return c.limit_milli > 0.0 ? std::min(c.demand_milli, c.limit_milli) : c.demand_milli;
  };
  // Each pass settles every container whose cap is below the current fair level; at most n passes.
  for (std::size_t pass = 0; pass <= claims.size(); ++pass) {
    if (weight_left <= 0.0) break;
    const double level = remaining / weight_left;
    bool settled = false;
    for (std::size_t i = 0; i < claims.size(); ++i) {
      if (out[i] != unset) continue;
      const double w = cpu_shares(claims[i].request_milli);
      if (cap(claims[i]) <= level * w) {
        out[i] = cap(claims[i]);
        remaining -= out[i];
        weight_left -= w;
        settled = true;
      }
    }
    if (!settled) {
      for (std::size_t i = 0; i < claims.size(); ++i) {
        if (out[i] == unset) out[i] = level * cpu_shares(claims[i].request_milli);
      }
      return;
    }
  }
}

// The slowdown of a CPU-bound stage (preprocessing, a data loader) that gets `allocated` of the
// `demand` it would use: demand / allocated (1 when it gets all; +infinity when it gets none).
inline double cpu_slowdown(double demand_milli, double allocated_milli) noexcept {
  if (demand_milli <= 0.0) return 1.0;
  if (allocated_milli <= 0.0) return std::numeric_limits<double>::infinity();
  return std::max(1.0, demand_milli / allocated_milli);
}

}  // namespace gpusched::sim::world
