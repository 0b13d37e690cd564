// plugin_registry: every plugin a dynamic profile can be built from, by its configuration name.
// One place lists them all (as Kubernetes' plugins/registry.go does); hosts add their own with add_*.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpusched/core/cluster.hpp"
#include "gpusched/preflight/gpu_check.hpp"
#include "gpusched/preflight/load_threshold.hpp"
#include "gpusched/preflight/node_constraint_checks.hpp"
#include "gpusched/preflight/resource_fit.hpp"
#include "gpusched/profile/dynamic_profile.hpp"
#include "gpusched/profile/plugin_args.hpp"
#include "gpusched/scoring/fgd.hpp"
#include "gpusched/scoring/load_aware.hpp"
#include "gpusched/scoring/model_affinity.hpp"
#include "gpusched/scoring/node_constraint_scores.hpp"
#include "gpusched/scoring/node_resources.hpp"
#include "gpusched/scoring/qos_aware.hpp"

namespace gpusched {

template <Cluster C>
class plugin_registry {
 public:
  // A filter factory appends its check(s); a score factory appends its scorer with the weight.
  using check_factory = std::function<void(dynamic_profile<C>&, const plugin_args&)>;
  using score_factory = std::function<void(dynamic_profile<C>&, std::int64_t weight, const plugin_args&)>;

  plugin_registry& add_check(std::string name, check_factory f) {
    checks_[std::move(name)] = std::move(f);
    return *this;
  }
  plugin_registry& add_score(std::string name, score_factory f) {
    scores_[std::move(name)] = std::move(f);
    return *this;
  }
  [[nodiscard]] const check_factory* find_check(const std::string& name) const {
    auto it = checks_.find(name);
    return it == checks_.end() ? nullptr : &it->second;
  }
  [[nodiscard]] const score_factory* find_score(const std::string& name) const {
    auto it = scores_.find(name);
    return it == scores_.end() ? nullptr : &it->second;
  }
  [[nodiscard]] std::vector<std::string> check_names() const { return keys(checks_); }
  [[nodiscard]] std::vector<std::string> score_names() const { return keys(scores_); }

  // The built-in plugins (docs/plugins.md describes each, with its arguments).
  static plugin_registry builtins();

