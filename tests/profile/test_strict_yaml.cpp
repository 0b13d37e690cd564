// Strict YAML (profile/yaml_strict.hpp, docs/adr/0006-strict-yaml.md): the scheduler configuration's
// reproducers of issue 15 item 4, each an error naming file:line and the field, or the documented reading.
#include <doctest/doctest.h>

#include <string>

#include "gpusched/core/in_memory_cluster.hpp"
#include "gpusched/profile/config_yaml.hpp"
#include "gpusched/profile/yaml_strict.hpp"
#include "profile/config_error_of.hpp"
using namespace gpusched;
using yaml_strict::classify_plain;
using yaml_strict::plain_kind;

namespace {
// v1beta3: gpusched's own reading, without Kubernetes' default plugins (those: test_kube_defaults.cpp).
const std::string v1beta3_head =
    "apiVersion: kubescheduler.config.k8s.io/v1beta3\n"
    "kind: KubeSchedulerConfiguration\n"
    "profiles:\n"
    "- schedulerName: s\n";  // line 4
// A score plugin with the given weight text on line 9.
std::string with_weight(const std::string& w) {
  return v1beta3_head + "  plugins:\n    score:\n      enabled:\n      - name: LoadAware\n        weight: " + w + "\n";
}
std::int64_t weight_of(const std::string& w) {
  return parse_scheduler_config(with_weight(w), "cfg.yaml").profiles[0].profile.score_plugin_weight(0);
}
}  // namespace

// Forms from the YAML 1.2.2 spec, 10.3.2 (core schema tag resolution), and YAML 1.1's int, float
// and bool types (yaml.org/type/int.html, float.html, bool.html).
TEST_CASE("strict yaml.plain scalars by the core schema; forms YAML 1.1 reads otherwise are ambiguous") {
  for (const char* s : {"0", "-0", "+12", "12", "0x10", "0xfF"})
    CHECK_MESSAGE(classify_plain(s).kind == plain_kind::integer, s);
  for (const char* s : {"1.5", "-.5", "5.", "1e9", "1E-9", "+2.5e+3", "010.5"}) {
    CHECK_MESSAGE(classify_plain(s).kind == plain_kind::floating, s);
  }
  for (const char* s : {".inf", "-.Inf", "+.INF", ".nan", ".NaN"})
    CHECK_MESSAGE(classify_plain(s).kind == plain_kind::nonfinite, s);
  for (const char* s : {"", "~", "null", "Null", "NULL"}) CHECK_MESSAGE(classify_plain(s).kind == plain_kind::null, s);
  for (const char* s : {"true", "True", "TRUE", "false", "False", "FALSE"}) {
    CHECK_MESSAGE(classify_plain(s).kind == plain_kind::boolean, s);
  }
  // 1.1 octal / 1.2 decimal; 1.2 octal / 1.1 string; 1.1 binary, underscores, sexagesimal, signed hex
  // and the 1.1 booleans / 1.2 strings.
  for (const char* s :
       {"010", "-007", "0o10", "0b101", "1_000", "1:30", "-0x10", "0X10", "yes", "No", "on", "OFF", "y", "n"}) {
    CHECK_MESSAGE(classify_plain(s).kind == plain_kind::ambiguous, s);
  }
  for (const char* s : {"abc", "1.2.3", "e5", ".", "-", "0x", "V100M32", "nvidia.com/gpu"}) {
    CHECK_MESSAGE(classify_plain(s).kind == plain_kind::string, s);
  }
}

