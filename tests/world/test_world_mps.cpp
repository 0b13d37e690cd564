// sharing: mps in the world run (issue 17): gpu-let's pair model (sim/serving/interference.hpp) in
// the fluid engine, values worked out by hand from data/interference/glet_2080ti (INT_MODEL_CONSTANT.CSV,
// UTIL.CSV) and docs/experiment-world.md, "Device sharing" and "The engine as run".
#include <doctest/doctest.h>

#include <array>
#include <string>

#include "gpusched/sim/world/sharing.hpp"

namespace w = gpusched::sim::world;
namespace sv = gpusched::sim::serving;

namespace {

// gpu-let's RTX 2080 Ti fit, INT_MODEL_CONSTANT.CSV literally: c0 l2_self, c1 l2_other, c2 dram_self,
// c3 dram_other, c4.
const sv::interference_constants glet{0.11290838746224496, 0.7159598718755424, 0.35486591956022895,
                                      0.0882038259888065, 0.8953693917277343};
// UTIL.CSV, resnet50 batch 32: l2_util 28.1903444258127 %, mem_util 62.27229222750162 %.
const sv::tenant_util rn50_b32{0.281903444258127, 0.6227229222750162};

}  // namespace

TEST_CASE("mps_expected_rate: two busy ResNet-50 replicas on one GPU run at 1 / alpha_pair") {
  // alpha = (c0 + c1) x 0.281903 + (c2 + c3) x 0.622723 + c4
  //       = 0.828868 x 0.281903 + 0.443070 x 0.622723 + 0.895369 = 0.233661 + 0.275910 + 0.895369 = 1.404940
  const std::array<w::mps_neighbour, 1> other{w::mps_neighbour{rn50_b32, 1.0}};
  CHECK(w::mps_expected_rate(glet, rn50_b32, other) == doctest::Approx(1.0 / 1.404940).epsilon(1e-5));
  // The same as rates()'s mps rule with both contexts runnable.
  w::sharing_params p;
  p.mode = w::sharing_mode::mps;
  p.mps = glet;
  const std::array<w::gpu_context, 2> ctx{w::gpu_context{true, rn50_b32}, w::gpu_context{true, rn50_b32}};
  std::array<double, 2> out{};
  w::rates(p, ctx, out);
  CHECK(out[0] == doctest::Approx(1.0 / 1.404940).epsilon(1e-5));
  CHECK(out[1] == doctest::Approx(1.0 / 1.404940).epsilon(1e-5));
}

TEST_CASE("mps_expected_rate: alone at rate 1; a neighbour busy half the time adds half its excess") {
  CHECK(w::mps_expected_rate(glet, rn50_b32, {}) == 1.0);
  const std::array<w::mps_neighbour, 1> idle{w::mps_neighbour{rn50_b32, 0.0}};
  CHECK(w::mps_expected_rate(glet, rn50_b32, idle) == 1.0);
  // 1 / (1 + 0.5 x 0.404940) = 1 / 1.202470 = 0.831622
  const std::array<w::mps_neighbour, 1> half{w::mps_neighbour{rn50_b32, 0.5}};
  CHECK(w::mps_expected_rate(glet, rn50_b32, half) == doctest::Approx(0.831622).epsilon(1e-5));
  // Two always-busy neighbours: the excesses add (docs/serving.md): 1 / (1 + 2 x 0.404940) = 1 / 1.809880 = 0.552523.
  const std::array<w::mps_neighbour, 2> two{w::mps_neighbour{rn50_b32, 1.0}, w::mps_neighbour{rn50_b32, 1.0}};
  CHECK(w::mps_expected_rate(glet, rn50_b32, two) == doctest::Approx(0.552523).epsilon(1e-5));
}

#if __has_include(<yaml-cpp/yaml.h>)
#include "gpusched/sim/world/run_world.hpp"

