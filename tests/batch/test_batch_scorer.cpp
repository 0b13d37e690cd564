// The CPU batch engine against the per-pod path: every (pod, node) total, every best node.
#include <doctest/doctest.h>

#include <array>
#include <random>
#include <span>
#include <string_view>
#include <vector>

#include "gpusched/batch/batch_scorer.hpp"
#include "gpusched/core/in_memory_cluster.hpp"
#include "gpusched/preflight/gpu_check.hpp"
#include "gpusched/preflight/load_threshold.hpp"
#include "gpusched/preflight/resource_fit.hpp"
#include "gpusched/profile/static_profile.hpp"
#include "gpusched/schedule/schedule_one.hpp"
#include "gpusched/scoring/fgd.hpp"
#include "gpusched/scoring/load_aware.hpp"
#include "gpusched/scoring/model_affinity.hpp"
#include "gpusched/scoring/node_resources.hpp"
#include "gpusched/scoring/qos_aware.hpp"
#include "free_memory_packing.hpp"
#include "random_workload.hpp"
#include "support/builders.hpp"

using namespace gpusched;
using testing::free_memory_packing;

namespace {

model_affinity affinity_with_pairs() {
  model_affinity m;
  m.interfering.emplace_back(short_name("resnet50"), short_name("bert"));
  return m;
}

auto seed_profile() {
  return make_profile(checks(gpu_check{}), scores(weighted{load_aware{}, 10}, weighted{affinity_with_pairs(), 5}));
}

// The weighted totals the per-pod path gives pod p on every node, -1 where a check rejects it:
// the scorers see the feasible nodes together, as in schedule_one, so normalisation applies.
template <class Profile>
std::vector<std::int64_t> per_pod_row(const Profile& prof, const in_memory_cluster& c, const pod& p) {
  std::vector<std::int64_t> row(c.size(), -1);
  std::vector<node_index> feasible;
  for (node_index n = 0; n < c.size(); ++n) {
    reason r = reason::ok;
    prof.filter(c, p, n, 1, &r);
    if (r == reason::ok) feasible.push_back(n);
  }
  std::vector<std::int64_t> raw(prof.score_plugin_count() * feasible.size());
  if (!feasible.empty() && !raw.empty()) prof.score(c, p, std::span<const node_index>(feasible), raw.data());
  for (std::size_t j = 0; j < feasible.size(); ++j) {
    std::int64_t total = 0;
    for (std::size_t k = 0; k < prof.score_plugin_count(); ++k) total += raw[k * feasible.size() + j] * prof.score_plugin_weight(k);
    row[feasible[j]] = total;
  }
  return row;
}

template <class Profile>
void check_matrix_equals_per_pod(const Profile& prof, std::uint64_t seed, int nodes, int pods, unsigned threads) {
  std::mt19937_64 rng(seed);
  const in_memory_cluster c = testing::random_cluster(rng, nodes);
  const std::vector<pod> ps = testing::random_pods(rng, pods);
  batch::node_table t(c);
  batch::pod_table pt(ps, t);
  auto engine = batch::make_batch_scorer(prof, {threads, seed, 64, 3});
  engine.prepare(t);
  batch::score_matrix m;
  engine.scores(pt, m);
  REQUIRE(m.rows() == pods);
  REQUIRE(m.cols() == nodes);
  int mismatches = 0;
  for (int i = 0; i < pods; ++i) {
    const std::vector<std::int64_t> row = per_pod_row(prof, c, ps[static_cast<std::size_t>(i)]);
    for (int n = 0; n < nodes; ++n) {
      const std::int64_t want = row[static_cast<std::size_t>(n)];
      if (m(i, n) != want) {
        if (++mismatches < 5) {
          FAIL_CHECK("pod " << i << " node " << n << ": batch " << m(i, n) << " per-pod " << want);
        }
      }
    }
  }
  CHECK(mismatches == 0);
}

}  // namespace

