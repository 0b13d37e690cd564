// Invariants at the library's boundary (issue 15, reproducers 5 and 6): every mutating operation
// of in_memory_cluster, bound_cluster and transaction validates and either applies whole or throws
// invalid_argument_error naming the field, leaving the cluster equal to before.
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <string>

#include "gpusched/core/bound_cluster.hpp"
#include "gpusched/core/in_memory_cluster.hpp"
#include "gpusched/gang/overlay.hpp"
#include "gpusched/schedule/transaction.hpp"
#include "gpusched/sim/replay_cluster.hpp"
#include "support/builders.hpp"

using namespace gpusched;

namespace {
// The field an operation's invalid_argument_error names, or "no error".
template <class F>
std::string field_of(F&& f) {
  try {
    f();
  } catch (const invalid_argument_error& e) {
    return e.field();
  }
  return "no error";
}

in_memory_cluster two_nodes() {
  in_memory_cluster c;
  c.add_node(testing::gpu_node("n0", 96000, 65536, 2));  // 2 x V100M32, 32768 MiB each
  c.add_node(testing::gpu_node("n1", 96000, 65536, 2));
  return c;
}
}  // namespace

TEST_CASE("invariants.pod validation names the field, including NUL in the name") {
  pod p = make_pod("p").cpu(100);
  p.name = std::string("a\0b", 3);
  CHECK(field_of([&] { validate(p); }) == "pod.name");
  p = make_pod("p");
  p.num_gpu = -3;
  CHECK(field_of([&] { validate(p); }) == "pod 'p'.num_gpu");
  p = make_pod("p");
  p.cpu_milli = std::numeric_limits<milli>::max();
  CHECK(field_of([&] { validate(p); }) == "pod 'p'.cpu_milli");
  p = make_pod("p");
  p.qos = static_cast<qos_class>(7);
  CHECK(field_of([&] { validate(p); }) == "pod 'p'.qos");
  // Priorities are int32: both ends of the range are valid.
  p = make_pod("p").priority(max_priority);
  CHECK(field_of([&] { validate(p); }) == "no error");
  p = make_pod("p").priority(min_priority);
  CHECK(field_of([&] { validate(p); }) == "no error");
}

TEST_CASE("invariants.in_memory_cluster: duplicate node names are refused") {
  in_memory_cluster c = two_nodes();
  const in_memory_cluster before = c;
  CHECK(field_of([&] { c.add_node(testing::gpu_node("n1", 1000, 1024, 0)); }) == "node 'n1'.name");
  CHECK(c == before);
  CHECK(c.size() == 2);
  CHECK(c.find("n1") == node_index{1});
  CHECK_FALSE(c.find("n2").has_value());
  node_spec nul = testing::gpu_node("x", 1000, 1024, 0);
  nul.name = std::string("n\0", 2);
  CHECK(field_of([&] { c.add_node(nul); }) == "node.name");
  CHECK(c == before);
}

TEST_CASE("invariants.in_memory_cluster: releasing a never-reserved pod is refused") {
  // Issue 15: the release drove the node's CPU allocation to -2000, after which a 100000m pod
  // passed the CPU check of a 96000m node.
  in_memory_cluster c = two_nodes();
  const in_memory_cluster before = c;
  const pod ghost = make_pod("ghost").cpu(2000).memory(1024);
  CHECK(field_of([&] { c.release(ghost, make_binding(ghost, 0, 0)); }) == "binding.cpu_milli");
  CHECK(c == before);
  CHECK(c.resources(0).cpu_allocated == 0);
  // Memory alone: 0 CPU, 1024 MiB.
  const pod mem_only = make_pod("m").memory(1024);
  CHECK(field_of([&] { c.release(mem_only, make_binding(mem_only, 0, 0)); }) == "binding.memory_mib");
  // A GPU share that was never taken.
  const pod share = make_pod("s").gpu_share(500);
  CHECK(field_of([&] { c.release(share, make_binding(share, 0, 0b1)); }) == "binding.gpus");
  // GPU memory that was never taken, on a device whose share is (a 0-share binding of 1000 MiB).
  const pod whole = make_pod("w").gpus(1).gpu_memory(1000);
  c.reserve(whole, make_binding(whole, 0, 0b1));
  binding mem_back = make_binding(whole, 0, 0b10);
  mem_back.gpu_milli = 0;
  CHECK(field_of([&] { c.release(whole, mem_back); }) == "binding.gpu_mem_mib");
  // A model replica that is not there.
  const pod bert = make_pod("b").cpu(100).model("bert");
  c.reserve(ghost, make_binding(ghost, 1, 0));  // CPU is allocated on n1, but no bert replica
  const in_memory_cluster mid = c;
  CHECK(field_of([&] { c.release(bert, make_binding(bert, 1, 0)); }) == "pod 'b'.model_type");
  CHECK(c == mid);
}

