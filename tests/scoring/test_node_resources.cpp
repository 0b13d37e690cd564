// Expected values from Kubernetes' own tests (pkg/scheduler/framework/plugins/noderesources/*_test.go);
// the test units (cores, bytes) are used as plain numbers since only ratios matter.
#include <doctest/doctest.h>

#include "gpusched/core/in_memory_cluster.hpp"
#include "gpusched/scoring/node_resources.hpp"
#include "support/minimal_cluster.hpp"

using namespace gpusched;

namespace {
// Two nodes with the given capacities and already-requested CPU / memory.
archetype::minimal_cluster two_nodes(milli cpu1, mib mem1, milli cpu2, mib mem2, milli used_cpu1 = 0, mib used_mem1 = 0,
                                     milli used_cpu2 = 0, mib used_mem2 = 0) {
  archetype::minimal_cluster m;
  m.nodes = {node_state{cpu1, used_cpu1, mem1, used_mem1, 0}, node_state{cpu2, used_cpu2, mem2, used_mem2, 0}};
  m.gpus.resize(2);
  return m;
}
const pod p3000_5000 = make_pod("p").cpu(3000).memory(5000);
}  // namespace

TEST_CASE("scoring.least_allocated (least_allocated_test.go)") {
  const least_allocated s;
  auto m = two_nodes(4000, 10000, 6000, 10000);
  CHECK(s.score(m, p3000_5000, 0) == 37);
  CHECK(s.score(m, p3000_5000, 1) == 50);
  m = two_nodes(10000, 20000, 10000, 20000, 3000, 0, 3000, 5000);
  CHECK(s.score(m, p3000_5000, 0) == 57);
  CHECK(s.score(m, p3000_5000, 1) == 45);
  m = two_nodes(10000, 20000, 10000, 50000, 3000, 0, 3000, 5000);
  CHECK(s.score(m, p3000_5000, 1) == 60);
  m = two_nodes(4000, 10000, 4000, 10000, 3000, 0, 3000, 5000);  // requested exceeds capacity
  CHECK(s.score(m, make_pod("q").cpu(3000), 0) == 50);
  CHECK(s.score(m, make_pod("q").cpu(3000), 1) == 25);
  const least_allocated weighted{{1, 2, 0}};  // memory weight 2
  m = two_nodes(4000, 10000, 6000, 10000);
  CHECK(weighted.score(m, p3000_5000, 0) == 41);
  CHECK(weighted.score(m, p3000_5000, 1) == 50);
}

TEST_CASE("scoring.most_allocated (most_allocated_test.go)") {
  const most_allocated s;
  auto m = two_nodes(4000, 10000, 6000, 10000);
  CHECK(s.score(m, p3000_5000, 0) == 62);
  CHECK(s.score(m, p3000_5000, 1) == 50);
  m = two_nodes(10000, 20000, 10000, 20000, 3000, 0, 3000, 5000);
  CHECK(s.score(m, p3000_5000, 0) == 42);
  CHECK(s.score(m, p3000_5000, 1) == 55);
  m = two_nodes(5000, 10000, 10000, 9000);
  CHECK(s.score(m, make_pod("q").cpu(5000).memory(9000), 0) == 95);
  CHECK(s.score(m, make_pod("q").cpu(5000).memory(9000), 1) == 75);
  const most_allocated weighted{{1, 2, 0}};
  m = two_nodes(4000, 10000, 6000, 10000);
  CHECK(weighted.score(m, p3000_5000, 0) == 58);
  CHECK(weighted.score(m, p3000_5000, 1) == 50);
}

TEST_CASE("scoring.requested_to_capacity_ratio (requested_to_capacity_ratio_test.go)") {
  const requested_to_capacity_ratio s({{0, 10}, {100, 0}});
  const auto m = two_nodes(4000, 10000, 6000, 10000);
  CHECK(s.score(m, p3000_5000, 0) == 38);  // f(75)=25, f(50)=50: math.Round(37.5) = 38
  CHECK(s.score(m, p3000_5000, 1) == 50);
  CHECK(s.score(m, make_pod("none"), 0) == 100);
  // TestBrokenLinearFunction, raw points.
  const std::int64_t u1[] = {10, 90}, s1[] = {1, 9};
  CHECK(formula::broken_linear(u1, s1, 2, -10) == 1);
  CHECK(formula::broken_linear(u1, s1, 2, 19) == 1);
  CHECK(formula::broken_linear(u1, s1, 2, 20) == 2);
  CHECK(formula::broken_linear(u1, s1, 2, 89) == 8);
  CHECK(formula::broken_linear(u1, s1, 2, 110) == 9);
  const std::int64_t u2[] = {0, 40, 100}, s2[] = {2, 10, 0};
  CHECK(formula::broken_linear(u2, s2, 3, 20) == 6);
  CHECK(formula::broken_linear(u2, s2, 3, 30) == 8);
  CHECK(formula::broken_linear(u2, s2, 3, 70) == 5);
  CHECK(formula::broken_linear(u2, s2, 3, 110) == 0);
  CHECK_THROWS_AS(requested_to_capacity_ratio({{50, 1}, {40, 2}}), invalid_argument_error);
  CHECK_THROWS_AS(requested_to_capacity_ratio({{0, 11}}), invalid_argument_error);
}

TEST_CASE("scoring.balanced_allocation (balanced_allocation_test.go before PR #135573: BalanceAfter)") {
  // The table from before kubernetes PR #135573 scores the balance after placement; the current
  // default (ChangeInBalance) has its own cases in tests/scoring/test_balanced_allocation.cpp.
  const balanced_allocation s{{}, balance_formula::after};
  auto m = two_nodes(4000, 10000, 6000, 10000);
  CHECK(s.score(m, p3000_5000, 0) == 87);
  CHECK(s.score(m, p3000_5000, 1) == 100);
  m = two_nodes(10000, 20000, 10000, 20000, 3000, 0, 3000, 5000);
  CHECK(s.score(m, p3000_5000, 0) == 82);
  CHECK(s.score(m, p3000_5000, 1) == 95);
  m = two_nodes(0, 0, 0, 0);
  CHECK(s.score(m, make_pod("none"), 0) == 100);
  // Three resources: cpu, memory, GPUs (nvidia.com/gpu); GPUs in milli here.
  archetype::minimal_cluster g;
  g.nodes = {node_state{3500, 3000, 40000, 5000, 8}, node_state{3500, 3000, 40000, 5000, 8}};
  g.gpus.assign(2, std::vector<gpu_device>(8, gpu_device{short_name("V100M32"), 1000, 0, 0, 0, 0}));
  for (int i = 0; i < 3; ++i) g.gpus[0][static_cast<std::size_t>(i)].milli_free = 0;
  const balanced_allocation three{{1, 1, 1}, balance_formula::after};
  CHECK(three.score(g, make_pod("gpu").gpus(1), 0) == 70);
  CHECK(three.score(g, make_pod("gpu").gpus(1), 1) == 65);
}
