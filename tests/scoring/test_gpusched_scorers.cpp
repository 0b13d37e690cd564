#include <doctest/doctest.h>

#include "gpusched/core/in_memory_cluster.hpp"
#include "gpusched/scoring/load_aware.hpp"
#include "gpusched/scoring/model_affinity.hpp"
#include "gpusched/scoring/qos_aware.hpp"
#include "gpusched/scoring/scorer.hpp"
#include "support/builders.hpp"
#include "support/minimal_cluster.hpp"

using namespace gpusched;

static_assert(Scorer<load_aware, archetype::minimal_cluster> && Scorer<model_affinity, archetype::minimal_cluster> &&
              Scorer<qos_aware, archetype::minimal_cluster>);

TEST_CASE("scoring.load_aware with measured usage (Koordinator formula plus GPU)") {
  in_memory_cluster c;
  c.add_node(testing::gpu_node("a", 10000, 10000, 2));
  const node_metrics m{0.30, 0.50, 0.25};
  c.set_load(0, &m);
  const pod p = make_pod("p").cpu(1000).memory(2000).gpu_share(500);
  // cpu: used 3000 + 1000*85% = 3850 -> (10000-3850)*100/10000 = 61
  // mem: used 5000 + 2000*70% = 6400 -> 36; gpu: 0.25*2000 + 500 = 1000 of 2000 -> 50
  CHECK(load_aware{}.score(c, p, 0) == (61 + 36 + 50) / 3);
  CHECK(load_aware{{1, 1, 0}}.score(c, p, 0) == (61 + 36) / 2);
  // A pod assigned after the reading counts at its estimated usage: +2000 CPU -> 3850 + 1700.
  const pod q = make_pod("q").cpu(2000);
  c.reserve(q, make_binding(q, 0, 0));
  CHECK(c.load(0)->assigned_cpu_since == 2000);
  CHECK(load_aware{{1, 0, 0}}.score(c, p, 0) == (10000 - 5550) * 100 / 10000);
  c.set_load(0, &m);  // a fresh reading includes it
  CHECK(c.load(0)->assigned_cpu_since == 0);
}

TEST_CASE("scoring.load_aware falls back to allocation without metrics") {
  archetype::minimal_cluster mc;  // no MeasuredLoad at all
  mc.nodes = {node_state{10000, 4000, 10000, 0, 0}};
  mc.gpus.resize(1);
  // cpu: 4000 + 1000*85% = 4850 -> 51; memory: 0 + 0 -> 100; no GPUs: skipped.
  CHECK(load_aware{}.score(mc, make_pod("p").cpu(1000), 0) == (51 + 100) / 2);
}

TEST_CASE("scoring.model_affinity") {
  in_memory_cluster c;
  for (int i = 0; i < 4; ++i) c.add_node(testing::gpu_node("n" + std::to_string(i), 64000, 65536, 4));
  const pod resnet = make_pod("r").gpu_share(200).model("resnet50");
  const pod bert = make_pod("b").gpu_share(200).model("bert");
  c.reserve(resnet, make_binding(resnet, 1, 1));
  c.reserve(bert, make_binding(bert, 2, 1));
  c.reserve(resnet, make_binding(resnet, 3, 1));
  c.reserve(bert, make_binding(bert, 3, 2));
  model_affinity s;
  s.interfering.emplace_back(short_name("bert"), short_name("resnet50"));
  CHECK(s.score(c, resnet, 0) == 50);   // empty node: neutral
  CHECK(s.score(c, resnet, 1) == 100);  // same model
  CHECK(s.score(c, resnet, 2) == 0);    // interfering model only
  CHECK(s.score(c, resnet, 3) == 50);   // both
  CHECK(model_affinity{}.score(c, resnet, 2) == 50);  // no pairs configured: another model is neutral
  CHECK(s.score(c, make_pod("none").cpu(1), 1) == 50);
  archetype::minimal_cluster mc;
  mc.nodes.resize(1);
  mc.gpus.resize(1);
  CHECK(s.score(mc, resnet, 0) == 50);  // a cluster without served models: neutral
}

TEST_CASE("scoring.qos_aware") {
  in_memory_cluster c;
  c.add_node(testing::gpu_node("n", 64000, 65536, 4));
  const pod used = make_pod("u").gpus(1);
  c.reserve(used, make_binding(used, 0, 1));
  // after placement 1500 of 4000 GPU milli are requested
  CHECK(qos_aware{}.score(c, make_pod("g").gpu_share(500).qos(qos_class::guaranteed), 0) == 62);   // 2500*100/4000
  CHECK(qos_aware{}.score(c, make_pod("be").gpu_share(500).qos(qos_class::best_effort), 0) == 37);  // 1500*100/4000
  CHECK(qos_aware{}.score(c, make_pod("b").gpu_share(500).qos(qos_class::burstable), 0) == 50);
}

TEST_CASE("scoring.default_normalize_score (helper/normalize_score.go)") {
  std::vector<std::int64_t> s{10, 20, 40};
  default_normalize_score(100, false, s);
  CHECK(s == std::vector<std::int64_t>{25, 50, 100});
  s = {10, 20, 40};
  default_normalize_score(100, true, s);
  CHECK(s == std::vector<std::int64_t>{75, 50, 0});
  s = {0, 0};
  default_normalize_score(100, true, s);
  CHECK(s == std::vector<std::int64_t>{100, 100});
}
