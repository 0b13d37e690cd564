// sim/bound/frag_kinds.hpp: the replay is run_paper's, and the idle GPU is split by kind as documented
// (docs/quality.md, "Diagnosis").
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "gpusched/sim/bound/frag_kinds.hpp"
#include "gpusched/sim/policies.hpp"
#include "support/builders.hpp"

using namespace gpusched;

TEST_CASE("run_paper_kinds allocates exactly what run_paper allocates (openb default trace)") {
  const std::string dir = std::string(GPUSCHED_SOURCE_DIR) + "/data/openb/";
  const sim::trace t = sim::trace::load(dir + "openb_node_list_gpu_node.csv", dir + "openb_pod_list_default.csv");
  for (const auto k : {sim::policy_kind::fgd, sim::policy_kind::gpusched}) {
    sim::paper_options o;
    o.seed = 43;
    o.ties = sim::policy_ties(k);
    const auto a = sim::with_policy(k, t.typical, o.seed, [&](auto p) { return sim::run_paper(t, std::move(p), o); });
    const auto b =
        sim::with_policy(k, t.typical, o.seed, [&](auto p) { return sim::run_paper_kinds(t, std::move(p), o); });
    CHECK(b.allocated_gpu_milli == a.final.allocated_gpu_milli);
    CHECK(b.pods_arrived == a.pods_arrived);
    std::size_t failed = 0;
    for (auto f : b.failed_pods) failed += f;
    CHECK(failed == a.pods_failed);
    CHECK(b.fgd.fragment() == doctest::Approx(a.final.frag_gpu_milli));
    // Every idle milli is counted under exactly one kind.
    CHECK(b.idle_cpu_stranded + b.idle_mem_stranded + b.idle_whole_gpus + b.idle_partial_gpus ==
          b.gpu_capacity - b.allocated_gpu_milli);
  }
}

TEST_CASE("classify_idle: CPU used up, memory used up, whole and partial GPUs, by hand") {
  // The trace's GPU pods ask at least 1000 milli-CPU and 2048 MiB.
  std::vector<node_spec> nodes = {testing::gpu_node("cpu-out", 8000, 65536, 2),
                                  testing::gpu_node("mem-out", 64000, 8192, 2),
                                  testing::gpu_node("roomy", 64000, 65536, 4)};
  std::vector<sim::openb_pod> pods(2);
  pods[0].spec = make_pod("a").cpu(1000).memory(2048).gpu_share(500);
  pods[1].spec = make_pod("b").cpu(4000).memory(4096).gpus(1);
  const sim::trace t = sim::trace::from(nodes, pods);
  sim::replay_cluster c = sim::make_replay_cluster(nodes);
  // cpu-out: 7500 of 8000 CPU used by a 300-milli share: 500 < 1000 CPU left -> its 1700 idle milli CPU-stranded.
  const pod p1 = make_pod("p1").cpu(7500).memory(1024).gpu_share(300);
  c.reserve(p1, make_binding(p1, 0, 0b1));
  // mem-out: 7000 of 8192 MiB used by one whole GPU: 1192 < 2048 MiB left -> its other GPU (1000) memory-stranded.
  const pod p2 = make_pod("p2").cpu(1000).memory(7000).gpus(1);
  c.reserve(p2, make_binding(p2, 1, 0b1));
  // roomy: one GPU with 600 taken, one whole GPU taken: 400 partial + 2 whole GPUs idle (2000).
  const pod p3 = make_pod("p3").cpu(1000).memory(1024).gpu_share(600);
  c.reserve(p3, make_binding(p3, 2, 0b1));
  const pod p4 = make_pod("p4").cpu(1000).memory(1024).gpus(1);
  c.reserve(p4, make_binding(p4, 2, 0b10));
  sim::frag_kinds_result r;
  sim::classify_idle(c, t, r);
  CHECK(r.idle_cpu_stranded == 1700);
  CHECK(r.idle_mem_stranded == 1000);
  CHECK(r.idle_whole_gpus == 2000);
  CHECK(r.idle_partial_gpus == 400);
  CHECK(r.nodes_cpu_low == 1);  // cpu-out: 500 free of 8000, below 1/8
  CHECK(r.idle_on_cpu_low == 1700);
}

TEST_CASE("kind_of follows the openb trace kinds") {
  CHECK(sim::kind_of(make_pod("c").cpu(1000)) == sim::pod_kind::cpu_only);
  CHECK(sim::kind_of(make_pod("s").cpu(1000).gpu_share(999)) == sim::pod_kind::share);
  CHECK(sim::kind_of(make_pod("w").cpu(1000).gpus(1)) == sim::pod_kind::whole);
  CHECK(sim::kind_of(make_pod("m").cpu(1000).gpus(2)) == sim::pod_kind::multi);
}
