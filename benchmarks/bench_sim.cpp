// BM_OpenbReplay/<policy>: one paper-protocol replay of the openb default trace (1213 nodes, tune 1.3,
// ~10,800 pods, seed 42) on one core, trace loading excluded. Counters: final GPU allocation, pods arrived, CPU µs per pod
// (issue 14 goal for FGD and gpusched: <= 10 µs per pod).
#include <benchmark/benchmark.h>

#include <ctime>
#include <string>

#include "gpusched/sim/paper.hpp"
#include "gpusched/sim/policies.hpp"

namespace {

const gpusched::sim::trace& default_trace() {
  static const gpusched::sim::trace t =
      gpusched::sim::trace::load(std::string(GPUSCHED_SOURCE_DIR) + "/data/openb/openb_node_list_gpu_node.csv",
                                 std::string(GPUSCHED_SOURCE_DIR) + "/data/openb/openb_pod_list_default.csv");
  return t;
}

void BM_OpenbReplay(benchmark::State& state, gpusched::sim::policy_kind k) {
  using namespace gpusched::sim;
  const trace& t = default_trace();
  paper_options o;
  o.seed = 42;
  o.ties = policy_ties(k);
  o.record_events = true;
  double alloc = 0;
  std::size_t pods = 0;
  const double t0 = static_cast<double>(std::clock()) / CLOCKS_PER_SEC;
  for (auto _ : state) {
    const paper_result r =
        with_policy(k, t.typical, o.seed, [&](auto prof) { return run_paper(t, std::move(prof), o); });
    alloc = r.final_allocation_pct();
    pods = r.pods_arrived;
    benchmark::DoNotOptimize(alloc);
  }
  const double t1 = static_cast<double>(std::clock()) / CLOCKS_PER_SEC;
  state.counters["alloc_pct"] = alloc;
  state.counters["pods"] = static_cast<double>(pods);
  // CPU microseconds per arriving pod, a plain number (an inverted rate would be seconds, printed
  // with an "s").
  state.counters["us_per_pod"] = (t1 - t0) * 1e6 / (static_cast<double>(pods) * static_cast<double>(state.iterations()));
}

}  // namespace

BENCHMARK_CAPTURE(BM_OpenbReplay, Random, gpusched::sim::policy_kind::random)
    ->Name("BM_OpenbReplay/Random")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_OpenbReplay, DotProd, gpusched::sim::policy_kind::dot_product)
    ->Name("BM_OpenbReplay/DotProd")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_OpenbReplay, GpuClustering, gpusched::sim::policy_kind::gpu_clustering)
    ->Name("BM_OpenbReplay/GpuClustering")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_OpenbReplay, GpuPacking, gpusched::sim::policy_kind::gpu_packing)
    ->Name("BM_OpenbReplay/GpuPacking")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_OpenbReplay, BestFit, gpusched::sim::policy_kind::best_fit)
    ->Name("BM_OpenbReplay/BestFit")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_OpenbReplay, FGD, gpusched::sim::policy_kind::fgd)
    ->Name("BM_OpenbReplay/FGD")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_OpenbReplay, gpusched, gpusched::sim::policy_kind::gpusched)
    ->Name("BM_OpenbReplay/gpusched")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_OpenbReplay, gpusched_fillaware, gpusched::sim::policy_kind::gpusched_fillaware)
    ->Name("BM_OpenbReplay/gpusched-fillaware")
    ->Unit(benchmark::kMillisecond);
