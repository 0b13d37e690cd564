// FillAware's block term (fill_aware_options::keep_blocks; ADR 0017, "Amendment 9"): once the
// cluster has turned over, a placement that takes away a node's room for a k-GPU pod (k >= 2) in its
// wholly free GPUs costs keep_blocks * p_k * 1000 k milli-GPU. Values worked by hand; a score is
// (1e6 + milli-GPU saved) x 1000, so a cost of x milli-GPU lowers it by 1000 x.
#include <doctest/doctest.h>

#include <array>
#include <bit>
#include <memory>
#include <string>

#include "gpusched/core/bound_cluster.hpp"
#include "gpusched/core/cluster_totals.hpp"
#include "gpusched/core/in_memory_cluster.hpp"
#include "gpusched/profile/profile_file.hpp"
#include "gpusched/schedule/schedule_one.hpp"
#include "gpusched/scoring/fill_aware.hpp"
#include "gpusched/scoring/fill_aware_binding.hpp"
#include "support/builders.hpp"

using namespace gpusched;

namespace {
// Whole-GPU pods only, so that no hole term moves: one GPU at 0.5, two GPUs at 0.25, four at 0.25.
typical_workload blocks_workload() {
  typical_pod one, two, four;
  one.cpu_milli = 1000, one.gpu_milli = 1000, one.num_gpu = 1, one.probability = 0.5;
  two.cpu_milli = 1000, two.gpu_milli = 1000, two.num_gpu = 2, two.probability = 0.25;
  four.cpu_milli = 1000, four.gpu_milli = 1000, four.num_gpu = 4, four.probability = 0.25;
  return typical_workload({one, two, four});
}
fill_aware_options blocks_options(double beta) {
  fill_aware_options o;
  o.cpu_weight = 0.0;  // the hole and block terms alone
  o.keep_blocks = beta;
  return o;
}
using totalled = bound_cluster<in_memory_cluster, cluster_totals>;
// keep_blocks 1 over blocks_workload(), counting the pods it sees.
fill_aware_binding_scorer counting_scorer() {
  fill_aware_options o = blocks_options(1.0);
  o.observe_demand = true;
  return fill_aware_binding_scorer(blocks_workload(), o);
}
totalled four_free_gpus() {
  totalled c;
  c.add_node(testing::gpu_node("four", 64000, 1 << 20, 4));
  return c;
}
}  // namespace

TEST_CASE("gpu_turnover: turned over once the GPU given back reaches the GPU held") {
  CHECK_FALSE(gpu_turnover{0, 0}.turned_over());  // nothing given back: never, even on an empty cluster
  CHECK_FALSE(gpu_turnover{1000, 999}.turned_over());
  CHECK(gpu_turnover{1000, 1000}.turned_over());
  CHECK(gpu_turnover{0, 500}.turned_over());

  totalled c;
  c.add_node(testing::gpu_node("n", 64000, 1 << 20, 4));
  const pod a = make_pod("a").cpu(1000).gpus(2);
  const pod b = make_pod("b").cpu(1000).gpu_share(500);
  const pod_id ia = c.bind(a, make_binding(a, 0, gpu_set{0b11}));
  c.bind(b, make_binding(b, 0, gpu_set{0b100}));
  CHECK(cluster_gpu_turnover(c).allocated == 2500);
  CHECK(cluster_gpu_turnover(c).released == 0);
  c.unbind(ia);  // 2000 given back, 500 held
  CHECK(cluster_gpu_turnover(c).allocated == 500);
  CHECK(cluster_gpu_turnover(c).released == 2000);
  CHECK(cluster_gpu_turnover(c).turned_over());
}

