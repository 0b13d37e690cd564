// The serving engine's request path alone: one simulated hour of data/scenarios/seed.yaml's services
// around the daily peak (13:30-14:30, shifted to start at t = 0), replicas on a fixed stand-in
// placement (no scheduler). Items = requests, so
// the report's items_per_second is requests simulated per second of CPU. The full experiment's
// BM_SeedScenario (schedulers, training, one day) belongs to the integration with the simulator.
#include <benchmark/benchmark.h>

#include <gpusched/sim/serving/scenario_yaml.hpp>
#include <string>

using namespace gpusched;
using namespace gpusched::sim::serving;

namespace {

const scenario& seed_scenario() {
  static const scenario sc = [] {
    scenario s = load_scenario(std::string(GPUSCHED_SOURCE_DIR) + "/data/scenarios/seed.yaml");
    const double shift = 13.5 * 3600.0;
    for (auto& svc : s.services) {
      svc.arrivals.diurnal_peak_s -= shift;
      svc.arrivals.bursts.clear();  // the 10:00 burst lies outside the hour
    }
    s.leaks.clear();
    s.engine.startup_s = 0.0;
    s.duration_s = 3600.0;
    return s;
  }();
  return sc;
}

void BM_ServingRequestPath(benchmark::State& state) {
  const scenario& sc = seed_scenario();
  const latency_model lm = make_latency_model(sc);
  std::uint64_t requests = 0;
  for (auto _ : state) {
    serving_engine e(lm, sc.engine);
    const serving_setup setup = populate(e, sc, lm, sc.seeds.front());
    for (std::size_t i = 0; i < setup.replicas.size(); ++i) {
      for (std::size_t k = 0; k < setup.replicas[i].size(); ++k)
        e.place_replica(setup.replicas[i][k], static_cast<gpu_slot>(k));
    }
    e.run_until(sc.duration_s + 10.0);
    for (const service_id s : setup.services) requests += e.metrics(s).arrived;
    benchmark::DoNotOptimize(e.metrics(0).latency_sum_s);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(requests));
}
BENCHMARK(BM_ServingRequestPath)->Unit(benchmark::kMillisecond);

}  // namespace
