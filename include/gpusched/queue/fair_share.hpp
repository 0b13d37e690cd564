// Weighted dominant resource fairness between tenants.
//
// A tenant's share is the largest fraction it holds of any cluster resource, divided by its
// weight:
//   share(t) = max over r in {CPU, memory, GPU} with total_r > 0 of used_r(t) / total_r, / weight(t)
// The largest-fraction rule is Volcano's (volcano pkg/scheduler/plugins/drf/drf.go, calculateShare);
// dividing by the weight is Kueue's (kueue pkg/cache/fair_sharing.go, dominantResourceShare:
// dws := drs * 1000 / fairWeight). Among tenants, the lowest share goes first.
#pragma once

#include <cstdint>

#include "gpusched/core/pod.hpp"
#include "gpusched/core/types.hpp"

namespace gpusched {

struct resource_amount {
  milli cpu = 0;
  mib memory = 0;
  milli gpu_milli = 0;  // GPUs in milli (1000 = one GPU)

  resource_amount& operator+=(const resource_amount& o) noexcept {
    cpu += o.cpu;
    memory += o.memory;
    gpu_milli += o.gpu_milli;
    return *this;
  }
  friend bool operator==(const resource_amount&, const resource_amount&) = default;
};

inline resource_amount request_of(const pod& p) noexcept { return {p.cpu_milli, p.memory_mib, p.gpu_milli_total()}; }

constexpr double dominant_share(const resource_amount& used, const resource_amount& total, double weight) noexcept {
  double s = 0.0;
  auto take = [&](std::int64_t u, std::int64_t t) {
    if (t > 0) {
      const double f = static_cast<double>(u) / static_cast<double>(t);
      if (f > s) s = f;
    }
  };
  take(used.cpu, total.cpu);
  take(used.memory, total.memory);
  take(used.gpu_milli, total.gpu_milli);
  return s / weight;
}

}  // namespace gpusched
