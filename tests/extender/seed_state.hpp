// The seed's scheduler configuration and the small state that gpusched-extender's in-process tests
// and its fuzz harness (tests/fuzz/fuzz_extender.cpp) start from, written once.
#pragma once

#include <string>
#include <string_view>

#include "../../tools/extender/extender.hpp"

namespace gpusched::extender::testing {

// data/scheduler-config.yaml without its comment line: the seed's `ai-scheduler` (GPUCheck,
// LoadAware 10, ModelAffinity 5), exactly as the design brief writes it (tests/extender checks
// that the file still says this).
inline constexpr const char* seed_config = R"(apiVersion: kubescheduler.config.k8s.io/v1beta2
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: ai-scheduler
  plugins:
    preFilter:
      enabled:
      - name: GPUCheck
    score:
      enabled:
      - name: LoadAware
        weight: 10
      - name: ModelAffinity
        weight: 5
)";

// The same plugins in a kubescheduler.config.k8s.io/v1 file (the seed's, with the v1 apiVersion and
// GPUCheck at the filter extension point): Kubernetes' default plugins join them (kube_defaults.hpp),
// among them NodeUnschedulable, TaintToleration and NodeAffinity, filters and scorers without batch
// forms that gpusched-extender runs node by node beside the batch engine.
inline const std::string seed_v1_config = [] {
  std::string s = seed_config;
  const auto swap = [&s](std::string_view from, std::string_view to) { s.replace(s.find(from), from.size(), to); };
  swap("config.k8s.io/v1beta2", "config.k8s.io/v1");
  swap("preFilter:", "filter:");
  return s;
}();

// Two nodes, "a" (2 x V100-SXM2-32GB, 8 CPUs, 16 GiB) and "b" (1 x T4, 4 CPUs, 8 GiB), and one
// running pod "default/run" on "a" (1 CPU, 1 GiB, half a GPU, model resnet50).
inline void seed_two_nodes(extender& ext) {
  kube::kube_node a, b;
  a.spec = node_spec{"a", 8000, 16384, {}, ""};
  a.spec.add_gpus(2, "V100-SXM2-32GB", 32768, 0);
  b.spec = node_spec{"b", 4000, 8192, {}, ""};
  b.spec.add_gpus(1, "T4", 16384, 0);
  ext.replace_nodes({a, b});
  kube::kube_pod run;
  run.uid = "run";
  run.name = "run";
  run.namespace_ = "default";
  run.node_name = "a";
  run.phase = "Running";
  run.spec = make_pod("default/run").cpu(1000).memory(1024).gpu_share(500).model("resnet50");
  ext.replace_pods({run});
}

}  // namespace gpusched::extender::testing
