// TestLeastAllocatedScoringStrategy, transcribed case by case from kubernetes
// pkg/scheduler/framework/plugins/noderesources/least_allocated_test.go at commit
// 008b3652959ca58af8be3fb5b6ecfe9ae7638282; units as in kube_table.hpp. Two containers in a table
// (Req(..).Req(..)) are one pod asking for their sum. defaultResources = cpu 1, memory 1;
// extendedResourceSet = cpu 1, memory 1, extendedRes 1 (extendedRes -> nvidia.com/gpu).
//
// Not expressible, by case name:
//   "Resources not set, pods scheduled with error": upstream answers a Score with status Error; a
//       gpusched scorer has no error status. The scores (MinNodeScore, 0) are checked below.
//   "resource with negative weight", "resource with zero weight", "resource weight larger than
//       MaxNodeScore": argument validation of NodeResourcesFitArgs, which belongs to the
//       configuration layer (profile/, being rewritten this session); resource_weights is a plain
//       struct. Not transcribed here.
#include <doctest/doctest.h>

#include "conformance/kube_table.hpp"
#include "gpusched/scoring/node_resources.hpp"

using namespace gpusched;
using namespace conformance;

namespace {
const least_allocated least_defaults{{1, 1, 0}};
const least_allocated least_extended_set{{1, 1, 1}};
}  // namespace

TEST_CASE("conformance.least_allocated: nothing scheduled, nothing requested") {
  const auto c = cluster({{4000, 10000}, {4000, 10000}});
  CHECK(scores(least_defaults, c, make({})) == expected{100, 100});
}

TEST_CASE("conformance.least_allocated: nothing scheduled, resources requested, differently sized nodes") {
  const auto c = cluster({{4000, 10000}, {6000, 10000}});
  CHECK(scores(least_defaults, c, make(p3000_5000)) == expected{37, 50});
}

TEST_CASE("conformance.least_allocated: Resources not set, pods scheduled with error (scores only)") {
  const auto c = cluster({{4000, 10000}, {6000, 10000}});
  CHECK(scores(least_allocated{{0, 0, 0}}, c, make(p3000_5000)) == expected{0, 0});
}

TEST_CASE("conformance.least_allocated: no resources requested, pods scheduled") {
  const auto c = cluster({{4000, 10000}, {4000, 10000}}, {{0, {}}, {0, {}}, {1, {}}, {1, {}}});
  CHECK(scores(least_defaults, c, make({})) == expected{100, 100});
}

TEST_CASE("conformance.least_allocated: no resources requested, pods scheduled with resources") {
  const auto c = cluster({{10000, 20000}, {10000, 20000}},
                         {{0, {3000, 0}}, {0, {3000, 0}}, {1, {3000, 0}}, {1, {3000, 5000}}});
  CHECK(scores(least_defaults, c, make({})) == expected{70, 57});
}

TEST_CASE("conformance.least_allocated: resources requested, pods scheduled with resources") {
  const auto c = cluster({{10000, 20000}, {10000, 20000}}, {{0, {3000, 0}}, {1, {3000, 5000}}});
  CHECK(scores(least_defaults, c, make(p3000_5000)) == expected{57, 45});
}

TEST_CASE("conformance.least_allocated: resources requested, pods scheduled with resources, differently sized nodes") {
  const auto c = cluster({{10000, 20000}, {10000, 50000}}, {{0, {3000, 0}}, {1, {3000, 5000}}});
  CHECK(scores(least_defaults, c, make(p3000_5000)) == expected{57, 60});
}

TEST_CASE("conformance.least_allocated: requested resources exceed node capacity") {
  const auto c = cluster({{4000, 10000}, {4000, 10000}}, {{0, {3000, 0}}, {1, {3000, 5000}}});
  CHECK(scores(least_defaults, c, make({3000, 0})) == expected{50, 25});
}

TEST_CASE("conformance.least_allocated: zero node resources, pods scheduled with resources") {
  const auto c = cluster({{0, 0}, {0, 0}}, {{0, {3000, 0}}, {1, {3000, 5000}}});
  CHECK(scores(least_defaults, c, make({})) == expected{0, 0});
}

TEST_CASE("conformance.least_allocated: nothing scheduled, resources requested with different weight on CPU and memory, "
          "differently sized nodes") {
  const auto c = cluster({{4000, 10000}, {6000, 10000}});
  CHECK(scores(least_allocated{{1, 2, 0}}, c, make(p3000_5000)) == expected{41, 50});
}

TEST_CASE("conformance.least_allocated: bypass extended resource if the pod does not request") {
  const auto c = cluster({{6000, 10000}, {6000, 10000, 4}});
  CHECK(scores(least_extended_set, c, make(p3000_5000)) == expected{50, 50});
}

TEST_CASE("conformance.least_allocated: honor extended resource if the pod requests") {
  const auto c = cluster({{6000, 10000, 4}, {6000, 10000, 10}});
  CHECK(scores(least_extended_set, c, make({3000, 5000, 2})) == expected{50, 60});
}

TEST_CASE("conformance.least_allocated: if the node doesn't have a resource") {
  const auto c = cluster({{6000, 10000}, {6000, 10000, 4}});
  CHECK(scores(least_allocated{{1, 1, 2}}, c, make({3000, 4000})) == expected{55, 55});
}
