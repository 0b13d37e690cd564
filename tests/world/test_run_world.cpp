// sim/world/run_world.hpp: the world run by the driver, on small scenarios whose outcome is worked
// out by hand (docs/experiment-world.md, "The engine as run").
#include <doctest/doctest.h>

#if __has_include(<yaml-cpp/yaml.h>)
#include <cmath>
#include <string>

#include "gpusched/sim/world/run_world.hpp"

namespace w = gpusched::sim::world;

namespace {

// One DGX-1 node, one service of two replicas, batch table {1: 10 ms, 4: 20 ms}, 10 requests/s,
// two hours (the first is warm-up). `ws` is the model's working set (MiB).
std::string tiny(const std::string& ws = "100", const std::string& sweep_hi = "4", const std::string& tol = "0.01") {
  return "name: t\nstatus: declared\nduration_s: 7200\nwarmup_s: 3600\nseeds: [1]\n"
         "nodes: {count: 1, gpus_per_node: 8, gpu_model: V100M32, gpu_memory_mib: 32768, cpu_milli: 80000, "
         "memory_mib: 524288}\n"
         "devices: {time_slicing: {quantum_ms: 2, switch_cost_ms: 0.1, replicas_per_gpu: 4}}\n"
         "models:\n"
         "  - {name: m, framework: pytorch_caching, batch_ms: {1: 10, 4: 20}, working_set_mib: " + ws +
         ", cpu_ms_per_item: 0}\n"
         "services:\n"
         "  - {name: s, model: m, replicas: 2, max_batch: 4, max_wait_ms: 5, slo_ms: 100, timeout_ms: 1000,\n"
         "     requests: {gpu_memory_mib: 1024, cpu_milli: 1000, memory_mib: 1024}, priority: 5, tier: prod,\n"
         "     arrivals: {rate_qps: 10}}\n"
         "restarts: {initial_s: 10, max_s: 300, startup_s: 30}\n"
         "metrics: {sample_s: 60, capacity_sweep: {multiplier: {lo: 0, hi: " + sweep_hi + ", tolerance: " + tol + "}}}\n"
         "profiles:\n"
         "  - {name: excl, sharing: exclusive, scheduler: kube-default, view: {gpu: device_count}}\n";
}

}  // namespace

TEST_CASE("steady_batch: the batch that accumulates while one batch runs") {
  const w::batch_table t{{{1, 10.0}, {8, 10.0}, {16, 20.0}}};
  // 500/s, full speed: from 16 (20 ms) -> ceil(500 x 0.020) = 10; T(10) = 12.5 ms -> 7; T(7) = 10 ms -> 5;
  // T(5) = 10 ms -> 5: the fixed point.
  CHECK(w::steady_batch(t, 16, 500.0, 1.0) == 5);
  // At half speed (time-slicing next to a trainer): 500 x 0.040 = 20 > 16: the largest batch.
  CHECK(w::steady_batch(t, 16, 500.0, 0.5) == 16);
  // Light load: one request per batch.
  CHECK(w::steady_batch(t, 16, 1.0, 1.0) == 1);
}

TEST_CASE("poisson_count: mean within four standard errors") {
  gpusched::sim::rng g(7);
  for (const double mean : {0.5, 5.0, 200.0}) {
    CAPTURE(mean);
    const int n = 20000;
    double sum = 0.0;
    for (int i = 0; i < n; ++i) sum += static_cast<double>(w::poisson_count(g, mean));
    // The sample mean of n Poisson(mean) draws has standard error sqrt(mean / n).
    CHECK(std::abs(sum / n - mean) <= 4.0 * std::sqrt(mean / n));
  }
  CHECK(w::poisson_count(g, 0.0) == 0);
}

TEST_CASE("exclusive replicas at light load: latency one batch of 1 plus at most one more") {
  const auto sc = w::parse_world_scenario(tiny(), "tiny.yaml");
  const auto m = w::run_world_once(sc, sc.profile("excl"), 1);
  REQUIRE(m.services.size() == 1);
  // 5 requests/s per replica, capacity 4 / 20 ms = 200/s: batches of 1 (10 ms); latencies spread over
  // [10, 10 + max(10, 5)] ms in four quarters: the top quarter at 10 + 10 x 3.5 / 4 = 18.75 ms holds P99.
  CHECK(m.services[0].p99_ms_peak_hour == doctest::Approx(18.75).epsilon(0.01));  // DDSketch: 1%
  // All within the SLO: goodput = the offered 10/s (Poisson: 36,000 +- 190 in the measured hour).
  CHECK(m.services[0].goodput_qps == doctest::Approx(10.0).epsilon(0.03));
  // Dropped: only what arrives before the replicas serve (start-up 30 s of 7200 s): 0.4167% (Poisson:
  // 300 +- 17 requests).
  CHECK(m.services[0].dropped_pct == doctest::Approx(100.0 * 30.0 / 7200.0).epsilon(0.2));
  CHECK(m.oom_kills == 0);
  CHECK(m.sched_success_pct == 100.0);
  // Busy share: 2 of 8 GPUs busy 5 / 200 = 2.5% of the time once serving (from 30 s of 7200 s):
  // 100 x 2 x 0.025 x 7170 / 7200 / 8 = 0.6224%.
  CHECK(m.gpu_util_mean_pct == doctest::Approx(0.6224).epsilon(0.002));
}

