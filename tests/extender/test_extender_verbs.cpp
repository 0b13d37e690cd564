// gpusched-extender's verbs in-process (tools/extender/extender.hpp): the NodeNames reader, HAMi's
// device annotations at bind, and ModelJob objects. Expected values are worked out by hand from the
// cited protocols; the loopback tests (tests/extender/*.py) cover the same verbs over HTTP.
#include <doctest/doctest.h>

// The extender reads its profile from a KubeSchedulerConfiguration: without yaml-cpp there is no
// extender (tools/extender/CMakeLists.txt) and nothing here to test.
#if __has_include(<yaml-cpp/yaml.h>)
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "../../tools/extender/extender.hpp"
#include "seed_state.hpp"

using gpusched::invalid_argument_error;
using gpusched::extender::extender;
using namespace gpusched::kube;
using nlohmann::literals::operator""_json;

namespace {

using gpusched::extender::testing::seed_config;

// A node of two V100-32GB; `annotations` lands in metadata.annotations.
json node_json(const std::string& name, const json& annotations = json::object()) {
  json n = {{"metadata",
             {{"name", name},
              {"labels", {{"nvidia.com/gpu.product", "Tesla-V100-SXM2-32GB"}, {"nvidia.com/gpu.memory", "32768"}}}}},
            {"status", {{"allocatable", {{"cpu", "8"}, {"memory", "32Gi"}, {"nvidia.com/gpu", "2"}}}}}};
  if (!annotations.empty()) n["metadata"]["annotations"] = annotations;
  return n;
}

json pod_json(const std::string& name, const json& limits, const json& labels = json::object()) {
  json p = {{"metadata", {{"name", name}, {"namespace", "default"}, {"uid", "uid-" + name}}},
            {"spec", {{"containers", json::array({{{"name", "c"}, {"resources", {{"limits", limits}}}}})}}}};
  if (!labels.empty()) p["metadata"]["labels"] = labels;
  return p;
}

std::string error_text(const std::string& body) { return json::parse(body).at("Error").get<std::string>(); }

}  // namespace

TEST_CASE("extender/seed config: the tests' configuration is data/scheduler-config.yaml's text") {
  std::ifstream f(std::string(GPUSCHED_SOURCE_DIR) + "/data/scheduler-config.yaml");
  REQUIRE(f.good());
  std::stringstream text;
  text << f.rdbuf();
  std::string file = text.str();
  REQUIRE(file.rfind("# ", 0) == 0);             // the attribution comment line, then the brief's text
  file.erase(0, file.find('\n') + 1);
  CHECK(file == seed_config);
}

TEST_CASE("extender/NodeNames: every element must be a string, named by its index, and nothing is remembered") {
  extender ext(seed_config, "test.yaml");
  ext.replace_nodes({translate_node(node_json("a")), translate_node(node_json("b"))});
  const json pod = pod_json("p", {{"cpu", "1"}, {"memory", "1Gi"}});
  const auto a = ext.filter(json{{"Pod", pod}, {"NodeNames", {"a", 7, "b"}}}.dump());
  CHECK(a.status == 400);
  CHECK(error_text(a.body) == "NodeNames[1]: expected a string, got number");
  const auto o = ext.filter(json{{"Pod", pod}, {"NodeNames", {"a", {{"x", 1}}}}}.dump());
  CHECK(error_text(o.body) == "NodeNames[1]: expected a string, got object");
  const auto s = ext.filter(json{{"Pod", pod}, {"NodeNames", "a"}}.dump());
  CHECK(error_text(s.body) == "NodeNames: expected an array, got string");
  const auto none = ext.filter(json{{"Pod", pod}, {"NodeNames", nullptr}, {"Nodes", nullptr}}.dump());
  CHECK(error_text(none.body) == "Nodes: one of Nodes or NodeNames is required");
  // None of the refused requests remembered the pod for its bind.
  const auto b = ext.bind(R"({"PodName":"p","PodNamespace":"default","PodUID":"uid-p","Node":"a"})");
  CHECK(b.refused);
  CHECK(error_text(b.body) == "pod default/p (uid uid-p) was not seen in a filter call and cannot be fetched");
  CHECK(ext.bound_pods() == 0);
}

