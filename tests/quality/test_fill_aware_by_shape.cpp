// fill_aware_options::cpu_by_shape (docs/adr/0017-quality-method.md): CPU stranding as the expectation
// over the workload's GPU shapes, each at its own CPU per GPU; off by default. And cpu_only_fit
// (Amendment 12), which acts in that form only: CPU-only pods to the tightest CPU surplus.
#include <doctest/doctest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gpusched/core/in_memory_cluster.hpp"
#include "gpusched/profile/profile_file.hpp"
#include "gpusched/schedule/schedule_one.hpp"
#include "gpusched/scoring/fill_aware.hpp"
#include "gpusched/scoring/fill_aware_binding.hpp"
#include "support/builders.hpp"
#include "support/typical_workloads.hpp"

using namespace gpusched;

namespace {
using testing::two_ratios;
}  // namespace

TEST_CASE("stranded_by_shape: the GPU shapes' stranding, each at its own ratio, weighted") {
  fill_aware_options o;
  o.cpu_by_shape = true;
  const fill_aware_scorer f(two_ratios(), o);
  // 2000 milli-GPU free, 8000 milli-CPU left: at 4000/GPU the CPU serves 2000 (none stranded); at
  // 12000/GPU it serves 666.7, so 1333.3 stranded. Weights 0.4 / 0.8 = 0.5 each: 666.7.
  CHECK(f.stranded_by_shape(2000, 8000) == doctest::Approx(2000.0 / 3));
  // 4000 CPU left: 1000 and 1666.7 stranded -> 1333.3.
  CHECK(f.stranded_by_shape(2000, 4000) == doctest::Approx(4000.0 / 3));
  // The mean-ratio form sees (0.4 * 4000 + 0.4 * 12000) / 0.8 = 8000 per GPU: 8000 CPU serve exactly
  // 1000 of the 2000, the same as neither shape alone.
  CHECK(f.cpu_per_gpu() == doctest::Approx(8000));
}

TEST_CASE("cpu_by_shape scores a CPU-only pod by the stranding it adds; off by default") {
  in_memory_cluster c;
  c.add_node(testing::gpu_node("n", 8000, 1 << 20, 2));
  const pod cpu_only = make_pod("c").cpu(4000);
  fill_aware_options o;
  o.cpu_by_shape = true;
  const fill_aware_scorer by_shape(two_ratios(), o);
  // saved = cpu_weight 0.5 x (666.7 - 1333.3) = -333.3 milli-GPU; score = (1e6 + saved) x 1000, rounded.
  CHECK(by_shape.score(c, cpu_only, 0) == 999'666'667);
  // Default (mean ratio 8000): before 2000 - 1000 = 1000 stranded, after 2000 - 500 = 1500: saved -250.
  const fill_aware_scorer mean(two_ratios());
  CHECK(mean.score(c, cpu_only, 0) == 999'750'000);
}

