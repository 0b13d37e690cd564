// Batch scoring and assignment. Names are stable so results compare across commits
// (docs/benchmarks.md). Rates are pair-scores per second: one pair-score is one (pod, node) pair
// filtered, scored by every plugin, weighted and ranked.
//
// per_pair and batch_cpu do the same work with the same profile — GPUCheck + NodeResourcesFit,
// LoadAware 10 + ModelAffinity 5, best-fit device choice on the chosen node — so that their rates
// compare like with like:
//   BM_ScorePairs/per_pair/<nodes>   schedule_one per pod through the Cluster concept (static
//                                    profile, full scan, hashed tie-break)
//   BM_ScorePairs/batch_cpu/<nodes>  the same pods through batch_scorer, top-1 per pod, one
//                                    thread, then the profile's device choice on each pod's best
//                                    node; speedup = its rate over per_pair's at the same size,
//                                    measured in the same run (CPU time of the timed loops)
// The pods are all different (no two alike), so no work is shared between them. The batch
// kernels' SIMD width is chosen at run time (GPUSCHED_SIMD=baseline|avx2|avx512 forces one;
// batch/simd.hpp); the `lanes` counter says which ran.
//   BM_AssignBatch/<pods>/<nodes>    greedy rounds (assign_greedy), one thread, from a prepared
//                                    engine; counters: pods placed, total score, rounds
//   BM_AssignFlow/<pods>/<nodes>     min-cost flow (assign_min_cost_flow) on the same input;
//                                    counters as above plus the gaps to greedy measured in the
//                                    same run: placed_gap and score_gap (flow / greedy - 1)
#include <benchmark/benchmark.h>

#include <cstdint>
#include <ctime>
#include <map>
#include <type_traits>
#include <vector>

#include <gpusched/batch/assign_flow.hpp>
#include <gpusched/batch/assign_greedy.hpp>
#include <gpusched/batch/batch_scorer.hpp>
#include <gpusched/batch/configured.hpp>
#include <gpusched/preflight/gpu_check.hpp>
#include <gpusched/preflight/resource_fit.hpp>
#include <gpusched/profile/dynamic_profile.hpp>
#include <gpusched/profile/static_profile.hpp>
#include <gpusched/schedule/schedule_one.hpp>
#include <gpusched/scoring/load_aware.hpp>
#include <gpusched/scoring/model_affinity.hpp>

#include "batch_workload.hpp"

using namespace gpusched;

