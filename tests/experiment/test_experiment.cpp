// The experiment driver and A/B report: hand-checked statistics, determinism per seed, a single
// replica reproducing the serving engine's own metrics, and a partial gang under kube-default.
#include <doctest/doctest.h>

#include <string>

#include "gpusched/sim/experiment/report.hpp"
#include "gpusched/sim/serving/scenario_yaml.hpp"
#include "support/data_paths.hpp"

using namespace gpusched;
using namespace gpusched::sim;
using namespace gpusched::sim::experiment;

namespace {


// seed.yaml shrunk: `nodes` nodes, the first service only with `replicas` replicas, no training, no leaks.
serving::scenario small(int nodes, int replicas, double duration_s) {
  serving::scenario sc = serving::load_scenario(test_data::seed_scenario);
  sc.duration_s = duration_s;
  sc.nodes.count = nodes;
  sc.services.resize(1);
  sc.services[0].replicas = replicas;
  sc.services[0].arrivals.random_bursts_per_day = 0;
  sc.services[0].arrivals.bursts.clear();
  sc.training.clear();
  sc.leaks.clear();
  return sc;
}

profile_wiring gpusched_wiring(const serving::scenario& sc) { return resolve_profile(sc, "gpusched"); }

}  // namespace

TEST_CASE("95% t interval: mean 2, sd 1, n 3 gives half-width 4.303 / sqrt(3)") {
  const mean_ci c = summarise({1.0, 2.0, 3.0});
  CHECK(c.mean == doctest::Approx(2.0));
  CHECK(c.half == doctest::Approx(4.303 / std::sqrt(3.0)).epsilon(1e-9));
  CHECK(summarise({5.0}).half == 0.0);
  CHECK(t975(4) == doctest::Approx(2.776));  // NIST table, df 4 (five seeds)
  CHECK(t975(100) == doctest::Approx(1.960));
}

TEST_CASE("same seed gives the identical table; another seed changes the arrivals") {
  serving::scenario sc = small(2, 2, 600.0);
  const auto a = run_ab(sc, {"kube-default", "gpusched"}, {7}, 600.0);
  const auto b = run_ab(sc, {"kube-default", "gpusched"}, {7}, 600.0);
  CHECK(format_table(a) == format_table(b));
  CHECK(format_json(a) == format_json(b));
  const auto c = run_ab(sc, {"kube-default"}, {8}, 600.0);
  CHECK(c.runs[0][0].throughput_qps != a.runs[0][0].throughput_qps);
}

TEST_CASE("one node, one replica, no training: the driver reports the serving engine's own metrics") {
  const serving::scenario sc = small(1, 1, 600.0);
  const serving::latency_model lm = serving::make_latency_model(sc);
  // By hand: the replica alone on an idle node; which GPU does not matter (no neighbours).
  serving::serving_engine e(lm, sc.engine);
  const auto su = serving::populate(e, sc, lm, 3);
  e.place_replica(su.replicas[0][0], e.slot(0, 5));
  e.run_until(600.0);
  const auto& m = e.metrics(su.services[0]);
  for (const auto& w : {kube_default_wiring(), gpusched_wiring(sc)}) {
    const run_metrics r = run_once(sc, lm, w, 3);
    CHECK(r.throughput_qps == doctest::Approx(static_cast<double>(m.completed) / 600.0));
    CHECK(r.p99_ms == doctest::Approx(m.p99_s() * 1e3));
    CHECK(r.p50_ms == doctest::Approx(m.p50_s() * 1e3));
    CHECK(r.sched_success_pct == doctest::Approx(100.0));
    CHECK(r.jobs_finished == 0.0);
  }
}

TEST_CASE("kube-default binds gang members one by one and a partial gang holds GPUs; gpusched does not") {
  // Two nodes of 8 GPUs; one serving replica takes a share of one GPU on one node at t = 0 (priority 8
  // goes first); then a job of 2 workers x 8 whole GPUs needs both nodes whole. Worker 0 fits on the
  // free node, worker 1 nowhere. kube-default keeps worker 0 bound: 8 GPUs held for the whole hour,
  // job never starts. gpusched places all or nothing: 0 GPU-hours held. Success: 1 pod of 3 ran.
  serving::scenario sc = small(2, 1, 3600.0);
  serving::scenario full = serving::load_scenario(test_data::seed_scenario);
  serving::training_config t = full.training.front();
  t.count = 1;
  t.submit_s = 0.0;
  t.workers = 2;
  t.gpus_per_worker = 8;
  sc.training.push_back(t);
  const serving::latency_model lm = serving::make_latency_model(sc);
  const run_metrics k = run_once(sc, lm, kube_default_wiring(), 1);
  const run_metrics g = run_once(sc, lm, gpusched_wiring(sc), 1);
  CHECK(k.partial_gang_gpu_hours == doctest::Approx(8.0));
  CHECK(g.partial_gang_gpu_hours == 0.0);
  CHECK(k.sched_success_pct == doctest::Approx(100.0 / 3.0));
  CHECK(g.sched_success_pct == doctest::Approx(100.0 / 3.0));
  CHECK(k.jobs_finished == 0.0);
}

TEST_CASE("an unknown profile is an error naming it") {
  const serving::scenario sc = small(1, 1, 60.0);
  CHECK_THROWS_WITH_AS(resolve_profile(sc, "nope"), doctest::Contains("nope"), invalid_argument_error);
}

TEST_CASE("a leak fills the GPU once: one OOM crash, counted by the driver") {
  // One replica (1820 MiB) alone on a 32768 MiB V100; a leak of 60000 MiB/min = 1000 MiB/s from
  // t = 60 s fills the GPU at 60 + (32768 - 1820) / 1000 = 90.948 s. The crash ends the leak (the
  // restarted process starts clean), so a 600 s run sees exactly one crash and an 80 s run none.
  serving::scenario sc = small(1, 1, 600.0);
  sc.leaks.push_back(serving::leak_config{60.0, sc.services[0].name, 0, 60000.0, 0});
  const serving::latency_model lm = serving::make_latency_model(sc);
  CHECK(run_once(sc, lm, kube_default_wiring(), 1).oom_crashes == 1.0);
  CHECK(run_once(sc, lm, gpusched_wiring(sc), 1).oom_crashes == 1.0);
  CHECK(run_once(sc, lm, kube_default_wiring(), 1, 80.0).oom_crashes == 0.0);
  CHECK(run_once(sc, lm, kube_default_wiring(), 1, 95.0).oom_crashes == 1.0);
}
