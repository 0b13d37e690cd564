// Loading dynamic profiles from a KubeSchedulerConfiguration file (needs yaml-cpp: link gpusched::yaml).
//
// The seed's scheduler-config.yaml loads as written. Semantics (docs/adr/0002-scheduler-config.md):
// - preFilter and filter plugins become preflight checks, in the order listed (preFilter first);
//   score plugins become weighted scorers (weight 1..100, default 1).
// - NodeResourcesFit's CPU/memory filter is enabled by default, as in Kubernetes; list it under
//   `disabled` to turn it off. No other plugin is enabled implicitly.
// - pluginConfig args apply to the plugin wherever it is enabled; unknown fields are errors.
// - Any error names file:line and nothing is returned: there is no half-loaded configuration.
#pragma once

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "gpusched/core/error.hpp"
#include "gpusched/core/in_memory_cluster.hpp"
#include "gpusched/profile/dynamic_profile.hpp"
#include "gpusched/profile/plugin_args.hpp"
#include "gpusched/profile/registry.hpp"
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

inline void check_keys(const YAML::Node& map, std::initializer_list<std::string_view> known, const std::string& file,
                       std::string_view where) {
  for (const auto& kv : map) {
    const auto k = kv.first.as<std::string>();
    bool ok = false;
    for (auto a : known) ok = ok || a == k;
    if (!ok) throw file_error(file, yaml_line(kv.first), "unknown field '" + k + "' in " + std::string(where));
  }
}