TEST_CASE("batch.scores: a hand-computed pair") {
  // One node, 10 cores, 10 GiB, two V100s; measured 30% CPU, 50% memory, 25% GPU. A pod asking
  // 1 core, 2000 MiB and half a GPU, model resnet50, on a node serving resnet50:
  //   LoadAware: cpu (10000 - (3000 + 850)) * 100 / 10000 = 61; memory 5000 + 1400 -> 36;
  //   gpu 500 + 500 of 2000 -> 50; mean (61 + 36 + 50) / 3 = 49.  ModelAffinity: 100.
  //   total = 49 * 10 + 100 * 5 = 990.
  in_memory_cluster c;
  c.add_node(testing::gpu_node("a", 10000, 10000, 2));
  const node_metrics load{0.30, 0.50, 0.25};
  c.set_load(0, &load);
  const pod running = make_pod("r").model("resnet50");
  c.reserve(running, make_binding(running, 0, 0));
  c.set_load(0, &load);  // a fresh reading: nothing assigned since
  const std::vector<pod> ps{make_pod("p").cpu(1000).memory(2000).gpu_share(500).model("resnet50")};
  batch::node_table t(c);
  batch::pod_table pt(ps, t);
  auto engine = batch::make_batch_scorer(seed_profile());
  engine.prepare(t);
  batch::score_matrix m;
  engine.scores(pt, m);
  CHECK(m(0, 0) == 990);
  std::array<std::int32_t, 2> raw{};
  CHECK(engine.explain(pt, 0, 0, raw));
  CHECK(raw[0] == 49);
  CHECK(raw[1] == 100);
}

TEST_CASE("batch.scores equal the per-pod path for every foundation plugin") {
  SUBCASE("seed profile") { check_matrix_equals_per_pod(seed_profile(), 1, 150, 40, 1); }
  SUBCASE("all checks, node-resources scorers") {
    auto prof = make_profile(checks(gpu_check{}, resource_fit{1500, 1200}, load_threshold{0.8, 0.9, 0.95}),
                             scores(weighted{least_allocated{{1, 2, 3}}, 3}, weighted{most_allocated{{2, 1, 1}}, 2},
                                    weighted{balanced_allocation{{1, 1, 1}}, 1}));
    check_matrix_equals_per_pod(prof, 2, 150, 40, 2);
  }
  SUBCASE("a scorer with a NormalizeScore (reverse), next to one without") {
    auto prof = make_profile(checks(gpu_check{}), scores(weighted{free_memory_packing{}, 2}, weighted{least_allocated{}, 1}));
    check_matrix_equals_per_pod(prof, 4, 150, 40, 2);
  }
  SUBCASE("requested-to-capacity ratio, QoS, load aware without GPU weight") {
    auto prof = make_profile(checks(resource_fit{}),
                             scores(weighted{requested_to_capacity_ratio({{0, 10}, {40, 7}, {100, 0}}, {1, 1, 2}), 4},
                                    weighted{qos_aware{}, 7}, weighted{load_aware{{2, 1, 0}}, 1}, weighted{balanced_allocation{}, 9}));
    check_matrix_equals_per_pod(prof, 3, 150, 40, 3);
  }
  SUBCASE("FGD (authors' score) next to LoadAware, shapes from a random workload") {
    std::mt19937_64 rng(77);
    const fgd_scorer fgd(typical_workload::from_pods(testing::random_pods(rng, 200)));
    auto prof = make_profile(checks(gpu_check{}, resource_fit{}), scores(weighted{fgd, 3}, weighted{load_aware{}, 1}), fgd);
    check_matrix_equals_per_pod(prof, 5, 150, 40, 2);
  }
}

TEST_CASE("batch: FGD refuses fine scores, naming the option") {
  in_memory_cluster c;
  c.add_node(testing::gpu_node("a", 8000, 8000, 2));
  batch::node_table t(c);
  const std::vector<pod> shapes{make_pod("s").gpu_share(500)};
  const fgd_scorer fine(typical_workload::from_pods(shapes), fgd_options{true});
  auto engine = batch::make_batch_scorer(make_profile(checks(gpu_check{}), scores(weighted{fine, 1})));
  CHECK_THROWS_WITH_AS(engine.prepare(t), doctest::Contains("fgd_scorer.options.fine_score"), invalid_argument_error);
}

