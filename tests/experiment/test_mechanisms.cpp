// The mechanisms the driver wires per profile (docs/experiment.md): Kubernetes preemption, leak
// eviction, overcommit, and the scenario's per-profile switches. Expected values worked out by hand
// in each test's comment.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "gpusched/sim/experiment/report.hpp"
#include "gpusched/sim/serving/scenario_yaml.hpp"
#include "support/data_paths.hpp"

using namespace gpusched;
using namespace gpusched::sim;
using namespace gpusched::sim::experiment;

namespace {

const std::string dir = std::string(GPUSCHED_SOURCE_DIR) + "/data/scenarios";

// seed.yaml shrunk to one 8-GPU node, the ResNet-50 service only (10 QPS, no bursts), no training, no leaks.
serving::scenario one_node(int replicas, double duration_s) {
  serving::scenario sc = serving::load_scenario(test_data::seed_scenario);
  sc.duration_s = duration_s;
  sc.nodes.count = 1;
  sc.services.resize(1);
  sc.services[0].replicas = replicas;
  sc.services[0].arrivals.rate_qps = 10.0;
  sc.services[0].arrivals.random_bursts_per_day = 0;
  sc.services[0].arrivals.bursts.clear();
  sc.training.clear();
  sc.leaks.clear();
  return sc;
}

serving::training_config job(int count, int gpus, milli cpu, double duration_s) {
  serving::training_config t = serving::load_scenario(test_data::seed_scenario).training.front();
  t.count = count;
  t.submit_s = 0.0;
  t.every_s = 0.0;
  t.workers = 1;
  t.gpus_per_worker = gpus;
  t.cpu_milli = cpu;
  t.duration_s = duration_s;
  return t;
}

}  // namespace

TEST_CASE("a replica scaled up onto a node full of training preempts the training worker, once") {
  // One node of 8 GPUs. t = 0: a training job of 1 worker x 8 GPUs (priority 2) takes them all.
  // t = 60: one whole-GPU replica (priority 8) arrives and fits nowhere; preemption evicts the worker
  // (the only pod, 1 victim) and the job returns to pending. It needs 8 free GPUs and 7 are free, so
  // it never starts again: 1 preemption, 1 job restarted, 0 finished, for both profiles (the first
  // preemption of a job is never protected by the budget). Both pods ran: success 100%.
  serving::scenario sc = one_node(0, 600.0);
  sc.services[0].gpu_share_milli = 1000;
  sc.services[0].scale_up.push_back({60.0, 1, 0});
  sc.training.push_back(job(1, 8, 32000, 3600.0));
  const serving::latency_model lm = serving::make_latency_model(sc);
  for (const auto& w : {kube_default_wiring(), resolve_profile(sc, "gpusched")}) {
    CAPTURE(w.name);
    const run_metrics r = run_once(sc, lm, w, 1);
    CHECK(r.preemptions == 1.0);
    CHECK(r.jobs_restarted == 1.0);
    CHECK(r.jobs_finished == 0.0);
    CHECK(r.sched_success_pct == doctest::Approx(100.0));
    CHECK(r.replicas_pending_s == 0.0);  // bound in the cycle it arrived
  }
  profile_wiring off = kube_default_wiring();
  off.preemption = false;  // without preemption the replica waits from t = 60 to the end: 540 s
  const run_metrics n = run_once(sc, lm, off, 1);
  CHECK(n.preemptions == 0.0);
  CHECK(n.replicas_pending_s == doctest::Approx(540.0));
  CHECK(n.sched_success_pct == doctest::Approx(50.0));
}

