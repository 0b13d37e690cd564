// KubeSchedulerConfiguration as Kubernetes reads it: v1's default plugins, multiPoint, `disabled: '*'`
// and v1 plugin-arg defaulting (docs/plugins.md, "Default plugins and multiPoint").
//
// The merge and expansion cases are transcribed from kube-scheduler's own tables:
// - TestMergePlugins, pkg/scheduler/apis/config/v1/default_plugins_test.go (kubernetes/kubernetes
//   commit 18f5b5c8e0c6b45e3be9b9fbce11ce15967dafdc): the enabled lists (the disabled lists it also
//   compares are the custom ones passed through).
// - TestNewFrameworkMultiPointExpansion, pkg/scheduler/framework/runtime/framework_test.go: the Score
//   point's list with weights (every named plugin there implements Score except queueSortPlugin and
//   bindPlugin). Not transcribed: "Expect 'already registered' error" is refused earlier here, at
//   the duplicate's line (the YAML cases below), and the other extension points have no gpusched form.
#include <doctest/doctest.h>

#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "gpusched/core/in_memory_cluster.hpp"
#include "gpusched/profile/config_yaml.hpp"
#include "gpusched/profile/kube_defaults.hpp"
#include "profile/config_error_of.hpp"
#include "support/builders.hpp"

using namespace gpusched;

namespace {

struct p {
  std::string name;
  std::int64_t weight = 0;
  bool operator==(const p&) const = default;
};
using ps = std::vector<p>;
using ds = std::vector<std::string>;

std::vector<std::string> check_names_of(const dynamic_profile<in_memory_cluster>& prof) {
  std::vector<std::string> v;
  for (std::size_t i = 0; i < prof.check_count(); ++i) v.emplace_back(prof.check_name(i));
  return v;
}
ps scores_of(const dynamic_profile<in_memory_cluster>& prof) {
  ps v;
  for (std::size_t i = 0; i < prof.score_plugin_count(); ++i)
    v.push_back({std::string(prof.score_plugin_name(i)), prof.score_plugin_weight(i)});
  return v;
}

const std::string v1 =
    "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: s\n";
scheduler_profile<in_memory_cluster> one(const std::string& text) {
  return std::move(parse_scheduler_config(text, "cfg.yaml").profiles.front());
}

// Kubernetes' defaults gpusched has, as kube-scheduler orders them (default_plugins.go).
const std::vector<std::string> default_filters = {"NodeUnschedulable", "TaintToleration", "NodeAffinity",
                                                  "NodeResourcesFit"};
// NodeResourcesFit's scorer is named after its strategy.
const ps default_scores = {{"TaintToleration", 3}, {"NodeAffinity", 2}, {"LeastAllocated", 1},
                           {"NodeResourcesBalancedAllocation", 1}};
const ds not_run = {"SchedulingGates", "PrioritySort",     "NodeName",         "NodePorts",
                    "VolumeRestrictions", "EBSLimits",     "GCEPDLimits",      "NodeVolumeLimits",
                    "AzureDiskLimits",  "VolumeBinding",   "VolumeZone",       "PodTopologySpread",
                    "InterPodAffinity", "DefaultPreemption", "ImageLocality",  "DefaultBinder"};

}  // namespace

