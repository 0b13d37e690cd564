// Gang placement speed. BM_GangPlace/<members>/<nodes>: one launcher plus <members>-1 workers of
// 4 GPUs each, placed all-or-nothing on <nodes> 8 x V100 nodes (two NVLink islands each, 32 nodes
// per rack, every fourth node with 3 GPUs and 16 cores already taken), with GPUCheck +
// NodeResourcesFit, MostAllocated (weight 1) and the NVLink-aware device choice. Each iteration
// places the gang and (untimed) releases it. Goal (issue 4): 1,000 members on 10,000 nodes <= 10 ms.
//
// BM_GangPreempt/<nodes>: gang_preemptor::plan (a dry run) for a prod gang of 4 workers x 8 GPUs on
// <nodes> 8-GPU nodes that are full of 1-GPU dev pods (priority 1): every pod is a candidate, so the
// search runs its reprieve over nodes x 8 candidate units (docs/gang.md §4). No goal in the issue;
// it shows how the cost grows with the candidates.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>

#include "gpusched/core/bound_cluster.hpp"
#include "gpusched/core/in_memory_cluster.hpp"
#include "gpusched/gang/gang_preemption.hpp"
#include "gpusched/gang/nvlink_selector.hpp"
#include "gpusched/gang/placement.hpp"
#include "gpusched/preflight/gpu_check.hpp"
#include "gpusched/preflight/resource_fit.hpp"
#include "gpusched/profile/static_profile.hpp"
#include "gpusched/scoring/node_resources.hpp"

using namespace gpusched;

namespace {
in_memory_cluster make_cluster(int nodes) {
  in_memory_cluster c;
  const pod busy = make_pod("busy").cpu(16000).memory(65536).gpus(3);
  for (int i = 0; i < nodes; ++i) {
    node_spec n{"n" + std::to_string(i), 96000, 768 * 1024, {}, "rack-" + std::to_string(i / 32)};
    n.add_gpus(4, "V100M32", 32768, 0).add_gpus(4, "V100M32", 32768, 1);
    const node_index idx = c.add_node(n);
    if (i % 4 == 3) c.reserve(busy, make_binding(busy, idx, 0b0000'0111));
  }
  return c;
}

void BM_GangPlace(benchmark::State& state) {
  const auto members = static_cast<std::int32_t>(state.range(0));
  in_memory_cluster c = make_cluster(static_cast<int>(state.range(1)));
  const gang_spec g = make_gang("train")
                          .role("launcher", make_pod("launcher").cpu(4000).memory(16384))
                          .role("worker", make_pod("worker").cpu(8000).memory(65536).gpus(4), members - 1);
  gang_placer placer(make_profile(checks(gpu_check{}, resource_fit{}), scores(weighted{most_allocated{}, 1}),
                                  nvlink_aware_gpus{}));
  gang_result r;
  if (!placer.place(c, g, r)) {
    state.SkipWithError(r.explain(g).c_str());
    return;
  }
  release_gang(c, g, r);
  for (auto _ : state) {
    placer.place(c, g, r);
    benchmark::DoNotOptimize(r.members.data());
    state.PauseTiming();
    release_gang(c, g, r);
    state.ResumeTiming();
  }
  state.counters["nodes_used"] = r.nodes_used;
  state.counters["racks_used"] = r.racks_used;
}
BENCHMARK(BM_GangPlace)->Args({100, 1000})->Args({1000, 10000})->Unit(benchmark::kMillisecond);

void BM_GangPreempt(benchmark::State& state) {
  bound_cluster<> c;
  const int nodes = static_cast<int>(state.range(0));
  for (int i = 0; i < nodes; ++i) {
    node_spec n{"n" + std::to_string(i), 96000, 768 * 1024, {}, ""};
    n.add_gpus(8, "V100M32", 32768, 0);
    const node_index idx = c.base().add_node(n);
    for (int g = 0; g < 8; ++g) {
      const pod p = make_pod("dev-" + std::to_string(i) + "-" + std::to_string(g)).cpu(1000).memory(1024).gpus(1).priority(1);
      c.bind(p, make_binding(p, idx, gpu_set{1} << g), static_cast<double>(g));
    }
  }
  const gang_spec g = make_gang("train").priority(5).role("w", make_pod("w").cpu(1000).memory(1024).gpus(8), 4);
  gang_preemptor<bound_cluster<>, decltype(make_profile(checks(gpu_check{}, resource_fit{}), scores()))> pre(
      make_profile(checks(gpu_check{}, resource_fit{}), scores()));
  std::size_t victims = 0;
  std::uint32_t what_ifs = 0;
  for (auto _ : state) {
    const gang_preemption_result r = pre.plan(c, g, 100.0);
    if (!r.found) {
      state.SkipWithError("no plan");
      return;
    }
    victims = r.victims.size();
    what_ifs = r.what_ifs;
    benchmark::DoNotOptimize(victims);
  }
  state.counters["candidates"] = static_cast<double>(nodes) * 8;
  state.counters["victims"] = static_cast<double>(victims);
  state.counters["what_ifs"] = static_cast<double>(what_ifs);
}
BENCHMARK(BM_GangPreempt)->Arg(16)->Arg(64)->Arg(256)->Arg(1024)->Unit(benchmark::kMillisecond);
}  // namespace
