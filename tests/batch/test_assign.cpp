// Greedy rounds and min-cost flow: hand-worked cases, and the stated relation to schedule_one.
#include <doctest/doctest.h>

#include <random>
#include <vector>

#include "gpusched/batch/assign_flow.hpp"
#include "gpusched/batch/assign_greedy.hpp"
#include "gpusched/core/in_memory_cluster.hpp"
#include "gpusched/preflight/gpu_check.hpp"
#include "gpusched/preflight/resource_fit.hpp"
#include "gpusched/profile/static_profile.hpp"
#include "gpusched/schedule/schedule_one.hpp"
#include "gpusched/scoring/fgd.hpp"
#include "gpusched/scoring/load_aware.hpp"
#include "gpusched/scoring/model_affinity.hpp"
#include "gpusched/scoring/node_resources.hpp"
#include "random_workload.hpp"
#include "support/builders.hpp"

using namespace gpusched;

namespace {

auto cpu_spread_profile() {
  return make_profile(checks(resource_fit{}), scores(weighted{least_allocated{{1, 0, 0}}, 1}));
}

model_affinity affinity() {
  model_affinity m;
  m.interfering.emplace_back(short_name("resnet50"), short_name("bert"));
  return m;
}

// Places the pods one by one, in `order`, with schedule_one (hashed tie-break, same seed) and
// checks each lands where the batch assignment put it, with the same devices and score.
template <class Profile>
void check_sequential_equivalence(const Profile& prof, in_memory_cluster c, const std::vector<pod>& pods,
                                  const batch::assignment& a, std::uint64_t seed) {
  scheduler<in_memory_cluster, Profile> s(prof, {100, seed, false, tie_break_rule::hashed});
  for (std::uint32_t p : a.order) {
    const schedule_result r = s.place_one(c, pods[p]);
    REQUIRE(r.scheduled);
    CHECK(r.where == a.bindings[p]);
    CHECK(r.score == a.score[p]);
  }
  // A pod left unplaced fits nowhere once the others are placed.
  for (std::size_t p = 0; p < pods.size(); ++p) {
    if (a.node[p] == batch::assignment::unplaced) CHECK_FALSE(s.schedule_one(c, pods[p]).scheduled);
  }
}

}  // namespace

TEST_CASE("batch.assign_greedy: a contested node goes to the higher priority; the other moves on") {
  // Two nodes of 10 cores; node b already has 5 cores allocated. LeastAllocated on CPU only:
  // a 1-core pod scores (10000 - 1000) * 100 / 10000 = 90 on a and (10000 - 6000) * 100 / 10000 = 40
  // on b. Both pods propose a; `high` (priority 9) wins it in round 1, `low` (priority 1) waits.
  // Round 2: a now has 1 core allocated, so low scores 80 there, still above 40: low goes to a too.
  in_memory_cluster c;
  c.add_node(testing::gpu_node("a", 10000, 1000, 0));
  c.add_node(testing::gpu_node("b", 10000, 1000, 0));
  const pod filler = make_pod("filler").cpu(5000);
  c.reserve(filler, make_binding(filler, 1, 0));
  const std::vector<pod> pods{make_pod("low").cpu(1000).priority(1), make_pod("high").cpu(1000).priority(9)};
  batch::node_table t(c);
  batch::pod_table pt(pods, t);
  auto engine = batch::make_batch_scorer(cpu_spread_profile());
  engine.prepare(t);
  const batch::assignment a = batch::assign_greedy(engine, t, pods, pt);
  CHECK(a.rounds == 2);
  CHECK(a.order == std::vector<std::uint32_t>{1, 0});
  CHECK(a.node == std::vector<std::int32_t>{0, 0});
  CHECK(a.score == std::vector<std::int32_t>{80, 90});
  CHECK(t.cpu_allocated()[0] == 2000);
  check_sequential_equivalence(cpu_spread_profile(), c, pods, a, 0);
}

