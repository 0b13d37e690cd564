// Co-location slowdown: gpu-let's pairwise linear interference model, and gpusched's extension of it
// to more than two tenants on one GPU. Formulas and sources: docs/serving.md.
#pragma once

#include <algorithm>
#include <span>

#include "gpusched/config.hpp"
#include "gpusched/sim/serving/profile_table.hpp"

namespace gpusched::sim::serving {

// A tenant's pressure on the shared memory system: its solo L2 and DRAM utilisation (fractions of
// the whole GPU) scaled by its partition share, as gpu-let does (interference_model.cpp:
// my_l2_util * my_partition / 100).
struct tenant_util {
  double l2 = 0.0;
  double dram = 0.0;
};

GPUSCHED_HD tenant_util scaled_util(double l2, double dram, double share) {
  return tenant_util{l2 * share, dram * share};
}

// Slowdown of `self` next to one `other` (gpu-let, Choi et al. ATC'22 §4.3):
//   alpha = c0*l2_self + c1*l2_other + c2*dram_self + c3*dram_other + c4, clamped to >= 1
// (a neighbour never speeds a model up; gpu-let's fitted c4 < 1 would otherwise give alpha < 1 for
// light pairs).
GPUSCHED_HD double pairwise_slowdown(const interference_constants& c, tenant_util self, tenant_util other) {
  const double a =
      c.l2_self * self.l2 + c.l2_other * other.l2 + c.dram_self * self.dram + c.dram_other * other.dram + c.constant;
  return a > 1.0 ? a : 1.0;
}

// gpusched's assumption for n >= 2 neighbours (gpu-let models pairs only): the excess slowdowns add,
//   alpha = 1 + sum_k (alpha_pair(self, other_k) - 1).
// With one neighbour this is exactly gpu-let's pair; with none it is 1. It treats each neighbour's
// extra memory traffic as independent, which overestimates when the memory system saturates and is
// the simplest rule that reduces to the published pair model.
inline double multi_tenant_slowdown(const interference_constants& c, tenant_util self,
                                    std::span<const tenant_util> others) {
  double excess = 0.0;
  for (const auto& o : others) excess += pairwise_slowdown(c, self, o) - 1.0;
  return 1.0 + excess;
}

}  // namespace gpusched::sim::serving
