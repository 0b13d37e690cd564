// schedule_one through the node table (issue 14, item 2): a scheduler with batch::table_scan over a
// bound_cluster observed by batch::node_table_observer decides exactly as the per-node path — the
// same node, devices, score, reasons and counts — for many random pods on random clusters with
// ties, under every tie-break rule, while pods come and go and loads change.
#include <doctest/doctest.h>

#include <cstddef>
#include <random>
#include <string>
#include <vector>

#include "gpusched/batch/node_table_observer.hpp"
#include "gpusched/batch/table_scan.hpp"
#include "gpusched/core/bound_cluster.hpp"
#include "gpusched/core/in_memory_cluster.hpp"
#include "gpusched/preflight/gpu_check.hpp"
#include "gpusched/preflight/resource_fit.hpp"
#include "gpusched/profile/static_profile.hpp"
#include "gpusched/schedule/schedule_one.hpp"
#include "gpusched/scoring/load_aware.hpp"
#include "gpusched/scoring/model_affinity.hpp"
#include "gpusched/scoring/node_resources.hpp"
#include "gpusched/scoring/qos_aware.hpp"
#include "random_workload.hpp"

using namespace gpusched;

namespace {
using plain_cluster = bound_cluster<in_memory_cluster>;
using table_cluster = bound_cluster<in_memory_cluster, batch::node_table_observer>;

// A random cluster plus 20 identical empty nodes (so that many pods tie at the best score).
in_memory_cluster cluster_with_ties(std::mt19937_64& rng, int random_nodes) {
  in_memory_cluster c = testing::random_cluster(rng, random_nodes);
  for (int i = 0; i < 20; ++i) c.add_node(testing::gpu_node("same" + std::to_string(i), 32000, 131072, 4, "T4", 16384));
  return c;
}

template <class Profile>
void run_differential(const Profile& prof, tie_break_rule rule, std::uint64_t seed) {
  CAPTURE(static_cast<int>(rule));
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  const in_memory_cluster base = cluster_with_ties(rng, 60);
  plain_cluster a(base);
  table_cluster b(base);
  const schedule_options o{100, seed, false, rule};
  scheduler<plain_cluster, Profile> per_node(prof, o);
  batch::table_scheduler<table_cluster, Profile> table(prof, o);
  std::vector<pod> placed;
  int scheduled = 0, failed = 0;
  for (int i = 0; i < 400; ++i) {
    const pod p = testing::random_pod(rng, i);
    const schedule_result x = per_node.place_one(a, p);
    const schedule_result y = table.place_one(b, p);
    CAPTURE(i);
    REQUIRE(x.scheduled == y.scheduled);
    CHECK(x.where == y.where);  // node and GPU indices
    CHECK(x.score == y.score);
    CHECK(x.feasible == y.feasible);
    CHECK(x.rejections.examined == y.rejections.examined);
    CHECK(x.rejections.by_reason == y.rejections.by_reason);
    if (x.scheduled) {
      placed.push_back(p);
      ++scheduled;
    } else {
      ++failed;
    }
    if (i % 7 == 6 && !placed.empty()) {  // a pod leaves
      const std::size_t k = rng() % placed.size();
      const bound_pod* rec = a.find(placed[k].name);
      REQUIRE(rec != nullptr);
      const binding w = rec->where;
      a.release(placed[k], w);
      b.release(placed[k], w);
      placed.erase(placed.begin() + static_cast<std::ptrdiff_t>(k));
    }
    if (i % 11 == 10) {  // a node reports a new load
      const auto n = static_cast<node_index>(rng() % num_nodes(a));
      const node_metrics m{static_cast<double>(rng() % 1000) / 1000.0, 0.3, static_cast<double>(rng() % 1000) / 1000.0};
      a.base().set_load(n, &m);
      b.base().set_load(n, &m);
      b.changed(n);
    }
  }
  CHECK(table.scanned_decisions() == 400);  // every pod went through the table
  CHECK(table.scan_fallbacks() == 0);
  CHECK(per_node.scanned_decisions() == 0);
  CHECK(scheduled > 50);  // the workload exercises both outcomes
  CHECK(failed > 20);
  CHECK(a.base() == b.base());
}
}  // namespace

