// gpusched-extender's answers to /filter and /prioritize as written by its own writer
// (tools/extender/extender.hpp): node names quoted as JSON strings once per state, names looked up
// in any order (the lookup tries the successor of the previous name's node first), and prioritize
// reusing filter's verdicts only while the pod and the state are the same. Expected texts are
// written by hand from RFC 8259 section 7 (escapes) and the extender/v1 types.
#include <doctest/doctest.h>

#if __has_include(<yaml-cpp/yaml.h>)
#include <string>
#include <vector>

#include "../../tools/extender/extender.hpp"
#include "seed_state.hpp"

using gpusched::extender::extender;
using namespace gpusched::kube;

namespace {

using gpusched::extender::testing::seed_config;

kube_node cpu_node(const std::string& name) {
  kube_node n;
  n.spec = gpusched::node_spec{name, 4000, 8192, {}, ""};
  return n;
}

const std::string cpu_pod = R"({"metadata":{"name":"p","namespace":"default","uid":"u-p"},)"
                            R"("spec":{"containers":[{"name":"c","resources":{"limits":{"cpu":"1","memory":"1Gi"}}}]}})";
const std::string gpu_pod = R"({"metadata":{"name":"g","namespace":"default","uid":"u-g"},)"
                            R"("spec":{"containers":[{"name":"c","resources":{"limits":{"cpu":"1","memory":"1Gi","nvidia.com/gpu":"1"}}}]}})";

}  // namespace

TEST_CASE("extender/answers: names needing JSON escapes are written escaped, in filter and prioritize alike") {
  extender ext(seed_config, "test.yaml");
  // A quote, a backslash, a tab, a control character, UTF-8 (not escaped), DEL (not escaped).
  ext.replace_nodes({cpu_node("q\"uote"), cpu_node("back\\slash"), cpu_node("tab\tx"), cpu_node("ctl\x01"),
                     cpu_node("\xC3\xA9"), cpu_node("del\x7F")});
  const std::string names = R"(["q\"uote","back\\slash","tab\tx","ctl\u0001","\u00e9","del)" "\x7F" R"(","gh\"ost"])";
  const auto f = ext.filter(R"({"Pod":)" + cpu_pod + R"(,"NodeNames":)" + names + "}");
  REQUIRE(f.status == 200);
  CHECK(f.body == R"({"Error":"","FailedNodes":{},"FailedAndUnresolvableNodes":{"gh\"ost":"node 'gh\"ost' is not in )"
                  R"(gpusched-extender's cache"},"Nodes":null,"NodeNames":["q\"uote","back\\slash","tab\tx","ctl\u0001",)"
                  "\"\xC3\xA9\",\"del\x7F\"]}");
  const auto p = ext.prioritize(R"({"Pod":)" + cpu_pod + R"(,"NodeNames":)" + names + "}");
  REQUIRE(p.status == 200);
  const auto list = json::parse(p.body);
  REQUIRE(list.size() == 7);
  const std::vector<std::string> expect = {"q\"uote", "back\\slash", "tab\tx", "ctl\x01", "\xC3\xA9", "del\x7F", "gh\"ost"};
  for (std::size_t i = 0; i < expect.size(); ++i) CHECK(list[i]["Host"] == expect[i]);
  CHECK(p.body.find(R"({"Host":"ctl\u0001","Score":)") != std::string::npos);
  CHECK(p.body.find(R"({"Host":"gh\"ost","Score":0})") != std::string::npos);  // unknown: score 0
}

