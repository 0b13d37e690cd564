// BM_LeakDetectorRecordCheck/<devices>: one reading of a node (record) and its judgement (check into
// a reused report) with a full window of 64 readings: the leak detector's cost per node per reading.
// The series is a noisy flat device (the common case: every rule is evaluated, nothing flagged);
// Arg(8) is an 8-GPU node. items_per_second counts node readings. Goal: negligible next to a
// scheduling cycle (docs/eviction.md, "Cost").
#include <benchmark/benchmark.h>

#include <cstdint>
#include <gpusched/eviction/leak_detector.hpp>
#include <random>
#include <vector>

namespace {

void BM_LeakDetectorRecordCheck(benchmark::State& state) {
  const auto devices = static_cast<std::size_t>(state.range(0));
  gpusched::gpu_memory_monitor mon;
  gpusched::leak_report rep;
  std::mt19937_64 rng(42);
  std::vector<std::vector<std::int32_t>> readings(1024, std::vector<std::int32_t>(devices));
  for (auto& r : readings) {
    for (auto& f : r) f = 16000 + static_cast<std::int32_t>(rng() % 1600);
  }
  double t = 0.0;
  for (std::size_t k = 0; k < 64; ++k) mon.record(0, t += 5.0, readings[k % readings.size()]);
  std::size_t k = 0;
  for (auto _ : state) {
    mon.record(0, t += 5.0, readings[k++ % readings.size()]);
    benchmark::DoNotOptimize(mon.check(0, rep));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_LeakDetectorRecordCheck)->Arg(1)->Arg(8);

}  // namespace
