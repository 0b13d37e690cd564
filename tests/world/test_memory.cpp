// Framework memory footprints and the OOM rule (sim/world/memory.hpp), worked by hand.
#include <doctest/doctest.h>

#include <array>
#include <limits>

#include "gpusched/sim/world/memory.hpp"

using namespace gpusched;
using namespace gpusched::sim::world;

TEST_CASE("TensorFlow's MinSystemMemory: 225 MiB below 2 GiB, else max(300 MiB, 5%)") {
  CHECK(tf_min_system_memory_mib(1000) == 225.0);
  CHECK(tf_min_system_memory_mib(4000) == 300.0);  // 5% = 200 < 300
  CHECK(tf_min_system_memory_mib(32000) == doctest::Approx(1600.0));
}

TEST_CASE("initial reservation: TF grabs the free memory, growth and PyTorch take their working set") {
  CHECK(initial_reservation_mib(framework_memory::tf_grab_all, 3000, 32000) == doctest::Approx(30400.0));
  CHECK(initial_reservation_mib(framework_memory::tf_growth, 3000, 32000) == 3000.0);
  CHECK(initial_reservation_mib(framework_memory::pytorch_caching, 3000, 32000) == 3000.0);
  // Too little free for the working set: it asks for the working set (and try_reserve fails it).
  CHECK(initial_reservation_mib(framework_memory::tf_grab_all, 3000, 2500) == 3000.0);
}

TEST_CASE("growth: caching allocators ask for the difference, TF grab-all fails on its own") {
  CHECK(growth_request_mib(framework_memory::pytorch_caching, 3000, 2500) == 0.0);  // fits the cache
  CHECK(growth_request_mib(framework_memory::pytorch_caching, 3000, 4000) == 1000.0);
  CHECK(growth_request_mib(framework_memory::tf_growth, 3000, 3500) == 500.0);
  CHECK(growth_request_mib(framework_memory::tf_grab_all, 30400, 30000) == 0.0);
  CHECK(growth_request_mib(framework_memory::tf_grab_all, 30400, 31000) == std::numeric_limits<double>::infinity());
}

TEST_CASE("a configured limit: TF reserves the limit, every framework fails past it") {
  CHECK(initial_reservation_mib(framework_memory::tf_grab_all, 3000, 32000, 8192) == 8192.0);
  CHECK(initial_reservation_mib(framework_memory::pytorch_caching, 3000, 32000, 8192) == 3000.0);
  CHECK(growth_request_mib(framework_memory::pytorch_caching, 3000, 8000, 8192) == 5000.0);
  CHECK(growth_request_mib(framework_memory::pytorch_caching, 3000, 9000, 8192) ==
        std::numeric_limits<double>::infinity());
  CHECK(growth_request_mib(framework_memory::tf_growth, 3000, 9000, 0) == 6000.0);  // 0 = no limit
}

TEST_CASE("OOM rule: the process whose allocation crosses the capacity fails, the others keep theirs") {
  // The seed's first complaint on a V100-32GB under time-slicing. A PyTorch replica holds 2000 MiB;
  // a TF trainer (no memory growth) starts: free 30768 -> it reserves 30768 - 0.05 * 30768 = 29229.6.
  const double cap = 32768;
  std::array<double, 2> held{2000, 0};
  const double grab = initial_reservation_mib(framework_memory::tf_grab_all, 12000, cap - 2000);
  CHECK(grab == doctest::Approx(29229.6));
  REQUIRE(try_reserve(cap, held, 1, grab));  // 31229.6 <= 32768
  // A burst: the replica's working set grows to 3600 MiB; it asks for 1600 more: 32829.6 > 32768.
  const double extra = growth_request_mib(framework_memory::pytorch_caching, held[0], 3600);
  CHECK(extra == 1600.0);
  CHECK_FALSE(try_reserve(cap, held, 0, extra));  // the replica is the one that fails
  CHECK(held[0] == 2000.0);                       // nothing changed
  CHECK(held[1] == doctest::Approx(29229.6));
  // With memory growth the trainer holds its working set (12000) and the burst fits.
  std::array<double, 2> growth{2000, 0};
  REQUIRE(try_reserve(cap, growth, 1, initial_reservation_mib(framework_memory::tf_growth, 12000, cap - 2000)));
  CHECK(try_reserve(cap, growth, 0, extra));
  CHECK(growth[0] == 3600.0);
  // Exactly full is allowed; one MiB more is not.
  std::array<double, 1> one{32000};
  CHECK(try_reserve(cap, one, 0, 768));
  CHECK_FALSE(try_reserve(cap, one, 0, 1));
  CHECK_FALSE(try_reserve(cap, one, 0, std::numeric_limits<double>::infinity()));
}

TEST_CASE("try_reserve rejects bad input by field") {
  std::array<double, 1> held{0};
  CHECK_THROWS_AS(try_reserve(100, held, 1, 1), invalid_argument_error);
  try {
    try_reserve(100, held, 0, -1);
    FAIL("expected an error");
  } catch (const invalid_argument_error& e) {
    CHECK(e.field() == "extra_mib");
  }
}
