// NodeUnschedulable, TaintToleration, NodeAffinity on the node-constraint hooks: in_memory_cluster's
// hooks and validation, names of any length, a cluster without the hooks, and the plugins by name in
// a YAML profile with their reasons counted. (Kubernetes' own tables: tests/conformance/.)
#include <doctest/doctest.h>

#include <string>

#include "gpusched/core/in_memory_cluster.hpp"
#include "gpusched/preflight/node_constraint_checks.hpp"
#include "gpusched/profile/config_yaml.hpp"
#include "gpusched/schedule/schedule_one.hpp"
#include "gpusched/scoring/node_constraint_scores.hpp"
#include "support/builders.hpp"
#include "support/minimal_cluster.hpp"

using namespace gpusched;

namespace {
node_spec labelled(std::string name, node_constraints k) {
  node_spec s = testing::gpu_node(std::move(name), 8000, 16384, 1);
  s.constraints = std::move(k);
  return s;
}
pod with(pod_placement pl, const char* name = "p") {
  pod p = make_pod(name).cpu(1000).memory(1024);
  p.placement.set(std::move(pl));
  return p;
}
}  // namespace

TEST_CASE("node_constraints.in_memory_cluster keeps labels, taints and cordons per node") {
  in_memory_cluster c;
  // The GPU feature discovery label, longer than short_name's 15 characters, and a 63-character value.
  const std::string long_value(63, 'x');
  c.add_node(labelled("a", {{{"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-80GB"}, {"k", long_value}}, {}, false}));
  c.add_node(labelled("b", {{}, {{"dedicated", "infer", taint_effect::no_schedule}}, true}));
  REQUIRE(node_labels(c, 0).size() == 2);
  CHECK(node_labels(c, 0)[0].value.str() == "NVIDIA-A100-SXM4-80GB");
  CHECK(node_labels(c, 0)[1].value == label_name(long_value));  // interned: equal texts, equal names
  CHECK(node_taints(c, 1)[0].key.str() == "dedicated");
  CHECK(node_unschedulable(c, 1));
  CHECK_FALSE(node_unschedulable(c, 0));

  const node_affinity affinity;
  const pod a100 = with({{}, {{"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-80GB"}}, {}, {}});
  CHECK(affinity.check(c, a100, 0) == reason::ok);
  CHECK(affinity.check(c, a100, 1) == reason::node_affinity_mismatch);

  // A node update: uncordon b and drop its taint.
  c.set_constraints(1, {{{"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-80GB"}}, {}, false});
  CHECK(affinity.check(c, a100, 1) == reason::ok);
  CHECK(unschedulable_check{}.check(c, a100, 1) == reason::ok);
}

TEST_CASE("node_constraints.bad labels and taints name the field and change nothing") {
  in_memory_cluster c;
  c.add_node(labelled("a", {}));
  const in_memory_cluster before = c;
  const auto field_of = [&](const node_constraints& k, bool update) {
    try {
      if (update) {
        c.set_constraints(0, k);
      } else {
        c.add_node(labelled("b", k));
      }
    } catch (const invalid_argument_error& e) {
      return e.field();
    }
    return std::string("accepted");
  };
  CHECK(field_of({{{"bad key!", "v"}}, {}, false}, false) == "node 'b'.labels[0].key");
  CHECK(field_of({{{"k", "v"}, {"k", "w"}}, {}, false}, false) == "node 'b'.labels[1].key");
  CHECK(field_of({{{"k", std::string(64, 'x')}}, {}, false}, false) == "node 'b'.labels[0].value");
  CHECK(field_of({{}, {{"t", "-bad", taint_effect::no_execute}}, false}, true) == "node 'a'.taints[0].value");
  CHECK(field_of({{}, {{"t", "v", static_cast<taint_effect>(7)}}, false}, true) == "node 'a'.taints[0].effect");
  CHECK(c == before);
  CHECK(c.size() == 1);
}

TEST_CASE("node_constraints.bad placements name the field and change nothing") {
  const auto field_of = [](const pod_placement& pl) {
    pod p = make_pod("p");
    try {
      p.placement.set(pl);
    } catch (const invalid_argument_error& e) {
      CHECK_FALSE(p.placement.has_value());
      return e.field();
    }
    return std::string("accepted");
  };
  using op = selector_operator;
  const auto term = [](selector_requirement q) { return std::vector<node_selector_term>{{{std::move(q)}, {}}}; };
  CHECK(field_of({{}, {}, term({"k", op::in, {}}), {}}) == "pod.placement.required[0].match_expressions[0].values");
  CHECK(field_of({{}, {}, term({"k", op::exists, {"v"}}), {}}) == "pod.placement.required[0].match_expressions[0].values");
  CHECK(field_of({{}, {}, term({"k", op::gt, {"1.5"}}), {}}) == "pod.placement.required[0].match_expressions[0].values");
  CHECK(field_of({{}, {}, std::vector<node_selector_term>{}, {}}) == "pod.placement.required");
  CHECK(field_of({{{{}, toleration_operator::equal, "v", std::nullopt}}, {}, {}, {}}) == "pod.placement.tolerations[0].operator");
  CHECK(field_of({{{"k", toleration_operator::exists, "v", std::nullopt}}, {}, {}, {}}) == "pod.placement.tolerations[0].value");
  CHECK(field_of({{}, {}, {}, {{0, {{{"k", op::exists, {}}}, {}}}}}) == "pod.placement.preferred[0].weight");
  node_selector_term by_rack{{}, {{"metadata.rack", op::in, {"r1"}}}};
  CHECK(field_of({{}, {}, std::vector<node_selector_term>{by_rack}, {}}) == "pod.placement.required[0].match_fields[0].key");
  CHECK(field_of({{}, {}, term({"k", op::lt, {"-3"}}), {}}) == "accepted");
}