TEST_CASE("kube defaults.mergePluginSet: TestMergePlugins' cases") {
  using kube::merge_plugin_set;
  // InsertAfterDefaultPlugins2
  CHECK(merge_plugin_set(ps{{"DefaultPlugin1"}, {"DefaultPlugin2"}}, ps{{"CustomPlugin"}, {"DefaultPlugin2"}},
                         ds{"DefaultPlugin2"}) == ps{{"DefaultPlugin1"}, {"CustomPlugin"}, {"DefaultPlugin2"}});
  // InsertBeforeAllPlugins
  CHECK(merge_plugin_set(ps{{"DefaultPlugin1"}, {"DefaultPlugin2"}},
                         ps{{"CustomPlugin"}, {"DefaultPlugin1"}, {"DefaultPlugin2"}},
                         ds{"*"}) == ps{{"CustomPlugin"}, {"DefaultPlugin1"}, {"DefaultPlugin2"}});
  // ReorderDefaultPlugins
  CHECK(merge_plugin_set(ps{{"DefaultPlugin1"}, {"DefaultPlugin2"}}, ps{{"DefaultPlugin2"}, {"DefaultPlugin1"}},
                         ds{"*"}) == ps{{"DefaultPlugin2"}, {"DefaultPlugin1"}});
  // ApplyNilCustomPlugin
  CHECK(merge_plugin_set(ps{{"DefaultPlugin1"}, {"DefaultPlugin2"}}, ps{}, ds{}) ==
        ps{{"DefaultPlugin1"}, {"DefaultPlugin2"}});
  // CustomPluginOverrideDefaultPlugin
  CHECK(merge_plugin_set(ps{{"Plugin1"}, {"Plugin2"}, {"Plugin3"}}, ps{{"Plugin1", 2}, {"Plugin3", 3}}, ds{}) ==
        ps{{"Plugin1", 2}, {"Plugin2"}, {"Plugin3", 3}});
  // OrderPreserveAfterOverride
  CHECK(merge_plugin_set(ps{{"Plugin1"}, {"Plugin2"}, {"Plugin3"}}, ps{{"Plugin2", 2}, {"Plugin1", 1}}, ds{}) ==
        ps{{"Plugin1", 1}, {"Plugin2", 2}, {"Plugin3"}});
  // RepeatedCustomPlugin (the YAML reader refuses the repetition before merging; the merge itself keeps it)
  CHECK(merge_plugin_set(ps{{"Plugin1"}, {"Plugin2"}, {"Plugin3"}},
                         ps{{"Plugin1"}, {"Plugin2", 2}, {"Plugin3"}, {"Plugin2", 4}},
                         ds{}) == ps{{"Plugin1"}, {"Plugin2", 4}, {"Plugin3"}, {"Plugin2", 2}});
  // Append custom MultiPoint plugin
  CHECK(merge_plugin_set(ps{{"DefaultPlugin1"}, {"DefaultPlugin2"}}, ps{{"CustomPlugin"}}, ds{}) ==
        ps{{"DefaultPlugin1"}, {"DefaultPlugin2"}, {"CustomPlugin"}});
  // Append disabled Multipoint plugins
  CHECK(merge_plugin_set(ps{{"DefaultPlugin1"}, {"DefaultPlugin2"}}, ps{{"CustomPlugin"}, {"CustomPlugin2"}},
                         ds{"DefaultPlugin2"}) == ps{{"DefaultPlugin1"}, {"CustomPlugin"}, {"CustomPlugin2"}});
  // override default MultiPoint plugins with custom value
  CHECK(merge_plugin_set(ps{{"DefaultPlugin"}}, ps{{"DefaultPlugin", 5}}, ds{}) == ps{{"DefaultPlugin", 5}});
  // multipoint with only disabled gets merged
  CHECK(merge_plugin_set(ps{{"DefaultPlugin"}}, ps{}, ds{"DefaultPlugin"}).empty());
}

