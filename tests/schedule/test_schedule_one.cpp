#include <doctest/doctest.h>

#include <array>
#include <random>

#include "gpusched/core/in_memory_cluster.hpp"
#include "gpusched/preflight/gpu_check.hpp"
#include "gpusched/preflight/resource_fit.hpp"
#include "gpusched/profile/dynamic_profile.hpp"
#include "gpusched/profile/static_profile.hpp"
#include "gpusched/schedule/schedule_one.hpp"
#include "gpusched/scoring/load_aware.hpp"
#include "gpusched/scoring/model_affinity.hpp"
#include "gpusched/scoring/node_resources.hpp"
#include "support/builders.hpp"
#include "support/minimal_cluster.hpp"

using namespace gpusched;

namespace {
auto seed_profile() {
  return make_profile(checks(gpu_check{}, resource_fit{}), scores(weighted{load_aware{}, 10}, weighted{model_affinity{}, 5}));
}
using seed_profile_t = decltype(seed_profile());

in_memory_cluster random_cluster(std::mt19937_64& rng, int nodes) {
  in_memory_cluster c;
  const std::array<const char*, 3> models{"V100M32", "T4", "A10"};
  for (int i = 0; i < nodes; ++i) {
    const int gpus = static_cast<int>(rng() % 9);
    c.add_node(testing::gpu_node("n" + std::to_string(i), 1000 * static_cast<milli>(4 + rng() % 60),
                                 1024 * static_cast<mib>(8 + rng() % 200), gpus, models[rng() % 3],
                                 gpus ? 16384 : 0));
  }
  return c;
}
pod random_pod(std::mt19937_64& rng, int i) {
  auto b = make_pod("p" + std::to_string(i)).cpu(static_cast<milli>(rng() % 16000)).memory(static_cast<mib>(rng() % 65536));
  switch (rng() % 4) {
    case 0: break;
    case 1: b.gpu_share(static_cast<std::int32_t>(1 + rng() % 999)).gpu_memory(static_cast<std::int32_t>(rng() % 12000)); break;
    case 2: b.gpus(static_cast<std::int32_t>(1 + rng() % 8)); break;
    default: b.gpus(1).allow_model("T4"); break;
  }
  return b.model(rng() % 2 ? "resnet50" : "bert");
}
}  // namespace

TEST_CASE("schedule.num_feasible_nodes_to_find (schedule_one.go)") {
  CHECK(num_feasible_nodes_to_find(50, 10) == 10);       // fewer than 100 nodes: all
  CHECK(num_feasible_nodes_to_find(0, 1000) == 420);     // 50 - 1000/125 = 42%
  CHECK(num_feasible_nodes_to_find(0, 5000) == 500);     // 50 - 40 = 10%
  CHECK(num_feasible_nodes_to_find(0, 10000) == 500);    // max(5%, 50 - 80)
  CHECK(num_feasible_nodes_to_find(0, 100000) == 5000);  // 5%
  CHECK(num_feasible_nodes_to_find(10, 500) == 100);     // 50 < minFeasibleNodesToFind
  CHECK(num_feasible_nodes_to_find(100, 777) == 777);
}

TEST_CASE("schedule.explains an unschedulable pod") {
  in_memory_cluster c;
  c.add_node(testing::gpu_node("t4", 8000, 8192, 2, "T4"));
  c.add_node(testing::gpu_node("v100-a", 8000, 8192, 1));
  c.add_node(testing::gpu_node("v100-b", 8000, 8192, 1));
  const pod p = make_pod("p").gpus(2).allow_model("V100M32");
  const schedule_result r = schedule_one(p, c, seed_profile());
  CHECK_FALSE(r.scheduled);
  CHECK(r.explain() == "0/3 nodes fit: 2 too few GPUs of an allowed model, 1 GPU model not allowed");
}

