// FillAwareBinding (scoring/fill_aware_binding.hpp): FillAware's CPU term by shape exactly when the
// workload's CPU per GPU reaches the cluster's; the mean form otherwise. Values worked by hand.
#include <doctest/doctest.h>

#include <string>
#include <string_view>
#include <vector>

#include "gpusched/core/in_memory_cluster.hpp"
#include "gpusched/preflight/gpu_check.hpp"
#include "gpusched/profile/dynamic_profile.hpp"
#include "gpusched/profile/static_profile.hpp"
#include "gpusched/schedule/schedule_one.hpp"
#include "gpusched/scoring/fill_aware_binding.hpp"
#include "support/builders.hpp"
#include "support/typical_workloads.hpp"

using namespace gpusched;

namespace {
using testing::two_ratios;
node_spec cpu_node(std::string name, milli cpu) { return node_spec{std::move(name), cpu, 1 << 20, {}, ""}; }
struct zero_score {  // a scorer without hooks
  static constexpr std::string_view name() noexcept { return "Zero"; }
  std::int64_t score(const in_memory_cluster&, const pod&, node_index) const { return 0; }
};
}  // namespace

TEST_CASE("workload and cluster CPU per GPU, and the rule") {
  // Workload: (0.4 x 4000 + 0.4 x 12000 + 0.2 x 2000) / (0.8 x 1000) = 6800 / 800 = 8.5 CPU per GPU,
  // the CPU-only shape included (it takes CPU, no GPU).
  CHECK(workload_cpu_per_gpu(two_ratios()) == doctest::Approx(8500));
  typical_pod cpu_only;
  cpu_only.cpu_milli = 1000, cpu_only.probability = 1.0;
  CHECK(workload_cpu_per_gpu(typical_workload({cpu_only})) == 0.0);  // no GPU demand: no ratio

  in_memory_cluster c;
  c.add_node(testing::gpu_node("g", 8000, 1 << 20, 2));
  CHECK(cluster_cpu_per_gpu(c) == doctest::Approx(4000));  // 8000 milli-CPU over 2 GPUs
  c.add_node(cpu_node("c", 16000));
  CHECK(cluster_cpu_per_gpu(c) == doctest::Approx(12000));  // every node's CPU: (8000 + 16000) / 2
  CHECK(cluster_cpu_per_gpu(in_memory_cluster{}) == 0.0);

  CHECK(cpu_binds(8500, 4000));
  CHECK(cpu_binds(8500, 8500));  // equal: CPU and GPU run out together; CPU counts as binding
  CHECK_FALSE(cpu_binds(8500, 12000));
  CHECK_FALSE(cpu_binds(8500, 0));  // a cluster without GPUs strands no GPU
}

