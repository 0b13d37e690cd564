// Kubernetes' own preemption tables, transcribed: TestSelectBestCandidate (kubernetes
// pkg/scheduler/framework/plugins/defaultpreemption/default_preemption_test.go @008b365), plus
// PodDisruptionBudget cases worked out by hand from filterPodsWithPDBViolation and
// pickOneNodeForPreemption, and int32 priorities whose sum would overflow 32 bits.
//
// Units: upstream requests are CPU milli-cores and memory bytes (smallRes 100m/100, mediumRes
// 200m/200, largeRes 300m/300, veryLargeRes 500m/500, every node veryLargeRes); here memory is
// MiB with the same numbers, which keeps every fit decision (only ratios matter). Start times
// epochTime..epochTime6 are 0..6 ns upstream, 0..6 s here (only their order matters).
//
// All TestSelectBestCandidate cases are expressible. TestPostFilter's cases on onePodRes nodes
// (pods=1) are in test_post_filter_pods.cpp. Not transcribed: TestSelectNodesForPreemption's
// "preemption looks past numCandidates until a non-PDB violating node is found" (its expectation is
// the candidate list of Go's seeded rand offset and the filter-call count, which gpusched's
// sampling does not reproduce).
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "gpusched/preemption/disruption_budget.hpp"
#include "preemption/fixtures.hpp"

using namespace gpusched;

namespace {

using fx::neg, fx::low, fx::mid, fx::high, fx::very_high;  // upstream's priorities
constexpr milli small = 100, medium = 200, large = 300, very_large = 500;

struct bound_spec {
  const char* name;
  int node;  // 1-based, as node1..node4
  std::int32_t priority;
  milli req;
  double start;
};
struct best_candidate_case {
  const char* name;
  int nodes;
  std::int32_t priority;
  milli req;
  std::vector<bound_spec> pods;
  std::vector<int> expected;  // any of these (1-based)
};

pod req_pod(const std::string& name, std::int32_t priority, milli req) {
  return make_pod(name).cpu(req).memory(req).priority(priority);
}

fx::cluster cluster_of(int nodes, const std::vector<bound_spec>& pods) {
  fx::cluster c;
  for (int i = 1; i <= nodes; ++i) fx::add_node(c, "node" + std::to_string(i), 0, very_large, very_large);
  for (const auto& b : pods) fx::run(c, req_pod(b.name, b.priority, b.req), static_cast<node_index>(b.node - 1), 0, b.start);
  return c;
}

using fx::all_nodes;

}  // namespace

TEST_CASE("preemption.kubernetes TestSelectBestCandidate") {
  const std::vector<best_candidate_case> cases{
      {"a pod that fits on both nodes when lower priority pods are preempted", 2, high, large,
       {{"p1", 1, mid, large, 0}, {"p2", 2, mid, large, 0}},
       {1, 2}},
      {"node with min highest priority pod is picked", 3, high, very_large,
       {{"p1.1", 1, mid, medium, 0}, {"p1.2", 1, mid, large, 0}, {"p2.1", 2, mid, medium, 0}, {"p2.2", 2, low, medium, 0},
        {"p3.1", 3, low, medium, 0}, {"p3.2", 3, low, medium, 0}},
       {3}},
      {"when highest priorities are the same, minimum sum of priorities is picked", 3, high, very_large,
       {{"p1.1", 1, mid, medium, 0}, {"p1.2", 1, mid, large, 0}, {"p2.1", 2, mid, large, 0}, {"p2.2", 2, low, medium, 0},
        {"p3.1", 3, mid, medium, 0}, {"p3.2", 3, mid, medium, 0}},
       {2}},
      {"when highest priority and sum are the same, minimum number of pods is picked", 3, high, very_large,
       {{"p1.1", 1, mid, small, 0}, {"p1.2", 1, neg, small, 0}, {"p1.3", 1, mid, small, 0}, {"p1.4", 1, neg, small, 0},
        {"p2.1", 2, mid, large, 0}, {"p2.2", 2, neg, medium, 0}, {"p3.1", 3, mid, medium, 0}, {"p3.2", 3, neg, small, 0},
        {"p3.3", 3, low, small, 0}},
       {2}},
      {"sum of adjusted priorities is considered", 3, high, very_large,
       {{"p1.1", 1, mid, small, 0}, {"p1.2", 1, neg, small, 0}, {"p1.3", 1, neg, small, 0}, {"p2.1", 2, mid, large, 0},
        {"p2.2", 2, neg, medium, 0}, {"p3.1", 3, mid, medium, 0}, {"p3.2", 3, neg, small, 0}, {"p3.3", 3, low, small, 0}},
       {2}},
      {"non-overlapping lowest high priority, sum priorities, and number of pods", 4, very_high, very_large,
       {{"p1.1", 1, mid, small, 0}, {"p1.2", 1, low, small, 0}, {"p1.3", 1, low, small, 0}, {"p2.1", 2, high, large, 0},
        {"p3.1", 3, mid, medium, 0}, {"p3.2", 3, low, small, 0}, {"p3.3", 3, low, small, 0}, {"p3.4", 3, low, medium, 0},
        {"p4.1", 4, mid, medium, 0}, {"p4.2", 4, mid, small, 0}, {"p4.3", 4, mid, small, 0}, {"p4.4", 4, neg, small, 0}},
       {1}},
      {"same priority, same number of victims, different start time for each node's pod", 3, high, very_large,
       {{"p1.1", 1, mid, medium, 2}, {"p1.2", 1, mid, medium, 2}, {"p2.1", 2, mid, medium, 3}, {"p2.2", 2, mid, medium, 3},
        {"p3.1", 3, mid, medium, 1}, {"p3.2", 3, mid, medium, 1}},
       {2}},
      {"same priority, same number of victims, different start time for all pods", 3, high, very_large,
       {{"p1.1", 1, mid, medium, 4}, {"p1.2", 1, mid, medium, 2}, {"p2.1", 2, mid, medium, 5}, {"p2.2", 2, mid, medium, 1},
        {"p3.1", 3, mid, medium, 3}, {"p3.2", 3, mid, medium, 6}},
       {3}},
      {"different priority, same number of victims, different start time for all pods", 3, high, very_large,
       {{"p1.1", 1, low, medium, 4}, {"p1.2", 1, mid, medium, 2}, {"p2.1", 2, mid, medium, 6}, {"p2.2", 2, low, medium, 1},
        {"p3.1", 3, low, medium, 3}, {"p3.2", 3, mid, medium, 5}},
       {2}},
  };
  for (const auto& tc : cases) {
    CAPTURE(std::string(tc.name));
    // Every candidate offset: the answer must be one of the expected nodes whichever node is examined first.
    for (std::uint64_t seed = 0; seed < 8; ++seed) {
      CAPTURE(seed);
      const fx::cluster c = cluster_of(tc.nodes, tc.pods);
      preemption_options o;
      o.seed = seed;
      fx::preemptor pre(fx::fit_profile(), o);
      const preemption_result r = pre.plan(c, req_pod("p", tc.priority, tc.req), 10.0);
      REQUIRE(r.found);
      const int got = static_cast<int>(r.node) + 1;
      bool ok = false;
      for (int e : tc.expected) ok = ok || e == got;
      CHECK_MESSAGE(ok, "picked node" << got);
    }
  }
}