TEST_CASE("a model larger than the GPU: CrashLoopBackOff, every request dropped") {
  const auto sc = w::parse_world_scenario(tiny("40000"), "tiny.yaml");
  const auto m = w::run_world_once(sc, sc.profile("excl"), 1);
  // Per replica, start attempts at 0, 1 (first restart immediate), 11, 31, 71, 151, 311 (delays 0,
  // 10, 20, 40, 80, 160, 300), then every 300 s: 611 .. 6911 (22 more) before 7200 s: 29 OOM kills.
  CHECK(m.oom_kills == 2 * 29);
  CHECK(m.services[0].goodput_qps == 0.0);
  CHECK(m.services[0].dropped_pct == 100.0);
  // Dropped requests count at timeout_ms (1000 ms) in the percentiles.
  CHECK(m.services[0].p99_ms_peak_hour == doctest::Approx(1000.0).epsilon(0.01));
  CHECK(m.replica_down_h == doctest::Approx(2 * 2.0));
}

TEST_CASE("capacity sweep: below the replicas' saturation, above three quarters of it") {
  const auto sc = w::parse_world_scenario(tiny("100", "100", "0.5"), "tiny.yaml");
  const auto m = w::run_world_swept(sc, sc.profile("excl"), 1);
  // Two replicas of 4 / 20 ms = 400 requests/s in all saturate at f = 40 (400 / 10); at f = 30
  // (utilisation 0.75) the backlog stays a few requests (well within 100 ms). Capacity x 10 qps.
  CHECK(m.services[0].slo_capacity_qps >= 300.0);
  CHECK(m.services[0].slo_capacity_qps <= 400.0 + 5.0);
  CHECK(m.services[0].sweep.size() >= 2);
}

TEST_CASE("mps without devices.mps is refused with the profile's line") {
  const std::string text = tiny() + "  - {name: mps, base: excl, sharing: mps}\n";
  const auto sc = w::parse_world_scenario(text, "tiny.yaml");
  CHECK_THROWS_AS((void)w::run_world_once(sc, sc.profile("mps"), 1), gpusched::file_error);
}
#endif

#if __has_include(<yaml-cpp/yaml.h>)
TEST_CASE("run_world_ab: the JSON keys per profile, service and metric; --jobs does not change results") {
  const auto sc = w::parse_world_scenario(tiny("100", "4", "0.5"), "tiny.yaml");
  const auto one = w::run_world_ab(sc, {"excl"}, {1, 2}, 1);
  const auto two = w::run_world_ab(sc, {"excl"}, {1, 2}, 2);
  const auto j = w::world_to_json(two);
  CHECK(j["kind"] == "world_ab");
  const auto& s = j["results"]["excl"]["s"];
  for (const char* k : {"slo_capacity_qps", "goodput_qps", "p99_ms_peak_hour"}) {
    CAPTURE(k);
    REQUIRE(s.contains(k));
    CHECK(s[k]["values"].size() == 2);
    CHECK(s[k].contains("mean"));
    CHECK(s[k].contains("ci95"));
  }
  for (const char* k : {"gpu_util_mean_pct", "sched_success_pct", "oom_kills"}) {
    CAPTURE(k);
    REQUIRE(j["results"]["excl"].contains(k));
  }
  // 4 x 10 qps is far below the replicas' 400/s: the sweep's top passes on both seeds.
  CHECK(s["slo_capacity_qps"]["values"][0] == 40.0);
  CHECK(j["results"]["excl"]["oom_kills"]["values"][1] == 0);
  CHECK(j["inputs"][0]["role"] == "scenario");
  for (std::size_t k = 0; k < 2; ++k) {
    CHECK(one.runs[0][k].services[0].goodput_qps == two.runs[0][k].services[0].goodput_qps);
    CHECK(one.runs[0][k].services[0].p99_ms_peak_hour == two.runs[0][k].services[0].p99_ms_peak_hour);
  }
  CHECK(w::format_world_table(two).find("s SLO capacity QPS") != std::string::npos);
}
#endif
