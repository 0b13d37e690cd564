// Translation of Kubernetes objects: expected values worked out by hand from Kubernetes' rules
// (component-helpers resource/helpers.go PodRequests, pkg/apis/core/helper/qos GetPodQOS).
#include <doctest/doctest.h>

#include <string>

#include "gpusched/kube/translate.hpp"

using gpusched::invalid_argument_error;
using gpusched::qos_class;
using namespace gpusched::kube;
using nlohmann::literals::operator""_json;

namespace {
std::string error_of_pod(const json& j) {
  try {
    (void)translate_pod(j);
  } catch (const invalid_argument_error& e) {
    return e.what();
  }
  return "";
}
std::string error_of_node(const json& j) {
  try {
    (void)translate_node(j);
  } catch (const invalid_argument_error& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("kube/translate: pod requests are the containers' sum, the init max and the overhead") {
  const auto p = translate_pod(R"({
    "metadata": {"name": "train-0", "namespace": "ml", "uid": "u-1"},
    "spec": {
      "containers": [
        {"name": "a", "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}}},
        {"name": "b", "resources": {"requests": {"cpu": "250m", "memory": "512Mi"}, "limits": {"nvidia.com/gpu": "2"}}}],
      "initContainers": [{"name": "i", "resources": {"requests": {"cpu": "2", "memory": "256Mi"}}}],
      "overhead": {"cpu": "100m", "memory": "64Mi"},
      "priority": 1000, "schedulerName": "ai-scheduler"}})"_json);
  // containers: cpu 750m, memory 1536Mi, gpu 2 (limit without request requests the limit);
  // max with the init container: cpu 2000m, memory 1536Mi; plus overhead: 2100m, 1600Mi.
  CHECK(p.spec.name == "ml/train-0");
  CHECK(p.uid == "u-1");
  CHECK(p.spec.cpu_milli == 2100);
  CHECK(p.spec.memory_mib == 1600);
  CHECK(p.spec.num_gpu == 2);
  CHECK(p.spec.gpu_milli == 1000);
  CHECK(p.spec.gpu_mem_mib == 0);
  CHECK(p.k8s_qos == qos_class::burstable);  // container b has no cpu / memory limits
  CHECK(p.k8s_priority == 1000);
  CHECK(p.spec.priority == gpusched::kube::core_priority(1000));
  CHECK(p.scheduler_name == "ai-scheduler");
}

TEST_CASE("kube/translate: sidecar init containers add to the sum (KEP-753)") {
  const auto p = translate_pod(R"({
    "metadata": {"name": "s"},
    "spec": {
      "containers": [{"name": "main", "resources": {"requests": {"cpu": "1"}}}],
      "initContainers": [
        {"name": "sidecar", "restartPolicy": "Always", "resources": {"requests": {"cpu": "500m"}}},
        {"name": "setup", "resources": {"requests": {"cpu": "2"}}}]}})"_json);
  // running: 1 + 0.5 = 1.5; setup runs beside the sidecar: 2 + 0.5 = 2.5; the pod needs 2.5.
  CHECK(p.spec.cpu_milli == 2500);
  CHECK(p.namespace_ == "default");
}

TEST_CASE("kube/translate: QoS class by Kubernetes' rule") {
  auto qos_of = [](const char* resources) {
    return translate_pod(json::parse(std::string(R"({"metadata": {"name": "q"}, "spec": {"containers": [{"name": "c", "resources": )") +
                                     resources + "}]}}"))
        .k8s_qos;
  };
  CHECK(qos_of(R"({})") == qos_class::best_effort);
  CHECK(qos_of(R"({"limits": {"nvidia.com/gpu": "1"}})") == qos_class::best_effort);  // only cpu and memory count
  CHECK(qos_of(R"({"limits": {"cpu": "2", "memory": "4Gi"}})") == qos_class::guaranteed);  // requests default to limits
  CHECK(qos_of(R"({"requests": {"cpu": "2000m", "memory": "4096Mi"}, "limits": {"cpu": "2", "memory": "4Gi"}})") ==
        qos_class::guaranteed);  // equal by value
  CHECK(qos_of(R"({"requests": {"cpu": "1"}, "limits": {"cpu": "2", "memory": "4Gi"}})") == qos_class::burstable);
  CHECK(qos_of(R"({"limits": {"cpu": "2"}})") == qos_class::burstable);  // no memory limit
  CHECK(qos_of(R"({"requests": {"cpu": "0"}})") == qos_class::best_effort);  // zero quantities are ignored
}

TEST_CASE("kube/translate: HAMi GPU share and memory, allowed models, bind annotation") {
  const auto p = translate_pod(R"({
    "metadata": {"name": "infer", "annotations": {"nvidia.com/use-gputype": "V100-SXM2-32GB,T4",
                                                  "gpusched.ai.tencent.com/gpu-indices": "0,3"}},
    "spec": {"containers": [{"name": "c", "resources": {"limits": {
      "nvidia.com/gpu": "1", "nvidia.com/gpucores": "30", "nvidia.com/gpumem": "8000"}}}]}})"_json);
  CHECK(p.spec.num_gpu == 1);
  CHECK(p.spec.gpu_milli == 300);
  CHECK(p.spec.gpu_mem_mib == 8000);
  REQUIRE(p.spec.allowed_models.size() == 2);
  CHECK(p.spec.allowed_models[0].view() == "V100-SXM2-32GB");
  CHECK(p.spec.allowed_models[1].view() == "T4");
  REQUIRE(p.gpu_indices.has_value());
  CHECK(*p.gpu_indices == 0b1001);
  CHECK(format_gpu_indices(0b1001) == "0,3");
  CHECK(error_of_pod(R"({"metadata": {"name": "x"}, "spec": {"containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpucores": "30"}}}]}})"_json) ==
        "spec.requests.nvidia.com/gpucores: needs nvidia.com/gpu >= 1 (the GPUs it applies to)");
  CHECK(error_of_pod(R"({"metadata": {"name": "x"}, "spec": {"containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": "1", "nvidia.com/gpucores": "101"}}}]}})"_json) ==
        "spec.requests.nvidia.com/gpucores: quantity is larger than 100 units");
  CHECK(error_of_pod(R"({"metadata": {"name": "x", "annotations": {"gpusched.ai.tencent.com/gpu-indices": "0,,1"}}, "spec": {"containers": []}})"_json) ==
        "metadata.annotations.gpusched.ai.tencent.com/gpu-indices: '0,,1' is not a list of GPU indices like \"0,3\"");
}

TEST_CASE("kube/translate: ModelJob fields from labels and from the owning ModelJob") {
  const auto pod_json = R"({
    "metadata": {"name": "r", "labels": {"ai.tencent.com/model-type": "resnet50", "ai.tencent.com/priority": "7",
                                         "ai.tencent.com/qos-class": "Guaranteed"},
                 "ownerReferences": [{"apiVersion": "ai.tencent.com/v1", "kind": "ModelJob", "name": "resnet", "uid": "m1"}]},
    "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}], "priority": 0}})"_json;
  const auto by_labels = translate_pod(pod_json);
  CHECK(by_labels.owner_modeljob == "resnet");
  CHECK(by_labels.spec.model_type.view() == "resnet50");
  CHECK(by_labels.spec.priority == 7);
  CHECK(by_labels.spec.qos == qos_class::guaranteed);
  CHECK(by_labels.k8s_qos == qos_class::burstable);  // Kubernetes' own class is kept beside it
  const auto job = R"({"apiVersion": "ai.tencent.com/v1", "kind": "ModelJob", "metadata": {"name": "resnet"},
                       "spec": {"modelType": "bert", "priority": 3, "qosClass": "BestEffort"}})"_json;
  const auto by_owner = translate_pod(pod_json, &job);
  CHECK(by_owner.spec.model_type.view() == "bert");
  CHECK(by_owner.spec.priority == 3);
  CHECK(by_owner.spec.qos == qos_class::best_effort);

  auto bad_label = pod_json;
  bad_label["metadata"]["labels"]["ai.tencent.com/priority"] = "11";
  CHECK(error_of_pod(bad_label) == "metadata.labels.ai.tencent.com/priority: 11 is outside 0..10");
  bad_label["metadata"]["labels"]["ai.tencent.com/priority"] = "high";
  CHECK(error_of_pod(bad_label) == "metadata.labels.ai.tencent.com/priority: expected an integer, got string");
  auto bad_job = job;
  bad_job["spec"]["qosClass"] = "Gold";
  CHECK_THROWS_WITH_AS((void)translate_pod(pod_json, &bad_job), "spec.qosClass: 'Gold' is not a QoS class (Guaranteed, Burstable or BestEffort)",
                       invalid_argument_error);
}

