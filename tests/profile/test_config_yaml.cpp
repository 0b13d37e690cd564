#include <doctest/doctest.h>

#include <string>

#include "gpusched/core/in_memory_cluster.hpp"
#include "gpusched/profile/config_yaml.hpp"
#include "gpusched/profile/static_profile.hpp"
#include "gpusched/preflight/gpu_check.hpp"
#include "gpusched/schedule/schedule_one.hpp"
#include "gpusched/scoring/fgd.hpp"
#include "gpusched/scoring/load_aware.hpp"
#include "gpusched/scoring/model_affinity.hpp"
#include "profile/config_error_of.hpp"
#include "support/builders.hpp"

using namespace gpusched;

namespace {
const std::string v1beta2_head =
    "apiVersion: kubescheduler.config.k8s.io/v1beta2\n"
    "kind: KubeSchedulerConfiguration\n"
    "profiles:\n"
    "- schedulerName: ai-scheduler\n";
}  // namespace

TEST_CASE("profile.the seed's scheduler-config.yaml loads as written") {
  const auto cfg = load_scheduler_config(std::string(GPUSCHED_SOURCE_DIR) + "/data/scheduler-config.yaml");
  REQUIRE(cfg.profiles.size() == 1);
  const auto& p = cfg.profile("ai-scheduler");
  REQUIRE(p.profile.check_count() == 2);
  CHECK(p.profile.check_name(0) == "NodeResourcesFit");  // on by default, as in Kubernetes
  CHECK(p.profile.check_name(1) == "GPUCheck");
  REQUIRE(p.profile.score_plugin_count() == 2);
  CHECK(p.profile.score_plugin_name(0) == "LoadAware");
  CHECK(p.profile.score_plugin_weight(0) == 10);
  CHECK(p.profile.score_plugin_name(1) == "ModelAffinity");
  CHECK(p.profile.score_plugin_weight(1) == 5);
  CHECK(p.options.percentage_of_nodes_to_score == 100);
  CHECK_THROWS_AS((void)cfg.profile("default-scheduler"), invalid_argument_error);
}

TEST_CASE("profile.the loaded profile decides like the static seed profile") {
  const auto cfg = load_scheduler_config(std::string(GPUSCHED_SOURCE_DIR) + "/data/scheduler-config.yaml");
  auto stat = make_profile(checks(resource_fit{}, gpu_check{}), scores(weighted{load_aware{}, 10}, weighted{model_affinity{}, 5}));
  in_memory_cluster a;
  for (int i = 0; i < 6; ++i) a.add_node(testing::gpu_node("n" + std::to_string(i), 32000, 65536, 4, i % 2 ? "T4" : "V100M32"));
  in_memory_cluster b = a;
  scheduler<in_memory_cluster, dynamic_profile<in_memory_cluster>> s1(cfg.profiles[0].profile, {100, 9, false});
  scheduler<in_memory_cluster, decltype(stat)> s2(stat, {100, 9, false});
  for (int i = 0; i < 30; ++i) {
    const pod p = make_pod("p" + std::to_string(i)).cpu(3000).memory(4096).gpu_share(100 + 70 * (i % 13))
                      .model(i % 3 ? "bert" : "resnet50");
    CHECK(s1.place_one(a, p).where == s2.place_one(b, p).where);
  }
  CHECK(a == b);
}

TEST_CASE("profile.pluginConfig args") {
  const auto cfg = parse_scheduler_config(v1beta2_head +
                                          "  percentageOfNodesToScore: 0\n"
                                          "  plugins:\n"
                                          "    filter:\n"
                                          "      enabled:\n"
                                          "      - name: LoadAware\n"
                                          "    score:\n"
                                          "      enabled:\n"
                                          "      - name: NodeResourcesFit\n"
                                          "        weight: 3\n"
                                          "      - name: NodeResourcesBalancedAllocation\n"
                                          "  pluginConfig:\n"
                                          "  - name: NodeResourcesFit\n"
                                          "    args:\n"
                                          "      overcommit: {cpu: 1.2}\n"
                                          "      scoringStrategy:\n"
                                          "        type: MostAllocated\n"
                                          "        resources: [{name: cpu, weight: 1}, {name: nvidia.com/gpu, weight: 3}]\n"
                                          "  - name: LoadAware\n"
                                          "    args: {usageThresholds: {cpu: 50}}\n");
  const auto& p = cfg.profiles[0];
  CHECK(p.options.percentage_of_nodes_to_score == 0);
  REQUIRE(p.profile.check_count() == 2);
  CHECK(p.profile.check_name(0) == "NodeResourcesFit");
  CHECK(p.profile.check_name(1) == "LoadAwareFilter");
  CHECK(p.profile.score_plugin_name(0) == "MostAllocated");
  CHECK(p.profile.score_plugin_weight(0) == 3);
  CHECK(p.profile.score_plugin_weight(1) == 1);  // default weight

  // Behaviour: 120% CPU ceiling, CPU threshold 50%, MostAllocated over cpu (1) and GPU (3).
  in_memory_cluster c;
  c.add_node(testing::gpu_node("a", 10000, 65536, 4));
  c.add_node(testing::gpu_node("b", 10000, 65536, 4));
  const pod big = make_pod("big").cpu(11000);
  reason r[2];
  p.profile.filter(c, big, 0, 2, r);
  CHECK(r[0] == reason::ok);  // 11000 <= 12000
  const node_metrics hot{0.55, 0.1, 0.1};
  c.set_load(1, &hot);
  p.profile.filter(c, make_pod("small").cpu(1), 0, 2, r);
  CHECK(r[0] == reason::ok);
  CHECK(r[1] == reason::cpu_load_too_high);
  const node_index nodes[] = {0};
  std::int64_t raw[2];
  p.profile.score(c, make_pod("g").cpu(5000).gpus(2), nodes, raw);
  CHECK(raw[0] == (50 * 1 + 50 * 3) / 4);  // cpu 5000/10000, GPU 2000/4000
}

