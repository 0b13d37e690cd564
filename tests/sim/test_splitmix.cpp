// splitmix64, the one copy (core/splitmix64.hpp): the reference outputs of Vigna's splitmix64.c
// from state 0, and the sim's rng seeding through it.
#include <doctest/doctest.h>

#include <cstdint>

#include "gpusched/core/splitmix64.hpp"
#include "gpusched/sim/rng.hpp"

TEST_CASE("splitmix64 from state 0 gives splitmix64.c's first outputs") {
  std::uint64_t s = 0;
  CHECK(gpusched::splitmix64(s) == 0xE220A8397B1DCDAFULL);
  CHECK(gpusched::splitmix64(s) == 0x6E789E6AA1B965F4ULL);
  CHECK(gpusched::splitmix64(s) == 0x06C45D188009454FULL);
  CHECK(s == 3 * 0x9E3779B97F4A7C15ULL);  // the state advances by the golden-ratio increment
  static_assert(gpusched::mix64(0) == 0);  // the finaliser fixes 0 (every step is a product or xor-shift)
}

TEST_CASE("the simulator's splitmix64 is the core one") {
  std::uint64_t a = 42, b = 42;
  CHECK(gpusched::sim::splitmix64(a) == gpusched::splitmix64(b));
}