namespace {

const std::string glet_dir = std::string(GPUSCHED_SOURCE_DIR) + "/data/interference/glet_2080ti/";

// One node with `gpus` GPUs, one service of two replicas of model m (batch table {1: 10, 4: 20} ms,
// gpu-let proxy `proxy`), `rate` requests/s, two hours (the first is warm-up).
std::string mps_world(int gpus, const std::string& rate, const std::string& proxy = "resnet50",
                      bool devices_mps = true) {
  std::string devices = "devices:\n  time_slicing: {quantum_ms: 2, switch_cost_ms: 0.1, replicas_per_gpu: 4}\n";
  if (devices_mps) {
    devices += "  mps: {constants_csv: " + glet_dir + "INT_MODEL_CONSTANT.CSV, util_csv: " + glet_dir + "UTIL.CSV}\n";
  }
  return "name: t\nstatus: declared\nduration_s: 7200\nwarmup_s: 3600\nseeds: [1]\n"
         "nodes: {count: 1, gpus_per_node: " + std::to_string(gpus) +
         ", gpu_model: V100M32, gpu_memory_mib: 32768, cpu_milli: 80000, memory_mib: 524288}\n" + devices +
         "models:\n"
         "  - name: m\n"
         "    framework: pytorch_caching\n"
         "    batch_ms: {1: 10, 4: 20}\n"
         "    working_set_mib: 100\n"
         "    cpu_ms_per_item: 0\n"
         "    mps_proxy: {model: " + proxy + "}\n"
         "services:\n"
         "  - {name: s, model: m, replicas: 2, max_batch: 4, max_wait_ms: 5, slo_ms: 100, timeout_ms: 1000,\n"
         "     requests: {gpu_memory_mib: 1024, cpu_milli: 1000, memory_mib: 1024}, priority: 5, tier: prod,\n"
         "     arrivals: {rate_qps: " + rate + "}}\n"
         "restarts: {initial_s: 10, max_s: 300, startup_s: 30}\n"
         "metrics: {sample_s: 60, capacity_sweep: {multiplier: {lo: 0, hi: 4, tolerance: 0.01}}}\n"
         "profiles:\n"
         "  - {name: ts, sharing: time_slicing, scheduler: kube-default, view: {gpu: device_count}}\n"
         "  - {name: mps, base: ts, sharing: mps}\n";
}

}  // namespace

TEST_CASE("world run, mps: two saturated replicas on one GPU serve at 1 / alpha_pair of their batch") {
  // One GPU: both replicas on it. 1000 requests/s each, far above capacity, so each is busy all the
  // time (rho = 1) at max_batch 4, which gpu-let profiles: resnet50 batch 4, l2 23.02484696516914 %,
  // mem 43.9120672383918 %. alpha = 0.828868 x 0.230248 + 0.443070 x 0.439121 + 0.895369 = 1.280776;
  // each serves 4 / (20 ms x 1.280776) = 156.16 requests/s.
  const auto sc = w::parse_world_scenario(mps_world(1, "2000"), "mps.yaml");
  const auto m = w::run_world_once(sc, sc.profile("mps"), 1);
  // Dropped: all of the first 30 s (start-up), then all but 2 x 156.16/s of 2000/s:
  // 1 - 7170 x 312.32 / (7200 x 2000) = 84.45 %. Alone they would drop 80.08 %, time-sliced
  // (rate 2 / (2 x 2.1) = 0.476) 90.49 %.
  CHECK(m.services[0].dropped_pct == doctest::Approx(84.45).epsilon(0.003));
  CHECK(m.oom_kills == 0);
  // MPS has no switch gaps: the GPU is busy all the time once serving, 7170 / 7200 = 99.58 %.
  CHECK(m.gpu_util_mean_pct == doctest::Approx(99.58).epsilon(0.002));
  const auto ts = w::run_world_once(sc, sc.profile("ts"), 1);
  CHECK(ts.services[0].dropped_pct == doctest::Approx(90.49).epsilon(0.003));
}

TEST_CASE("world run, mps: a replica alone on its GPU runs at rate 1") {
  // Eight GPUs, light load: 5 requests/s per replica, capacity 4 / 20 ms = 200/s, batches of 1
  // (10 ms). Latencies over [10, 20] ms in four quarters: P99 in the top quarter at 10 + 10 x 3.5 / 4
  // = 18.75 ms, as exclusive (test_run_world.cpp). Wherever the scheduler puts the two replicas, a
  // neighbour busy 5 / 200 = 2.5 % of the time adds at most 0.025 x (alpha(resnet50 b1) - 1) =
  // 0.025 x 0.146782 = 0.37 % (UTIL.CSV resnet50 batch 1: l2 15.397 %, mem 27.939 %).
  const auto sc = w::parse_world_scenario(mps_world(8, "10"), "mps.yaml");
  const auto m = w::run_world_once(sc, sc.profile("mps"), 1);
  CHECK(m.services[0].p99_ms_peak_hour == doctest::Approx(18.75).epsilon(0.015));  // DDSketch 1% + 0.37%
  CHECK(m.services[0].goodput_qps == doctest::Approx(10.0).epsilon(0.03));
}

TEST_CASE("world run, mps: refused without devices.mps or with an unknown proxy, naming the field") {
  {
    const auto sc = w::parse_world_scenario(mps_world(1, "10", "resnet50", false), "mps.yaml");
    try {
      (void)w::run_world_once(sc, sc.profile("mps"), 1);
      FAIL("expected an error");
    } catch (const gpusched::file_error& e) {
      CHECK(std::string(e.what()).find("devices.mps") != std::string::npos);
    }
  }
  {
    const auto sc = w::parse_world_scenario(mps_world(1, "10", "no-such-model"), "mps.yaml");
    try {
      (void)w::run_world_once(sc, sc.profile("mps"), 1);
      FAIL("expected an error");
    } catch (const gpusched::file_error& e) {
      const std::string what = e.what();
      CHECK(what.find("models.m.mps_proxy") != std::string::npos);
      CHECK(what.find("mps.yaml:") != std::string::npos);
    }
  }
}
#endif
