// BM_ScheduleOne/<nodes>: one scheduling decision with the seed's profile (GPUCheck + NodeResourcesFit,
// LoadAware 10 + ModelAffinity 5) on nodes with 8 GPUs each, half full.
// BM_ScheduleOne_Table/<nodes>: the same decisions through the node table (batch::table_scheduler
// over a bound_cluster observed by batch::node_table_observer; full scan with the batch formulas).
// BM_ScheduleOne_Summary/<nodes>: the per-node path on a bound_cluster observed by gpu_summary
// (GPUCheck decided from the per-node summary instead of the device loop).
// BM_BindRelease/<observers>: one bound_cluster::bind and unbind of a GPU-share pod, without
// observers and with the replay's two (running totals, GPU affinity tags): what the observers cost.
#include <benchmark/benchmark.h>

#include <string>

#include <gpusched/gpusched.hpp>
#include <gpusched/batch/node_table_observer.hpp>
#include <gpusched/batch/table_scan.hpp>
#include <gpusched/core/cluster_totals.hpp>
#include <gpusched/core/gpu_summary.hpp>
#include <gpusched/profile/dynamic_profile.hpp>
#include <gpusched/scoring/fgd_paper/affinity_tags.hpp>

using namespace gpusched;

namespace {

in_memory_cluster half_full_cluster(int nodes) {
  in_memory_cluster c;
  const pod train = make_pod("train").cpu(32000).memory(128 * 1024).gpus(4).gpu_memory(16384).model("bert");
  for (int i = 0; i < nodes; ++i) {
    node_spec n{"node-" + std::to_string(i), 64000, 256 * 1024, {}, ""};
    n.add_gpus(8, i % 4 == 3 ? "T4" : "V100M32", 32768);
    const node_index idx = c.add_node(n);
    c.reserve(train, make_binding(train, idx, i % 2 ? 0x0F : 0xF0));
    const node_metrics m{0.2 + 0.5 * ((i * 37) % 100) / 100.0, 0.4, 0.5};
    c.set_load(idx, &m);
  }
  return c;
}

auto seed_profile() {
  return make_profile(checks(gpu_check{}, resource_fit{}), scores(weighted{load_aware{}, 10}, weighted{model_affinity{}, 5}));
}

const pod& probe_pod() {
  static const pod p = make_pod("infer").cpu(4000).memory(16384).gpu_share(500).gpu_memory(8192).model("resnet50");
  return p;
}

template <class Profile>
void run(benchmark::State& state, const Profile& prof, int percentage) {
  const in_memory_cluster c = half_full_cluster(static_cast<int>(state.range(0)));
  scheduler<in_memory_cluster, Profile> s(prof, {percentage, 1, false});
  for (auto _ : state) {
    schedule_result r = s.schedule_one(c, probe_pod());
    benchmark::DoNotOptimize(r);
  }
  state.counters["pods/s"] = benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

void BM_ScheduleOne(benchmark::State& state) { run(state, seed_profile(), 100); }
void BM_ScheduleOne_Table(benchmark::State& state) {
  using cluster = bound_cluster<in_memory_cluster, batch::node_table_observer>;
  const cluster c(half_full_cluster(static_cast<int>(state.range(0))));
  batch::table_scheduler<cluster, decltype(seed_profile())> s(seed_profile(), {100, 1, false});
  for (auto _ : state) {
    schedule_result r = s.schedule_one(c, probe_pod());
    benchmark::DoNotOptimize(r);
  }
  if (s.scan_fallbacks() != 0 || s.scanned_decisions() == 0) state.SkipWithError("the table path did not decide");
  state.counters["pods/s"] = benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  // Bytes per node the table path keeps beside the cluster: the node table, the engine's prepared
  // columns and the 4-byte row of totals.
  const double nodes = static_cast<double>(state.range(0));
  state.counters["table_path_bytes_per_node"] =
      static_cast<double>(batch_node_table(c).table->bytes() + s.scan().engine().prepared_bytes()) / nodes + 4.0;
}
void BM_ScheduleOne_Summary(benchmark::State& state) {
  using cluster = bound_cluster<in_memory_cluster, gpu_summary>;
  const cluster c(half_full_cluster(static_cast<int>(state.range(0))));
  scheduler<cluster, decltype(seed_profile())> s(seed_profile(), {100, 1, false});
  for (auto _ : state) {
    schedule_result r = s.schedule_one(c, probe_pod());
    benchmark::DoNotOptimize(r);
  }
  state.counters["pods/s"] = benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
void BM_ScheduleOne_Adaptive(benchmark::State& state) { run(state, seed_profile(), 0); }
void BM_ScheduleOne_Dynamic(benchmark::State& state) {
  dynamic_profile<in_memory_cluster> d;
  d.add_check(gpu_check{}).add_check(resource_fit{}).add_score(load_aware{}, 10).add_score(model_affinity{}, 5);
  run(state, d, 100);
}

template <class Cluster>
void bind_release(benchmark::State& state) {
  Cluster c;
  for (int i = 0; i < 16; ++i) {
    node_spec n{"node-" + std::to_string(i), 64000, 256 * 1024, {}, ""};
    n.add_gpus(8, "V100M32", 32768);
    c.add_node(n);
  }
  const pod p = probe_pod();
  node_index node = 0;
  for (auto _ : state) {
    const pod_id id = c.bind(p, make_binding(p, node, 0b1));
    c.unbind(id);
    node = (node + 1) % 16;
  }
}
void BM_BindRelease_NoObserver(benchmark::State& state) { bind_release<bound_cluster<>>(state); }
void BM_BindRelease_TotalsAndTags(benchmark::State& state) {
  bind_release<bound_cluster<in_memory_cluster, cluster_totals, fgd_paper::gpu_affinity_tags>>(state);
}

}  // namespace

BENCHMARK(BM_BindRelease_NoObserver)->Name("BM_BindRelease/0");
BENCHMARK(BM_BindRelease_TotalsAndTags)->Name("BM_BindRelease/2");
BENCHMARK(BM_ScheduleOne)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ScheduleOne_Table)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ScheduleOne_Summary)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ScheduleOne_Dynamic)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ScheduleOne_Adaptive)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMicrosecond);
