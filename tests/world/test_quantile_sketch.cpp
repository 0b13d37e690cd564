// DDSketch (sim/world/quantile_sketch.hpp): relative error <= alpha on known distributions.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numeric>
#include <random>
#include <vector>

#include "gpusched/sim/world/quantile_sketch.hpp"

using namespace gpusched;
using namespace gpusched::sim::world;

namespace {

// The order statistic DDSketch's quantile targets: x_(floor(q (n - 1))), 0-based, of sorted data.
double order_statistic(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(std::floor(q * static_cast<double>(v.size() - 1)))];
}

void check_relative_error(const std::vector<double>& data, double alpha) {
  quantile_sketch s(alpha, 1e-6, 1e7);  // the exponential's minimum of 1e5 draws is below 1e-3
  for (double x : data) s.add(x);
  REQUIRE(s.clamped() == 0);
  for (double q : {0.0, 0.25, 0.5, 0.9, 0.95, 0.99, 0.999, 1.0}) {
    const double truth = order_statistic(data, q);
    CAPTURE(q);
    CHECK(std::abs(s.quantile(q) - truth) <= alpha * truth * (1 + 1e-12));
  }
}

}  // namespace

TEST_CASE("bucket count and one value, by hand") {
  // gamma = 1.01 / 0.99; ceil(ln 1e7 / ln gamma) = 806, ceil(ln 1e-3 / ln gamma) = -345.
  const quantile_sketch s;
  CHECK(s.buckets() == 806 + 345 + 1);
  quantile_sketch one;
  one.add(100.0);
  // 100 falls in bucket 231 (ceil(4.60517 / 0.0200007)); estimate 2 gamma^231 / (gamma + 1) = 100.4946.
  CHECK(one.quantile(0.5) == doctest::Approx(100.4946).epsilon(1e-5));
  CHECK(one.quantile(0.0) == one.quantile(1.0));
}

TEST_CASE("uniform integers 1..10000: quantiles within 1% of the exact order statistics") {
  std::vector<double> v(10000);
  std::iota(v.begin(), v.end(), 1.0);
  std::shuffle(v.begin(), v.end(), std::mt19937_64(3));
  quantile_sketch s;
  for (double x : v) s.add(x);
  // By hand: x_(floor(q * 9999)) + 1.
  CHECK(std::abs(s.quantile(0.5) - 5000) <= 50);
  CHECK(std::abs(s.quantile(0.99) - 9900) <= 99);
  CHECK(std::abs(s.quantile(0.999) - 9990) <= 99.9);
  CHECK(s.count() == 10000);
  CHECK(s.clamped() == 0);
}

TEST_CASE("exponential and log-normal latencies: within alpha at every quantile") {
  std::mt19937_64 rng(42);
  std::exponential_distribution<double> expo(1.0 / 50.0);  // mean 50 ms
  std::lognormal_distribution<double> logn(3.0, 1.5);      // heavy tail
  std::vector<double> a(100000), b(100000);
  for (auto& x : a) x = expo(rng);
  for (auto& x : b) x = logn(rng);
  check_relative_error(a, 0.01);
  check_relative_error(b, 0.01);
  check_relative_error(b, 0.001);
}

TEST_CASE("merge equals one sketch of all the data; clear empties without losing the range") {
  quantile_sketch a, b, all;
  for (int i = 1; i <= 1000; ++i) {
    (i % 2 ? a : b).add(i * 0.37);
    all.add(i * 0.37);
  }
  a.merge(b);
  CHECK(a.count() == 1000);
  for (double q : {0.1, 0.5, 0.99}) CHECK(a.quantile(q) == all.quantile(q));
  a.clear();
  CHECK(a.count() == 0);
  CHECK(std::isnan(a.quantile(0.5)));
  CHECK(a.buckets() == all.buckets());
  quantile_sketch other(0.02);
  CHECK_THROWS_AS(all.merge(other), invalid_argument_error);
}

TEST_CASE("out-of-range values are clamped and counted; bad arguments name the field") {
  quantile_sketch s(0.01, 1.0, 1000.0);
  s.add(0.0);
  s.add(1e9);
  s.add(10.0);
  CHECK(s.clamped() == 2);
  CHECK(s.quantile(0.0) == doctest::Approx(1.0).epsilon(0.01));
  CHECK(s.quantile(1.0) == doctest::Approx(1000.0).epsilon(0.01));
  CHECK_THROWS_AS(static_cast<void>(s.quantile(1.5)), invalid_argument_error);
  try {
    quantile_sketch bad(1.0);
    FAIL("expected an error");
  } catch (const invalid_argument_error& e) {
    CHECK(e.field() == "alpha");
  }
  CHECK_THROWS_AS(quantile_sketch(0.01, 0.0, 1.0), invalid_argument_error);
  CHECK_THROWS_AS(quantile_sketch(0.01, 2.0, 1.0), invalid_argument_error);
}

TEST_CASE("add(x, n) counts n equal values, as n calls of add(x)") {
  gpusched::sim::world::quantile_sketch a, b;
  a.add(5.0, 99);
  a.add(50.0, 1);
  for (int i = 0; i < 99; ++i) b.add(5.0);
  b.add(50.0);
  CHECK(a.count() == 100);
  CHECK(a.quantile(0.5) == b.quantile(0.5));
  // Rank 0.99 x 99 = 98.01: the 99th value (0-based 98) is still 5; the maximum is 50 (within 1%).
  CHECK(a.quantile(0.99) == doctest::Approx(5.0).epsilon(0.01));
  CHECK(a.quantile(1.0) == doctest::Approx(50.0).epsilon(0.01));
  a.add(1.0, 0);
  CHECK(a.count() == 100);
}
