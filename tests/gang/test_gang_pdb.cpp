// PodDisruptionBudgets when a gang preempts: violating candidates are reprieved first and counted.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "gpusched/core/bound_cluster.hpp"
#include "gpusched/gang/gang_pods.hpp"
#include "gpusched/gang/gang_preemption.hpp"
#include "gpusched/preemption/disruption_budget.hpp"
#include "gpusched/preflight/gpu_check.hpp"
#include "gpusched/preflight/resource_fit.hpp"
#include "gpusched/profile/static_profile.hpp"
#include "support/builders.hpp"
#include "support/fit_profile.hpp"

using namespace gpusched;

namespace {
using cluster = bound_cluster<>;
using gpre = gang_preemptor<cluster, decltype(testing::gpu_first_profile())>;
using testing::gpu_pod;
}  // namespace

TEST_CASE("gang.preemption.PDB: a covered victim with no disruption left is reprieved first") {
  // Two 8-GPU nodes: v0 (prio 1) fills node 0, v1 (prio 2) fills node 1; a 1 x 8-GPU gang of prio 5.
  // Without budgets v0 (lower priority) is the victim. With v0's budget exhausted, v0 is added back
  // first and fits, so v1 is the victim, with no violation.
  cluster c;
  for (int i = 0; i < 2; ++i) c.base().add_node(testing::gpu_node("n" + std::to_string(i), 64000, 262144, 8));
  c.bind(gpu_pod("v0", 1, 8), make_binding(gpu_pod("v0", 1, 8), 0, 0xFF), 0.0);
  c.bind(gpu_pod("v1", 2, 8), make_binding(gpu_pod("v1", 2, 8), 1, 0xFF), 0.0);
  const gang_spec g = make_gang("t").priority(5).role("w", make_pod("w").cpu(1000).memory(1024).gpus(8), 1);
  gpre pre(testing::gpu_first_profile());
  const gang_preemption_result plain = pre.plan(c, g, 10.0);
  REQUIRE(plain.found);
  REQUIRE(plain.victims.size() == 1);
  CHECK(plain.victims[0].spec.name == "v0");

  disruption_budgets pdbs;
  pdbs.add("v0-pdb", 0);
  pdbs.cover("v0", "v0-pdb");
  const gang_preemption_result r = pre.plan(c, g, 10.0, nullptr, {}, &pdbs);
  REQUIRE(r.found);
  REQUIRE(r.victims.size() == 1);
  CHECK(r.victims[0].spec.name == "v1");
  CHECK(r.cost.violations == 0);

  // Both covered and exhausted: a violation is unavoidable and counted on the victim.
  pdbs.add("v1-pdb", 0);
  pdbs.cover("v1", "v1-pdb");
  const gang_preemption_result both = pre.plan(c, g, 10.0, nullptr, {}, &pdbs);
  REQUIRE(both.found);
  REQUIRE(both.victims.size() == 1);
  CHECK(both.victims[0].violating);
  CHECK(both.cost.violations == 1);
}