TEST_CASE("batch.assign_greedy: a pod that fits nowhere stays unplaced") {
  in_memory_cluster c;
  c.add_node(testing::gpu_node("a", 4000, 1000, 1));
  const std::vector<pod> pods{make_pod("w1").cpu(1000).gpus(1).priority(3), make_pod("w2").cpu(1000).gpus(1).priority(7),
                              make_pod("big").cpu(8000)};
  batch::node_table t(c);
  batch::pod_table pt(pods, t);
  auto engine = batch::make_batch_scorer(make_profile(checks(gpu_check{}, resource_fit{}), scores(weighted{least_allocated{}, 1})));
  engine.prepare(t);
  const batch::assignment a = batch::assign_greedy(engine, t, pods, pt);
  CHECK(a.node == std::vector<std::int32_t>{batch::assignment::unplaced, 0, batch::assignment::unplaced});
  CHECK(a.placed() == 1);
  CHECK(t.milli_free()(0, 0) == 0);
}

TEST_CASE("batch.assign_greedy equals schedule_one placing the pods one by one in commit order") {
  for (std::uint64_t seed = 20; seed < 24; ++seed) {
    std::mt19937_64 rng(seed);
    const in_memory_cluster c = testing::random_cluster(rng, 60);
    const std::vector<pod> pods = testing::random_pods(rng, 150);  // more than fit: contention
    SUBCASE("seed profile") {
      auto prof = make_profile(checks(gpu_check{}, resource_fit{}),
                               scores(weighted{load_aware{}, 10}, weighted{affinity(), 5}));
      batch::node_table t(c);
      batch::pod_table pt(pods, t);
      auto engine = batch::make_batch_scorer(prof, {2, seed, 16, 4});
      engine.prepare(t);
      const batch::assignment a = batch::assign_greedy(engine, t, pods, pt, {3, false});
      CHECK(a.placed() > 0);
      CHECK(a.class_rows);
      check_sequential_equivalence(prof, c, pods, a, seed);
    }
    SUBCASE("seed profile, no class rows (each pod re-scores)") {
      auto prof = make_profile(checks(gpu_check{}, resource_fit{}),
                               scores(weighted{load_aware{}, 10}, weighted{affinity(), 5}));
      batch::node_table t(c);
      batch::pod_table pt(pods, t);
      auto engine = batch::make_batch_scorer(prof, {2, seed, 16, 4});
      engine.prepare(t);
      const batch::assignment a = batch::assign_greedy(engine, t, pods, pt, {2, false, 0});
      CHECK_FALSE(a.class_rows);
      check_sequential_equivalence(prof, c, pods, a, seed);
    }
    SUBCASE("FGD: its scores and its own device choice") {
      const fgd_scorer fgd(typical_workload::from_pods(pods));
      auto prof = make_profile(checks(gpu_check{}, resource_fit{}), scores(weighted{fgd, 1}), fgd);
      batch::node_table t(c);
      batch::pod_table pt(pods, t);
      auto engine = batch::make_batch_scorer(prof, {2, seed, 16, 4});
      engine.prepare(t);
      const batch::assignment a = batch::assign_greedy(engine, t, pods, pt, {3, false});
      CHECK(a.placed() > 0);
      check_sequential_equivalence(prof, c, pods, a, seed);
    }
    SUBCASE("bin packing, one commit per round") {
      auto prof = make_profile(checks(gpu_check{}, resource_fit{}), scores(weighted{most_allocated{{1, 1, 2}}, 3}));
      batch::node_table t(c);
      batch::pod_table pt(pods, t);
      auto engine = batch::make_batch_scorer(prof, {1, seed, 32, 2});
      engine.prepare(t);
      const batch::assignment a = batch::assign_greedy(engine, t, pods, pt, {2, true});
      CHECK(a.rounds >= a.placed());
      // One commit per round: the committed pods' priorities never increase (fits only shrink, so
      // a pod that could not be placed earlier cannot be placed later).
      for (std::size_t i = 1; i < a.order.size(); ++i) CHECK(pods[a.order[i - 1]].priority >= pods[a.order[i]].priority);
      check_sequential_equivalence(prof, c, pods, a, seed);
    }
  }
}

// Enough nodes for many 32-node chunks per class row and a small cache, so that a class's k-th best
// total is found through the chunk maxima (the bound used when k <= chunks), not the full count.
TEST_CASE("batch.assign_greedy: class rows over many chunks still equal schedule_one") {
  for (std::uint64_t seed = 30; seed < 32; ++seed) {
    std::mt19937_64 rng(seed);
    const in_memory_cluster c = testing::random_cluster(rng, 700);
    const std::vector<pod> pods = testing::random_pods(rng, 500);
    auto prof = make_profile(checks(gpu_check{}, resource_fit{}), scores(weighted{load_aware{}, 10}, weighted{affinity(), 5}));
    batch::node_table t(c);
    batch::pod_table pt(pods, t);
    auto engine = batch::make_batch_scorer(prof, {1, seed, 64, 8});
    engine.prepare(t);
    const batch::assignment a = batch::assign_greedy(engine, t, pods, pt, {2, false});
    CHECK(a.class_rows);
    CHECK(a.full_rescans > 0);  // candidates ran out: classes ranked their rows again
    check_sequential_equivalence(prof, c, pods, a, seed);
  }
}

