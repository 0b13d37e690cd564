// FillAware's refill chance per sharing pod (fill_aware_options::fill_per_sharing_pod; ADR 0017,
// "Amendment 2"): kappa = fill_per_sharing_pod / P_share. Values worked by hand from the header's
// E(h) = (1 - L(h)) h + L(h) sum_{s <= h} q(s) E(h - s) / Q(h), L(h) = min(1, kappa Q(h)).
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "gpusched/core/in_memory_cluster.hpp"
#include "gpusched/scoring/fill_aware.hpp"
#include "support/builders.hpp"

using namespace gpusched;

namespace {
// A sharing shape (500 milli) at 0.5, a whole-GPU shape at 0.25, a CPU-only shape at 0.25.
typical_workload half_sharing() {
  typical_pod s, w, c;
  s.cpu_milli = 1000, s.gpu_milli = 500, s.num_gpu = 1, s.probability = 0.5;
  w.cpu_milli = 1000, w.gpu_milli = 1000, w.num_gpu = 1, w.probability = 0.25;
  c.cpu_milli = 1000, c.probability = 0.25;
  return typical_workload({s, w, c});
}
fill_aware_options per_sharing_pod(double v) {
  fill_aware_options o;
  o.fill_per_sharing_pod = v;
  o.cpu_weight = 0.0;  // the hole term alone
  return o;
}
}  // namespace

TEST_CASE("P_share and the effective kappa") {
  CHECK(sharing_pod_share(half_sharing()) == doctest::Approx(0.5));
  // kappa = 1.0 / 0.5 = 2; off (0) keeps fill_competition.
  CHECK(effective_fill_competition(half_sharing(), per_sharing_pod(1.0)) == doctest::Approx(2.0));
  CHECK(effective_fill_competition(half_sharing(), per_sharing_pod(0.0)) == 50.0);
  // Whole GPUs only: no sharing pod makes a hole, so no hole has a competitor: kappa unbounded.
  typical_pod w;
  w.gpu_milli = 1000, w.num_gpu = 1, w.probability = 1.0;
  CHECK(sharing_pod_share(typical_workload({w})) == 0.0);
  CHECK(effective_fill_competition(typical_workload({w}), per_sharing_pod(1.0)) ==
        std::numeric_limits<double>::max());
  // The default policy's value: 50 on a workload whose P_share is the default trace's 0.3732.
  CHECK(refill_fill_per_sharing_pod / 0.3732 == doctest::Approx(50.0));
}

TEST_CASE("the hole table under kappa = fill_per_sharing_pod / P_share") {
  // fill_per_sharing_pod 0.5, P_share 0.5: kappa 1. q(500) = 0.5, q(1000) = 0.25.
  const fill_aware_scorer f(half_sharing(), per_sharing_pod(0.5));
  const auto e = f.hole_waste();
  CHECK(e[499] == doctest::Approx(499));  // no shape fits: never refilled
  // E(500): Q = 0.5, L = 0.5: 0.5 x 500 + 0.5 x E(0) = 250.
  CHECK(e[500] == doctest::Approx(250));
  // E(700): L = 0.5: 0.5 x 700 + 0.5 x (0.5 E(200) / 0.5) = 350 + 100 = 450.
  CHECK(e[700] == doctest::Approx(450));
  // E(1000): Q = 0.75, L = 0.75: 0.25 x 1000 + 0.75 x (0.5 E(500) + 0.25 E(0)) / 0.75 = 250 + 125 = 375.
  CHECK(e[1000] == doctest::Approx(375));
  // fill_per_sharing_pod 1.0: kappa 2, L = 1 wherever a shape fits: E(500) = E(1000) = 0, E(700) = E(200) = 200.
  const fill_aware_scorer g(half_sharing(), per_sharing_pod(1.0));
  CHECK(g.hole_waste()[500] == doctest::Approx(0));
  CHECK(g.hole_waste()[700] == doctest::Approx(200));
  CHECK(g.hole_waste()[1000] == doctest::Approx(0));
  // The same table as fill_competition = 2 given directly.
  fill_aware_options direct;
  direct.fill_competition = 2.0;
  const fill_aware_scorer d(half_sharing(), direct);
  for (int h = 0; h <= 1000; ++h) CHECK(g.hole_waste()[static_cast<std::size_t>(h)] == d.hole_waste()[static_cast<std::size_t>(h)]);
}

TEST_CASE("a sharing pod's score under the scaled refill chance") {
  const fill_aware_scorer f(half_sharing(), per_sharing_pod(0.5));
  in_memory_cluster c;
  c.add_node(testing::gpu_node("n", 8000, 1 << 20, 1));
  const pod p = make_pod("p").cpu(1000).memory(1024).gpu_share(500);
  // One free GPU: saved = E(1000) - E(500) = 375 - 250 = 125; score (1e6 + 125) x 1000.
  CHECK(f.score(c, p, 0) == 1'000'125'000);
}

TEST_CASE("fill_per_sharing_pod must be a finite number >= 0") {
  CHECK_THROWS_AS(fill_aware_scorer(half_sharing(), per_sharing_pod(-1.0)), invalid_argument_error);
  CHECK_THROWS_WITH(fill_aware_scorer(half_sharing(), per_sharing_pod(std::nan(""))),
                    doctest::Contains("fill_per_sharing_pod"));
}
