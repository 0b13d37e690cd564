// The seed's world (issue 17): one simulated day of data/scenarios/seed-world.yaml for one profile
// and seed, the driver and the world together (sim/world/run_world.hpp). Goal: <= 10 s on one core.
// The capacity sweep is about a dozen of these per service and seed (docs/experiment-world.md).
#include <benchmark/benchmark.h>

#include <string>

#include "gpusched/sim/world/run_world.hpp"

namespace {

const gpusched::sim::world::world_scenario& scenario() {
  static const auto sc =
      gpusched::sim::world::load_world_scenario(std::string(GPUSCHED_SOURCE_DIR) + "/data/scenarios/seed-world.yaml");
  return sc;
}

// Arg: 0 kube-exclusive, 1 kube-timeslice, 2 gpusched.
void BM_SeedWorld(benchmark::State& state) {
  static const char* names[] = {"kube-exclusive", "kube-timeslice", "gpusched"};
  const auto& sc = scenario();
  const auto& p = sc.profile(names[state.range(0)]);
  state.SetLabel(names[state.range(0)]);
  for (auto _ : state) {
    auto m = gpusched::sim::world::run_world_once(sc, p, 1);
    benchmark::DoNotOptimize(m);
  }
}
BENCHMARK(BM_SeedWorld)->DenseRange(0, 2)->Unit(benchmark::kSecond)->Iterations(1);

}  // namespace