TEST_CASE("strict yaml.numbers: quoted is a string, 010 refused, 0x10 is 16, empty reported at its key") {
  CHECK(weight_of("10") == 10);
  CHECK(weight_of("+10") == 10);
  CHECK(weight_of("0x10") == 16);  // YAML 1.1 and 1.2 agree (and Kubernetes reads 16)
  CHECK(weight_of("!!int 10") == 10);
  CHECK(
      test::config_error_of(with_weight("'10'")) ==
      "cfg.yaml:9: profiles[0].plugins.score.enabled[0].weight: expected an integer, got the string '10' (a quoted or "
      "tagged scalar is a string; write it unquoted)");
  CHECK(test::config_error_of(with_weight("\"10\""))
            .rfind("cfg.yaml:9: profiles[0].plugins.score.enabled[0].weight: expected an integer, got the string '10'",
                   0) == 0);
  CHECK(test::config_error_of(with_weight("010")) ==
        "cfg.yaml:9: profiles[0].plugins.score.enabled[0].weight: expected an integer, got '010' (a leading zero: YAML "
        "1.1 "
        "reads it as octal, YAML 1.2 as decimal)");
  CHECK(test::config_error_of(with_weight("0o10")) ==
        "cfg.yaml:9: profiles[0].plugins.score.enabled[0].weight: expected an integer, got '0o10' (YAML 1.2 reads it "
        "as an "
        "octal integer, YAML 1.1 as a string)");
  CHECK(
      test::config_error_of(with_weight("1_0")) ==
      "cfg.yaml:9: profiles[0].plugins.score.enabled[0].weight: expected an integer, got '1_0' (YAML 1.1 reads it as a "
      "number, YAML 1.2 as a string)");
  CHECK(test::config_error_of(with_weight("10.0")) ==
        "cfg.yaml:9: profiles[0].plugins.score.enabled[0].weight: expected an integer, got '10.0'");
  CHECK(test::config_error_of(with_weight("99999999999999999999")) ==
        "cfg.yaml:9: profiles[0].plugins.score.enabled[0].weight: must be within "
        "-9223372036854775808..9223372036854775807, "
        "got 99999999999999999999");
  CHECK(test::config_error_of(with_weight("[1]")) ==
        "cfg.yaml:9: profiles[0].plugins.score.enabled[0].weight: expected an integer, got a list");
  // An empty value is reported on its key's line (yaml-cpp marks it at the next token: line 10 here).
  CHECK(test::config_error_of(with_weight("") + "      - name: QoSAware\n") ==
        "cfg.yaml:9: profiles[0].plugins.score.enabled[0].weight: expected an integer, got an empty value");
  CHECK(test::config_error_of(with_weight("~")) ==
        "cfg.yaml:9: profiles[0].plugins.score.enabled[0].weight: expected an integer, got an empty value");
  // "bad conversion" no more: the field is named.
  CHECK(test::config_error_of(v1beta3_head + "  percentageOfNodesToScore: abc\n") ==
        "cfg.yaml:5: profiles[0].percentageOfNodesToScore: expected an integer, got 'abc'");
  CHECK(test::config_error_of(v1beta3_head + "  pluginConfig:\n  - name: LoadAware\n    args: {usageThresholds: {cpu: '50'}}\n") ==
        "cfg.yaml:7: LoadAware.args.usageThresholds.cpu: expected a number, got the string '50' (a quoted or tagged "
        "scalar "
        "is a string; write it unquoted)");
  CHECK(test::config_error_of(v1beta3_head + "  pluginConfig:\n  - name: LoadAware\n    args: {usageThresholds: {cpu: .nan}}\n") ==
        "cfg.yaml:7: LoadAware.args.usageThresholds.cpu: must be finite, got .nan");
  CHECK(
      test::config_error_of(
          v1beta3_head +
          "  pluginConfig:\n  - name: FGDScore\n    args:\n      typicalPods: [{share: 1}]\n      fineScore: yes\n") ==
      "cfg.yaml:9: FGDScore.args.fineScore: expected true or false, got 'yes' (YAML 1.1 reads it as a boolean, YAML "
      "1.2 as "
      "a string)");
  // A string field refuses an ambiguous plain scalar; quoted, it is the string.
  CHECK(
      test::config_error_of(v1beta3_head + "  pluginConfig:\n  - name: ModelAffinity\n    args: {interferingPairs: [[on, bert]]}\n") ==
      "cfg.yaml:7: ModelAffinity.args.interferingPairs[0][0]: 'on' is ambiguous (YAML 1.1 reads it as a boolean, YAML 1.2 as a string): "
      "quote it");
  CHECK(test::config_error_of(v1beta3_head + "  pluginConfig:\n  - name: ModelAffinity\n    args: {interferingPairs: [['on', bert]]}\n") ==
        "no error");
}