TEST_CASE("preemption.int32 priorities: the priority-sum tie-break does not overflow") {
  // Both nodes: highest victim priority 2,000,000,000, two victims. node1's victims sum to
  // 2 * (2e9 + 2^31) = 8,294,967,296; node2's to (2e9 + 2^31) + (1.9e9 + 2^31) = 8,194,967,296:
  // node2 (in int32 both sums would have wrapped).
  const fx::cluster c = cluster_of(2, {{"a1", 1, 2'000'000'000, medium, 0},
                                       {"a2", 1, 2'000'000'000, medium, 0},
                                       {"b1", 2, 2'000'000'000, medium, 0},
                                       {"b2", 2, 1'900'000'000, medium, 0}});
  fx::preemptor pre(fx::fit_profile(), all_nodes());
  const preemption_result r = pre.plan(c, req_pod("p", max_priority, very_large), 10.0);
  REQUIRE(r.found);
  CHECK(r.node == 1);
  CHECK(r.cost.highest_priority == 2'000'000'000);
  CHECK(r.cost.priority_sum == 8'194'967'296LL);
  // A preemptor at min_priority can preempt nothing.
  CHECK_FALSE(pre.plan(c, req_pod("q", min_priority, very_large), 10.0).found);
  // Victims of negative priority still report theirs as the highest (not a sentinel).
  const fx::cluster n = cluster_of(1, {{"v", 1, -2'000'000'000, very_large, 0}});
  const preemption_result rn = pre.plan(n, req_pod("p", -5, very_large), 10.0);
  REQUIRE(rn.found);
  CHECK(rn.cost.highest_priority == -2'000'000'000);
}

TEST_CASE("preemption.PDB: NumPDBViolations leads the node cascade") {
  // node1: v1 (low) covered by a budget with no disruption left; node2: v2 (mid), no budget.
  // Without budgets node1 wins on the lowest highest priority; with them node2 has 0 violations.
  const fx::cluster c = cluster_of(2, {{"v1", 1, low, very_large, 0}, {"v2", 2, mid, very_large, 0}});
  fx::preemptor pre(fx::fit_profile(), all_nodes());
  const pod p = req_pod("p", high, very_large);
  CHECK(pre.plan(c, p, 10.0).node == 0);
  disruption_budgets pdbs;
  pdbs.add("db", 0);
  pdbs.cover("v1", "db");
  const preemption_result r = pre.plan(c, p, 10.0, nullptr, &pdbs);
  REQUIRE(r.found);
  CHECK(r.node == 1);
  CHECK(r.cost.violations == 0);
  // Only violating nodes: the violation is counted and reported.
  const fx::cluster one = cluster_of(1, {{"v1", 1, low, very_large, 0}});
  const preemption_result r1 = pre.plan(one, p, 10.0, nullptr, &pdbs);
  REQUIRE(r1.found);
  CHECK(r1.cost.violations == 1);
  REQUIRE(r1.victims.size() == 1);
  CHECK(r1.victims[0].violating);
  CHECK(r1.explain().find("1 budget violation(s)") != std::string::npos);
}

TEST_CASE("preemption.PDB: violating victims are reprieved first") {
  // One node (500): a (prio 10, budget exhausted) and b (prio 20), 200 each; p needs 300. With
  // both gone 500 are free; reprieve adds back one of them (300 left), not both.
  const fx::cluster c = cluster_of(1, {{"a", 1, 10, medium, 0}, {"b", 1, 20, medium, 0}});
  fx::preemptor pre(fx::fit_profile(), all_nodes());
  const pod p = req_pod("p", high, large);
  // No budget: b, the more important, is reprieved; a is the victim.
  CHECK(fx::victim_names(pre.plan(c, p, 10.0)) == std::vector<std::string>{"a"});
  disruption_budgets pdbs;
  pdbs.add("a-pdb", 0);
  pdbs.cover("a", "a-pdb");
  const preemption_result r = pre.plan(c, p, 10.0, nullptr, &pdbs);
  CHECK(fx::victim_names(r) == std::vector<std::string>{"b"});  // a, violating, reprieved first
  CHECK(r.cost.violations == 0);
}

TEST_CASE("preemption.PDB: allowances are taken most important first, one per victim") {
  // Both a (prio 20) and b (prio 10) are covered by one budget allowing 1 disruption, and p needs
  // the whole node. Most important first: a takes the allowance (1 -> 0), b then violates.
  const fx::cluster c = cluster_of(1, {{"a", 1, 20, medium, 0}, {"b", 1, 10, medium, 0}});
  fx::preemptor pre(fx::fit_profile(), all_nodes());
  disruption_budgets pdbs;
  pdbs.add("ab", 1);
  pdbs.cover("a", "ab");
  pdbs.cover("b", "ab");
  const preemption_result r = pre.plan(c, req_pod("p", high, very_large), 10.0, nullptr, &pdbs);
  REQUIRE(r.found);
  REQUIRE(r.victims.size() == 2);
  CHECK(r.victims[0].spec.name == "a");
  CHECK_FALSE(r.victims[0].violating);
  CHECK(r.victims[1].spec.name == "b");
  CHECK(r.victims[1].violating);
  CHECK(r.cost.violations == 1);
  // A second budget with room does not help b: the exhausted one decides.
  pdbs.add("roomy", 100);
  pdbs.cover("b", "roomy");
  CHECK(pre.plan(c, req_pod("p", high, very_large), 10.0, nullptr, &pdbs).cost.violations == 1);
}

TEST_CASE("preemption.PDB: a gang victim violates when any member does; each violating member counts") {
  // Gang g: g-0 on node1 and g-1 on node2 (prio 1, 500 each). Budget allows 0 for g-1 only.
  fx::cluster c;
  fx::add_node(c, "node1", 0, very_large, very_large);
  fx::add_node(c, "node2", 0, very_large, very_large);
  fx::run(c, make_pod("g-0").cpu(very_large).memory(very_large).priority(1).gang("g", 2), 0, 0, 0);
  fx::run(c, make_pod("g-1").cpu(very_large).memory(very_large).priority(1).gang("g", 2), 1, 0, 0);
  disruption_budgets pdbs;
  pdbs.add("g1", 0);
  pdbs.cover("g-1", "g1");
  fx::preemptor pre(fx::fit_profile(), all_nodes());
  const preemption_result r = pre.plan(c, req_pod("p", high, very_large), 10.0, nullptr, &pdbs);
  REQUIRE(r.found);
  CHECK(fx::victim_names(r) == std::vector<std::string>{"g-0", "g-1"});
  CHECK(r.cost.violations == 1);
  CHECK_FALSE(r.victims[0].violating);
  CHECK(r.victims[1].violating);
}

TEST_CASE("preemption.PDB: bad budgets name the field and change nothing") {
  disruption_budgets pdbs;
  CHECK_THROWS_WITH_AS(pdbs.add("", 1), "pdb.name: must not be empty", invalid_argument_error);
  pdbs.add("a", 1);
  CHECK_THROWS_WITH_AS(pdbs.add("a", 2), "pdb 'a'.name: is already a budget", invalid_argument_error);
  CHECK_THROWS_WITH_AS(pdbs.cover("x", "nope"), "pdb 'nope': is not a budget (add it first)", invalid_argument_error);
  CHECK(pdbs.size() == 1);
  CHECK(pdbs.disruptions_allowed(0) == 1);
  CHECK(pdbs.budgets_of(pod_key("x")).empty());
}
