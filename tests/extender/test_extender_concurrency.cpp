// gpusched-extender's state under concurrent requests (tools/extender/extender.hpp, issue 16 item 4),
// in-process and bounded: decisions run while binds (some refused by the API server) and watch
// events change the state. Each decision must read one snapshot (every candidate classified exactly
// once), binds must never book a GPU twice, and refused binds must leave nothing behind.
#include <doctest/doctest.h>

#if __has_include(<yaml-cpp/yaml.h>)
#include <atomic>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "../../tools/extender/extender.hpp"
#include "seed_state.hpp"

using gpusched::extender::extender;
using namespace gpusched::kube;

namespace {

using gpusched::extender::testing::seed_config;

std::string pod_body(const std::string& uid, const json& names) {
  const json pod = {{"metadata", {{"name", uid}, {"namespace", "default"}, {"uid", uid}}},
                    {"spec", {{"containers", json::array({{{"name", "c"}, {"resources", {{"limits", {{"cpu", "1"}, {"memory", "1Gi"},
                                {"nvidia.com/gpu", "1"}}}}}}})}}}};
  return json{{"Pod", pod}, {"NodeNames", names}}.dump();
}

}  // namespace

TEST_CASE("extender/concurrency: decisions see one snapshot while binds and watch events change the state") {
  // Eight nodes of 2 x V100: binds go to n0..n6 (14 GPUs), watch events come and go on n7 only.
  extender ext(seed_config, "test.yaml");
  std::vector<kube_node> nodes;
  json names = json::array();
  for (int i = 0; i < 8; ++i) {
    kube_node n;
    n.spec.name = "n" + std::to_string(i);
    n.spec.cpu_milli = 64000;
    n.spec.memory_mib = 262144;
    n.spec.add_gpus(2, "V100-SXM2-32GB", 32768);
    names.push_back(n.spec.name);
    nodes.push_back(n);
  }
  ext.replace_nodes(nodes);
  // The stand-in API server refuses the binds of pods whose UID ends in "-r".
  ext.set_binder([](const kube_pod& p, const std::string&, const std::map<std::string, std::string>&) {
    return p.uid.ends_with("-r") ? std::string("API server answered 500") : std::string();
  });

  std::atomic<int> bad_answers{0}, bound{0}, refused_by_api{0};
  std::vector<std::thread> threads;
  // Decisions: each answer names every candidate exactly once (feasible, failed or unresolvable).
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&, t] {
      for (int k = 0; k < 150; ++k) {
        const std::string body = pod_body("d" + std::to_string(t) + "-" + std::to_string(k), names);
        const auto f = ext.filter(body);
        const auto p = ext.prioritize(body);
        if (f.status != 200 || p.status != 200) {
          ++bad_answers;
          continue;
        }
        const json fr = json::parse(f.body);
        std::multiset<std::string> seen;
        for (const auto& n : fr["NodeNames"]) seen.insert(n.get<std::string>());
        for (const auto& [n, why] : fr["FailedNodes"].items()) seen.insert(n);
        for (const auto& [n, why] : fr["FailedAndUnresolvableNodes"].items()) seen.insert(n);
        const json pr = json::parse(p.body);
        bool scores_ok = pr.size() == 8;
        for (const auto& h : pr) scores_ok = scores_ok && h["Score"].get<int>() >= 0 && h["Score"].get<int>() <= 10;
        if (seen.size() != 8 || std::set<std::string>(seen.begin(), seen.end()).size() != 8 || !scores_ok) ++bad_answers;
      }
    });
  }
  // Binds: 2 threads x 10 pods, each trying n0..n6 in turn until one takes it; 4 pods refused by the API.
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      for (int k = 0; k < 10; ++k) {
        const std::string uid = "b" + std::to_string(t) + "-" + std::to_string(k) + (k % 5 == 4 ? "-r" : "");
        if (ext.filter(pod_body(uid, names)).status != 200) ++bad_answers;
        const auto bind = [&](int n) {
          const auto a = ext.bind(json{{"PodName", uid}, {"PodNamespace", "default"}, {"PodUID", uid}, {"Node", "n" + std::to_string(n)}}.dump());
          if (a.status != 200) ++bad_answers;
          return json::parse(a.body)["Error"].get<std::string>();
        };
        if (uid.ends_with("-r")) {
          // Refused pods go to n7 (never to n0..n6, where their short-lived reservation could turn
          // another pod away), retried while the watched pod and the other refused pod fill it.
          for (int tries = 0; tries < 100000; ++tries) {
            if (bind(7).find("API server answered 500") != std::string::npos) {
              ++refused_by_api;
              break;
            }
          }
          continue;
        }
        for (int n = 0; n < 7; ++n) {
          if (bind(n).empty()) {
            ++bound;
            break;
          }
        }
      }
    });
  }
  // Watch events: a pod of another scheduler comes and goes on n7, 200 times, gone at the end.
  threads.emplace_back([&] {
    kube_pod w;
    w.uid = "watched";
    w.name = "watched";
    w.namespace_ = "default";
    w.node_name = "n7";
    w.phase = "Running";
    w.spec = gpusched::make_pod("default/watched").cpu(1000).memory(1024).gpu_share(1000);
    for (int k = 0; k < 200; ++k) ext.pod_event(w, k % 2 == 1);
  });
  for (auto& t : threads) t.join();

  CHECK(bad_answers == 0);
  CHECK(refused_by_api == 4);  // b0-4-r, b0-9-r, b1-4-r, b1-9-r
  CHECK(bound == 14);          // 16 pods for the 14 GPUs of n0..n6: two find no node
  CHECK(ext.bound_pods() == 14);
  const auto c = ext.cluster_copy();
  for (gpusched::node_index n = 0; n < c.size(); ++n) {
    for (const auto& d : c.gpus(n)) CHECK(d.milli_free == (c.name(n) == "n7" ? gpusched::gpu_milli_whole : 0));
  }
}
#endif