template <Cluster C>
scheduler_config<C> build_scheduler_config(const YAML::Node& root, const std::string& file, const plugin_registry<C>& reg) {
  auto fail = [&](const YAML::Node& at, const std::string& why) -> void { throw file_error(file, yaml_line(at), why); };
  if (!root || !root.IsMap()) throw file_error(file, root ? yaml_line(root) : 1, "expected a KubeSchedulerConfiguration mapping");
  check_keys(root,
             {"apiVersion", "kind", "profiles", "percentageOfNodesToScore", "parallelism", "podInitialBackoffSeconds",
              "podMaxBackoffSeconds", "leaderElection", "clientConnection", "healthzBindAddress", "metricsBindAddress",
              "enableProfiling", "enableContentionProfiling", "extenders", "delayCacheUntilActive"},
             file, "KubeSchedulerConfiguration");
  const YAML::Node api = root["apiVersion"];
  if (!api) fail(root, "apiVersion is missing");
  const auto api_s = api.as<std::string>();
  if (api_s != "kubescheduler.config.k8s.io/v1beta2" && api_s != "kubescheduler.config.k8s.io/v1beta3" &&
      api_s != "kubescheduler.config.k8s.io/v1") {
    fail(api, "unsupported apiVersion '" + api_s + "' (kubescheduler.config.k8s.io/v1beta2, v1beta3 or v1)");
  }
  const YAML::Node kind = root["kind"];
  if (!kind || kind.as<std::string>() != "KubeSchedulerConfiguration") fail(kind ? kind : root, "kind must be KubeSchedulerConfiguration");

  auto percentage = [&](const YAML::Node& n) {
    int v = -1;
    try {
      v = n.as<int>();
    } catch (const YAML::Exception&) {
      fail(n, "percentageOfNodesToScore must be an integer");
    }
    if (v < 0 || v > 100) fail(n, "percentageOfNodesToScore must be within 0..100");
    return v;
  };
  // Kubernetes' default is 0 (adaptive); gpusched's default is 100 (score every node), see schedule_options.
  int global_pct = root["percentageOfNodesToScore"] ? percentage(root["percentageOfNodesToScore"]) : 100;

  const YAML::Node profiles = root["profiles"];
  if (!profiles || !profiles.IsSequence() || profiles.size() == 0) fail(profiles ? profiles : root, "profiles must be a non-empty list");

  scheduler_config<C> out;
  for (const auto& prof : profiles) {
    if (!prof.IsMap()) fail(prof, "each profile must be a mapping");
    check_keys(prof, {"schedulerName", "plugins", "pluginConfig", "percentageOfNodesToScore"}, file, "profile");
    scheduler_profile<C> sp;
    sp.scheduler_name = prof["schedulerName"] ? prof["schedulerName"].as<std::string>() : "default-scheduler";
    for (const auto& other : out.profiles) {
      if (other.scheduler_name == sp.scheduler_name) fail(prof, "duplicate schedulerName '" + sp.scheduler_name + "'");
    }
    sp.options.percentage_of_nodes_to_score =
        prof["percentageOfNodesToScore"] ? percentage(prof["percentageOfNodesToScore"]) : global_pct;

    // pluginConfig: name -> args node.
    std::vector<std::pair<std::string, YAML::Node>> args;
    if (const YAML::Node pc = prof["pluginConfig"]) {
      if (!pc.IsSequence()) fail(pc, "pluginConfig must be a list");
      for (const auto& e : pc) {
        if (!e.IsMap() || !e["name"]) fail(e, "pluginConfig entries need a name");
        check_keys(e, {"name", "args"}, file, "pluginConfig entry");
        const auto n = e["name"].as<std::string>();
        if (!reg.find_check(n) && !reg.find_score(n)) fail(e["name"], "unknown plugin '" + n + "' in pluginConfig");
        for (const auto& a : args) {
          if (a.first == n) fail(e, "duplicate pluginConfig for '" + n + "'");
        }
        args.emplace_back(n, e["args"]);
      }
    }
    auto args_of = [&](const std::string& n) {
      for (const auto& a : args) {
        if (a.first == n) return plugin_args(a.second, file, n);
      }
      return plugin_args(YAML::Node(), file, n);
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
      if (!plugins.IsMap()) fail(plugins, "plugins must be a mapping of extension points");
      for (const auto& kv : plugins) {
        const auto point = kv.first.as<std::string>();
        const bool is_filter = point == "preFilter" || point == "filter";
        if (!is_filter && point != "score") {
          static constexpr std::string_view others[] = {"queueSort", "postFilter", "preScore", "reserve", "permit",
                                                         "preBind", "bind", "postBind", "multiPoint", "preEnqueue"};
          bool known = false;
          for (auto o : others) known = known || o == point;
          fail(kv.first, known ? "extension point '" + point + "' is not configurable in gpusched profiles (preFilter, filter, score are)"
                               : "unknown extension point '" + point + "'");
        }
        if (!kv.second.IsMap()) fail(kv.second, point + " must have enabled/disabled lists");
        check_keys(kv.second, {"enabled", "disabled"}, file, point);
        if (const YAML::Node dis = kv.second["disabled"]) {
          if (!dis.IsSequence()) fail(dis, "disabled must be a list");
          for (const auto& d : dis) {
            if (!d.IsMap() || !d["name"]) fail(d, "disabled entries need a name");
            const auto n = d["name"].as<std::string>();
            if (is_filter && (n == "NodeResourcesFit" || n == "*")) fit_disabled = true;
          }
        }
        if (const YAML::Node en = kv.second["enabled"]) {
          if (!en.IsSequence()) fail(en, "enabled must be a list");
          for (const auto& e : en) {
            if (!e.IsMap() || !e["name"]) fail(e, "enabled entries need a name");
            check_keys(e, {"name", "weight"}, file, "plugin entry");
            const auto n = e["name"].as<std::string>();
            if (is_filter) {
              if (!reg.find_check(n)) {
                fail(e["name"], reg.find_score(n) ? "plugin '" + n + "' has no " + point + " extension"
                                                  : "unknown plugin '" + n + "'");
              }
              if (e["weight"]) fail(e["weight"], "weight is only meaningful for score plugins");
              filters.emplace_back(n, e);
            } else {
              if (!reg.find_score(n)) {
                fail(e["name"], reg.find_check(n) ? "plugin '" + n + "' has no score extension" : "unknown plugin '" + n + "'");
              }
              std::int64_t w = 1;
              if (e["weight"]) {
                try {
                  w = e["weight"].as<std::int64_t>();
                } catch (const YAML::Exception&) {
                  fail(e["weight"], "weight must be an integer");
                }
                if (w < min_weight || w > max_weight) {
                  fail(e["weight"], "weight of '" + n + "' must be within 1..100, got " + std::to_string(w));
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
    if (!fit_disabled && !fit_listed) (*reg.find_check("NodeResourcesFit"))(sp.profile, args_of("NodeResourcesFit"));
    for (const auto& f : filters) {
      bool seen = false;  // a plugin enabled at both preFilter and filter is one check
      for (std::size_t i = 0; i < sp.profile.check_count(); ++i) seen = seen || sp.profile.check_name(i) == f.first;
      if (seen) continue;
      try {
        (*reg.find_check(f.first))(sp.profile, args_of(f.first));
      } catch (const invalid_argument_error& e) {
        fail(f.second, e.what());
      }
    }
    for (const auto& s : score_items) {
      try {
        (*reg.find_score(s.name))(sp.profile, s.weight, args_of(s.name));
      } catch (const invalid_argument_error& e) {
        fail(s.at, e.what());
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
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw file_error(source, static_cast<std::size_t>(e.mark.line + 1), e.msg);
  }
  try {
    return detail::build_scheduler_config<C>(root, source, reg);
  } catch (const YAML::Exception& e) {  // a scalar where a map was expected, and similar
    throw file_error(source, static_cast<std::size_t>(e.mark.line + 1), e.msg);
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
