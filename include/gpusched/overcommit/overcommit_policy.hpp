// Overcommit ceilings: per resource and per QoS class, the most a node may be allocated, as a ratio
// of its capacity in permille (1000 = no overcommit, 1200 = the seed's 120%).
//
// The classes nest: a ceiling applies to the requests of its class and of every more protected
// class (Guaranteed < Burstable < BestEffort), so that
//   G          <= capacity * 1000 / 1000          Guaranteed is never overcommitted
//   G + B      <= capacity * burstable / 1000
//   G + B + BE <= capacity * best_effort / 1000
// hold on every node at all times (G, B, BE: CPU or memory requests bound per class). A pod of class
// q is admitted when every ceiling from q down to BestEffort still holds with its request added.
// GPU memory is per device and is not overcommitted unless allow_gpu_memory_overcommit is set; GPU
// compute share (milli) never is.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>

#include "gpusched/config.hpp"
#include "gpusched/core/bound_pods.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/core/types.hpp"
#include "gpusched/preflight/preflight.hpp"

namespace gpusched {

struct qos_ceiling {
  std::int64_t cpu_permille = 1000;
  std::int64_t memory_permille = 1000;
  std::int64_t gpu_memory_permille = 1000;
  friend bool operator==(const qos_ceiling&, const qos_ceiling&) = default;
};

inline constexpr std::int64_t max_overcommit_permille = 10000;  // 10x: far beyond any sane ceiling

struct overcommit_policy {
  qos_ceiling burstable{};
  qos_ceiling best_effort{};
  bool allow_gpu_memory_overcommit = false;

  // The ceiling in force for a class: Guaranteed is always 1000; GPU memory is 1000 unless allowed.
  [[nodiscard]] constexpr qos_ceiling ceiling(qos_class q) const noexcept {
    qos_ceiling c{};
    if (q == qos_class::burstable) c = burstable;
    if (q == qos_class::best_effort) c = best_effort;
    if (!allow_gpu_memory_overcommit) c.gpu_memory_permille = 1000;
    return c;
  }

  // Throws invalid_argument_error naming the field: every ratio within 1000..10000, and
  // burstable <= best_effort per resource so that the classes nest.
  void validate(const char* prefix = "overcommit") const {
    auto check = [&](std::int64_t v, const char* cls, const char* res) {
      if (v < 1000 || v > max_overcommit_permille) {
        throw invalid_argument_error(std::string(prefix) + "." + cls + "." + res,
                                     "must be within 1000..10000 permille, got " + std::to_string(v));
      }
    };
    for (const auto& [c, name] : {std::pair{&burstable, "burstable"}, std::pair{&best_effort, "best_effort"}}) {
      check(c->cpu_permille, name, "cpu_permille");
      check(c->memory_permille, name, "memory_permille");
      check(c->gpu_memory_permille, name, "gpu_memory_permille");
    }
    auto order = [&](std::int64_t b, std::int64_t be, const char* res) {
      if (b > be) {
        throw invalid_argument_error(std::string(prefix) + ".best_effort." + res,
                                     "must be >= the burstable ceiling (" + std::to_string(b) + ") so that classes nest");
      }
    };
    order(burstable.cpu_permille, best_effort.cpu_permille, "cpu_permille");
    order(burstable.memory_permille, best_effort.memory_permille, "memory_permille");
    order(burstable.gpu_memory_permille, best_effort.gpu_memory_permille, "gpu_memory_permille");
  }
};

// The seed's example: Burstable and BestEffort pods may fill CPU and memory to 120% of capacity.
inline overcommit_policy seed_overcommit_policy() {
  overcommit_policy p;
  p.burstable = qos_ceiling{1200, 1200, 1000};
  p.best_effort = qos_ceiling{1200, 1200, 1000};
  return p;
}

// True when a request of class q fits every nested CPU and memory ceiling of the node.
// `alloc` is the node's per-class allocation; without per-class accounting, pass the node's total
// allocation as if it were all Guaranteed (conservative: every nested sum is then the total).
constexpr bool cpu_within_ceilings(const overcommit_policy& pol, const qos_allocation& alloc, qos_class q, milli request,
                                   milli capacity) noexcept {
  for (int k = static_cast<int>(q); k <= static_cast<int>(qos_class::best_effort); ++k) {
    const auto cls = static_cast<qos_class>(k);
    if (!within_ceiling(alloc.cpu_through(cls), request, capacity, pol.ceiling(cls).cpu_permille)) return false;
  }
  return true;
}
constexpr bool memory_within_ceilings(const overcommit_policy& pol, const qos_allocation& alloc, qos_class q, mib request,
                                      mib capacity) noexcept {
  for (int k = static_cast<int>(q); k <= static_cast<int>(qos_class::best_effort); ++k) {
    const auto cls = static_cast<qos_class>(k);
    if (!within_ceiling(alloc.memory_through(cls), request, capacity, pol.ceiling(cls).memory_permille)) return false;
  }
  return true;
}

// GPU memory on one device: used + want <= total * ratio (ratio 1000 when not overcommitted).
GPUSCHED_HD constexpr bool device_memory_within_ceiling(std::int32_t mem_total_mib, std::int32_t mem_free_mib,
                                                        std::int32_t want_mib, std::int64_t ratio_permille) noexcept {
  return within_ceiling(std::int64_t{mem_total_mib} - mem_free_mib, want_mib, mem_total_mib, ratio_permille);
}

}  // namespace gpusched