TEST_CASE("schedule.chooses by weighted sum and explains the choice") {
  in_memory_cluster c;
  c.add_node(testing::gpu_node("busy", 10000, 10000, 2));
  c.add_node(testing::gpu_node("idle", 10000, 10000, 2));
  const pod filler = make_pod("f").cpu(6000).memory(6000).gpus(1).model("bert");
  c.reserve(filler, make_binding(filler, 0, 1));
  scheduler<in_memory_cluster, seed_profile_t> s(seed_profile(), {100, 1, true});
  const pod p = make_pod("p").cpu(1000).memory(1000).gpu_share(500).model("bert");
  const schedule_result r = s.schedule_one(c, p);
  REQUIRE(r.scheduled);
  // No metrics: LoadAware uses allocation. busy: cpu 6000+850 -> 31, mem 6000+700 -> 33, gpu 1500/2000 -> 25 => 29;
  // ModelAffinity 100 (bert runs there). idle: cpu 850 -> 91, mem 700 -> 93, gpu 500 -> 75 => 86; affinity 50.
  // busy = 29*10 + 100*5 = 790; idle = 86*10 + 50*5 = 1110.
  CHECK(c.name(r.where.node) == "idle");
  CHECK(r.score == 1110);
  REQUIRE(r.breakdown.size() == 2);
  CHECK(r.breakdown[0].plugin == "LoadAware");
  CHECK(r.breakdown[0].score == 86);
  CHECK(r.breakdown[1].score == 50);
  CHECK(r.explain("idle") == "2/2 nodes fit; chose idle with score 1110 (LoadAware 86x10 + ModelAffinity 50x5)");
  CHECK(r.where.gpus == 0b01);  // best fit: both free, lowest index
}

TEST_CASE("schedule.best_fit_gpus picks the fullest device that fits") {
  in_memory_cluster c;
  c.add_node(testing::gpu_node("n", 64000, 65536, 4));
  const pod a = make_pod("a").gpu_share(600), b = make_pod("b").gpu_share(300), w = make_pod("w").gpus(1);
  c.reserve(a, make_binding(a, 0, 0b0010));  // GPU1: 400 free
  c.reserve(b, make_binding(b, 0, 0b0100));  // GPU2: 700 free
  c.reserve(w, make_binding(w, 0, 0b0001));  // GPU0: 0 free
  const best_fit_gpus sel;
  CHECK(sel.select(c, make_pod("s").gpu_share(400), 0) == 0b0010);
  CHECK(sel.select(c, make_pod("s").gpu_share(500), 0) == 0b0100);
  CHECK(sel.select(c, make_pod("s").gpus(1), 0) == 0b1000);
  CHECK(sel.select(c, make_pod("s").gpus(2), 0) == 0);
  CHECK(sel.select(c, make_pod("s").gpu_share(300, 2), 0) == 0b0110);
}

TEST_CASE("schedule.never places a pod where a check fails; counts add up") {
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    std::mt19937_64 rng(seed);
    in_memory_cluster c = random_cluster(rng, 40);
    scheduler<in_memory_cluster, seed_profile_t> s(seed_profile(), {100, seed, false});
    const gpu_check gc;
    const resource_fit rf;
    for (int i = 0; i < 60; ++i) {
      const pod p = random_pod(rng, i);
      const in_memory_cluster before = c;
      const schedule_result r = s.schedule_one(c, p);
      CHECK(c == before);  // deciding changes nothing
      std::uint32_t sum = 0;
      for (auto n : r.rejections.by_reason) sum += n;
      CHECK(sum == r.rejections.examined);
      CHECK(r.rejections.examined == 40);
      if (r.scheduled) {
        CHECK(gc.check(c, p, r.where.node) == reason::ok);
        CHECK(rf.check(c, p, r.where.node) == reason::ok);
        CHECK(r.where.gpu_count() == p.num_gpu);
        c.reserve(p, r.where);
      } else {
        CHECK(r.rejections.fits() == 0);
      }
    }
  }
}

