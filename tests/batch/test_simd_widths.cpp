// Every SIMD kernel (batch_options::max_lanes 2, 4, 8: the baseline, AVX2 and AVX-512 kernels,
// chosen at run time; each runs where the CPU has it) gives the same totals, and the per-pod
// path's best nodes. scripts or CI force the process-wide width with GPUSCHED_SIMD as well.
#include <doctest/doctest.h>

#include <array>
#include <random>
#include <string>
#include <vector>

#include "gpusched/batch/batch_scorer.hpp"
#include "gpusched/core/in_memory_cluster.hpp"
#include "gpusched/preflight/gpu_check.hpp"
#include "gpusched/preflight/resource_fit.hpp"
#include "gpusched/profile/static_profile.hpp"
#include "gpusched/schedule/schedule_one.hpp"
#include "gpusched/scoring/load_aware.hpp"
#include "gpusched/scoring/model_affinity.hpp"
#include "gpusched/scoring/node_resources.hpp"
#include "gpusched/scoring/qos_aware.hpp"
#include "random_workload.hpp"
#include "support/builders.hpp"

using namespace gpusched;


TEST_CASE("batch.simd: every SIMD width gives the per-pod path's totals and best nodes") {
  std::mt19937_64 rng(44);
  const in_memory_cluster c = testing::random_cluster(rng, 300);
  const std::vector<pod> ps = testing::random_pods(rng, 40);
  model_affinity m;
  m.interfering.emplace_back(short_name("resnet50"), short_name("bert"));
  auto prof = make_profile(checks(gpu_check{}, resource_fit{}),
                           scores(weighted{load_aware{}, 10}, weighted{m, 5}, weighted{most_allocated{{1, 1, 1}}, 2}, weighted{qos_aware{}, 3}));
  batch::node_table t(c);
  batch::pod_table pt(ps, t);
  std::vector<batch::score_matrix> got;
  for (std::uint32_t lanes : {2U, 4U, 8U}) {
    auto engine = batch::make_batch_scorer(prof, {1, 44, 64, 4, lanes});
    CAPTURE(lanes);
#if GPUSCHED_BATCH_SIMD
    // Never wider than asked; the 2-lane kernel is always there.
    CHECK(engine.lanes() <= lanes);
    if (lanes == 2) CHECK(engine.lanes() == 2);
    MESSAGE("kernel lanes: " << engine.lanes());
#endif
    engine.prepare(t);
    batch::score_matrix mm;
    engine.scores(pt, mm);
    got.push_back(mm);
    batch::top_k_result top;
    engine.top_k(pt, 1, top);
    scheduler<in_memory_cluster, decltype(prof)> s(prof, {100, 44, false, tie_break_rule::hashed});
    for (std::size_t i = 0; i < ps.size(); ++i) {
      const schedule_result r = s.schedule_one(c, ps[i]);
      if (r.scheduled) {
        CHECK(top.best(i).node == r.where.node);
        CHECK(top.best(i).score == r.score);
      } else {
        CHECK(top.candidates(i).empty());
      }
    }
  }
  CHECK((got[0] == got[1]).all());
  CHECK((got[0] == got[2]).all());
}

// GPUCheck in the fused kernel reads a per-tile summary of the devices (largest free share, least
// free memory, wholly free devices and their least free memory) where it decides every node of the
// tile, and the device loop elsewhere. Six node kinds (devices as free share / free memory MiB,
// 16384 MiB each), repeated over 20 nodes so that full vectors and the scalar tail both meet them:
//   k0: 2 GPUs, 1000/16384 x2          k1: 2 GPUs, 400/6384 and 1000/16384
//   k2: 1 GPU, 700/14384               k3: no GPU
//   k4: 4 GPUs, 1000/16384 x4          k5: 1 GPU, 700/6384
// The tile's least free memory is 6384 (k1, k5); of a wholly free device 16384.
TEST_CASE("batch.simd: GPUCheck through the tile summary and through the device loop, worked by hand") {
  in_memory_cluster c;
  const int gpus_of[6] = {2, 2, 1, 0, 4, 1};
  for (int i = 0; i < 20; ++i) {
    const int kind = i % 6;
    const auto n = c.add_node(testing::gpu_node("n" + std::to_string(i), 64000, 256 * 1024, gpus_of[kind], "T4", 16384));
    auto share = [&](std::int32_t milli, std::int32_t mem) {  // a running share on device 0
      const pod r = make_pod("r" + std::to_string(i)).gpu_share(milli).gpu_memory(mem);
      c.reserve(r, make_binding(r, n, gpu_set{1}));
    };
    if (kind == 1) share(600, 10000);
    if (kind == 2) share(300, 2000);
    if (kind == 5) share(300, 10000);
  }
  struct row {
    pod p;
    std::array<bool, 6> fits;  // by node kind
  };
  const std::vector<row> rows{
      // one partial share, memory within every device's (6000 <= 6384): the summary decides; the
      // largest free share covers 500 everywhere with a GPU
      {make_pod("a").gpu_share(500).gpu_memory(6000), {true, true, true, false, true, true}},
      // 7000 MiB is above the tile's least (6384): the loop; k5's only device lacks it
      {make_pod("b").gpu_share(500).gpu_memory(7000), {true, true, true, false, true, false}},
      // a share of 800: only nodes with a device of 1000 free
      {make_pod("c").gpu_share(800).gpu_memory(100), {true, true, false, false, true, false}},
      // two whole GPUs: the wholly free devices (k1 has one)
      {make_pod("d").gpus(2).gpu_memory(16384), {true, false, false, false, true, false}},
      // one whole GPU
      {make_pod("e").gpus(1), {true, true, false, false, true, false}},
      // two shares of 400 (the loop): k1's 400/6384 counts with 100 MiB, not with 7000
      {make_pod("f").gpu_share(400, 2).gpu_memory(100), {true, true, false, false, true, false}},
      {make_pod("g").gpu_share(400, 2).gpu_memory(7000), {true, false, false, false, true, false}},
      // a model the cluster lacks (the loop, model bits), and a CPU-only pod
      {make_pod("h").gpu_share(100).allow_model("A100"), {false, false, false, false, false, false}},
      {make_pod("i").cpu(1000), {true, true, true, true, true, true}},
  };
  std::vector<pod> ps;
  for (const row& r : rows) ps.push_back(r.p);
  auto prof = make_profile(checks(gpu_check{}), scores(weighted{least_allocated{}, 1}));
  batch::node_table t(c);
  batch::pod_table pt(ps, t);
  for (std::uint32_t lanes : {2U, 4U, 8U}) {
    for (std::uint32_t tile : {16U, 512U}) {
      CAPTURE(lanes);
      CAPTURE(tile);
      auto engine = batch::make_batch_scorer(prof, {1, 0, tile, 3, lanes});
      engine.prepare(t);
      batch::score_matrix m;
      engine.scores(pt, m);
      for (std::size_t i = 0; i < rows.size(); ++i) {
        for (int n = 0; n < 20; ++n) {
          CAPTURE(i);
          CAPTURE(n);
          CHECK((m(static_cast<Eigen::Index>(i), n) >= 0) == rows[i].fits[static_cast<std::size_t>(n % 6)]);
        }
      }
    }
  }
}

