// Node and pod tables: built from any Cluster, kept current by apply / refresh, bad input refused.
#include <doctest/doctest.h>

#include <random>
#include <vector>

#include "gpusched/batch/node_table.hpp"
#include "gpusched/batch/pod_table.hpp"
#include "gpusched/core/in_memory_cluster.hpp"
#include "gpusched/scoring/formulas.hpp"
#include "random_workload.hpp"
#include "support/builders.hpp"
#include "support/minimal_cluster.hpp"

using namespace gpusched;

namespace {

// Every value the batch engines read, node by node.
void check_same(const batch::node_table& a, const batch::node_table& b) {
  REQUIRE(a.size() == b.size());
  REQUIRE(a.gpu_slots() == b.gpu_slots());
  for (node_index n = 0; n < a.size(); ++n) {
    CHECK(node_resources(a, n) == node_resources(b, n));
    for (int g = 0; g < a.gpu_slots(); ++g) {
      CHECK(a.milli_free()(n, g) == b.milli_free()(n, g));
      CHECK(a.mem_free()(n, g) == b.mem_free()(n, g));
      CHECK(node_gpu(a, n, g).model == node_gpu(b, n, g).model);
    }
    CHECK((a.load(n) == nullptr) == (b.load(n) == nullptr));
    if (a.load(n) != nullptr) CHECK(*a.load(n) == *b.load(n));
    for (const auto& m : node_model_types(a, n)) CHECK(model_replicas(b, n, m.model) == 1);
    for (const auto& m : node_model_types(b, n)) CHECK(model_replicas(a, n, m.model) == 1);
  }
}

}  // namespace

TEST_CASE("batch.node_table reads a cluster through its traits") {
  in_memory_cluster c;
  c.add_node(testing::gpu_node("a", 8000, 4096, 2, "T4", 16384));
  c.add_node(testing::gpu_node("b", 4000, 2048, 0));
  const node_metrics m{0.5, 0.25, 0.75};
  c.set_load(0, &m);
  const pod p = make_pod("p").cpu(1000).memory(512).gpu_share(300).gpu_memory(1000).model("bert");
  c.reserve(p, make_binding(p, 0, 0b10));
  const batch::node_table t(c);
  CHECK(t.size() == 2);
  CHECK(t.gpu_slots() == 2);
  CHECK(t.cpu_allocated()[0] == 1000);
  CHECK(t.milli_free()(0, 1) == 700);
  CHECK(t.mem_free()(0, 1) == 16384 - 1000);
  CHECK(t.milli_free()(1, 0) == -1);  // padding: no request fits
  CHECK(t.gpu_milli_allocated(0) == 300);
  CHECK(t.load(0)->gpu_used == 0.75);
  CHECK(t.load(1) == nullptr);
  CHECK(model_replicas(t, 0, short_name("bert")) == 1);
  CHECK(model_replicas(t, 1, short_name("bert")) == 0);
  CHECK(node_gpu(t, 0, 0).model == short_name("T4"));
  // 97 bytes per node and 16 per GPU slot (docs/batch.md).
  CHECK(t.bytes() == 2 * 97 + 2 * 2 * 16);

  archetype::minimal_cluster mc;  // no load, no served models, no names
  mc.nodes = {node_state{1000, 0, 1000, 0, 1}};
  mc.gpus = {{gpu_device{short_name("A10"), 1000, 100, 100, 0, 0}}};
  const batch::node_table tm(mc);
  CHECK(tm.load(0) == nullptr);
  CHECK(node_gpu(tm, 0, 0).model == short_name("A10"));
}

TEST_CASE("batch.node_table.apply records a reservation as in_memory_cluster does; refresh re-reads") {
  std::mt19937_64 rng(5);
  in_memory_cluster c = testing::random_cluster(rng, 40);
  batch::node_table applied(c), refreshed(c);
  const std::vector<pod> pods = testing::random_pods(rng, 200);
  const batch::pod_table pt(pods, applied);  // interns the model types
  const batch::pod_table pt2(pods, refreshed);
  int placed = 0;
  for (const pod& p : pods) {
    for (node_index n = 0; n < c.size(); ++n) {
      // The first node whose lowest-index devices have room (no preflight: bookkeeping only).
      gpu_set g = 0;
      int found = 0;
      for (int d = 0; d < static_cast<int>(c.gpus(n).size()) && found < p.num_gpu; ++d) {
        if (c.gpus(n)[static_cast<std::size_t>(d)].milli_free >= p.gpu_milli) {
          g |= gpu_set{1} << d;
          ++found;
        }
      }
      if (found < p.num_gpu) continue;
      const binding b = make_binding(p, n, g);
      const std::uint32_t before = applied.revision();
      c.reserve(p, b);
      applied.apply(p, b);
      refreshed.refresh(c, n);
      CHECK(applied.revision() == before + 1);
      CHECK(applied.stamps()[n] == applied.revision());
      ++placed;
      break;
    }
  }
  CHECK(placed > 100);
  check_same(applied, refreshed);
  check_same(applied, batch::node_table(c));
}

