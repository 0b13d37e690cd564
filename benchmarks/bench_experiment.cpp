// BM_SeedScenario (issue 7): the default scenario data/scenarios/seed.yaml (16 nodes, one simulated
// day, both services, training gangs, leaks) under one profile and one seed, end to end: scheduler,
// serving engine, utilisation sampling, and each profile's queue / preemption / overcommit / leak
// eviction as wired by run_once. Goal: <= 10 s per run on one core. Arg 0 = kube-default,
// 1 = gpusched.
#include <benchmark/benchmark.h>

#include <gpusched/sim/experiment/experiment.hpp>
#include <gpusched/sim/serving/scenario_yaml.hpp>
#include <string>

using namespace gpusched;
using namespace gpusched::sim;

namespace {

void BM_SeedScenario(benchmark::State& state) {
  const serving::scenario sc = serving::load_scenario(std::string(GPUSCHED_SOURCE_DIR) + "/data/scenarios/seed.yaml");
  const serving::latency_model lm = serving::make_latency_model(sc);
  const auto w = state.range(0) == 0 ? experiment::kube_default_wiring() : experiment::resolve_profile(sc, "gpusched");
  for (auto _ : state) {
    const auto r = experiment::run_once(sc, lm, w, sc.seeds.front());
    benchmark::DoNotOptimize(r.p99_ms);
  }
}
BENCHMARK(BM_SeedScenario)->Arg(0)->Arg(1)->Unit(benchmark::kSecond)->Iterations(1);

}  // namespace