TEST_CASE("profile.bad configs name file:line and load nothing") {
  CHECK(test::config_error_of(v1beta2_head + "  plugins:\n    score:\n      enabled:\n      - name: NoSuchPlugin\n") ==
        "cfg.yaml:8: profiles[0].plugins.score.enabled[0].name: unknown plugin 'NoSuchPlugin'");
  CHECK(test::config_error_of(v1beta2_head + "  plugins:\n    score:\n      enabled:\n      - name: LoadAware\n        weight: 0\n") ==
        "cfg.yaml:9: profiles[0].plugins.score.enabled[0].weight: weight of 'LoadAware' must be within 1..100, got 0");
  CHECK(test::config_error_of(v1beta2_head + "  plugins:\n    score:\n      enabled:\n      - name: LoadAware\n        weight: 101\n") ==
        "cfg.yaml:9: profiles[0].plugins.score.enabled[0].weight: weight of 'LoadAware' must be within 1..100, got 101");
  CHECK(test::config_error_of(v1beta2_head + "  plugins:\n    filter:\n      enabled:\n      - name: ModelAffinity\n") ==
        "cfg.yaml:8: profiles[0].plugins.filter.enabled[0].name: plugin 'ModelAffinity' has no filter extension");
  CHECK(test::config_error_of(v1beta2_head + "  plugin:\n") == "cfg.yaml:5: profiles[0].plugin: unknown key (allowed: schedulerName, plugins, pluginConfig, percentageOfNodesToScore)");
  CHECK(test::config_error_of("apiVersion: v1\nkind: KubeSchedulerConfiguration\nprofiles: []\n") ==
        "cfg.yaml:1: apiVersion: unsupported 'v1' (kubescheduler.config.k8s.io/v1beta2, v1beta3 or v1)");
  CHECK(test::config_error_of(v1beta2_head + "  plugins: [\n") .rfind("cfg.yaml:", 0) == 0);  // malformed YAML
  CHECK(test::config_error_of(v1beta2_head + "  pluginConfig:\n  - name: LoadAware\n    args: {resourceWeights: {cpu: -1}}\n  plugins:\n    score:\n"
                        "      enabled:\n      - name: LoadAware\n") ==
        "cfg.yaml:7: LoadAware.args.resourceWeights.cpu: must be within 0..100, got -1");
  CHECK(test::config_error_of(v1beta2_head + "  pluginConfig:\n  - name: ModelAffinity\n    args: {interferingPairs: [[a]]}\n  plugins:\n    score:\n"
                        "      enabled:\n      - name: ModelAffinity\n") ==
        "cfg.yaml:7: ModelAffinity: each interfering pair must be [modelA, modelB]");
  CHECK(test::config_error_of(v1beta2_head + "  plugins:\n    permit:\n      enabled:\n      - name: Coscheduling\n") ==
        "cfg.yaml:6: profiles[0].plugins.permit: extension point 'permit' is not configurable in gpusched profiles (multiPoint, preFilter, filter, score are)");
  CHECK_THROWS_AS(load_scheduler_config("/nonexistent/cfg.yaml"), file_error);
}

TEST_CASE("profile.a host registers its own plugin") {
  struct prefer_even {
    [[nodiscard]] static constexpr std::string_view name() noexcept { return "PreferEven"; }
    [[nodiscard]] std::int64_t score(const in_memory_cluster&, const pod&, node_index n) const { return n % 2 ? 0 : 100; }
  };
  auto reg = plugin_registry<in_memory_cluster>::builtins();
  reg.add_score("PreferEven", [](dynamic_profile<in_memory_cluster>& p, std::int64_t w, const plugin_args& a) {
    a.allow_only({});
    p.add_score(prefer_even{}, w);
  });
  const auto cfg = parse_scheduler_config<in_memory_cluster>(v1beta2_head + "  plugins:\n    score:\n      enabled:\n      - name: PreferEven\n",
                                                             "x.yaml", reg);
  in_memory_cluster c;
  for (int i = 0; i < 3; ++i) c.add_node(testing::gpu_node("n" + std::to_string(i), 1000, 1000, 0));
  scheduler<in_memory_cluster, dynamic_profile<in_memory_cluster>> s(cfg.profiles[0].profile, {100, 4, false});
  for (int i = 0; i < 10; ++i) CHECK(s.schedule_one(c, make_pod("p").cpu(1)).where.node % 2 == 0);
}

