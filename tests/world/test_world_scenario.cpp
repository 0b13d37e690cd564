// sim/world/world_scenario.hpp: the declared seed-world.yaml as typed values, and strict errors.
#include <doctest/doctest.h>

#if __has_include(<yaml-cpp/yaml.h>)
#include <string>

#include "support/data_paths.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/sim/world/world_scenario.hpp"

namespace w = gpusched::sim::world;

namespace {

std::string world_error_of(const std::string& text) {
  try {
    (void)w::parse_world_scenario(text, "x.yaml");
  } catch (const gpusched::file_error& e) {
    return e.what();
  }
  return "";
}

// The smallest valid world: one model, one service, one profile (line numbers below count from 1).
const std::string tiny_world =
    "name: t\n"                                                              // 1
    "status: declared\n"                                                     // 2
    "duration_s: 7200\n"                                                     // 3
    "warmup_s: 3600\n"                                                       // 4
    "seeds: [1]\n"                                                           // 5
    "nodes: {count: 1, gpus_per_node: 8, gpu_model: V100M32, gpu_memory_mib: 32768, cpu_milli: 80000, memory_mib: 524288}\n"
    "devices: {time_slicing: {quantum_ms: 2, switch_cost_ms: 0.1, replicas_per_gpu: 4}}\n"  // 7
    "models:\n"                                                              // 8
    "  - {name: m, framework: pytorch_caching, batch_ms: {1: 10, 4: 20}, working_set_mib: 100, cpu_ms_per_item: 1}\n"
    "services:\n"                                                            // 10
    "  - name: s\n"                                                          // 11
    "    model: m\n"                                                         // 12
    "    replicas: 2\n"                                                      // 13
    "    max_batch: 4\n"                                                     // 14
    "    max_wait_ms: 5\n"                                                   // 15
    "    slo_ms: 100\n"                                                      // 16
    "    timeout_ms: 1000\n"                                                 // 17
    "    requests: {gpu_memory_mib: 1024, cpu_milli: 1000, memory_mib: 1024}\n"
    "    priority: 5\n"                                                      // 19
    "    tier: prod\n"                                                       // 20
    "    arrivals: {rate_qps: 10}\n"                                         // 21
    "restarts: {initial_s: 10, max_s: 300, startup_s: 30}\n"                 // 22
    "metrics: {sample_s: 60}\n"                                              // 23
    "profiles:\n"                                                            // 24
    "  - {name: a, sharing: exclusive, scheduler: kube-default}\n"           // 25
    "  - {name: b, base: a, sharing: time_slicing, switch_cost_ms: 0.5}\n";  // 26
}  // namespace

