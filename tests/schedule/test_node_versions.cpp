// Per-node stamps (schedule/node_versions.hpp, issue 14 item 3) and the scorer caches that trust
// them: a stamp moves on every change of its node and is never given twice, even to copies; FGD's
// and FillAware's cached scores on a stamped cluster give the decisions, scores and rejection
// counts of the same scorers on a plain cluster (which re-read every node), pod after pod, with
// pod shapes repeating as in a trace replay; a scorer used from a second thread computes instead.
#include <doctest/doctest.h>

#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "batch/random_workload.hpp"
#include "gpusched/core/bound_cluster.hpp"
#include "gpusched/core/in_memory_cluster.hpp"
#include "gpusched/preflight/gpu_check.hpp"
#include "gpusched/preflight/resource_fit.hpp"
#include "gpusched/profile/static_profile.hpp"
#include "gpusched/schedule/node_versions.hpp"
#include "gpusched/schedule/schedule_one.hpp"
#include "gpusched/scoring/fgd.hpp"
#include "gpusched/scoring/fill_aware.hpp"
#include "gpusched/scoring/typical_pods.hpp"

using namespace gpusched;

namespace {
using stamped = bound_cluster<in_memory_cluster, node_versions>;

// Pods drawn from a few shapes (names differ), as a trace's pods repeat a few dozen shapes.
std::vector<pod> repeating_pods(std::mt19937_64& rng, int shapes, int count) {
  std::vector<pod> shape;
  for (int i = 0; i < shapes; ++i) shape.push_back(testing::random_pod(rng, i));
  std::vector<pod> out;
  for (int i = 0; i < count; ++i) {
    pod p = shape[rng() % shape.size()];
    p.name = "q" + std::to_string(i);
    out.push_back(p);
  }
  return out;
}

// Places pods one by one with the same profile on a plain and on a stamped copy of one cluster,
// releasing every third placed pod again, and requires equal results at every step.
template <class Profile>
void same_decisions(const Profile& prof, const in_memory_cluster& base, const std::vector<pod>& pods) {
  in_memory_cluster plain = base;
  stamped c(base);
  scheduler<in_memory_cluster, Profile> a(prof, {100, 7});
  scheduler<stamped, Profile> b(prof, {100, 7});
  std::vector<std::pair<pod, binding>> placed;
  int scheduled = 0;
  for (std::size_t i = 0; i < pods.size(); ++i) {
    CAPTURE(i);
    const schedule_result ra = a.place_one(plain, pods[i]);
    const schedule_result rb = b.place_one(c, pods[i]);
    REQUIRE(ra.scheduled == rb.scheduled);
    REQUIRE(ra.feasible == rb.feasible);
    REQUIRE(ra.rejections.by_reason == rb.rejections.by_reason);
    REQUIRE(ra.rejections.examined == rb.rejections.examined);
    if (!ra.scheduled) continue;
    ++scheduled;
    REQUIRE(ra.where == rb.where);
    REQUIRE(ra.score == rb.score);
    placed.emplace_back(pods[i], ra.where);
    if (placed.size() % 3 == 0) {  // a release changes a node too
      const auto& [p, w] = placed[placed.size() / 2];
      if (c.find(p.name) != nullptr) {
        plain.release(p, w);
        c.release(p, w);
      }
    }
  }
  CHECK(scheduled > 50);  // the comparison covered many placements, not only rejections
}
}  // namespace

TEST_CASE("node_versions: a stamp moves with every change of its node and is never reused") {
  stamped c;
  c.add_node(testing::gpu_node("n0", 8000, 32768, 2, "T4", 16384));
  c.add_node(testing::gpu_node("n1", 8000, 32768, 2, "T4", 16384));
  const std::uint64_t s0 = node_state_version(c, 0), s1 = node_state_version(c, 1);
  CHECK(s0 != 0);
  CHECK(s1 != s0);
  const pod p = make_pod("p").cpu(1000).gpu_share(500);
  c.bind(p, make_binding(p, 0, 0b01));
  const std::uint64_t after_bind = node_state_version(c, 0);
  CHECK(after_bind != s0);
  CHECK(node_state_version(c, 1) == s1);  // the other node did not change
  stamped copy = c;                       // a copy describes the same states with the same stamps
  CHECK(node_state_version(copy, 0) == after_bind);
  // Both change node 0 differently: their stamps must differ from each other and from before.
  const pod q = make_pod("q").cpu(500).gpu_share(300);
  c.bind(q, make_binding(q, 0, 0b10));
  copy.unbind(copy.find("p")->id);
  CHECK(node_state_version(c, 0) != after_bind);
  CHECK(node_state_version(copy, 0) != after_bind);
  CHECK(node_state_version(c, 0) != node_state_version(copy, 0));
  const std::uint64_t before_change = node_state_version(c, 1);
  c.changed(1);
  CHECK(node_state_version(c, 1) != before_change);
}

TEST_CASE("node_versions: FillAware's cached scores decide as the uncached scorer") {
  std::mt19937_64 rng(31);
  const in_memory_cluster base = testing::random_cluster(rng, 120);
  const std::vector<pod> pods = repeating_pods(rng, 9, 500);
  const fill_aware_scorer fill(typical_workload::from_pods(pods));
  same_decisions(make_profile(checks(resource_fit{}, gpu_check{}), scores(weighted{fill, 1}), fill), base, pods);
}

TEST_CASE("node_versions: FGD's stamp-checked cache decides as the state-checked one") {
  std::mt19937_64 rng(32);
  const in_memory_cluster base = testing::random_cluster(rng, 120);
  const std::vector<pod> pods = repeating_pods(rng, 9, 500);
  const fgd_scorer fgd(typical_workload::from_pods(pods));
  same_decisions(make_profile(checks(resource_fit{}, gpu_check{}), scores(weighted{fgd, 1}), fgd), base, pods);
}

TEST_CASE("node_versions: a FillAware scorer shared with a second thread computes there, with equal scores") {
  std::mt19937_64 rng(33);
  const in_memory_cluster base = testing::random_cluster(rng, 60);
  const std::vector<pod> pods = repeating_pods(rng, 4, 40);
  const fill_aware_scorer fill(typical_workload::from_pods(pods));
  const stamped c(base);
  std::vector<node_index> nodes;
  for (node_index n = 0; n < num_nodes(c); ++n) nodes.push_back(n);
  auto all_scores = [&](std::vector<std::int64_t>& out) {
    for (const pod& p : pods) {
      std::vector<std::int64_t> s(nodes.size());
      fill.score_nodes(c, p, nodes, s.data());
      out.insert(out.end(), s.begin(), s.end());
    }
  };
  std::vector<std::int64_t> here, there, want;
  all_scores(here);  // this thread owns the cache now
  std::thread t([&] { all_scores(there); });
  t.join();
  for (const pod& p : pods) {
    for (node_index n : nodes) want.push_back(fill.score(base, p, n));  // uncached, plain cluster
  }
  CHECK(here == want);
  CHECK(there == want);
}
