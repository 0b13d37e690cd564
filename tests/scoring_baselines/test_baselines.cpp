// The FGD paper's baselines against values worked out by hand from the authors' formulas
// (hkust-adsl/kubernetes-scheduler-simulator pkg/simulator/plugin/*_score.go).
#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <vector>

#include "gpusched/core/in_memory_cluster.hpp"
#include "gpusched/schedule/random_gpus.hpp"
#include "gpusched/scoring/fgd_paper/best_fit.hpp"
#include "gpusched/scoring/fgd_paper/dot_product.hpp"
#include "gpusched/scoring/fgd_paper/gpu_clustering.hpp"
#include "gpusched/scoring/fgd_paper/gpu_packing.hpp"
#include "gpusched/scoring/fgd_paper/random_score.hpp"
#include "gpusched/scoring/scorer.hpp"
#include "gpusched/sim/replay_cluster.hpp"
#include "support/builders.hpp"
#include "support/minimal_cluster.hpp"

using namespace gpusched;
using namespace gpusched::fgd_paper;

static_assert(Scorer<dot_product, archetype::minimal_cluster>);
static_assert(Scorer<gpu_packing, archetype::minimal_cluster>);
static_assert(Scorer<best_fit, archetype::minimal_cluster> && NormalizingScorer<best_fit>);
static_assert(Scorer<random_score, archetype::minimal_cluster>);
static_assert(GpuSelector<random_gpus, archetype::minimal_cluster>);
static_assert(!Scorer<gpu_clustering, in_memory_cluster>);  // needs gpu_affinity_of
static_assert(Scorer<gpu_clustering, sim::replay_cluster>);

namespace {
// Reserves a pod that takes `milli` on each listed device of node n.
void use(in_memory_cluster& c, node_index n, milli cpu, std::int32_t milli_each, gpu_set gpus) {
  pod p = make_pod("used").cpu(cpu).gpu_share(milli_each);
  if (milli_each == gpu_milli_whole) p = make_pod("used").cpu(cpu).gpus(std::popcount(gpus));
  c.reserve(p, make_binding(p, n, gpus));
}
}  // namespace

TEST_CASE("baselines.dot_product") {
  in_memory_cluster c;
  c.add_node(testing::gpu_node("a", 64000, 1 << 20, 2));
  c.add_node(testing::gpu_node("b", 128000, 1 << 20, 8));
  c.add_node(testing::gpu_node("c", 4000, 1 << 20, 1));
  use(c, 0, 32000, 500, 0b10);  // a: 32000m CPU left, GPUs {1000, 500}
  const pod share = make_pod("s").cpu(8000).gpu_share(500);
  // [0.25, 0.1875] . [0.0625, 0.0625] = 0.02734375; 100 * (1 - 0.02734375 / 2) = 98.63
  CHECK(dot_product{}.score(c, share, 0) == 98);
  // [1, 1] . [0.5, 0.5] = 1; 100 * (1 - 1/2) = 50
  CHECK(dot_product{}.score(c, make_pod("w").cpu(64000).gpus(4), 1) == 50);
  CHECK(dot_product{}.score(c, share, 2) == 0);  // not enough CPU
}

TEST_CASE("baselines.gpu_packing") {
  in_memory_cluster c;
  c.add_node(testing::gpu_node("idle8", 96000, 1 << 20, 8));
  c.add_node(testing::gpu_node("idle2", 96000, 1 << 20, 2));
  c.add_node(testing::gpu_node("part", 96000, 1 << 20, 4));
  c.add_node(testing::gpu_node("shared", 96000, 1 << 20, 3));
  use(c, 2, 1000, 800, 0b0001);  // part: {200, 1000, 1000, 500}
  use(c, 2, 1000, 500, 0b1000);
  use(c, 3, 1000, 300, 0b001);  // shared: {700, 650, 0}
  use(c, 3, 1000, 350, 0b010);
  use(c, 3, 1000, 1000, 0b100);
  const gpu_packing g;
  CHECK(g.score(c, make_pod("s").cpu(1).gpu_share(300), 0) == 25);  // all free: max(33 - 8, 8)
  CHECK(g.score(c, make_pod("s").cpu(1).gpu_share(300), 1) == 31);  // max(33 - 2, 2)
  CHECK(g.score(c, make_pod("s").cpu(1).gpu_share(300), 2) == 95);  // on the 500 device: 100 - 50/10
  CHECK(g.score(c, make_pod("w").cpu(1).gpus(1), 2) == 49);         // one wholly free device: 50 - 1
  CHECK(g.score(c, make_pod("w").cpu(1).gpus(2), 2) == 48);
  CHECK(g.score(c, make_pod("s").cpu(1).gpu_share(600), 3) == 94);  // the 650 device: 100 - 65/10
  CHECK(g.score(c, make_pod("cpu").cpu(1000), 2) == 0);
}