 private:
  template <class M>
  static std::vector<std::string> keys(const M& m) {
    std::vector<std::string> v;
    for (const auto& kv : m) v.push_back(kv.first);
    return v;
  }
  std::map<std::string, check_factory, std::less<>> checks_;
  std::map<std::string, score_factory, std::less<>> scores_;
};

namespace detail {

// Kubernetes resource names -> gpusched's resource weights.
inline resource_weights parse_resources(const plugin_args& a, const YAML::Node& list, const char* what) {
  if (!list.IsSequence()) a.fail(list, std::string(what) + " must be a list of {name, weight}");
  resource_weights w{0, 0, 0};
  for (std::size_t i = 0; i < list.size(); ++i) {
    const YAML::Node r = list[i];
    a.allow_keys(r, std::string(what) + "[" + std::to_string(i) + "]", {"name", "weight"});
    if (!r["name"]) a.fail(r, std::string(what) + " entries need a name");
    const std::string name = a.string(r["name"], "resource name");
    // Kubernetes defaults a zero or missing weight to 1 (apis/config/v1/defaults.go) and accepts 1..100.
    const std::int64_t weight = r["weight"] ? a.integer(r["weight"], "resource weight", 0, 100) : 0;
    const std::int64_t eff = weight == 0 ? 1 : weight;
    if (name == "cpu") {
      w.cpu = eff;
    } else if (name == "memory") {
      w.memory = eff;
    } else if (name == "nvidia.com/gpu" || name == "gpu") {
      w.gpu = eff;
    } else {
      a.fail(r["name"], "unknown resource '" + name + "' (known: cpu, memory, nvidia.com/gpu)");
    }
  }
  return w;
}

inline std::int64_t parse_ratio_permille(const plugin_args& a, const YAML::Node& n, const char* what) {
  return static_cast<std::int64_t>(std::llround(a.number(n, what, 1.0, 10.0) * 1000));
}

}  // namespace detail

template <Cluster C>
plugin_registry<C> plugin_registry<C>::builtins() {
  plugin_registry r;

  r.add_check("GPUCheck", [](dynamic_profile<C>& p, const plugin_args& a) {
    a.allow_only({});
    p.add_check(gpu_check{});
  });

  // NodeResourcesFit: the CPU / memory filter (with gpusched's `overcommit` ceilings) and the
  // scoring strategies LeastAllocated, MostAllocated, RequestedToCapacityRatio.
  r.add_check("NodeResourcesFit", [](dynamic_profile<C>& p, const plugin_args& a) {
    a.allow_only({"scoringStrategy", "overcommit", "ignoredResources", "ignoredResourceGroups"});
    resource_fit fit;
    if (a.has("overcommit")) {
      const YAML::Node o = a.node()["overcommit"];
      if (!o.IsMap()) a.fail(o, "overcommit must map resources to ratios");
      for (const auto& kv : o) {
        const auto k = kv.first.Scalar();
        if (k == "cpu") {
          fit.cpu_ratio_permille = detail::parse_ratio_permille(a, kv.second, "overcommit.cpu");
        } else if (k == "memory") {
          fit.memory_ratio_permille = detail::parse_ratio_permille(a, kv.second, "overcommit.memory");
        } else {
          a.fail(kv.first, "overcommit supports cpu and memory, not '" + k + "'");
        }
      }
    }
    p.add_check(fit);
  });
  r.add_score("NodeResourcesFit", [](dynamic_profile<C>& p, std::int64_t weight, const plugin_args& a) {
    a.allow_only({"scoringStrategy", "overcommit", "ignoredResources", "ignoredResourceGroups"});
    std::string type = "LeastAllocated";  // Kubernetes' default strategy
    resource_weights w{};
    std::vector<requested_to_capacity_ratio::point> shape;
    if (a.has("scoringStrategy")) {
      const YAML::Node s = a.node()["scoringStrategy"];
      if (!s.IsMap()) a.fail(s, "scoringStrategy must be a mapping");
      for (const auto& kv : s) {
        const auto k = kv.first.Scalar();
        if (k == "type") {
          type = a.string(kv.second, "scoringStrategy.type");
          if (type != "LeastAllocated" && type != "MostAllocated" && type != "RequestedToCapacityRatio") {
            a.fail(kv.second, "scoringStrategy.type must be LeastAllocated, MostAllocated or RequestedToCapacityRatio");
          }
        } else if (k == "resources") {
          w = detail::parse_resources(a, kv.second, "scoringStrategy.resources");
        } else if (k == "requestedToCapacityRatio") {
          a.allow_keys(kv.second, "scoringStrategy.requestedToCapacityRatio", {"shape"});
          const YAML::Node sh = kv.second["shape"];
          if (!sh || !sh.IsSequence()) a.fail(kv.second, "requestedToCapacityRatio.shape must be a list");
          for (std::size_t i = 0; i < sh.size(); ++i) {
            const YAML::Node pt = sh[i];
            a.allow_keys(pt, "scoringStrategy.requestedToCapacityRatio.shape[" + std::to_string(i) + "]",
                         {"utilization", "score"});
            if (!pt["utilization"] || !pt["score"]) a.fail(pt, "shape points need utilization and score");
            shape.push_back({a.integer(pt["utilization"], "shape.utilization", 0, 100),
                             a.integer(pt["score"], "shape.score", 0, 10)});
          }
        } else {
          a.fail(kv.first, "unknown key '" + k + "' in scoringStrategy");
        }
      }
    }
    if (type == "LeastAllocated") {
      p.add_score(least_allocated{w}, weight);
    } else if (type == "MostAllocated") {
      p.add_score(most_allocated{w}, weight);
    } else {
      if (shape.empty()) a.fail(a.node(), "RequestedToCapacityRatio needs requestedToCapacityRatio.shape");
      try {
        p.add_score(requested_to_capacity_ratio(shape, w), weight);
      } catch (const invalid_argument_error& e) {
        a.fail(a.node()["scoringStrategy"], e.what());
      }
    }
  });

  r.add_score("NodeResourcesBalancedAllocation", [](dynamic_profile<C>& p, std::int64_t weight, const plugin_args& a) {
    a.allow_only({"resources"});
    resource_weights w{};
    if (a.has("resources")) w = detail::parse_resources(a, a.node()["resources"], "resources");
    p.add_score(balanced_allocation{w}, weight);
  });

  // LoadAware (Koordinator's LoadAwareScheduling): usage thresholds as a filter, measured usage as a score.
  auto load_check = [](dynamic_profile<C>& p, const plugin_args& a) {
    a.allow_only({"usageThresholds", "resourceWeights"});
    load_threshold t;
    if (a.has("usageThresholds")) {
      const YAML::Node u = a.node()["usageThresholds"];
      if (!u.IsMap()) a.fail(u, "usageThresholds must map resources to percentages");
      for (const auto& kv : u) {
        const auto k = kv.first.Scalar();
        const double v = a.number(kv.second, "usageThresholds." + k, 0, 100) / 100.0;
        if (k == "cpu") {
          t.cpu = v;
        } else if (k == "memory") {
          t.memory = v;
        } else if (k == "nvidia.com/gpu" || k == "gpu") {
          t.gpu = v;
        } else {
          a.fail(kv.first, "unknown resource '" + k + "' in usageThresholds");
        }
      }
    }
    p.add_check(t);
  };
  auto load_score = [](dynamic_profile<C>& p, std::int64_t weight, const plugin_args& a) {
    a.allow_only({"usageThresholds", "resourceWeights"});
    load_aware s;
    if (a.has("resourceWeights")) {
      const YAML::Node u = a.node()["resourceWeights"];
      if (!u.IsMap()) a.fail(u, "resourceWeights must map resources to weights");
      s.weights = {0, 0, 0};
      for (const auto& kv : u) {
        const auto k = kv.first.Scalar();
        const std::int64_t v = a.integer(kv.second, "resourceWeights." + k, 0, 100);
        if (k == "cpu") {
          s.weights.cpu = v;
        } else if (k == "memory") {
          s.weights.memory = v;
        } else if (k == "nvidia.com/gpu" || k == "gpu") {
          s.weights.gpu = v;
        } else {
          a.fail(kv.first, "unknown resource '" + k + "' in resourceWeights");
        }
      }
    }
    p.add_score(s, weight);
  };
  r.add_check("LoadAware", load_check);
  r.add_check("LoadAwareScheduling", load_check);
  r.add_score("LoadAware", load_score);
  r.add_score("LoadAwareScheduling", load_score);

  r.add_score("ModelAffinity", [](dynamic_profile<C>& p, std::int64_t weight, const plugin_args& a) {
    a.allow_only({"interferingPairs"});
    model_affinity m;
    if (a.has("interferingPairs")) {
      const YAML::Node pairs = a.node()["interferingPairs"];
      if (!pairs.IsSequence()) a.fail(pairs, "interferingPairs must be a list of [modelA, modelB]");
      for (const auto& pr : pairs) {
        if (!pr.IsSequence() || pr.size() != 2) a.fail(pr, "each interfering pair must be [modelA, modelB]");
        try {
          m.interfering.emplace_back(short_name(a.string(pr[0], "model"), "interferingPairs"),
                                     short_name(a.string(pr[1], "model"), "interferingPairs"));
        } catch (const invalid_argument_error& e) {
          a.fail(pr, e.what());
        }
      }
    }
    p.add_score(std::move(m), weight);
  });

  r.add_score("QoSAware", [](dynamic_profile<C>& p, std::int64_t weight, const plugin_args& a) {
    a.allow_only({});
    p.add_score(qos_aware{}, weight);
  });

  // FGD (Weng et al., USENIX ATC'23; scoring/fgd.hpp). The target workload is given as typical pod
  // shapes with their shares of the workload (normalised to sum to 1); FGD also chooses the
  // devices inside the node unless selectDevices is false (the authors' simulator does both).
  auto fgd_score = [](dynamic_profile<C>& p, std::int64_t weight, const plugin_args& a) {
    a.allow_only({"typicalPods", "fineScore", "selectDevices"});
    if (!a.has("typicalPods")) {  // reported at the plugin's entry (the args are absent)
      throw invalid_argument_error("FGDScore",
                                   "needs pluginConfig args.typicalPods (the workload's pod shapes and shares)");
    }
    const YAML::Node list = a.node()["typicalPods"];
    if (!list.IsSequence() || list.size() == 0)
      a.fail(list, "typicalPods must be a non-empty list of {cpuMilli, gpuMilli, numGpu, share, gpuModels}");
    std::vector<typical_pod> shapes;
    double total = 0.0;
    for (std::size_t i = 0; i < list.size(); ++i) {
      const YAML::Node t = list[i];
      a.allow_keys(t, "typicalPods[" + std::to_string(i) + "]",
                   {"cpuMilli", "gpuMilli", "numGpu", "share", "gpuModels"});
      if (!t["share"]) a.fail(t, "each typical pod needs a share (> 0)");
      typical_pod tp;
      tp.cpu_milli = t["cpuMilli"] ? a.integer(t["cpuMilli"], "cpuMilli", 0, std::int64_t{1} << 40) : 0;
      tp.num_gpu = t["numGpu"] ? static_cast<std::int32_t>(a.integer(t["numGpu"], "numGpu", 0, max_gpus_per_node)) : 0;
      tp.gpu_milli =
          t["gpuMilli"] ? static_cast<std::int32_t>(a.integer(t["gpuMilli"], "gpuMilli", 0, gpu_milli_whole)) : 0;
      if ((tp.num_gpu == 0) != (tp.gpu_milli == 0)) a.fail(t, "gpuMilli must be 0 exactly when numGpu is 0");
      if (t["gpuModels"]) {
        if (!t["gpuModels"].IsSequence()) a.fail(t["gpuModels"], "gpuModels must be a list of GPU model names");
        for (const auto& m : t["gpuModels"]) {
          try {
            tp.models.emplace_back(a.string(m, "gpuModels"), "gpuModels");
          } catch (const invalid_argument_error& e) {
            a.fail(m, e.what());
          }
        }
        tp.gpu_type = gpu_type_key(tp.models);
      }
      tp.probability = a.number(t["share"], "share", 1e-9, 1e12);
      total += tp.probability;
      shapes.push_back(std::move(tp));
    }
    for (auto& tp : shapes) tp.probability /= total;
    fgd_options o;
    if (a.has("fineScore")) {
      o.fine_score = a.boolean(a.node()["fineScore"], "fineScore");
    }
    bool select = true;
    if (a.has("selectDevices")) {
      select = a.boolean(a.node()["selectDevices"], "selectDevices");
    }
    const fgd_scorer fgd(typical_workload(std::move(shapes)), o);
    if (select) p.set_gpu_selector(fgd);
    p.add_score(fgd, weight);
  };
  r.add_score("FGDScore", fgd_score);
  r.add_score("FGD", fgd_score);

  // NodeUnschedulable, TaintToleration, NodeAffinity (preflight/node_constraint_checks.hpp,
  // scoring/node_constraint_scores.hpp); NodeAffinity's addedAffinity is not read from YAML yet.
  r.add_check("NodeUnschedulable", [](dynamic_profile<C>& p, const plugin_args& a) { a.allow_only({}); p.add_check(unschedulable_check{}); });
  r.add_check("TaintToleration", [](dynamic_profile<C>& p, const plugin_args& a) { a.allow_only({}); p.add_check(taint_toleration{}); });
  r.add_score("TaintToleration", [](dynamic_profile<C>& p, std::int64_t w, const plugin_args& a) { a.allow_only({}); p.add_score(taint_toleration_score{}, w); });
  r.add_check("NodeAffinity", [](dynamic_profile<C>& p, const plugin_args& a) { a.allow_only({}); p.add_check(node_affinity{}); });
  r.add_score("NodeAffinity", [](dynamic_profile<C>& p, std::int64_t w, const plugin_args& a) { a.allow_only({}); p.add_score(node_affinity_score{}, w); });

  return r;
}

}  // namespace gpusched