TEST_CASE("kube defaults.expandMultiPointPlugins: TestNewFrameworkMultiPointExpansion's Score lists") {
  using kube::expand_multi_point;
  const auto scores = [](const std::string& n) { return n != "queueSortPlugin" && n != "bindPlugin"; };
  // plugin expansion
  CHECK(expand_multi_point(ps{{"testPlugin", 5}}, ps{}, ds{}, scores) == ps{{"testPlugin", 5}});
  // disable MultiPoint plugin at some extension points
  CHECK(expand_multi_point(ps{{"testPlugin"}}, ps{}, ds{"testPlugin"}, scores).empty());
  // Multiple MultiPoint plugins
  CHECK(expand_multi_point(ps{{"testPlugin"}, {"scorePlugin1"}}, ps{}, ds{}, scores) ==
        ps{{"testPlugin"}, {"scorePlugin1"}});
  // Reorder MultiPoint plugins (specified extension takes precedence)
  CHECK(expand_multi_point(ps{{"scoreWithNormalizePlugin1"}, {"testPlugin"}, {"scorePlugin1"}},
                           ps{{"scorePlugin1"}, {"testPlugin"}}, ds{},
                           scores) == ps{{"scorePlugin1"}, {"testPlugin"}, {"scoreWithNormalizePlugin1"}});
  // Reorder MultiPoint plugins (specified extension only takes precedence when it exists in MultiPoint)
  CHECK(expand_multi_point(ps{{"testPlugin"}, {"scorePlugin1"}},
                           ps{{"scoreWithNormalizePlugin1"}, {"scorePlugin1"}, {"testPlugin"}}, ds{},
                           scores) == ps{{"scorePlugin1"}, {"testPlugin"}, {"scoreWithNormalizePlugin1"}});
  // Override MultiPoint plugins weights
  CHECK(expand_multi_point(ps{{"testPlugin"}, {"scorePlugin1"}}, ps{{"scorePlugin1", 5}, {"testPlugin", 3}}, ds{},
                           scores) == ps{{"scorePlugin1", 5}, {"testPlugin", 3}});
  // disable and enable MultiPoint plugins with '*' (the merge drops no custom entry; Score gets scorePlugin1)
  CHECK(expand_multi_point(kube::merge_plugin_set(ps{}, ps{{"queueSortPlugin"}, {"bindPlugin"}, {"scorePlugin1"}}, ds{"*"}),
                           ps{}, ds{}, scores) == ps{{"scorePlugin1"}});
  // Override MultiPoint plugins weights and avoid a plugin being loaded multiple times
  CHECK(expand_multi_point(ps{{"testPlugin"}, {"scorePlugin1"}},
                           ps{{"scorePlugin1", 5}, {"scorePlugin2", 5}, {"testPlugin", 3}}, ds{},
                           scores) == ps{{"scorePlugin1", 5}, {"testPlugin", 3}, {"scorePlugin2", 5}});
}

TEST_CASE("kube defaults.a v1 profile that names no plugins runs Kubernetes' defaults gpusched has") {
  const auto sp = one(v1);
  CHECK(check_names_of(sp.profile) == default_filters);
  CHECK(scores_of(sp.profile) == default_scores);
  CHECK(sp.defaults_not_run == not_run);
  // Before v1: gpusched's own reading, NodeResourcesFit's filter alone (ADR 0002).
  const auto legacy = one("apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\n"
                          "profiles:\n- schedulerName: s\n");
  CHECK(check_names_of(legacy.profile) == std::vector<std::string>{"NodeResourcesFit"});
  CHECK(legacy.profile.score_plugin_count() == 0);
  CHECK(legacy.defaults_not_run.empty());
}

TEST_CASE("kube defaults.a point's explicit list: after the defaults, or overriding them in place; '*' removes them") {
  // Explicit filter GPUCheck comes after the multiPoint defaults (part 3 of the expansion).
  auto sp = one(v1 + "  plugins:\n    filter:\n      enabled: [{name: GPUCheck}]\n");
  auto want = default_filters;
  want.push_back("GPUCheck");
  CHECK(check_names_of(sp.profile) == want);
  // A default named at score overrides it: first, with the point's weight (a missing weight is 1,
  // not the default's 3: getScoreWeights reads Score.Enabled before MultiPoint).
  sp = one(v1 + "  plugins:\n    score:\n      enabled: [{name: NodeAffinity, weight: 7}, {name: TaintToleration}]\n");
  CHECK(scores_of(sp.profile) ==
        ps{{"NodeAffinity", 7}, {"TaintToleration", 1}, {"LeastAllocated", 1}, {"NodeResourcesBalancedAllocation", 1}});
  // disabled '*' at score: the point's list alone; the filters keep the defaults.
  sp = one(v1 + "  plugins:\n    score:\n      disabled: [{name: '*'}]\n      enabled: [{name: LoadAware, weight: 10}]\n");
  CHECK(check_names_of(sp.profile) == default_filters);
  CHECK(scores_of(sp.profile) == ps{{"LoadAware", 10}});
  // Disabling one default at one point; at multiPoint it leaves every point.
  sp = one(v1 + "  plugins:\n    score:\n      disabled: [{name: NodeResourcesBalancedAllocation}]\n");
  CHECK(scores_of(sp.profile) == ps{{"TaintToleration", 3}, {"NodeAffinity", 2}, {"LeastAllocated", 1}});
  sp = one(v1 + "  plugins:\n    multiPoint:\n      disabled: [{name: TaintToleration}, {name: ImageLocality}]\n");
  CHECK(check_names_of(sp.profile) == std::vector<std::string>{"NodeUnschedulable", "NodeAffinity", "NodeResourcesFit"});
  CHECK(scores_of(sp.profile) ==
        ps{{"NodeAffinity", 2}, {"LeastAllocated", 1}, {"NodeResourcesBalancedAllocation", 1}});
  CHECK(sp.defaults_not_run.size() == not_run.size() - 1);  // ImageLocality is disabled, not "not run"
  // multiPoint disabled '*': nothing but what the profile lists (data/profiles/ use this).
  sp = one(v1 + "  plugins:\n    multiPoint:\n      disabled: [{name: '*'}]\n");
  CHECK(sp.profile.check_count() == 0);
  CHECK(sp.profile.score_plugin_count() == 0);
  CHECK(sp.defaults_not_run.empty());
}

