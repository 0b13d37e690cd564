// CrashLoopBackOff (sim/world/crash_loop.hpp) against the kubelet's sequence, worked by hand.
#include <doctest/doctest.h>

#include "gpusched/sim/world/crash_loop.hpp"

using namespace gpusched;
using namespace gpusched::sim::world;

TEST_CASE("quick exits: restart now, then 10 s doubling to 300 s") {
  crash_loop_backoff b;
  CHECK(b.pending_backoff_s() == 0.0);
  // Each restart runs 5 s and exits again.
  double t = 0.0;
  const double expected[] = {0, 10, 20, 40, 80, 160, 300, 300};
  for (double want : expected) {
    const double d = b.on_exit(t);
    CHECK(d == want);
    t += d + 5.0;  // exit times 0, 5, 20, 45, 90, 175, 340, 645
  }
  CHECK(t == 950.0);
}

TEST_CASE("the loop starts over after an exit more than 600 s after the previous one") {
  crash_loop_backoff b;
  CHECK(b.on_exit(0) == 0.0);
  CHECK(b.on_exit(600) == 10.0);  // 600 s is not more than 2 * 300: still in the loop
  CHECK(b.pending_backoff_s() == 20.0);
  CHECK(b.on_exit(1200.5) == 0.0);  // 600.5 s: expired, a new entry
  CHECK(b.on_exit(1201) == 10.0);
}

TEST_CASE("custom parameters and bad input") {
  crash_loop_backoff b(crash_loop_params{1.0, 4.0});
  CHECK(b.on_exit(0) == 0.0);
  CHECK(b.on_exit(1) == 1.0);
  CHECK(b.on_exit(2) == 2.0);
  CHECK(b.on_exit(3) == 4.0);
  CHECK(b.on_exit(4) == 4.0);
  CHECK(b.on_exit(12.5) == 0.0);  // 8.5 > 2 * 4
  CHECK_THROWS_AS(b.on_exit(10), invalid_argument_error);
  CHECK_THROWS_AS(crash_loop_backoff(crash_loop_params{0.0, 300.0}), invalid_argument_error);
  try {
    crash_loop_backoff bad(crash_loop_params{10.0, 5.0});
    FAIL("expected an error");
  } catch (const invalid_argument_error& e) {
    CHECK(e.field() == "max_s");
  }
}
