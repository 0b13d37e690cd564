// requested_to_capacity_ratio_test.go, transcribed from kubernetes
// pkg/scheduler/framework/plugins/noderesources/requested_to_capacity_ratio_test.go at commit
// 8519d3399f10be33a45da368a48ee763acbe3999; units as in kube_table.hpp ("intel.com/foo" ->
// nvidia.com/gpu, 1 unit = 1 GPU). TestRequestedToCapacityRatioScoringStrategy,
// TestBrokenLinearFunction and TestResourceBinPackingSingleExtended in full.
//
// Not expressible: TestResourceBinPackingMultipleExtended (all three cases: "nothing scheduled,
// nothing requested", "resources requested, pods scheduled with less resources", "resources
// requested, pods scheduled with resources, on node with existing pod running", "resources requested,
// pods scheduled with more resources") needs two extended resources, intel.com/foo and
// intel.com/bar; gpusched scores cpu, memory and one scalar resource (nvidia.com/gpu) this session
// (arbitrary named resources: issue 13 item 1, not in scope).
#include <doctest/doctest.h>

#include "conformance/kube_table.hpp"
#include "gpusched/scoring/formulas.hpp"
#include "gpusched/scoring/node_resources.hpp"

using namespace gpusched;
using namespace conformance;

TEST_CASE("conformance.requested_to_capacity_ratio: TestRequestedToCapacityRatioScoringStrategy") {
  const requested_to_capacity_ratio s({{0, 10}, {100, 0}}, resource_weights{1, 1, 0});
  SUBCASE("nothing scheduled, nothing requested (default - least requested nodes have priority)") {
    const auto c = cluster({{4000, 10000}, {4000, 10000}}, {{0, {}}, {0, {}}});
    CHECK(scores(s, c, make({})) == expected{100, 100});
  }
  SUBCASE("nothing scheduled, resources requested, differently sized nodes (default - least requested nodes have priority)") {
    const auto c = cluster({{4000, 10000}, {6000, 10000}}, {{0, {}}, {0, {}}});
    CHECK(scores(s, c, make({3000, 5000})) == expected{38, 50});
  }
  SUBCASE("no resources requested, pods scheduled with resources (default - least requested nodes have priority)") {
    const auto c = cluster({{4000, 10000}, {6000, 10000}}, {{0, {3000, 5000}}, {1, {3000, 5000}}});
    CHECK(scores(s, c, make({})) == expected{38, 50});
  }
}

TEST_CASE("conformance.requested_to_capacity_ratio: TestBrokenLinearFunction") {
  struct assertion {
    std::int64_t p, expected;
  };
  const auto check = [](std::vector<std::int64_t> util, std::vector<std::int64_t> score, std::vector<assertion> as) {
    for (const assertion& a : as) {
      CAPTURE(a.p);
      CHECK(formula::broken_linear(util.data(), score.data(), static_cast<int>(util.size()), a.p) == a.expected);
    }
  };
  check({10, 90}, {1, 9},
        {{-10, 1}, {0, 1}, {9, 1}, {10, 1}, {15, 1}, {19, 1}, {20, 2}, {89, 8}, {90, 9}, {99, 9}, {100, 9}, {110, 9}});
  check({0, 40, 100}, {2, 10, 0}, {{-10, 2}, {0, 2}, {20, 6}, {30, 8}, {40, 10}, {70, 5}, {100, 0}, {110, 0}});
  check({0, 40, 100}, {2, 2, 2}, {{-10, 2}, {0, 2}, {20, 2}, {30, 2}, {40, 2}, {70, 2}, {100, 2}, {110, 2}});
}

TEST_CASE("conformance.requested_to_capacity_ratio: TestResourceBinPackingSingleExtended") {
  // Resources: intel.com/foo weight 1 only; shape {0, 0}, {100, 1}. node1 has 8 units, node2 4.
  const requested_to_capacity_ratio s({{0, 0}, {100, 1}}, resource_weights{0, 0, 1});
  const std::int64_t mem = std::int64_t{10000} * 1024 * 1024;
  const std::vector<knode> nodes{{4000, mem, 8}, {4000, mem, 4}};
  SUBCASE("nothing scheduled, nothing requested") {
    CHECK(scores(s, cluster(nodes), make({})) == expected{0, 0});
  }
  SUBCASE("resources requested, pods scheduled with less resources") {
    CHECK(scores(s, cluster(nodes), make({0, 0, 2})) == expected{2, 5});
  }
  SUBCASE("resources requested, pods scheduled with resources, on node with existing pod running") {
    CHECK(scores(s, cluster(nodes, {{1, {0, 0, 2}}}), make({0, 0, 2})) == expected{2, 10});
  }
  SUBCASE("resources requested, pods scheduled with more resources") {
    CHECK(scores(s, cluster(nodes), make({0, 0, 4})) == expected{5, 10});
  }
}
