// BM_Preempt/<nodes>: one preemption decision (the dry run: candidates, victims, cascade) on
// <nodes> nodes of 8 V100 GPUs, each running 20 pods (16 half-GPU shares, 4 CPU-only; priorities
// 0..8, a third prod, a tenth in gangs of two spanning nodes). The preemptor is a prod p9 pod
// asking for 4 whole GPUs, which no node has free. Goal: <= 20 ms at 10,000 nodes.
// BM_PreemptAllNodes disables Kubernetes' candidate sampling and examines every node.
#include <benchmark/benchmark.h>

#include <random>
#include <string>

#include <gpusched/core/bound_cluster.hpp>
#include <gpusched/preemption/preemption.hpp>
#include <gpusched/preflight/gpu_check.hpp>
#include <gpusched/preflight/resource_fit.hpp>
#include <gpusched/profile/static_profile.hpp>

namespace {

using namespace gpusched;
using cluster = bound_cluster<>;

cluster make_cluster(std::size_t nodes) {
  std::mt19937_64 rng(7);
  cluster c;
  for (std::size_t n = 0; n < nodes; ++n) {
    node_spec s{"node-" + std::to_string(n), 96000, 768 * 1024, {}, ""};
    s.add_gpus(8, "V100M32", 32768);
    c.base().add_node(s);
  }
  std::size_t gang_no = 0;
  for (std::size_t n = 0; n < nodes; ++n) {
    for (int k = 0; k < 20; ++k) {
      auto b = make_pod("p-" + std::to_string(n) + "-" + std::to_string(k)).cpu(4000).memory(16384)
                   .priority(static_cast<int>(rng() % 9));
      if (k < 16) b.gpu_share(500).gpu_memory(8192);
      if (rng() % 3 == 0) b.prod();
      pod p = b;
      // A tenth of the share pods pair up with the same slot on the next node as a gang of two.
      const bool gang_head = k < 16 && n + 1 < nodes && rng() % 10 == 0;
      if (gang_head) {
        p.gang = "g-" + std::to_string(gang_no++);
        p.gang_min_members = 2;
      }
      const gpu_set gpus = k < 16 ? gpu_set{1} << (k / 2) : 0;
      c.bind(p, make_binding(p, static_cast<node_index>(n), gpus), static_cast<double>(rng() % 10000));
      if (gang_head) {  // its partner takes a fresh CPU-only slot on the next node
        pod q = p;
        q.name += "-partner";
        q.num_gpu = 0;
        q.gpu_milli = 0;
        q.gpu_mem_mib = 0;
        c.bind(q, make_binding(q, static_cast<node_index>(n + 1), 0), p.submit_time);
      }
    }
  }
  return c;
}

void run(benchmark::State& state, bool sample) {
  const auto nodes = static_cast<std::size_t>(state.range(0));
  const cluster c = make_cluster(nodes);
  auto prof = make_profile(checks(gpu_check{}, resource_fit{}), scores());
  preemption_options o;
  o.sample_candidates = sample;
  preemptor<cluster, decltype(prof)> pre(prof, o);
  const pod p = make_pod("serve").cpu(8000).memory(32768).gpus(4).gpu_memory(16384).priority(9).prod();
  std::size_t found = 0;
  for (auto _ : state) {
    const preemption_result r = pre.plan(c, p, 20000.0);
    found += r.found ? 1 : 0;
    benchmark::DoNotOptimize(r.node);
  }
  state.counters["found"] = static_cast<double>(found) / static_cast<double>(state.iterations());
}

void BM_Preempt(benchmark::State& state) { run(state, true); }
void BM_PreemptAllNodes(benchmark::State& state) { run(state, false); }

}  // namespace

BENCHMARK(BM_Preempt)->Arg(10'000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PreemptAllNodes)->Arg(10'000)->Unit(benchmark::kMillisecond);