TEST_CASE("kube/translate: Kubernetes' int32 priority, squeezed only as far as the core requires") {
  const auto p = translate_pod(R"({"metadata": {"name": "crit"}, "spec": {"containers": [], "priority": 2000000000}})"_json);
  CHECK(p.k8s_priority == 2000000000);
  // system-cluster-critical keeps 2e9 once the core holds int32 priorities; until then the top.
  CHECK(p.spec.priority == (gpusched::max_priority >= 2000000000 ? 2000000000 : gpusched::max_priority));
  CHECK(core_priority(-5) == -5);  // the core holds every int32 priority (issue 13)
  CHECK(core_priority(-5000000000LL) == gpusched::min_priority);
  CHECK(error_of_pod(R"({"metadata": {"name": "x"}, "spec": {"containers": [], "priority": 4294967296}})"_json) ==
        "spec.priority: 4294967296 is outside -2147483648..2147483647");
}

TEST_CASE("kube/translate: bad pods name the JSON path") {
  CHECK(error_of_pod(R"({"metadata": {"name": "x"}, "spec": {}})"_json) == "spec.containers: missing");
  CHECK(error_of_pod(R"({"metadata": {"name": "x"}, "spec": {"containers": [{"name": "c"}, {"name": "d", "resources": {"requests": {"cpu": "abc"}}}]}})"_json) ==
        "spec.containers[1].resources.requests.cpu: 'abc' is not a Kubernetes quantity: no digits");
  CHECK(error_of_pod(R"({"metadata": {"name": "x"}, "spec": {"containers": [{"name": "c", "resources": {"requests": {"memory": 5}}}]}})"_json) ==
        "spec.containers[0].resources.requests.memory: expected a quantity string, got number");
  CHECK(error_of_pod(R"({"metadata": {"name": 3}, "spec": {"containers": []}})"_json) == "metadata.name: expected a string, got number");
  CHECK(error_of_pod(R"([])"_json) == "<root>: expected an object, got array");
  CHECK_THROWS_WITH_AS((void)translate_pod(R"({"metadata": {}, "spec": {}})"_json, nullptr, "Pod"), "Pod.metadata.name: missing",
                       invalid_argument_error);
}

