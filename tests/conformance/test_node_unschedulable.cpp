// NodeUnschedulable, transcribed from kubernetes
// pkg/scheduler/framework/plugins/nodeunschedulable/node_unschedulable_test.go at commit
// b574b11f6b28f06e17333bb110e9374db3259bad: TestNodeUnschedulable, every case (ErrReasonUnschedulable
// is "node(s) were unschedulable"). Not transcribed: TestIsSchedulableAfterNodeChange (queueing
// hints; gpusched's queue has no per-plugin event hints).
#include <doctest/doctest.h>

#include "conformance/constraint_table.hpp"
#include "gpusched/preflight/node_constraint_checks.hpp"

using namespace gpusched;
using namespace conformance;

TEST_CASE("conformance.node_unschedulable: TestNodeUnschedulable") {
  const unschedulable_check f;
  const auto c = nodes_with({{"cordoned", {{}, {}, true}}, {"normal", {{}, {}, false}}});
  SUBCASE("Does not schedule pod to unschedulable node (node.Spec.Unschedulable==true)") {
    const auto p = pod_with({});
    CHECK(f.check(c, p, 0) == reason::node_unschedulable);
    CHECK(f.explain(c, p, 0).to_string() == "node(s) were unschedulable");
  }
  SUBCASE("Schedule pod to normal node") { CHECK(f.check(c, pod_with({}), 1) == reason::ok); }
  SUBCASE("Schedule pod with toleration to unschedulable node (node.Spec.Unschedulable==true)") {
    // Key node.kubernetes.io/unschedulable, no operator (Equal), no value, effect NoSchedule.
    const auto p = pod_with({{tol_equal("node.kubernetes.io/unschedulable", "", taint_effect::no_schedule)}, {}, {}, {}});
    CHECK(f.check(c, p, 0) == reason::ok);
  }
}