namespace {

constexpr int score_pods = 256;

model_affinity seed_affinity() {
  model_affinity m;
  m.interfering.emplace_back(short_name("resnet50"), short_name("bert"));
  return m;
}

auto seed_static_profile() {
  return make_profile(checks(gpu_check{}, resource_fit{}), scores(weighted{load_aware{}, 10}, weighted{seed_affinity(), 5}));
}

// CPU-time rates of per_pair by node count, for batch_cpu's speedup counter.
std::map<std::int64_t, double>& per_pair_rates() {
  static std::map<std::int64_t, double> rates;
  return rates;
}
double cpu_seconds() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

void pair_rate(benchmark::State& state, std::int64_t pairs) {
  state.counters["pair_scores"] = benchmark::Counter(static_cast<double>(pairs), benchmark::Counter::kIsIterationInvariantRate);
}

void BM_ScorePairs_per_pair(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  const bench::vector_cluster& c = bench::gpu_cluster(nodes, 1);
  const std::vector<pod> pods = bench::pending_pods(score_pods, 2, true);
  const auto prof = seed_static_profile();
  scheduler<bench::vector_cluster, std::remove_const_t<decltype(prof)>> s(prof, {100, 1, false, tie_break_rule::hashed});
  const double t0 = cpu_seconds();
  for (auto _ : state) {
    for (const pod& p : pods) benchmark::DoNotOptimize(s.schedule_one(c, p).where.gpus);
  }
  const double t1 = cpu_seconds();
  pair_rate(state, std::int64_t{nodes} * score_pods);
  per_pair_rates()[nodes] = static_cast<double>(state.iterations()) * nodes * score_pods / (t1 - t0);
}

void BM_ScorePairs_batch_cpu(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  const bench::vector_cluster& c = bench::gpu_cluster(nodes, 1);
  const std::vector<pod> pods = bench::pending_pods(score_pods, 2, true);
  batch::node_table t(c);
  batch::pod_table pt(pods, t);
  auto engine = batch::make_batch_scorer(seed_static_profile(), {1, 1, 512, 8});
  engine.prepare(t);
  batch::top_k_result top;
  engine.top_k(pt, 1, top);  // warm-up: buffers sized
  const double t0 = cpu_seconds();
  for (auto _ : state) {
    engine.top_k(pt, 1, top);
    for (std::size_t i = 0; i < pods.size(); ++i) {  // the device choice, as schedule_one makes it
      if (!top.candidates(i).empty()) benchmark::DoNotOptimize(engine.profile().select_gpus(c, pods[i], top.best(i).node));
    }
  }
  const double t1 = cpu_seconds();
  pair_rate(state, std::int64_t{nodes} * score_pods);
  if (auto it = per_pair_rates().find(nodes); it != per_pair_rates().end()) {
    state.counters["speedup"] = static_cast<double>(state.iterations()) * nodes * score_pods / (t1 - t0) / it->second;
  }
  state.counters["table_bytes_per_node"] = static_cast<double>(t.bytes()) / nodes;
  state.counters["lanes"] = engine.lanes();
}

// The assignment input: the GPU cluster and a queue of pending pods with distinct names.
struct assign_input {
  batch::node_table table;
  std::vector<pod> pods;
  batch::pod_table pods_table;
  assign_input(int n_pods, int n_nodes) : table(bench::gpu_cluster(n_nodes, 1)), pods(bench::pending_pods(n_pods, 3)), pods_table(pods, table) {}
};

batch::assignment run_greedy(const assign_input& in) {
  batch::node_table t = in.table;
  auto engine = batch::make_batch_scorer(seed_static_profile(), {1, 1, 512, 8});
  engine.prepare(t);
  return batch::assign_greedy(engine, t, in.pods, in.pods_table);
}

void assign_counters(benchmark::State& state, const batch::assignment& a) {
  state.counters["placed"] = static_cast<double>(a.placed());
  state.counters["total_score"] = static_cast<double>(a.total_score());
  state.counters["rounds"] = a.rounds;
}

void BM_AssignBatch(benchmark::State& state) {
  const assign_input in(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  auto engine = batch::make_batch_scorer(seed_static_profile(), {1, 1, 512, 8});
  batch::assignment a;
  for (auto _ : state) {
    state.PauseTiming();
    batch::node_table t = in.table;
    engine.prepare(t);
    state.ResumeTiming();
    a = batch::assign_greedy(engine, t, in.pods, in.pods_table);
    benchmark::DoNotOptimize(a.order.data());
  }
  assign_counters(state, a);
  state.counters["rescored_pairs"] = static_cast<double>(a.rescored_pairs);
  state.counters["full_rescans"] = a.full_rescans;
}

void BM_AssignFlow(benchmark::State& state) {
  const assign_input in(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  const batch::assignment greedy = run_greedy(in);
  auto engine = batch::make_batch_scorer(seed_static_profile(), {1, 1, 512, 8});
  batch::flow_assignment f;
  for (auto _ : state) {
    state.PauseTiming();
    batch::node_table t = in.table;
    engine.prepare(t);
    state.ResumeTiming();
    f = batch::assign_min_cost_flow(engine, t, in.pods, in.pods_table);
    benchmark::DoNotOptimize(f.order.data());
  }
  assign_counters(state, f);
  state.counters["flow_placed"] = f.flow_placed;
  state.counters["placed_gap"] = static_cast<double>(f.placed()) / static_cast<double>(greedy.placed()) - 1.0;
  state.counters["score_gap"] = static_cast<double>(f.total_score()) / static_cast<double>(greedy.total_score()) - 1.0;
}

}  // namespace

BENCHMARK(BM_ScorePairs_per_pair)->Name("BM_ScorePairs/per_pair")->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);
// The same pods and profile as a configured (dynamic) profile, as Python's BatchScorer(profile=...)
// and gpusched-extender run one: batch::configured's erased plugins (one virtual call per plugin and
// tile, the scorers' lane forms at the run-time width).
void BM_ScorePairs_batch_configured(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  const bench::vector_cluster& c = bench::gpu_cluster(nodes, 1);
  const std::vector<pod> pods = bench::pending_pods(score_pods, 2, true);
  batch::node_table t(c);
  batch::pod_table pt(pods, t);
  dynamic_profile<bench::vector_cluster> dyn;  // NodeResourcesFit by default, then GPUCheck: the static profile's checks
  dyn.add_check(gpu_check{}).add_score(load_aware{}, 10).add_score(seed_affinity(), 5);
  auto engine = batch::make_batch_scorer(batch::configured(dyn), {1, 1, 512, 8});
  engine.prepare(t);
  batch::top_k_result top;
  engine.top_k(pt, 1, top);
  for (auto _ : state) {
    engine.top_k(pt, 1, top);
    benchmark::DoNotOptimize(top.best(0).node);
  }
  pair_rate(state, std::int64_t{nodes} * score_pods);
}
BENCHMARK(BM_ScorePairs_batch_configured)->Name("BM_ScorePairs/batch_configured")->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ScorePairs_batch_cpu)->Name("BM_ScorePairs/batch_cpu")->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_AssignBatch)->Name("BM_AssignBatch")->Args({1000, 10000})->Args({5000, 1000})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_AssignFlow)->Name("BM_AssignFlow")->Args({1000, 10000})->Args({5000, 1000})->Unit(benchmark::kMillisecond);
