// CPU as used vs requested (sim/world/cpu.hpp): CFS shares from requests, worked by hand.
#include <doctest/doctest.h>

#include <array>
#include <limits>

#include "gpusched/sim/world/cpu.hpp"

using namespace gpusched;
using namespace gpusched::sim::world;

TEST_CASE("cpu.shares from a request: milli * 1024 / 1000, at least 2") {
  CHECK(cpu_shares(0) == 2.0);
  CHECK(cpu_shares(1000) == 1024.0);
  CHECK(cpu_shares(250) == 256.0);
}

TEST_CASE("contention: CPU is divided by requests, not by use") {
  // An 8-core node: an inference replica requests 4 cores and would use 6; a training data loader
  // requests 2 and would use 12 (the scheduler saw 6 of 8 cores requested: it fits).
  const std::array<cpu_claim, 2> claims{cpu_claim{6000, 4000, 0}, cpu_claim{12000, 2000, 0}};
  std::array<double, 2> out{};
  cpu_allocation(8000, claims, out);
  // Weights 4096 : 2048, neither satisfied at level 8000 / 6144: 5333.3 and 2666.7.
  CHECK(out[0] == doctest::Approx(8000.0 * 2 / 3));
  CHECK(out[1] == doctest::Approx(8000.0 / 3));
  CHECK(cpu_slowdown(6000, out[0]) == doctest::Approx(1.125));
  // The replica needs only 4 cores: it is satisfied and the loader takes the rest.
  const std::array<cpu_claim, 2> modest{cpu_claim{4000, 4000, 0}, cpu_claim{12000, 2000, 0}};
  cpu_allocation(8000, modest, out);
  CHECK(out[0] == doctest::Approx(4000));
  CHECK(out[1] == doctest::Approx(4000));
  CHECK(cpu_slowdown(4000, out[0]) == 1.0);
}

TEST_CASE("a limit caps a container and frees the rest for the others") {
  const std::array<cpu_claim, 2> claims{cpu_claim{6000, 4000, 0}, cpu_claim{12000, 2000, 2000}};
  std::array<double, 2> out{};
  cpu_allocation(8000, claims, out);
  CHECK(out[1] == doctest::Approx(2000));  // its limit, below its fair 2666.7
  CHECK(out[0] == doctest::Approx(6000));  // 6000 left at level 6000 / 4096: its whole demand
}

TEST_CASE("no contention: everyone gets its demand; a BestEffort pod has weight 2") {
  const std::array<cpu_claim, 3> claims{cpu_claim{6000, 4000, 0}, cpu_claim{12000, 2000, 0}, cpu_claim{500, 0, 0}};
  std::array<double, 3> out{};
  cpu_allocation(80000, claims, out);
  CHECK(out[0] == doctest::Approx(6000));
  CHECK(out[1] == doctest::Approx(12000));
  CHECK(out[2] == doctest::Approx(500));
  // Under contention the BestEffort pod gets 2 / (1024 + 2) of a contended core.
  const std::array<cpu_claim, 2> tight{cpu_claim{2000, 1000, 0}, cpu_claim{2000, 0, 0}};
  std::array<double, 2> o2{};
  cpu_allocation(1000, tight, o2);
  CHECK(o2[1] == doctest::Approx(1000.0 * 2 / 1026));
  CHECK(o2[0] == doctest::Approx(1000.0 * 1024 / 1026));
}

TEST_CASE("cpu_slowdown and bad input") {
  CHECK(cpu_slowdown(0, 0) == 1.0);
  CHECK(cpu_slowdown(100, 0) == std::numeric_limits<double>::infinity());
  std::array<double, 1> out{};
  const std::array<cpu_claim, 1> bad{cpu_claim{-1, 0, 0}};
  CHECK_THROWS_AS(cpu_allocation(100, bad, out), invalid_argument_error);
  const std::array<cpu_claim, 2> two{};
  CHECK_THROWS_AS(cpu_allocation(100, two, out), invalid_argument_error);
}