// The lane forms read a 64-bit sign through the upper 32-bit word of each lane (high_words): values
// at and above 2^31, within the engines' 2^40 domain, and GPU-model bits above 31 tell the upper
// word from the lower one.
TEST_CASE("batch.simd: ResourceFit and GPU-model masks at 2^31 and above, worked by hand") {
  in_memory_cluster c;
  constexpr std::int64_t big = std::int64_t{1} << 33;  // milli-CPU of every fourth node
  for (int i = 0; i < 40; ++i) {  // node i has the only GPU of model "g<i>": model bit i
    c.add_node(testing::gpu_node("n" + std::to_string(i), i % 4 == 0 ? big : 64000, 256 * 1024, 1, ("g" + std::to_string(i)).c_str(), 16384));
  }
  struct row {
    pod p;
    bool (*fits)(int node);
  };
  const std::vector<row> rows{
      // 2^32 + 1000 milli: only the 2^33 nodes (elsewhere the shortfall's lower word is positive)
      {make_pod("huge").cpu((std::int64_t{1} << 32) + 1000), [](int n) { return n % 4 == 0; }},
      // 1000 milli fits everywhere (on the 2^33 nodes the room's lower word is negative)
      {make_pod("small").cpu(1000), [](int) { return true; }},
      // model bits 35 and 5: only that node (bit 35's lower word is zero)
      {make_pod("g35").gpu_share(100).allow_model("g35"), [](int n) { return n == 35; }},
      {make_pod("g5").gpu_share(100).allow_model("g5"), [](int n) { return n == 5; }},
      {make_pod("g35-or-g36").gpu_share(100).allow_model("g35").allow_model("g36"), [](int n) { return n == 35 || n == 36; }},
  };
  std::vector<pod> ps;
  for (const row& r : rows) ps.push_back(r.p);
  auto prof = make_profile(checks(gpu_check{}, resource_fit{}), scores(weighted{least_allocated{}, 1}));
  batch::node_table t(c);
  batch::pod_table pt(ps, t);
  for (std::uint32_t lanes : {2U, 4U, 8U}) {
    CAPTURE(lanes);
    auto engine = batch::make_batch_scorer(prof, {1, 0, 512, 3, lanes});
    engine.prepare(t);
    batch::score_matrix m;
    engine.scores(pt, m);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      for (int n = 0; n < 40; ++n) {
        CAPTURE(i);
        CAPTURE(n);
        CHECK((m(static_cast<Eigen::Index>(i), n) >= 0) == rows[i].fits(n));
      }
    }
  }
}

#if GPUSCHED_BATCH_SIMD
TEST_CASE("batch.simd: GPUSCHED_SIMD names a width cap; anything else is an error naming it") {
  CHECK(batch::simd_lanes_cap("") == 0);
  CHECK(batch::simd_lanes_cap("baseline") == 2);
  CHECK(batch::simd_lanes_cap("avx2") == 4);
  CHECK(batch::simd_lanes_cap("avx512") == 8);
  CHECK_THROWS_WITH_AS(batch::simd_lanes_cap("sse9"), doctest::Contains("GPUSCHED_SIMD"), invalid_argument_error);
  const std::uint32_t w = batch::runtime_simd_lanes();
  CHECK((w == 2 || w == 4 || w == 8));
  CHECK(w <= batch::cpu_simd_lanes());
}
#endif