TEST_CASE("schedule.same seed gives the same decisions; ties are spread by the seed") {
  std::mt19937_64 rng(7);
  const in_memory_cluster start = random_cluster(rng, 30);
  std::vector<pod> pods;
  for (int i = 0; i < 80; ++i) pods.push_back(random_pod(rng, i));
  auto run = [&](std::uint64_t seed) {
    in_memory_cluster c = start;
    scheduler<in_memory_cluster, seed_profile_t> s(seed_profile(), {100, seed, false});
    std::vector<binding> out;
    for (const pod& p : pods) out.push_back(s.place_one(c, p).where);
    return out;
  };
  CHECK(run(3) == run(3));

  // Three identical empty nodes tie; reservoir sampling picks each with probability 1/3.
  in_memory_cluster three;
  for (int i = 0; i < 3; ++i) three.add_node(testing::gpu_node("n" + std::to_string(i), 8000, 8192, 1));
  std::array<int, 3> hits{};
  for (std::uint64_t seed = 0; seed < 3000; ++seed) {
    ++hits[schedule_one(make_pod("p").cpu(1).build(), three, seed_profile(), {100, seed, false}).where.node];
  }
  for (int h : hits) CHECK((h > 850 && h < 1150));  // 1000 expected; +-150 is over 5 standard deviations
}

TEST_CASE("schedule.percentage_of_nodes_to_score rotates the start like Kubernetes") {
  in_memory_cluster c;
  for (int i = 0; i < 1000; ++i) c.add_node(testing::gpu_node("n" + std::to_string(i), 8000, 8192, 1));
  scheduler<in_memory_cluster, seed_profile_t> s(seed_profile(), {0, 1, false});
  const pod p = make_pod("p").cpu(1);
  schedule_result r = s.schedule_one(c, p);
  CHECK(r.rejections.examined == 420);
  CHECK(r.feasible == 420);
  CHECK(r.where.node < 420);
  r = s.schedule_one(c, p);  // continues at node 420
  CHECK(r.where.node >= 420);
  CHECK(r.where.node < 840);
  CHECK_THROWS_AS((scheduler<in_memory_cluster, seed_profile_t>(seed_profile(), {101, 0, false})), invalid_argument_error);
}

TEST_CASE("schedule.static and dynamic profiles decide identically") {
  std::mt19937_64 rng(11);
  const in_memory_cluster start = random_cluster(rng, 50);
  dynamic_profile<in_memory_cluster> dyn;
  dyn.add_check(gpu_check{}).add_check(resource_fit{}).add_score(load_aware{}, 10).add_score(model_affinity{}, 5);
  in_memory_cluster a = start, b = start;
  scheduler<in_memory_cluster, seed_profile_t> s1(seed_profile(), {100, 5, false});
  scheduler<in_memory_cluster, dynamic_profile<in_memory_cluster>> s2(dyn, {100, 5, false});
  for (int i = 0; i < 100; ++i) {
    const pod p = random_pod(rng, i);
    const auto r1 = s1.place_one(a, p);
    const auto r2 = s2.place_one(b, p);
    CHECK(r1.scheduled == r2.scheduled);
    CHECK(r1.where == r2.where);
    CHECK(r1.score == r2.score);
    CHECK(r1.rejections.by_reason == r2.rejections.by_reason);
  }
  CHECK(a == b);
  CHECK_THROWS_AS(dyn.add_score(least_allocated{}, 0), invalid_argument_error);
  CHECK_THROWS_AS(dyn.add_score(least_allocated{}, 101), invalid_argument_error);
}

TEST_CASE("schedule.works on the archetype cluster") {
  archetype::minimal_cluster m;
  m.nodes = {node_state{8000, 0, 8192, 0, 2}, node_state{8000, 4000, 8192, 0, 2}};
  m.gpus.assign(2, std::vector<gpu_device>(2, gpu_device{short_name("T4"), 1000, 16384, 16384, 0, 0}));
  auto prof = make_profile(checks(gpu_check{}, resource_fit{}),
                           scores(weighted{least_allocated{}, 1}, weighted{load_aware{}, 10}, weighted{model_affinity{}, 5}));
  scheduler<archetype::minimal_cluster, decltype(prof)> s(prof);
  const pod p = make_pod("p").cpu(1000).gpus(2);
  const auto r = s.place_one(m, p);
  REQUIRE(r.scheduled);
  CHECK(r.where.node == 0);  // less allocated
  CHECK(m.gpus[0][0].milli_free == 0);
  CHECK(m.gpus[0][1].milli_free == 0);
  CHECK(s.place_one(m, p).scheduled);  // node 1 still has two GPUs
  CHECK_FALSE(s.place_one(m, p).scheduled);
}
