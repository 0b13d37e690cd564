// The division the batch engines use is integer division on its stated domain; the hashed
// tie-break is uniform over tied nodes and shared by schedule_one.
#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "gpusched/batch/simd.hpp"
#include "gpusched/core/in_memory_cluster.hpp"
#include "gpusched/preflight/gpu_check.hpp"
#include "gpusched/profile/static_profile.hpp"
#include "gpusched/schedule/schedule_one.hpp"
#include "gpusched/schedule/tie_break.hpp"
#include "gpusched/scoring/formulas.hpp"
#include "gpusched/scoring/load_aware.hpp"
#include "support/builders.hpp"

using namespace gpusched;

namespace {
std::int64_t by_reciprocal(std::int64_t num, std::int64_t den) {
  const formula::reciprocal_division<double> d{1.0 / static_cast<double>(den)};
  return static_cast<std::int64_t>(d(static_cast<double>(num), static_cast<double>(den)));
}
}  // namespace

TEST_CASE("formula.reciprocal_division equals integer division: exhaustive for small divisors") {
  std::int64_t wrong = 0;
  for (std::int64_t den = 1; den <= 600; ++den) {
    for (std::int64_t num = 0; num <= 128 * den; ++num) wrong += by_reciprocal(num, den) != num / den ? 1 : 0;
  }
  CHECK(wrong == 0);
}

// least_requested_prepared against Kubernetes' leastRequestedScore in integers (least_requested,
// checked against upstream's own expected values in tests/scoring): the batch form must agree on
// every input of the domain, requests above capacity and no capacity included.
static std::int64_t prepared_form(std::int64_t base, std::int64_t request, std::int64_t capacity) {
  const double free_scaled = static_cast<double>((capacity - base) * formula::max_score) + 0.5;
  const double rcp = capacity == 0 ? 0.0 : 1.0 / static_cast<double>(capacity);
  return static_cast<std::int64_t>(
      formula::least_requested_prepared(free_scaled, static_cast<double>(request * formula::max_score), rcp));
}

TEST_CASE("formula.least_requested_prepared equals leastRequestedScore: exhaustive small, random up to 2^40") {
  std::int64_t wrong = 0;
  for (std::int64_t cap = 0; cap <= 120; ++cap) {
    for (std::int64_t base = 0; base <= 130; ++base) {
      for (std::int64_t req = 0; req <= 130; ++req) wrong += prepared_form(base, req, cap) != formula::least_requested(base + req, cap) ? 1 : 0;
    }
  }
  CHECK(wrong == 0);
  CHECK(prepared_form(3000, 850, 10000) == 61);  // 6150 * 100 / 10000: the hand-computed LoadAware CPU term
  CHECK(prepared_form(9000, 2000, 10000) == 0);  // above capacity
  CHECK(prepared_form(0, 5, 0) == 0);            // no capacity
  std::mt19937_64 rng(5);
  const auto lim = static_cast<std::uint64_t>(formula::reciprocal_domain_limit);
  for (int i = 0; i < 200000; ++i) {
    const auto cap = static_cast<std::int64_t>(rng() % lim);
    const auto base = static_cast<std::int64_t>(rng() % (static_cast<std::uint64_t>(cap) + 1));
    const auto req = static_cast<std::int64_t>(rng() % (lim - static_cast<std::uint64_t>(base)));
    wrong += prepared_form(base, req, cap) != formula::least_requested(base + req, cap) ? 1 : 0;
  }
  CHECK(wrong == 0);
}

TEST_CASE("formula.reciprocal_division equals integer division: boundaries up to 2^40") {
  std::mt19937_64 rng(1);
  std::int64_t wrong = 0, checked = 0;
  for (int i = 0; i < 200000; ++i) {
    const std::int64_t den = 1 + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(formula::reciprocal_domain_limit));
    const std::int64_t q = static_cast<std::int64_t>(rng() % 101);
    for (std::int64_t num : {q * den, q * den - 1, q * den + 1, q * den + den / 2, q * den + den - 1}) {
      if (num < 0) continue;
      wrong += by_reciprocal(num, den) != num / den ? 1 : 0;
      ++checked;
    }
  }
  CHECK(checked > 900000);
  CHECK(wrong == 0);
  // The largest divisor and the largest numerators of the formulas.
  const std::int64_t big = formula::reciprocal_domain_limit;
  CHECK(by_reciprocal(100 * big, big) == 100);
  CHECK(by_reciprocal(100 * big - 1, big) == 99);
  CHECK(by_reciprocal(big - 1, big) == 0);
}

