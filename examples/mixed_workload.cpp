// The main job until the trace replay lands: schedule a realistic mixed workload — ResNet50 and
// BERT inference (prod, GPU shares) next to training (dev, whole GPUs) on 8 x V100-32GB nodes plus
// a few T4 nodes — with the seed's profile (GPUCheck + LoadAware 10 + ModelAffinity 5), and print
// every decision with its reasons.
#include <cstdio>
#include <string>
#include <vector>

#include <gpusched/gpusched.hpp>

using namespace gpusched;

int main() {
  in_memory_cluster cluster;
  for (int i = 0; i < 6; ++i) {
    node_spec n{"v100-" + std::to_string(i), 96000, 384 * 1024, {}, "rack-" + std::to_string(i / 3)};
    n.add_gpus(4, "V100M32", 32768, 0).add_gpus(4, "V100M32", 32768, 1);  // two NVLink islands
    cluster.add_node(n);
  }
  for (int i = 0; i < 2; ++i) {
    node_spec n{"t4-" + std::to_string(i), 32000, 128 * 1024, {}, "rack-2"};
    n.add_gpus(4, "T4", 16384);
    cluster.add_node(n);
  }
  // Measured load from the host's metrics pipeline: v100-0 is hot (CPU-heavy preprocessing).
  const node_metrics hot{0.60, 0.40, 0.85}, cool{0.10, 0.15, 0.05};
  for (node_index n = 0; n < cluster.size(); ++n) cluster.set_load(n, n == 0 ? &hot : &cool);

  model_affinity affinity;
  affinity.interfering.emplace_back(short_name("resnet50"), short_name("bert"));  // gpu-let: contended L2/DRAM
  auto profile = make_profile(checks(gpu_check{}, resource_fit{}, load_threshold{}),
                              scores(weighted{load_aware{}, 10}, weighted{std::move(affinity), 5}));
  scheduler<in_memory_cluster, decltype(profile)> sched(profile, schedule_options{100, 42, true});

  std::vector<pod> pods;
  for (int i = 0; i < 6; ++i) {
    pods.push_back(make_pod("resnet50-infer-" + std::to_string(i)).cpu(4000).memory(16384).gpu_share(250)
                       .gpu_memory(6144).model("resnet50").priority(9).qos(qos_class::guaranteed).prod());
  }
  for (int i = 0; i < 4; ++i) {
    pods.push_back(make_pod("bert-infer-" + std::to_string(i)).cpu(8000).memory(32768).gpu_share(500)
                       .gpu_memory(12288).model("bert").priority(9).qos(qos_class::guaranteed).prod());
  }
  for (int i = 0; i < 5; ++i) {
    pods.push_back(make_pod("train-" + std::to_string(i)).cpu(48000).memory(196608).gpus(8).gpu_memory(30000)
                       .model("gpt-train").priority(2).qos(qos_class::best_effort).dev());
  }
  pods.push_back(make_pod("t4-only-infer").cpu(2000).memory(8192).gpu_share(500).gpu_memory(8192)
                     .allow_model("T4").model("resnet50").priority(7).prod());
  pods.push_back(make_pod("huge-gpu-mem").cpu(2000).memory(8192).gpus(1).gpu_memory(40960).priority(5).dev());

  int placed = 0;
  for (const pod& p : pods) {
    const schedule_result r = sched.place_one(cluster, p);
    if (r) {
      ++placed;
      std::string gpus;
      for_each_gpu(r.where.gpus, [&](int g) { gpus += (gpus.empty() ? "" : ",") + std::to_string(g); });
      std::printf("%-18s -> %-8s GPUs [%s]  %s\n", p.name.c_str(), node_label(cluster, r.where.node).c_str(),
                  gpus.c_str(), r.explain(node_label(cluster, r.where.node)).c_str());
    } else {
      std::printf("%-18s -> unschedulable: %s\n", p.name.c_str(), r.explain().c_str());
    }
  }
  std::printf("\n%d/%zu pods placed\n", placed, pods.size());
  return 0;
}