TEST_CASE("batch.assign_min_cost_flow: feasible, and at least as good as greedy on a case greedy gets wrong") {
  // Two pods, two nodes. Node a suits both best, but `choosy` fits only on a; `easy` fits both
  // (b has no GPU). Greedy: easy has the higher priority and takes a; choosy is left out. The flow
  // places easy on b and choosy on a.
  in_memory_cluster c;
  c.add_node(testing::gpu_node("a", 10000, 10000, 1));
  c.add_node(testing::gpu_node("b", 8000, 10000, 0));
  const std::vector<pod> pods{make_pod("easy").cpu(6000).priority(5), make_pod("choosy").cpu(6000).gpus(1).priority(4)};
  auto prof = make_profile(checks(gpu_check{}, resource_fit{}), scores(weighted{least_allocated{{1, 0, 0}}, 1}));
  {
    batch::node_table t(c);
    batch::pod_table pt(pods, t);
    auto engine = batch::make_batch_scorer(prof);
    engine.prepare(t);
    const batch::assignment g = batch::assign_greedy(engine, t, pods, pt);
    CHECK(g.node == std::vector<std::int32_t>{0, batch::assignment::unplaced});
  }
  batch::node_table t(c);
  batch::pod_table pt(pods, t);
  auto engine = batch::make_batch_scorer(prof);
  engine.prepare(t);
  const batch::flow_assignment f = batch::assign_min_cost_flow(engine, t, pods, pt);
  CHECK(f.node == std::vector<std::int32_t>{1, 0});
  CHECK(f.flow_placed == 2);
  // easy on b: (8000 - 6000) * 100 / 8000 = 25; choosy on a: (10000 - 6000) * 100 / 10000 = 40.
  CHECK(f.score == std::vector<std::int32_t>{25, 40});
}

TEST_CASE("batch.assign_min_cost_flow: every placement fits (random workloads)") {
  for (std::uint64_t seed = 30; seed < 33; ++seed) {
    std::mt19937_64 rng(seed);
    in_memory_cluster c = testing::random_cluster(rng, 50);
    const std::vector<pod> pods = testing::random_pods(rng, 120);
    auto prof = make_profile(checks(gpu_check{}, resource_fit{}), scores(weighted{load_aware{}, 10}, weighted{affinity(), 5}));
    batch::node_table t(c);
    batch::pod_table pt(pods, t);
    auto engine = batch::make_batch_scorer(prof, {1, seed, 64, 4});
    engine.prepare(t);
    const batch::flow_assignment f = batch::assign_min_cost_flow(engine, t, pods, pt, {4, {}});
    // Reserving every binding on the host cluster, in order, succeeds and passes every check.
    for (std::uint32_t p : f.order) {
      reason r = reason::ok;
      prof.filter(c, pods[p], f.bindings[p].node, 1, &r);
      CHECK(r == reason::ok);
      c.reserve(pods[p], f.bindings[p]);
    }
    CHECK(f.placed() == f.order.size());
    CHECK(f.placed() > 0);
  }
}

TEST_CASE("batch.assign_greedy: a cluster with no nodes leaves every pod unplaced") {
  const in_memory_cluster c;
  const std::vector<pod> pods{make_pod("a").cpu(1000).gpus(1), make_pod("b").cpu(1000).gpus(1)};
  batch::node_table t(c);
  batch::pod_table pt(pods, t);
  auto engine = batch::make_batch_scorer(make_profile(checks(gpu_check{}, resource_fit{}), scores(weighted{least_allocated{}, 1})));
  engine.prepare(t);
  for (const bool one_per_round : {false, true}) {
    const batch::assignment a = batch::assign_greedy(engine, t, pods, pt, {2, one_per_round});
    CHECK(a.node == std::vector<std::int32_t>{batch::assignment::unplaced, batch::assignment::unplaced});
    CHECK(a.placed() == 0);
  }
}
