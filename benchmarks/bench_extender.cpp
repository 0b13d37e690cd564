// gpusched-extender's decisions at 5,000 nodes (issue 16): filter + prioritize for one pod in NodeNames
// mode with the state cached, in-process (BM_ExtenderFilter) and over loopback HTTP with a kept-alive
// connection (BM_ExtenderLoopback; items/s = decisions/s in real time, server_decisions_per_cpu_s =
// what one core serving nothing else sustains; docs/kubernetes.md "Speed" defines a decision). Nodes: 8 x V100-32GB, every fourth with
// one GPU half taken; profile: the seed's data/scheduler-config.yaml. Arguments: nodes in the cluster,
// names per request. kube-scheduler sends an extender only the feasible nodes its own filters found,
// and stops looking after percentageOfNodesToScore of the cluster, 10% by default at 5,000 nodes
// (kubernetes.io/docs/concepts/scheduling-eviction/scheduler-perf-tuning): hence /5000/500 beside
// the worst case /5000/5000.
#include <benchmark/benchmark.h>

#if __has_include(<yaml-cpp/yaml.h>)
#include <algorithm>
#include <atomic>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "../tests/extender/seed_state.hpp"  // seed_v1_config (and tools/extender/extender.hpp)

#ifdef GPUSCHED_BENCH_LOOPBACK
#include <pthread.h>
#include <sched.h>
#include <time.h>

#include "../tools/extender/http.hpp"
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

gpusched::extender::options reader(bool simdjson, bool batch = true) {
  gpusched::extender::options o;
  o.simdjson = simdjson;
  o.batch = batch;
  return o;
}

struct fixture {
  extender ext;
  std::string body;

  // shuffled: the names in a random order (fixed seed) instead of the state's, so that no lookup
  // finds its node next to the previous one's and every name goes through the hash table.
  // rejected: the pod accepts only T4s, which no node has, so every node is rejected (and each
  // needs its reason).
  fixture(int nodes, int sent, bool simdjson = true, bool shuffled = false, bool rejected = false,
          const std::string& config = read_config(), bool batch = true)
      : ext(config, "data/scheduler-config.yaml", reader(simdjson, batch)) {
    std::vector<gpusched::kube::kube_node> ns;
    std::vector<std::string> sent_names;
    for (int i = 0; i < nodes; ++i) {
      gpusched::kube::kube_node n;
      n.spec.name = "node-" + std::to_string(i);
      n.spec.cpu_milli = 96000;
      n.spec.memory_mib = 786432;
      n.spec.add_gpus(8, "V100-SXM2-32GB", 32768);
      if (i < sent) sent_names.push_back(n.spec.name);
      ns.push_back(n);
    }
    if (shuffled) {
      std::mt19937 rng(42);
      std::shuffle(sent_names.begin(), sent_names.end(), rng);
    }
    const json names = sent_names;
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
    json meta = {{"name", "infer"}, {"namespace", "default"}, {"uid", "u-bench"}, {"labels", {{"ai.tencent.com/model-type", "resnet50"}}}};
    if (rejected) meta["annotations"] = {{"nvidia.com/use-gputype", "T4"}};
    const json pod = {{"metadata", meta},
                      {"spec", {{"containers", json::array({{{"name", "c"}, {"resources", {{"limits", {{"cpu", "2"}, {"memory", "8Gi"},
                                  {"nvidia.com/gpu", "1"}, {"nvidia.com/gpucores", "50"}}}}}}})}}}};
    body = json{{"Pod", pod}, {"NodeNames", names}, {"Nodes", nullptr}}.dump();
  }
};

// Third argument: 1 = requests read by simdjson (when built with it), 0 = by nlohmann's reader alone;
// fourth: 1 = names in a shuffled order (fixture).
// One decision per iteration, in-process: filter then prioritize of the fixture's body. With
// `all_rejected`, filter must pass no node.
void decide(benchmark::State& state, fixture& f, bool all_rejected = false) {
  for (auto _ : state) {
    auto a = f.ext.filter(f.body);
    auto b = f.ext.prioritize(f.body);
    if (a.status != 200 || b.status != 200) state.SkipWithError("request failed");
    if (all_rejected && a.body.find("NodeNames\":[]") == std::string::npos) state.SkipWithError("not rejected");
    benchmark::DoNotOptimize(a.body.data());
    benchmark::DoNotOptimize(b.body.data());
  }
  state.SetItemsProcessed(state.iterations());
}
void BM_ExtenderFilter(benchmark::State& state) {
  fixture f(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)), state.range(2) != 0, state.range(3) != 0);
  decide(state, f);
}
// Every node rejected (fixture's `rejected`): the worst case for reasons, which come from the
// profile's per-node plugins.
void BM_ExtenderFilterRejecting(benchmark::State& state) {
  fixture f(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)), true, false, true);
  decide(state, f, true);
}
// The seed's plugins in a v1 file (seed_state.hpp's seed_v1_config): the defaults' node-constraint
// plugins run node by node beside the engine (third argument 1) or the whole profile through the
// plugins (0).
void BM_ExtenderFilterV1(benchmark::State& state) {
  fixture f(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)), true, false, false,
            gpusched::extender::testing::seed_v1_config, state.range(2) != 0);
  decide(state, f);
}
BENCHMARK(BM_ExtenderFilterV1)->Args({5000, 5000, 1})->Args({5000, 5000, 0})->Args({5000, 500, 1})->Args({5000, 500, 0})->Unit(benchmark::kMillisecond)->UseRealTime();

