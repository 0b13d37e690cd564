// A victim frees its pod slot and its named resources in preemption's what-if (node_overlay), and
// pods placed or released in the gang placer's what-if (cluster_overlay) count against `pods`.
//
// Kubernetes' own cases, transcribed: TestPostFilter (kubernetes
// pkg/scheduler/framework/plugins/defaultpreemption/default_preemption_test.go @5def93b), the cases
// whose nodes are onePodRes ({pods: 1}, no CPU, no memory) and whose pods request nothing, so that
// only the pod limit decides. Priorities: lowPriority 0, midPriority 100, highPriority 1000,
// veryHighPriority 10000 upstream; a pod without Priority() has 0. largeRes is 300m / 300; nodeRes
// 200m / 400 (memory: MiB here for bytes upstream; only the fit decision matters).
// Not transcribed: the extender and TestPlugin cases (no extender or failing PreFilter plugin in a
// preemptor), and filteredNodesStatuses (gpusched examines every node; the two cases that rest on
// an UnschedulableAndUnresolvable status are about that input only).
#include <doctest/doctest.h>

#include <climits>
#include <cstdint>
#include <string>
#include <vector>

#include "gpusched/gang/overlay.hpp"
#include "gpusched/preemption/disruption_budget.hpp"
#include "gpusched/preemption/node_overlay.hpp"
#include "preemption/fixtures.hpp"

using namespace gpusched;

namespace {

using fx::low, fx::mid, fx::high, fx::very_high;

// onePodRes: allocatable pods 1, nothing else.
node_index one_pod_node(fx::cluster& c, const std::string& name) {
  node_spec n = testing::gpu_node(name, 0, 0, 0);
  n.pods = 1;
  return c.base().add_node(n);
}

// A pod that requests nothing, bound on n.
void run_empty(fx::cluster& c, const std::string& name, std::int32_t priority, node_index n) {
  fx::run(c, make_pod(name).cpu(0).memory(0).priority(priority), n, 0, 0.0);
}

using fx::all_nodes;

}  // namespace

TEST_CASE("preemption.kubernetes TestPostFilter: pod with higher priority can be made schedulable") {
  fx::cluster c;
  const node_index n1 = one_pod_node(c, "node1");
  run_empty(c, "p1", 0, n1);
  fx::preemptor pre(fx::fit_profile(), all_nodes());
  const preemption_result r = pre.plan(c, make_pod("p").cpu(0).memory(0).priority(high), 10.0);
  REQUIRE(r.found);
  CHECK(r.node == n1);
  CHECK(fx::victim_names(r) == std::vector<std::string>{"p1"});
}

TEST_CASE("preemption.kubernetes TestPostFilter: pod with tied priority is still unschedulable") {
  fx::cluster c;
  run_empty(c, "p1", 0, one_pod_node(c, "node1"));
  fx::preemptor pre(fx::fit_profile(), all_nodes());
  const preemption_result r = pre.plan(c, make_pod("p").cpu(0).memory(0), 10.0);
  CHECK_FALSE(r.found);
  CHECK(r.no_eligible_victims == 1);  // upstream: "1 No preemption victims found for incoming pod."
}

TEST_CASE("preemption.kubernetes TestPostFilter: pod can be made schedulable on one node") {
  fx::cluster c;
  run_empty(c, "p1", high, one_pod_node(c, "node1"));
  const node_index n2 = one_pod_node(c, "node2");
  run_empty(c, "p2", low, n2);
  fx::preemptor pre(fx::fit_profile(), all_nodes());
  const preemption_result r = pre.plan(c, make_pod("p").cpu(0).memory(0).priority(mid), 10.0);
  REQUIRE(r.found);
  CHECK(r.node == n2);
  CHECK(fx::victim_names(r) == std::vector<std::string>{"p2"});
}

