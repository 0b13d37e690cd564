// Resources by name (core/named_resources.hpp): validation naming the field, in_memory_cluster's
// bookkeeping of pod counts and named requests, and nothing kept for nodes without them.
#include <doctest/doctest.h>

#include <string>

#include "gpusched/core/in_memory_cluster.hpp"

using namespace gpusched;

namespace {
std::string error_of(auto&& f) {
  try {
    f();
  } catch (const invalid_argument_error& e) {
    return e.what();
  }
  return "";
}
bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }
}  // namespace

TEST_CASE("named resources: names are qualified names, not cpu / memory / pods / nvidia.com/gpu") {
  CHECK(resource_name("example.com/foo").str() == "example.com/foo");
  CHECK(resource_name("hugepages-2Mi") == resource_name(std::string("hugepages-") + "2Mi"));
  CHECK(resource_name("a.example.com/x") != resource_name("b.example.com/x"));
  CHECK(has(error_of([] { (void)resource_name{"bad name", "pod 'p'.scalars[0].name"}; }), "pod 'p'.scalars[0].name"));
  for (const char* reserved : {"cpu", "memory", "pods", "nvidia.com/gpu"}) {
    CAPTURE(reserved);
    CHECK(has(error_of([&] { (void)resource_name{reserved}; }), "has its own field"));
  }
  CHECK(!is_scalar_resource(resource_name("ephemeral-storage")));
  CHECK(is_scalar_resource(resource_name("hugepages-1Gi")));
}

TEST_CASE("named resources: bad values name the field and change nothing") {
  in_memory_cluster c;
  node_spec s{"n", 1000, 1000, {}, ""};
  s.pods = -2;
  CHECK(has(error_of([&] { c.add_node(s); }), "node 'n'.pods"));
  s.pods = 4;
  s.add_scalar("example.com/foo", -1);
  CHECK(has(error_of([&] { c.add_node(s); }), "node 'n'.scalars[0].amount"));
  s.scalars = {{resource_name("example.com/foo"), 1}, {resource_name("example.com/foo"), 2}};
  CHECK(has(error_of([&] { c.add_node(s); }), "node 'n'.scalars[1].name"));
  CHECK(c.size() == 0);
  CHECK(has(error_of([] { (void)make_pod("p").scalar("example.com/foo", std::int64_t{1} << 51).build(); }),
            "pod 'p'.scalars[0].amount"));
  CHECK(has(error_of([] { (void)make_pod("p").scalar("memory", 1).build(); }), "pod.scalars.name"));
}

TEST_CASE("named resources: reserve and release keep pod counts and requests; unknown names get a zero slot") {
  in_memory_cluster c;
  node_spec s{"n", 1000, 1000, {}, ""};
  s.pods = 3;
  s.add_scalar("example.com/foo", 4);
  c.add_node(s);
  c.add_node(node_spec{"plain", 1000, 1000, {}, ""});
  CHECK(c.named(1) == nullptr);  // nothing kept for a node without a limit or named resources
  const pod a = make_pod("a").scalar("example.com/foo", 3);
  const pod b = make_pod("b").scalar("example.com/bar", 2);
  const in_memory_cluster before = c;
  c.reserve(a, make_binding(a, 0, 0));
  c.reserve(b, make_binding(b, 0, 0));
  const named_resources_state* x = c.named(0);
  REQUIRE(x != nullptr);
  CHECK(x->pod_count == 2);
  CHECK(x->zero_cpu_pods == 2);  // neither asks for CPU or memory
  CHECK(x->zero_memory_pods == 2);
  CHECK(x->find(resource_name("example.com/foo"))->requested == 3);
  CHECK(x->find(resource_name("example.com/foo"))->allocatable == 4);
  CHECK(x->find(resource_name("example.com/bar"))->allocatable == 0);
  CHECK(x->find(resource_name("example.com/bar"))->requested == 2);
  c.release(b, make_binding(b, 0, 0));
  c.release(a, make_binding(a, 0, 0));
  CHECK(c.named(0)->pod_count == 0);
  CHECK(c.named(0)->find(resource_name("example.com/foo"))->requested == 0);
  // Releasing what was not reserved is refused and changes nothing.
  const in_memory_cluster now = c;
  CHECK(has(error_of([&] { c.release(a, make_binding(a, 0, 0)); }), "has no pod to release"));
  CHECK(c == now);
  CHECK(before != now);  // the zero slot for example.com/bar stays (as Kubernetes' Requested map)
  // A pod with a named resource on a node without any gets a record there (no pod limit).
  c.reserve(b, make_binding(b, 1, 0));
  REQUIRE(c.named(1) != nullptr);
  CHECK(c.named(1)->allowed_pods == no_pod_limit);
  CHECK(c.named(1)->find(resource_name("example.com/bar"))->requested == 2);
  const in_memory_cluster later = c;
  CHECK(has(error_of([&] { c.release(a, make_binding(a, 1, 0)); }), "pod 'a'.scalars"));
  CHECK(c == later);
}

TEST_CASE("named resources: memory per node as documented (docs/concepts.md)") {
  // A node with a pod limit or named resources adds its record: 56 bytes + 24 per named resource.
  CHECK(sizeof(named_resources_state) == 56);
  CHECK(sizeof(named_resources_state::scalar) == 24);
  CHECK(in_memory_cluster::named_bytes_per_node(2) == 56 + 2 * 24);
#if defined(__x86_64__) && defined(__GLIBCXX__)
  // The fixed part, as in_memory_cluster.hpp and docs/concepts.md state it for x86-64 / libstdc++:
  // 144-byte record, 32 bytes per GPU, two 32-byte strings, a 24-byte model list, a 56-byte
  // node_constraints and the 4-byte index of the named record.
  CHECK(in_memory_cluster::bytes_per_node(8) == 144 + 8 * 32 + 2 * 32 + 24 + 56 + 4);
#endif
}
