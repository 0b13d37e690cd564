// bound_cluster's observers (issue 12, "one bookkeeping decorator"): each is told of every node
// added, every reservation and every release that the wrapped cluster accepted, in order, and of
// nothing that was refused; running totals and the FGD paper's affinity tags are such observers.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "gpusched/core/bound_cluster.hpp"
#include "gpusched/core/cluster_totals.hpp"
#include "gpusched/core/in_memory_cluster.hpp"
#include "gpusched/scoring/fgd_paper/affinity_tags.hpp"
#include "support/builders.hpp"

using namespace gpusched;

namespace {
// Writes what it is told into a shared log: "+p@0", "-p@0", "add 1", "changed 1", "attach 2".
struct logger {
  std::vector<std::string>* log = nullptr;
  template <class C>
  void attach(const C& c) {
    if (log) log->push_back("attach " + std::to_string(num_nodes(c)));
  }
  template <class C>
  void node_added(const C&, node_index n) {
    log->push_back("add " + std::to_string(n));
  }
  template <class C>
  void node_changed(const C&, node_index n) {
    log->push_back("changed " + std::to_string(n));
  }
  // The test's log allocates; a real observer must not (see the comment in bound_cluster.hpp).
  template <class C>
  void reserved(const C& c, const pod& p, const binding& b) noexcept {
    // The wrapped cluster has already reserved: its node shows the allocation.
    log->push_back("+" + p.name + "@" + std::to_string(b.node) + " cpu " +
                   std::to_string(traits_of<C>::node_resources(c, b.node).cpu_allocated));
  }
  template <class C>
  void released(const C& c, const pod& p, const binding& b) noexcept {
    log->push_back("-" + p.name + "@" + std::to_string(b.node) + " cpu " +
                   std::to_string(traits_of<C>::node_resources(c, b.node).cpu_allocated));
  }
};

template <class F>
std::string field_of(F&& f) {
  try {
    f();
  } catch (const invalid_argument_error& e) {
    return e.field();
  }
  return "no error";
}
}  // namespace

static_assert(sizeof(bound_cluster<>) == sizeof(bound_cluster<in_memory_cluster>));
static_assert(MutableCluster<bound_cluster<in_memory_cluster, cluster_totals, logger>>);

TEST_CASE("bound_cluster observers: told of accepted changes only, in order, after the wrapped cluster") {
  std::vector<std::string> log;
  in_memory_cluster base;
  base.add_node(testing::gpu_node("n0", 8000, 65536, 2));
  bound_cluster<in_memory_cluster, logger> c(base);  // attach ran on a logger without a log yet
  c.observer<logger>().log = &log;
  c.add_node(testing::gpu_node("n1", 4000, 65536, 1));
  const pod a = make_pod("a").cpu(1000).gpu_share(500);
  const pod b = make_pod("b").cpu(3000).gpus(1);
  c.bind(a, make_binding(a, 0, 0b01));
  c.bind(b, make_binding(b, 1, 0b1));
  // Refused: already bound; a device without the share; a bad node spec; a release not recorded.
  CHECK(field_of([&] { c.bind(a, make_binding(a, 1, 0b1)); }) == "pod 'a'.name");
  const pod big = make_pod("big").cpu(1).gpu_share(600);
  CHECK(field_of([&] { c.bind(big, make_binding(big, 0, 0b01)); }) == "binding.gpus");
  CHECK(field_of([&] { c.add_node(testing::gpu_node("n0", 1000, 1024, 1)); }) == "node 'n0'.name");
  CHECK(field_of([&] { c.release(big, make_binding(big, 0, 0b01)); }) == "pod 'big'.name");
  c.changed(1);
  c.release(a, make_binding(a, 0, 0b01));
  const std::vector<std::string> want = {"add 1", "+a@0 cpu 1000", "+b@1 cpu 3000", "changed 1", "-a@0 cpu 0"};
  CHECK(log == want);
}

TEST_CASE("cluster_totals: capacities from the nodes, allocations from reservations and releases") {
  in_memory_cluster base;
  base.add_node(testing::gpu_node("n0", 8000, 65536, 2));
  const pod early = make_pod("early").cpu(500).gpu_share(250);
  base.reserve(early, make_binding(early, 0, 0b10));  // before the bound_cluster: attach reads it
  bound_cluster<in_memory_cluster, cluster_totals> c(base);
  const cluster_totals& t = c.observer<cluster_totals>();
  CHECK(t.gpu_milli_capacity() == 2000);
  CHECK(t.cpu_milli_capacity() == 8000);
  CHECK(t.gpu_milli_allocated() == 250);
  CHECK(t.cpu_milli_allocated() == 500);
  c.add_node(testing::gpu_node("n1", 4000, 65536, 4));
  CHECK(t.gpu_milli_capacity() == 6000);  // 2 + 4 GPUs of 1000 milli
  CHECK(t.cpu_milli_capacity() == 12000);
  const pod two = make_pod("two").cpu(1000).gpus(2);  // 2 whole GPUs
  c.bind(two, make_binding(two, 1, 0b0101));
  CHECK(t.gpu_milli_allocated() == 2250);
  CHECK(t.cpu_milli_allocated() == 1500);
  c.release(two, make_binding(two, 1, 0b0101));
  CHECK(t.gpu_milli_allocated() == 250);
  CHECK(t.cpu_milli_allocated() == 500);
}

TEST_CASE("gpu_affinity_tags: one count per tag and node, from the pods bound through the cluster") {
  bound_cluster<in_memory_cluster, cluster_totals, fgd_paper::gpu_affinity_tags> c;
  c.add_node(testing::gpu_node("n0", 8000, 65536, 4));
  c.add_node(testing::gpu_node("n1", 8000, 65536, 4));
  const pod s1 = make_pod("s1").cpu(1).gpu_share(300), s2 = make_pod("s2").cpu(1).gpu_share(200);
  const pod w2 = make_pod("w2").cpu(1).gpus(2), cpu = make_pod("cpu").cpu(1);
  c.bind(s1, make_binding(s1, 0, 0b0001));
  c.bind(s2, make_binding(s2, 0, 0b0001));
  c.bind(w2, make_binding(w2, 0, 0b0110));
  c.bind(cpu, make_binding(cpu, 1, 0));
  const auto& a0 = fgd_paper::gpu_affinity_of(c, 0);
  CHECK(a0.pods[1] == 2);  // share-gpu: s1, s2
  CHECK(a0.pods[3] == 1);  // 2-gpu: 1 + 2
  CHECK(a0.distinct == 2);
  CHECK(fgd_paper::gpu_affinity_of(c, 1).distinct == 0);  // CPU-only pods carry no tag
  c.release(s1, make_binding(s1, 0, 0b0001));
  CHECK(a0.pods[1] == 1);
  c.release(s2, make_binding(s2, 0, 0b0001));
  CHECK(a0.pods[1] == 0);
  CHECK(a0.distinct == 1);
}
