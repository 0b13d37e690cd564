// round_half_away (scoring/fragmentation.hpp) rounds as std::llround does (C11 7.12.9.7: halfway
// cases away from zero), without the libm call.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <random>

#include "gpusched/scoring/fragmentation.hpp"

using gpusched::round_half_away;

TEST_CASE("round_half_away: halfway cases go away from zero, just below half goes down") {
  CHECK(round_half_away(0.0) == 0);
  CHECK(round_half_away(0.5) == 1);
  CHECK(round_half_away(-0.5) == -1);
  CHECK(round_half_away(2.5) == 3);
  CHECK(round_half_away(-2.5) == -3);
  CHECK(round_half_away(0.49999999999999994) == 0);  // the largest double below 0.5
  CHECK(round_half_away(2.4999999999999996) == 2);   // the largest double below 2.5
  CHECK(round_half_away(1e9 + 0.25) == 1000000000);
  CHECK(round_half_away(1e9 + 0.75) == 1000000001);
  CHECK(round_half_away(4503599627370497.0) == 4503599627370497);  // 2^52 + 1: already an integer
  CHECK(round_half_away(9007199254740993.0) == 9007199254740992);  // 2^53 + 1 is not a double: 2^53
}

TEST_CASE("round_half_away equals std::llround on FillAware's range and beyond") {
  std::mt19937_64 rng(14);
  std::uniform_real_distribution<double> fill(0.0, 2e9);  // (1e6 + saved) * 1000, saved within +-1e6
  std::uniform_real_distribution<double> wide(-1e17, 1e17);
  for (int i = 0; i < 200000; ++i) {
    const double a = fill(rng), b = wide(rng), c = std::floor(fill(rng)) + 0.5;
    REQUIRE(round_half_away(a) == std::llround(a));
    REQUIRE(round_half_away(b) == std::llround(b));
    REQUIRE(round_half_away(c) == std::llround(c));
    REQUIRE(round_half_away(-c) == std::llround(-c));
  }
}