TEST_CASE("leak eviction restarts the leaking replica before its GPU fills: OOM crashes 0 vs 1") {
  // One replica (1820 MiB) alone on a 32768 MiB GPU leaks 120 MiB/min = 2 MiB/s from t = 60 s; the
  // GPU fills at 60 + (32768 - 1820) / 2 = 15534 s. kube-default: one OOM crash in a 5 h run.
  // gpusched: free memory is read every 60 s and falls 2 MiB/s in a straight line (120 MiB per
  // reading, whole MiB: se = 0). Horizon = 60 s (interval) + 30 s (seed.yaml's startup_s) = 90 s; the
  // replica is restarted at the first reading with time to full <= 90 + 60 = 150 s: at t = 15360,
  // 348 MiB free (174 s); at t = 15420, 228 MiB free: 114 s <= 150, restarted in place with 114 s
  // left. The restarted process starts clean (the leak ends): 1 restart, 0 crashes.
  // kube-default's leak ends in the OOM crash: 0 s left.
  serving::scenario sc = one_node(1, 18000.0);
  sc.leaks.push_back(serving::leak_config{60.0, sc.services[0].name, 0, 120.0, 0});
  const serving::latency_model lm = serving::make_latency_model(sc);
  const run_metrics k = run_once(sc, lm, kube_default_wiring(), 1);
  const run_metrics g = run_once(sc, lm, resolve_profile(sc, "gpusched"), 1);
  CHECK(k.oom_crashes == 1.0);
  CHECK(k.leak_restarts == 0.0);
  CHECK(g.oom_crashes == 0.0);
  CHECK(g.leak_restarts == 1.0);
  CHECK(g.leak_ttf_left_min_s == doctest::Approx(114.0));
  CHECK(k.leak_ttf_left_min_s == 0.0);
}

TEST_CASE("leak eviction catches a leak slower than the old 1 MiB/s threshold, by its time left") {
  // As above with 48 MiB/min = 0.8 MiB/s (below the slope-threshold detector's 1 MiB/s: it never
  // acted, and the GPU filled): full at 60 + (32768 - 1820) / 0.8 = 38745 s. Readings every 60 s fall
  // 48 MiB each; restarted at the first reading with time to full <= 150 s: t = 38580 leaves 165 s
  // (132 MiB), t = 38640 leaves 105 s (84 MiB): restarted there, 105 s before full. kube-default:
  // the OOM crash.
  serving::scenario sc = one_node(1, 39600.0);
  sc.leaks.push_back(serving::leak_config{60.0, sc.services[0].name, 0, 48.0, 0});
  const serving::latency_model lm = serving::make_latency_model(sc);
  const run_metrics k = run_once(sc, lm, kube_default_wiring(), 1);
  const run_metrics g = run_once(sc, lm, resolve_profile(sc, "gpusched"), 1);
  CHECK(k.oom_crashes == 1.0);
  CHECK(g.oom_crashes == 0.0);
  CHECK(g.leak_restarts == 1.0);
  CHECK(g.leak_ttf_left_min_s == doctest::Approx(105.0).epsilon(1e-6));
}

TEST_CASE("overcommit 1.2 lets two Burstable workers share a node's CPU that one fills without it") {
  // One node of 80 cores; two jobs of 1 worker x 1 GPU x 48 cores (Burstable), 600 s each, both
  // submitted at t = 0. Without overcommit 48 + 48 = 96 > 80: the second starts when the first
  // ends (t = 600) and finishes at 1200: mean JCT (600 + 1200) / 2 = 900 s. With the seed's 1.2,
  // 96 <= 1.2 * 80 = 96: both run at once, mean JCT 600 s.
  serving::scenario sc = one_node(0, 3600.0);
  sc.training.push_back(job(2, 1, 48000, 600.0));
  const serving::latency_model lm = serving::make_latency_model(sc);
  profile_wiring on = resolve_profile(sc, "gpusched");
  REQUIRE(on.overcommit.burstable.cpu_permille == 1200);
  REQUIRE(on.fit == fit_mode::overcommit);
  profile_wiring off = on;
  off.overcommit = overcommit_policy{};
  off.fit = fit_mode::profile;  // the profile's own NodeResourcesFit decides CPU and memory again
  const run_metrics a = run_once(sc, lm, on, 1);
  const run_metrics b = run_once(sc, lm, off, 1);
  CHECK(a.jobs_finished == 2.0);
  CHECK(b.jobs_finished == 2.0);
  CHECK(a.jct_mean_s == doctest::Approx(600.0));
  CHECK(b.jct_mean_s == doctest::Approx(900.0));
}