TEST_CASE("kube defaults.multiPoint enables a plugin at every point it has, after the defaults") {
  auto sp = one(v1 + "  plugins:\n    multiPoint:\n      enabled: [{name: LoadAware, weight: 4}, {name: GPUCheck}]\n");
  auto want = default_filters;
  want.insert(want.end(), {"LoadAwareFilter", "GPUCheck"});
  CHECK(check_names_of(sp.profile) == want);
  auto scores = default_scores;
  scores.push_back({"LoadAware", 4});
  CHECK(scores_of(sp.profile) == scores);
  // A default re-configured at multiPoint keeps its place and takes the new weight (mergePluginSet).
  sp = one(v1 + "  plugins:\n    multiPoint:\n      enabled: [{name: NodeResourcesBalancedAllocation, weight: 9}]\n");
  CHECK(scores_of(sp.profile) ==
        ps{{"TaintToleration", 3}, {"NodeAffinity", 2}, {"LeastAllocated", 1}, {"NodeResourcesBalancedAllocation", 9}});
  // v1beta3 has multiPoint without defaults; NodeResourcesFit's filter is then gpusched's implicit first check.
  sp = one("apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\nprofiles:\n"
           "- plugins:\n    multiPoint:\n      enabled: [{name: GPUCheck}, {name: LoadAware, weight: 2}]\n");
  CHECK(check_names_of(sp.profile) == std::vector<std::string>{"NodeResourcesFit", "GPUCheck", "LoadAwareFilter"});
  CHECK(scores_of(sp.profile) == ps{{"LoadAware", 2}});
}

TEST_CASE("kube defaults.errors name the line") {
  const std::string mp = v1 + "  plugins:\n    multiPoint:\n";  // multiPoint on line 6
  CHECK(test::config_error_of(mp + "      enabled: [{name: ImageLocality}]\n") ==
        "cfg.yaml:7: profiles[0].plugins.multiPoint.enabled[0].name: plugin 'ImageLocality' is one of Kubernetes' "
        "defaults that gpusched does not have (it may be disabled, not enabled)");
  CHECK(test::config_error_of(mp + "      enabled: [{name: GPUCheck, weight: 2}]\n") ==
        "cfg.yaml:7: profiles[0].plugins.multiPoint.enabled[0].weight: weight is only meaningful for score plugins");
  CHECK(test::config_error_of(mp + "      enabled:\n      - name: LoadAware\n      - name: LoadAware\n") ==
        "cfg.yaml:9: profiles[0].plugins.multiPoint.enabled[1].name: plugin 'LoadAware' is listed twice in "
        "multiPoint.enabled (first at line 8)");
  CHECK(test::config_error_of(mp + "      disabled: [{name: NodeResourceFit}]\n") ==
        "cfg.yaml:7: profiles[0].plugins.multiPoint.disabled[0].name: unknown plugin 'NodeResourceFit'");
  CHECK(test::config_error_of("apiVersion: kubescheduler.config.k8s.io/v1beta2\nkind: KubeSchedulerConfiguration\nprofiles:\n"
                 "- plugins:\n    multiPoint:\n      enabled: [{name: GPUCheck}]\n") ==
        "cfg.yaml:5: profiles[0].plugins.multiPoint: multiPoint needs apiVersion kubescheduler.config.k8s.io/v1beta3 "
        "or v1");
  // Args of such a default cannot be used: refused, not ignored.
  CHECK(test::config_error_of(v1 + "  pluginConfig:\n  - name: PodTopologySpread\n    args: {defaultingType: List}\n") ==
        "cfg.yaml:6: profiles[0].pluginConfig[0].name: plugin 'PodTopologySpread' is one of Kubernetes' defaults that "
        "gpusched does not have: its args cannot be used (remove this entry)");
  // Disabling a Kubernetes default gpusched does not have is accepted at any point.
  CHECK(test::config_error_of(v1 + "  plugins:\n    score:\n      disabled: [{name: ImageLocality}, {name: PodTopologySpread}]\n") ==
        "no error");
}