TEST_CASE("kube/translate: nodes from allocatable and GPU feature discovery labels") {
  const auto n = translate_node(R"({
    "metadata": {"name": "v100-1", "labels": {"nvidia.com/gpu.product": "Tesla-V100-SXM2-32GB", "nvidia.com/gpu.memory": "32768",
                                              "nvidia.com/gpu.count": "8"}},
    "spec": {"unschedulable": true, "taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]},
    "status": {"allocatable": {"cpu": "7910m", "memory": "32Gi", "pods": "110", "nvidia.com/gpu": "4"}}})"_json);
  CHECK(n.spec.name == "v100-1");
  CHECK(n.spec.cpu_milli == 7910);
  CHECK(n.spec.memory_mib == 32768);
  CHECK(n.allocatable_pods == 110);
  REQUIRE(n.spec.gpus.size() == 4);  // the device plugin's allocatable wins over the label's 8
  CHECK(n.spec.gpus[3].model.view() == "V100-SXM2-32GB");
  CHECK(n.spec.gpus[3].mem_total_mib == 32768);
  CHECK(n.spec.gpus[3].mem_free_mib == 32768);
  CHECK(n.spec.gpus[3].milli_free == 1000);
  CHECK(n.unschedulable);
  REQUIRE(n.taints.size() == 1);
  CHECK(n.taints[0].effect == "NoSchedule");

  const auto by_label = translate_node(R"({
    "metadata": {"name": "a100", "labels": {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB", "nvidia.com/gpu.memory": "81920",
                                            "nvidia.com/gpu.count": "2"}},
    "status": {"allocatable": {"cpu": "64", "memory": "1000Mi"}}})"_json);
  CHECK(by_label.spec.gpus.size() == 2);
  CHECK(by_label.spec.gpus[0].model.view() == "A100-SXM4-80GB");
  CHECK(by_label.spec.cpu_milli == 64000);

  CHECK(translate_node(R"({"metadata": {"name": "cpu-only"}, "status": {"allocatable": {"cpu": "4", "memory": "1999999Ki"}}})"_json)
            .spec.memory_mib == 1953);  // 1999999 KiB / 1024 = 1953.1, rounded down
  CHECK(error_of_node(R"({"metadata": {"name": "g"}, "status": {"allocatable": {"nvidia.com/gpu": "1"}}})"_json) ==
        "metadata.labels.nvidia.com/gpu.product: missing on a node with GPUs");
  // Names of any length since issue 13: a long product name is interned, not refused.
  CHECK(translate_node(R"({"metadata": {"name": "g", "labels": {"nvidia.com/gpu.product": "GeForce-RTX-4090-D", "nvidia.com/gpu.memory": "1"}},
                          "status": {"allocatable": {"nvidia.com/gpu": "1"}}})"_json)
            .spec.gpus[0].model.view() == "GeForce-RTX-4090-D");
  CHECK(error_of_node(R"({"metadata": {"name": "g", "labels": {"nvidia.com/gpu.product": "V100", "nvidia.com/gpu.memory": "lots"}},
                          "status": {"allocatable": {"nvidia.com/gpu": "1"}}})"_json)
            .rfind("metadata.labels.nvidia.com/gpu.memory: ", 0) == 0);
  CHECK(error_of_node(R"({"metadata": {"name": "g"}, "status": {"allocatable": {"nvidia.com/gpu": "65"}}})"_json) ==
        "status.allocatable.nvidia.com/gpu: quantity is larger than 64 units");
  CHECK(error_of_node(R"({"metadata": {"name": "g"}, "status": {}})"_json) == "status.allocatable: missing");
  CHECK(error_of_node(R"({"metadata": {"name": "g"}, "spec": {"unschedulable": "yes"}, "status": {"allocatable": {}}})"_json) ==
        "spec.unschedulable: expected true or false, got string");
}
