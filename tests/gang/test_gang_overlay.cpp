// The what-if overlay (the preemption hook: would the whole gang fit if these pods left?) and the
// placer compiled against archetypes: a cluster and a profile that model their concepts and no more.
#include <doctest/doctest.h>

#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "gpusched/core/in_memory_cluster.hpp"
#include "gpusched/gang/overlay.hpp"
#include "gpusched/gang/placement.hpp"
#include "gpusched/preflight/gpu_check.hpp"
#include "gpusched/preflight/resource_fit.hpp"
#include "gpusched/profile/static_profile.hpp"
#include "gpusched/schedule/gpu_selection.hpp"
#include "support/builders.hpp"
#include "support/minimal_cluster.hpp"

using namespace gpusched;

static_assert(MutableCluster<cluster_overlay<in_memory_cluster>>);
static_assert(NamedNodes<cluster_overlay<in_memory_cluster>> && RackedNodes<cluster_overlay<in_memory_cluster>>);
static_assert(MeasuredLoad<cluster_overlay<in_memory_cluster>> && ServedModels<cluster_overlay<in_memory_cluster>>);
static_assert(MutableCluster<cluster_overlay<archetype::minimal_cluster>>);
static_assert(!NamedNodes<cluster_overlay<archetype::minimal_cluster>> && !RackedNodes<cluster_overlay<archetype::minimal_cluster>>);

TEST_CASE("gang.overlay.changes only the overlay") {
  in_memory_cluster c;
  node_spec n = testing::gpu_node("a", 16000, 65536, 2);
  n.rack = "r7";
  c.add_node(n);
  const pod p = make_pod("p").cpu(4000).memory(1024).gpu_share(600).gpu_memory(1000);
  c.reserve(p, make_binding(p, 0, 0b01));
  const in_memory_cluster before = c;

  cluster_overlay<in_memory_cluster> o(c);
  o.release(p, make_binding(p, 0, 0b01));
  CHECK(node_resources(o, 0).cpu_allocated == 0);
  CHECK(node_gpu(o, 0, 0).milli_free == 1000);
  CHECK(node_gpu(o, 0, 0).mem_free_mib == 32768);
  CHECK(node_name(o, 0) == "a");
  CHECK(node_rack(o, 0) == "r7");
  CHECK(c == before);
  CHECK(o.changed_nodes() == 1);

  o.reset();
  CHECK(node_gpu(o, 0, 0).milli_free == 400);
  // No share overcommit: 600 more on device 0 (400 free) throws and changes nothing.
  CHECK_THROWS_AS(o.reserve(p, make_binding(p, 0, 0b01)), invalid_argument_error);
  CHECK(node_gpu(o, 0, 0).milli_free == 400);
  CHECK_THROWS_AS(o.reserve(p, make_binding(p, 3, 0b01)), invalid_argument_error);
  CHECK_THROWS_AS(o.release(p, make_binding(p, 0, 0b10)), invalid_argument_error);  // device 1 is wholly free
  CHECK(o.changed_nodes() == 0);
}

