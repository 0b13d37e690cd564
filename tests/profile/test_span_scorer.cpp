#include <doctest/doctest.h>

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "gpusched/core/in_memory_cluster.hpp"
#include "gpusched/preflight/gpu_check.hpp"
#include "gpusched/profile/dynamic_profile.hpp"
#include "gpusched/schedule/schedule_one.hpp"
#include "gpusched/scoring/node_resources.hpp"
#include "support/builders.hpp"

using namespace gpusched;

namespace {
// Scores the feasible nodes in one call: 10 * (position in the span), and records the calls.
struct by_position {
  std::vector<std::size_t>* calls;
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "ByPosition"; }
  void score_nodes(const in_memory_cluster&, const pod&, std::span<const node_index> nodes, std::int64_t* out) const {
    calls->push_back(nodes.size());
    for (std::size_t j = 0; j < nodes.size(); ++j) out[j] = static_cast<std::int64_t>(10 * j);
  }
};
static_assert(SpanScorer<by_position, in_memory_cluster>);
static_assert(!Scorer<by_position, in_memory_cluster>);
}  // namespace

TEST_CASE("profile.a SpanScorer scores every feasible node in one call, next to per-node scorers") {
  in_memory_cluster c;
  for (int i = 0; i < 4; ++i) c.add_node(testing::gpu_node("n" + std::to_string(i), 32000, 65536, i == 1 ? 0 : 4));
  std::vector<std::size_t> calls;
  dynamic_profile<in_memory_cluster> prof;
  prof.add_check(gpu_check{}).add_score(by_position{&calls}, 2).add_score(least_allocated{}, 1);
  scheduler<in_memory_cluster, dynamic_profile<in_memory_cluster>> s(prof, schedule_options{100, 0, true});
  const schedule_result r = s.schedule_one(c, make_pod("p").cpu(1000).memory(1024).gpus(1).build());
  // n1 has no GPU: feasible are n0, n2, n3 at span positions 0, 1, 2 -> 0, 10, 20 (x2); LeastAllocated
  // is equal on all three (cpu (32000-1000)*100/32000 = 96, memory (65536-1024)*100/65536 = 98 -> 97).
  CHECK(calls == std::vector<std::size_t>{3});
  REQUIRE(r.scheduled);
  CHECK(r.where.node == 3);
  CHECK(r.score == 20 * 2 + 97);
  REQUIRE(r.breakdown.size() == 2);
  CHECK(r.breakdown[0].plugin == "ByPosition");
  CHECK(r.breakdown[0].score == 20);
}