TEST_CASE("preemption.kubernetes TestPostFilter: pod can be made schedulable on minHighestPriority node") {
  // node1: p1 (high, budget with MaxInt32 disruptions) and p2 (low, budget minAvailable 100%);
  // node2: p3 (mid, the 100% budget). By hand: on node1 both must go (one pod slot), p2 violating;
  // on node2 p3 goes, violating. One violation each; node2's highest victim (mid) is lower than
  // node1's (high): node2.
  fx::cluster c;
  const node_index n1 = one_pod_node(c, "node1");
  const node_index n2 = one_pod_node(c, "node2");
  run_empty(c, "p1", high, n1);
  run_empty(c, "p2", low, n1);
  run_empty(c, "p3", mid, n2);
  disruption_budgets pdbs;
  pdbs.add("violating-pdb", 0);  // minAvailable 100%: no disruption allowed
  pdbs.add("non-violating-pdb", INT32_MAX);
  pdbs.cover("p1", "non-violating-pdb");
  pdbs.cover("p2", "violating-pdb");
  pdbs.cover("p3", "violating-pdb");
  fx::preemptor pre(fx::fit_profile(), all_nodes());
  const pod p = make_pod("p").cpu(0).memory(0).priority(very_high);
  const preemption_result r = pre.plan(c, p, 10.0, nullptr, &pdbs);
  REQUIRE(r.found);
  CHECK(r.node == n2);
  CHECK(fx::victim_names(r) == std::vector<std::string>{"p3"});
  CHECK(r.cost.violations == 1);
  // Without node2, node1 needs both of its pods gone: the pod slot of each is given back.
  fx::cluster one;
  const node_index m1 = one_pod_node(one, "node1");
  run_empty(one, "p1", high, m1);
  run_empty(one, "p2", low, m1);
  const preemption_result r1 = pre.plan(one, p, 10.0, nullptr, &pdbs);
  REQUIRE(r1.found);
  CHECK(fx::victim_names(r1) == std::vector<std::string>{"p1", "p2"});
  CHECK(r1.cost.violations == 1);
}

TEST_CASE("preemption.kubernetes TestPostFilter: no candidate nodes found with mixed reasons") {
  // node1, node3: onePodRes, each with a high-priority pod (nothing to preempt); node2: nodeRes
  // (200m / 400) with a priority-0 pod; p (high) requests largeRes (300m / 300): even an empty
  // node2 lacks CPU. Upstream: "1 Insufficient cpu, 2 No preemption victims found".
  fx::cluster c;
  run_empty(c, "p1", high, one_pod_node(c, "node1"));
  const node_index n2 = fx::add_node(c, "node2", 0, 200, 400);
  run_empty(c, "p2", 0, n2);
  run_empty(c, "p3", high, one_pod_node(c, "node3"));
  fx::preemptor pre(fx::fit_profile(), all_nodes());
  const preemption_result r = pre.plan(c, make_pod("p").cpu(300).memory(300).priority(high), 10.0);
  CHECK_FALSE(r.found);
  CHECK(r.no_eligible_victims == 2);
  CHECK(r.does_not_fit == 1);
}

