// Kubernetes' tables that need the `pods` resource or named (scalar) resources, which gpusched could
// not express before docs/adr/0015-resources-by-name.md:
//
// 1. NodeResourcesFit's filter: TestEnoughRequests, TestNotEnoughRequests and TestStorageRequests
//    from kubernetes pkg/scheduler/framework/plugins/noderesources/fit_test.go at commit
//    007f7ae7dc217d27dad994dce003cfe1c5bc6706. Their node: cpu 10 (milli), memory 20, pods 32,
//    example.com/aaa 5, ephemeral-storage 20, hugepages-2Mi 5 (makeAllocatableResources(10, 20, 32,
//    5, 20, 5)); TestNotEnoughRequests' node: cpu 10, memory 20, pods 1. Each table's node already
//    holds one pod (framework.NewNodeInfo(newResourcePod(...))). Units: numbers as given (cpu
//    milli-cores in cpu_milli; memory, storage and hugepages amounts as given: the filter compares
//    sums, so any uniform unit keeps every decision).
//    A gpusched pod is one request: a case with init containers is transcribed with Kubernetes'
//    effective request, max(sum of containers, largest init container) (resourcehelper.PodRequests),
//    and one with pod overhead with requests + overhead. Where upstream lists two insufficient
//    resources (cpu and memory), gpusched's check reports the first (in fit.go's order).
//    "skip checking ignored extended resource" is checked with resource_fit::ignored_resources.
// 2. TestResourceBinPackingMultipleExtended from requested_to_capacity_ratio_test.go at kubernetes
//    commit 00b9ead02c37921011ebe5293558cea5277cd295, all four cases (intel.com/foo and intel.com/bar).
// 3. The extended-resource cases of least_allocated_test.go (commit 008b3652959c) and
//    most_allocated_test.go (commit 030880a5dc54) with extendedRes as the named resource
//    intel.com/foo itself rather than nvidia.com/gpu (test_least_allocated.cpp has them as GPUs).
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "conformance/kube_table.hpp"
#include "gpusched/core/bound_cluster.hpp"
#include "gpusched/core/in_memory_cluster.hpp"
#include "gpusched/preflight/resource_fit.hpp"
#include "gpusched/scoring/node_resources.hpp"

using namespace gpusched;

namespace {

struct amounts {
  std::int64_t cpu = 0, mem = 0;
  std::vector<std::pair<const char*, std::int64_t>> named{};
};

pod make(const std::string& name, const amounts& a) {
  auto b = make_pod(name).cpu(a.cpu).memory(a.mem);
  for (const auto& [n, v] : a.named) b.scalar(n, v);
  return b;
}

// fit_test.go's node with one pod holding `existing`.
in_memory_cluster fit_node(const amounts& existing, std::int64_t pods = 32, bool named = true) {
  node_spec s{"node", 10, 20, {}, ""};
  s.pods = pods;
  if (named) s.add_scalar("example.com/aaa", 5).add_scalar("ephemeral-storage", 20).add_scalar("hugepages-2Mi", 5);
  in_memory_cluster c;
  c.add_node(s);
  const pod e = make("existing", existing);
  c.reserve(e, make_binding(e, 0, 0));
  return c;
}

struct fit_case {
  const char* name;
  amounts pod, existing;
  reason want;
  std::int64_t requested = 0, used = 0, capacity = 0;  // InsufficientResource's numbers (want != ok)
  const char* text = "";
};

void check_fit(const fit_case& k, in_memory_cluster c) {
  CAPTURE(k.name);
  const pod p = make("p", k.pod);
  const resource_fit fit;
  CHECK(fit.check(c, p, 0) == k.want);
  const reason_detail d = fit.explain(c, p, 0);
  CHECK(d.why == k.want);
  if (k.want != reason::ok) {
    CHECK(d.text == k.text);
    CHECK(d.requested == k.requested);
    CHECK(d.used == k.used);
    CHECK(d.capacity == k.capacity);
  }
}

}  // namespace