TEST_CASE("invariants.in_memory_cluster: allocations cannot overflow") {
  // Issue 15: reserving INT64_MAX CPU twice overflowed (UBSan).
  in_memory_cluster c = two_nodes();
  const in_memory_cluster before = c;
  const pod p = make_pod("p").cpu(max_quantity);
  binding huge = make_binding(p, 0, 0);
  huge.cpu_milli = std::numeric_limits<milli>::max();
  CHECK(field_of([&] { c.reserve(p, huge); }) == "binding.cpu_milli");
  CHECK(c == before);
  // 2^50 once fits the allocation bound exactly; a second 2^50 would make 2^51 > 2^50.
  c.reserve(p, make_binding(p, 0, 0));
  CHECK(c.resources(0).cpu_allocated == max_quantity);
  const in_memory_cluster once = c;
  CHECK(field_of([&] { c.reserve(p, make_binding(p, 0, 0)); }) == "binding.cpu_milli");
  CHECK(c == once);
  const pod one = make_pod("one").cpu(1);
  CHECK(field_of([&] { c.reserve(one, make_binding(one, 0, 0)); }) == "binding.cpu_milli");
  const pod m = make_pod("m").memory(max_quantity);
  c.reserve(m, make_binding(m, 1, 0));
  CHECK(field_of([&] { c.reserve(m, make_binding(m, 1, 0)); }) == "binding.memory_mib");
  // Measured-load counters are bounded the same way.
  node_metrics bad;
  bad.assigned_cpu_since = max_quantity + 1;
  CHECK(field_of([&] { c.set_load(0, &bad); }) == "node 'n0'.metrics.assigned_cpu_since");
}

TEST_CASE("invariants.in_memory_cluster: GPU memory beyond a device is refused under a ceiling, documented without") {
  // Issue 15: a direct reserve of 40000 MiB on a 32768 MiB GPU left -7232 MiB free. Without a
  // ceiling (the default) that is the documented behaviour: GPU memory is the preflight's business,
  // as CPU and memory are (FGD and FillAware pick devices by share alone). A ceiling refuses it.
  const pod big = make_pod("big").gpu_share(500).gpu_memory(40000);
  SUBCASE("no ceiling: taken, and given back exactly") {
    in_memory_cluster c = two_nodes();
    const in_memory_cluster before = c;
    CHECK(c.gpu_memory_ceiling() == in_memory_cluster::no_gpu_memory_ceiling);
    c.reserve(big, make_binding(big, 0, 0b1));
    CHECK(c.gpus(0)[0].mem_free_mib == 32768 - 40000);                                 // -7232
    CHECK(field_of([&] { c.set_gpu_memory_ceiling(1000); }) == "gpu_memory_ceiling");  // it already holds more
    c.release(big, make_binding(big, 0, 0b1));
    CHECK(c == before);
  }
  SUBCASE("ceiling 1000: refused, naming the field") {
    in_memory_cluster c = two_nodes();
    c.set_gpu_memory_ceiling(1000);
    const in_memory_cluster before = c;
    CHECK(field_of([&] { c.reserve(big, make_binding(big, 0, 0b1)); }) == "binding.gpu_mem_mib");
    CHECK(c == before);
    CHECK(c.gpus(0)[0].mem_free_mib == 32768);
  }
  SUBCASE("ceiling 1300: up to 32768 * 1.3 = 42598 MiB per device") {
    in_memory_cluster c = two_nodes();
    CHECK(field_of([&] { c.set_gpu_memory_ceiling(999); }) == "gpu_memory_ceiling");
    CHECK(field_of([&] { c.set_gpu_memory_ceiling(10001); }) == "gpu_memory_ceiling");
    c.set_gpu_memory_ceiling(1300);
    c.reserve(big, make_binding(big, 0, 0b1));
    CHECK(c.gpus(0)[0].mem_free_mib == -7232);
    const pod more = make_pod("more").gpu_share(100).gpu_memory(2599);  // 40000 + 2599 = 42599 > 42598
    CHECK(field_of([&] { c.reserve(more, make_binding(more, 0, 0b1)); }) == "binding.gpu_mem_mib");
    const pod fits = make_pod("fits").gpu_share(100).gpu_memory(2598);  // exactly 42598
    c.reserve(fits, make_binding(fits, 0, 0b1));
    CHECK(c.gpus(0)[0].mem_free_mib == 32768 - 42598);
    CHECK(c.gpu_memory_ceiling() == 1300);
  }
  SUBCASE("no ceiling: free memory stays representable") {
    in_memory_cluster c;
    c.add_node(testing::gpu_node("n", 1000, 1024, 1, "V100M32", 0));  // a device with 0 MiB
    const pod huge = make_pod("h").gpu_share(1).gpu_memory(std::numeric_limits<std::int32_t>::max());
    c.reserve(huge, make_binding(huge, 0, 0b1));  // free: -(2^31 - 1), the lowest but one int32
    CHECK(field_of([&] { c.reserve(huge, make_binding(huge, 0, 0b1)); }) == "binding.gpu_mem_mib");
    CHECK(c.gpus(0)[0].mem_free_mib == -std::numeric_limits<std::int32_t>::max());
  }
}