TEST_CASE(
    "extender/NodeNames: escapes are decoded, a repeated key keeps the last array, nested keys are not the list") {
  extender ext(seed_config, "test.yaml");
  ext.replace_nodes({translate_node(node_json("a")), translate_node(node_json("b"))});
  const std::string pod = pod_json("p", {{"cpu", "1"}, {"memory", "1Gi"}}).dump();
  // "\u0061" is "a"; the first NodeNames array is replaced by the second, as in a json tree.
  const auto f = ext.filter(R"({"Pod":)" + pod + R"(,"NodeNames":["x","y"],"NodeNames":["\u0061","zz"]})");
  REQUIRE(f.status == 200);
  const auto r = json::parse(f.body);
  CHECK(r["NodeNames"] == json{"a"});
  CHECK(r["FailedAndUnresolvableNodes"] == json{{"zz", "node 'zz' is not in gpusched-extender's cache"}});
  CHECK(r["FailedNodes"] == json::object());
  // A "NodeNames" key inside the pod is the pod's business, not the candidate list.
  json odd = pod_json("q", {{"cpu", "1"}, {"memory", "1Gi"}});
  odd["metadata"]["annotations"] = {{"NodeNames", "b"}};
  const auto g = ext.prioritize(json{{"Pod", odd}, {"NodeNames", {"b"}}}.dump());
  REQUIRE(g.status == 200);
  CHECK(json::parse(g.body).size() == 1);
  CHECK(json::parse(g.body)[0]["Host"] == "b");
}