TEST_CASE("conformance.fit: TestEnoughRequests") {
  const char* aaa = "example.com/aaa";
  const char* hp = "hugepages-2Mi";
  const std::vector<fit_case> cases = {
      {"no resources requested always fits", {}, {10, 20}, reason::ok},
      {"too many resources fails", {1, 1}, {10, 20}, reason::insufficient_cpu, 1, 10, 10, "Insufficient cpu"},
      {"too many resources fails due to init container cpu", {3, 1}, {8, 19}, reason::insufficient_cpu, 3, 8, 10, "Insufficient cpu"},
      {"too many resources fails due to highest init container cpu", {3, 1}, {8, 19}, reason::insufficient_cpu, 3, 8, 10,
       "Insufficient cpu"},
      {"too many resources fails due to init container memory", {1, 3}, {9, 19}, reason::insufficient_memory, 3, 19, 20,
       "Insufficient memory"},
      {"init container fits because it's the max, not sum, of containers and init containers", {1, 1}, {9, 19}, reason::ok},
      {"both resources fit", {1, 1}, {5, 5}, reason::ok},
      {"one resource memory fits", {2, 1}, {9, 5}, reason::insufficient_cpu, 2, 9, 10, "Insufficient cpu"},
      {"one resource cpu fits", {1, 2}, {5, 19}, reason::insufficient_memory, 2, 19, 20, "Insufficient memory"},
      {"equal edge case", {5, 1}, {5, 19}, reason::ok},
      {"equal edge case for init container", {5, 1}, {5, 19}, reason::ok},
      {"extended resource fits", {0, 0, {{aaa, 1}}}, {}, reason::ok},
      {"extended resource capacity enforced", {1, 1, {{aaa, 10}}}, {0, 0, {{aaa, 0}}}, reason::insufficient_named, 10, 0, 5,
       "Insufficient example.com/aaa"},
      {"extended resource allocatable enforced", {1, 1, {{aaa, 1}}}, {0, 0, {{aaa, 5}}}, reason::insufficient_named, 1, 5, 5,
       "Insufficient example.com/aaa"},
      {"extended resource allocatable enforced for multiple containers", {2, 2, {{aaa, 6}}}, {0, 0, {{aaa, 2}}},
       reason::insufficient_named, 6, 2, 5, "Insufficient example.com/aaa"},
      {"extended resource allocatable admits multiple init containers", {1, 1, {{aaa, 3}}}, {0, 0, {{aaa, 2}}}, reason::ok},
      {"extended resource allocatable enforced for multiple init containers", {1, 1, {{aaa, 6}}}, {0, 0, {{aaa, 2}}},
       reason::insufficient_named, 6, 2, 5, "Insufficient example.com/aaa"},
      {"extended resource allocatable enforced for unknown resource", {1, 1, {{"example.com/bbb", 1}}}, {},
       reason::insufficient_named, 1, 0, 0, "Insufficient example.com/bbb"},
      {"kubernetes.io resource capacity enforced", {1, 1, {{"kubernetes.io/something", 10}}}, {}, reason::insufficient_named, 10,
       0, 0, "Insufficient kubernetes.io/something"},
      {"kubernetes.io resource capacity enforced for init container", {1, 1, {{"subdomain.kubernetes.io/something", 10}}}, {},
       reason::insufficient_named, 10, 0, 0, "Insufficient subdomain.kubernetes.io/something"},
      {"hugepages resource capacity enforced", {1, 1, {{hp, 10}}}, {0, 0, {{hp, 0}}}, reason::insufficient_named, 10, 0, 5,
       "Insufficient hugepages-2Mi"},
      {"hugepages resource allocatable enforced for multiple containers", {2, 2, {{hp, 6}}}, {0, 0, {{hp, 2}}},
       reason::insufficient_named, 6, 2, 5, "Insufficient hugepages-2Mi"},
      {"resources + pod overhead fits", {1 + 3, 1 + 13}, {5, 5}, reason::ok},
      {"requests + overhead does not fit for memory", {1 + 1, 1 + 15}, {5, 5}, reason::insufficient_memory, 16, 5, 20,
       "Insufficient memory"},
  };
  for (const fit_case& k : cases) check_fit(k, fit_node(k.existing));
}

TEST_CASE("conformance.fit: skip checking ignored extended resource (ignoredResources, and a group)") {
  const auto c = fit_node({});
  const pod p = make("p", {1, 1, {{"example.com/bbb", 1}}});
  resource_fit fit;
  CHECK(fit.check(c, p, 0) == reason::insufficient_named);
  fit.ignored_resources = {resource_name("example.com/bbb")};
  CHECK(fit.check(c, p, 0) == reason::ok);
  resource_fit group;
  group.ignored_resource_groups = {"example.com"};
  CHECK(group.check(c, p, 0) == reason::ok);
  // Not an extended resource (kubernetes.io namespace): never ignored.
  group.ignored_resource_groups = {"kubernetes.io"};
  CHECK(group.check(c, make("q", {1, 1, {{"kubernetes.io/something", 1}}}), 0) == reason::insufficient_named);
}