TEST_CASE("FillAwareBinding scores by shape on a CPU-bound cluster and by the mean ratio otherwise") {
  const fill_aware_binding_scorer f(two_ratios());
  const pod cpu_only = make_pod("c").cpu(4000);
  const pod gpu = make_pod("g").cpu(4000).gpus(1);

  // Cluster 1: node 0 with 8000 milli-CPU and 2 GPUs alone: 4000 per GPU < 8500, CPU binds.
  in_memory_cluster c;
  c.add_node(testing::gpu_node("n", 8000, 1 << 20, 2));
  CHECK(f.by_shape(c));
  CHECK(f.pre_score(c, cpu_only) == score_status::ok);
  // By shape (weights 0.4 / 0.8 = 0.5 each), 2000 milli-GPU free: before, 8000 CPU serve 2000 at
  // 4000/GPU (0 stranded) and 666.7 at 12000/GPU (1333.3): 666.7; after the CPU-only pod (4000 left):
  // 1000 and 1666.7 -> 1333.3. saved = 0.5 x (666.7 - 1333.3) = -333.3; score (1e6 + saved) x 1000.
  CHECK(f.score(c, cpu_only, 0) == 999'666'667);
  // The GPU pod: before 666.7; after (1000 free, 4000 CPU): 0 at 4000/GPU, 1000 - 333.3 = 666.7 at
  // 12000/GPU -> 333.3: saved 0.5 x 333.3 = 166.7. Hole term 0: both GPU shapes take whole GPUs, so
  // E(1000) = E(0) = 0.
  CHECK(f.pre_score(c, gpu) == score_status::ok);
  CHECK(f.score(c, gpu, 0) == 1'000'166'667);

  // Cluster 2: the same node plus a CPU-only node of 16000: 24000 / 2 = 12000 per GPU > 8500, GPU
  // binds. The mean ratio of the GPU shapes is (0.4 x 4000 + 0.4 x 12000) / 0.8 = 8000 per GPU.
  c.add_node(cpu_node("c", 16000));
  CHECK_FALSE(f.by_shape(c));
  CHECK(f.pre_score(c, cpu_only) == score_status::ok);
  // Node 0, CPU-only pod: stranded 2000 - 8000/8 = 1000 before, 2000 - 4000/8 = 1500 after:
  // saved 0.5 x (1000 - 1500) = -250.
  CHECK(f.score(c, cpu_only, 0) == 999'750'000);
  // GPU pod: 1000 before, 1000 - 500 = 500 after: saved 250.
  CHECK(f.pre_score(c, gpu) == score_status::ok);
  CHECK(f.score(c, gpu, 0) == 1'000'250'000);
}

TEST_CASE("FillAwareBinding's copies share the decision; the device choice needs no PreScore") {
  const fill_aware_binding_scorer f(two_ratios());
  const fill_aware_binding_scorer copy = f;  // a profile holds the score plugin and the selector apart
  in_memory_cluster c;
  c.add_node(testing::gpu_node("n", 8000, 1 << 20, 2));
  const pod cpu_only = make_pod("c").cpu(4000);
  CHECK(f.pre_score(c, cpu_only) == score_status::ok);
  CHECK(copy.score(c, cpu_only, 0) == 999'666'667);  // by shape, decided through f
  // Whole GPUs: the lowest-index free devices, whichever form; nothing for a CPU-only pod.
  CHECK(fill_aware_binding_scorer(two_ratios()).select(c, make_pod("g").cpu(4000).gpus(1), 0) == gpu_set{1});
  CHECK(f.select(c, cpu_only, 0) == gpu_set{0});
}

TEST_CASE("FillAwareBinding on a capacity-stamped cluster recounts only when nodes are added or changed") {
  // The clusters and the rule of the first test case: one node of 8000 milli-CPU and 2 GPUs is 4000
  // per GPU (CPU binds against 8500); a CPU-only node of 16000 makes it 12000 (GPU binds).
  using stamped = bound_cluster<in_memory_cluster, node_versions>;
  const fill_aware_binding_scorer f(two_ratios());
  const pod gpu = make_pod("g").cpu(4000).gpus(1);
  stamped c;
  c.add_node(testing::gpu_node("n", 8000, 1 << 20, 2));
  const std::uint64_t v0 = cluster_capacity_version(c);
  CHECK(f.pre_score(c, gpu) == score_status::ok);
  CHECK(f.score(c, gpu, 0) == 1'000'166'667);  // by shape: the first test case's value

  // A reservation leaves the capacity stamp (and the decision) alone.
  c.bind(gpu, make_binding(gpu, 0, gpu_set{1}));
  CHECK(cluster_capacity_version(c) == v0);
  CHECK(f.by_shape(c));

  // An added node moves the stamp: the next PreScore recounts and takes the mean form.
  c.add_node(cpu_node("c", 16000));
  CHECK(cluster_capacity_version(c) != v0);
  CHECK_FALSE(f.by_shape(c));
  const std::uint64_t v1 = cluster_capacity_version(c);
  c.changed(1);  // a host that changed node 1 through base(): a fresh stamp, the same count
  CHECK(cluster_capacity_version(c) != v1);
  CHECK_FALSE(f.by_shape(c));

  // Another cluster (its own stamps) beside it: each is decided by its own capacity, in turn.
  stamped other;
  other.add_node(testing::gpu_node("m", 8000, 1 << 20, 2));
  CHECK(f.by_shape(other));
  CHECK_FALSE(f.by_shape(c));
  CHECK(f.by_shape(other));
}

TEST_CASE("FillAwareBinding reuses its count while the capacity stamp stands") {
  // A node added through base() without changed(n) is outside the observers' contract: the stamp
  // does not move, so the decision counted before it stands until changed(n) is called. (Only the
  // capacity stamp and the cluster's nodes are read here.)
  using stamped = bound_cluster<in_memory_cluster, node_versions>;
  const fill_aware_binding_scorer f(two_ratios());
  stamped c;
  c.add_node(testing::gpu_node("n", 8000, 1 << 20, 2));
  CHECK(f.by_shape(c));  // 4000 per GPU: CPU binds
  c.base().add_node(cpu_node("c", 16000));
  CHECK(f.by_shape(c));  // counted: the stamp has not moved (a recount would say 12000 per GPU: no)
  c.changed(0);
  CHECK_FALSE(f.by_shape(c));
}

TEST_CASE("demand_count: d and its standard error by hand, and when they settle the side") {
  demand_count d;
  // 15 pods of 8000 milli-CPU and one whole GPU, 15 CPU-only pods of 16000: d = 360000 / 15000 = 24
  // milli-CPU per milli-GPU, 24000 per GPU. Residuals cpu - 24 gpu: -16000 (15 times), +16000 (15):
  // sample variance 30 x 16000^2 / 29; se = sqrt(variance / 30) / (15000 / 30) x 1000 = 5942.2.
  for (int i = 0; i < 15; ++i) d.add(make_pod("g").cpu(8000).gpus(1));
  for (int i = 0; i < 14; ++i) d.add(make_pod("c").cpu(16000));
  CHECK(d.standard_error() == std::numeric_limits<double>::infinity());  // 29 pods: below the minimum
  CHECK_FALSE(d.binds(12000).has_value());
  d.add(make_pod("c").cpu(16000));
  CHECK(d.cpu_per_gpu() == doctest::Approx(24000));
  CHECK(d.standard_error() == doctest::Approx(std::sqrt(30.0 * 16000 * 16000 / 29 / 30) / 500 * 1000));
  CHECK(d.standard_error() == doctest::Approx(5942.2).epsilon(1e-4));
  // Two standard errors, 11884.4, around 24000: the side is settled below 12115.6 and above 35884.4.
  CHECK(d.binds(12000) == std::optional<bool>(true));
  CHECK_FALSE(d.binds(16000).has_value());
  CHECK_FALSE(d.binds(35000).has_value());
  CHECK(d.binds(36000) == std::optional<bool>(false));
  CHECK_FALSE(d.binds(0).has_value());  // a cluster without GPUs: the rule's business

  demand_count cpu_only;  // no GPU demand: no ratio, nothing settled
  for (int i = 0; i < 40; ++i) cpu_only.add(make_pod("c").cpu(1000));
  CHECK(cpu_only.cpu_per_gpu() == 0.0);
  CHECK_FALSE(cpu_only.binds(12000).has_value());
}

TEST_CASE("FillAwareBinding with observe_demand: the pods seen decide once they settle the side") {
  // The cluster of the first test case's second half: 24000 milli-CPU over 2 GPUs, c = 12000. The
  // configured workload (d = 8500) says GPU binds: the mean form.
  in_memory_cluster c;
  c.add_node(testing::gpu_node("n", 8000, 1 << 20, 2));
  c.add_node(cpu_node("c", 16000));
  fill_aware_options o;
  o.observe_demand = true;
  const fill_aware_binding_scorer f(two_ratios(), o);
  const fill_aware_binding_scorer copy = f;  // the profile's selector: the same count
  CHECK(f.observes_demand());
  CHECK_FALSE(f.by_shape(c));
  // The pods asked about (PreFilter): the demand_count case above, d = 24000 +- 5942.2, settled above
  // 12000 by 30 pods.
  for (int i = 0; i < 15; ++i) f.pre_filter(c, make_pod("g" + std::to_string(i)).cpu(8000).gpus(1));
  for (int i = 0; i < 14; ++i) f.pre_filter(c, make_pod("c" + std::to_string(i)).cpu(16000));
  // A pod asked about again (a waiting pod) is not counted again: still 29 pods, the configured d.
  for (int i = 0; i < 5; ++i) f.pre_filter(c, make_pod("c0").cpu(16000));
  CHECK(f.observed().n == 29);
  CHECK_FALSE(f.by_shape(c));
  const pod last = make_pod("c14").cpu(16000);
  f.pre_filter(c, last);
  CHECK(copy.observed().n == 30);
  CHECK(f.by_shape(c));
  CHECK(copy.by_shape(c));
  // PreScore takes the form from the count and counts nothing.
  for (int i = 0; i < 30; ++i) CHECK(f.pre_score(c, make_pod("s" + std::to_string(i)).cpu(64000)) == score_status::ok);
  CHECK(f.observed().n == 30);
  // Scores are the by-shape form's now. Node 0 is the first test case's node (8000 CPU, 2 GPUs free):
  // a CPU-only pod of 4000 scores 999'666'667 by shape there, and 999'750'000 in the mean form.
  CHECK(f.score(c, make_pod("probe").cpu(4000), 0) == 999'666'667);

  // The batch engine's PreScore (pre_score) reads the count and adds nothing: 30 more CPU-only pods
  // would move d.
  for (int i = 0; i < 30; ++i) (void)f.pre_score(c, make_pod("b" + std::to_string(i)).cpu(64000));
  CHECK(f.observed().n == 30);
  CHECK(f.by_shape(c));

  // Without the option nothing is counted and the configured d decides.
  const fill_aware_binding_scorer plain(two_ratios());
  CHECK_FALSE(plain.observes_demand());
  for (int i = 0; i < 40; ++i) plain.pre_filter(c, make_pod("x" + std::to_string(i)).cpu(16000));
  CHECK(plain.observed().n == 0);
  CHECK_FALSE(plain.by_shape(c));

  // Pods without a name cannot be told apart: each ask counts.
  const fill_aware_binding_scorer unnamed(two_ratios(), o);
  pod anonymous = make_pod("a").cpu(16000);
  anonymous.name.clear();
  for (int i = 0; i < 3; ++i) unnamed.pre_filter(c, anonymous);
  CHECK(unnamed.observed().n == 3);
}

TEST_CASE("FillAwareBinding counts every pod a scheduling cycle is run for, also those no node fits") {
  // One node of 8000 milli-CPU and 2 GPUs (c = 4000 per GPU). A pod asking 4 GPUs fits nowhere: its
  // cycle ends at Filter and PreScore never runs, but PreFilter has counted it. Through both
  // profiles, and through schedule_one without nodes at all (PreFilter runs before Filter).
  in_memory_cluster c;
  c.add_node(testing::gpu_node("n", 8000, 1 << 20, 2));
  fill_aware_options o;
  o.observe_demand = true;
  const pod wide = make_pod("wide").cpu(1000).gpus(4);
  const pod fits = make_pod("fits").cpu(1000).gpus(1);

  const fill_aware_binding_scorer f(two_ratios(), o);
  scheduler<in_memory_cluster, decltype(make_profile(checks(gpu_check{}), scores(weighted{f, 1}), f))> s(
      make_profile(checks(gpu_check{}), scores(weighted{f, 1}), f));
  CHECK_FALSE(s.schedule_one(c, wide).scheduled);
  CHECK(f.observed().n == 1);
  CHECK(f.observed().gpu == 4000);  // 4 whole GPUs, in milli-GPU
  CHECK(s.schedule_one(c, fits).scheduled);
  CHECK(f.observed().n == 2);
  (void)s.schedule_one(c, wide);  // asked about again: not counted again
  CHECK(f.observed().n == 2);

  const fill_aware_binding_scorer g(two_ratios(), o);
  dynamic_profile<in_memory_cluster> dp;
  dp.add_check(gpu_check{});
  dp.add_score(zero_score{}, 1);  // no PreFilter: the profile forwards to scorer 1 only
  dp.add_score(g, 1);
  scheduler<in_memory_cluster, dynamic_profile<in_memory_cluster>> ds(dp);
  CHECK_FALSE(ds.schedule_one(c, wide).scheduled);
  CHECK(g.observed().n == 1);

  const fill_aware_binding_scorer h(two_ratios(), o);
  scheduler<in_memory_cluster, decltype(make_profile(checks(gpu_check{}), scores(weighted{h, 1}), h))> empty(
      make_profile(checks(gpu_check{}), scores(weighted{h, 1}), h));
  CHECK_FALSE(empty.schedule_one(in_memory_cluster{}, fits).scheduled);
  CHECK(h.observed().n == 1);
}

TEST_CASE("seen_names: a waiting pod asked about again is not counted again while four others share its set") {
  // Five names of one set (searched here: the set is the name's std::hash modulo seen_names::sets).
  std::vector<std::string> same;
  const std::size_t set = seen_names::set_of("p0");
  for (int i = 0; same.size() < 5; ++i) {
    std::string n = "p" + std::to_string(i);
    if (seen_names::set_of(n) == set) same.push_back(std::move(n));
  }
  fill_aware_options o;
  o.observe_demand = true;
  const fill_aware_binding_scorer f(two_ratios(), o);
  in_memory_cluster c;
  c.add_node(testing::gpu_node("n", 8000, 1 << 20, 2));
  // Four pods of one set asked about in turn, ten rounds (four pods waiting, retried): counted once each.
  for (int round = 0; round < 10; ++round) {
    for (int k = 0; k < 4; ++k) f.pre_filter(c, make_pod(same[k]).cpu(1000).gpus(1));
  }
  CHECK(f.observed().n == 4);
  // A fifth takes the place of the least recently asked (same[0]): it is counted, and so is same[0]
  // when asked again, which in turn takes the place of same[1]; same[4], asked just before, is known.
  f.pre_filter(c, make_pod(same[4]).cpu(1000).gpus(1));
  CHECK(f.observed().n == 5);
  f.pre_filter(c, make_pod(same[0]).cpu(1000).gpus(1));
  CHECK(f.observed().n == 6);
  f.pre_filter(c, make_pod(same[4]).cpu(1000).gpus(1));
  CHECK(f.observed().n == 6);
  f.pre_filter(c, make_pod(same[1]).cpu(1000).gpus(1));
  CHECK(f.observed().n == 7);

  seen_names t;  // the table alone: new, then known
  CHECK(t.insert("x"));
  CHECK_FALSE(t.insert("x"));
}
