// The counted hole table (fill_aware_options::counted_holes; ADR 0017, "Amendment 10"): while the
// one-GPU shares of the pods FillAwareBinding has counted differ from the configured typical pods'
// by more than that table resolves, the hole table E is built from the count. Values worked by hand
// from E(h) = (1 - L) h + L sum_{s <= h} q(s) E(h - s) / Q(h), L = min(1, kappa Q(h)) (fill_aware.hpp).
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "gpusched/core/in_memory_cluster.hpp"
#include "gpusched/profile/profile_file.hpp"
#include "gpusched/schedule/schedule_one.hpp"
#include "gpusched/scoring/fill_aware.hpp"
#include "gpusched/scoring/fill_aware_binding.hpp"
#include "support/builders.hpp"

using namespace gpusched;

namespace {
// 40 % of the pods ask 500 milli of one GPU, 60 % are CPU-only.
typical_workload halves_workload() {
  typical_pod half, cpu;
  half.cpu_milli = 1000, half.gpu_milli = 500, half.num_gpu = 1, half.probability = 0.4;
  cpu.cpu_milli = 1000, cpu.probability = 0.6;
  return typical_workload({half, cpu});
}
// The pods counted: `shares[i]` milli of one GPU (0: CPU-only), each `times` times.
demand_count counted(const std::vector<std::int32_t>& shares, int times) {
  demand_count d;
  for (int t = 0; t < times; ++t) {
    for (const std::int32_t m : shares) d.add(m == 0 ? make_pod("c").cpu(1000).build() : make_pod("g").cpu(1000).gpu_share(m).build());
  }
  return d;
}
}  // namespace

TEST_CASE("a hole table from one-GPU shares, worked by hand") {
  // One share, 500 milli at 0.4, kappa 2: L = 0.8 from h = 500. E(h) = h below 500; from 500,
  // E(h) = 0.2 h + 0.8 (h - 500) = h - 400 up to 999; E(1000) = 200 + 0.8 E(500) = 280.
  fill_aware_options o;
  o.fill_competition = 2.0;
  fill_aware_scorer f(halves_workload(), o);
  const auto configured = f.hole_waste();
  CHECK(configured[499] == doctest::Approx(499));
  CHECK(configured[500] == doctest::Approx(100));
  CHECK(configured[700] == doctest::Approx(300));
  CHECK(configured[1000] == doctest::Approx(280));

  // The same table from the shares.
  const std::vector<one_gpu_share> q{{500, 0.4}};
  CHECK(std::vector<double>(configured.begin(), configured.end()) == hole_waste_table(q, 2.0));
  // Shares in place of the workload's, with a refill chance per sharing pod: 400 milli at 0.4, kappa =
  // 0.8 / 0.4 = 2, L = 0.8 from 400: E(h) = h - 320 from 400, E(h) = 0.2 h + 0.8 (h - 720) = h - 576
  // from 800, E(1000) = 200 + 0.8 E(600) = 200 + 0.8 x 280 = 424.
  fill_aware_options per_pod;
  per_pod.fill_per_sharing_pod = 0.8;
  fill_aware_scorer g(halves_workload(), fill_aware_options{});
  fill_aware_scorer h(halves_workload(), per_pod);
  h.set_hole_shares(std::vector<one_gpu_share>{{400, 0.4}});
  CHECK(h.hole_waste()[500] == doctest::Approx(180));
  CHECK(h.hole_waste()[900] == doctest::Approx(324));
  CHECK(h.hole_waste()[1000] == doctest::Approx(424));

  // Whole GPUs only (kappa 50: L = 1 at 1000, where the one shape fits): E(1000) = 0, E(h) = h below.
  g.set_hole_shares(std::vector<one_gpu_share>{{1000, 1.0}});
  CHECK(g.hole_waste()[1000] == 0.0);
  CHECK(g.hole_waste()[999] == doctest::Approx(999));

  CHECK_THROWS_WITH(g.set_hole_shares(std::vector<one_gpu_share>{{0, 0.5}}),
                    "hole shares: a share must be within 1..1000 milli");
  CHECK_THROWS_WITH(g.set_hole_shares(std::vector<one_gpu_share>{{500, 1.5}}),
                    "hole shares: a probability must be within 0..1");
  CHECK(g.hole_waste()[999] == doctest::Approx(999));  // unchanged by the refused calls (configured: 499)
}

TEST_CASE("the counted table's switch: total variation beyond 5 % and two sampling errors") {
  const std::vector<one_gpu_share> configured = one_gpu_shares(halves_workload());
  // The configured mix itself: distance 0.
  CHECK_FALSE(hole_shares_differ(configured, counted({500, 500, 0, 0, 0}, 20)));
  // 100 pods, half of them 500 milli, half CPU-only: distance (0.1 + 0.1) / 2 = 0.1; the sampling
  // error of each category sqrt(0.25 / 100) = 0.05, half their sum 0.05: 0.1 <= 0.05 + 2 x 0.05.
  CHECK_FALSE(hole_shares_differ(configured, counted({500, 0}, 50)));
  // The same mix over 10,000 pods: errors 0.005 each, threshold 0.05 + 0.01: 0.1 differs.
  CHECK(hole_shares_differ(configured, counted({500, 0}, 5000)));
  // 100 whole-GPU pods: distance (0.4 + 1 + 0.6) / 2 = 1, no sampling error at shares 0 and 1.
  CHECK(hole_shares_differ(configured, counted({1000}, 100)));
  // Fewer than 30 pods: never.
  CHECK_FALSE(hole_shares_differ(configured, counted({1000}, 29)));
}