TEST_CASE("conformance.fit: TestNotEnoughRequests (pods = 1, one pod on the node)") {
  const std::vector<fit_case> cases = {
      {"even without specified resources predicate fails when there's no space for additional pod", {}, {10, 20},
       reason::too_many_pods, 1, 1, 1, "Too many pods"},
      {"even if both resources fit predicate fails when there's no space for additional pod", {1, 1}, {5, 5},
       reason::too_many_pods, 1, 1, 1, "Too many pods"},
      {"even for equal edge case predicate fails when there's no space for additional pod", {5, 1}, {5, 19},
       reason::too_many_pods, 1, 1, 1, "Too many pods"},
      {"even for equal edge case predicate fails when there's no space for additional pod due to init container", {5, 1},
       {5, 19}, reason::too_many_pods, 1, 1, 1, "Too many pods"},
  };
  for (const fit_case& k : cases) check_fit(k, fit_node(k.existing, 1, false));
}

TEST_CASE("conformance.fit: TestStorageRequests") {
  const char* es = "ephemeral-storage";
  const std::vector<fit_case> cases = {
      {"due to container scratch disk", {1, 1}, {10, 10}, reason::insufficient_cpu, 1, 10, 10, "Insufficient cpu"},
      {"pod fit", {1, 1}, {2, 10}, reason::ok},
      {"storage ephemeral local storage request exceeds allocatable", {0, 0, {{es, 25}}}, {2, 2}, reason::insufficient_named, 25,
       0, 20, "Insufficient ephemeral-storage"},
      {"pod fits", {0, 0, {{es, 10}}}, {2, 2}, reason::ok},
  };
  for (const fit_case& k : cases) check_fit(k, fit_node(k.existing));
}

TEST_CASE("conformance.fit: the pod count follows reserve and release, through a bound_cluster too") {
  bound_cluster<> c;
  node_spec s{"node", 10, 20, {}, ""};
  s.pods = 2;
  c.add_node(s);
  const pod a = make_pod("a"), b = make_pod("b"), x = make_pod("x");
  CHECK(resource_fit{}.check(c, x, 0) == reason::ok);
  c.bind(a, make_binding(a, 0, 0));
  CHECK(resource_fit{}.check(c, x, 0) == reason::ok);
  c.bind(b, make_binding(b, 0, 0));
  CHECK(resource_fit{}.check(c, x, 0) == reason::too_many_pods);
  c.release(a, make_binding(a, 0, 0));
  CHECK(resource_fit{}.check(c, x, 0) == reason::ok);
}

namespace {
const std::int64_t mem10000 = std::int64_t{10000} * 1024 * 1024;

in_memory_cluster two_extended(std::int64_t foo1, std::int64_t bar1, std::int64_t foo2, std::int64_t bar2) {
  in_memory_cluster c;
  c.add_node(node_spec{"node1", 4000, mem10000, {}, ""}.add_scalar("intel.com/foo", foo1).add_scalar("intel.com/bar", bar1));
  c.add_node(node_spec{"node2", 4000, mem10000, {}, ""}.add_scalar("intel.com/foo", foo2).add_scalar("intel.com/bar", bar2));
  return c;
}

using conformance::expected;
using conformance::scores;
}  // namespace

TEST_CASE("conformance.requested_to_capacity_ratio: TestResourceBinPackingMultipleExtended") {
  // resources: intel.com/foo weight 3, intel.com/bar weight 5 (no cpu, no memory); shape {0,0},{100,1}.
  requested_to_capacity_ratio s({{0, 0}, {100, 1}}, resource_weights{0, 0, 0});
  s.named = {{resource_name("intel.com/foo"), 3}, {resource_name("intel.com/bar"), 5}};
  const pod pod1 = make("p", {0, 0, {{"intel.com/foo", 2}, {"intel.com/bar", 2}}});
  const pod pod2 = make("p", {0, 0, {{"intel.com/foo", 4}, {"intel.com/bar", 2}}});
  // node1 = extendedResources2 (foo 8, bar 4), node2 = extendedResources1 (foo 4, bar 8).
  SUBCASE("nothing scheduled, nothing requested") {
    CHECK(scores(s, two_extended(8, 4, 4, 8), make_pod("p")) == expected{0, 0});
  }
  SUBCASE("resources requested, pods scheduled with less resources") {
    CHECK(scores(s, two_extended(8, 4, 4, 8), pod1) == expected{4, 3});
  }
  SUBCASE("resources requested, pods scheduled with resources, on node with existing pod running") {
    auto c = two_extended(8, 4, 4, 8);
    const pod e = make("existing", {0, 0, {{"intel.com/foo", 4}, {"intel.com/bar", 2}}});
    c.reserve(e, make_binding(e, 1, 0));
    CHECK(scores(s, c, pod1) == expected{4, 7});
  }
  SUBCASE("resources requested, pods scheduled with more resources") {
    CHECK(scores(s, two_extended(8, 4, 4, 8), pod2) == expected{5, 5});
  }
}

