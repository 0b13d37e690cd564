// usage_overcommit: admit beyond the static ceilings only while measured usage stays under an SLA
// guard (the seed's second open question).
//
// A pod passes when overcommit_fit{static_policy} passes. Otherwise a Burstable or BestEffort pod
// may still land, on CPU and memory only, when both hold:
//   1. the nested hard ceilings of `hard_policy` hold with its request added (no node ever goes
//      beyond them, whatever the measurements say), and
//   2. for CPU and memory, the estimated usage after placing it stays under the guard:
//        used_fraction * capacity + assigned_since_reading + request <= guard * capacity
//      i.e. Koordinator's estimate (measured node usage plus the requests assigned since the
//      reading, plus the incoming pod's estimate; koordinator pkg/scheduler/plugins/loadaware/
//      load_aware.go, GetEstimatedUsed) with the request as the pod's estimate.
// Guaranteed pods never use the usage mode, nodes without a reading fall back to the static
// ceilings, and GPU memory and share are never admitted on usage.
#pragma once

#include <cmath>
#include <string>
#include <string_view>

#include "gpusched/core/cluster.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/overcommit/overcommit_fit.hpp"
#include "gpusched/overcommit/overcommit_policy.hpp"

namespace gpusched {

struct sla_guard {
  double cpu = 0.70;     // estimated CPU usage must stay at or under 70% of capacity
  double memory = 0.80;  // and memory at or under 80%
};

struct usage_overcommit {
  overcommit_policy static_policy{};  // always admitted within these
  overcommit_policy hard_policy{};    // never exceeded, even when usage is low
  sla_guard guard{};
  static constexpr bool fits_cpu_memory = true;  // decides CPU and memory: replaces the default resource_fit

  [[nodiscard]] static constexpr std::string_view name() noexcept { return "UsageOvercommit"; }

  // Throws invalid_argument_error naming the field: both policies valid, every hard ceiling at
  // least its static one, guards finite within (0, 1].
  void validate() const {
    static_policy.validate("usage_overcommit.static_policy");
    hard_policy.validate("usage_overcommit.hard_policy");
    auto at_least = [](std::int64_t hard, std::int64_t stat, const char* field) {
      if (hard < stat) throw invalid_argument_error(field, "must be >= the static ceiling " + std::to_string(stat));
    };
    at_least(hard_policy.burstable.cpu_permille, static_policy.burstable.cpu_permille, "usage_overcommit.hard_policy.burstable.cpu_permille");
    at_least(hard_policy.burstable.memory_permille, static_policy.burstable.memory_permille, "usage_overcommit.hard_policy.burstable.memory_permille");
    at_least(hard_policy.best_effort.cpu_permille, static_policy.best_effort.cpu_permille, "usage_overcommit.hard_policy.best_effort.cpu_permille");
    at_least(hard_policy.best_effort.memory_permille, static_policy.best_effort.memory_permille, "usage_overcommit.hard_policy.best_effort.memory_permille");
    auto fraction = [](double v, const char* field) {
      if (!std::isfinite(v) || v <= 0.0 || v > 1.0) throw invalid_argument_error(field, "must be a finite fraction within (0, 1]");
    };
    fraction(guard.cpu, "usage_overcommit.guard.cpu");
    fraction(guard.memory, "usage_overcommit.guard.memory");
  }

  template <Cluster C>
  [[nodiscard]] reason check(const C& c, const pod& p, node_index n) const {
    const reason r = overcommit_fit{static_policy}.check(c, p, n);
    if (r == reason::ok || p.qos == qos_class::guaranteed) return r;
    if (r != reason::insufficient_cpu && r != reason::insufficient_memory) return r;
    if constexpr (MeasuredLoad<C>) {
      const node_metrics* m = traits_of<C>::node_load(c, n);
      if (m == nullptr) return r;
      const node_state s = traits_of<C>::node_resources(c, n);
      const qos_allocation a = qos_allocation_of(c, n);
      if (!cpu_within_ceilings(hard_policy, a, p.qos, p.cpu_milli, s.cpu_capacity)) return reason::insufficient_cpu;
      if (!memory_within_ceilings(hard_policy, a, p.qos, p.memory_mib, s.mem_capacity)) return reason::insufficient_memory;
      const double cpu_cap = static_cast<double>(s.cpu_capacity);
      const double mem_cap = static_cast<double>(s.mem_capacity);
      const double cpu_est = m->cpu_used * cpu_cap + static_cast<double>(m->assigned_cpu_since + p.cpu_milli);
      const double mem_est = m->mem_used * mem_cap + static_cast<double>(m->assigned_mem_since + p.memory_mib);
      if (cpu_est > guard.cpu * cpu_cap) return reason::cpu_load_too_high;
      if (mem_est > guard.memory * mem_cap) return reason::memory_load_too_high;
      // The GPU part must still hold under the static policy (usage never admits GPU memory).
      return gpu_fit_with_ceiling(c, p, n, static_policy.ceiling(p.qos).gpu_memory_permille);
    } else {
      return r;
    }
  }
};

}  // namespace gpusched
