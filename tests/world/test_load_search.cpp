// The capacity search (sim/world/load_search.hpp) on synthetic monotone predicates.
#include <doctest/doctest.h>

#include <cmath>

#include "gpusched/sim/world/load_search.hpp"

using namespace gpusched;
using namespace gpusched::sim::world;

TEST_CASE("a step at 123.4: the bisection's probes, by hand") {
  int calls = 0;
  auto pass = [&](double x) {
    ++calls;
    return x <= 123.4;
  };
  const auto r = highest_passing_load(0.0, 1000.0, 0.5, pass);
  REQUIRE(r);
  // Probes 0 T, 1000 F, then 500 F, 250 F, 125 F, 62.5 T, 93.75 T, 109.375 T, 117.1875 T,
  // 121.09375 T, 123.046875 T, 124.0234375 F, 123.53515625 F: bracket 0.488 <= 0.5.
  CHECK(r->load == 123.046875);
  CHECK(r->first_failing == 123.53515625);
  CHECK(r->evaluations == 13);  // 2 + ceil(log2(1000 / 0.5))
  CHECK(calls == 13);
}

TEST_CASE("M/M/1 capacity under a P99 SLO matches the closed form") {
  // M/M/1 sojourn time is exponential with rate mu - lambda: P99 = ln(100) / (mu - lambda).
  // mu = 100/s, SLO 100 ms: lambda* = 100 - ln(100) / 0.1 = 53.948.
  const double mu = 100.0, slo = 0.1;
  auto meets = [&](double lambda) { return lambda < mu && std::log(100.0) / (mu - lambda) <= slo; };
  const auto r = highest_passing_load(0.0, mu, 0.01, meets);
  REQUIRE(r);
  const double truth = mu - std::log(100.0) / slo;
  CHECK(r->load <= truth);
  CHECK(truth - r->load <= 0.01);
  CHECK(r->first_failing > truth);
}

TEST_CASE("edges: lo fails -> none; hi passes -> hi; bad arguments") {
  CHECK_FALSE(highest_passing_load(10.0, 20.0, 1.0, [](double) { return false; }));
  const auto all = highest_passing_load(10.0, 20.0, 1.0, [](double) { return true; });
  REQUIRE(all);
  CHECK(all->load == 20.0);
  CHECK(all->evaluations == 2);
  auto any = [](double) { return true; };
  CHECK_THROWS_AS(highest_passing_load(-1.0, 1.0, 0.1, any), invalid_argument_error);
  CHECK_THROWS_AS(highest_passing_load(1.0, 1.0, 0.1, any), invalid_argument_error);
  CHECK_THROWS_AS(highest_passing_load(0.0, 1.0, 0.0, any), invalid_argument_error);
}