TEST_CASE("profile.FGDScore from a config decides like the static FGD profile; bad typical pods name file:line") {
  // Typical pods: half-GPU pods (share 3) and whole 1-GPU V100 pods (share 1): probabilities 0.75 / 0.25.
  const std::string fgd_cfg = v1beta2_head +
                              "  plugins:\n"
                              "    filter:\n"
                              "      enabled:\n"
                              "      - name: GPUCheck\n"
                              "    score:\n"
                              "      enabled:\n"
                              "      - name: FGDScore\n"
                              "        weight: 2\n"
                              "  pluginConfig:\n"
                              "  - name: FGDScore\n"
                              "    args:\n"
                              "      typicalPods:\n"
                              "      - {cpuMilli: 2000, gpuMilli: 500, numGpu: 1, share: 3}\n"
                              "      - {cpuMilli: 4000, gpuMilli: 1000, numGpu: 1, share: 1, gpuModels: [V100M32]}\n";
  auto cfg = parse_scheduler_config(fgd_cfg, "fgd.yaml");
  REQUIRE(cfg.profiles.size() == 1);
  CHECK(cfg.profiles[0].profile.gpu_selector_name() == "FGDScore");

  typical_pod half{2000, 500, 1, "", {}, 0, 0.75};
  typical_pod whole{4000, 1000, 1, "V100M32", {short_name("V100M32")}, 0, 0.25};
  const fgd_scorer fgd(typical_workload({half, whole}));
  CHECK(fgd.workload().shapes()[0].weight == 0.75);
  auto stat = make_profile(checks(gpu_check{}), scores(weighted{fgd, 2}), fgd);
  in_memory_cluster a;
  for (int i = 0; i < 6; ++i) a.add_node(testing::gpu_node("n" + std::to_string(i), 32000, 65536, 4, i % 2 ? "T4" : "V100M32"));
  in_memory_cluster b = a;
  scheduler<in_memory_cluster, dynamic_profile<in_memory_cluster>> s1(cfg.profiles[0].profile, {100, 9, false});
  scheduler<in_memory_cluster, decltype(stat)> s2(stat, {100, 9, false});
  int placed = 0;
  for (int i = 0; i < 40; ++i) {
    const pod p = i % 4 == 3 ? make_pod("p" + std::to_string(i)).cpu(4000).gpus(1)
                             : make_pod("p" + std::to_string(i)).cpu(2000).gpu_share(150 + 100 * (i % 7));
    const schedule_result r1 = s1.place_one(a, p);
    const schedule_result r2 = s2.place_one(b, p);
    CHECK(r1.where == r2.where);  // same node and the same devices: FGD chose them in both
    CHECK(r1.score == r2.score);
    placed += r1.scheduled ? 1 : 0;
  }
  CHECK(placed > 20);
  CHECK(a == b);

  const auto with_args = [&](const std::string& args) {
    return test::config_error_of(v1beta2_head + "  plugins:\n    score:\n      enabled:\n      - name: FGDScore\n  pluginConfig:\n  - name: FGDScore\n    args:\n" + args);
  };
  CHECK(with_args("      typicalPods: []\n") ==
        "cfg.yaml:12: FGDScore: typicalPods must be a non-empty list of {cpuMilli, gpuMilli, numGpu, share, gpuModels}");
  CHECK(with_args("      typicalPods:\n      - {cpuMilli: 1000, gpuMilli: 500, numGpu: 1}\n") ==
        "cfg.yaml:13: FGDScore: each typical pod needs a share (> 0)");
  CHECK(with_args("      typicalPods:\n      - {gpuMilli: 500, numGpu: 0, share: 1}\n") ==
        "cfg.yaml:13: FGDScore: gpuMilli must be 0 exactly when numGpu is 0");
  CHECK(with_args("      typicalPods:\n      - {cpuMilli: 1000, share: 1, gpuModels: [V100M32]}\n") ==
        "cfg.yaml:13: FGDScore: gpuModels needs numGpu > 0 (a pod without GPUs names no model)");
  CHECK(with_args("      typicalPods:\n      - {gpuMilli: 500, numGpu: 1, share: 1, memory: 3}\n") ==
        "cfg.yaml:13: FGDScore.args.typicalPods[0].memory: unknown key (allowed: cpuMilli, gpuMilli, numGpu, share, gpuModels)");
  CHECK(with_args("      typicalPods:\n      - {gpuMilli: 500, numGpu: 1, share: 1}\n      selectDevices: maybe\n") ==
        "cfg.yaml:14: FGDScore.args.selectDevices: expected true or false, got 'maybe'");
  CHECK(test::config_error_of(v1beta2_head + "  plugins:\n    score:\n      enabled:\n      - name: FGDScore\n") ==
        "cfg.yaml:8: FGDScore: needs pluginConfig args.typicalPods (the workload's pod shapes and shares), or a "
            "workload from where it runs (the simulator's trace)");
}