TEST_CASE("invariants.bound_cluster: the same pod bound twice, or released unbound, is refused") {
  bound_cluster<> c(two_nodes());
  const pod p = make_pod("p").cpu(1000).gpus(1);
  c.bind(p, make_binding(p, 0, 0b1));
  const bound_cluster<> once = c;
  // Same name, on another node with room: the bookkeeping refuses it (in_memory_cluster alone has
  // no names of pods and would take it).
  CHECK(field_of([&] { c.bind(p, make_binding(p, 1, 0b1)); }) == "pod 'p'.name");
  CHECK(c == once);
  const pod q = make_pod("q").cpu(1000);
  CHECK(field_of([&] { c.release(q, make_binding(q, 0, 0)); }) == "pod 'q'.name");
  CHECK(field_of([&] { c.release(p, make_binding(p, 1, 0b1)); }) == "binding");  // not its binding
  pod bad = make_pod("bad");
  bad.cpu_milli = -1;  // (every int32 priority is valid now)
  CHECK(field_of([&] { c.bind(bad, make_binding(bad, 0, 0)); }) == "pod 'bad'.cpu_milli");
  CHECK(c == once);
  c.release(p, make_binding(p, 0, 0b1));
  CHECK(field_of([&] { c.release(p, make_binding(p, 0, 0b1)); }) == "pod 'p'.name");  // twice
  CHECK(c.bound_count() == 0);
  CHECK(c.base() == two_nodes());
}

TEST_CASE("invariants.transaction owns its pods: a temporary is safe to reserve") {
  // Issue 15: the transaction kept a pointer to the pod, so reserving a temporary compiled and was
  // a use-after-scope at rollback.
  in_memory_cluster c = two_nodes();
  const in_memory_cluster before = c;
  {
    transaction<in_memory_cluster> tx(c);
    tx.reserve(make_pod("temporary-pod-with-a-long-name").cpu(3000).gpu_share(300).model("bert"),
               binding{0, 0b1, 3000, 0, 300, 0});
    CHECK(c.replicas_of(0, short_name("bert")) == 1);
    CHECK(tx.log()[0].p.name == "temporary-pod-with-a-long-name");
    tx.rollback();  // releases through the transaction's own copy (bert's replica count back to 0)
  }
  CHECK(c == before);
}

TEST_CASE("invariants.transaction reports a rollback the cluster refuses, and does not terminate") {
  // Issue 15: a rollback after the host released the binding itself threw inside noexcept.
  bound_cluster<> c(two_nodes());
  const bound_cluster<> before = c;
  const pod a = make_pod("a").cpu(1000).gpus(1);
  const pod b = make_pod("b").cpu(2000);
  SUBCASE("explicit rollback: rollback_error, every other change undone") {
    transaction<bound_cluster<>> tx(c);
    tx.reserve(a, make_binding(a, 0, 0b1));
    tx.reserve(b, make_binding(b, 1, 0));
    c.release(a, make_binding(a, 0, 0b1));  // the host, under the transaction
    std::size_t failed = 0, total = 0;
    std::string what;
    try {
      tx.rollback();
    } catch (const rollback_error& e) {
      failed = e.failed();
      total = e.total();
      what = e.what();
    }
    CHECK(failed == 1);
    CHECK(total == 2);
    CHECK(what.find("pod 'a'") != std::string::npos);
    CHECK(c == before);  // b undone by the transaction, a by the host
  }
  SUBCASE("destructor: undoes what it can, no std::terminate") {
    {
      transaction<bound_cluster<>> tx(c);
      tx.reserve(a, make_binding(a, 0, 0b1));
      tx.reserve(b, make_binding(b, 1, 0));
      c.release(a, make_binding(a, 0, 0b1));
    }
    CHECK(c == before);
  }
  SUBCASE("a victim released by the transaction and re-bound by the host cannot be bound again") {
    c.bind(a, make_binding(a, 0, 0b1));
    const bound_cluster<> with_a = c;
    transaction<bound_cluster<>> tx(c);
    tx.release(a, make_binding(a, 0, 0b1));
    c.bind(a, make_binding(a, 1, 0b1));  // the host moved it
    CHECK_THROWS_AS(tx.rollback(), rollback_error);
    CHECK(c.find("a")->where.node == 1);  // the host's binding stands
    CHECK_FALSE(c == with_a);
  }
}