TEST_CASE("baselines.best_fit and its min-max normalisation") {
  in_memory_cluster c;
  c.add_node(testing::gpu_node("a", 64000, 1 << 20, 2));
  c.add_node(testing::gpu_node("b", 128000, 1 << 20, 8));
  c.add_node(testing::gpu_node("c", 4000, 1 << 20, 1));
  use(c, 0, 32000, 500, 0b10);
  const pod share = make_pod("s").cpu(8000).gpu_share(500);
  // a: 1 - 0.5 * 24000/128000 - 0.5 * 1000/8000 = 0.84375 -> 84
  CHECK(best_fit{}.score(c, share, 0) == 84);
  // b: 1 - 0.5 * 120000/128000 - 0.5 * 7500/8000 = 0.0625 -> 6
  CHECK(best_fit{}.score(c, share, 1) == 6);
  CHECK(best_fit{}.score(c, share, 2) == -1);
  std::array<std::int64_t, 3> s = {84, 6, 50};
  best_fit::normalize(s);
  CHECK(s == std::array<std::int64_t, 3>{100, 0, 56});  // (50 - 6) * 100 / 78 = 56
  std::array<std::int64_t, 2> same = {7, 7};
  best_fit::normalize(same);
  CHECK(same == std::array<std::int64_t, 2>{0, 0});
}

TEST_CASE("baselines.gpu_clustering reads the node's GPU affinity tags") {
  CHECK(gpu_affinity_tag(make_pod("c").cpu(1)) == 0);
  CHECK(gpu_affinity_tag(make_pod("s").cpu(1).gpu_share(300)) == 1);
  CHECK(gpu_affinity_tag(make_pod("w").cpu(1).gpus(1)) == 2);
  CHECK(gpu_affinity_tag(make_pod("w").cpu(1).gpus(8)) == 9);

  std::vector<node_spec> nodes = {
      testing::gpu_node("empty8", 96000, 1 << 20, 8), testing::gpu_node("share8", 96000, 1 << 20, 8),
      testing::gpu_node("mixed8", 96000, 1 << 20, 8), testing::gpu_node("empty2", 96000, 1 << 20, 2)};
  sim::replay_cluster c = sim::make_replay_cluster(nodes);
  const pod share = make_pod("s").cpu(1000).gpu_share(300);
  const pod share2 = make_pod("s2").cpu(1000).gpu_share(300);
  const pod whole = make_pod("w").cpu(1000).gpus(1);
  c.reserve(share, make_binding(share, 1, 0b1));
  c.reserve(share2, make_binding(share2, 2, 0b1));
  c.reserve(whole, make_binding(whole, 2, 0b10));
  c.reserve(make_pod("cpu").cpu(1000), binding{2, 0, 1000, 0, 0, 0});  // CPU-only pods carry no tag
  CHECK(gpu_affinity_of(c, 2).distinct == 2);
  const gpu_clustering g;
  CHECK(g.score(c, share, 0) == 25);                          // no GPU pod yet: 25 * 0 / 8000 + 25
  CHECK(g.score(c, share, 1) == 75);                          // only its own tag: 25 * 300 / 8000 = 0, + 75
  CHECK(g.score(c, share, 2) == 54);                          // its tag among others: 25 * 1300 / 8000 = 4, + 50
  CHECK(g.score(c, make_pod("two").cpu(1).gpus(2), 2) == 4);  // other tags only
  CHECK(g.score(c, share, 3) == 43);                          // 2-GPU node: 25 * 6000 / 8000 = 18, + 25
  CHECK(g.score(c, make_pod("cpu").cpu(1), 1) == 0);
  c.release(share, make_binding(share, 1, 0b1));
  CHECK(gpu_affinity_of(c, 1).distinct == 0);
  CHECK(g.score(c, share, 1) == 25);
}

TEST_CASE("baselines.random: every node alike, devices drawn among those that fit") {
  in_memory_cluster c;
  c.add_node(testing::gpu_node("n", 8000, 1 << 20, 4));
  use(c, 0, 100, 800, 0b0010);  // {1000, 200, 1000, 1000}
  CHECK(random_score{}.score(c, make_pod("s").cpu(1).gpu_share(300), 0) == 0);
  const pod share = make_pod("s").cpu(1).gpu_share(300);
  random_gpus a(7), b(7);
  std::array<int, 4> hits{};
  for (int i = 0; i < 3000; ++i) {
    const gpu_set g = a.select(c, share, 0);
    REQUIRE(g == b.select(c, share, 0));  // same seed, same draws
    REQUIRE(std::popcount(g) == 1);
    ++hits[static_cast<std::size_t>(std::countr_zero(g))];
  }
  CHECK(hits[1] == 0);                                                     // 200 free: never
  for (int g : {0, 2, 3}) CHECK(hits[static_cast<std::size_t>(g)] > 850);  // ~1000 each
  CHECK(a.select(c, make_pod("w").cpu(1).gpus(2), 0) == 0b0101);           // whole GPUs: lowest free indices
}
