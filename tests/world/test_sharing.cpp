// Device-sharing models (sim/world/sharing.hpp) against hand-worked rates.
#include <doctest/doctest.h>

#include <array>

#include "gpusched/sim/world/sharing.hpp"

using namespace gpusched;
using namespace gpusched::sim::world;

TEST_CASE("time-slicing: k runnable contexts each get Q / (k (Q + c))") {
  const time_slice_params p{2.0, 0.1};
  CHECK(time_slice_rate(p, 0) == 1.0);
  CHECK(time_slice_rate(p, 1) == 1.0);                         // alone: no switch
  CHECK(time_slice_rate(p, 2) == doctest::Approx(10.0 / 21));  // 2 / (2 * 2.1)
  CHECK(time_slice_rate(p, 3) == doctest::Approx(20.0 / 63));  // 2 / (3 * 2.1)
  CHECK(time_slice_rate(time_slice_params{2.0, 0.0}, 4) == doctest::Approx(0.25));
}

TEST_CASE("rates: time-slicing and memory-accounted sharing give only the runnable contexts a turn") {
  for (auto mode : {sharing_mode::time_slicing, sharing_mode::memory_accounted}) {
    sharing_params p;
    p.mode = mode;
    const std::array<gpu_context, 3> ctx{gpu_context{true, {}}, gpu_context{true, {}}, gpu_context{false, {}}};
    std::array<double, 3> out{};
    rates(p, ctx, out);
    CHECK(out[0] == doctest::Approx(10.0 / 21));
    CHECK(out[1] == doctest::Approx(10.0 / 21));
    CHECK(out[2] == 0.0);
    CHECK(busy_share(p, ctx) == doctest::Approx(2.0 / 2.1));  // the switch gaps are idle
    // The replica's batch ends: the trainer alone runs at full speed, and the GPU is fully busy.
    const std::array<gpu_context, 3> alone{gpu_context{true, {}}, gpu_context{false, {}}, gpu_context{false, {}}};
    rates(p, alone, out);
    CHECK(out[0] == 1.0);
    CHECK(busy_share(p, alone) == 1.0);
  }
}

TEST_CASE("rates: an exclusive GPU runs one process at full speed and refuses a second") {
  sharing_params p;  // exclusive
  std::array<double, 2> out{};
  const std::array<gpu_context, 1> one{gpu_context{true, {}}};
  rates(p, one, out);
  CHECK(out[0] == 1.0);
  const std::array<gpu_context, 1> idle{gpu_context{false, {}}};
  rates(p, idle, out);
  CHECK(out[0] == 0.0);
  CHECK(busy_share(p, idle) == 0.0);
  const std::array<gpu_context, 2> two{gpu_context{true, {}}, gpu_context{false, {}}};
  CHECK_THROWS_AS(rates(p, two, out), invalid_argument_error);
}

TEST_CASE("rates: MPS uses gpu-let's pair model, excess slowdowns adding over neighbours") {
  sharing_params p;
  p.mode = sharing_mode::mps;
  p.mps = {1.0, 0.5, 0.0, 0.0, 0.9};  // alpha = l2_self + 0.5 l2_other + 0.9
  std::array<double, 3> out{};
  const std::array<gpu_context, 2> pair{gpu_context{true, {0.4, 0.0}}, gpu_context{true, {0.2, 0.0}}};
  rates(p, pair, out);
  CHECK(out[0] == doctest::Approx(1.0 / 1.4));  // 0.4 + 0.1 + 0.9
  CHECK(out[1] == doctest::Approx(1.0 / 1.3));  // 0.2 + 0.2 + 0.9
  // A third runnable tenant with no pressure adds 0.4 + 0 + 0.9 - 1 = 0.3 to A's excess.
  const std::array<gpu_context, 3> three{gpu_context{true, {0.4, 0.0}}, gpu_context{true, {0.2, 0.0}},
                                         gpu_context{true, {0.0, 0.0}}};
  rates(p, three, out);
  CHECK(out[0] == doctest::Approx(1.0 / 1.7));
  // A neighbour with no work does not slow anyone.
  const std::array<gpu_context, 2> idle_neighbour{gpu_context{true, {0.4, 0.0}}, gpu_context{false, {0.2, 0.0}}};
  rates(p, idle_neighbour, out);
  CHECK(out[0] == 1.0);
  CHECK(out[1] == 0.0);
}

TEST_CASE("rates: MPS with gpu-let's 2080 Ti constants reproduces the published ResNet-50 / BERT pair") {
  // data/interference/README.md: ResNet-50 b16 at 50% next to BERT b16 at 50% gives alpha ~ 1.094
  // (INT_MODEL_CONSTANT.CSV and UTIL.CSV literal values; by hand 1.093795).
  sharing_params p;
  p.mode = sharing_mode::mps;
  p.mps = {0.11290838746224496, 0.7159598718755424, 0.35486591956022895, 0.0882038259888065, 0.8953693917277343};
  const std::array<gpu_context, 2> ctx{
      gpu_context{true, sim::serving::scaled_util(0.26780005182643528, 0.5842497335853165, 0.5)},
      gpu_context{true, sim::serving::scaled_util(0.18009285815675376, 0.3440628233174757, 0.5)}};
  std::array<double, 2> out{};
  rates(p, ctx, out);
  CHECK(1.0 / out[0] == doctest::Approx(1.093795).epsilon(1e-5));
}

TEST_CASE("sharing_params::validate names the field") {
  sharing_params p;
  p.slice.quantum_ms = 0.0;
  try {
    p.validate();
    FAIL("expected an error");
  } catch (const invalid_argument_error& e) {
    CHECK(e.field() == "slice.quantum_ms");
  }
  p.slice = {2.0, -1.0};
  CHECK_THROWS_AS(p.validate(), invalid_argument_error);
  std::array<double, 1> short_out{};
  const std::array<gpu_context, 2> two{};
  CHECK_THROWS_AS(rates(sharing_params{sharing_mode::time_slicing}, two, short_out), invalid_argument_error);
}