TEST_CASE("preemption.node_overlay: a victim gives back its pod slot and named resources") {
  // Node: pods 2, example.com/foo 4. a (foo 3) and b (foo 1) run on it: 2 pods, foo 4 requested.
  fx::cluster c;
  node_spec spec = testing::gpu_node("n", 1000, 1000, 0);
  spec.pods = 2;
  spec.add_scalar("example.com/foo", 4);
  const node_index n = c.base().add_node(spec);
  fx::run(c, make_pod("a").cpu(100).memory(100).scalar("example.com/foo", 3), n, 0, 0.0);
  fx::run(c, make_pod("b").cpu(0).memory(100).scalar("example.com/foo", 1), n, 0, 0.0);
  node_overlay<fx::cluster> o(c);
  o.focus(n);
  const named_resources_state* s = node_named_resources(o, n);
  REQUIRE(s != nullptr);
  CHECK(s->pod_count == 2);
  CHECK(s->too_many_pods());
  const resource_name foo("example.com/foo");
  CHECK(s->find(foo)->requested == 4);
  CHECK(s->zero_cpu_pods == 1);
  const auto pods = bound_traits_of<fx::cluster>::bound_pods(c, n);
  REQUIRE(pods.size() == 2);
  const bound_pod& a = pods[0].key == pod_key("a") ? pods[0] : pods[1];
  const bound_pod& b = pods[0].key == pod_key("a") ? pods[1] : pods[0];
  o.remove(a);
  CHECK(node_named_resources(o, n)->pod_count == 1);
  CHECK_FALSE(node_named_resources(o, n)->too_many_pods());
  CHECK(node_named_resources(o, n)->find(foo)->requested == 1);
  o.remove(b);
  CHECK(node_named_resources(o, n)->pod_count == 0);
  CHECK(node_named_resources(o, n)->find(foo)->requested == 0);
  CHECK(node_named_resources(o, n)->zero_cpu_pods == 0);
  o.add_back(a);
  CHECK(node_named_resources(o, n)->pod_count == 1);
  CHECK(node_named_resources(o, n)->find(foo)->requested == 3);
  // The live record is untouched; refocusing starts from it again.
  CHECK(named_resources_of(c, n)->pod_count == 2);
  CHECK(named_resources_of(c, n)->find(foo)->requested == 4);
  o.focus(n);
  CHECK(node_named_resources(o, n)->pod_count == 2);
}

TEST_CASE("preemption.node_overlay: a node without a record stays without one") {
  fx::cluster c;
  const node_index n = fx::add_node(c, "n", 0, 1000, 1000);
  fx::run(c, make_pod("a").cpu(100).memory(100), n, 0, 0.0);
  node_overlay<fx::cluster> o(c);
  o.focus(n);
  CHECK(node_named_resources(o, n) == nullptr);
  o.remove(bound_traits_of<fx::cluster>::bound_pods(c, n)[0]);
  CHECK(node_named_resources(o, n) == nullptr);
}

TEST_CASE("gang.cluster_overlay: pods reserved and released count against pods and named resources") {
  // Node: pods 1, example.com/foo 2, one pod q (foo 2) bound.
  fx::cluster c;
  node_spec spec = testing::gpu_node("n", 1000, 1000, 0);
  spec.pods = 1;
  spec.add_scalar("example.com/foo", 2);
  const node_index n = c.base().add_node(spec);
  const node_index free_node = fx::add_node(c, "plain", 0, 1000, 1000);
  const pod q = make_pod("q").cpu(100).memory(100).scalar("example.com/foo", 2);
  fx::run(c, q, n, 0, 0.0);
  const resource_name foo("example.com/foo");
  cluster_overlay<fx::cluster> o(c);
  CHECK(node_named_resources(o, n)->pod_count == 1);
  release(o, q, make_binding(q, n, 0));
  CHECK(node_named_resources(o, n)->pod_count == 0);
  CHECK(node_named_resources(o, n)->find(foo)->requested == 0);
  const pod m = make_pod("m").cpu(0).memory(100).scalar("example.com/foo", 1);
  reserve(o, m, make_binding(m, n, 0));
  CHECK(node_named_resources(o, n)->pod_count == 1);
  CHECK(node_named_resources(o, n)->too_many_pods());
  CHECK(node_named_resources(o, n)->find(foo)->requested == 1);
  CHECK(node_named_resources(o, n)->zero_cpu_pods == 1);
  // Releasing more than is held is refused and changes nothing.
  release(o, m, make_binding(m, n, 0));
  CHECK_THROWS_AS(release(o, m, make_binding(m, n, 0)), invalid_argument_error);
  CHECK(node_named_resources(o, n)->pod_count == 0);
  // The live record is untouched; a node without one stays without one; reset forgets.
  CHECK(named_resources_of(c, n)->pod_count == 1);
  reserve(o, make_pod("x").cpu(100).memory(100), make_binding(make_pod("x").cpu(100).memory(100), free_node, 0));
  CHECK(node_named_resources(o, free_node) == nullptr);
  o.reset();
  CHECK(node_named_resources(o, n)->pod_count == 1);
  CHECK(node_named_resources(o, n)->find(foo)->requested == 2);
}
