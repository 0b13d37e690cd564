// Loading dynamic profiles from a KubeSchedulerConfiguration file (needs yaml-cpp: link gpusched::yaml).
//
// The seed's scheduler-config.yaml loads as written. Semantics (docs/adr/0002-scheduler-config.md):
// - preFilter and filter plugins become preflight checks, in the order listed (preFilter first);
//   score plugins become weighted scorers (weight 1..100, default 1).
// - NodeResourcesFit's CPU/memory filter is enabled by default, as in Kubernetes; list it under
//   `disabled` to turn it off. No other plugin is enabled implicitly.
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
        if (!reg.find_check(n) && !reg.find_score(n))
          fail(e["name"], ep + ".name", "unknown plugin '" + n + "' in pluginConfig");
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

    bool fit_disabled = false;
    std::vector<std::pair<std::string, YAML::Node>> filters;  // name, where
    struct score_item {
      std::string name;
      std::int64_t weight;
      YAML::Node at;
    };
    std::vector<score_item> score_items;
    if (const YAML::Node plugins = prof["plugins"]) {
      if (!plugins.IsMap()) fail(plugins, pp + ".plugins", "must be a mapping of extension points");
      for (const auto& kv : plugins) {
        const auto& point = kv.first.Scalar();
        const std::string xp = pp + ".plugins." + point;
        const bool is_filter = point == "preFilter" || point == "filter";
        if (!is_filter && point != "score") {
          static constexpr std::string_view others[] = {"queueSort",  "postFilter", "preScore", "reserve",
                                                        "permit",     "preBind",    "bind",     "postBind",
                                                        "multiPoint", "preEnqueue"};
          bool known = false;
          for (auto o : others) known = known || o == point;
          fail(kv.first, xp,
               known ? "extension point '" + point +
                           "' is not configurable in gpusched profiles (preFilter, filter, score are)"
                     : "unknown extension point '" + point + "' (preFilter, filter, score)");
        }
        if (!kv.second.IsMap()) fail(kv.second, xp, "must have enabled/disabled lists");
        doc.allow_keys(kv.second, xp, {"enabled", "disabled"});
        auto has_point = [&](const std::string& n) {
          return is_filter ? reg.find_check(n) != nullptr : reg.find_score(n) != nullptr;
        };
        auto point_error = [&](const std::string& n) {
          return (is_filter ? reg.find_score(n) != nullptr : reg.find_check(n) != nullptr)
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
            if (n != "*" && !has_point(n)) fail(d["name"], dp + ".name", point_error(n));
            if (is_filter && (n == "NodeResourcesFit" || n == "*")) fit_disabled = true;
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
            for (std::size_t j = 0; j < i; ++j) {
              const YAML::Node o = en[j];
              if (o["name"].Scalar() == n) {
                fail(e["name"], np + ".name",
                     "plugin '" + n + "' is listed twice in " + point + ".enabled (first at line " +
                         std::to_string(doc.line(o)) + ")");
              }
            }
            if (is_filter) {
              if (e["weight"]) fail(e["weight"], np + ".weight", "weight is only meaningful for score plugins");
              filters.emplace_back(n, e);
            } else {
              std::int64_t w = 1;
              if (e["weight"]) {
                w = doc.integer(e["weight"], np + ".weight", std::numeric_limits<std::int64_t>::min(),
                                std::numeric_limits<std::int64_t>::max());
                if (w < min_weight || w > max_weight) {
                  fail(e["weight"], np + ".weight",
                       "weight of '" + n + "' must be within 1..100, got " + std::to_string(w));
                }
              }
              score_items.push_back({n, w, e});
            }
          }
        }
      }
    }
    // NodeResourcesFit's filter runs first unless disabled or listed explicitly.
    bool fit_listed = false;
    for (const auto& f : filters) fit_listed = fit_listed || f.first == "NodeResourcesFit";
    // The profile starts with the default fit (dynamic_profile); with pluginConfig args it is rebuilt from them.
    sp.profile.without_default_fit();
    if (!fit_disabled && !fit_listed)
      (*reg.find_check("NodeResourcesFit"))(sp.profile, args_of("NodeResourcesFit", false));
    for (const auto& f : filters) {
      bool seen = false;  // a plugin enabled at both preFilter and filter is one check
      for (std::size_t i = 0; i < sp.profile.check_count(); ++i) seen = seen || sp.profile.check_name(i) == f.first;
      if (seen) continue;
      try {
        (*reg.find_check(f.first))(sp.profile, args_of(f.first, false));
      } catch (const invalid_argument_error& e) {
        doc.fail(f.second, e.what());
      }
    }
    for (const auto& s : score_items) {
      try {
        (*reg.find_score(s.name))(sp.profile, s.weight, args_of(s.name, true));
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