TEST_CASE("kube/hami: the register annotation's JSON and text forms give UUIDs by index") {
  // JSON form (MarshalNodeDevices): "index" is omitted for 0 (omitempty).
  const json j =
      R"([{"id":"GPU-aaa","count":10,"devmem":32768,"devcore":100,"type":"NVIDIA-Tesla V100-SXM2-32GB","health":true},
                     {"id":"GPU-bbb","index":1,"count":10,"devmem":32768,"devcore":100,"type":"NVIDIA-Tesla V100-SXM2-32GB","health":true}])"_json;
  const json jtext = j.dump();
  CHECK(parse_hami_register(json_at(jtext, "r")) == std::vector<std::string>{"GPU-aaa", "GPU-bbb"});
  // Text form with index and mode (9 fields), listed out of order, and without them (7 fields, by position).
  const json t9 =
      "GPU-bbb,10,32768,100,NVIDIA-V100,0,true,1,hami-core:GPU-aaa,10,32768,100,NVIDIA-V100,0,true,0,hami-core:";
  CHECK(parse_hami_register(json_at(t9, "r")) == std::vector<std::string>{"GPU-aaa", "GPU-bbb"});
  const json t7 = "GPU-aaa,10,32768,100,NVIDIA-V100,0,true:GPU-bbb,10,32768,100,NVIDIA-V100,0,true:";
  CHECK(parse_hami_register(json_at(t7, "r")) == std::vector<std::string>{"GPU-aaa", "GPU-bbb"});

  const auto error_of = [](const json& v) {
    try {
      (void)parse_hami_register(json_at(v, "metadata.annotations.hami.io/node-nvidia-register"));
    } catch (const invalid_argument_error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(error_of("GPU-aaa,10,32768:") ==
        "metadata.annotations.hami.io/node-nvidia-register: device 'GPU-aaa,10,32768' has 3 fields, expected 7 or 9");
  CHECK(error_of("GPU-b,10,1,100,T,0,true,x,m:") ==
        "metadata.annotations.hami.io/node-nvidia-register: index 'x' is not a number");
  CHECK(error_of("GPU-b,10,1,100,T,0,true,1,m:") ==
        "metadata.annotations.hami.io/node-nvidia-register: GPU index 0 is missing");
  CHECK(error_of(R"([{"id":"GPU-a"},{"id":"GPU-b"}])") ==
        "metadata.annotations.hami.io/node-nvidia-register: GPU index 0 is listed twice");
  CHECK(error_of(R"([{"index":0}])") == "metadata.annotations.hami.io/node-nvidia-register[0].id: missing");
  CHECK(error_of(7) == "metadata.annotations.hami.io/node-nvidia-register: expected a string, got number");
  // Through translate_node, the path is the node's own.
  try {
    (void)translate_node(node_json("a", {{"hami.io/node-nvidia-register", "[1"}}), "Nodes.items[0]");
    FAIL("accepted");
  } catch (const invalid_argument_error& e) {
    CHECK(e.field() == "Nodes.items[0].metadata.annotations.hami.io/node-nvidia-register");
  }
  // HAMi's pod annotation for one container on GPUs 1 and 3 (EncodePodSingleDevice).
  CHECK(hami_pod_devices({"G0", "G1", "G2", "G3"}, 0b1010, 8000, 50) == "G1,NVIDIA,8000,50:G3,NVIDIA,8000,50:;");
}

TEST_CASE("extender/bind: HAMi's annotations name the chosen GPU's UUID, the node and the allocating phase") {
  extender ext(seed_config, "test.yaml");
  const json reg =
      R"([{"id":"GPU-aaa","count":10,"devmem":32768},{"id":"GPU-bbb","index":1,"count":10,"devmem":32768}])"_json;
  ext.replace_nodes({translate_node(node_json("a", {{"hami.io/node-nvidia-register", reg.dump()}})),
                     translate_node(node_json("plain"))});
  // GPU 0 of "a" is taken whole by a running pod, so a GPU pod can only get GPU 1 ("GPU-bbb").
  kube_pod run;
  run.uid = "run";
  run.node_name = "a";
  run.phase = "Running";
  run.gpu_indices = 1;
  run.spec = gpusched::make_pod("default/run").cpu(1000).memory(1024).gpus(1);
  ext.replace_pods({run});
  std::map<std::string, std::string> seen;
  ext.set_binder([&](const kube_pod&, const std::string&, const std::map<std::string, std::string>& ann) {
    seen = ann;
    return std::string();
  });
  const json pod = pod_json("p", {{"cpu", "1"},
                                  {"memory", "1Gi"},
                                  {"nvidia.com/gpu", "1"},
                                  {"nvidia.com/gpucores", "50"},
                                  {"nvidia.com/gpumem", "8000"}});
  REQUIRE(ext.filter(json{{"Pod", pod}, {"NodeNames", {"a"}}}.dump()).status == 200);
  const auto b = ext.bind(R"({"PodName":"p","PodNamespace":"default","PodUID":"uid-p","Node":"a"})");
  REQUIRE_MESSAGE(!b.refused, b.body);
  CHECK(seen.at("gpusched.ai.tencent.com/gpu-indices") == "1");
  CHECK(seen.at("hami.io/vgpu-devices-allocated") == "GPU-bbb,NVIDIA,8000,50:;");
  CHECK(seen.at("hami.io/vgpu-devices-to-allocate") == "GPU-bbb,NVIDIA,8000,50:;");
  CHECK(seen.at("hami.io/vgpu-node") == "a");
  CHECK(seen.at("hami.io/bind-phase") == "allocating");
  const std::string t = seen.at("hami.io/bind-time");
  CHECK((!t.empty() && t.find_first_not_of("0123456789") == std::string::npos));

  // A whole GPU without nvidia.com/gpumem: the device's memory (32768 MiB) and 100% of its cores.
  // On a node without HAMi's register annotation only gpusched's own annotation is written.
  const json whole = pod_json("w", {{"cpu", "1"}, {"memory", "1Gi"}, {"nvidia.com/gpu", "1"}});
  REQUIRE(ext.filter(json{{"Pod", whole}, {"NodeNames", {"plain"}}}.dump()).status == 200);
  REQUIRE(!ext.bind(R"({"PodName":"w","PodNamespace":"default","PodUID":"uid-w","Node":"plain"})").refused);
  CHECK(seen.size() == 1);
  CHECK(seen.count("gpusched.ai.tencent.com/gpu-indices") == 1);
  CHECK(gpusched::kube::hami_pod_devices({"G"}, 1, 32768, gpusched::gpu_milli_whole / 10) == "G,NVIDIA,32768,100:;");
}

TEST_CASE("extender/errors: an error quoting invalid UTF-8 of the request is still a JSON answer (fuzz finding)") {
  // tests/fuzz/fuzz_extender.cpp found this: json::parse_error's text quotes the bytes last read, and
  // writing that text into the answer threw inside the error path (std::terminate).
  extender ext(seed_config, "test.yaml");
  const std::string pod = pod_json("p", {{"cpu", "1"}, {"memory", "1Gi"}}).dump();
  const auto a = ext.preempt(R"({"Pod":)" + pod + R"(,"NodeNameToMetaVictims":{"b":{"Pods":[],"NumPDBVi)" +
                             std::string(20, '\xff'));
  CHECK(a.status == 400);
  const std::string e = error_text(a.body);  // parses: the answer is valid JSON
  CHECK(e.starts_with("request body: [json.exception.parse_error.101] parse error at line 1, column "));
  CHECK(e.find("\xEF\xBF\xBD") != std::string::npos);  // U+FFFD in place of the 0xFF byte
}

