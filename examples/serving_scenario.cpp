// Drive the serving engine through a scenario file by hand: load it, build the latency model, place
// the replicas with a fixed stand-in placement (no scheduler: the profiles arrive with the cluster
// simulator), add training workers as GPU neighbours, run the simulated day, print the metrics.
//   serving_scenario [scenario.yaml] [seed] [colocate|isolate]
// `colocate` puts a ResNet-50 and a BERT replica on each GPU next to a training worker; `isolate`
// gives every replica its own GPU. The gap between the two is the co-location cost the schedulers
// are meant to avoid.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <gpusched/sim/serving/scenario_yaml.hpp>
#include <string>

using namespace gpusched;
using namespace gpusched::sim::serving;

int main(int argc, char** argv) {
  const std::string file =
      argc > 1 && argv[1][0] != '\0' ? argv[1] : std::string(GPUSCHED_SOURCE_DIR) + "/data/scenarios/seed.yaml";
  try {
    const scenario sc = load_scenario(file);
    const std::uint64_t seed = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : sc.seeds.front();
    const bool colocate = !(argc > 3 && std::string(argv[3]) == "isolate");
    const latency_model lm = make_latency_model(sc);
    serving_engine e(lm, sc.engine);
    const serving_setup setup = populate(e, sc, lm, seed);

    gpu_slot next = 0;
    for (std::size_t k = 0;; ++k) {  // replica k of every service; colocate: one GPU per k
      bool any = false;
      for (std::size_t i = 0; i < setup.replicas.size(); ++i) {
        if (k >= setup.replicas[i].size()) continue;
        any = true;
        e.place_replica(setup.replicas[i][k], next);
        if (!colocate) ++next;
      }
      if (!any) break;
      if (colocate) {
        const auto& t = sc.training.front();  // a training worker's GPU share as a permanent neighbour
        e.add_external(next, lm.id(t.proxy_model), t.proxy_batch, 500, t.gpu_memory_mib / 2);
        ++next;
      }
    }

    const auto t0 = std::chrono::steady_clock::now();
    e.run_until(sc.duration_s);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    std::printf("%s, seed %llu, %s placement, %.0f s simulated in %.2f s wall\n", sc.name.c_str(),
                static_cast<unsigned long long>(seed), colocate ? "co-located" : "isolated", sc.duration_s, wall);
    std::printf("%-16s %9s %9s %8s %8s %8s %8s %7s %6s %8s\n", "service", "arrived", "QPS", "P50 ms", "P95 ms",
                "P99 ms", "SLO %", "batch", "fail", "timeout");
    for (const service_id s : setup.services) {
      const auto& m = e.metrics(s);
      std::printf("%-16s %9llu %9.1f %8.1f %8.1f %8.1f %8.2f %7.2f %6llu %8llu\n", e.spec(s).name.c_str(),
                  static_cast<unsigned long long>(m.arrived), m.throughput_qps(sc.duration_s), m.p50_s() * 1e3,
                  m.p95_s() * 1e3, m.p99_s() * 1e3, m.slo_attainment() * 100.0, m.mean_batch_size(),
                  static_cast<unsigned long long>(m.failed), static_cast<unsigned long long>(m.timed_out));
    }
    double busy = 0.0;
    for (gpu_slot g = 0; g < next; ++g) busy += e.gpu_busy_seconds(g);
    std::printf("mean busy share of the %u GPUs used: %.1f %%\n", next, 100.0 * busy / (next * sc.duration_s));
    for (const auto& n : e.take_notifications()) {
      if (n.what == notification::kind::replica_oom)
        std::printf("t=%.0f s: replica %u out of GPU memory\n", n.time, n.replica);
    }
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "error: %s\n", ex.what());
    return 1;
  }
  return 0;
}