TEST_CASE("per-profile switches: defaults, overrides and errors naming field and line") {
  const std::string text = serving::read_text_file(test_data::seed_scenario);
  const serving::scenario sc = serving::parse_scenario(text, "seed.yaml", dir);
  const profile_wiring k = resolve_profile(sc, "kube-default");
  CHECK(k.preemption);
  CHECK_FALSE(k.preemption_budget);
  CHECK_FALSE(k.two_tier_queue);
  CHECK_FALSE(k.gang_all_or_nothing);
  CHECK_FALSE(k.overcommits());
  CHECK_FALSE(k.leak_eviction);
  const profile_wiring g = resolve_profile(sc, "gpusched");
  CHECK(g.two_tier_queue);
  CHECK(g.gang_all_or_nothing);
  CHECK(g.preemption_budget);
  CHECK(g.budget.cooldown_s == 21600.0);  // seed.yaml's gpusched entry
  CHECK(g.overcommit.burstable.cpu_permille == 1200);
  CHECK(g.leak_eviction);

  // An override on the built-in profile, and a bad value on its own line.
  const std::string anchor = "  - name: kube-default";
  const auto at = text.find(anchor);
  REQUIRE(at != std::string::npos);
  const auto eol = text.find('\n', at);
  std::size_t line = 1;
  for (std::size_t i = 0; i < eol; ++i) line += text[i] == '\n' ? 1 : 0;  // the anchor's line
  std::string ok = text;
  ok.insert(eol + 1, "    leak_eviction: {enabled: true}\n    overcommit: {cpu: 1.5, memory: 1.0}\n");
  const profile_wiring k2 = resolve_profile(serving::parse_scenario(ok, "s.yaml", dir), "kube-default");
  CHECK(k2.leak_eviction);
  CHECK(k2.overcommit.burstable.cpu_permille == 1500);
  CHECK(k2.overcommit.burstable.memory_permille == 1000);

  // The inserted key sits on the line after the anchor.
  const std::string want_queue = "s.yaml:" + std::to_string(line + 1) + ": profiles[0].queue";
  const std::string want_share = "s.yaml:" + std::to_string(line + 1) + ": profiles[0].dev_share_period";
  std::string bad = text;
  bad.insert(eol + 1, "    queue: fifo\n");
  CHECK_THROWS_WITH_AS(serving::parse_scenario(bad, "s.yaml", dir),
                       doctest::Contains(want_queue.c_str()), file_error);
  std::string bad2 = text;
  bad2.insert(eol + 1, "    overcommit: {cpu: 0.9, memory: 1.0}\n");
  CHECK_THROWS_WITH_AS(serving::parse_scenario(bad2, "s.yaml", dir), doctest::Contains("profiles[0].overcommit.cpu"),
                       file_error);
  std::string bad3 = text;
  bad3.insert(eol + 1, "    dev_share_period: 1\n");
  CHECK_THROWS_WITH_AS(serving::parse_scenario(bad3, "s.yaml", dir),
                       doctest::Contains(want_share.c_str()),
                       file_error);
}

TEST_CASE("scale_up: replicas submitted later count in the success denominator and are placed then") {
  // One node, 1 replica at t = 0 and 2 more at t = 120 (half GPUs: all fit). 3 pods submitted, 3 ran.
  serving::scenario sc = one_node(1, 300.0);
  sc.services[0].scale_up.push_back({120.0, 2, 0});
  const serving::latency_model lm = serving::make_latency_model(sc);
  const run_metrics a = run_once(sc, lm, resolve_profile(sc, "gpusched"), 4);
  const run_metrics b = run_once(sc, lm, resolve_profile(sc, "gpusched"), 4);
  CHECK(a.sched_success_pct == doctest::Approx(100.0));
  CHECK(a.replicas_pending_s == 0.0);
  CHECK(a.throughput_qps == b.throughput_qps);  // determinism per seed
  CHECK(a.p99_ms == b.p99_ms);
}

