// Gang scheduling: a distributed training job (one launcher plus elastic workers) placed all or
// nothing on a racked cluster of 8-GPU nodes, its workers on whole nodes and NVLink islands; then two
// jobs that cannot both fit queued in a gang_coordinator: one runs; the other keeps the room left as
// the head-of-line reservation (bounded by a timeout, so nothing smaller starves it) and runs when
// the first is done.
#include <cstdio>
#include <string>

#include <gpusched/gang.hpp>  // the core (gpusched.hpp) and the gang layer

using namespace gpusched;

int main() {
  in_memory_cluster cluster;
  for (int i = 0; i < 8; ++i) {
    node_spec n{"dgx-" + std::to_string(i), 96000, 768 * 1024, {}, "rack-" + std::to_string(i / 4)};
    n.add_gpus(4, "V100M32", 32768, 0).add_gpus(4, "V100M32", 32768, 1);  // two NVLink islands
    cluster.add_node(n);
  }
  auto profile = make_profile(checks(gpu_check{}, resource_fit{}), scores(weighted{most_allocated{}, 1}),
                              nvlink_aware_gpus{});

  const gang_spec bert = make_gang("bert-train")
                             .priority(5)
                             .role("launcher", make_pod("launcher").cpu(4000).memory(16384))
                             .role("worker", make_pod("worker").cpu(8000).memory(65536).gpus(4), 6, 8);
  gang_placer placer(profile);
  const gang_result r = placer.place(cluster, bert);
  std::printf("%s\n", r.explain(bert).c_str());
  for (const auto& m : r.members) {
    std::string gpus;
    for_each_gpu(m.where.gpus, [&](int g) { gpus += (gpus.empty() ? "" : ",") + std::to_string(g); });
    std::printf("  %s-%u -> %s GPUs [%s]\n", bert.roles[m.role].name.c_str(), m.ordinal,
                node_label(cluster, m.where.node).c_str(), gpus.c_str());
  }
  release_gang(cluster, bert, r);

  // Two 48-GPU jobs on a 64-GPU cluster: only one fits at a time.
  gang_coordinator coord(profile);
  const gang_spec a = make_gang("job-a").submitted(0).role("worker", make_pod("w").cpu(4000).gpus(4), 12);
  const gang_spec b = make_gang("job-b").submitted(0).role("worker", make_pod("w").cpu(4000).gpus(4), 12);
  const gang_id ia = coord.submit(a);
  const gang_id ib = coord.submit(b);
  for (double t : {0.0, 1.0}) {
    const cycle_report rep = coord.run_cycle(cluster, t);
    for (gang_id id : rep.started) std::printf("t=%.0f started %s\n", t, coord.spec(id).name.c_str());
  }
  std::printf("job-b holds %zu of its 12 workers; its first try: %s\n", coord.placement(ib).members.size(),
              coord.placement(ib).explain(b).c_str());
  coord.finish(cluster, ia);
  for (gang_id id : coord.run_cycle(cluster, 2.0).started) std::printf("t=2 started %s\n", coord.spec(id).name.c_str());
  coord.finish(cluster, ib);
  return 0;
}
