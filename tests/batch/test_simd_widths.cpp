// Every SIMD kernel (batch_options::max_lanes 2, 4, 8: the baseline, AVX2 and AVX-512 kernels,
// chosen at run time; each runs where the CPU has it) gives the same totals, and the per-pod
// path's best nodes. scripts or CI force the process-wide width with GPUSCHED_SIMD as well.
#include <doctest/doctest.h>

#include <random>
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
