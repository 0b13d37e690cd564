// A Scorer's PreScore Skip (Kubernetes' framework Skip status): the plugin is not run for the pod,
// not normalised, and adds nothing to the total, in static and dynamic profiles alike.
#include <doctest/doctest.h>

#include <span>
#include <string_view>
#include <vector>

#include "gpusched/core/in_memory_cluster.hpp"
#include "gpusched/profile/dynamic_profile.hpp"
#include "gpusched/profile/static_profile.hpp"
#include "gpusched/schedule/schedule_one.hpp"
#include "gpusched/scoring/scorer.hpp"
#include "support/builders.hpp"

using namespace gpusched;

namespace {
// Prefers node 1 strongly, but only for pods asking for GPUs; counts its calls.
struct gpu_only_preference {
  int* score_calls;
  int* normalize_calls;
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "GpuOnly"; }
  template <Cluster C>
  [[nodiscard]] score_status pre_score(const C&, const pod& p) const noexcept {
    return p.wants_gpu() ? score_status::ok : score_status::skip;
  }
  template <Cluster C>
  [[nodiscard]] std::int64_t score(const C&, const pod&, node_index n) const {
    ++*score_calls;
    return n == 1 ? 100 : 0;
  }
  void normalize(std::span<std::int64_t>) const noexcept { ++*normalize_calls; }
};
// 10 on node 0, 20 on node 1, never skips.
struct by_index {
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "ByIndex"; }
  template <Cluster C>
  [[nodiscard]] std::int64_t score(const C&, const pod&, node_index n) const {
    return 10 * (static_cast<std::int64_t>(n) + 1);
  }
};
static_assert(PreScoringScorer<gpu_only_preference, in_memory_cluster>);
static_assert(!PreScoringScorer<by_index, in_memory_cluster>);

in_memory_cluster two_nodes() {
  in_memory_cluster c;
  c.add_node(testing::gpu_node("a", 8000, 16384, 2));
  c.add_node(testing::gpu_node("b", 8000, 16384, 2));
  return c;
}
}  // namespace

TEST_CASE("scoring.run_scorer: Skip writes 0, runs neither Score nor NormalizeScore") {
  int calls = 0, norms = 0;
  const gpu_only_preference s{&calls, &norms};
  const auto c = two_nodes();
  const node_index nodes[] = {0, 1};
  std::int64_t out[2] = {-1, -1};
  CHECK_FALSE(run_scorer(s, c, make_pod("cpu").cpu(100), std::span<const node_index>(nodes), out));
  CHECK(out[0] == 0);
  CHECK(out[1] == 0);
  CHECK(calls == 0);
  CHECK(norms == 0);
  CHECK(run_scorer(s, c, make_pod("gpu").gpus(1), std::span<const node_index>(nodes), out));
  CHECK(out[1] == 100);
  CHECK(calls == 2);
  CHECK(norms == 1);
}

TEST_CASE("scoring.Skip contributes nothing to the weighted total (static and dynamic profiles)") {
  int calls = 0, norms = 0;
  const gpu_only_preference s{&calls, &norms};
  const auto c = two_nodes();
  auto stat = make_profile(checks(), scores(weighted{s, 5}, weighted{by_index{}, 1}));
  dynamic_profile<in_memory_cluster> dyn;
  dyn.add_score(s, 5).add_score(by_index{}, 1);
  scheduler<in_memory_cluster, decltype(stat)> s1(stat, {100, 1, true});
  scheduler<in_memory_cluster, dynamic_profile<in_memory_cluster>> s2(dyn, {100, 1, true});
  // A CPU pod: GpuOnly skipped, so the total is ByIndex's alone: node b with 20.
  const auto r1 = s1.schedule_one(c, make_pod("cpu").cpu(100));
  const auto r2 = s2.schedule_one(c, make_pod("cpu").cpu(100));
  CHECK(r1.score == 20);
  CHECK(r2.score == 20);
  // A GPU pod: 100 x 5 + 20 on node b.
  CHECK(s1.schedule_one(c, make_pod("gpu").gpus(1)).score == 520);
  CHECK(s2.schedule_one(c, make_pod("gpu").gpus(1)).score == 520);
}
