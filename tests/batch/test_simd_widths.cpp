// Every SIMD kernel (batch_options::max_lanes 2, 4, 8: the baseline, AVX2 and AVX-512 kernels,
// chosen at run time; each runs where the CPU has it) gives the same totals, and the per-pod
// path's best nodes. scripts or CI force the process-wide width with GPUSCHED_SIMD as well.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <initializer_list>
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

namespace {
// The score matrix of `prof` over the tables at every kernel width (2, 4, 8 lanes) and each tile
// size, with pods grouped `block` at a time, handed to check(m).
template <class Profile, class Check>
void scores_at_every_width(const Profile& prof, const batch::node_table& t, const batch::pod_table& pt,
                           std::initializer_list<std::uint32_t> tiles, std::uint32_t block, Check&& check) {
  for (std::uint32_t lanes : {2U, 4U, 8U}) {
    for (std::uint32_t tile : tiles) {
      CAPTURE(lanes);
      CAPTURE(tile);
      auto engine = batch::make_batch_scorer(prof, {1, 0, tile, block, lanes});
      engine.prepare(t);
      batch::score_matrix m;
      engine.scores(pt, m);
      check(m);
    }
  }
}
}  // namespace

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
  scores_at_every_width(prof, t, pt, {16U, 512U}, 3, [&](const batch::score_matrix& m) {
    for (std::size_t i = 0; i < rows.size(); ++i) {
      for (int n = 0; n < 20; ++n) {
        CAPTURE(i);
        CAPTURE(n);
        CHECK((m(static_cast<Eigen::Index>(i), n) >= 0) == rows[i].fits[static_cast<std::size_t>(n % 6)]);
      }
    }
  });
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

// The scorers' lane forms as the fused kernel runs them: LoadAware's weighted mean with weights of 1
// (its sum without multiplications) and with other weights, and ModelAffinity with its plugin weight
// folded into the formula. Four node kinds, repeated over 20 nodes (full vectors of every width and
// the scalar tail; tiles of 6 and 512), no measured load, so LoadAware reads the allocation:
//   A: 10 cores, 10000 MiB, 2 GPUs (2000 milli), nothing running
//   B: as A without GPUs (LoadAware leaves the GPU out of the weight sum: no capacity)
//   C: as A, running a "bert" pod of 4000 milli-CPU and 2000 MiB (interferes with resnet50)
//   D: as A, running a "resnet50" pod with no requests (serves the pod's own model type)
// Pod p (cpu 2000, memory 4000, half a GPU, model resnet50) is estimated at 1700 milli-CPU (85%),
// 2800 MiB (70%) and 500 milli (100%); per resource, (capacity - used - estimate) * 100 / capacity:
//   A, D: cpu 83, memory 72, GPU 75     B: cpu 83, memory 72     C: cpu 43, memory 52, GPU 75
// Weights 1,1,1: A, D 230/3 = 76; B 155/2 = 77; C 170/3 = 56.
// Weights 1,2,3: A, D (83 + 144 + 225)/6 = 75; B (83 + 144)/3 = 75; C (43 + 104 + 225)/6 = 62.
// ModelAffinity: A, B 50; C 50 - 50 = 0; D 50 + 50 = 100; pod q (p without a model type) 50 on all.
// Totals: LoadAware x 10 + ModelAffinity x 5.
TEST_CASE("batch.simd: LoadAware and ModelAffinity lane forms, unit and other weights, worked by hand") {
  in_memory_cluster c;
  for (int i = 0; i < 20; ++i) {
    const int kind = i % 4;
    const auto n = c.add_node(testing::gpu_node("n" + std::to_string(i), 10000, 10000, kind == 1 ? 0 : 2, "T4", 16384));
    if (kind == 2) {
      const pod r = make_pod("r" + std::to_string(i)).cpu(4000).memory(2000).model("bert");
      c.reserve(r, make_binding(r, n, 0));
    }
    if (kind == 3) {
      const pod r = make_pod("r" + std::to_string(i)).model("resnet50");
      c.reserve(r, make_binding(r, n, 0));
    }
  }
  const std::vector<pod> ps{make_pod("p").cpu(2000).memory(4000).gpu_share(500).model("resnet50"),
                            make_pod("q").cpu(2000).memory(4000).gpu_share(500)};
  model_affinity m;
  m.interfering.emplace_back(short_name("resnet50"), short_name("bert"));
  struct weights_case {
    resource_weights w;
    std::array<std::int32_t, 4> load;  // LoadAware by node kind
  };
  for (const weights_case& wc : {weights_case{{1, 1, 1}, {76, 77, 56, 76}}, weights_case{{1, 2, 3}, {75, 75, 62, 75}}}) {
    auto prof = make_profile(checks(resource_fit{}), scores(weighted{load_aware{wc.w}, 10}, weighted{m, 5}));
    batch::node_table t(c);
    batch::pod_table pt(ps, t);
    const std::array<std::int32_t, 4> affinity_p{50, 50, 0, 100};
    CAPTURE(wc.w.gpu);
    scores_at_every_width(prof, t, pt, {6U, 512U}, 2, [&](const batch::score_matrix& got) {
      for (int n = 0; n < 20; ++n) {
        CAPTURE(n);
        const auto kind = static_cast<std::size_t>(n % 4);
        CHECK(got(0, n) == wc.load[kind] * 10 + affinity_p[kind] * 5);
        CHECK(got(1, n) == wc.load[kind] * 10 + 50 * 5);
      }
    });
  }
}