TEST_CASE("node_constraints.Gt / Lt compare integers; an empty key with Exists tolerates every taint") {
  in_memory_cluster c;
  c.add_node(labelled("a", {{{"gen", "9"}}, {{"x", "y", taint_effect::no_execute}}, false}));
  c.add_node(labelled("b", {{{"gen", "10"}}, {}, false}));
  c.add_node(labelled("c", {{{"gen", "ten"}}, {}, false}));
  using op = selector_operator;
  const pod newer = with({{}, {}, std::vector<node_selector_term>{{{{"gen", op::gt, {"9"}}}, {}}}, {}});
  const node_affinity f;
  CHECK(f.check(c, newer, 0) == reason::node_affinity_mismatch);  // 9 > 9 is false
  CHECK(f.check(c, newer, 1) == reason::ok);                      // 10 > 9 as integers ("10" < "9" as text)
  CHECK(f.check(c, newer, 2) == reason::node_affinity_mismatch);  // not an integer
  const taint_toleration t;
  CHECK(t.check(c, make_pod("p"), 0) == reason::untolerated_taint);
  CHECK(t.check(c, with({{{{}, toleration_operator::exists, {}, std::nullopt}}, {}, {}, {}}), 0) == reason::ok);
}

TEST_CASE("node_constraints.a cluster without the hooks: no labels, no taints, no cordon") {
  archetype::minimal_cluster m;
  m.nodes = {node_state{4000, 0, 8192, 0, 0}};
  m.gpus.resize(1);
  static_assert(!LabelledNodes<archetype::minimal_cluster> && !TaintedNodes<archetype::minimal_cluster>);
  CHECK(unschedulable_check{}.check(m, make_pod("p"), 0) == reason::ok);
  CHECK(taint_toleration{}.check(m, make_pod("p"), 0) == reason::ok);
  CHECK(node_affinity{}.check(m, make_pod("p"), 0) == reason::ok);
  CHECK(node_affinity{}.check(m, with({{}, {{"k", "v"}}, {}, {}}), 0) == reason::node_affinity_mismatch);
  // Nodes without names: a metadata.name In requirement matches none, NotIn every one.
  using op = selector_operator;
  CHECK(node_affinity{}.check(m, with({{}, {}, std::vector<node_selector_term>{{{}, {{"metadata.name", op::not_in, {"x"}}}}}, {}}), 0) ==
        reason::ok);
}

TEST_CASE("node_constraints.the plugins by name in a YAML profile, with their reasons counted") {
  const auto cfg = parse_scheduler_config(
      "apiVersion: kubescheduler.config.k8s.io/v1\n"
      "kind: KubeSchedulerConfiguration\n"
      "profiles:\n"
      "- schedulerName: k8s\n"
      "  plugins:\n"
      "    filter:\n"
      "      disabled: [{name: '*'}]\n"
      "      enabled: [{name: NodeUnschedulable}, {name: TaintToleration}, {name: NodeAffinity}]\n"
      "    score:\n"
      "      disabled: [{name: '*'}]\n"
      "      enabled: [{name: TaintToleration, weight: 3}, {name: NodeAffinity, weight: 2}]\n");
  const auto& prof = cfg.profiles[0].profile;
  in_memory_cluster c;
  c.add_node(labelled("cordoned", {{{"zone", "a"}}, {}, true}));
  c.add_node(labelled("tainted", {{{"zone", "a"}}, {{"gpu", "reserved", taint_effect::no_schedule}}, false}));
  c.add_node(labelled("zone-b", {{{"zone", "b"}}, {}, false}));
  c.add_node(labelled("soft-a", {{{"zone", "a"}}, {{"spot", "", taint_effect::prefer_no_schedule}}, false}));
  c.add_node(labelled("plain-a", {{{"zone", "a"}}, {}, false}));
  using op = selector_operator;
  const pod p = with({{}, {}, std::vector<node_selector_term>{{{{"zone", op::in, {"a"}}}, {}}}, {}});
  scheduler<in_memory_cluster, dynamic_profile<in_memory_cluster>> s(prof, {100, 1, true});
  const schedule_result r = s.schedule_one(c, p);
  REQUIRE(r.scheduled);
  CHECK(c.name(r.where.node) == "plain-a");  // soft-a scores 0 for its PreferNoSchedule taint, plain-a 100
  CHECK(r.rejections[reason::node_unschedulable] == 1);
  CHECK(r.rejections[reason::untolerated_taint] == 1);
  CHECK(r.rejections[reason::node_affinity_mismatch] == 1);
  CHECK(r.rejections.fits() == 2);
  CHECK(r.rejections.to_string() == "2/5 nodes fit: 1 unschedulable, 1 untolerated taint, 1 node affinity/selector mismatch");
  // NodeAffinity skipped (no preferred terms): TaintToleration 100x3 alone.
  CHECK(r.score == 300);
}
