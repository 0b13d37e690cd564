// BM_QueuePushPop/<pods>: push <pods> pods, then pop them all (each pop resolved as scheduled).
// items_per_second counts operations: one push and one pop per pod. Goal: >= 5 million ops/s at
// 1,000,000 pods. Pods: priorities 0..10, a third prod, four tenants, dev share period 4.
#include <benchmark/benchmark.h>

#include <random>
#include <string>
#include <vector>

#include <gpusched/queue/scheduling_queue.hpp>

namespace {

std::vector<gpusched::pod> make_pods(std::size_t n) {
  std::mt19937_64 rng(42);
  std::vector<gpusched::pod> pods;
  pods.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    auto b = gpusched::make_pod("pod-" + std::to_string(i)).cpu(1000).memory(2048)
                 .priority(static_cast<int>(rng() % 11)).tenant("team-" + std::to_string(rng() % 4));
    if (rng() % 3 == 0) b.prod();
    pods.push_back(b);
  }
  return pods;
}

void BM_QueuePushPop(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const std::vector<gpusched::pod> pods = make_pods(n);
  gpusched::queue_options o;
  o.dev_share_period = 4;
  gpusched::scheduling_queue q(o);
  q.set_capacity({1'000'000'000, 1'000'000'000, 1'000'000});
  q.reserve(n);
  double now = 0.0;
  for (auto _ : state) {
    for (const auto& p : pods) q.push(p, now += 1e-6);
    while (auto u = q.pop(now += 1e-6)) q.scheduled(u->ticket, now);
    state.PauseTiming();
    for (const auto& p : pods) q.released(p);  // shares back to zero for the next round
    state.ResumeTiming();
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(2 * n));
}

}  // namespace

BENCHMARK(BM_QueuePushPop)->Arg(10000)->Arg(1000000)->Unit(benchmark::kMillisecond);
