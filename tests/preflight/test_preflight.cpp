#include <doctest/doctest.h>

#include "gpusched/core/in_memory_cluster.hpp"
#include "gpusched/preflight/gpu_check.hpp"
#include "gpusched/preflight/load_threshold.hpp"
#include "gpusched/preflight/resource_fit.hpp"
#include "support/builders.hpp"
#include "support/minimal_cluster.hpp"

using namespace gpusched;

static_assert(PreflightCheck<gpu_check, in_memory_cluster>);
static_assert(PreflightCheck<resource_fit, archetype::minimal_cluster>);
static_assert(PreflightCheck<load_threshold, archetype::minimal_cluster>);
static_assert(PreflightCheck<gpu_check, archetype::minimal_cluster>);

TEST_CASE("preflight.gpu_check reasons, coarsest first") {
  in_memory_cluster c;
  c.add_node(testing::gpu_node("cpu-only", 8000, 8192, 0));
  c.add_node(testing::gpu_node("t4x2", 8000, 8192, 2, "T4", 16384));
  c.add_node(testing::gpu_node("v100x2", 8000, 8192, 2, "V100M32", 32768));
  const gpu_check k;
  const pod cpu_pod = make_pod("cpu").cpu(100);
  CHECK(k.check(c, cpu_pod, 0) == reason::ok);  // CPU-only pods pass everywhere
  const pod one = make_pod("one").gpus(1);
  CHECK(k.check(c, one, 0) == reason::no_gpu);
  CHECK(k.check(c, one, 1) == reason::ok);
  const pod v100 = make_pod("v").gpus(1).allow_model("V100M32").allow_model("A100");
  CHECK(k.check(c, v100, 1) == reason::gpu_model_not_allowed);
  CHECK(k.check(c, v100, 2) == reason::ok);
  CHECK(k.check(c, make_pod("three").gpus(3), 2) == reason::insufficient_gpu_count);
  // 20 GiB on a 16 GiB T4: the share fits, the memory does not.
  CHECK(k.check(c, make_pod("mem").gpu_share(500).gpu_memory(20480), 1) == reason::insufficient_gpu_memory);
  CHECK(k.check(c, make_pod("mem").gpu_share(500).gpu_memory(20480), 2) == reason::ok);

  // Take 800 milli of V100 #0 and all of #1: a 300 share fits nowhere, a 200 share fits #0.
  const pod a = make_pod("a").gpu_share(800);
  const pod b = make_pod("b").gpus(1);
  c.reserve(a, make_binding(a, 2, 0b01));
  c.reserve(b, make_binding(b, 2, 0b10));
  CHECK(k.check(c, make_pod("s300").gpu_share(300), 2) == reason::insufficient_gpu_share);
  CHECK(k.check(c, make_pod("s200").gpu_share(200), 2) == reason::ok);
  CHECK(k.check(c, one, 2) == reason::insufficient_gpu_share);
}

TEST_CASE("preflight.resource_fit with overcommit ceilings") {
  archetype::minimal_cluster m;
  m.nodes.push_back(node_state{10000, 9000, 1000, 500, 0});
  m.gpus.emplace_back();
  const resource_fit strict;
  CHECK(strict.check(m, make_pod("p").cpu(1000), 0) == reason::ok);  // exactly at capacity
  CHECK(strict.check(m, make_pod("p").cpu(1001), 0) == reason::insufficient_cpu);
  CHECK(strict.check(m, make_pod("p").memory(501), 0) == reason::insufficient_memory);
  const resource_fit over{1200, 1000};  // the seed's 120% for CPU
  CHECK(over.check(m, make_pod("p").cpu(3000), 0) == reason::ok);  // 9000 + 3000 = 12000 = 10000 * 1.2
  CHECK(over.check(m, make_pod("p").cpu(3001), 0) == reason::insufficient_cpu);
  CHECK(over.check(m, make_pod("p").memory(501), 0) == reason::insufficient_memory);
  CHECK(within_ceiling(0, 0, 0, 1000));
  CHECK_FALSE(within_ceiling(0, 1, 0, 1500));
  CHECK(overcommit_ceiling(96000, 1000) == 96000);  // no overcommit: the capacity, no division
  CHECK(overcommit_ceiling(999, 1200) == 1198);     // floor(999 * 1.2 = 1198.8)
  CHECK(overcommit_ceiling(1, 999) == 0);           // floor(0.999)
}

TEST_CASE("preflight.load_threshold filters hot nodes (Koordinator defaults 65% CPU, 95% memory)") {
  in_memory_cluster c;
  c.add_node(testing::gpu_node("a", 8000, 8192, 1));
  const load_threshold k;
  const pod p = make_pod("p").cpu(100);
  CHECK(k.check(c, p, 0) == reason::ok);  // no metrics: passes
  node_metrics m{0.65, 0.95, 1.0};
  c.set_load(0, &m);
  CHECK(k.check(c, p, 0) == reason::ok);  // at the threshold: passes (strictly above fails)
  m.cpu_used = 0.66;
  c.set_load(0, &m);
  CHECK(k.check(c, p, 0) == reason::cpu_load_too_high);
  m = {0.1, 0.96, 0.0};
  c.set_load(0, &m);
  CHECK(k.check(c, p, 0) == reason::memory_load_too_high);
  m = {0.1, 0.1, 0.9};
  c.set_load(0, &m);
  CHECK(load_threshold{0.65, 0.95, 0.8}.check(c, p, 0) == reason::gpu_load_too_high);
}

TEST_CASE("preflight.rejection_counts text") {
  rejection_counts r;
  r.examined = 1213;
  for (int i = 0; i < 804; ++i) r.add(reason::insufficient_gpu_share);
  for (int i = 0; i < 409; ++i) r.add(reason::gpu_model_not_allowed);
  CHECK(r.to_string() == "0/1213 nodes fit: 804 insufficient GPU share, 409 GPU model not allowed");
}