TEST_CASE("formula templates give the same values on int64, double and SIMD lanes") {
  // leastRequestedScore of Kubernetes' least_allocated_test.go: requested 3000 of 4000 -> 25.
  CHECK(formula::least_requested(3000, 4000) == 25);
  CHECK(formula::least_requested_with(3000.0, 4000.0, formula::reciprocal_division<double>{1.0 / 4000}) == 25.0);
  CHECK(formula::least_requested(5000, 4000) == 0);
  CHECK(formula::most_requested(5000, 4000) == 100);
  CHECK(formula::most_requested_with(3000.0, 0.0, formula::reciprocal_division<double>{0.0}) == 0.0);
#if GPUSCHED_BATCH_SIMD
  using V = batch::simd_double;
  V req{}, cap{}, rcp{};
  std::array<std::int64_t, batch::simd_lanes> want{};
  for (std::uint32_t l = 0; l < batch::simd_lanes; ++l) {
    const std::int64_t r = 1000 * static_cast<std::int64_t>(l), cp = 2500 + 700 * static_cast<std::int64_t>(l % 3);
    req[l] = static_cast<double>(r);
    cap[l] = static_cast<double>(cp);
    rcp[l] = 1.0 / static_cast<double>(cp);
    want[l] = formula::least_requested(r, cp);
  }
  const V got = formula::least_requested_with(req, cap, formula::reciprocal_division<V>{rcp});
  for (std::uint32_t l = 0; l < batch::simd_lanes; ++l) CHECK(static_cast<std::int64_t>(got[l]) == want[l]);
#endif
}

TEST_CASE("schedule_one with tie_break_rule::hashed: the tied node with the largest key, spread by seed") {
  in_memory_cluster c;
  for (int i = 0; i < 4; ++i) c.add_node(testing::gpu_node("n" + std::to_string(i), 8000, 8192, 0));
  auto prof = make_profile(checks(gpu_check{}), scores(weighted{load_aware{}, 1}));
  const pod p = make_pod("tied").cpu(100);
  std::array<int, 4> hits{};
  for (std::uint64_t seed = 0; seed < 4000; ++seed) {
    const schedule_result r = schedule_one(p, c, prof, {100, seed, false, tie_break_rule::hashed});
    REQUIRE(r.scheduled);
    // The expected node, worked out from the rule itself: the largest tie_key among the four.
    node_index want = 0;
    for (node_index n = 1; n < 4; ++n) {
      if (tie_key(seed, pod_tie_key("tied"), n) > tie_key(seed, pod_tie_key("tied"), want)) want = n;
    }
    CHECK(r.where.node == want);
    ++hits[r.where.node];
  }
  for (int h : hits) CHECK(h > 850);  // 1000 expected each; 850 is more than 4 standard deviations away
  // The same seed, another queue position: the same choice (keys depend on the name, not the order).
  const schedule_result a = schedule_one(p, c, prof, {100, 9, false, tie_break_rule::hashed});
  scheduler<in_memory_cluster, decltype(prof)> s(prof, {100, 9, false, tie_break_rule::hashed});
  (void)s.schedule_one(c, make_pod("other").cpu(100));
  CHECK(s.schedule_one(c, p).where.node == a.where.node);
}

#if GPUSCHED_BATCH_SIMD
// The 4-lane truncation for x >= 0 by rounding (batch/simd.hpp; the kernels' form where vroundpd
// is not available to them: -O0, -Os, -fno-inline and Clang builds) against std::trunc: the
// boundaries (integers, ties of round-to-nearest-even on both sides, values just below an
// integer, the top of its domain) and random values up to 2^51.
TEST_CASE("batch.simd: truncation by rounding equals std::trunc for 0 <= x < 2^51") {
  using V = batch::simd<4>::f64;
  std::vector<double> xs{0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.5, 3.5, 99.5, 100.0, std::nextafter(1.0, 0.0), std::nextafter(3.0, 0.0),
                         std::nextafter(100.0, 0.0), 1e-300, 0x1p51 - 0.5, 0x1p51 - 1.0, 0x1p50 + 0.5};
  std::mt19937_64 rng(51);
  std::uniform_real_distribution<double> small(0.0, 1100.0), large(0.0, 0x1p51);
  for (int i = 0; i < 20000; ++i) xs.push_back(i % 2 ? small(rng) : large(rng));
  while (xs.size() % 4 != 0) xs.push_back(7.0);
  int wrong = 0;
  for (std::size_t i = 0; i < xs.size(); i += 4) {
    const V x{xs[i], xs[i + 1], xs[i + 2], xs[i + 3]};
    const V t = batch::truncate_nonnegative_by_rounding(x);
    for (int l = 0; l < 4; ++l) {
      if (t[l] != std::trunc(x[l]) && ++wrong < 5) FAIL_CHECK("x = " << x[l] << ": " << t[l]);
    }
  }
  CHECK(wrong == 0);
}
#endif