TEST_CASE("invariants.transaction on in_memory_cluster: a release the host already did is refused at rollback") {
  in_memory_cluster c = two_nodes();
  const in_memory_cluster before = c;
  const pod a = make_pod("a").cpu(1000).gpu_share(500);
  transaction<in_memory_cluster> tx(c);
  tx.reserve(a, make_binding(a, 0, 0b1));
  c.release(a, make_binding(a, 0, 0b1));
  CHECK_THROWS_AS(tx.rollback(), rollback_error);  // a second release would take CPU below zero
  CHECK(c == before);
}

TEST_CASE("invariants.cluster_overlay: a what-if release of what is not held, or an overflow, is refused") {
  const in_memory_cluster c = two_nodes();
  cluster_overlay<in_memory_cluster> o(c);
  const pod ghost = make_pod("ghost").cpu(2000).memory(1024);
  CHECK(field_of([&] { o.release(ghost, make_binding(ghost, 0, 0)); }) == "binding.cpu_milli");
  const pod mem = make_pod("m").gpus(1).gpu_memory(1000);
  o.reserve(mem, make_binding(mem, 0, 0b1));
  binding back = make_binding(mem, 0, 0b10);  // GPU 1 holds no memory
  back.gpu_milli = 0;
  CHECK(field_of([&] { o.release(mem, back); }) == "binding.gpu_mem_mib");
  const pod huge = make_pod("huge").cpu(max_quantity);
  o.reserve(huge, make_binding(huge, 1, 0));
  CHECK(field_of([&] { o.reserve(huge, make_binding(huge, 1, 0)); }) == "binding.cpu_milli");
  CHECK(o.resources(1).cpu_allocated == max_quantity);
  CHECK(o.resources(0).cpu_allocated == 0);
  CHECK(o.gpu(0, 0).mem_free_mib == 32768 - 1000);
  CHECK(c == two_nodes());  // the live cluster is untouched
}

TEST_CASE("invariants.replay_cluster: a refused reservation or release leaves its observers' totals untouched") {
  const node_spec nodes[] = {testing::gpu_node("n0", 96000, 65536, 2)};
  sim::replay_cluster c = sim::make_replay_cluster(nodes);
  const cluster_totals& t = sim::totals(c);
  CHECK(t.gpu_milli_capacity() == 2000);
  CHECK(t.cpu_milli_capacity() == 96000);
  const pod p = make_pod("p").cpu(2000).gpu_share(500);
  CHECK(field_of([&] { c.release(p, make_binding(p, 0, 0b1)); }) == "pod 'p'.name");  // never bound
  CHECK(t.cpu_milli_allocated() == 0);
  CHECK(t.gpu_milli_allocated() == 0);
  c.reserve(p, make_binding(p, 0, 0b1));
  const pod big = make_pod("big").gpu_share(600);
  CHECK(field_of([&] { c.reserve(big, make_binding(big, 0, 0b1)); }) == "binding.gpus");  // 500 + 600 > 1000
  CHECK(t.cpu_milli_allocated() == 2000);
  CHECK(t.gpu_milli_allocated() == 500);
  CHECK(gpu_affinity_of(c, 0).distinct == 1);  // only p's share-gpu tag
  CHECK(c.base().gpus(0)[1].milli_free == 1000);
  c.release(p, make_binding(p, 0, 0b1));
  CHECK(t.cpu_milli_allocated() == 0);
  CHECK(t.gpu_milli_allocated() == 0);
  CHECK(gpu_affinity_of(c, 0).distinct == 0);
}
