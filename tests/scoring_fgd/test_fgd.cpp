#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "gpusched/core/in_memory_cluster.hpp"
#include "gpusched/preflight/gpu_check.hpp"
#include "gpusched/preflight/resource_fit.hpp"
#include "gpusched/profile/static_profile.hpp"
#include "gpusched/schedule/schedule_one.hpp"
#include "gpusched/scoring/fgd.hpp"
#include "support/builders.hpp"
#include "support/minimal_cluster.hpp"
#include "support/typical_workloads.hpp"

using namespace gpusched;

static_assert(Scorer<fgd_scorer, in_memory_cluster>);
static_assert(Scorer<fgd_scorer, archetype::minimal_cluster>);
static_assert(GpuSelector<fgd_scorer, in_memory_cluster>);
static_assert(GpuSelector<fgd_scorer, archetype::minimal_cluster>);

namespace {

using testing::half_and_half;

// Node a: 2 GPUs with 1000 and 300 free, 4000m CPU left (F = 0.5*300 + 0.5*1300 = 800).
// Node b: 2 free GPUs, 5000m CPU left (F = 0 + 0.5*2000 = 1000).
in_memory_cluster two_nodes() {
  in_memory_cluster c;
  c.add_node(testing::gpu_node("a", 5000, 100000, 2));
  c.add_node(testing::gpu_node("b", 5000, 100000, 2));
  const pod used = make_pod("used").cpu(1000).gpu_share(700);
  c.reserve(used, make_binding(used, 0, 0b10));
  return c;
}

}  // namespace

TEST_CASE("fgd.score and device choice, hand-computed") {
  in_memory_cluster c = two_nodes();
  const fgd_scorer fgd(half_and_half());
  CHECK(fgd.node_fragmentation(c, 0) == doctest::Approx(800));
  CHECK(fgd.node_fragmentation(c, 1) == doctest::Approx(1000));

  const pod share = make_pod("s").cpu(1000).gpu_share(300);
  // On a: device 0 -> F 650 (score 53), device 1 -> F 500 (score 57): the node scores 57 on device 1.
  CHECK(fgd.score(c, share, 0) == 57);
  CHECK(fgd.select(c, share, 0) == 0b10);
  // On b: both devices give F 850 (score 53); the first one wins.
  CHECK(fgd.score(c, share, 1) == 53);
  CHECK(fgd.select(c, share, 1) == 0b01);

  const pod whole = make_pod("w").cpu(1000).gpus(1);
  CHECK(fgd.score(c, whole, 0) == 62);  // device 0 taken: F 300
  CHECK(fgd.select(c, whole, 0) == 0b01);

  const pod cpu_only = make_pod("c").cpu(3500);
  // CPU left 500 < 1000: the share shape can no longer use a's GPUs: F 1300, score 100*sigmoid(-0.5) = 37.
  CHECK(fgd.score(c, cpu_only, 0) == 37);
  CHECK(fgd.select(c, cpu_only, 0) == 0);

  const pod t4 = make_pod("t4").cpu(100).gpu_share(100).allow_model("T4");
  CHECK(fgd.score(c, t4, 0) == 0);
  CHECK(fgd.select(c, t4, 0) == 0);

  // The cache follows the cluster: after the share pod lands on a's device 1 (a = {1000, 0}, CPU 3000),
  // device 0 is the only candidate: F 500 -> 350, score 53.
  c.reserve(share, make_binding(share, 0, 0b10));
  CHECK(fgd.node_fragmentation(c, 0) == doctest::Approx(500));
  CHECK(fgd.score(c, share, 0) == 53);
  CHECK(fgd.select(c, share, 0) == 0b01);
}

TEST_CASE("fgd.fine score keeps the fraction") {
  const in_memory_cluster c = two_nodes();
  const fgd_scorer fine(half_and_half(), fgd_options{true});
  const pod share = make_pod("s").cpu(1000).gpu_share(300);
  CHECK(fine.score(c, share, 0) == 57'444'252);  // 100 * sigmoid(0.3) = 57.4442517
  CHECK(fine.score(c, share, 1) == 53'742'985);  // 100 * sigmoid(0.15)
}

TEST_CASE("fgd.in a static profile with schedule_one") {
  in_memory_cluster c = two_nodes();
  const fgd_scorer fgd(half_and_half());
  const auto prof = make_profile(checks(resource_fit{}, gpu_check{}), scores(weighted{fgd, 1}), fgd);
  scheduler<in_memory_cluster, decltype(prof)> s(prof);
  const pod share = make_pod("s").cpu(1000).gpu_share(300);
  const schedule_result r = s.place_one(c, share);
  REQUIRE(r.scheduled);
  CHECK(r.where.node == 0);
  CHECK(r.where.gpus == 0b10);
  CHECK(c.gpus(0)[1].milli_free == 0);
}

TEST_CASE("fgd.the cache agrees with direct evaluation along a placement sequence") {
  in_memory_cluster c;
  for (int i = 0; i < 24; ++i) {
    c.add_node(testing::gpu_node("n" + std::to_string(i), 32000 + 16000 * (i % 3), 200000, 1 + i % 8,
                                 i % 4 == 0 ? "T4" : "V100M32"));
  }
  std::vector<pod> kinds = {make_pod("a").cpu(4000).gpu_share(250),
                            make_pod("b").cpu(8000).gpu_share(500),
                            make_pod("c").cpu(12000).gpus(1),
                            make_pod("d").cpu(2000).gpus(2),
                            make_pod("e").cpu(6000),
                            make_pod("f").cpu(1000).gpu_share(700).allow_model("T4"),
                            make_pod("g").cpu(16000).gpus(4)};
  const auto w = std::make_shared<const typical_workload>(typical_workload::from_pods(kinds));
  const fgd_scorer cached(w);
  const fgd_scorer direct(w, fgd_options{false, 0});
  std::mt19937 rng(7);
  int placed = 0;
  for (int step = 0; step < 300; ++step) {
    const pod& p = kinds[rng() % kinds.size()];
    std::int64_t best = -1;
    node_index where = 0;
    for (node_index n = 0; n < c.size(); ++n) {
      const std::int64_t s = cached.score(c, p, n);
      REQUIRE(s == direct.score(c, p, n));
      if (gpu_check{}.check(c, p, n) == reason::ok && resource_fit{}.check(c, p, n) == reason::ok && s > best) {
        best = s;
        where = n;
      }
    }
    if (best < 0) continue;
    const gpu_set g = cached.select(c, p, where);
    REQUIRE(g == direct.select(c, p, where));
    c.reserve(p, make_binding(p, where, g));
    ++placed;
  }
  CHECK(placed > 50);
}