TEST_CASE("table_scan: the table path decides as the per-node path (random pods, ties, every tie-break rule)") {
  model_affinity m;
  m.interfering.emplace_back(short_name("resnet50"), short_name("bert"));
  const auto prof = make_profile(checks(gpu_check{}, resource_fit{}),
                                 scores(weighted{load_aware{}, 10}, weighted{m, 5}, weighted{most_allocated{{1, 1, 1}}, 2},
                                        weighted{qos_aware{}, 3}));
  for (const tie_break_rule rule : {tie_break_rule::reservoir, tie_break_rule::hashed, tie_break_rule::first_node}) {
    for (const std::uint64_t seed : {3ULL, 17ULL}) run_differential(prof, rule, seed);
  }
  // NodeResourcesFit with overcommit, checks in the other order, one coarse scorer (many ties).
  const auto fit_only = make_profile(checks(resource_fit{1500, 1000}, gpu_check{}), scores(weighted{least_allocated{}, 1}));
  run_differential(fit_only, tie_break_rule::reservoir, 5);
  run_differential(fit_only, tie_break_rule::hashed, 5);
}

TEST_CASE("table_scan: a hand-worked tie-break with reasons") {
  // n0: 2 CPUs (too few for 4); n1: 1 GPU (too few for 2); n2, n3, n4: alike, 8 CPUs, 4 GPUs.
  // MostAllocated (CPU and memory, weight 1 each; Kubernetes' mostRequestedScore, requested * 100 /
  // capacity): CPU 4000 * 100 / 8000 = 50, memory 1024 * 100 / 65536 = 1, mean (50 + 1) / 2 = 25
  // on each of n2, n3, n4, so they tie.
  table_cluster c;
  c.add_node(testing::gpu_node("n0", 2000, 65536, 4, "T4", 16384));
  c.add_node(testing::gpu_node("n1", 8000, 65536, 1, "T4", 16384));
  for (const char* name : {"n2", "n3", "n4"}) c.add_node(testing::gpu_node(name, 8000, 65536, 4, "T4", 16384));
  const auto prof = make_profile(checks(gpu_check{}, resource_fit{}), scores(weighted{most_allocated{}, 1}));
  const pod p = make_pod("p").cpu(4000).memory(1024).gpus(2);

  batch::table_scheduler<table_cluster, decltype(prof)> first(prof, {100, 9, false, tie_break_rule::first_node});
  schedule_result r = first.schedule_one(c, p);
  REQUIRE(r.scheduled);
  CHECK(r.where.node == 2);           // the first of the tied nodes in node order
  CHECK(r.where.gpus == 0b0011);      // best fit among four alike devices: the lowest indices
  CHECK(r.score == 25);
  CHECK(r.feasible == 3);
  CHECK(r.rejections.examined == 5);
  CHECK(r.rejections[reason::insufficient_cpu] == 1);        // n0
  CHECK(r.rejections[reason::insufficient_gpu_count] == 1);  // n1
  CHECK(first.scanned_decisions() == 1);

  // hashed: the tied node with the largest tie_key(seed, FNV-1a(name), node) (schedule/tie_break.hpp).
  batch::table_scheduler<table_cluster, decltype(prof)> hashed(prof, {100, 9, false, tie_break_rule::hashed});
  node_index want = 2;
  for (node_index n : {3U, 4U}) {
    if (tie_key(9, pod_tie_key("p"), n) > tie_key(9, pod_tie_key("p"), want)) want = n;
  }
  CHECK(hashed.schedule_one(c, p).where.node == want);

  // After n2 and n3 are filled, n4 is the only feasible node; n2 and n3 now lack CPU.
  const pod x = make_pod("x").cpu(6000).gpus(1), y = make_pod("y").cpu(6000).gpus(1);
  c.bind(x, make_binding(x, 2, 0b0001));
  c.bind(y, make_binding(y, 3, 0b0001));
  r = first.schedule_one(c, p);
  CHECK(r.where.node == 4);
  CHECK(r.score == 25);
  CHECK(r.rejections[reason::insufficient_cpu] == 3);  // n0, n2, n3
  CHECK(first.scan_fallbacks() == 0);
}
