// scoringStrategy.resources with any resource name (docs/adr/0015-resources-by-name.md): named
// resources reach the scorers; `pods` is accepted and never scores; a bad or repeated name is an
// error at its line.
#include <doctest/doctest.h>

#include <string>

#include "gpusched/core/in_memory_cluster.hpp"
#include "gpusched/profile/config_yaml.hpp"
#include "profile/config_error_of.hpp"

using namespace gpusched;

namespace {
const std::string fit_config_head =
    "apiVersion: kubescheduler.config.k8s.io/v1\n"
    "kind: KubeSchedulerConfiguration\n"
    "profiles:\n"
    "- schedulerName: s\n"
    "  plugins:\n"
    "    multiPoint:\n"
    "      disabled: [{name: '*'}]\n"
    "    score:\n"
    "      enabled: [{name: NodeResourcesFit}]\n"
    "  pluginConfig:\n"
    "  - name: NodeResourcesFit\n"
    "    args:\n"
    "      scoringStrategy:\n";
bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }
}  // namespace

TEST_CASE("config.named resources: TestResourceBinPackingMultipleExtended through a configuration file") {
  // requested_to_capacity_ratio_test.go (kubernetes commit 00b9ead02c37): intel.com/foo weight 3,
  // intel.com/bar weight 5, shape {0,0},{100,1}; node1 foo 8 bar 4, node2 foo 4 bar 8, pod foo 2 bar 2:
  // scores 4 and 3 (the table's "resources requested, pods scheduled with less resources").
  const auto cfg = parse_scheduler_config(fit_config_head +
                                              "        type: RequestedToCapacityRatio\n"
                                              "        resources: [{name: intel.com/foo, weight: 3}, {name: intel.com/bar, weight: 5},\n"
                                              "                    {name: pods, weight: 7}]\n"
                                              "        requestedToCapacityRatio:\n"
                                              "          shape: [{utilization: 0, score: 0}, {utilization: 100, score: 1}]\n",
                                          "cfg.yaml");
  const auto& p = cfg.profiles[0].profile;
  in_memory_cluster c;
  const std::int64_t mem = std::int64_t{10000} * 1024 * 1024;
  c.add_node(node_spec{"node1", 4000, mem, {}, ""}.add_scalar("intel.com/foo", 8).add_scalar("intel.com/bar", 4));
  c.add_node(node_spec{"node2", 4000, mem, {}, ""}.add_scalar("intel.com/foo", 4).add_scalar("intel.com/bar", 8));
  const pod pod1 = make_pod("p").scalar("intel.com/foo", 2).scalar("intel.com/bar", 2);
  const node_index nodes[] = {0, 1};
  std::int64_t raw[2];
  p.score(c, pod1, nodes, raw);
  CHECK(raw[0] == 4);
  CHECK(raw[1] == 3);
}

TEST_CASE("config.named resources: bad names, repeated names and too many names are errors at their line") {
  using test::config_error_of;
  const std::string bad = config_error_of(fit_config_head + "        type: LeastAllocated\n        resources: [{name: 'not a name'}]\n");
  CHECK(has(bad, "cfg.yaml:15"));
  CHECK(has(bad, "not a valid resource name"));
  const std::string twice =
      config_error_of(fit_config_head + "        type: LeastAllocated\n        resources: [{name: example.com/a}, {name: example.com/a}]\n");
  CHECK(has(twice, "cfg.yaml:15"));
  CHECK(has(twice, "listed twice"));
  std::string many = fit_config_head + "        type: LeastAllocated\n        resources:\n";
  for (int i = 0; i < 14; ++i) many += "        - {name: example.com/r" + std::to_string(i) + "}\n";
  const std::string too_many = config_error_of(many);
  CHECK(has(too_many, "cfg.yaml:29"));
  CHECK(has(too_many, "at most 13"));
}

TEST_CASE("config.nonZeroRequests: NodeResourcesFit's option turns Kubernetes' non-zero request defaults on") {
  const auto with = [](const char* flag) {
    return parse_scheduler_config(fit_config_head + "        type: MostAllocated\n      nonZeroRequests: " + flag + "\n", "cfg.yaml");
  };
  in_memory_cluster c;
  node_spec s{"n", 1000, 1000, {}, ""};
  s.pods = 10;
  c.add_node(s);
  const node_index nodes[] = {0};
  std::int64_t raw[1];
  with("true").profiles[0].profile.score(c, make_pod("p"), nodes, raw);
  CHECK(raw[0] == (10 + 20) / 2);  // 100m of 1000m, 200 of 1000 MiB
  with("false").profiles[0].profile.score(c, make_pod("p"), nodes, raw);
  CHECK(raw[0] == 0);
  CHECK(has(test::config_error_of(fit_config_head + "        type: MostAllocated\n      nonZeroRequests: 3\n"), "cfg.yaml:15"));
}

TEST_CASE("config.ignoredResources: NodeResourcesFit's filter skips ignored extended resources") {
  const std::string cfg_text =
      "apiVersion: kubescheduler.config.k8s.io/v1\n"
      "kind: KubeSchedulerConfiguration\n"
      "profiles:\n"
      "- schedulerName: s\n"
      "  plugins:\n"
      "    multiPoint:\n"
      "      disabled: [{name: '*'}]\n"
      "    filter:\n"
      "      enabled: [{name: NodeResourcesFit}]\n"
      "  pluginConfig:\n"
      "  - name: NodeResourcesFit\n"
      "    args:\n"
      "      ignoredResources: [example.com/bbb]\n";
  const auto cfg = parse_scheduler_config(cfg_text + "      ignoredResourceGroups: [vendor.io]\n", "cfg.yaml");
  in_memory_cluster c;
  c.add_node(node_spec{"n", 1000, 1000, {}, ""});
  reason r[1];
  cfg.profiles[0].profile.filter(c, make_pod("p").scalar("example.com/bbb", 1).scalar("vendor.io/x", 2), 0, 1, r);
  CHECK(r[0] == reason::ok);
  cfg.profiles[0].profile.filter(c, make_pod("q").scalar("example.com/ccc", 1), 0, 1, r);
  CHECK(r[0] == reason::insufficient_named);
  const std::string bad = test::config_error_of(cfg_text + "      ignoredResourceGroups: [a/b]\n");
  CHECK(has(bad, "cfg.yaml:14"));
  CHECK(has(bad, "without '/'"));
}