// top_k's lists against an oracle: every node's total from scores(), ordered by score, then the
// larger tie key, then the lower index (batch::better), the first k kept. Many ties (totals are
// multiples of 5 and nodes repeat), k of 1, 3, 40 and past the feasible count, tiles cutting the lists.
TEST_CASE("batch.simd: top_k lists equal the sorted score rows at every width, tile and k") {
  std::mt19937_64 rng(46);
  const in_memory_cluster c = testing::random_cluster(rng, 300);  // 300 = 4 * 64 + 5 * 8 + 4: every branch of the marks
  const std::vector<pod> ps = testing::random_pods(rng, 24);
  model_affinity m;
  m.interfering.emplace_back(short_name("resnet50"), short_name("bert"));
  auto prof = make_profile(checks(gpu_check{}, resource_fit{}), scores(weighted{load_aware{}, 10}, weighted{m, 5}));
  batch::node_table t(c);
  batch::pod_table pt(ps, t);
  constexpr std::uint64_t seed = 46;
  for (std::uint32_t lanes : {2U, 4U, 8U}) {
    for (std::uint32_t tile : {64U, 512U}) {
      auto engine = batch::make_batch_scorer(prof, {1, seed, tile, 4, lanes});
      engine.prepare(t);
      batch::score_matrix totals;
      engine.scores(pt, totals);
      for (std::size_t k : {std::size_t{1}, std::size_t{3}, std::size_t{40}, std::size_t{300}}) {
        CAPTURE(lanes);
        CAPTURE(tile);
        CAPTURE(k);
        batch::top_k_result top;
        engine.top_k(pt, k, top);
        for (std::size_t i = 0; i < ps.size(); ++i) {
          std::vector<batch::candidate> want;
          for (std::uint32_t n = 0; n < c.size(); ++n) {
            const std::int32_t total = totals(static_cast<Eigen::Index>(i), n);
            if (total >= 0) want.push_back({total, n, tie_key(seed, pt.tie_keys()[static_cast<Eigen::Index>(i)], n)});
          }
          CHECK(top.feasible(i) == want.size());
          std::sort(want.begin(), want.end(), [](const batch::candidate& a, const batch::candidate& b) { return batch::better(a, b); });
          if (want.size() > k) want.resize(k);
          const auto got = top.candidates(i);
          CHECK(std::vector<batch::candidate>(got.begin(), got.end()) == want);
        }
      }
    }
  }
  // k = 0 is refused by name, on the one-pod path as on top_k.
  auto engine = batch::make_batch_scorer(prof, {1, seed, 512, 4});
  engine.prepare(t);
  batch::top_k_result top;
  CHECK_THROWS_WITH_AS(engine.top_k(pt, 0, top), doctest::Contains("top_k.k"), invalid_argument_error);
  batch::candidate one{};
  std::uint32_t feasible = 0;
  CHECK_THROWS_WITH_AS(engine.top_k_one(engine.make_check_args(pt, 0), engine.make_score_args(pt, 0), 0, 0, &one, feasible),
                       doctest::Contains("top_k_one.k"), invalid_argument_error);
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
