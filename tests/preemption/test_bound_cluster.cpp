#include <doctest/doctest.h>

#include "fixtures.hpp"
#include "gpusched/schedule/transaction.hpp"

using namespace gpusched;

TEST_CASE("bound_cluster.records what is bound where") {
  fx::cluster c;
  fx::add_node(c, "a", 4);
  fx::add_node(c, "b", 4);
  const pod p = make_pod("p").cpu(2000).memory(4096).gpus(2).priority(3).qos(qos_class::guaranteed).gang("g", 2);
  const pod q = make_pod("q").cpu(1000).memory(1024).gpu_share(500).gpu_memory(1000).priority(1).gang("g", 2);
  const pod_id ip = fx::run(c, p, 0, 0b0011, 5.0);
  const pod_id iq = fx::run(c, q, 1, 0b0100, 7.0);
  REQUIRE(c.bound_count() == 2);
  REQUIRE(c.pods_on(0).size() == 1);
  const bound_pod& rp = c.pods_on(0)[0];
  CHECK(rp.id == ip);
  CHECK(rp.start_time == 5.0);
  CHECK(rp.priority == 3);
  CHECK(rp.qos == qos_class::guaranteed);
  CHECK(rp.key == pod_key("p"));
  CHECK(rp.gang != no_gang);
  CHECK(c.gang(rp.gang).size() == 2);
  CHECK(c.find(iq)->where.node == 1);
  CHECK(c.find("q")->id == iq);
  CHECK(c.spec(iq).name == "q");
  // Resources went to the wrapped cluster; per-QoS accounting follows the bindings.
  CHECK(c.base().resources(0).cpu_allocated == 2000);
  CHECK(c.base().gpus(1)[2].milli_free == 500);
  CHECK(c.qos_on(0).cpu[0] == 2000);  // Guaranteed
  CHECK(c.qos_on(1).memory[1] == 1024);  // Burstable
  c.unbind(ip);
  CHECK(c.bound_count() == 1);
  CHECK(c.pods_on(0).empty());
  CHECK(c.gang(c.find(iq)->gang).size() == 1);
  CHECK(c.base().resources(0).cpu_allocated == 0);
  CHECK(c.qos_on(0) == qos_allocation{});
}

TEST_CASE("bound_cluster.bad binds and releases throw and change nothing") {
  fx::cluster c;
  fx::add_node(c, "a", 2);
  const pod p = fx::gpu_pod("p", 1, 1);
  fx::run(c, p, 0, 0b01, 0.0);
  const fx::cluster before = c;
  CHECK_THROWS_WITH_AS(fx::run(c, p, 0, 0b10, 1.0), "pod 'p'.name: is already bound", invalid_argument_error);
  const pod q = make_pod("q").gpus(1).gang("gq", 1);
  CHECK_THROWS_AS(fx::run(c, q, 0, 0b01, 1.0), invalid_argument_error);  // GPU 0 is taken: the cluster refuses
  CHECK(c.gang_of("gq") == no_gang);                                     // and the new gang was not kept
  CHECK_THROWS_AS(fx::run(c, q, 3, 0b01, 1.0), invalid_argument_error);  // no node 3
  CHECK_THROWS_AS(c.bind(q, make_binding(q, 0, 0b10), -1.0), invalid_argument_error);
  CHECK_THROWS_WITH_AS(c.release(p, make_binding(p, 0, 0b10)),
                       "binding: does not match the recorded binding of pod 'p'", invalid_argument_error);
  CHECK_THROWS_AS(c.release(q, make_binding(q, 0, 0b10)), invalid_argument_error);  // never bound
  CHECK_THROWS_AS(c.unbind(42), invalid_argument_error);
  CHECK(c == before);
}

TEST_CASE("bound_cluster.transaction undoes releases and reservations exactly") {
  fx::cluster c;
  fx::add_node(c, "a", 4);
  const pod v1 = fx::gpu_pod("v1", 1, 2);
  const pod v2 = fx::gpu_pod("v2", 1, 2);
  fx::run(c, v1, 0, 0b0011, 1.0);
  fx::run(c, v2, 0, 0b1100, 2.0);
  c.set_time(1.0);  // the re-bind of a rolled-back release takes the clock: same as v1's start
  const fx::cluster before = c;
  const pod p = fx::gpu_pod("p", 5, 2);
  const pod v1_copy = c.spec(c.find("v1")->id);
  {
    transaction<fx::cluster> tx(c);
    tx.release(v1_copy, make_binding(v1_copy, 0, 0b0011));
    tx.reserve(p, make_binding(p, 0, 0b0011));
    CHECK(c.find("v1") == nullptr);
    CHECK(c.find("p") != nullptr);
    CHECK(tx.released_count() == 1);
  }  // rolled back: p leaves, v1 comes back
  CHECK(c.find("p") == nullptr);
  REQUIRE(c.find("v1") != nullptr);
  CHECK(c.find("v1")->where == make_binding(v1, 0, 0b0011));
  CHECK(c.base() == before.base());
}

TEST_CASE("transaction.release then reserve rolls back exactly on in_memory_cluster") {
  in_memory_cluster c;
  c.add_node(testing::gpu_node("a", 16000, 65536, 2));
  const pod v = make_pod("v").cpu(1000).gpus(1);  // no served model: the model list is untouched
  const pod p = make_pod("p").cpu(2000).gpus(2);
  c.reserve(v, make_binding(v, 0, 0b01));
  const in_memory_cluster before = c;
  {
    transaction<in_memory_cluster> tx(c);
    tx.release(v, make_binding(v, 0, 0b01));
    tx.reserve(p, make_binding(p, 0, 0b11));
    CHECK(c.resources(0).cpu_allocated == 2000);
    tx.rollback();
  }
  CHECK(c == before);
  {
    transaction<in_memory_cluster> tx(c);
    tx.release(v, make_binding(v, 0, 0b01));
    CHECK_THROWS_AS(tx.release(v, make_binding(v, 0, 0b01)), invalid_argument_error);  // already free: refused
    tx.commit();
  }
  CHECK(c.resources(0).cpu_allocated == 0);
}