TEST_CASE("strict yaml.duplicate keys are errors, wherever they are") {
  CHECK(test::config_error_of("apiVersion: kubescheduler.config.k8s.io/v1\napiVersion: kubescheduler.config.k8s.io/v1beta2\n") ==
        "cfg.yaml:2: apiVersion: duplicate key (first at line 1)");
  CHECK(test::config_error_of(v1beta3_head + "  schedulerName: t\n") ==
        "cfg.yaml:5: profiles[0].schedulerName: duplicate key (first at line 4)");
  CHECK(test::config_error_of(with_weight("5") + "        weight: 50\n") ==
        "cfg.yaml:10: profiles[0].plugins.score.enabled[0].weight: duplicate key (first at line 9)");
  CHECK(test::config_error_of(v1beta3_head + "  pluginConfig:\n  - name: LoadAware\n    args: {usageThresholds: {cpu: 50, cpu: 60}}\n") ==
        "cfg.yaml:7: profiles[0].pluginConfig[0].args.usageThresholds.cpu: duplicate key (first at line 7)");
  CHECK(test::config_error_of(v1beta3_head + "  ? [a, b]\n  : 1\n") == "cfg.yaml:5: profiles[0]: a mapping key must be a plain string");
  CHECK(test::config_error_of(v1beta3_head + "  plugins: !custom {}\n") == "cfg.yaml:5: profiles[0].plugins: unsupported tag '!custom'");
}

TEST_CASE("strict yaml.one document") {
  // Reported at the second document's first node (line 11; its '---' is on line 10).
  CHECK(test::config_error_of(with_weight("5") + "---\nkind: KubeSchedulerConfiguration\n") ==
        "cfg.yaml:11: a second YAML document; the file must hold exactly one (delete it or the '---' before it)");
  CHECK(weight_of("5\n---\n") == 5);  // a trailing empty document is nothing
  CHECK(weight_of("5\n...\n") == 5);
  CHECK(test::config_error_of("") == "cfg.yaml:1: expected a KubeSchedulerConfiguration mapping");
  // yaml-cpp 0.7's LoadAll never returns on a stray ',' (jbeder/yaml-cpp#1040; found by fuzz_scheduler_config).
  CHECK(test::config_error_of(",") == "cfg.yaml:1: YAML: unexpected ','");
  CHECK(test::config_error_of(with_weight("5") + "---\n,\n") == "cfg.yaml:11: YAML: unexpected ','");
}