TEST_CASE("kube defaults.v1 arg defaulting: resources [] is cpu and memory weight 1; a scoringStrategy needs a type") {
  // SetDefaults_NodeResourcesFitArgs / SetDefaults_NodeResourcesBalancedAllocationArgs
  // (apis/config/v1/defaults.go): an empty resources list is defaultResourceSpec (cpu 1, memory 1).
  in_memory_cluster c;
  c.add_node(testing::gpu_node("node1", 4000, 10000, 0));
  const pod pd = make_pod("p").cpu(1000).memory(2000);
  auto score = [&](const std::string& args) {
    const auto sp = one(v1 + "  plugins:\n    multiPoint:\n      disabled: [{name: '*'}]\n    score:\n      enabled:\n"
                             "      - name: NodeResourcesFit\n  pluginConfig:\n  - name: NodeResourcesFit\n    args:\n" +
                        args);
    std::int64_t raw = 0;
    const node_index n = 0;
    sp.profile.score(c, pd, std::span<const node_index>(&n, 1), &raw);
    return raw;
  };
  // LeastAllocated by hand: cpu (4000-1000)*100/4000 = 75, memory (10000-2000)*100/10000 = 80; (75+80)/2 = 77.
  CHECK(score("      scoringStrategy: {type: LeastAllocated, resources: []}\n") == 77);
  // cpu alone: 75 (the same strategy with the list given, so the empty list is not "no resources").
  CHECK(score("      scoringStrategy: {type: LeastAllocated, resources: [{name: cpu, weight: 1}]}\n") == 75);
  // MostAllocated with the defaulted list: cpu 25, memory 20 -> 22.
  CHECK(score("      scoringStrategy: {type: MostAllocated, resources: []}\n") == 22);
  // validation_pluginargs.go: a scoringStrategy without a type is NotSupported "".
  CHECK(test::config_error_of(v1 + "  pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n"
                      "        resources: [{name: cpu}]\n") ==
        "cfg.yaml:9: NodeResourcesFit: scoringStrategy.type is required (LeastAllocated, MostAllocated or "
        "RequestedToCapacityRatio)");
}

TEST_CASE("kube defaults.gpusched's own files run exactly the plugins they list") {
  const std::string root = std::string(GPUSCHED_SOURCE_DIR) + "/data/";
  for (const char* f : {"profiles/kube-default.yaml", "profiles/seed.yaml", "scheduler-config.yaml",
                        "scenarios/kube-default-config.yaml"}) {
    CAPTURE(f);
    const auto cfg = load_scheduler_config(root + f);
    const auto& sp = cfg.profiles.front();
    CHECK(sp.defaults_not_run.empty());
    const bool seed = std::string(f).find("seed") != std::string::npos || std::string(f) == "scheduler-config.yaml";
    CHECK(check_names_of(sp.profile) == std::vector<std::string>{"NodeResourcesFit", "GPUCheck"});
    CHECK(scores_of(sp.profile) == (seed ? ps{{"LoadAware", 10}, {"ModelAffinity", 5}}
                                         : ps{{"LeastAllocated", 1}, {"NodeResourcesBalancedAllocation", 1}}));
  }
  // The policies' files: test_profile_files.cpp replays each against its built-in policy.
}
