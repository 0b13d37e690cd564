#include <doctest/doctest.h>

#include "gpusched/core/in_memory_cluster.hpp"
#include "gpusched/schedule/transaction.hpp"
#include "support/builders.hpp"
#include "support/minimal_cluster.hpp"

using namespace gpusched;

TEST_CASE("core.short_name") {
  const short_name a("V100M32");
  CHECK(a.view() == "V100M32");
  CHECK(a == short_name("V100M32"));
  CHECK_FALSE(a == short_name("V100M16"));
  CHECK(short_name().empty());
  CHECK(short_name("123456789012345").view().size() == 15);
  CHECK(short_name("1234567890123456").view() == "1234567890123456");  // 16 bytes: interned (tests/core/test_short_name.cpp)
  CHECK_THROWS_WITH_AS(short_name(std::string(1025, 'x'), "pod.model_type"),
                       ("pod.model_type: '" + std::string(60, 'x') + "...' is 1025 characters long, more than 1024").c_str(),
                       invalid_argument_error);
}

TEST_CASE("core.pod.validation names the field") {
  auto field_of = [](const pod_builder& b) {
    try {
      (void)b.build();
    } catch (const invalid_argument_error& e) {
      return e.field();
    }
    return std::string("no error");
  };
  CHECK(field_of(make_pod("")) == "pod.name");
  CHECK(field_of(make_pod("p").cpu(-1)) == "pod 'p'.cpu_milli");
  CHECK(field_of(make_pod("p").memory(-5)) == "pod 'p'.memory_mib");
  CHECK(field_of(make_pod("p").memory(std::int64_t{1} << 62)) == "pod 'p'.memory_mib");  // would overflow sums
  // Priorities are Kubernetes' int32: every value is valid (system-cluster-critical is 2e9).
  CHECK(field_of(make_pod("p").priority(2'000'000'000)) == "no error");
  CHECK(field_of(make_pod("p").priority(-1)) == "no error");
  CHECK(field_of(make_pod("p").gpu_share(0)) == "pod 'p'.gpu_milli");
  CHECK(field_of(make_pod("p").gpu_share(1500)) == "pod 'p'.gpu_milli");
  CHECK(field_of(make_pod("p").gpus(65)) == "pod 'p'.num_gpu");
  CHECK(field_of(make_pod("p").gpu_memory(100)) == "pod 'p'.gpu_milli");  // GPU memory without a GPU
  CHECK(field_of(make_pod("p").submitted(std::nan(""))) == "pod 'p'.submit_time");
  CHECK(field_of(make_pod("p").gang("g", 0)) == "pod 'p'.gang_min_members");
  CHECK(field_of(make_pod("p").cpu(100).gpus(2).priority(10).prod()) == "no error");
}

TEST_CASE("core.node.validation names the field and adds nothing") {
  in_memory_cluster c;
  node_spec bad = testing::gpu_node("n0", 1000, 1000, 2);
  bad.gpus[1].mem_free_mib = bad.gpus[1].mem_total_mib + 1;
  CHECK_THROWS_WITH_AS(c.add_node(bad), "node 'n0'.gpus[1].mem_free_mib: must be within 0..mem_total_mib",
                       invalid_argument_error);
  CHECK(c.size() == 0);
  CHECK_THROWS_AS(c.add_node(testing::gpu_node("", 1, 1, 0)), invalid_argument_error);
  CHECK_THROWS_AS(c.add_node(testing::gpu_node("n", -1, 1, 0)), invalid_argument_error);
  CHECK(c.size() == 0);
  c.add_node(testing::gpu_node("n1", 8000, 1000, 1));
  node_metrics nan_load{std::nan(""), 0.1, 0.1};
  CHECK_THROWS_WITH_AS(c.set_load(0, &nan_load), "node 'n1'.metrics.cpu_used: must be a finite fraction within 0..1",
                       invalid_argument_error);
  CHECK(c.load(0) == nullptr);
}

TEST_CASE("core.in_memory_cluster.reserve and release are exact inverses") {
  in_memory_cluster c;
  c.add_node(testing::gpu_node("a", 32000, 65536, 4));
  c.add_node(testing::gpu_node("b", 32000, 65536, 4));
  const in_memory_cluster before = c;
  const pod p = make_pod("infer").cpu(4000).memory(8192).gpu_share(300).gpu_memory(4096).model("resnet50");
  const binding b = make_binding(p, 1, 0b0100);
  c.reserve(p, b);
  CHECK(c.resources(1).cpu_allocated == 4000);
  CHECK(c.resources(1).mem_allocated == 8192);
  CHECK(c.gpus(1)[2].milli_free == 700);
  CHECK(c.gpus(1)[2].mem_free_mib == 32768 - 4096);
  CHECK(c.replicas_of(1, short_name("resnet50")) == 1);
  CHECK_FALSE(c == before);
  c.release(p, b);
  CHECK(c == before);
}

TEST_CASE("core.in_memory_cluster.bad binding throws and changes nothing") {
  in_memory_cluster c;
  c.add_node(testing::gpu_node("a", 32000, 65536, 2));
  const pod whole = make_pod("w").gpus(1);
  c.reserve(whole, make_binding(whole, 0, 0b01));
  const in_memory_cluster before = c;
  CHECK_THROWS_AS(c.reserve(whole, make_binding(whole, 0, 0b01)), invalid_argument_error);  // GPU 0 is taken
  CHECK_THROWS_AS(c.reserve(whole, make_binding(whole, 0, 0b100)), invalid_argument_error);  // no GPU 2
  CHECK_THROWS_AS(c.reserve(whole, make_binding(whole, 7, 0b1)), invalid_argument_error);    // no node 7
  CHECK_THROWS_AS(c.release(whole, make_binding(whole, 0, 0b10)), invalid_argument_error);   // GPU 1 is free
  CHECK(c == before);
}

TEST_CASE("core.transaction.rollback restores the cluster exactly") {
  in_memory_cluster c;
  for (int i = 0; i < 3; ++i) c.add_node(testing::gpu_node("n" + std::to_string(i), 16000, 65536, 2));
  const in_memory_cluster before = c;
  const pod a = make_pod("a").cpu(1000).gpus(2).model("bert");
  const pod b = make_pod("b").cpu(1000).gpu_share(500).model("bert");
  {
    transaction<in_memory_cluster> tx(c);
    tx.reserve(a, make_binding(a, 0, 0b11));
    tx.reserve(b, make_binding(b, 1, 0b01));
    CHECK_THROWS_AS(tx.reserve(a, make_binding(a, 0, 0b11)), invalid_argument_error);  // refused: no change
    CHECK(tx.size() == 2);
  }  // destroyed without commit
  CHECK(c == before);
  {
    transaction<in_memory_cluster> tx(c);
    tx.reserve(a, make_binding(a, 2, 0b11));
    tx.commit();
  }
  CHECK(c.gpus(2)[0].milli_free == 0);
  CHECK(c.gpus(2)[1].milli_free == 0);
}

TEST_CASE("core.archetype.minimal_cluster works through the traits") {
  archetype::minimal_cluster m;
  m.nodes.push_back(node_state{8000, 0, 1024, 0, 1});
  m.gpus.push_back({gpu_device{short_name("T4"), 1000, 16384, 16384, 0, 0}});
  CHECK(num_nodes(m) == 1);
  CHECK(node_label(m, 0) == "node#0");
  transaction<archetype::minimal_cluster> tx(m);
  const pod p = make_pod("p").cpu(100).gpu_share(250);
  tx.reserve(p, make_binding(p, 0, 1));
  CHECK(m.gpus[0][0].milli_free == 750);
  tx.rollback();
  CHECK(m.gpus[0][0].milli_free == 1000);
}