TEST_CASE("gang.overlay.would the whole gang fit if these pods left") {
  // Two 4-GPU nodes, full with four 2-GPU pods of a low-priority job.
  in_memory_cluster c;
  c.add_node(testing::gpu_node("a", 32000, 131072, 4));
  c.add_node(testing::gpu_node("b", 32000, 131072, 4));
  const pod victim = make_pod("v").cpu(1000).gpus(2).priority(1);
  std::vector<std::pair<const pod*, binding>> victims = {
      {&victim, make_binding(victim, 0, 0b0011)}, {&victim, make_binding(victim, 0, 0b1100)},
      {&victim, make_binding(victim, 1, 0b0011)}, {&victim, make_binding(victim, 1, 0b1100)}};
  for (const auto& [p, b] : victims) c.reserve(*p, b);
  const in_memory_cluster before = c;

  gang_placer placer(make_profile(checks(gpu_check{}, resource_fit{}), scores()));
  const gang_spec g = make_gang("g").priority(8).role("w", make_pod("w").cpu(2000).gpus(4), 2);
  CHECK(demand_of(g).gpus == 8);
  CHECK(demand_of(g).cpu_milli == 4000);

  CHECK_FALSE(placer.plan(c, g).placed);
  // Node a's two victims leaving make room for one member, not both: the gang needs all of them.
  const gang_result half = placer.plan(c, g, std::span(victims).first(2));
  CHECK_FALSE(half.placed);
  CHECK(half.failure.placed == 1);
  const gang_result all = placer.plan(c, g, victims);
  REQUIRE(all.placed);
  CHECK(c == before);  // what-if only

  // The plan holds on the live cluster once the victims are gone.
  for (const auto& [p, b] : victims) c.release(*p, b);
  for (const auto& m : all.members) c.reserve(g.roles[m.role].member, m.where);
  CHECK(c.gpus(0)[0].milli_free == 0);
  CHECK(c.gpus(1)[3].milli_free == 0);
}

namespace {
// Models SchedulingProfile and nothing more: GPUCheck and NodeResourcesFit by hand, no scorer.
struct minimal_profile {
  template <Cluster C>
  void filter(const C& c, const pod& p, node_index first, std::size_t count, reason* out) const {
    for (std::size_t i = 0; i < count; ++i) {
      const auto n = static_cast<node_index>(first + i);
      out[i] = gpu_check{}.check(c, p, n);
      if (out[i] == reason::ok) out[i] = resource_fit{}.check(c, p, n);
    }
  }
  [[nodiscard]] std::size_t score_plugin_count() const { return 0; }
  [[nodiscard]] std::string_view score_plugin_name(std::size_t) const { return {}; }
  [[nodiscard]] std::int64_t score_plugin_weight(std::size_t) const { return 1; }
  template <Cluster C>
  void score(const C&, const pod&, std::span<const node_index>, std::int64_t*) const {}
  template <Cluster C>
  [[nodiscard]] gpu_set select_gpus(const C& c, const pod& p, node_index n) const {
    return best_fit_gpus{}.select(c, p, n);
  }
};
static_assert(SchedulingProfile<minimal_profile, archetype::minimal_cluster>);

archetype::minimal_cluster three_nodes() {
  archetype::minimal_cluster c;
  for (int i = 0; i < 3; ++i) {
    c.nodes.push_back(node_state{16000, 0, 65536, 0, 4});
    c.gpus.emplace_back(4, gpu_device{short_name("T4"), 1000, 16384, 16384, 0, 0});
  }
  return c;
}
}  // namespace

TEST_CASE("gang.archetypes.placement needs only the concepts") {
  archetype::minimal_cluster c = three_nodes();
  gang_placer placer{minimal_profile{}};
  // Five 2-GPU members: 2 + 2 on nodes 0 and 1 (the take per node is 2), the fifth best-fit on node 2.
  const gang_spec g = make_gang("g").role("w", make_pod("w").cpu(1000).gpus(2), 5);
  const gang_result r = placer.place(c, g);
  REQUIRE(r.placed);
  CHECK(r.nodes_used == 3);
  CHECK(r.racks_used == 1);  // no rack hook: one rack
  CHECK(c.nodes[0].cpu_allocated == 2000);
  CHECK(c.nodes[2].cpu_allocated == 1000);

  // All or nothing on the archetype: 7 more do not fit in the 2 GPUs left.
  const auto nodes = c.nodes;
  const auto gpus = c.gpus;
  CHECK_FALSE(placer.place(c, make_gang("h").role("w", make_pod("w").gpus(1), 3)).placed);
  CHECK(c.nodes == nodes);
  CHECK(c.gpus == gpus);
  // And the what-if, on an overlay over the archetype.
  CHECK(placer.plan(c, make_gang("h").role("w", make_pod("w").gpus(1), 2)).placed);
  CHECK(c.gpus == gpus);
}
