// NodeAffinity, transcribed from kubernetes
// pkg/scheduler/framework/plugins/nodeaffinity/node_affinity_test.go at commit
// 17bae91f207a5f2b101e581c90f7a72fc9adef96: TestNodeAffinity (every case's Filter status) and
// TestNodeAffinityPriority (every case: PreScore, Score, NormalizeScore).
//
// Not expressible, by what: TestNodeAffinity's wantPreFilterResult / wantPreFilterStatus (the
// PreFilter node-name narrowing of matchFields terms, and its "conflicting" status for "Pod with two
// conflicting mach field requirements"): gpusched has no PreFilter result; the Filter outcomes,
// which the narrowing only anticipates, are checked for every case. Test_isSchedulableAfterNodeChange:
// queueing hints (gpusched's queue has no per-plugin event hints).
#include <doctest/doctest.h>

#include <span>
#include <string>
#include <vector>

#include "conformance/constraint_table.hpp"
#include "gpusched/preflight/node_constraint_checks.hpp"
#include "gpusched/scoring/node_constraint_scores.hpp"

using namespace gpusched;
using namespace conformance;

namespace {
using op = selector_operator;
using labels = std::vector<label>;
selector_requirement req(const char* key, op o, std::vector<label_name> values = {}) { return {key, o, std::move(values)}; }
selector_requirement name_in(const char* node) { return {"metadata.name", op::in, {node}}; }
node_selector_term exprs(std::vector<selector_requirement> e) { return {std::move(e), {}}; }
pod_placement required(std::vector<node_selector_term> terms, labels selector = {}) { return {{}, std::move(selector), std::move(terms), {}}; }

const std::string pod_reason = "node(s) didn't match Pod's node affinity/selector";
const std::string enforced_reason = "node(s) didn't match scheduler-enforced node affinity";

// The Filter outcome: "ok" or the status text.
std::string filter(const pod_placement& pl, labels node_labels, const char* node_name = "node", const node_affinity& f = {}) {
  const auto c = nodes_with({{node_name, {std::move(node_labels), {}, false}}});
  const auto p = pod_with(pl);
  const reason_detail d = f.explain(c, p, 0);
  CHECK(d.why == f.check(c, p, 0));
  return d.ok() ? std::string("ok") : d.to_string();
}
}  // namespace