BENCHMARK(BM_ExtenderFilterRejecting)->Args({5000, 5000})->Args({5000, 500})->Unit(benchmark::kMillisecond)->UseRealTime();

BENCHMARK(BM_ExtenderFilter)
    ->Args({5000, 5000, 1, 0})
    ->Args({5000, 5000, 0, 0})
    ->Args({5000, 500, 1, 0})
    ->Args({5000, 500, 0, 0})
    ->Args({5000, 5000, 1, 1})
    ->Args({5000, 500, 1, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

#ifdef GPUSCHED_BENCH_LOOPBACK
// CPU time of the calling thread / of the whole process, in seconds.
double cpu_seconds(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}
// Pins the calling thread to `cpu`, or to every CPU but `cpu` when `except` (and there are others).
void pin(int cpu, bool except) {
  cpu_set_t set;
  CPU_ZERO(&set);
  const int n = static_cast<int>(std::thread::hardware_concurrency());
  for (int c = 0; c < n; ++c) {
    if ((c == cpu) != except) CPU_SET(c, &set);
  }
  if (CPU_COUNT(&set) > 0) pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

// A decision over loopback: one POST /filter and one POST /prioritize for the same pod, over one
// kept-alive connection, served by gpusched-extender's own HTTP shell (tools/extender/http.hpp). The
// server's threads run on CPU 0 only, the client on the others: items/s is the sustained rate (real
// time, so it moves with the machine's load); server_us is the server's CPU time per decision (the
// process's CPU time less the client thread's), and server_decisions_per_cpu_s = 1e6 / server_us is
// what one core serving nothing else sustains.
// Third argument: requests per connection (1000: gpusched-extender's setting; 5: cpp-httplib's
// default); fourth: the reader as in BM_ExtenderFilter; fifth: shuffled names as there; sixth: the
// client accepts gzip (kube-scheduler's does); seventh: the server compresses (--compress). 0 names: two GET /healthz instead of the
// verbs, what the HTTP layer costs by itself.
void BM_ExtenderLoopback(benchmark::State& state) {
  fixture f(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)), state.range(3) != 0, state.range(4) != 0);
  httplib::Server svr;
  gpusched::extender::http_options h;
  h.keep_alive_max_requests = static_cast<std::size_t>(state.range(2));
  h.compress = state.range(6) != 0;
  gpusched::extender::serve(svr, f.ext, h);
  const int port = svr.bind_to_any_port("127.0.0.1");
  std::thread t([&] {
    pin(0, false);  // the pool's threads are started by listen and inherit this (and the name, for perf)
    pthread_setname_np(pthread_self(), "ext-server");
    svr.listen_after_bind();
  });
  while (!svr.is_running()) std::this_thread::yield();
  cpu_set_t before;
  pthread_getaffinity_np(pthread_self(), sizeof before, &before);
  pin(0, true);
  double client_cpu = 0;
  double process_cpu = 0;
  {
    httplib::Client cli("127.0.0.1", port);
    cli.set_keep_alive(true);
    cli.set_tcp_nodelay(true);  // kube-scheduler's Go client: net.TCPConn sets TCP_NODELAY by default
    const double c0 = cpu_seconds(CLOCK_THREAD_CPUTIME_ID);
    const double p0 = cpu_seconds(CLOCK_PROCESS_CPUTIME_ID);
    const bool empty = state.range(1) == 0;  // two GET /healthz: the HTTP layer's own cost
    // Sixth argument 1: the request accepts gzip, as kube-scheduler's Go client's do.
    const httplib::Headers accept = state.range(5) != 0 ? httplib::Headers{{"Accept-Encoding", "gzip"}} : httplib::Headers{};
    for (auto _ : state) {
      auto a = empty ? cli.Get("/healthz") : cli.Post("/filter", accept, f.body, "application/json");
      auto b = empty ? cli.Get("/healthz") : cli.Post("/prioritize", accept, f.body, "application/json");
      if (!a || !b || a->status != 200 || b->status != 200) state.SkipWithError("request failed");
    }
    client_cpu = cpu_seconds(CLOCK_THREAD_CPUTIME_ID) - c0;
    process_cpu = cpu_seconds(CLOCK_PROCESS_CPUTIME_ID) - p0;
  }
  pthread_setaffinity_np(pthread_self(), sizeof before, &before);
  svr.stop();
  t.join();
  const double n = static_cast<double>(state.iterations());
  const double server_us = 1e6 * (process_cpu - client_cpu) / n;
  state.counters["server_us"] = server_us;
  state.counters["server_decisions_per_cpu_s"] = server_us > 0 ? 1e6 / server_us : 0;
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ExtenderLoopback)
    ->Args({5000, 5000, 1000, 1, 0, 0, 0})
    ->Args({5000, 5000, 5, 0, 0, 0, 0})
    ->Args({5000, 500, 1000, 1, 0, 0, 0})
    ->Args({5000, 500, 5, 0, 0, 0, 0})
    ->Args({5000, 0, 1000, 1, 0, 0, 0})
    ->Args({5000, 5000, 1000, 1, 1, 0, 0})
    ->Args({5000, 500, 1000, 1, 1, 0, 0})
    ->Args({5000, 5000, 1000, 1, 0, 1, 1})  // kube-scheduler's Accept-Encoding, server compressing (the base)
    ->Args({5000, 5000, 1000, 1, 0, 1, 0})  // the same request, gzip off (gpusched-extender's default)
    ->Args({5000, 500, 1000, 1, 0, 1, 1})
    ->Args({5000, 500, 1000, 1, 0, 1, 0})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// Sustained decisions per second with the server on one core: `clients` kept-alive connections,
// each on its own thread on the other CPUs, send decisions (POST /filter then POST /prioritize, as in
// BM_ExtenderLoopback) as fast as they are answered, 200 per client per iteration. The server's
// request threads all run on CPU 0, so items/s (real time) is what one core sustains when it is kept
// busy, not one client's round trip; server_us is its CPU time per decision as above. Arguments:
// nodes, names per request, client connections.
void BM_ExtenderSustained(benchmark::State& state) {
  fixture f(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  httplib::Server svr;
  gpusched::extender::http_options h;
  gpusched::extender::serve(svr, f.ext, h);
  const int port = svr.bind_to_any_port("127.0.0.1");
  std::thread t([&] {
    pin(0, false);
    pthread_setname_np(pthread_self(), "ext-server");
    svr.listen_after_bind();
  });
  while (!svr.is_running()) std::this_thread::yield();
  const auto clients = static_cast<int>(state.range(2));
  constexpr int per_client = 200;
  std::atomic<bool> failed{false};
  std::atomic<std::int64_t> client_ns{0};  // the client threads' CPU time
  double process_cpu = 0;
  for (auto _ : state) {
    const double p0 = cpu_seconds(CLOCK_PROCESS_CPUTIME_ID);
    std::vector<std::thread> threads;
    for (int c = 0; c < clients; ++c) {
      threads.emplace_back([&] {
        pin(0, true);
        const double c0 = cpu_seconds(CLOCK_THREAD_CPUTIME_ID);
        {
          httplib::Client cli("127.0.0.1", port);
          cli.set_keep_alive(true);
          cli.set_tcp_nodelay(true);
          for (int i = 0; i < per_client; ++i) {
            auto a = cli.Post("/filter", f.body, "application/json");
            auto b = cli.Post("/prioritize", f.body, "application/json");
            if (!a || !b || a->status != 200 || b->status != 200) failed = true;
          }
        }
        client_ns += static_cast<std::int64_t>(1e9 * (cpu_seconds(CLOCK_THREAD_CPUTIME_ID) - c0));
      });
    }
    for (auto& th : threads) th.join();
    process_cpu += cpu_seconds(CLOCK_PROCESS_CPUTIME_ID) - p0;
  }
  svr.stop();
  t.join();
  if (failed) state.SkipWithError("request failed");
  const double n = static_cast<double>(state.iterations()) * clients * per_client;
  const double server_us = 1e6 * (process_cpu - 1e-9 * static_cast<double>(client_ns.load())) / n;
  state.counters["server_us"] = server_us;
  state.counters["server_decisions_per_cpu_s"] = server_us > 0 ? 1e6 / server_us : 0;
  state.SetItemsProcessed(static_cast<std::int64_t>(n));
}
BENCHMARK(BM_ExtenderSustained)
    ->Args({5000, 5000, 2})
    ->Args({5000, 5000, 4})
    ->Args({5000, 500, 4})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
#endif

}  // namespace
#endif