TEST_CASE("seed-world.yaml reads as declared") {
  const auto sc = w::load_world_scenario(test_data::seed_world);
  CHECK(sc.name == "seed-world");
  CHECK(sc.node_count == 16);
  CHECK(sc.gpus_per_node == 8);
  CHECK(sc.gpu_memory_mib == 32768);
  CHECK(sc.replicas_per_gpu == 4);
  CHECK(sc.slice.quantum_ms == 2.0);
  CHECK(sc.slice.switch_cost_ms == 0.1);
  REQUIRE(sc.services.size() == 2);
  CHECK(sc.services[0].max_batch == 64);
  CHECK(sc.services[0].arrivals.rate_qps == 6720);
  CHECK(sc.services[0].scale_up.size() == 2);
  CHECK(sc.models[sc.services[1].model].framework == w::framework_memory::tf_grab_all);
  REQUIRE(sc.training.size() == 3);
  // train-resnet's loader: 356 img/s x 4 ms = 1424 milli-cores per GPU; train-bert: 1000 as written.
  CHECK(sc.training[0].cpu_demand_milli_per_gpu == doctest::Approx(1424.0));
  CHECK(sc.training[1].cpu_demand_milli_per_gpu == 1000.0);
  CHECK(sc.leaks.size() == 2);
  CHECK(sc.leaks[1].service == 1);
  CHECK(sc.sweep_hi == 4.0);
  CHECK(sc.sweep_tolerance == 0.01);
  const auto& g = sc.profile("gpusched");
  CHECK(g.sharing == w::sharing_mode::memory_accounted);
  CHECK(g.view == w::gpu_view::memory);
  CHECK(g.framework_limit);
  CHECK(g.two_tier_queue);
  CHECK(g.gangs_all_or_nothing);
  CHECK(g.budget_max == 2);
  CHECK(g.overcommit_cpu == 1.2);
  CHECK(g.config.find("scheduler-config.yaml") != std::string::npos);
  // An ablation inherits its base and changes only what it names.
  const auto& gt = sc.profile("gpusched-timeslice");
  CHECK(gt.sharing == w::sharing_mode::time_slicing);
  CHECK_FALSE(gt.framework_limit);
  CHECK(gt.two_tier_queue);
  CHECK(gt.view == w::gpu_view::memory);
  CHECK(sc.profile("kube-timeslice-switch-0").switch_cost_ms.value() == 0.0);
  CHECK(sc.profile("kube-exclusive").config.empty());
  CHECK(sc.profile("kube-exclusive").view == w::gpu_view::device_count);
  CHECK_THROWS_AS((void)sc.profile("nope"), gpusched::invalid_argument_error);
}

TEST_CASE("a tiny world parses; base profiles are copied") {
  const auto sc = w::parse_world_scenario(tiny_world, "x.yaml");
  CHECK(sc.services[0].replicas == 2);
  CHECK(sc.models[0].batch_ms.size() == 2);
  CHECK(sc.profile("b").sharing == w::sharing_mode::time_slicing);
  CHECK(sc.profile("b").switch_cost_ms.value() == 0.5);
  CHECK_FALSE(sc.profile("a").switch_cost_ms.has_value());
  CHECK(w::is_world_scenario_text(tiny_world));
  CHECK_FALSE(w::is_world_scenario_text("name: x\nnodes: {count: 1}\n"));
}

TEST_CASE("strict errors name file:line and the field") {
  auto with = [](std::string from, const std::string& a, const std::string& b) {
    from.replace(from.find(a), a.size(), b);
    return from;
  };
  // An unknown key (a typo of max_wait_ms) at line 15.
  const std::string e1 = world_error_of(with(tiny_world, "max_wait_ms: 5", "max_wait_s: 5"));
  CHECK(e1.find("x.yaml:15") != std::string::npos);
  CHECK(e1.find("max_wait_s") != std::string::npos);
  // A bad enum value at line 25.
  const std::string e2 = world_error_of(with(tiny_world, "sharing: exclusive", "sharing: exclusiv"));
  CHECK(e2.find("x.yaml:25") != std::string::npos);
  CHECK(e2.find("profiles[0].sharing") != std::string::npos);
  // max_batch beyond the model's table (line 14).
  const std::string e3 = world_error_of(with(tiny_world, "max_batch: 4", "max_batch: 8"));
  CHECK(e3.find("x.yaml:14") != std::string::npos);
  CHECK(e3.find("max_batch") != std::string::npos);
  // A quoted number.
  const std::string e4 = world_error_of(with(tiny_world, "replicas: 2", "replicas: \"2\""));
  CHECK(e4.find("x.yaml:13") != std::string::npos);
  // A base that does not exist (line 26), and a missing key.
  CHECK(world_error_of(with(tiny_world, "base: a", "base: z")).find("x.yaml:26") != std::string::npos);
  CHECK(world_error_of(with(tiny_world, "    slo_ms: 100\n", "")).find("slo_ms") != std::string::npos);
  CHECK(world_error_of(with(tiny_world, "switch_cost_ms: 0.5", "switch_cost_ms: -1")).find("switch_cost_ms") != std::string::npos);
}
#endif