TEST_CASE("conformance.node_affinity: TestNodeAffinity") {
  SUBCASE("missing labels") { CHECK(filter({{}, {{"foo", "bar"}}, {}, {}}, {}) == pod_reason); }
  SUBCASE("same labels") { CHECK(filter({{}, {{"foo", "bar"}}, {}, {}}, {{"foo", "bar"}}) == "ok"); }
  SUBCASE("node labels are superset") { CHECK(filter({{}, {{"foo", "bar"}}, {}, {}}, {{"foo", "bar"}, {"baz", "blah"}}) == "ok"); }
  SUBCASE("node labels are subset") { CHECK(filter({{}, {{"foo", "bar"}, {"baz", "blah"}}, {}, {}}, {{"foo", "bar"}}) == pod_reason); }
  SUBCASE("Pod with matchExpressions using In operator that matches the existing node") {
    CHECK(filter(required({exprs({req("foo", op::in, {"bar", "value2"})})}), {{"foo", "bar"}}) == "ok");
  }
  SUBCASE("Pod with matchExpressions using Gt operator that matches the existing node") {
    CHECK(filter(required({exprs({req("kernel-version", op::gt, {"0204"})})}), {{"kernel-version", "0206"}}) == "ok");
  }
  SUBCASE("Pod with matchExpressions using NotIn operator that matches the existing node") {
    CHECK(filter(required({exprs({req("mem-type", op::not_in, {"DDR", "DDR2"})})}), {{"mem-type", "DDR3"}}) == "ok");
  }
  SUBCASE("Pod with matchExpressions using Exists operator that matches the existing node") {
    CHECK(filter(required({exprs({req("GPU", op::exists)})}), {{"GPU", "NVIDIA-GRID-K1"}}) == "ok");
  }
  SUBCASE("Pod with affinity that don't match node's labels won't schedule onto the node") {
    CHECK(filter(required({exprs({req("foo", op::in, {"value1", "value2"})})}), {{"foo", "bar"}}) == pod_reason);
  }
  SUBCASE("Pod with empty MatchExpressions is not a valid value will match no objects and won't schedule onto the node") {
    CHECK(filter(required({exprs({})}), {{"foo", "bar"}}) == pod_reason);
  }
  SUBCASE("Pod with no Affinity will schedule onto a node") { CHECK(filter({}, {{"foo", "bar"}}) == "ok"); }
  SUBCASE("Pod with Affinity but nil NodeSelector will schedule onto a node") {
    CHECK(filter({{}, {}, std::nullopt, {}}, {{"foo", "bar"}}) == "ok");
  }
  SUBCASE("Pod with multiple matchExpressions ANDed that matches the existing node") {
    CHECK(filter(required({exprs({req("GPU", op::exists), req("GPU", op::not_in, {"AMD", "INTER"})})}),
                 {{"GPU", "NVIDIA-GRID-K1"}}) == "ok");
  }
  SUBCASE("Pod with multiple matchExpressions ANDed that doesn't match the existing node") {
    CHECK(filter(required({exprs({req("GPU", op::exists), req("GPU", op::in, {"AMD", "INTER"})})}),
                 {{"GPU", "NVIDIA-GRID-K1"}}) == pod_reason);
  }
  SUBCASE("Pod with multiple NodeSelectorTerms ORed in affinity, matches the node's labels and will schedule onto the node") {
    CHECK(filter(required({exprs({req("foo", op::in, {"bar", "value2"})}), exprs({req("diffkey", op::in, {"wrong", "value2"})})}),
                 {{"foo", "bar"}}) == "ok");
  }
  SUBCASE("Pod with an Affinity and a PodSpec.NodeSelector(the old thing that we are deprecating) both are satisfied, will "
          "schedule onto the node") {
    CHECK(filter(required({exprs({req("foo", op::exists)})}, {{"foo", "bar"}}), {{"foo", "bar"}}) == "ok");
  }
  SUBCASE("Pod with an Affinity matches node's labels but the PodSpec.NodeSelector(the old thing that we are deprecating) is "
          "not satisfied, won't schedule onto the node") {
    CHECK(filter(required({exprs({req("foo", op::exists)})}, {{"foo", "bar"}}), {{"foo", "barrrrrr"}}) == pod_reason);
  }
  SUBCASE("Pod with an invalid value in Affinity term won't be scheduled onto the node") {
    CHECK(filter(required({exprs({req("foo", op::not_in, {"invalid value: ___@#$%^"})})}), {{"foo", "bar"}}) == pod_reason);
  }
  SUBCASE("Pod with matchFields using In operator that matches the existing node") {
    CHECK(filter(required({{{}, {name_in("node1")}}}), {}, "node1") == "ok");
  }
  SUBCASE("Pod with matchFields using In operator that does not match the existing node") {
    CHECK(filter(required({{{}, {name_in("node1")}}}), {}, "node2") == pod_reason);
  }
  SUBCASE("Pod with two terms: matchFields does not match, but matchExpressions matches") {
    CHECK(filter(required({{{}, {name_in("node1"), name_in("node2")}}, exprs({req("foo", op::in, {"bar"})})}), {{"foo", "bar"}},
                 "node2") == "ok");
  }
  SUBCASE("Pod with one term: matchFields does not match, but matchExpressions matches") {
    CHECK(filter(required({{{req("foo", op::in, {"bar"})}, {name_in("node1")}}}), {{"foo", "bar"}}, "node2") == pod_reason);
  }
  SUBCASE("Pod with one term: both matchFields and matchExpressions match") {
    CHECK(filter(required({{{req("foo", op::in, {"bar"})}, {name_in("node1")}}}), {{"foo", "bar"}}, "node1") == "ok");
  }
  SUBCASE("Pod with two terms: both matchFields and matchExpressions do not match") {
    CHECK(filter(required({{{}, {name_in("node1")}}, exprs({req("foo", op::in, {"not-match-to-bar"})})}), {{"foo", "bar"}},
                 "node2") == pod_reason);
  }
  SUBCASE("Pod with two terms of node.Name affinity") {
    CHECK(filter(required({{{}, {name_in("node1")}}, {{}, {name_in("node2")}}}), {}, "node2") == "ok");
  }
  SUBCASE("Pod with two conflicting mach field requirements") {
    CHECK(filter(required({{{}, {name_in("node1"), name_in("node2")}}}), {{"foo", "bar"}}, "node2") == pod_reason);
  }
  const node_affinity added_node2{std::vector<node_selector_term>{{{}, {name_in("node2")}}}};
  SUBCASE("Matches added affinity and Pod's node affinity") {
    CHECK(filter(required({exprs({req("zone", op::in, {"foo"})})}), {{"zone", "foo"}}, "node2", added_node2) == "ok");
  }
  SUBCASE("Matches added affinity but not Pod's node affinity") {
    CHECK(filter(required({exprs({req("zone", op::in, {"bar"})})}), {{"zone", "foo"}}, "node2", added_node2) == pod_reason);
  }
  SUBCASE("Doesn't match added affinity") {
    const node_affinity added{std::vector<node_selector_term>{exprs({req("zone", op::in, {"bar"})})}};
    CHECK(filter({}, {{"zone", "foo"}}, "node2", added) == enforced_reason);
  }
  SUBCASE("Matches node selector correctly even if PreFilter is not called") {
    CHECK(filter({{}, {{"foo", "bar"}}, {}, {}}, {{"foo", "bar"}, {"baz", "blah"}}) == "ok");
  }
  SUBCASE("Matches node affinity correctly even if PreFilter is not called") {
    CHECK(filter(required({exprs({req("GPU", op::exists), req("GPU", op::not_in, {"AMD", "INTER"})})}),
                 {{"GPU", "NVIDIA-GRID-K1"}}) == "ok");
  }
}

