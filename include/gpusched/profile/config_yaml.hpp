// Loading dynamic profiles from a KubeSchedulerConfiguration file (needs yaml-cpp: link gpusched::yaml).
//
// The seed's scheduler-config.yaml loads as written. Semantics (docs/adr/0002-scheduler-config.md):
// - preFilter and filter plugins become preflight checks, in the order listed (preFilter first);
//   score plugins become weighted scorers (weight 1..100, default 1).
// - apiVersion kubescheduler.config.k8s.io/v1: Kubernetes' default plugins are merged in
//   (kube_defaults.hpp, mergePluginSet) and multiPoint is expanded as kube-scheduler expands it
//   (expandMultiPointPlugins); `disabled: [{name: '*'}]` at a point keeps only that point's own list.
//   Defaults gpusched does not have are listed in scheduler_profile::defaults_not_run.
// - v1beta2 / v1beta3: gpusched's own reading (ADR 0002): no default plugins except NodeResourcesFit's
//   CPU/memory filter, first unless listed or disabled; multiPoint (v1beta3) is expanded without defaults.
// - pluginConfig args apply to the plugin wherever it is enabled; unknown fields are errors.
// - Strict YAML (yaml_strict.hpp, docs/adr/0006-strict-yaml.md): unknown and duplicate keys, a
//   second document, quoted or ambiguous numbers are errors; a plugin listed twice at one extension
//   point, an unknown name under `disabled` and bad args of a plugin that is not enabled too.
// - `extenders:` is refused (never ignored): the extender service is a separate program (issue 16).
// - Any error names file:line and the field, and nothing is returned: there is no half-loaded configuration.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpusched/core/error.hpp"
#include "gpusched/core/in_memory_cluster.hpp"
#include "gpusched/profile/dynamic_profile.hpp"
#include "gpusched/profile/kube_defaults.hpp"
#include "gpusched/profile/plugin_args.hpp"
#include "gpusched/profile/registry.hpp"
#include "gpusched/profile/yaml_strict.hpp"
#include "gpusched/schedule/schedule_one.hpp"

namespace gpusched {

template <Cluster C>
struct scheduler_profile {
  std::string scheduler_name;
  dynamic_profile<C> profile;
  schedule_options options;
  // Kubernetes' default plugins this (v1) profile would run and gpusched has no counterpart for
  // (PrioritySort, NodePorts, PodTopologySpread, ...), in Kubernetes' order: reported here, not run.
  std::vector<std::string> defaults_not_run;
};

template <Cluster C>
struct scheduler_config {
  std::vector<scheduler_profile<C>> profiles;

