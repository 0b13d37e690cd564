#include <doctest/doctest.h>

#include "gpusched/core/in_memory_cluster.hpp"
#include "gpusched/schedule/gpu_selection.hpp"
#include "gpusched/scoring/fill_aware.hpp"
#include "support/builders.hpp"
#include "support/minimal_cluster.hpp"
#include "support/typical_workloads.hpp"

using namespace gpusched;

static_assert(Scorer<fill_aware_scorer, archetype::minimal_cluster>);
static_assert(GpuSelector<fill_aware_scorer, archetype::minimal_cluster>);

namespace {
using testing::half_and_half;
}  // namespace

TEST_CASE("fill_aware.hole waste table, hand-computed") {
  // Q(h) = 0 below 500, 0.5 from 500. kappa 1: L = 0.5 from 500.
  const auto e1 = hole_waste_table(half_and_half(), 1.0);
  CHECK(e1[0] == 0.0);
  CHECK(e1[499] == doctest::Approx(499));
  CHECK(e1[500] == doctest::Approx(250));   // 0.5 * 500 + 0.5 * E(0)
  CHECK(e1[700] == doctest::Approx(450));   // 0.5 * 700 + 0.5 * E(200)
  CHECK(e1[1000] == doctest::Approx(625));  // 0.5 * 1000 + 0.5 * E(500)
  // kappa 4: every hole of 500 or more is refilled.
  const auto e4 = hole_waste_table(half_and_half(), 4.0);
  CHECK(e4[500] == doctest::Approx(0));
  CHECK(e4[700] == doctest::Approx(200));
  CHECK(e4[1000] == doctest::Approx(0));
  CHECK_THROWS_AS(hole_waste_table(half_and_half(), -1.0), invalid_argument_error);
}

TEST_CASE("fill_aware.CPU stranding") {
  CHECK(mean_cpu_per_gpu(half_and_half()) == doctest::Approx(2000));  // 1000m CPU per half GPU
  CHECK(cpu_stranded_gpu_milli(1500, 2000, 2000) == doctest::Approx(500));
  CHECK(cpu_stranded_gpu_milli(1500, 4000, 2000) == 0.0);
  CHECK(cpu_stranded_gpu_milli(1500, -10, 2000) == doctest::Approx(1500));  // overcommitted CPU
}

TEST_CASE("fill_aware.scores and devices, hand-computed") {
  in_memory_cluster c;
  c.add_node(testing::gpu_node("n", 5000, 1 << 20, 2));
  const pod used = make_pod("u").cpu(1000).gpu_share(300);
  c.reserve(used, make_binding(used, 0, 0b10));  // free {1000, 700}, 4000m CPU left
  const fill_aware_scorer f(half_and_half(), fill_aware_options{1.0, 0.5, 0.0});
  const pod share = make_pod("s").cpu(1000).gpu_share(500);
  // device 0 saves E(1000) - E(500) = 375, device 1 saves E(700) - E(200) = 250; no CPU stranded.
  CHECK(f.select(c, share, 0) == 0b01);
  CHECK(f.score(c, share, 0) == 1'000'375'000);
  // A CPU-only pod of 3000m leaves 1000m for 1700 milli of GPU: 1200 stranded, cost 0.5 * 1200.
  CHECK(f.score(c, make_pod("c").cpu(3000), 0) == 999'400'000);
  CHECK(f.select(c, make_pod("c").cpu(3000), 0) == 0);
  // A whole GPU: device 0, saves E(1000) - E(0) = 625; CPU 3000 left serves 1500 >= 700.
  CHECK(f.select(c, make_pod("w").cpu(1000).gpus(1), 0) == 0b01);
  CHECK(f.score(c, make_pod("w").cpu(1000).gpus(1), 0) == 1'000'625'000);
  CHECK(f.score(c, make_pod("t4").cpu(1).gpu_share(100).allow_model("T4"), 0) == 0);
  CHECK_THROWS_AS(fill_aware_scorer(half_and_half(), fill_aware_options{50, -1, 0}), invalid_argument_error);
}