TEST_CASE("the block term of a FillAware scorer: the k-GPU shapes a placement takes away") {
  fill_aware_scorer f(blocks_workload(), blocks_options(0.0));
  in_memory_cluster c;
  c.add_node(testing::gpu_node("eight", 64000, 1 << 20, 8));
  c.add_node(testing::gpu_node("four", 64000, 1 << 20, 4));
  const pod one = make_pod("one").cpu(1000).gpus(1);
  const pod two = make_pod("two").cpu(1000).gpus(2);
  const std::int64_t plain_eight = f.score(c, one, 0), plain_four = f.score(c, one, 1);
  const std::int64_t plain_two_four = f.score(c, two, 1);
  // Every whole GPU's waste is E(1000) = 0 here (kappa 50: the 1-GPU shape refills it), so the plain
  // score is the offset alone.
  CHECK(plain_eight == 1'000'000'000);

  // lost[2] = 100, lost[4] = 300, lost[8] = 700 milli-GPU.
  std::array<double, 9> lost{};
  lost[2] = 100, lost[4] = 300, lost[8] = 700;
  f.set_block_costs(lost);
  // Eight free, one taken: seven left, the 8-GPU shape lost: 700.
  CHECK(f.score(c, one, 0) == plain_eight - 700'000);
  // Four free, one taken: three left, the 4-GPU shape lost (and not the 2-GPU one): 300.
  CHECK(f.score(c, one, 1) == plain_four - 300'000);
  // Four free, two taken: two left, still room for the 2-GPU shape: 300.
  CHECK(f.score(c, two, 1) == plain_two_four - 300'000);

  // Using up a node's last free GPUs: two free, two taken: lost[2] only.
  in_memory_cluster d;
  d.add_node(testing::gpu_node("two", 64000, 1 << 20, 2));
  CHECK(f.score(d, two, 0) == 1'000'000'000 - 100'000);

  // Partly used GPUs are not part of a block: one of four GPUs holds 500 milli, three are free.
  totalled e;
  e.add_node(testing::gpu_node("four", 64000, 1 << 20, 4));
  const pod half = make_pod("half").cpu(1000).gpu_share(500);
  e.bind(half, make_binding(half, 0, gpu_set{0b1}));
  // A whole GPU taken from the three free: two left, no shape lost (no 3-GPU shape): no cost.
  fill_aware_scorer g(blocks_workload(), blocks_options(0.0));
  CHECK(f.score(e, one, 0) == g.score(e, one, 0));

  // Costs must be finite, >= 0 and sum to less than half the score offset; a bad one changes nothing.
  lost[4] = -1;
  CHECK_THROWS_WITH(f.set_block_costs(lost), doctest::Contains("block costs"));
  lost[4] = 300, lost[8] = 499'600;  // the sum: 500,000
  CHECK_THROWS_WITH(f.set_block_costs(lost), doctest::Contains("less than 500000"));
  CHECK(f.score(c, one, 1) == plain_four - 300'000);
}

TEST_CASE("the block term chooses a sharing pod's device: a partly used GPU keeps the block") {
  // A 500-milli sharing shape at 0.5, one whole GPU at 0.25, two at 0.25; kappa 50. E(h) = h below
  // 500 (nothing fits); E(500) = E(0) = 0; between, E(h) = E(h - 500); E(1000) = 0.
  typical_pod share, one, two;
  share.cpu_milli = 1000, share.gpu_milli = 500, share.num_gpu = 1, share.probability = 0.5;
  one.cpu_milli = 1000, one.gpu_milli = 1000, one.num_gpu = 1, one.probability = 0.25;
  two.cpu_milli = 1000, two.gpu_milli = 1000, two.num_gpu = 2, two.probability = 0.25;
  const typical_workload w({share, one, two});
  const fill_aware_scorer plain(w, blocks_options(0.0));
  fill_aware_scorer f(w, blocks_options(0.0));
  std::array<double, 4> lost{};
  lost[3] = 150;  // a 3-GPU shape's room costs 150 milli-GPU
  f.set_block_costs(lost);

  // Four GPUs: three wholly free, the last with 600 milli free. A 300-milli pod saves
  // E(1000) - E(700) = 0 - E(200) = -200 on a free GPU and E(600) - E(300) = 100 - 300 = -200 on the
  // partly used one: a tie, which the plain scorer gives to the first device, splitting the block of
  // three (cost 150); with the term the partly used GPU saves more (-200 against -350).
  totalled c;
  c.add_node(testing::gpu_node("four", 64000, 1 << 20, 4));
  const pod held = make_pod("held").cpu(1000).gpu_share(400);
  c.bind(held, make_binding(held, 0, gpu_set{0b1000}));
  const pod p = make_pod("p").cpu(1000).gpu_share(300);
  CHECK(plain.select(c, p, 0) == gpu_set{0b0001});
  CHECK(f.select(c, p, 0) == gpu_set{0b1000});
  CHECK(plain.score(c, p, 0) == 1'000'000'000 - 200'000);
  CHECK(f.score(c, p, 0) == 1'000'000'000 - 200'000);

  // With no partly used GPU the pod must split the block: -200 - 150.
  totalled d;
  d.add_node(testing::gpu_node("three", 64000, 1 << 20, 3));
  CHECK(f.select(d, p, 0) == gpu_set{0b001});
  CHECK(f.score(d, p, 0) == 1'000'000'000 - 350'000);
}

TEST_CASE("FillAwareBinding keeps blocks only once the cluster has turned over, at the configured p_k") {
  // keep_blocks 2: lost[2] = 2 x 0.25 x 2000 = 1000, lost[4] = 2 x 0.25 x 4000 = 2000 milli-GPU.
  const fill_aware_binding_scorer f(blocks_workload(), blocks_options(2.0));
  const fill_aware_binding_scorer plain(blocks_workload(), blocks_options(0.0));
  totalled c;
  c.add_node(testing::gpu_node("four", 64000, 1 << 20, 4));
  c.add_node(testing::gpu_node("one", 64000, 1 << 20, 1));
  const pod one = make_pod("one").cpu(1000).gpus(1);

  // A filling cluster (nothing given back): no block term, the plain scores.
  CHECK(f.pre_score(c, one) == score_status::ok);
  CHECK_FALSE(f.keeps_blocks());
  CHECK(f.score(c, one, 0) == plain.score(c, one, 0));

  // A pod placed and gone: 1000 given back, nothing held: turned over.
  const pod_id placed = c.bind(one, make_binding(one, 1, gpu_set{0b1}));
  CHECK(f.pre_score(c, one) == score_status::ok);
  CHECK_FALSE(f.keeps_blocks());
  c.unbind(placed);
  CHECK(f.pre_score(c, one) == score_status::ok);
  REQUIRE(f.keeps_blocks());
  CHECK(f.block_costs()[2] == doctest::Approx(1000));
  CHECK(f.block_costs()[4] == doctest::Approx(2000));
  // Four free, one taken: the 4-GPU shape lost, 2000; the one-GPU node: nothing to lose.
  CHECK(f.score(c, one, 0) == plain.score(c, one, 0) - 2'000'000);
  CHECK(f.score(c, one, 1) == plain.score(c, one, 1));
  // The device choice is FillAware's: the lowest-index free GPU.
  CHECK(f.select(c, one, 0) == gpu_set{0b1});

  // A cluster without the turnover hook never turns the term on, though a pod has come and gone.
  const fill_aware_binding_scorer g(blocks_workload(), blocks_options(2.0));
  in_memory_cluster bare;
  bare.add_node(testing::gpu_node("four", 64000, 1 << 20, 4));
  const binding b = make_binding(one, 0, gpu_set{0b1});
  traits_of<in_memory_cluster>::reserve(bare, one, b);
  traits_of<in_memory_cluster>::release(bare, one, b);
  CHECK(g.pre_score(bare, one) == score_status::ok);
  CHECK_FALSE(g.keeps_blocks());

  CHECK_THROWS_WITH(fill_aware_binding_scorer(blocks_workload(), blocks_options(-1.0)),
                    doctest::Contains("keep_blocks"));
  CHECK_THROWS_WITH(fill_aware_binding_scorer(blocks_workload(), blocks_options(7.5)),
                    "fill_aware_options.keep_blocks: must be within 0..7");
}

TEST_CASE("FillAwareBinding with observe_demand takes p_k from the pods it has counted") {
  const fill_aware_binding_scorer f = counting_scorer();
  totalled c = four_free_gpus();
  // 40 pods counted: 4 ask for two GPUs, 36 for one: p_2 = 0.1, p_4 = 0.
  for (int i = 0; i < 40; ++i) {
    const pod p = make_pod("p" + std::to_string(i)).cpu(1000).gpus(i < 4 ? 2 : 1);
    f.pre_filter(c, p);
  }
  const pod one = make_pod("one").cpu(1000).gpus(1);
  c.unbind(c.bind(one, make_binding(one, 0, gpu_set{0b1})));
  CHECK(f.pre_score(c, one) == score_status::ok);
  REQUIRE(f.keeps_blocks());
  // lost[2] = 1 x 0.1 x 2000 = 200; lost[4] = 0 (no 4-GPU pod counted, though the typical pods have them).
  CHECK(f.block_costs()[2] == doctest::Approx(200));
  CHECK(f.block_costs()[4] == 0.0);

  // 39 more one-GPU pods: 79 counted, not yet twice 40: unchanged. The 80th: p_2 = 4 / 80, lost[2] = 100.
  for (int i = 40; i < 79; ++i) f.pre_filter(c, make_pod("p" + std::to_string(i)).cpu(1000).gpus(1));
  CHECK(f.pre_score(c, one) == score_status::ok);
  CHECK(f.block_costs()[2] == doctest::Approx(200));
  f.pre_filter(c, make_pod("p79").cpu(1000).gpus(1));
  CHECK(f.pre_score(c, one) == score_status::ok);
  CHECK(f.block_costs()[2] == doctest::Approx(100));
}

TEST_CASE("FillAwareBinding with observe_demand switched on before 30 pods: the typical pods, then the count") {
  const fill_aware_binding_scorer f = counting_scorer();
  totalled c = four_free_gpus();
  // 10 pods counted, one of them asks for two GPUs; then the cluster turns over.
  for (int i = 0; i < 10; ++i) f.pre_filter(c, make_pod("q" + std::to_string(i)).cpu(1000).gpus(i == 0 ? 2 : 1));
  const pod one = make_pod("one").cpu(1000).gpus(1);
  c.unbind(c.bind(one, make_binding(one, 0, gpu_set{0b1})));
  CHECK(f.pre_score(c, one) == score_status::ok);
  REQUIRE(f.keeps_blocks());
  // Fewer than 30 counted: the typical pods' p_2 = p_4 = 0.25: lost[2] = 500, lost[4] = 1000.
  CHECK(f.block_costs()[2] == doctest::Approx(500));
  CHECK(f.block_costs()[4] == doctest::Approx(1000));
  // 20 more one-GPU pods: 30 counted (twice 10, and the minimum): p_2 = 1 / 30, p_4 = 0.
  for (int i = 10; i < 30; ++i) f.pre_filter(c, make_pod("q" + std::to_string(i)).cpu(1000).gpus(1));
  CHECK(f.pre_score(c, one) == score_status::ok);
  CHECK(f.block_costs()[2] == doctest::Approx(2000.0 / 30));
  CHECK(f.block_costs()[4] == 0.0);
}

TEST_CASE("keepBlocks in a profile file: a waiting 2-GPU pod finds the block a 1-GPU pod left whole") {
  // FillAwareRefill with keepBlocks 2 over the workload above: lost[2] = 1000, lost[4] = 2000.
  // Nodes y (0) and x (1), two GPUs each; a long pod holds one of x's. After one pod has come and
  // gone (turned over: 1000 given back, 1000 held), a 1-GPU pod would split y's pair (1000) or take
  // x's last GPU (no 2-GPU shape lost): it goes to x, and a 2-GPU pod then fits y.
  const std::string head =
      "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: p\n"
      "  plugins:\n    multiPoint:\n      disabled:\n      - name: '*'\n    filter:\n      enabled:\n"
      "      - name: GPUCheck\n    score:\n      enabled:\n      - name: FillAwareRefill\n"
      "  pluginConfig:\n  - name: FillAwareRefill\n    args:\n";
  const plugin_context ctx{std::make_shared<const typical_workload>(blocks_workload()), 0, false};
  schedule_options first;
  first.tie_break = tie_break_rule::first_node;  // ties to node 0: only the block term sends a pod to x
  const auto cluster = [] {
    totalled c;
    c.add_node(testing::gpu_node("y", 64000, 1 << 20, 2));
    c.add_node(testing::gpu_node("x", 64000, 1 << 20, 2));
    const pod longer = make_pod("long").cpu(1000).gpus(1);
    c.bind(longer, make_binding(longer, 1, gpu_set{0b1}));
    const pod gone = make_pod("gone").cpu(1000).gpus(1);
    c.unbind(c.bind(gone, make_binding(gone, 0, gpu_set{0b1})));
    return c;
  };
  totalled c = cluster();
  scheduler<totalled, dynamic_profile<totalled>> s(
      parse_profile_file<totalled>(head + "      keepBlocks: 2\n", "cfg.yaml", ctx).profile, first);
  const auto one = s.place_one(c, make_pod("one").cpu(1000).gpus(1));
  REQUIRE(one.scheduled);
  CHECK(one.where.node == 1);
  const auto two = s.place_one(c, make_pod("two").cpu(1000).gpus(2));
  REQUIRE(two.scheduled);
  CHECK(two.where.node == 0);

  // keepBlocks 0: the two whole GPUs tie, the 1-GPU pod splits y's pair and the 2-GPU pod fits nowhere.
  totalled d = cluster();
  scheduler<totalled, dynamic_profile<totalled>> off(
      parse_profile_file<totalled>(head + "      keepBlocks: 0\n", "cfg.yaml", ctx).profile, first);
  CHECK(off.place_one(d, make_pod("one").cpu(1000).gpus(1)).where.node == 0);
  CHECK_FALSE(off.place_one(d, make_pod("two").cpu(1000).gpus(2)).scheduled);

  // Out of range, named with its file and line (the 18th: head has 17).
  CHECK_THROWS_WITH(parse_profile_file<totalled>(head + "      keepBlocks: -1\n", "cfg.yaml", ctx),
                    "cfg.yaml:18: FillAwareRefill.args.keepBlocks: must be within 0..7, got -1");
}

TEST_CASE("the whole node's drain: a pod costs lost[G] / (n + 1), n the pods counted by GPU or by CPU") {
  fill_aware_options o = blocks_options(0.0);
  o.drain_blocks = true;
  fill_aware_scorer f(blocks_workload(), o);                    // the block term with the drain
  fill_aware_scorer g(blocks_workload(), blocks_options(0.0));  // the block term alone
  std::array<double, 9> lost{};
  lost[2] = 100, lost[4] = 300, lost[8] = 700;
  f.set_block_costs(lost);
  g.set_block_costs(lost);

  totalled c;
  c.add_node(testing::gpu_node("seven", 64000, 1 << 20, 8));   // 0: one GPU in use, b = 1
  c.add_node(testing::gpu_node("two", 64000, 1 << 20, 8));     // 1: six in use, b = 6
  c.add_node(testing::gpu_node("empty", 64000, 1 << 20, 8));   // 2: b = 0
  c.add_node(testing::gpu_node("four", 64000, 1 << 20, 4));    // 3: a 2-GPU pod, b = 2
  c.add_node(testing::gpu_node("shared", 64000, 1 << 20, 8));  // 4: 500 milli of one GPU, b = 1
  c.add_node(testing::gpu_node("cpu", 64000, 1 << 20, 8));     // 5: one GPU in use, 48000 milli-CPU
  const auto hold = [&](const std::string& name, node_index n, gpu_set gpus) {
    const pod p = make_pod(name).cpu(1000).gpus(std::popcount(gpus));
    c.bind(p, make_binding(p, n, gpus));
  };
  hold("a", 0, 0b1);
  for (int g6 = 0; g6 < 6; ++g6) hold("b" + std::to_string(g6), 1, gpu_set{1} << g6);
  hold("c", 3, 0b11);
  const pod half = make_pod("half").cpu(1000).gpu_share(500);
  c.bind(half, make_binding(half, 4, gpu_set{0b1}));
  hold("e", 5, 0b1);
  const pod cpu_only = make_pod("cpu-only").cpu(47000);
  c.bind(cpu_only, make_binding(cpu_only, 5, gpu_set{0}));

  const pod one = make_pod("one").cpu(1000).gpus(1);
  // Whole GPUs waste nothing here (E(1000) = 0), so the scores are the offset less the costs.
  // Seven free, one taken: no shape lost (there is no 7- or 6-GPU shape), the drain 700 / 2.
  CHECK(f.score(c, one, 0) == 1'000'000'000 - 350'000);
  CHECK(g.score(c, one, 0) == 1'000'000'000);
  // Two free, one taken: the 2-GPU shape lost (100) and the drain 700 / 7 = 100.
  CHECK(f.score(c, one, 1) == 1'000'000'000 - 200'000);
  CHECK(g.score(c, one, 1) == 1'000'000'000 - 100'000);
  // So with the drain the pod goes where two GPUs are free and leaves the node with seven to drain;
  // without it, it takes one of the seven.
  CHECK(f.score(c, one, 1) > f.score(c, one, 0));
  CHECK(g.score(c, one, 0) > g.score(c, one, 1));
  // An empty node: the 8-GPU shape lost, which is the drain at b = 0 already; no more.
  CHECK(f.score(c, one, 2) == 1'000'000'000 - 700'000);
  CHECK(f.score(c, one, 2) == g.score(c, one, 2));
  // A 4-GPU node with two in use: the 2-GPU shape lost (two free, one taken: 100), the drain 300 / 3.
  CHECK(f.score(c, one, 3) == 1'000'000'000 - 200'000);
  // A partly used GPU is in use: b = 1, as on node 0.
  CHECK(f.score(c, one, 4) == g.score(c, one, 4) - 350'000);
  // Node 5 has one GPU in use like node 0, but 48000 of its 64000 milli-CPU are held: 6 GPUs' worth at
  // 8000 per GPU, so the pods holding it are counted as 6 and the drain is 700 / 7.
  CHECK(f.score(c, one, 5) == g.score(c, one, 5) - 100'000);
  // A pod of two GPUs on node 0: seven free, five left, no shape lost; the drain is per pod, 700 / 2.
  const pod two = make_pod("two").cpu(1000).gpus(2);
  CHECK(f.score(c, two, 0) == g.score(c, two, 0) - 350'000);
  // A CPU-only pod delays the node's emptying as any pod does: 700 / 2 on node 0, 700 / 7 on node 5;
  // on the empty node 700 / 1, though it takes no GPU (the block term alone charges it nothing).
  const pod cpu = make_pod("cpu").cpu(1000);
  CHECK(f.score(c, cpu, 0) == g.score(c, cpu, 0) - 350'000);
  CHECK(f.score(c, cpu, 5) == g.score(c, cpu, 5) - 100'000);
  CHECK(f.score(c, cpu, 2) == g.score(c, cpu, 2) - 700'000);
}

TEST_CASE("drainBlocks in a profile file: a 1-GPU pod leaves the nearly empty node to drain") {
  // FillAwareRefill (keepBlocks 3 by default) over one-GPU pods and 8-GPU pods at 0.5 each:
  // lost[8] = 3 x 0.5 x 8000 = 12000 milli-GPU. Node y (0) has one GPU in use, node x (1) six. The
  // cluster has turned over (an 8-GPU pod has come and gone), so a 1-GPU pod costs 12000 / 2 on y
  // and 12000 / 7 on x (no shape is lost on either): it goes to x. With drainBlocks false both cost
  // nothing and the tie goes to y.
  typical_pod one_gpu, eight_gpus;
  one_gpu.cpu_milli = 1000, one_gpu.gpu_milli = 1000, one_gpu.num_gpu = 1, one_gpu.probability = 0.5;
  eight_gpus.cpu_milli = 1000, eight_gpus.gpu_milli = 1000, eight_gpus.num_gpu = 8, eight_gpus.probability = 0.5;
  const std::string head =
      "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: p\n"
      "  plugins:\n    multiPoint:\n      disabled:\n      - name: '*'\n    filter:\n      enabled:\n"
      "      - name: GPUCheck\n    score:\n      enabled:\n      - name: FillAwareRefill\n"
      "  pluginConfig:\n  - name: FillAwareRefill\n    args:\n";
  const plugin_context ctx{std::make_shared<const typical_workload>(typical_workload({one_gpu, eight_gpus})), 0, false};
  schedule_options first;
  first.tie_break = tie_break_rule::first_node;
  const auto cluster = [] {
    totalled c;
    c.add_node(testing::gpu_node("y", 64000, 1 << 20, 8));
    c.add_node(testing::gpu_node("x", 64000, 1 << 20, 8));
    const pod gone = make_pod("gone").cpu(1000).gpus(8);  // 8000 given back, at least the 7000 held below
    c.unbind(c.bind(gone, make_binding(gone, 0, gpu_set{0xff})));
    for (int g = 0; g < 7; ++g) {
      const pod p = make_pod("long" + std::to_string(g)).cpu(1000).gpus(1);
      c.bind(p, make_binding(p, g == 0 ? 0 : 1, gpu_set{1} << (g == 0 ? 0 : g - 1)));
    }
    return c;
  };
  const auto place = [&](const std::string& args) {
    totalled c = cluster();
    scheduler<totalled, dynamic_profile<totalled>> s(
        parse_profile_file<totalled>(head + "      keepBlocks: 3\n" + args, "cfg.yaml", ctx).profile, first);
    const auto r = s.place_one(c, make_pod("one").cpu(1000).gpus(1));
    REQUIRE(r.scheduled);
    return r.where.node;
  };
  CHECK(place("") == 1);                         // drainBlocks is on by default
  CHECK(place("      drainBlocks: false\n") == 0);
  CHECK_THROWS_WITH(parse_profile_file<totalled>(head + "      drainBlocks: 2\n", "cfg.yaml", ctx),
                    doctest::Contains("cfg.yaml:18: FillAwareRefill.args.drainBlocks"));
}
