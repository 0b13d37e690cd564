// engine_observer (sim/serving/engine_observer.hpp): the serving engine follows binds and releases
// made through the one bookkeeping decorator, bound_cluster. Expected states from the rules in the
// header: a replica's pod bound to (n, first device i) is on engine slot (n, i); its release takes it
// off; a node's CPU demand is the sum of its bound pods' CPU requests.
#include <doctest/doctest.h>

#include <string>

#include "gpusched/core/bound_cluster.hpp"
#include "gpusched/core/in_memory_cluster.hpp"
#include "gpusched/schedule/transaction.hpp"
#include "gpusched/sim/serving/engine.hpp"
#include "gpusched/sim/serving/engine_observer.hpp"
#include "support/builders.hpp"

using namespace gpusched;
using namespace gpusched::sim::serving;

namespace {

using cluster = bound_cluster<in_memory_cluster, engine_observer>;

util_table one_batch_table() {
  return util_table::parse(
      "bench,batch,avg_duration(ms),SM_util(%),l2_util(%),mem_util(%)\n"
      "m,1,10,50,40,60\n",
      "toy.csv", duration_unit::milliseconds);
}

service_spec toy_service() {
  service_spec s;
  s.name = "svc";
  s.model = 0;
  s.max_batch = 1;
  s.max_wait_s = 0.0;
  s.slo_s = 1.0;
  s.gpu_share_milli = 500;
  s.gpu_memory_mib = 400;
  return s;
}

// Two nodes of two GPUs each, in the engine and in the cluster, in the same order.
struct setup {
  util_table t = one_batch_table();
  latency_model lm{t, interference_constants{0.1, 0.7, 0.35, 0.09, 0.9}, {{"m", 1.0, 0.0}}, share_scaling::none};
  serving_engine e{lm, engine_options{5.0, 10.0, true, false}};  // startup 5 s: a placed replica is starting
  replica_id r0 = 0, r1 = 0;
  cluster c;

  explicit setup(int cluster_nodes = 2) {
    for (int n = 0; n < 2; ++n) e.add_node(2, 32768, 8000);
    const service_id s = e.add_service(toy_service(), arrival_process::from_times({}));
    r0 = e.add_replica(s);
    r1 = e.add_replica(s);
    for (int n = 0; n < cluster_nodes; ++n) c.add_node(testing::gpu_node("n" + std::to_string(n), 8000, 65536, 2));
  }
  engine_observer::replica_map names() const { return {{"svc-0", r0}, {"svc-1", r1}}; }
};

pod replica(const char* name) { return make_pod(name).cpu(1500).memory(1024).gpu_share(500).gpu_memory(400); }

}  // namespace

TEST_CASE("serving.engine_observer: the engine follows bind and unbind through bound_cluster") {
  setup s;
  follow_engine(s.c, s.e, s.names());
  const pod p0 = replica("svc-0");
  const pod w = make_pod("worker").cpu(2000).memory(1024).gpus(1);

  const pod_id id0 = s.c.bind(p0, make_binding(p0, 1, gpu_set{1} << 1));  // node 1, GPU 1
  CHECK(s.e.gpu_of(s.r0) == s.e.slot(1, 1));
  CHECK(s.e.state(s.r0) == replica_state::starting);
  CHECK(s.e.gpu_of(s.r1) == no_gpu);
  CHECK(s.e.node_cpu_demand(1) == 1500.0);
  CHECK(s.e.node_cpu_demand(0) == 0.0);

  // Not a replica: CPU demand only.
  s.c.bind(w, make_binding(w, 1, gpu_set{1}));
  CHECK(s.e.node_cpu_demand(1) == 3500.0);
  CHECK(s.c.observer<engine_observer>().cpu_demand(1) == 3500);
  CHECK(s.e.replicas_on(s.e.slot(1, 0)).empty());

  s.c.unbind(id0);
  CHECK(s.e.gpu_of(s.r0) == no_gpu);
  CHECK(s.e.state(s.r0) == replica_state::removed);
  CHECK(s.e.replicas_on(s.e.slot(1, 1)).empty());
  CHECK(s.e.node_cpu_demand(1) == 2000.0);

  // The MutableCluster hooks (what the schedulers and the driver call) are followed the same way.
  reserve(s.c, p0, make_binding(p0, 0, gpu_set{1}));
  CHECK(s.e.gpu_of(s.r0) == s.e.slot(0, 0));
  CHECK(s.e.node_cpu_demand(0) == 1500.0);
  release(s.c, w, make_binding(w, 1, gpu_set{1}));
  CHECK(s.e.node_cpu_demand(1) == 0.0);
}

TEST_CASE("serving.engine_observer: a rolled-back transaction leaves the engine as it was") {
  setup s;
  follow_engine(s.c, s.e, s.names());
  const pod p1 = replica("svc-1");
  {
    transaction<cluster> tx(s.c, 1);
    tx.reserve(p1, make_binding(p1, 0, gpu_set{1} << 1));
    CHECK(s.e.gpu_of(s.r1) == s.e.slot(0, 1));  // the engine follows each change as it is made
    tx.rollback();
  }
  CHECK(s.e.gpu_of(s.r1) == no_gpu);
  CHECK(s.e.node_cpu_demand(0) == 0.0);
  CHECK(s.c.bound_count() == 0);
}

TEST_CASE("serving.engine_observer: following takes the pods already bound") {
  setup s;
  const pod p1 = replica("svc-1");
  s.c.bind(p1, make_binding(p1, 1, gpu_set{1}));
  CHECK(s.e.gpu_of(s.r1) == no_gpu);  // not following yet
  follow_engine(s.c, s.e, s.names());
  CHECK(s.e.gpu_of(s.r1) == s.e.slot(1, 0));
  CHECK(s.e.node_cpu_demand(1) == 1500.0);
  CHECK_THROWS_WITH_AS(follow_engine(s.c, s.e, s.names()), doctest::Contains("already follows"), invalid_argument_error);
}

TEST_CASE("serving.engine_observer: mismatched nodes or replicas are refused, nothing followed") {
  SUBCASE("more cluster nodes than engine nodes") {
    setup s(3);
    CHECK_THROWS_WITH_AS(follow_engine(s.c, s.e, s.names()), doctest::Contains("engine.nodes"), invalid_argument_error);
    CHECK_FALSE(s.c.observer<engine_observer>().following());
  }
  SUBCASE("a replica the engine does not have") {
    setup s;
    CHECK_THROWS_WITH_AS(follow_engine(s.c, s.e, {{"x", 7}}), doctest::Contains("replicas['x']"), invalid_argument_error);
    CHECK_FALSE(s.c.observer<engine_observer>().following());
  }
  SUBCASE("a replica already placed by hand") {
    setup s;
    s.e.place_replica(s.r0, s.e.slot(0, 0));
    CHECK_THROWS_WITH_AS(follow_engine(s.c, s.e, s.names()), doctest::Contains("already placed"), invalid_argument_error);
  }
  SUBCASE("a node added to the cluster but not to the engine") {
    setup s;
    follow_engine(s.c, s.e, s.names());
    CHECK_THROWS_WITH_AS(s.c.add_node(testing::gpu_node("n2", 8000, 65536, 2)), doctest::Contains("engine.nodes"),
                         invalid_argument_error);
  }
}