TEST_CASE("extender/ModelJob: an owned pod takes the ModelJob's fields, its labels fill the gaps and the fallback") {
  extender ext(seed_config, "test.yaml");
  ext.replace_nodes({translate_node(node_json("a"))});
  // A running pod labelled resnet50 / priority 2, owned by ModelJob default/serving.
  json running = pod_json("run", {{"cpu", "1"}, {"memory", "1Gi"}},
                          {{"ai.tencent.com/model-type", "resnet50"}, {"ai.tencent.com/priority", "2"}});
  running["metadata"]["ownerReferences"] =
      R"([{"apiVersion":"ai.tencent.com/v1","kind":"ModelJob","name":"serving","uid":"m"}])"_json;
  running["spec"]["nodeName"] = "a";
  running["status"] = {{"phase", "Running"}};
  ext.replace_pods({translate_pod(running)});
  auto p = ext.bound_pod("uid-run");
  REQUIRE(p);
  CHECK(p->model_type.view() == "resnet50");  // no ModelJob known yet: the labels
  CHECK(p->priority == 2);
  CHECK(p->qos == gpusched::qos_class::guaranteed);  // cpu and memory limits, requests defaulted to them

  // The ModelJob arrives: priority 8 and BestEffort from it, the model type still from the label.
  ext.modeljob_event("default/serving", parse_modeljob(R"({"spec":{"priority":8,"qosClass":"BestEffort"}})"_json),
                     false);
  p = ext.bound_pod("uid-run");
  CHECK(p->model_type.view() == "resnet50");
  CHECK(p->priority == 8);
  CHECK(p->qos == gpusched::qos_class::best_effort);
  // A ModelJob of the same name in another namespace is not the owner.
  ext.modeljob_event("other/serving", parse_modeljob(R"({"spec":{"priority":1,"modelType":"bert"}})"_json), false);
  CHECK(ext.bound_pod("uid-run")->priority == 8);
  // Deleted: back to the labels.
  ext.modeljob_event("default/serving", {}, true);
  p = ext.bound_pod("uid-run");
  CHECK(p->priority == 2);
  CHECK(p->qos == gpusched::qos_class::guaranteed);

  // A pod of a filter request is resolved too, and keeps it through its bind.
  ext.replace_modeljobs({{"default/train", parse_modeljob(R"({"spec":{"modelType":"bert","priority":5}})"_json)}});
  json fresh = pod_json("t", {{"cpu", "1"}, {"memory", "1Gi"}}, {{"ai.tencent.com/priority", "1"}});
  fresh["metadata"]["ownerReferences"] =
      R"([{"apiVersion":"ai.tencent.com/v1","kind":"ModelJob","name":"train","uid":"m2"}])"_json;
  REQUIRE(ext.filter(json{{"Pod", fresh}, {"NodeNames", {"a"}}}.dump()).status == 200);
  REQUIRE(!ext.bind(R"({"PodName":"t","PodNamespace":"default","PodUID":"uid-t","Node":"a"})").refused);
  p = ext.bound_pod("uid-t");
  REQUIRE(p);
  CHECK(p->model_type.view() == "bert");
  CHECK(p->priority == 5);

  // ModelJob fields are checked when the ModelJob is read, naming the field.
  try {
    (void)parse_modeljob(R"({"spec":{"priority":11}})"_json, "object");
    FAIL("accepted");
  } catch (const invalid_argument_error& e) {
    CHECK(std::string(e.what()) == "object.spec.priority: 11 is outside 0..10");
  }
}

TEST_CASE("extender/ModelJob: a pod built by hand (no translated own fields) keeps its spec's values as its own") {
  // tests/fuzz/fuzz_extender.cpp's seed pods are built without translate_pod; resolving them read
  // empty optionals (AddressSanitizer: global-buffer-overflow). Their spec's values are now their own.
  extender ext(seed_config, "test.yaml");
  ext.replace_nodes({translate_node(node_json("a"))});
  kube_pod run;
  run.uid = "run";
  run.namespace_ = "ml";
  run.node_name = "a";
  run.phase = "Running";
  run.owner_modeljob = "job";
  run.spec = gpusched::make_pod("ml/run")
                 .cpu(1000)
                 .memory(1024)
                 .model("resnet50")
                 .priority(4)
                 .qos(gpusched::qos_class::burstable);
  ext.replace_pods({run});
  auto p = ext.bound_pod("run");
  REQUIRE(p);
  CHECK(p->model_type.view() == "resnet50");
  CHECK(p->priority == 4);
  ext.modeljob_event(
      "ml/job", parse_modeljob(R"({"spec":{"modelType":"bert","priority":9,"qosClass":"Guaranteed"}})"_json), false);
  p = ext.bound_pod("run");
  CHECK(p->model_type.view() == "bert");
  CHECK(p->priority == 9);
  CHECK(p->qos == gpusched::qos_class::guaranteed);
  ext.modeljob_event("ml/job", {}, true);
  p = ext.bound_pod("run");
  CHECK(p->model_type.view() == "resnet50");
  CHECK(p->priority == 4);
  CHECK(p->qos == gpusched::qos_class::burstable);
}

#endif  // yaml-cpp
