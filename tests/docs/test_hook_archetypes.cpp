// docs/concepts.md lists every hook a host may provide; this file holds one archetype per hook
// (the exact signature the table gives) and checks that gpusched detects each one, that a cluster
// with none of them is still a Cluster, and that the algorithms read what the hooks return.
// The near misses (right name, wrong signature) are compile-fail tests: tests/docs/hook_errors/.
#include <doctest/doctest.h>

#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "gpusched/core/bound_pods.hpp"
#include "gpusched/core/cluster.hpp"
#include "gpusched/core/cluster_totals.hpp"
#include "gpusched/core/in_memory_cluster.hpp"
#include "gpusched/core/named_resources.hpp"
#include "gpusched/core/node_constraints.hpp"
#include "gpusched/gang/rack.hpp"
#include "gpusched/scoring/fgd_paper/gpu_clustering.hpp"
#include "support/minimal_cluster.hpp"

namespace hook_archetype {
using namespace gpusched;

// Required: node_count, node_resources, node_gpu (concept Cluster).
struct bare {};
inline std::size_t node_count(const bare&) { return 2; }
inline node_state node_resources(const bare&, node_index) { return {8000, 0, 16384, 0, 1}; }
inline gpu_device node_gpu(const bare&, node_index, int) { return {short_name("T4"), 1000, 16384, 16384, 0, 0}; }

// Every optional hook, exactly as docs/concepts.md spells it.
struct full {
  std::vector<bound_pod> pods;
  pod spec;
  fgd_paper::gpu_affinity affinity;
  qos_allocation qos;
  std::vector<label> labels{label{"zone", "a"}};
  std::vector<node_taint> taints{node_taint{"gpu", "true", taint_effect::no_schedule}};
  named_resources_state named{2, 2, 0, 0, {}};  // node 0: pods 2, both slots taken
};
inline std::size_t node_count(const full&) { return 2; }
inline node_state node_resources(const full&, node_index) { return {8000, 0, 16384, 0, 1}; }
inline gpu_device node_gpu(const full&, node_index, int) { return {short_name("T4"), 1000, 16384, 16384, 0, 0}; }
inline std::string_view node_name(const full&, node_index n) { return n == 0 ? "a" : "b"; }                 // NamedNodes
inline const node_metrics* node_load(const full&, node_index) { return nullptr; }                          // MeasuredLoad
inline int model_replicas(const full&, node_index n, const short_name& m) { return n == 1 && m == short_name("bert") ? 2 : 0; }  // ServedModels
inline std::vector<std::pair<short_name, int>> node_model_types(const full&, node_index) { return {}; }       // ServedModels
inline std::string_view node_rack(const full&, node_index n) { return n == 0 ? "r0" : "r1"; }               // RackedNodes
inline const fgd_paper::gpu_affinity& gpu_affinity_of(const full& c, node_index) { return c.affinity; }                 // GpuAffinitySource
inline std::span<const bound_pod> bound_pods(const full& c, node_index) { return c.pods; }                  // PodsOnNodes
inline const pod& bound_pod_spec(const full& c, pod_id) { return c.spec; }                                  // PodsOnNodes
inline qos_allocation node_qos_allocation(const full& c, node_index) { return c.qos; }                      // QosAccounted
inline std::span<const label> node_labels(const full& c, node_index) { return c.labels; }                   // LabelledNodes
inline std::span<const node_taint> node_taints(const full& c, node_index) { return c.taints; }              // TaintedNodes
inline bool node_unschedulable(const full&, node_index n) { return n == 1; }                                // CordonableNodes
inline const named_resources_state* node_named_resources(const full& c, node_index n) { return n == 0 ? &c.named : nullptr; }  // NamedResources
inline gpu_turnover cluster_gpu_turnover(const full&) { return {3000, 5000}; }                            // TurnoverCounted
}  // namespace hook_archetype

using namespace gpusched;

static_assert(Cluster<hook_archetype::bare>);
static_assert(!NamedNodes<hook_archetype::bare> && !MeasuredLoad<hook_archetype::bare> && !ServedModels<hook_archetype::bare>);
static_assert(!RackedNodes<hook_archetype::bare> && !fgd_paper::GpuAffinitySource<hook_archetype::bare> && !PodsOnNodes<hook_archetype::bare>);
static_assert(!MutableCluster<hook_archetype::bare>);

static_assert(Cluster<hook_archetype::full>);
static_assert(NamedNodes<hook_archetype::full>);
static_assert(MeasuredLoad<hook_archetype::full>);
static_assert(ServedModels<hook_archetype::full>);
static_assert(RackedNodes<hook_archetype::full>);
static_assert(fgd_paper::GpuAffinitySource<hook_archetype::full>);
static_assert(PodsOnNodes<hook_archetype::full>);
static_assert(QosAccounted<hook_archetype::full>);
static_assert(LabelledNodes<hook_archetype::full> && TaintedNodes<hook_archetype::full> && CordonableNodes<hook_archetype::full>);
static_assert(!LabelledNodes<hook_archetype::bare> && !TaintedNodes<hook_archetype::bare> && !CordonableNodes<hook_archetype::bare>);
static_assert(NamedResources<hook_archetype::full> && !NamedResources<hook_archetype::bare>);
static_assert(TurnoverCounted<hook_archetype::full> && !TurnoverCounted<hook_archetype::bare>);

// The library's own clusters trip no near-miss check (instantiating their traits would fail).
static_assert(Cluster<in_memory_cluster> && NamedNodes<in_memory_cluster> && ServedModels<in_memory_cluster>);
static_assert(MutableCluster<::archetype::minimal_cluster>);

TEST_CASE("hooks.archetypes are read through the traits") {
  const hook_archetype::full f;
  CHECK(node_label(f, 1) == "b");
  CHECK(node_label(hook_archetype::bare{}, 1) == "node#1");  // no node_name: the fallback label
  CHECK(rack_name_of(f, 0) == "r0");
  CHECK(rack_name_of(hook_archetype::bare{}, 0).empty());
  CHECK(traits_of<hook_archetype::full>::model_replicas(f, 1, short_name("bert")) == 2);
  REQUIRE(labels_of(f, 0).size() == 1);
  CHECK(taints_of(f, 0).size() == 1);
  CHECK(is_unschedulable(f, 1));
  CHECK_FALSE(is_unschedulable(f, 0));
  CHECK(labels_of(hook_archetype::bare{}, 0).empty());  // no hooks: no labels, no taints, schedulable
  CHECK_FALSE(is_unschedulable(hook_archetype::bare{}, 0));
  REQUIRE(named_resources_of(f, 0) != nullptr);
  CHECK(named_resources_of(f, 0)->too_many_pods());  // 2 pods of 2: a third is too many
  CHECK(named_resources_of(f, 1) == nullptr);
  CHECK(named_resources_of(hook_archetype::bare{}, 0) == nullptr);  // no hook: no pod limit, no named resource
  CHECK(adl::call_cluster_gpu_turnover(f).turned_over());  // 5000 given back, 3000 held
}
