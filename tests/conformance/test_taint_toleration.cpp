// TaintToleration, transcribed from kubernetes
// pkg/scheduler/framework/plugins/tainttoleration/taint_toleration_test.go at commit
// cb6ff2d8ce3595f88570f82c7d0e6d98910afd3c: TestTaintTolerationScore (every case: Score, then
// NormalizeScore over the listed nodes) and TestTaintTolerationFilter (every case; the status text
// is reason_detail's text).
//
// Not transcribed: TestIsSchedulableAfterNodeChange and Test_isSchedulableAfterPodChange (queueing
// hints for cluster events; gpusched's scheduling queue has no per-plugin event hints).
#include <doctest/doctest.h>

#include <span>
#include <vector>

#include "conformance/constraint_table.hpp"
#include "gpusched/preflight/node_constraint_checks.hpp"
#include "gpusched/scoring/node_constraint_scores.hpp"

using namespace gpusched;
using namespace conformance;

namespace {
constexpr auto no_schedule = taint_effect::no_schedule;
constexpr auto prefer = taint_effect::prefer_no_schedule;

std::vector<std::int64_t> normalized(const in_memory_cluster& c, const pod& p) {
  const taint_toleration_score s;
  std::vector<std::int64_t> out;
  for (node_index n = 0; n < c.size(); ++n) out.push_back(s.score(c, p, n));
  s.normalize(std::span<std::int64_t>(out));
  return out;
}
std::string filter(const node_constraints& k, const pod_placement& pl) {
  const auto c = nodes_with({{"nodeA", k}});
  const auto p = pod_with(pl);
  const taint_toleration f;
  const reason_detail d = f.explain(c, p, 0);
  CHECK(d.why == f.check(c, p, 0));
  return d.ok() ? std::string("ok") : d.to_string();
}
}  // namespace

TEST_CASE("conformance.taint_toleration: TestTaintTolerationScore") {
  SUBCASE("node with taints tolerated by the pod, gets a higher score than those node with intolerable taints") {
    const auto c = nodes_with({{"nodeA", {{}, {taint("foo", "bar", prefer)}, false}},
                               {"nodeB", {{}, {taint("foo", "blah", prefer)}, false}}});
    CHECK(normalized(c, pod_with({{tol_equal("foo", "bar", prefer)}, {}, {}, {}})) == std::vector<std::int64_t>{100, 0});
  }
  SUBCASE("the nodes that all of their taints are tolerated by the pod, get the same score, no matter how many tolerable "
          "taints a node has") {
    const auto c = nodes_with({{"nodeA", {}},
                               {"nodeB", {{}, {taint("cpu-type", "arm64", prefer)}, false}},
                               {"nodeC", {{}, {taint("cpu-type", "arm64", prefer), taint("disk-type", "ssd", prefer)}, false}}});
    const auto p = pod_with({{tol_equal("cpu-type", "arm64", prefer), tol_equal("disk-type", "ssd", prefer)}, {}, {}, {}});
    CHECK(normalized(c, p) == std::vector<std::int64_t>{100, 100, 100});
  }
  SUBCASE("the more intolerable taints a node has, the lower score it gets.") {
    const auto c = nodes_with({{"nodeA", {}},
                               {"nodeB", {{}, {taint("cpu-type", "arm64", prefer)}, false}},
                               {"nodeC", {{}, {taint("cpu-type", "arm64", prefer), taint("disk-type", "ssd", prefer)}, false}}});
    CHECK(normalized(c, pod_with({{tol_equal("foo", "bar", prefer)}, {}, {}, {}})) == std::vector<std::int64_t>{100, 50, 0});
  }
  SUBCASE("only taints and tolerations that have effect PreferNoSchedule are checked by taints-tolerations priority function") {
    const auto c = nodes_with({{"nodeA", {}},
                               {"nodeB", {{}, {taint("cpu-type", "arm64", no_schedule)}, false}},
                               {"nodeC", {{}, {taint("cpu-type", "arm64", prefer), taint("disk-type", "ssd", prefer)}, false}}});
    const auto p = pod_with({{tol_equal("cpu-type", "arm64", no_schedule), tol_equal("disk-type", "ssd", no_schedule)}, {}, {}, {}});
    CHECK(normalized(c, p) == std::vector<std::int64_t>{100, 100, 0});
  }
  SUBCASE("Default behaviour No taints and tolerations, lands on node with no taints") {
    const auto c = nodes_with({{"nodeA", {}}, {"nodeB", {{}, {taint("cpu-type", "arm64", prefer)}, false}}});
    CHECK(normalized(c, pod_with({})) == std::vector<std::int64_t>{100, 0});
  }
}