TEST_CASE("FillAwareRefill counting pods takes the counted hole table while the count differs") {
  // Nodes a (0) and b (1), one GPU each; b's holds a 300-milli pod. A 300-milli pod to place.
  // Configured (500 milli at 0.4, kappa = 18.66 / 0.4, L = 1 from 500): E(h) = h below 500, E(h) =
  // E(h - 500) above: E(1000) = 0, E(700) = 200, E(400) = 400. On a: E(1000) - E(700) = -200; on b:
  // E(700) - E(400) = -200: a tie, to the first node, a.
  // Counted after 100 whole-GPU pods and the pod itself: the 95 % rule keeps the whole-GPU pods alone
  // (100 of 101 cover 95.95), q(1000) = 1 and no sharing pod (every hole a pod fits is refilled):
  // E(h) = h below 1000, E(1000) = 0. On a: 0 - 700 = -700; on b: E(700) - E(400) = 300: b.
  const std::string head =
      "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: p\n"
      "  plugins:\n    multiPoint:\n      disabled:\n      - name: '*'\n    filter:\n      enabled:\n"
      "      - name: NodeResourcesFit\n      - name: GPUCheck\n    score:\n      enabled:\n"
      "      - name: FillAwareRefill\n  pluginConfig:\n  - name: FillAwareRefill\n    args:\n      cpuWeight: 0\n";
  const plugin_context ctx{std::make_shared<const typical_workload>(halves_workload()), 0, true};  // counts pods
  schedule_options first;
  first.tie_break = tie_break_rule::first_node;
  const auto place = [&](const std::string& args) {
    in_memory_cluster c;
    c.add_node(testing::gpu_node("a", 64000, 1 << 20, 1));
    c.add_node(testing::gpu_node("b", 64000, 1 << 20, 1));
    const pod held = make_pod("held").cpu(1000).gpu_share(300);
    traits_of<in_memory_cluster>::reserve(c, held, make_binding(held, 1, gpu_set{0b1}));
    scheduler<in_memory_cluster, dynamic_profile<in_memory_cluster>> s(
        parse_profile_file<in_memory_cluster>(head + args, "cfg.yaml", ctx).profile, first);
    for (int i = 0; i < 100; ++i) {  // whole-GPU pods no node fits (their CPU): counted, not placed
      CHECK_FALSE(s.place_one(c, make_pod("w" + std::to_string(i)).cpu(1'000'000).gpus(1)).scheduled);
    }
    const auto r = s.place_one(c, make_pod("s").cpu(1000).gpu_share(300));
    REQUIRE(r.scheduled);
    return r.where.node;
  };
  CHECK(place("") == 1);                          // countedHoles is on by default
  CHECK(place("      countedHoles: false\n") == 0);  // the configured table throughout
  CHECK_THROWS_WITH(parse_profile_file<in_memory_cluster>(head + "      countedHoles: 2\n", "cfg.yaml", ctx),
                    doctest::Contains("cfg.yaml:20: FillAwareRefill.args.countedHoles"));
}

TEST_CASE("FillAwareBinding keeps the configured table while the count agrees, and says which it uses") {
  fill_aware_options o;
  o.observe_demand = true;
  o.counted_holes = true;
  o.cpu_weight = 0.0;
  const fill_aware_binding_scorer f(halves_workload(), o);
  in_memory_cluster c;
  c.add_node(testing::gpu_node("a", 64000, 1 << 20, 1));
  const pod half = make_pod("half").cpu(1000).gpu_share(500);
  // 40 pods of 500 milli and 60 CPU-only: the configured mix, distance 0.
  for (int i = 0; i < 100; ++i) {
    f.pre_filter(c, i < 40 ? make_pod("h" + std::to_string(i)).cpu(1000).gpu_share(500).build()
                           : make_pod("c" + std::to_string(i)).cpu(1000).build());
  }
  CHECK(f.pre_score(c, half) == score_status::ok);
  CHECK(f.holes_counted_at() == 0.0);
  // 100 whole-GPU pods more: 200 counted (twice 100: checked again), q(1000) = 0.5: distance
  // (0.2 + 0.5 + 0.3) / 2 = 0.5, beyond 0.05 + errors of about 0.1: the count's table from 200 pods.
  for (int i = 0; i < 100; ++i) f.pre_filter(c, make_pod("w" + std::to_string(i)).cpu(1000).gpus(1).build());
  CHECK(f.pre_score(c, half) == score_status::ok);
  CHECK(f.holes_counted_at() == 200.0);
  // Without observe_demand nothing is counted and counted_holes does nothing.
  o.observe_demand = false;
  const fill_aware_binding_scorer g(halves_workload(), o);
  CHECK(g.pre_score(c, half) == score_status::ok);
  CHECK(g.holes_counted_at() == 0.0);
}
