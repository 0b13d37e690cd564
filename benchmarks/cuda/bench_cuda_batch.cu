// BM_ScorePairs/batch_cuda/<pods>/<nodes>: the seed's profile (GPUCheck + LoadAware 10 +
// ModelAffinity 5) on the GPU, top-1 per pod, in pair-scores per second. The time is the GPU's
// (CUDA events around top_k_async: the pods' arguments uploaded, every pair filtered, scored,
// weighted and ranked, the per-pod merge); node data is uploaded before (prepare). Skipped with
// a message where no CUDA device exists.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include <gpusched/batch/node_table.hpp>
#include <gpusched/batch/pod_table.hpp>
#include <gpusched/cuda/batch_scorer.cuh>
#include <gpusched/preflight/gpu_check.hpp>
#include <gpusched/profile/static_profile.hpp>
#include <gpusched/scoring/load_aware.hpp>
#include <gpusched/scoring/model_affinity.hpp>

#include "../batch_workload.hpp"

using namespace gpusched;

namespace {

auto seed_profile() {
  model_affinity m;
  m.interfering.emplace_back(short_name("resnet50"), short_name("bert"));
  return make_profile(checks(gpu_check{}), scores(weighted{load_aware{}, 10}, weighted{m, 5}));
}

void BM_ScorePairs_batch_cuda(benchmark::State& state) {
  const cuda::status gpu = cuda::device_status();
  if (!gpu) {
    state.SkipWithError(("no usable CUDA device: " + gpu.reason).c_str());
    return;
  }
  const int n_pods = static_cast<int>(state.range(0)), n_nodes = static_cast<int>(state.range(1));
  batch::node_table t(bench::gpu_cluster(n_nodes, 1));
  const std::vector<pod> pods = bench::pending_pods(n_pods, 2, true);
  const batch::pod_table pt(pods, t);
  auto engine = cuda::make_batch_scorer(seed_profile(), {1});
  if (const cuda::status s = engine.can_run(t, pt.size(), 1); !s) {
    state.SkipWithError(s.reason.c_str());
    return;
  }
  cudaStream_t stream = nullptr;
  cuda::check(cudaStreamCreate(&stream), "cudaStreamCreate");
  engine.prepare(t, stream);
  cuda::device_buffer ws, out, counts;
  const std::size_t bytes = engine.workspace_bytes(pt.size(), 1);
  ws.reserve(bytes);
  out.reserve(pt.size() * sizeof(batch::candidate));
  counts.reserve(2 * pt.size() * sizeof(std::uint32_t));
  auto run = [&] {
    engine.top_k_async(pt, 1, ws.get(), bytes, static_cast<batch::candidate*>(out.get()), static_cast<std::uint32_t*>(counts.get()),
                       static_cast<std::uint32_t*>(counts.get()) + pt.size(), stream);
  };
  run();  // warm-up
  cuda::check(cudaStreamSynchronize(stream), "warm-up");
  cudaEvent_t start, stop;
  cuda::check(cudaEventCreate(&start), "cudaEventCreate");
  cuda::check(cudaEventCreate(&stop), "cudaEventCreate");
  for (auto _ : state) {
    cuda::check(cudaEventRecord(start, stream), "cudaEventRecord");
    run();
    cuda::check(cudaEventRecord(stop, stream), "cudaEventRecord");
    cuda::check(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float ms = 0;
    cuda::check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    state.SetIterationTime(static_cast<double>(ms) / 1000.0);
  }
  state.counters["pair_scores"] = benchmark::Counter(static_cast<double>(n_pods) * n_nodes, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["device_bytes"] = static_cast<double>(engine.device_bytes());
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaStreamDestroy(stream);
}

}  // namespace

BENCHMARK(BM_ScorePairs_batch_cuda)
    ->Name("BM_ScorePairs/batch_cuda")
    ->Args({1000, 10000})
    ->Args({10000, 100000})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