TEST_CASE("cpu_by_shape_cpu_only: CPU-only pods by shape, GPU pods by the mean ratio") {
  in_memory_cluster c;
  c.add_node(testing::gpu_node("n", 8000, 1 << 20, 2));
  const pod cpu_only = make_pod("c").cpu(4000);
  const pod gpu = make_pod("g").cpu(4000).gpus(1);
  fill_aware_options o;
  o.cpu_by_shape_cpu_only = true;
  const fill_aware_scorer f(two_ratios(), o);
  CHECK(f.score(c, cpu_only, 0) == 999'666'667);  // as cpu_by_shape: saved -333.3
  // The GPU pod by the mean ratio 8000: stranded 2000 - 1000 = 1000 before, 1000 - 500 = 500 after:
  // saved 0.5 x 500 = 250. Hole term: both GPU shapes are whole GPUs, so E(1000) = E(0) = 0.
  CHECK(f.score(c, gpu, 0) == 1'000'250'000);
  // cpu_by_shape scores it by shape: 666.7 before, (0 + 666.7) / 2 = 333.3 after: saved 166.7.
  fill_aware_options all;
  all.cpu_by_shape = true;
  CHECK(fill_aware_scorer(two_ratios(), all).score(c, gpu, 0) == 1'000'166'667);
}

// cpu_only_fit (ADR 0017, "Amendment 12"): a CPU-only pod's saving falls by cpu_only_fit x the node's
// CPU surplus after it, cpu_left x 1000 / r - free GPU milli, r the mean ratio (8000 per GPU here).
TEST_CASE("cpu_only_fit: a CPU-only pod goes where the least CPU is left beyond the free GPUs' need") {
  in_memory_cluster c;
  c.add_node(testing::gpu_node("b", 40000, 1 << 20, 2));
  c.add_node(testing::gpu_node("d", 30000, 1 << 20, 2));
  c.add_node(testing::gpu_node("a", 8000, 1 << 20, 2));
  const pod cpu_only = make_pod("c").cpu(4000);
  fill_aware_options o;
  o.cpu_by_shape = true;
  o.cpu_only_fit = 0.01;
  const fill_aware_scorer fit(two_ratios(), o);
  // b: 36000 CPU left serves 2000 milli-GPU at 4000 and at 12000 per GPU, before and after: nothing
  // stranded. Surplus after 36000 / 8 - 2000 = 2500 milli-GPU: saved -25.
  CHECK(fit.score(c, cpu_only, 0) == 999'975'000);
  // d: 26000 left still serves both GPUs at 12000 (2166.7 >= 2000): nothing stranded; surplus
  // 3250 - 2000 = 1250: saved -12.5. The tighter node wins; without the option the two tie.
  CHECK(fit.score(c, cpu_only, 1) == 999'987'500);
  // a: the stranding of the test above (-333.3), and a deficit 500 - 2000 = -1500 that adds 15.
  CHECK(fit.score(c, cpu_only, 2) == 999'681'667);
  o.cpu_only_fit = 0.0;
  const fill_aware_scorer off(two_ratios(), o);
  CHECK(off.score(c, cpu_only, 0) == 1'000'000'000);
  CHECK(off.score(c, cpu_only, 1) == 1'000'000'000);
  // Only CPU-only pods, and only by shape: a GPU pod and the mean form score as without it.
  const pod gpu = make_pod("g").cpu(4000).gpus(1);
  o.cpu_only_fit = 0.01;
  CHECK(fill_aware_scorer(two_ratios(), o).score(c, gpu, 2) == off.score(c, gpu, 2));
  fill_aware_options mean;
  mean.cpu_only_fit = 0.01;
  CHECK(fill_aware_scorer(two_ratios(), mean).score(c, cpu_only, 0) == fill_aware_scorer(two_ratios()).score(c, cpu_only, 0));
  // A node of absurd CPU: 4e9 milli-CPU left is 5e8 milli-GPU of surplus, 5e6 at 0.01, more than
  // score_offset (1e6); the charge stops at a quarter of it, so the pod still fits: (1e6 - 2.5e5) x 1000.
  in_memory_cluster huge;
  huge.add_node(testing::gpu_node("h", 4'000'004'000, 1 << 20, 2));
  CHECK(fill_aware_scorer(two_ratios(), o).score(huge, cpu_only, 0) == 750'000'000);
  o.cpu_only_fit = 1.5;
  CHECK_THROWS_WITH(fill_aware_scorer(two_ratios(), o), doctest::Contains("fill_aware_options.cpu_only_fit"));
}

TEST_CASE("FillAwareRefill's cpuOnlyFit: 0.01 by default, acting only when CPU binds") {
  CHECK(fill_aware_refill_scorer::defaults().cpu_only_fit == 0.01);
  CHECK(fill_aware_options{}.cpu_only_fit == 0.0);  // FillAwareBinding's, and FillAware's
  // The workload asks (0.4 x 4000 + 0.4 x 12000 + 0.2 x 2000) / 0.8 = 8500 milli-CPU per GPU; the
  // cluster has 78000 / 12 = 6500: CPU binds, so the by-shape form scores. b and d strand nothing
  // and tie without the option; with it d, the tighter (previous test).
  const std::string head =
      "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: p\n"
      "  plugins:\n    multiPoint:\n      disabled:\n      - name: '*'\n    filter:\n      enabled:\n"
      "      - name: NodeResourcesFit\n      - name: GPUCheck\n    score:\n      enabled:\n"
      "      - name: FillAwareRefill\n  pluginConfig:\n  - name: FillAwareRefill\n    args:\n      keepBlocks: 0\n";
  const plugin_context ctx{std::make_shared<const typical_workload>(two_ratios()), 0, false};
  schedule_options first;
  first.tie_break = tie_break_rule::first_node;
  const auto place = [&](const std::string& args, std::int64_t z_cpu) {
    in_memory_cluster c;
    c.add_node(testing::gpu_node("b", 40000, 1 << 20, 2));
    c.add_node(testing::gpu_node("d", 30000, 1 << 20, 2));
    c.add_node(testing::gpu_node("z", z_cpu, 1 << 20, 8));
    scheduler<in_memory_cluster, dynamic_profile<in_memory_cluster>> s(
        parse_profile_file<in_memory_cluster>(head + args, "cfg.yaml", ctx).profile, first);
    const auto r = s.place_one(c, make_pod("c").cpu(4000));
    REQUIRE(r.scheduled);
    return r.where.node;
  };
  CHECK(place("", 8000) == 1);                        // on by default: d
  CHECK(place("      cpuOnlyFit: 0\n", 8000) == 0);  // off: the tie, to the first node
  // z with 400000 CPU: the cluster has 470000 / 12 = 39167 per GPU, CPU does not bind, the mean
  // form scores and the option does nothing (b and d both serve their GPUs at 8000: a tie again).
  CHECK(place("", 400000) == 0);
  CHECK_THROWS_WITH(parse_profile_file<in_memory_cluster>(head + "      cpuOnlyFit: 2\n", "cfg.yaml", ctx),
                    doctest::Contains("cfg.yaml:20: FillAwareRefill.args.cpuOnlyFit"));
}