TEST_CASE("the preemption budget protects a job preempted once (k = 1) so that it can run") {
  // One node of 8 GPUs, members one by one, priority order. Job a (8 GPUs, priority 2, 10000 s)
  // starts at t = 0. Job b (8 GPUs, priority 3, 600 s) arrives at 60 and preempts a (1st); b ends
  // at 660 and a restarts then. Job c (like b) arrives at 1200. Without a budget c preempts a again
  // (2 preemptions, 2 restarts, b and c finish by 1800). With k = 1, W = 86400, C = 21600: a has
  // 1 preemption in (660 - W, 660] and 1200 < 660 + C, so it is protected: c waits, 1 preemption,
  // 1 restart, only b finishes within the 3000 s run.
  serving::scenario sc = one_node(0, 3000.0);
  serving::training_config a = job(1, 8, 32000, 10000.0), b = job(1, 8, 32000, 600.0);
  a.name = "a";
  a.priority = 2;
  b.name = "b";
  b.priority = 3;
  b.submit_s = 60.0;
  serving::training_config c = b;
  c.name = "c";
  c.submit_s = 1200.0;
  sc.training = {a, b, c};
  const serving::latency_model lm = serving::make_latency_model(sc);
  profile_wiring free_for_all = kube_default_wiring();
  const run_metrics n = run_once(sc, lm, free_for_all, 1);
  CHECK(n.preemptions == 2.0);
  CHECK(n.jobs_restarted == 2.0);
  CHECK(n.jobs_finished == 2.0);
  profile_wiring budgeted = kube_default_wiring();
  budgeted.preemption_budget = true;
  budgeted.budget = budget_options{1, 86400.0, 21600.0, true};
  const run_metrics g = run_once(sc, lm, budgeted, 1);
  CHECK(g.preemptions == 1.0);
  CHECK(g.jobs_restarted == 1.0);
  CHECK(g.jobs_finished == 1.0);
}

TEST_CASE("overcommit switches the fit mechanism without touching the profile's text") {
  // A model literally named "on" must be quoted (YAML 1.1 reads on as true; the strict reader refuses
  // the bare form, ADR 0006). The text is parsed as written in both modes; with fit_mode::overcommit
  // NodeResourcesFit's filter is overcommit_fit ("Overcommit", after the profile's checks) instead.
  const std::string text =
      "apiVersion: kubescheduler.config.k8s.io/v1beta3\n"
      "kind: KubeSchedulerConfiguration\n"
      "profiles:\n"
      "- schedulerName: s\n"
      "  plugins:\n"
      "    score:\n"
      "      enabled:\n"
      "      - name: ModelAffinity\n"
      "        weight: 5\n"
      "  pluginConfig:\n"
      "  - name: ModelAffinity\n"
      "    args:\n"
      "      interferingPairs: [['on', bert]]\n";
  using C = experiment_cluster;
  const auto names = [](const auto& cfg) {
    std::vector<std::string> v;
    const auto& prof = cfg.profiles.front().profile;
    for (std::size_t i = 0; i < prof.check_count(); ++i) v.emplace_back(prof.check_name(i));
    return v;
  };
  profile_wiring w;
  w.config_text = text;
  w.config_source = "t.yaml";
  const std::string before = w.config_text;
  const auto as_written = wired_config<C>(w);
  REQUIRE(names(as_written) == std::vector<std::string>{"NodeResourcesFit"});  // YAML's implicit fit filter
  w.fit = fit_mode::overcommit;
  const auto switched = wired_config<C>(w);
  CHECK(names(switched) == std::vector<std::string>{"Overcommit"});
  CHECK(w.config_text == before);
  // Bad NodeResourcesFit args are still refused when overcommit_fit stands in for its filter.
  w.config_text = text + "  - name: NodeResourcesFit\n    args:\n      scoringStrategy: {type: Nope}\n";
  CHECK_THROWS(wired_config<C>(w));
}
