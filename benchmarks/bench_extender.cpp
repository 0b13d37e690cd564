// gpusched-extender's decisions at 5,000 nodes (issue 16): filter + prioritize for one pod in NodeNames
// mode with the state cached, in-process (BM_ExtenderFilter) and over loopback HTTP with a kept-alive
// connection (BM_ExtenderLoopback; items/s = decisions/s). Nodes: 8 x V100-32GB, every fourth with
// one GPU half taken; profile: the seed's data/scheduler-config.yaml. Arguments: nodes in the cluster,
// names per request. kube-scheduler sends an extender only the feasible nodes its own filters found,
// and stops looking after percentageOfNodesToScore of the cluster, 10% by default at 5,000 nodes
// (kubernetes.io/docs/concepts/scheduling-eviction/scheduler-perf-tuning): hence /5000/500 beside
// the worst case /5000/5000.
#include <benchmark/benchmark.h>

#if __has_include(<yaml-cpp/yaml.h>)
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "../tools/extender/extender.hpp"

#ifdef GPUSCHED_BENCH_LOOPBACK
#include <httplib.h>
#endif

namespace {

using gpusched::extender::extender;
using nlohmann::json;

std::string read_config() {
  std::ifstream in(std::string(GPUSCHED_SOURCE_DIR) + "/data/scheduler-config.yaml");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct fixture {
  extender ext{read_config(), "data/scheduler-config.yaml"};
  std::string body;

  fixture(int nodes, int sent) {
    std::vector<gpusched::kube::kube_node> ns;
    json names = json::array();
    for (int i = 0; i < nodes; ++i) {
      gpusched::kube::kube_node n;
      n.spec.name = "node-" + std::to_string(i);
      n.spec.cpu_milli = 96000;
      n.spec.memory_mib = 786432;
      n.spec.add_gpus(8, "V100-SXM2-32GB", 32768);
      if (i < sent) names.push_back(n.spec.name);
      ns.push_back(n);
    }
    ext.replace_nodes(std::move(ns));
    std::vector<gpusched::kube::kube_pod> running;
    for (int i = 0; i < nodes; i += 4) {
      gpusched::kube::kube_pod p;
      p.uid = "run-" + std::to_string(i);
      p.name = p.uid;
      p.namespace_ = "default";
      p.node_name = "node-" + std::to_string(i);
      p.phase = "Running";
      p.spec = gpusched::make_pod("default/" + p.uid).cpu(4000).memory(16384).gpu_share(500).model("resnet50");
      running.push_back(p);
    }
    ext.replace_pods(running);
    const json pod = {{"metadata", {{"name", "infer"}, {"namespace", "default"}, {"uid", "u-bench"},
                                    {"labels", {{"ai.tencent.com/model-type", "resnet50"}}}}},
                      {"spec", {{"containers", json::array({{{"name", "c"}, {"resources", {{"limits", {{"cpu", "2"}, {"memory", "8Gi"},
                                  {"nvidia.com/gpu", "1"}, {"nvidia.com/gpucores", "50"}}}}}}})}}}};
    body = json{{"Pod", pod}, {"NodeNames", names}, {"Nodes", nullptr}}.dump();
  }
};

void BM_ExtenderFilter(benchmark::State& state) {
  fixture f(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  for (auto _ : state) {
    auto a = f.ext.filter(f.body);
    auto b = f.ext.prioritize(f.body);
    if (a.status != 200 || b.status != 200) state.SkipWithError("request failed");
    benchmark::DoNotOptimize(a.body.data());
    benchmark::DoNotOptimize(b.body.data());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ExtenderFilter)->Args({5000, 5000})->Args({5000, 500})->Unit(benchmark::kMillisecond)->UseRealTime();

#ifdef GPUSCHED_BENCH_LOOPBACK
void BM_ExtenderLoopback(benchmark::State& state) {
  fixture f(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  httplib::Server svr;
  auto handler = [&](gpusched::extender::answer (extender::*fn)(std::string_view)) {
    return [&, fn](const httplib::Request& req, httplib::Response& res) {
      const auto a = (f.ext.*fn)(req.body);
      res.status = a.status;
      res.set_content(a.body, "application/json");
    };
  };
  svr.Post("/filter", handler(&extender::filter));
  svr.Post("/prioritize", handler(&extender::prioritize));
  svr.set_tcp_nodelay(true);  // as tools/extender/main.cpp serves
  const int port = svr.bind_to_any_port("127.0.0.1");
  std::thread t([&] { svr.listen_after_bind(); });
  while (!svr.is_running()) std::this_thread::yield();
  {
    httplib::Client cli("127.0.0.1", port);
    cli.set_keep_alive(true);
    cli.set_tcp_nodelay(true);  // kube-scheduler's Go client: net.TCPConn sets TCP_NODELAY by default
    for (auto _ : state) {
      auto a = cli.Post("/filter", f.body, "application/json");
      auto b = cli.Post("/prioritize", f.body, "application/json");
      if (!a || !b || a->status != 200 || b->status != 200) state.SkipWithError("request failed");
    }
  }
  svr.stop();
  t.join();
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ExtenderLoopback)->Args({5000, 5000})->Args({5000, 500})->Unit(benchmark::kMillisecond)->UseRealTime();
#endif

}  // namespace
#endif
