// NodeResourcesBalancedAllocation, both formulas, on the cases of Kubernetes'
// pkg/scheduler/framework/plugins/noderesources/balanced_allocation_test.go
// (kubernetes/kubernetes commit 00fdb4ffc64976886691c99434ab5b01fa54f8fe, TestNodeResourcesBalancedAllocation).
// "after" (BalanceAfter) expects that file's values; "change" (ChangeInBalance, the default since
// kubernetes PR #135573) expects values worked out by hand below from the PR's formula
// 50 + (50 + with - without) / 2, with/without = int((1 - std) * 100) with and without the pod.
// Kubernetes' memory is in bytes, gpusched's in MiB: the numbers are kept (fractions are unit-free);
// nvidia.com/gpu counts become GPU milli (x1000), again the same fractions.
//
// Cases not transcribed, and why:
// - "nothing scheduled, nothing requested, skip in PreScore": gpusched has no PreScore Skip for
//   best-effort pods (issue 13 item 8, a Scorer that can Skip).
// - "node without the scalar resource should skip the scalar resource": Kubernetes leaves out a
//   scalar resource the pod does not request; gpusched still counts it (issue 13 item 1).
// - the two "include DRA resource" cases: no dynamic resource allocation in gpusched.
// - "... if PreScore not called": the same numbers as the case before it (no PreScore in gpusched).
#include <doctest/doctest.h>

#include <vector>

#include "gpusched/core/in_memory_cluster.hpp"
#include "gpusched/profile/config_yaml.hpp"
#include "gpusched/scoring/node_resources.hpp"
#include "support/builders.hpp"

using namespace gpusched;

namespace {
const pod cpu_and_memory = make_pod("cm").cpu(3000).memory(5000);  // cpuAndMemory: 1000m+2000m, 2000+3000
const pod cpu_only = make_pod("c").cpu(3000).memory(0);             // cpuOnly: 1000m+2000m, memory 0

std::vector<std::int64_t> scores(const in_memory_cluster& c, const pod& p, balance_formula f, resource_weights w = {}) {
  const balanced_allocation b{w, f};
  std::vector<std::int64_t> out;
  for (node_index n = 0; n < c.size(); ++n) out.push_back(b.score(c, p, n));
  return out;
}
using ints = std::vector<std::int64_t>;
}  // namespace

TEST_CASE("BalancedAllocation: nothing scheduled, resources requested, differently sized nodes") {
  in_memory_cluster c;
  c.add_node(testing::gpu_node("node1", 4000, 10000, 0));
  c.add_node(testing::gpu_node("node2", 6000, 10000, 0));
  CHECK(scores(c, cpu_and_memory, balance_formula::after) == ints{87, 100});
  // node1: with 87, without (0, 0) 100: 50 + (50 + 87 - 100) / 2 = 68; node2: 100 and 100: 75.
  CHECK(scores(c, cpu_and_memory, balance_formula::change) == ints{68, 75});
}

TEST_CASE("BalancedAllocation: resources requested, pods scheduled with resources (two node sizes)") {
  for (const mib mem2 : {mib{20000}, mib{50000}}) {
    CAPTURE(mem2);
    in_memory_cluster c;
    c.add_node(testing::gpu_node("node1", 10000, 20000, 0));
    c.add_node(testing::gpu_node("node2", 10000, mem2, 0));
    c.reserve(cpu_only, make_binding(cpu_only, 0, 0));
    c.reserve(cpu_and_memory, make_binding(cpu_and_memory, 1, 0));
    if (mem2 == 20000) {
      CHECK(scores(c, cpu_and_memory, balance_formula::after) == ints{82, 95});
      // node1: with (.6, .25) 82, without (.3, 0) 85 -> 50 + 47/2 = 73;
      // node2: with (.6, .5) 95, without (.3, .25) 97 -> 50 + 48/2 = 74.
      CHECK(scores(c, cpu_and_memory, balance_formula::change) == ints{73, 74});
    } else {
      CHECK(scores(c, cpu_and_memory, balance_formula::after) == ints{82, 80});
      // node2: with (.6, .2) 80, without (.3, .1) 90 -> 50 + 40/2 = 70.
      CHECK(scores(c, cpu_and_memory, balance_formula::change) == ints{73, 70});
    }
  }
}

TEST_CASE("BalancedAllocation: requested resources at node capacity") {
  in_memory_cluster c;
  c.add_node(testing::gpu_node("node1", 6000, 10000, 0));
  c.add_node(testing::gpu_node("node2", 6000, 10000, 0));
  c.reserve(cpu_only, make_binding(cpu_only, 0, 0));
  c.reserve(cpu_and_memory, make_binding(cpu_and_memory, 1, 0));
  CHECK(scores(c, cpu_only, balance_formula::after) == ints{50, 75});
  // node1: with (1, 0) 50, without (.5, 0) 75 -> 50 + 25/2 = 62; node2: with (1, .5) 75, without (.5, .5) 100 -> 62.
  CHECK(scores(c, cpu_only, balance_formula::change) == ints{62, 62});
}

TEST_CASE("BalancedAllocation: include scalar resource on a node for balanced resource allocation") {
  in_memory_cluster c;
  c.add_node(testing::gpu_node("node1", 3500, 40000, 8));
  c.add_node(testing::gpu_node("node2", 3500, 40000, 8));
  const pod gpu3 = make_pod("cmg").cpu(3000).memory(5000).gpus(3);  // cpuAndMemoryAndGPU, on node1
  c.reserve(gpu3, make_binding(gpu3, 0, 0b111));
  c.reserve(cpu_and_memory, make_binding(cpu_and_memory, 1, 0));
  const pod p = make_pod("p").memory(0).gpus(1);
  const resource_weights all{1, 1, 1};
  CHECK(scores(c, p, balance_formula::after, all) == ints{70, 65});
  // node1: with (.857, .125, .5) 70, without (.857, .125, .375) std .3039 -> 69: 50 + 51/2 = 75;
  // node2: with (.857, .125, .125) 65, without (.857, .125, 0) std .3781 -> 62: 50 + 53/2 = 76.
  CHECK(scores(c, p, balance_formula::change, all) == ints{75, 76});
}

TEST_CASE("BalancedAllocation: ChangeInBalance by default; BalanceAfter by the documented option") {
  const std::string head =
      "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- plugins:\n"
      "    score:\n      disabled: [{name: '*'}]\n      enabled:\n      - name: NodeResourcesBalancedAllocation\n";
  in_memory_cluster c;
  c.add_node(testing::gpu_node("node1", 4000, 10000, 0));
  auto one = [&](const std::string& text) {
    const auto cfg = parse_scheduler_config(text, "cfg.yaml");
    std::int64_t raw = 0;
    const node_index n = 0;
    cfg.profiles.front().profile.score(c, cpu_and_memory, std::span<const node_index>(&n, 1), &raw);
    return raw;
  };
  CHECK(one(head) == 68);
  CHECK(one(head + "  pluginConfig:\n  - name: NodeResourcesBalancedAllocation\n    args:\n      formula: BalanceAfter\n") == 87);
  CHECK_THROWS_WITH_AS(
      one(head + "  pluginConfig:\n  - name: NodeResourcesBalancedAllocation\n    args:\n      formula: Std\n"),
      "cfg.yaml:12: NodeResourcesBalancedAllocation: formula must be ChangeInBalance (Kubernetes since PR #135573, "
      "the default) or BalanceAfter (the balance with the pod, before that PR), not 'Std'",
      file_error);
}