TEST_CASE("conformance.least_allocated / most_allocated: extended-resource cases with intel.com/foo by name") {
  // extendedResourceSet: cpu 1, memory 1, intel.com/foo 1.
  const std::vector<named_weight> foo{{resource_name("intel.com/foo"), 1}};
  const least_allocated least{{1, 1, 0}, foo};
  const most_allocated most{{1, 1, 0}, foo};
  const auto node = [](std::int64_t units) {
    node_spec s{"n", 6000, 10000, {}, ""};
    if (units > 0) s.add_scalar("intel.com/foo", units);
    return s;
  };
  const auto cluster = [&](std::int64_t a, std::int64_t b) {
    in_memory_cluster c;
    auto s1 = node(a);
    s1.name = "node1";
    auto s2 = node(b);
    s2.name = "node2";
    c.add_node(s1);
    c.add_node(s2);
    return c;
  };
  const pod no_foo = make("p", {3000, 5000});
  const pod two_foo = make("p", {3000, 5000, {{"intel.com/foo", 2}}});
  SUBCASE("bypass extended resource if the pod does not request") {
    CHECK(scores(least, cluster(0, 4), no_foo) == expected{50, 50});
    CHECK(scores(most, cluster(0, 4), no_foo) == expected{50, 50});
  }
  SUBCASE("honor extended resource if the pod requests") {
    CHECK(scores(least, cluster(4, 10), two_foo) == expected{50, 60});
    CHECK(scores(most, cluster(4, 10), two_foo) == expected{50, 40});
  }
  SUBCASE("if the node doesn't have a resource (least_allocated, intel.com/foo weight 2)") {
    const least_allocated w2{{1, 1, 0}, {{resource_name("intel.com/foo"), 2}}};
    CHECK(scores(w2, cluster(0, 4), make("p", {3000, 4000})) == expected{55, 55});
  }
}

TEST_CASE("conformance.named: ephemeral-storage is scored whether the pod requests it or not") {
  // calculateResourceAllocatableRequest: ephemeral-storage is not a scalar resource name, so it is
  // not bypassed. node 10000 allocatable, 5000 requested by an existing pod; pod asks for none:
  // leastRequestedScore = (10000 - 5000) * 100 / 10000 = 50 -> mean of cpu 100, memory 100, storage 50
  // with weights 1,1,1 = 250 / 3 = 83.
  in_memory_cluster c;
  c.add_node(node_spec{"n", 1000, 1000, {}, ""}.add_scalar("ephemeral-storage", 10000));
  const pod e = make("e", {0, 0, {{"ephemeral-storage", 5000}}});
  c.reserve(e, make_binding(e, 0, 0));
  const least_allocated s{{1, 1, 0}, {{resource_name("ephemeral-storage"), 1}}};
  CHECK(s.score(c, make_pod("p"), 0) == 83);
  // A scalar resource the pod does not request is left out: cpu 100, memory 100 -> 100.
  const least_allocated foo{{1, 1, 0}, {{resource_name("example.com/foo"), 1}}};
  CHECK(foo.score(c, make_pod("p"), 0) == 100);
}

TEST_CASE("conformance.most_allocated: no resources requested, pods scheduled, nonzero request for resource (the option)") {
  // most_allocated_test.go (commit 030880a5dc54): nodes 250m CPU and 1000Mi, two pods without
  // requests on node1, a pod without requests: {80, 30}. With nonzero_requests every one of them
  // counts as 100m and 200Mi (pkg/scheduler/util DefaultMilliCPURequest, DefaultMemoryRequest):
  // node1 cpu 300 of 250 -> 100, memory 600 of 1000 -> 60, mean 80; node2 cpu 40, memory 20, mean 30.
  // Memory in MiB (200Mi, 1000Mi exactly); the nodes carry a pod limit, as every Kubernetes node does.
  in_memory_cluster c;
  for (const char* name : {"node1", "node2"}) {
    node_spec s{name, 250, 1000, {}, ""};
    s.pods = 110;
    c.add_node(s);
  }
  for (const char* name : {"e1", "e2"}) {
    const pod e = make_pod(name);
    c.reserve(e, make_binding(e, 0, 0));
  }
  most_allocated s{{1, 1, 0}};
  CHECK(scores(s, c, make_pod("p")) == expected{0, 0});  // no defaults: nothing requested anywhere
  s.nonzero.enabled = true;
  CHECK(scores(s, c, make_pod("p")) == expected{80, 30});
  // A pod that asks for CPU and memory is not defaulted; the bound pods still are:
  // node1 cpu (50 + 200) / 250 = 100, memory (100 + 400) / 1000 = 50 -> 75; node2 20, 10 -> 15.
  CHECK(scores(s, c, make_pod("q").cpu(50).memory(100)) == expected{75, 15});
}