TEST_CASE("conformance.taint_toleration: TestTaintTolerationFilter") {
  const node_constraints dedicated_user1{{}, {taint("dedicated", "user1", no_schedule)}, false};
  const node_constraints foo_bar{{}, {taint("foo", "bar", no_schedule)}, false};
  SUBCASE("A pod having no tolerations can't be scheduled onto a node with nonempty taints") {
    CHECK(filter(dedicated_user1, {}) == "node(s) had untolerated taint {dedicated: user1}");
  }
  SUBCASE("A pod which can be scheduled on a dedicated node assigned to user1 with effect NoSchedule") {
    CHECK(filter(dedicated_user1, {{tol_equal("dedicated", "user1", no_schedule)}, {}, {}, {}}) == "ok");
  }
  SUBCASE("A pod which can't be scheduled on a dedicated node assigned to user2 with effect NoSchedule") {
    CHECK(filter(dedicated_user1, {{tol_equal("dedicated", "user2", no_schedule)}, {}, {}, {}}) ==
          "node(s) had untolerated taint {dedicated: user1}");
  }
  SUBCASE("A pod can be scheduled onto the node, with a toleration uses operator Exists that tolerates the taints on the node") {
    CHECK(filter(foo_bar, {{tol_exists("foo", no_schedule)}, {}, {}, {}}) == "ok");
  }
  SUBCASE("A pod has multiple tolerations, node has multiple taints, all the taints are tolerated, pod can be scheduled onto "
          "the node") {
    const node_constraints k{{}, {taint("dedicated", "user2", no_schedule), taint("foo", "bar", no_schedule)}, false};
    CHECK(filter(k, {{tol_equal("dedicated", "user2", no_schedule), tol_exists("foo", no_schedule)}, {}, {}, {}}) == "ok");
  }
  SUBCASE("A pod has a toleration that keys and values match the taint on the node, but (non-empty) effect doesn't match, "
          "can't be scheduled onto the node") {
    CHECK(filter(foo_bar, {{tol_equal("foo", "bar", prefer)}, {}, {}, {}}) == "node(s) had untolerated taint {foo: bar}");
  }
  SUBCASE("The pod has a toleration that keys and values match the taint on the node, the effect of toleration is empty, "
          "and the effect of taint is NoSchedule. Pod can be scheduled onto the node") {
    CHECK(filter(foo_bar, {{tol_equal("foo", "bar", std::nullopt)}, {}, {}, {}}) == "ok");
  }
  SUBCASE("The pod has a toleration that key and value don't match the taint on the node, but the effect of taint on node is "
          "PreferNoSchedule. Pod can be scheduled onto the node") {
    const node_constraints k{{}, {taint("dedicated", "user1", prefer)}, false};
    CHECK(filter(k, {{tol_equal("dedicated", "user2", no_schedule)}, {}, {}, {}}) == "ok");
  }
  SUBCASE("The pod has no toleration, but the effect of taint on node is PreferNoSchedule. Pod can be scheduled onto the node") {
    CHECK(filter({{}, {taint("dedicated", "user1", prefer)}, false}, {}) == "ok");
  }
}
