// The scenario file: the default seed.yaml loads and populates an engine; errors carry file:line;
// a whole scenario run is deterministic per seed.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "gpusched/sim/serving/scenario_yaml.hpp"
#include "serving/scenario_fixture.hpp"

using namespace gpusched;
using namespace gpusched::sim::serving;
using gpusched::test::interference_dir;
using gpusched::test::replace_line;

namespace {

const std::string seed_file = std::string(GPUSCHED_SOURCE_DIR) + "/data/scenarios/seed.yaml";

std::string error_of(const std::string& text) {
  try {
    (void)parse_scenario(text, "t.yaml", interference_dir);
  } catch (const file_error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("serving.scenario.the default seed scenario loads with every parameter") {
  const scenario sc = load_scenario(seed_file);
  CHECK(sc.name == "seed");
  CHECK(sc.duration_s == 86400.0);
  CHECK(sc.seeds == std::vector<std::uint64_t>{1, 2, 3, 4, 5});
  CHECK(sc.nodes.count == 16);
  CHECK(sc.nodes.gpus_per_node == 8);
  CHECK(sc.nodes.gpu_model == "V100M32");
  CHECK(sc.nodes.gpu_memory_mib == 32768);
  CHECK(std::filesystem::exists(sc.latency.util_csv));
  CHECK(std::filesystem::exists(sc.latency.constants_csv));
  CHECK(sc.latency.unit == duration_unit::seconds);
  CHECK(sc.latency.scaling == share_scaling::amdahl_sm);
  REQUIRE(sc.latency.models.size() == 2);
  CHECK(sc.latency.models[0].gpu_scale == 0.2085);
  CHECK(sc.latency.models[1].gpu_scale == 0.73);
  REQUIRE(sc.services.size() == 2);
  const auto& res = sc.services[0];
  CHECK(res.name == "resnet50-infer");
  CHECK(res.replicas == 8);
  CHECK(res.max_wait_s == doctest::Approx(0.010));
  CHECK(res.slo_s == doctest::Approx(0.200));
  CHECK(res.timeout_s == doctest::Approx(2.0));
  CHECK(res.arrivals.rate_qps == 300.0);
  CHECK(res.arrivals.diurnal_amplitude == 0.5);
  CHECK(res.arrivals.diurnal_peak_s == 50400.0);
  REQUIRE(res.arrivals.bursts.size() == 1);
  CHECK(res.arrivals.bursts[0].multiplier == 3.0);
  CHECK(res.arrivals.random_bursts_per_day == 6.0);
  CHECK(sc.services[1].arrivals.bursts.empty());
  REQUIRE(sc.training.size() == 2);
  CHECK(sc.training[0].tier_ == tier::dev);
  CHECK(sc.training[1].proxy_model == "bert");
  REQUIRE(sc.leaks.size() == 2);
  CHECK(sc.leaks[1].mib_per_min == 128.0);
  REQUIRE(sc.profiles.size() == 2);
  CHECK(sc.profiles[0].name == "kube-default");
  CHECK(sc.profiles[1].name == "gpusched");
  // The seed's scheduler configuration, resolved against the scenario's folder (docs/experiment.md).
  CHECK(sc.profiles[1].config.ends_with("/data/scheduler-config.yaml"));
  CHECK(sc.engine.startup_s == 30.0);
  CHECK(sc.utilisation_sample_s == 60.0);

  const latency_model lm = make_latency_model(sc);
  serving_engine e(lm, sc.engine);
  const serving_setup setup = populate(e, sc, lm, sc.seeds[0]);
  CHECK(e.node_count() == 16);
  CHECK(e.gpu_count() == 128);
  CHECK(e.replica_count() == 16);
  REQUIRE(setup.replicas.size() == 2);
  CHECK(setup.replicas[1].size() == 8);

  const auto jobs = expand_training(sc);
  CHECK(jobs.size() == 12 + 24);
  CHECK(jobs[1].name == "train-resnet-1");
  CHECK(jobs[1].submit_s == 7200.0);
  CHECK(jobs[13].submit_s == 1800.0 + 3600.0);
  const auto pods = training_pods(jobs[0]);
  REQUIRE(pods.size() == 2);
  CHECK(pods[0].num_gpu == 8);
  CHECK(pods[0].gpu_milli == 1000);
  CHECK(pods[0].gang == "train-resnet-0");
  CHECK(pods[0].gang_min_members == 2);
  CHECK(pods[0].tier_ == tier::dev);
  const pod rp = replica_pod(sc.services[0], 3);
  CHECK(rp.name == "resnet50-infer-3");
  CHECK(rp.gpu_milli == 500);
  CHECK(rp.model_type.view() == "resnet50");
  CHECK(rp.tier_ == tier::prod);
  CHECK(rp.qos == qos_class::guaranteed);
}

TEST_CASE("serving.scenario.malformed input is file_error with file:line") {
  const std::string ok = gpusched::test::minimal_scenario();
  CHECK(error_of(ok) == "no error");
  CHECK(error_of(replace_line(ok, 2, "duration_s: -5")) ==
        "t.yaml:2: scenario.duration_s: must be > 0 and <= 3.1536e+07, got -5");
  CHECK(error_of(replace_line(ok, 13, "    replicas: two")) ==
        "t.yaml:13: services[0].replicas: expected an integer, got 'two'");
  CHECK(error_of(replace_line(ok, 14, "    gpu_share_milli: 1500")) ==
        "t.yaml:14: services[0].gpu_share_milli: must be within 1..1000, got 1500");
  CHECK(error_of(replace_line(ok, 16, "    max_wait_s: 5")) == "t.yaml:16: services[0].max_wait_s: unknown key "
        "(allowed: name, model, replicas, gpu_share_milli, gpu_memory_mib, cpu_milli, memory_mib, priority, tier, "
        "max_batch, max_wait_ms, slo_ms, timeout_ms, routing, arrivals, scale_up)");
  CHECK(error_of(replace_line(ok, 17, "    slo: 100")) == "t.yaml:17: services[0].slo: unknown key "
        "(allowed: name, model, replicas, gpu_share_milli, gpu_memory_mib, cpu_milli, memory_mib, priority, tier, "
        "max_batch, max_wait_ms, slo_ms, timeout_ms, routing, arrivals, scale_up)");
  CHECK(error_of(replace_line(ok, 18, "    arrivals: {rate_qps: 50, diurnal: {amplitude: 2}}")) ==
        "t.yaml:18: services[0].arrivals.diurnal.amplitude: must be within 0..1, got 2");
  CHECK(error_of(replace_line(ok, 8, "  duration_unit: us")) ==
        "t.yaml:8: latency_model.duration_unit: expected s or ms, got 'us'");
  CHECK(error_of(replace_line(ok, 3, "seeds: []")) == "t.yaml:3: seeds: expected a non-empty list of integers");
  CHECK(error_of(replace_line(ok, 12, "    model: [resnet50]")) == "t.yaml:12: services[0].model: expected a string, got a list");
  CHECK(error_of(replace_line(ok, 12, "    model: resnet50\n    tier: staging")) ==
        "t.yaml:13: services[0].tier: expected prod or dev, got 'staging'");
  CHECK(error_of(replace_line(ok, 11, "  - name: r\n    routing: random")) ==
        "t.yaml:12: services[0].routing: unknown routing policy 'random' (expected round_robin or least_outstanding)");
  CHECK(error_of(replace_line(ok, 12, "")) == "t.yaml:11: services[0].model: missing");
  CHECK(error_of(replace_line(ok, 13, "    replicas: [1, 2")).rfind("t.yaml:14: YAML: ", 0) == 0);
}

TEST_CASE("serving.scenario.references are checked against the profile table with the scenario line") {
  auto build_error = [](const std::string& text) -> std::string {
    try {
      const scenario sc = parse_scenario(text, "t.yaml", interference_dir);
      const latency_model lm = make_latency_model(sc);
      serving_engine e(lm);
      try {
        (void)populate(e, sc, lm, 1);
      } catch (...) {
        CHECK(e.node_count() == 0);  // nothing changed
        CHECK(e.service_count() == 0);
        throw;
      }
    } catch (const file_error& err) {
      return err.what();
    }
    return "no error";
  };
  const std::string ok = gpusched::test::minimal_scenario();
  CHECK(build_error(ok) == "no error");
  CHECK(build_error(replace_line(ok, 9, "  models: [{name: resnet-50, gpu_scale: 0.2}]")) ==
        "t.yaml:9: latency_model.models: 'resnet-50' is not in " + interference_dir + "UTIL.CSV");
  CHECK(build_error(replace_line(ok, 12, "    model: bert")) ==
        "t.yaml:11: services.r.model: 'bert' is not in latency_model.models");
  CHECK(build_error(replace_line(ok, 16, "    max_batch: 64")) ==
        "t.yaml:11: services.r.max_batch: 64 is above the profiled maximum 32");
  CHECK(build_error(replace_line(ok, 20, "  - {at_s: 10, service: r, replica: 2, mib_per_min: 60}")) ==
        "t.yaml:20: leaks.replica: service 'r' has 2 replicas (0-based index)");
  CHECK(build_error(replace_line(ok, 20, "  - {at_s: 10, service: s, replica: 0, mib_per_min: 60}")) ==
        "t.yaml:20: leaks.service: no service named 's'");
}

TEST_CASE("serving.scenario.a scenario run is deterministic per seed") {
  scenario sc = load_scenario(seed_file);
  sc.duration_s = 300.0;
  sc.nodes.count = 2;
  const latency_model lm = make_latency_model(sc);
  auto run = [&](std::uint64_t seed) {
    serving_engine e(lm, sc.engine);
    const serving_setup setup = populate(e, sc, lm, seed);
    // A fixed stand-in placement (the schedulers come with the integration): replica k of service i
    // on GPU (k + i) mod 16, i.e. ResNet-50 and BERT replicas share GPUs pairwise.
    for (std::size_t i = 0; i < setup.replicas.size(); ++i) {
      for (std::size_t k = 0; k < setup.replicas[i].size(); ++k) {
        e.place_replica(setup.replicas[i][k], static_cast<gpu_slot>((k + i) % e.gpu_count()));
      }
    }
    e.run_until(sc.duration_s + 5.0);
    std::vector<double> out;
    for (const service_id s : setup.services) {
      const auto& m = e.metrics(s);
      out.insert(out.end(), {static_cast<double>(m.arrived), static_cast<double>(m.completed), m.latency_sum_s,
                             m.p95_s(), static_cast<double>(m.batches)});
    }
    return out;
  };
  const auto a = run(1);
  CHECK(a[0] > 0.0);
  CHECK(a == run(1));
  CHECK(a != run(2));
}