TEST_CASE("conformance.node_affinity: TestNodeAffinityPriority") {
  const labels label1{{"foo", "bar"}}, label2{{"key", "value"}}, label3{{"az", "az1"}}, label4{{"abc", "az11"}, {"def", "az22"}},
      label5{{"foo", "bar"}, {"key", "value"}, {"az", "az1"}};
  const std::vector<preferred_term> affinity1{{2, exprs({req("foo", op::in, {"bar"})})}};
  const std::vector<preferred_term> affinity2{
      {2, exprs({req("foo", op::in, {"bar"})})},
      {4, exprs({req("key", op::in, {"value"})})},
      {5, exprs({req("foo", op::in, {"bar"}), req("key", op::in, {"value"}), req("az", op::in, {"az1"})})}};
  // PreScore, Score, NormalizeScore over the nodes, as run_scorer runs them for a profile.
  const auto scores = [](const node_affinity_score& s, const std::vector<labels>& nodes, const pod_placement& pl) {
    std::vector<std::pair<std::string, node_constraints>> ns;
    for (std::size_t i = 0; i < nodes.size(); ++i) ns.push_back({"node" + std::to_string(i + 1), {nodes[i], {}, false}});
    const auto c = nodes_with(std::move(ns));
    std::vector<node_index> idx;
    for (node_index n = 0; n < c.size(); ++n) idx.push_back(n);
    std::vector<std::int64_t> out(idx.size(), -1);
    run_scorer(s, c, pod_with(pl), std::span<const node_index>(idx), out.data());
    return out;
  };
  using v = std::vector<std::int64_t>;
  const node_affinity_score plain;
  SUBCASE("all nodes are same priority as NodeAffinity is nil") { CHECK(scores(plain, {label1, label2, label3}, {}) == v{0, 0, 0}); }
  SUBCASE("Skip is returned in PreScore when NodeAffinity is nil") {
    const auto c = nodes_with({{"node1", {label1, {}, false}}});
    CHECK(plain.pre_score(c, pod_with({})) == score_status::skip);
  }
  SUBCASE("PreScore returns error when an incoming Pod has a broken affinity") {
    pod p = make_pod("p");
    try {
      p.placement.set({{}, {}, {}, {{2, exprs({req("invalid key", op::in, {"bar"})})}}});
      FAIL("expected an error");
    } catch (const invalid_argument_error& e) {
      CHECK(e.field() == "pod.placement.preferred[0].preference.match_expressions[0].key");
    }
    CHECK_FALSE(p.placement.has_value());  // changed nothing
  }
  SUBCASE("no node matches preferred scheduling requirements in NodeAffinity of pod so all nodes' priority is zero") {
    CHECK(scores(plain, {label4, label2, label3}, {{}, {}, {}, affinity1}) == v{0, 0, 0});
  }
  SUBCASE("only node1 matches the preferred scheduling requirements of pod") {
    CHECK(scores(plain, {label1, label2, label3}, {{}, {}, {}, affinity1}) == v{100, 0, 0});
  }
  SUBCASE("all nodes matches the preferred scheduling requirements of pod but with different priorities") {
    CHECK(scores(plain, {label1, label5, label2}, {{}, {}, {}, affinity2}) == v{18, 100, 36});
  }
  SUBCASE("added affinity") { CHECK(scores(node_affinity_score{affinity1}, {label1, label2}, {}) == v{100, 0}); }
  SUBCASE("added affinity and pod has default affinity") {
    const node_affinity_score added{{{3, exprs({req("key", op::in, {"value"})})}}};
    CHECK(scores(added, {label1, label2, label5}, {{}, {}, {}, affinity1}) == v{40, 60, 100});
  }
  SUBCASE("calculate the priorities correctly even if PreScore is not called") {
    CHECK(scores(plain, {label1, label5, label2}, {{}, {}, {}, affinity2}) == v{18, 100, 36});
  }
}