TEST_CASE("extender/answers: an extender that has no nodes yet answers every name as unknown") {
  extender ext(seed_config, "test.yaml");  // no list yet: the state was never built
  const std::string body = R"({"Pod":)" + cpu_pod + R"(,"NodeNames":["a","b"]})";
  const auto f = ext.filter(body);
  CHECK(f.status == 200);
  CHECK(f.body == R"({"Error":"","FailedNodes":{},"FailedAndUnresolvableNodes":{"a":"node 'a' is not in gpusched-extender's cache",)"
                  R"("b":"node 'b' is not in gpusched-extender's cache"},"Nodes":null,"NodeNames":[]})");
  const auto p = ext.prioritize(body);
  CHECK(p.status == 200);
  CHECK(p.body == R"([{"Host":"a","Score":0},{"Host":"b","Score":0}])");
}

TEST_CASE("extender/answers: names in any order, repeated or unknown, are answered in the request's order") {
  extender ext(seed_config, "test.yaml");
  gpusched::extender::testing::seed_two_nodes(ext);
  // One whole GPU: "a" has one free V100, "b" its T4 (as in test_extender_fastjson.cpp).
  const auto f = ext.filter(R"({"Pod":)" + gpu_pod + R"(,"NodeNames":["b","ghost","a","b","a"]})");
  REQUIRE(f.status == 200);
  CHECK(f.body == R"({"Error":"","FailedNodes":{},"FailedAndUnresolvableNodes":{"ghost":"node 'ghost' is not in )"
                  R"(gpusched-extender's cache"},"Nodes":null,"NodeNames":["b","a","b","a"]})");
  // Each name's score is the one it gets alone, wherever it stands in the list.
  const auto score = [&](const std::string& names) { return json::parse(ext.prioritize(R"({"Pod":)" + gpu_pod + R"(,"NodeNames":)" + names + "}").body); };
  const auto a = score(R"(["a"])")[0]["Score"];
  const auto b = score(R"(["b"])")[0]["Score"];
  const auto all = score(R"(["b","ghost","a","b","a"])");
  REQUIRE(all.size() == 5);
  CHECK(all[0] == json{{"Host", "b"}, {"Score", b}});
  CHECK(all[1] == json{{"Host", "ghost"}, {"Score", 0}});
  CHECK(all[2] == json{{"Host", "a"}, {"Score", a}});
  CHECK(all[3] == json{{"Host", "b"}, {"Score", b}});
  CHECK(all[4] == json{{"Host", "a"}, {"Score", a}});
}

TEST_CASE("extender/answers: prioritize after filter answers as if no filter had run, when the pod or the state changed") {
  // Two extenders with the same state: `warm` answers filter first, `cold` only prioritize.
  extender warm(seed_config, "test.yaml");
  extender cold(seed_config, "test.yaml");
  gpusched::extender::testing::seed_two_nodes(warm);
  gpusched::extender::testing::seed_two_nodes(cold);
  const std::string names = R"(,"NodeNames":["a","b"]})";
  REQUIRE(warm.filter(R"({"Pod":)" + gpu_pod + names).status == 200);
  // Same pod, same state.
  CHECK(warm.prioritize(R"({"Pod":)" + gpu_pod + names).body == cold.prioritize(R"({"Pod":)" + gpu_pod + names).body);
  // The state changes between filter and prioritize: node "a"'s free V100 is taken, so "a" no
  // longer fits a whole GPU and scores 0.
  REQUIRE(warm.filter(R"({"Pod":)" + gpu_pod + names).status == 200);
  for (extender* e : {&warm, &cold}) {
    kube_pod run, fill;
    run.uid = "run";
    run.name = "run";
    run.namespace_ = "default";
    run.node_name = "a";
    run.phase = "Running";
    run.spec = gpusched::make_pod("default/run").cpu(1000).memory(1024).gpu_share(500).model("resnet50");
    fill = run;
    fill.uid = fill.name = "fill";
    fill.spec = gpusched::make_pod("default/fill").cpu(1000).memory(1024).gpus(1);
    e->replace_pods({run, fill});
  }
  const auto after = warm.prioritize(R"({"Pod":)" + gpu_pod + names);
  CHECK(after.body == cold.prioritize(R"({"Pod":)" + gpu_pod + names).body);
  CHECK(json::parse(after.body)[0] == json{{"Host", "a"}, {"Score", 0}});
  // Another pod (no GPU) after a filter of the GPU pod: its own verdicts.
  REQUIRE(warm.filter(R"({"Pod":)" + gpu_pod + names).status == 200);
  const auto other = warm.prioritize(R"({"Pod":)" + cpu_pod + names);
  CHECK(other.body == cold.prioritize(R"({"Pod":)" + cpu_pod + names).body);
}
#endif