TEST_CASE("batch.node_table refuses what it cannot hold, naming the field, and changes nothing") {
  in_memory_cluster c;
  c.add_node(testing::gpu_node("big", formula::reciprocal_domain_limit + 1, 1024, 0));
  CHECK_THROWS_WITH_AS(batch::node_table{c}, "node 'big'.cpu_capacity: must be within 0..2^40 for the batch engines, got 1099511627777",
                       invalid_argument_error);

  in_memory_cluster many;  // 65 GPU models
  for (int i = 0; i < 65; ++i) many.add_node(testing::gpu_node("n" + std::to_string(i), 1000, 1000, 1, ("M" + std::to_string(i)).c_str()));
  CHECK_THROWS_AS(batch::node_table{many}, invalid_argument_error);

  in_memory_cluster one;
  one.add_node(testing::gpu_node("a", 4000, 1000, 1));
  batch::node_table t(one);
  const batch::node_table before = t;
  const pod p = make_pod("p").gpus(1);
  CHECK_THROWS_AS(t.apply(p, make_binding(p, 3, 1)), invalid_argument_error);     // no node 3
  CHECK_THROWS_AS(t.apply(p, make_binding(p, 0, 0b10)), invalid_argument_error);  // no GPU 1
  t.apply(p, make_binding(p, 0, 1));
  CHECK_THROWS_AS(t.apply(p, make_binding(p, 0, 1)), invalid_argument_error);  // GPU 0 is taken
  CHECK(t.milli_free()(0, 0) == 0);
  CHECK(t.revision() == before.revision() + 1);
}

TEST_CASE("batch.pod_table resolves models against the node table and validates") {
  in_memory_cluster c;
  c.add_node(testing::gpu_node("a", 4000, 1000, 1, "T4"));
  c.add_node(testing::gpu_node("b", 4000, 1000, 1, "A10"));
  batch::node_table t(c);
  const std::vector<pod> pods{make_pod("any").gpus(1).model("bert"), make_pod("t4").gpus(1).allow_model("T4"),
                              make_pod("h100").gpus(1).allow_model("H100"), make_pod("cpu").cpu(10)};
  const batch::pod_table pt(pods, t);
  CHECK(pt.allowed_gpu_models()[0] == ~std::uint64_t{0});
  CHECK(pt.allowed_gpu_models()[1] == t.gpu_models().bit_of(short_name("T4")));
  CHECK(pt.allowed_gpu_models()[2] == 0);  // no such model in the cluster: fits nowhere
  CHECK(pt.model_type_bit()[0] == t.model_types().bit_of(short_name("bert")));
  CHECK(pt.model_type_bit()[0] != 0);  // interned although no node serves it yet
  CHECK(pt.model_type_bit()[3] == 0);
  CHECK(pt.tie_keys()[0] == pod_tie_key("any"));

  pod bad = make_pod("bad").cpu(1);
  bad.cpu_milli = -1;  // (priorities are int32 now: any value is valid)
  const std::vector<pod> with_bad{make_pod("ok").model("llama"), bad};
  const std::size_t types = t.model_types().size();
  CHECK_THROWS_WITH_AS(batch::pod_table(with_bad, t), "pod 'bad'.cpu_milli: must be within 0..2^50", invalid_argument_error);
  CHECK(t.model_types().size() == types);  // nothing interned
  pod huge = make_pod("huge").cpu(1);
  huge.memory_mib = formula::reciprocal_domain_limit + 1;
  const std::vector<pod> with_huge{huge};
  CHECK_THROWS_WITH_AS(batch::pod_table(with_huge, t), "pod 'huge'.memory_mib: must be within 0..2^40 for the batch engines",
                       invalid_argument_error);
}