TEST_CASE("strict yaml.plugin lists: twice at one point, unknown keys and names under disabled") {
  CHECK(test::config_error_of(with_weight("5") + "      - name: LoadAware\n") ==
        "cfg.yaml:10: profiles[0].plugins.score.enabled[1].name: plugin 'LoadAware' is listed twice in score.enabled "
        "(first at line 8)");
  CHECK(test::config_error_of(v1beta3_head + "  plugins:\n    filter:\n      enabled:\n      - name: GPUCheck\n      - name: GPUCheck\n") ==
        "cfg.yaml:9: profiles[0].plugins.filter.enabled[1].name: plugin 'GPUCheck' is listed twice in filter.enabled "
        "(first at line 8)");
  // At preFilter and at filter it is one check (two extension points, as in Kubernetes).
  const auto both = parse_scheduler_config(v1beta3_head +
                                           "  plugins:\n    preFilter:\n      enabled: [{name: GPUCheck}]\n    "
                                           "filter:\n      enabled: [{name: GPUCheck}]\n");
  CHECK(both.profiles[0].profile.check_count() == 2);  // NodeResourcesFit, GPUCheck
  CHECK(test::config_error_of(v1beta3_head +
                 "  plugins:\n    filter:\n      disabled:\n      - name: NodeResourcesFit\n        weight: 3\n") ==
        "cfg.yaml:9: profiles[0].plugins.filter.disabled[0].weight: unknown key (allowed: name)");
  CHECK(test::config_error_of(v1beta3_head + "  plugins:\n    filter:\n      disabled:\n      - name: NodeResourceFit\n") ==
        "cfg.yaml:8: profiles[0].plugins.filter.disabled[0].name: unknown plugin 'NodeResourceFit'");
  CHECK(test::config_error_of(v1beta3_head + "  plugins:\n    score:\n      disabled:\n      - name: GPUCheck\n") ==
        "cfg.yaml:8: profiles[0].plugins.score.disabled[0].name: plugin 'GPUCheck' has no score extension");
  CHECK(test::config_error_of(v1beta3_head +
                 "  plugins:\n    filter:\n      disabled: [{name: NodeResourcesFit}, {name: NodeResourcesFit}]\n") ==
        "no error");  // a name disabled twice is still disabled (the experiment driver appends one)
  const auto off = parse_scheduler_config(v1beta3_head + "  plugins:\n    filter:\n      disabled: [{name: '*'}]\n");
  CHECK(off.profiles[0].profile.check_count() == 0);
}

TEST_CASE("strict yaml.pluginConfig of a plugin that is not enabled is still checked") {
  // Valid args of an unused plugin are accepted (Kubernetes validates every pluginConfig entry).
  const auto ok = parse_scheduler_config(
      v1beta3_head + "  pluginConfig:\n  - name: ModelAffinity\n    args: {interferingPairs: [[a, b]]}\n");
  CHECK(ok.profiles[0].profile.score_plugin_count() == 0);
  CHECK(test::config_error_of(v1beta3_head + "  pluginConfig:\n  - name: ModelAffinity\n    args: {interferingPair: [[a, b]]}\n") ==
        "cfg.yaml:7: ModelAffinity: unknown argument 'interferingPair' for plugin ModelAffinity (allowed: "
        "interferingPairs)");
  CHECK(test::config_error_of(v1beta3_head +
                 "  pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      scoringStrategy: {type: Most}\n") ==
        "cfg.yaml:8: NodeResourcesFit: scoringStrategy.type must be LeastAllocated, MostAllocated or "
        "RequestedToCapacityRatio");
  CHECK(test::config_error_of(v1beta3_head + "  pluginConfig:\n  - name: FGDScore\n    args: {typicalPods: []}\n") ==
        "cfg.yaml:7: FGDScore: typicalPods must be a non-empty list of {cpuMilli, gpuMilli, numGpu, share, gpuModels}");
}

TEST_CASE("strict yaml.an alias bomb is refused by the node budget") {
  // Seven levels of ten aliases each: 10^7 nodes when expanded, above max_nodes (10^6).
  std::string bomb = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i <= 6; ++i) {
    const std::string p = "*a" + std::to_string(i - 1);
    bomb += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k) bomb += (k ? ", " : "") + p;
    bomb += "]\n";
  }
  CHECK_THROWS_WITH_AS(parse_scheduler_config(bomb, "cfg.yaml"),
                       doctest::Contains("more than 1000000 YAML nodes (aliases counted at each use)"), file_error);
  // An alias inside its own anchor's node is a cycle (found by fuzz_scheduler_config: a stack overflow).
  CHECK_THROWS_WITH_AS(parse_scheduler_config("a: &a [x, *a]\n", "cfg.yaml"),
                       doctest::Contains("levels (or an alias inside its own anchor)"), file_error);
  std::string deep = "a: " + std::string(200, '[') + std::string(200, ']') + "\n";
  CHECK_THROWS_WITH_AS(parse_scheduler_config(deep, "cfg.yaml"), doctest::Contains("nested deeper than 128 levels"),
                       file_error);
}