TEST_CASE("batch.top_k: the best node is schedule_one's under the hashed tie-break") {
  for (std::uint64_t seed = 10; seed < 14; ++seed) {
    std::mt19937_64 rng(seed);
    const in_memory_cluster c = testing::random_cluster(rng, 300);
    const std::vector<pod> ps = testing::random_pods(rng, 60);
    batch::node_table t(c);
    batch::pod_table pt(ps, t);
    auto engine = batch::make_batch_scorer(seed_profile(), {2, seed, 128, 4});
    engine.prepare(t);
    batch::top_k_result top;
    engine.top_k(pt, 5, top);
    scheduler<in_memory_cluster, decltype(seed_profile())> s(seed_profile(),
                                                              {100, seed, false, tie_break_rule::hashed});
    for (std::size_t i = 0; i < ps.size(); ++i) {
      const schedule_result r = s.schedule_one(c, ps[i]);
      CHECK(top.feasible(i) == r.feasible);
      if (!r.scheduled) {
        CHECK(top.candidates(i).empty());
        continue;
      }
      CHECK(top.best(i).node == r.where.node);
      CHECK(top.best(i).score == r.score);
      // The list is ordered: scores non-increasing, and at most k long.
      const auto list = top.candidates(i);
      CHECK(list.size() == std::min<std::size_t>(5, r.feasible));
      for (std::size_t j = 1; j < list.size(); ++j) CHECK(batch::better(list[j - 1], list[j]));
    }
  }
}

TEST_CASE("batch.top_k with a normalising scorer: the best node is schedule_one's") {
  std::mt19937_64 rng(15);
  const in_memory_cluster c = testing::random_cluster(rng, 200);
  const std::vector<pod> ps = testing::random_pods(rng, 40);
  auto prof = make_profile(checks(gpu_check{}, resource_fit{}), scores(weighted{free_memory_packing{}, 3}, weighted{load_aware{}, 1}));
  batch::node_table t(c);
  batch::pod_table pt(ps, t);
  auto engine = batch::make_batch_scorer(prof, {2, 15, 32, 4});
  engine.prepare(t);
  batch::top_k_result top;
  engine.top_k(pt, 3, top);
  scheduler<in_memory_cluster, decltype(prof)> s(prof, {100, 15, false, tie_break_rule::hashed});
  for (std::size_t i = 0; i < ps.size(); ++i) {
    const schedule_result r = s.schedule_one(c, ps[i]);
    CHECK(top.feasible(i) == r.feasible);
    if (r.scheduled) {
      CHECK(top.best(i).node == r.where.node);
      CHECK(top.best(i).score == r.score);
    }
  }
}

TEST_CASE("batch.top_k: identical results for any thread count, tile and block size") {
  std::mt19937_64 rng(77);
  const in_memory_cluster c = testing::random_cluster(rng, 500);
  const std::vector<pod> ps = testing::random_pods(rng, 50);
  batch::node_table t(c);
  batch::pod_table pt(ps, t);
  auto run = [&](batch::batch_options o) {
    auto engine = batch::make_batch_scorer(seed_profile(), o);
    engine.prepare(t);
    batch::top_k_result r;
    engine.top_k(pt, 4, r);
    std::vector<batch::candidate> all;
    for (std::size_t i = 0; i < ps.size(); ++i) {
      for (const auto& cand : r.candidates(i)) all.push_back(cand);
      all.push_back(batch::candidate{-2, r.feasible(i), 0});
    }
    return all;
  };
  const auto base = run({1, 9, 512, 8});
  CHECK(run({2, 9, 512, 8}) == base);
  CHECK(run({3, 9, 7, 1}) == base);
  CHECK(run({4, 9, 1024, 50}) == base);
  CHECK_FALSE(run({1, 10, 512, 8}) == base);  // another seed breaks the (many) ties differently
}