  // The profile with this schedulerName; throws invalid_argument_error when there is none.
  [[nodiscard]] const scheduler_profile<C>& profile(std::string_view scheduler_name) const {
    for (const auto& p : profiles) {
      if (p.scheduler_name == scheduler_name) return p;
    }
    throw invalid_argument_error("schedulerName", "no profile named '" + std::string(scheduler_name) + "'");
  }
};

namespace detail {

template <Cluster C>
scheduler_config<C> build_scheduler_config(const yaml_strict::document& doc, const plugin_registry<C>& reg) {
  const YAML::Node& root = doc.root();
  auto fail = [&](const YAML::Node& at, const std::string& path, const std::string& why) -> void {
    doc.fail(at, path, why);
  };
  if (!root.IsMap()) doc.fail(root, "expected a KubeSchedulerConfiguration mapping");
  doc.allow_keys(
      root, "",
      {"apiVersion", "kind", "profiles", "percentageOfNodesToScore", "parallelism", "podInitialBackoffSeconds",
       "podMaxBackoffSeconds", "leaderElection", "clientConnection", "healthzBindAddress", "metricsBindAddress",
       "enableProfiling", "enableContentionProfiling", "extenders", "delayCacheUntilActive"});
  // Kubernetes calls extenders (HTTP services) from its scheduling cycle; a profile loaded here has
  // none, so a configuration that names them is refused rather than run without them.
  if (const YAML::Node ext = root["extenders"]) {
    doc.fail(ext, "extenders",
             "not supported in a gpusched profile: extenders are called by kube-scheduler; gpusched's own extender "
             "service (gpusched-extender, issue 16, docs/kubernetes.md) is a separate program — remove this key");
  }
  const YAML::Node api = root["apiVersion"];
  if (!api) fail(root, "apiVersion", "missing");
  const auto api_s = doc.string(api, "apiVersion");
  if (api_s != "kubescheduler.config.k8s.io/v1beta2" && api_s != "kubescheduler.config.k8s.io/v1beta3" &&
      api_s != "kubescheduler.config.k8s.io/v1") {
    fail(api, "apiVersion", "unsupported '" + api_s + "' (kubescheduler.config.k8s.io/v1beta2, v1beta3 or v1)");
  }
  const YAML::Node kind = root["kind"];
  if (!kind || doc.string(kind, "kind") != "KubeSchedulerConfiguration") {
    fail(kind ? kind : root, "kind", "must be KubeSchedulerConfiguration");
  }

  // Kubernetes' default is 0 (adaptive); gpusched's default is 100 (score every node), see schedule_options.
  const int global_pct =
      root["percentageOfNodesToScore"]
          ? static_cast<int>(doc.integer(root["percentageOfNodesToScore"], "percentageOfNodesToScore", 0, 100))
          : 100;

  const YAML::Node profiles = root["profiles"];
  if (!profiles || !profiles.IsSequence() || profiles.size() == 0) {
    fail(profiles ? profiles : root, "profiles", "must be a non-empty list");
  }

  scheduler_config<C> out;
  for (std::size_t pi = 0; pi < profiles.size(); ++pi) {
    const YAML::Node prof = profiles[pi];
    const std::string pp = "profiles[" + std::to_string(pi) + "]";
    doc.allow_keys(prof, pp, {"schedulerName", "plugins", "pluginConfig", "percentageOfNodesToScore"});
    scheduler_profile<C> sp;
    sp.scheduler_name =
        prof["schedulerName"] ? doc.string(prof["schedulerName"], pp + ".schedulerName") : "default-scheduler";
    for (const auto& other : out.profiles) {
      if (other.scheduler_name == sp.scheduler_name)
        fail(prof, pp + ".schedulerName", "duplicate schedulerName '" + sp.scheduler_name + "'");
    }
    sp.options.percentage_of_nodes_to_score =
        prof["percentageOfNodesToScore"]
            ? static_cast<int>(doc.integer(prof["percentageOfNodesToScore"], pp + ".percentageOfNodesToScore", 0, 100))
            : global_pct;

    // pluginConfig: name -> args node.
    struct config_item {
      std::string name;
      YAML::Node args;
      YAML::Node at;
      bool check_built = false;  // its check factory ran on these args
      bool score_built = false;
    };
    std::vector<config_item> args;
    if (const YAML::Node pc = prof["pluginConfig"]) {
      if (!pc.IsSequence()) fail(pc, pp + ".pluginConfig", "must be a list");
      for (std::size_t i = 0; i < pc.size(); ++i) {
        const YAML::Node e = pc[i];
        const std::string ep = pp + ".pluginConfig[" + std::to_string(i) + "]";
        doc.allow_keys(e, ep, {"name", "args"});
        if (!e["name"]) fail(e, ep + ".name", "missing");
        const auto n = doc.string(e["name"], ep + ".name");
        if (!reg.find_check(n) && !reg.find_score(n)) {
          fail(e["name"], ep + ".name",
               is_kube_default_plugin(n)
                   ? "plugin '" + n + "' is one of Kubernetes' defaults that gpusched does not have: its args cannot "
                                      "be used (remove this entry)"
                   : "unknown plugin '" + n + "' in pluginConfig");
        }
        for (const auto& a : args) {
          if (a.name == n)
            fail(e, ep,
                 "duplicate pluginConfig for '" + n + "' (first at line " + std::to_string(doc.line(a.at)) + ")");
        }
        args.push_back({n, e["args"], e});
      }
    }
    auto args_of = [&](const std::string& n, bool for_score) {
      for (auto& a : args) {
        if (a.name == n) {
          (for_score ? a.score_built : a.check_built) = true;
          return plugin_args(doc, a.args, n);
        }
      }
      return plugin_args(doc, YAML::Node(), n);
    };

    // plugins: each extension point's enabled / disabled lists as written, then Kubernetes' merge
    // with its default plugins (v1 only) and its multiPoint expansion (docs/plugins.md, "Default
    // plugins and multiPoint").
    struct plugin_entry {
      std::string name;
      std::int64_t weight = 0;  // 0: none given
      YAML::Node at;
    };
    struct plugin_set {
      std::vector<plugin_entry> enabled;
      std::vector<std::string> disabled;
      [[nodiscard]] bool disables(std::string_view n) const {
        for (const auto& d : disabled) {
          if (d == n) return true;
        }
        return false;
      }
      [[nodiscard]] const plugin_entry* find(std::string_view n) const {
        for (const auto& e : enabled) {
          if (e.name == n) return &e;
        }
        return nullptr;
      }
    };
    plugin_set multi, pre, filt, scr;
    const bool v1 = api_s == "kubescheduler.config.k8s.io/v1";
    if (const YAML::Node plugins = prof["plugins"]) {
      if (!plugins.IsMap()) fail(plugins, pp + ".plugins", "must be a mapping of extension points");
      for (const auto& kv : plugins) {
        const auto& point = kv.first.Scalar();
        const std::string xp = pp + ".plugins." + point;
        const bool is_multi = point == "multiPoint";
        const bool is_filter = point == "preFilter" || point == "filter";
        if (!is_filter && !is_multi && point != "score") {
          static constexpr std::string_view others[] = {"queueSort", "postFilter", "preScore", "reserve", "permit",
                                                        "preBind",   "bind",       "postBind", "preEnqueue"};
          bool known = false;
          for (auto o : others) known = known || o == point;
          fail(kv.first, xp,
               known ? "extension point '" + point +
                           "' is not configurable in gpusched profiles (multiPoint, preFilter, filter, score are)"
                     : "unknown extension point '" + point + "' (multiPoint, preFilter, filter, score)");
        }
        // multiPoint came with v1beta3 (Kubernetes 1.23); v1beta2 has no such field.
        if (is_multi && api_s == "kubescheduler.config.k8s.io/v1beta2")
          fail(kv.first, xp, "multiPoint needs apiVersion kubescheduler.config.k8s.io/v1beta3 or v1");
        if (!kv.second.IsMap()) fail(kv.second, xp, "must have enabled/disabled lists");
        doc.allow_keys(kv.second, xp, {"enabled", "disabled"});
        plugin_set& set = is_multi ? multi : point == "preFilter" ? pre : point == "filter" ? filt : scr;
        auto has_point = [&](const std::string& n) {
          if (is_multi) return reg.find_check(n) != nullptr || reg.find_score(n) != nullptr;
          return is_filter ? reg.find_check(n) != nullptr : reg.find_score(n) != nullptr;
        };
        auto point_error = [&](const std::string& n) {
          if (is_kube_default_plugin(n))
            return "plugin '" + n + "' is one of Kubernetes' defaults that gpusched does not have (it may be disabled, "
                   "not enabled)";
          return (!is_multi && (is_filter ? reg.find_score(n) != nullptr : reg.find_check(n) != nullptr))
                     ? "plugin '" + n + "' has no " + point + " extension"
                     : "unknown plugin '" + n + "'";
        };
        if (const YAML::Node dis = kv.second["disabled"]) {
          if (!dis.IsSequence()) fail(dis, xp + ".disabled", "must be a list");
          for (std::size_t i = 0; i < dis.size(); ++i) {
            const YAML::Node d = dis[i];
            const std::string dp = xp + ".disabled[" + std::to_string(i) + "]";
            doc.allow_keys(d, dp, {"name"});
            if (!d["name"]) fail(d, dp + ".name", "missing");
            const auto n = doc.string(d["name"], dp + ".name");
            if (n != "*" && !has_point(n) && !is_kube_default_plugin(n)) fail(d["name"], dp + ".name", point_error(n));
            set.disabled.push_back(n);
          }
        }
        if (const YAML::Node en = kv.second["enabled"]) {
          if (!en.IsSequence()) fail(en, xp + ".enabled", "must be a list");
          for (std::size_t i = 0; i < en.size(); ++i) {
            const YAML::Node e = en[i];
            const std::string np = xp + ".enabled[" + std::to_string(i) + "]";
            doc.allow_keys(e, np, {"name", "weight"});
            if (!e["name"]) fail(e, np + ".name", "missing");
            const auto n = doc.string(e["name"], np + ".name");
            if (!has_point(n)) fail(e["name"], np + ".name", point_error(n));
            // Kubernetes refuses a plugin registered twice at one extension point (runtime/framework.go).
            if (const plugin_entry* o = set.find(n)) {
              fail(e["name"], np + ".name",
                   "plugin '" + n + "' is listed twice in " + point + ".enabled (first at line " +
                       std::to_string(doc.line(o->at)) + ")");
            }
            plugin_entry item{n, 0, e};
            if (e["weight"]) {
              if (is_filter || (is_multi && reg.find_score(n) == nullptr))
                fail(e["weight"], np + ".weight", "weight is only meaningful for score plugins");
              const std::int64_t w = doc.integer(e["weight"], np + ".weight", std::numeric_limits<std::int64_t>::min(),
                                                 std::numeric_limits<std::int64_t>::max());
              if (w < min_weight || w > max_weight) {
                fail(e["weight"], np + ".weight", "weight of '" + n + "' must be within 1..100, got " + std::to_string(w));
              }
              item.weight = w;
            }
            set.enabled.push_back(std::move(item));
          }
        }
      }
    }

    // multiPoint merged with v1's defaults (kube::merge_plugin_set); the defaults gpusched does not
    // have are reported, not run.
    std::vector<plugin_entry> defaults;
    if (v1) {
      for (const auto& d : kube_v1_default_plugins) defaults.push_back({std::string(d.name), d.weight, prof});
    }
    std::vector<plugin_entry> mp;
    for (auto& e : kube::merge_plugin_set(defaults, multi.enabled, multi.disabled)) {
      if (!reg.find_check(e.name) && !reg.find_score(e.name)) {
        sp.defaults_not_run.push_back(e.name);  // only a default can be unknown here: enabled names are checked above
      } else {
        mp.push_back(std::move(e));
      }
    }
    auto expand = [&](const plugin_set& s, auto implements) {
      return kube::expand_multi_point(mp, s.enabled, s.disabled, implements);
    };
    // gpusched's checks are Kubernetes' filters: multiPoint expands a check plugin into `filter`;
    // `preFilter` holds what it lists (the seed's file puts GPUCheck there), run before `filter`'s.
    const auto pre_list = expand(pre, [](const std::string&) { return false; });
    const auto filter_list = expand(filt, [&](const std::string& n) { return reg.find_check(n) != nullptr; });
    const auto score_list = expand(scr, [&](const std::string& n) { return reg.find_score(n) != nullptr; });

    // The profile starts with the default fit (dynamic_profile); with pluginConfig args it is rebuilt from them.
    sp.profile.without_default_fit();
    // Before v1, gpusched's own reading (ADR 0002): no default plugins, but NodeResourcesFit's filter
    // runs first unless disabled or listed. A v1 profile gets it from Kubernetes' defaults instead.
    bool fit_listed = false;
    for (const auto* l : {&pre_list, &filter_list}) {
      for (const auto& f : *l) fit_listed = fit_listed || f.name == "NodeResourcesFit";
    }
    const bool fit_disabled = filt.disables("NodeResourcesFit") || filt.disables("*") ||
                              multi.disables("NodeResourcesFit") || multi.disables("*");
    if (!v1 && !fit_disabled && !fit_listed)
      (*reg.find_check("NodeResourcesFit"))(sp.profile, args_of("NodeResourcesFit", false));
    for (const auto* l : {&pre_list, &filter_list}) {
      for (const auto& f : *l) {
        bool seen = false;  // a plugin enabled at both preFilter and filter is one check
        for (std::size_t i = 0; i < sp.profile.check_count(); ++i) seen = seen || sp.profile.check_name(i) == f.name;
        if (seen) continue;
        try {
          (*reg.find_check(f.name))(sp.profile, args_of(f.name, false));
        } catch (const invalid_argument_error& e) {
          doc.fail(f.at, e.what());
        }
      }
    }
    for (const auto& s : score_list) {
      try {
        // getScoreWeights (framework.go): the score point's weight, else multiPoint's, a missing one 1.
        (*reg.find_score(s.name))(sp.profile, s.weight == 0 ? 1 : s.weight, args_of(s.name, true));
      } catch (const invalid_argument_error& e) {
        doc.fail(s.at, e.what());
      }
    }
    // Args are checked by every factory of their plugin, also where this profile does not enable it
    // (Kubernetes decodes and validates every pluginConfig entry): against a scratch profile.
    for (auto& a : args) {
      dynamic_profile<C> scratch;
      try {
        const auto* fc = reg.find_check(a.name);
        if (fc && !a.check_built) (*fc)(scratch, plugin_args(doc, a.args, a.name));
        const auto* fs = reg.find_score(a.name);
        if (fs && !a.score_built) (*fs)(scratch, 1, plugin_args(doc, a.args, a.name));
      } catch (const invalid_argument_error& e) {
        doc.fail(a.at, e.what());
      }
    }
    out.profiles.push_back(std::move(sp));
  }
  return out;
}

}  // namespace detail

// Parses a KubeSchedulerConfiguration from text; `source` names it in errors.
template <Cluster C = in_memory_cluster>
scheduler_config<C> parse_scheduler_config(const std::string& text, const std::string& source = "<string>",
                                           const plugin_registry<C>& reg = plugin_registry<C>::builtins()) {
  const yaml_strict::document doc(text, source);
  try {
    return detail::build_scheduler_config<C>(doc, reg);
  } catch (const YAML::Exception& e) {  // not expected after the strict checks; still reported with its line
    throw file_error(source, e.mark.line >= 0 ? static_cast<std::size_t>(e.mark.line) + 1 : 0, "YAML: " + e.msg);
  }
}

// Loads a KubeSchedulerConfiguration file; errors name file:line and nothing is half-loaded.
template <Cluster C = in_memory_cluster>
scheduler_config<C> load_scheduler_config(const std::string& path,
                                          const plugin_registry<C>& reg = plugin_registry<C>::builtins()) {
  std::ifstream in(path);
  if (!in) throw file_error(path, 0, "cannot open file");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_scheduler_config<C>(ss.str(), path, reg);
}

}  // namespace gpusched
