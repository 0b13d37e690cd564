// The built-in plugins: one descriptor each (profile/plugin_descriptor.hpp), and ONE list of them,
// builtin_plugins, from which the registry (profile/registry.hpp), the simulator's profiles
// (data/profiles/), Python's plugin names, the batch engine's erased forms and docs/plugins.md's
// table are derived. Adding a plugin: its descriptor (beside the plugin, or here) and one line in
// builtin_plugins (docs/plugins.md, "Writing your own").
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "gpusched/core/cluster.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/preflight/gpu_check.hpp"
#include "gpusched/preflight/load_threshold.hpp"
#include "gpusched/preflight/node_constraint_checks.hpp"
#include "gpusched/preflight/resource_fit.hpp"
#include "gpusched/profile/dynamic_profile.hpp"
#include "gpusched/profile/plugin_args.hpp"
#include "gpusched/profile/plugin_descriptor.hpp"
#include "gpusched/schedule/random_gpus.hpp"
#include "gpusched/scoring/fgd.hpp"
#include "gpusched/scoring/fgd_paper/best_fit.hpp"
#include "gpusched/scoring/fgd_paper/dot_product.hpp"
#include "gpusched/scoring/fgd_paper/gpu_clustering.hpp"
#include "gpusched/scoring/fgd_paper/gpu_packing.hpp"
#include "gpusched/scoring/fgd_paper/random_score.hpp"
#include "gpusched/scoring/fill_aware.hpp"
#include "gpusched/scoring/fill_aware_binding_plugin.hpp"
#include "gpusched/scoring/fill_aware_refill_plugin.hpp"
#include "gpusched/scoring/load_aware.hpp"
#include "gpusched/scoring/model_affinity.hpp"
#include "gpusched/scoring/node_constraint_scores.hpp"
#include "gpusched/scoring/node_resources.hpp"
#include "gpusched/scoring/qos_aware.hpp"

namespace gpusched {

namespace plugin_decode {

// A Kubernetes resource name -> gpusched's resource slot (0 cpu, 1 memory, 2 GPU milli); -1: unknown.
// The one place resource names are read (NodeResourcesFit, BalancedAllocation, LoadAware).
inline int resource_slot(std::string_view name) noexcept {
  if (name == "cpu") return 0;
  if (name == "memory") return 1;
  if (name == "nvidia.com/gpu" || name == "gpu") return 2;
  return -1;
}
inline constexpr const char* known_resources = "known: cpu, memory, nvidia.com/gpu";

inline void set_slot(resource_weights& w, int slot, std::int64_t v) noexcept {
  (slot == 0 ? w.cpu : slot == 1 ? w.memory : w.gpu) = v;
}

// Kubernetes' `resources: [{name, weight}]` -> resource weights. An empty list is Kubernetes'
// default set, cpu and memory with weight 1 (apis/config/v1/defaults.go, SetDefaults_NodeResourcesFitArgs
// and SetDefaults_NodeResourcesBalancedAllocationArgs: `len(Resources) == 0` -> defaultResourceSpec).
// Any other resource name goes to `named` (scored as Kubernetes does, scoring/resource_usage.hpp);
// `pods` is accepted and never scores (Kubernetes finds no allocatable for it there and skips it);
// a name given twice or more than max_named_weights names are errors at their line.
inline resource_weights resources(const plugin_args& a, const YAML::Node& list, const std::string& what,
                                  std::vector<named_weight>* named = nullptr) {
  if (!list.IsSequence()) a.fail(list, what + " must be a list of {name, weight}");
  if (list.size() == 0) return resource_weights{1, 1, 0};
  resource_weights w{0, 0, 0};
  for (std::size_t i = 0; i < list.size(); ++i) {
    const YAML::Node r = list[i];
    a.allow_keys(r, what + "[" + std::to_string(i) + "]", {"name", "weight"});
    if (!r["name"]) a.fail(r, what + " entries need a name");
    const std::string name = a.string(r["name"], what + "[" + std::to_string(i) + "].name");
    // Kubernetes defaults a zero or missing weight to 1 (apis/config/v1/defaults.go) and accepts 1..100.
    const std::int64_t weight =
        r["weight"] ? a.integer(r["weight"], what + "[" + std::to_string(i) + "].weight", 0, 100) : 0;
    const int slot = resource_slot(name);
    if (slot >= 0) {
      set_slot(w, slot, weight == 0 ? 1 : weight);
      continue;
    }
    if (name == "pods") continue;
    if (named == nullptr) a.fail(r["name"], "unknown resource '" + name + "' (" + known_resources + ")");
    named_weight nw;
    try {
      nw = named_weight{resource_name(name, what + "[" + std::to_string(i) + "].name"), weight == 0 ? 1 : weight};
    } catch (const invalid_argument_error& e) {
      a.fail(r["name"], e.what());
    }
    for (const named_weight& seen : *named) {
      if (seen.name == nw.name) a.fail(r["name"], "resource '" + name + "' is listed twice in " + what);
    }
    if (named->size() == static_cast<std::size_t>(max_named_weights)) {
      a.fail(r["name"], "at most " + std::to_string(max_named_weights) + " resources besides cpu, memory and nvidia.com/gpu in " + what);
    }
    named->push_back(nw);
  }
  return w;
}

// A `{resource: value}` mapping; f(slot, value node, field path) per entry.
template <class F>
void resource_map(const plugin_args& a, const YAML::Node& m, const std::string& what, F&& f) {
  if (!m.IsMap()) a.fail(m, what + " must map resource names to values");
  for (const auto& kv : m) {
    const std::string k = kv.first.Scalar();
    const int slot = resource_slot(k);
    if (slot < 0) a.fail(kv.first, "unknown resource '" + k + "' in " + what + " (" + known_resources + ")");
    f(slot, kv.second, what + "." + k);
  }
}

// FGD's and FillAware's `typicalPods` (shares normalised to sum to 1), or the context's workload.
inline std::shared_ptr<const typical_workload> workload(const plugin_args& a, const plugin_context& ctx,
                                                        std::string_view plugin) {
  if (!a.has("typicalPods")) {
    if (ctx.workload) return ctx.workload;
    throw invalid_argument_error(std::string(plugin),
                                 "needs pluginConfig args.typicalPods (the workload's pod shapes and shares), or a "
                                 "workload from where it runs (the simulator's trace)");
  }
  const YAML::Node list = a.node()["typicalPods"];
  if (!list.IsSequence() || list.size() == 0)
    a.fail(list, "typicalPods must be a non-empty list of {cpuMilli, gpuMilli, numGpu, share, gpuModels}");
  std::vector<typical_pod> shapes;
  double total = 0.0;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const YAML::Node t = list[i];
    const std::string at = "typicalPods[" + std::to_string(i) + "]";
    a.allow_keys(t, at, {"cpuMilli", "gpuMilli", "numGpu", "share", "gpuModels"});
    if (!t["share"]) a.fail(t, "each typical pod needs a share (> 0)");
    typical_pod tp;
    tp.cpu_milli = t["cpuMilli"] ? a.integer(t["cpuMilli"], at + ".cpuMilli", 0, std::int64_t{1} << 40) : 0;
    tp.num_gpu =
        t["numGpu"] ? static_cast<std::int32_t>(a.integer(t["numGpu"], at + ".numGpu", 0, max_gpus_per_node)) : 0;
    tp.gpu_milli =
        t["gpuMilli"] ? static_cast<std::int32_t>(a.integer(t["gpuMilli"], at + ".gpuMilli", 0, gpu_milli_whole)) : 0;
    if ((tp.num_gpu == 0) != (tp.gpu_milli == 0)) a.fail(t, "gpuMilli must be 0 exactly when numGpu is 0");
    if (t["gpuModels"]) {
      if (!t["gpuModels"].IsSequence()) a.fail(t["gpuModels"], "gpuModels must be a list of GPU model names");
      if (tp.num_gpu == 0) a.fail(t["gpuModels"], "gpuModels needs numGpu > 0 (a pod without GPUs names no model)");
      for (const auto& m : t["gpuModels"]) {
        try {
          tp.models.emplace_back(a.string(m, at + ".gpuModels"), "gpuModels");
        } catch (const invalid_argument_error& e) {
          a.fail(m, e.what());
        }
      }
      tp.gpu_type = gpu_type_key(tp.models);
    }
    tp.probability = a.number(t["share"], at + ".share", 1e-9, 1e12);
    total += tp.probability;
    shapes.push_back(std::move(tp));
  }
  for (auto& tp : shapes) tp.probability /= total;
  return std::make_shared<const typical_workload>(std::move(shapes));
}

inline bool flag(const plugin_args& a, std::string_view key, bool otherwise) {
  return a.has(key) ? a.boolean(a.node()[std::string(key)], key) : otherwise;
}

// Adds scorer s unless cluster type C lacks a hook it needs (GpuClustering's affinity tags).
template <Cluster C, class S>
void add_if_scores(dynamic_profile<C>& p, S s, std::int64_t weight, std::string_view plugin, std::string_view needs) {
  if constexpr (Scorer<S, C> || SpanScorer<S, C>) {
    p.add_score(std::move(s), weight);
  } else {
    throw invalid_argument_error(std::string(plugin), "needs a cluster with " + std::string(needs));
  }
}

}  // namespace plugin_decode

namespace plugins {

// A plugin without args: its filter K and its scorer S, default-constructed (void: none). A
// descriptor derives from it and adds its name and summary.
template <class K, class S = void>
struct argless_plugin {
  using check_types = std::conditional_t<std::is_void_v<K>, plugin_types<>, plugin_types<K>>;
  using score_types = std::conditional_t<std::is_void_v<S>, plugin_types<>, plugin_types<S>>;
  template <Cluster C>
    requires(!std::is_void_v<K>)
  static void add_check(dynamic_profile<C>& p, const plugin_args& a, const plugin_context&) {
    a.allow_only({});
    p.add_check(K{});
  }
  template <Cluster C>
    requires(!std::is_void_v<S>)
  static void add_score(dynamic_profile<C>& p, std::int64_t weight, const plugin_args& a, const plugin_context&) {
    a.allow_only({});
    p.add_score(S{}, weight);
  }
};

struct gpu_check_plugin : argless_plugin<gpu_check> {
  static constexpr std::string_view name = "GPUCheck";
  static constexpr std::string_view summary = "filter: enough GPUs of an allowed model with the share and memory free";
};

// NodeResourcesFit: the CPU / memory filter (with gpusched's `overcommit` ceilings) and the scoring
// strategies LeastAllocated, MostAllocated, RequestedToCapacityRatio.
struct node_resources_fit_plugin {
  static constexpr std::string_view name = "NodeResourcesFit";
  static constexpr std::string_view summary =
      "filter: pods, CPU, memory and named resources fit (overcommit ratios); score: LeastAllocated, MostAllocated or "
      "RequestedToCapacityRatio";
  using check_types = plugin_types<resource_fit>;
  using score_types = plugin_types<least_allocated, most_allocated, requested_to_capacity_ratio>;
  static void allow(const plugin_args& a) {
    a.allow_only({"scoringStrategy", "overcommit", "ignoredResources", "ignoredResourceGroups", "nonZeroRequests"});
  }

  template <Cluster C>
  static void add_check(dynamic_profile<C>& p, const plugin_args& a, const plugin_context&) {
    allow(a);
    resource_fit fit;
    if (a.has("overcommit")) {
      plugin_decode::resource_map(a, a.node()["overcommit"], "overcommit", [&](int slot, const YAML::Node& v, const std::string& at) {
        if (slot == 2) a.fail(v, "overcommit supports cpu and memory, not nvidia.com/gpu");
        const auto permille = static_cast<std::int64_t>(std::llround(a.number(v, at, 1.0, 10.0) * 1000));
        (slot == 0 ? fit.cpu_ratio_permille : fit.memory_ratio_permille) = permille;
      });
    }
    if (a.has("ignoredResources")) {
      const YAML::Node l = a.node()["ignoredResources"];
      if (!l.IsSequence()) a.fail(l, "ignoredResources must be a list of resource names");
      for (std::size_t i = 0; i < l.size(); ++i) {
        const std::string at = "ignoredResources[" + std::to_string(i) + "]";
        try {
          fit.ignored_resources.emplace_back(a.string(l[i], at), at);
        } catch (const invalid_argument_error& e) {
          a.fail(l[i], e.what());
        }
      }
    }
    if (a.has("ignoredResourceGroups")) {
      const YAML::Node l = a.node()["ignoredResourceGroups"];
      if (!l.IsSequence()) a.fail(l, "ignoredResourceGroups must be a list of resource name prefixes");
      for (std::size_t i = 0; i < l.size(); ++i) {
        const std::string g = a.string(l[i], "ignoredResourceGroups[" + std::to_string(i) + "]");
        // validation_pluginargs.go: a group is a DNS-1123 subdomain, without '/'.
        if (g.empty() || g.find('/') != std::string::npos || !is_valid_label_key(g)) {
          a.fail(l[i], "ignoredResourceGroups entry '" + g + "' must be a resource name prefix without '/'");
        }
        fit.ignored_resource_groups.push_back(g);
      }
    }
    p.add_check(fit);
  }

  template <Cluster C>
  static void add_score(dynamic_profile<C>& p, std::int64_t weight, const plugin_args& a, const plugin_context&) {
    allow(a);
    std::string type = "LeastAllocated";  // Kubernetes' default strategy
    resource_weights w{};
    std::vector<named_weight> named;
    std::vector<requested_to_capacity_ratio::point> shape;
    if (a.has("scoringStrategy")) {
      const YAML::Node s = a.node()["scoringStrategy"];
      if (!s.IsMap()) a.fail(s, "scoringStrategy must be a mapping");
      a.allow_keys(s, "scoringStrategy", {"type", "resources", "requestedToCapacityRatio"});
      // v1 defaulting fills in a missing scoringStrategy only; one given without a type fails
      // validation (validation_pluginargs.go, ValidateNodeResourcesFitArgs: type NotSupported "").
      if (!s["type"]) a.fail(s, "scoringStrategy.type is required (LeastAllocated, MostAllocated or RequestedToCapacityRatio)");
      type = a.string(s["type"], "scoringStrategy.type");
      if (type != "LeastAllocated" && type != "MostAllocated" && type != "RequestedToCapacityRatio") {
        a.fail(s["type"], "scoringStrategy.type must be LeastAllocated, MostAllocated or RequestedToCapacityRatio");
      }
      if (s["resources"]) w = plugin_decode::resources(a, s["resources"], "scoringStrategy.resources", &named);
      if (const YAML::Node r = s["requestedToCapacityRatio"]) {
        a.allow_keys(r, "scoringStrategy.requestedToCapacityRatio", {"shape"});
        const YAML::Node sh = r["shape"];
        if (!sh || !sh.IsSequence()) a.fail(r, "requestedToCapacityRatio.shape must be a list");
        for (std::size_t i = 0; i < sh.size(); ++i) {
          const YAML::Node pt = sh[i];
          const std::string at = "scoringStrategy.requestedToCapacityRatio.shape[" + std::to_string(i) + "]";
          a.allow_keys(pt, at, {"utilization", "score"});
          if (!pt["utilization"] || !pt["score"]) a.fail(pt, "shape points need utilization and score");
          shape.push_back({a.integer(pt["utilization"], at + ".utilization", 0, 100),
                           a.integer(pt["score"], at + ".score", 0, 10)});
        }
      }
    }
    // gpusched's option (not in Kubernetes' args): Kubernetes' non-zero request defaults, 100m CPU
    // and 200 MiB for a pod or a bound pod that requests none (scoring/resource_usage.hpp).
    nonzero_requests nonzero;
    nonzero.enabled = plugin_decode::flag(a, "nonZeroRequests", false);
    if (type == "LeastAllocated") {
      p.add_score(least_allocated{w, std::move(named), nonzero}, weight);
    } else if (type == "MostAllocated") {
      p.add_score(most_allocated{w, std::move(named), nonzero}, weight);
    } else {
      if (shape.empty()) a.fail(a.node(), "RequestedToCapacityRatio needs requestedToCapacityRatio.shape");
      try {
        requested_to_capacity_ratio r(shape, w);
        r.named = std::move(named);
        r.nonzero = nonzero;
        p.add_score(std::move(r), weight);
      } catch (const invalid_argument_error& e) {
        a.fail(a.node()["scoringStrategy"], e.what());
      }
    }
  }
};

struct balanced_allocation_plugin {
  static constexpr std::string_view name = "NodeResourcesBalancedAllocation";
  static constexpr std::string_view summary = "score: resource fractions kept close together";
  using check_types = plugin_types<>;
  using score_types = plugin_types<balanced_allocation>;
  template <Cluster C>
  static void add_score(dynamic_profile<C>& p, std::int64_t weight, const plugin_args& a, const plugin_context&) {
    a.allow_only({"resources", "formula"});
    balanced_allocation b;
    if (a.has("resources")) b.weights = plugin_decode::resources(a, a.node()["resources"], "resources", &b.named);
    if (a.has("formula")) {  // gpusched's option (not in Kubernetes' args): which of the two scores
      const std::string f = a.string(a.node()["formula"], "formula");
      if (f == "ChangeInBalance") {
        b.formula = balance_formula::change;
      } else if (f == "BalanceAfter") {
        b.formula = balance_formula::after;
      } else {
        a.fail(a.node()["formula"], "formula must be ChangeInBalance (Kubernetes since PR #135573, the default) or "
                                    "BalanceAfter (the balance with the pod, before that PR), not '" + f + "'");
      }
    }
    p.add_score(b, weight);
  }
};

// LoadAware (Koordinator's LoadAwareScheduling): usage thresholds as a filter, measured usage as a score.
struct load_aware_plugin {
  static constexpr std::string_view name = "LoadAware";
  static constexpr std::string_view alias = "LoadAwareScheduling";
  static constexpr std::string_view summary = "filter: measured usage under thresholds; score: least measured usage";
  using check_types = plugin_types<load_threshold>;
  using score_types = plugin_types<load_aware>;
  template <Cluster C>
  static void add_check(dynamic_profile<C>& p, const plugin_args& a, const plugin_context&) {
    a.allow_only({"usageThresholds", "resourceWeights"});
    load_threshold t;
    if (a.has("usageThresholds")) {
      plugin_decode::resource_map(a, a.node()["usageThresholds"], "usageThresholds",
                                  [&](int slot, const YAML::Node& v, const std::string& at) {
                                    const double f = a.number(v, at, 0, 100) / 100.0;
                                    (slot == 0 ? t.cpu : slot == 1 ? t.memory : t.gpu) = f;
                                  });
    }
    p.add_check(t);
  }
  template <Cluster C>
  static void add_score(dynamic_profile<C>& p, std::int64_t weight, const plugin_args& a, const plugin_context&) {
    a.allow_only({"usageThresholds", "resourceWeights"});
    load_aware s;
    if (a.has("resourceWeights")) {
      s.weights = {0, 0, 0};
      plugin_decode::resource_map(a, a.node()["resourceWeights"], "resourceWeights",
                                  [&](int slot, const YAML::Node& v, const std::string& at) {
                                    plugin_decode::set_slot(s.weights, slot, a.integer(v, at, 0, 100));
                                  });
    }
    p.add_score(s, weight);
  }
};

struct model_affinity_plugin {
  static constexpr std::string_view name = "ModelAffinity";
  static constexpr std::string_view summary = "score: nodes serving the pod's model, away from interfering models";
  using check_types = plugin_types<>;
  using score_types = plugin_types<model_affinity>;
  template <Cluster C>
  static void add_score(dynamic_profile<C>& p, std::int64_t weight, const plugin_args& a, const plugin_context&) {
    a.allow_only({"interferingPairs"});
    model_affinity m;
    if (a.has("interferingPairs")) {
      const YAML::Node pairs = a.node()["interferingPairs"];
      if (!pairs.IsSequence()) a.fail(pairs, "interferingPairs must be a list of [modelA, modelB]");
      for (std::size_t i = 0; i < pairs.size(); ++i) {
        const YAML::Node pr = pairs[i];
        if (!pr.IsSequence() || pr.size() != 2) a.fail(pr, "each interfering pair must be [modelA, modelB]");
        const std::string at = "interferingPairs[" + std::to_string(i) + "]";
        try {
          m.interfering.emplace_back(short_name(a.string(pr[0], at + "[0]"), "interferingPairs"),
                                     short_name(a.string(pr[1], at + "[1]"), "interferingPairs"));
        } catch (const invalid_argument_error& e) {
          a.fail(pr, e.what());
        }
      }
    }
    p.add_score(std::move(m), weight);
  }
};

struct qos_aware_plugin : argless_plugin<void, qos_aware> {
  static constexpr std::string_view name = "QoSAware";
  static constexpr std::string_view summary = "score: Guaranteed pods spread, BestEffort pods pack on GPU share";
};

// FGD (Weng et al., USENIX ATC'23; scoring/fgd.hpp); also chooses the devices inside the node unless
// selectDevices is false (the authors' simulator does both).
struct fgd_plugin {
  static constexpr std::string_view name = "FGDScore";
  static constexpr std::string_view alias = "FGD";
  static constexpr std::string_view summary =
      "score and device choice: fragmentation gradient descent over the workload's typical pods (Weng et al., ATC'23)";
  using check_types = plugin_types<>;
  using score_types = plugin_types<fgd_scorer>;
  template <Cluster C>
  static void add_score(dynamic_profile<C>& p, std::int64_t weight, const plugin_args& a, const plugin_context& ctx) {
    a.allow_only({"typicalPods", "fineScore", "selectDevices"});
    auto w = plugin_decode::workload(a, ctx, "FGDScore");
    fgd_options o;
    o.fine_score = plugin_decode::flag(a, "fineScore", o.fine_score);
    const fgd_scorer fgd(std::move(w), o);
    if (plugin_decode::flag(a, "selectDevices", true)) p.set_gpu_selector(fgd);
    p.add_score(fgd, weight);
  }
};

// gpusched's FillAware (scoring/fill_aware.hpp): score and device choice.
struct fill_aware_plugin {
  static constexpr std::string_view name = "FillAware";
  static constexpr std::string_view summary =
      "score and device choice: eventual GPU-share hole waste plus CPU stranding over the workload (gpusched)";
  using check_types = plugin_types<>;
  using score_types = plugin_types<fill_aware_scorer>;
  template <Cluster C>
  static void add_score(dynamic_profile<C>& p, std::int64_t weight, const plugin_args& a, const plugin_context& ctx) {
    const auto d = plugin_decode::fill_aware_args(a, ctx, name, "fillCompetition", &fill_aware_options::fill_competition);
    const fill_aware_scorer fill(*d.workload, d.options);
    if (plugin_decode::flag(a, "selectDevices", true)) p.set_gpu_selector(fill);
    p.add_score(fill, weight);
  }
};

// The FGD paper's five baselines (scoring/fgd_paper/, as in the authors' simulator), with their devices.
struct random_plugin {
  static constexpr std::string_view name = "RandomScore";
  static constexpr std::string_view summary =
      "score: every node alike, uniform tie-break, random fitting devices (FGD paper baseline)";
  static constexpr tie_break_rule ties = tie_break_rule::reservoir;
  using check_types = plugin_types<>;
  using score_types = plugin_types<fgd_paper::random_score>;
  using selector_types = plugin_types<random_gpus>;
  template <Cluster C>
  static void add_score(dynamic_profile<C>& p, std::int64_t weight, const plugin_args& a, const plugin_context& ctx) {
    a.allow_only({});
    p.add_score(fgd_paper::random_score{}, weight);
    p.set_gpu_selector(random_gpus(ctx.seed));
  }
};

template <class S>
struct fgd_baseline_plugin {
  static constexpr std::string_view name = S::name();
  using check_types = plugin_types<>;
  using score_types = plugin_types<S>;
  template <Cluster C>
  static void add_score(dynamic_profile<C>& p, std::int64_t weight, const plugin_args& a, const plugin_context&) {
    a.allow_only({});
    plugin_decode::add_if_scores(p, S{}, weight, name, "GPU affinity tags (bound_cluster)");
  }
};
struct dot_product_plugin : fgd_baseline_plugin<fgd_paper::dot_product> {
  static constexpr std::string_view summary = "score: Tetris dot product of free and requested CPU/GPU (FGD paper baseline)";
};
struct gpu_clustering_plugin : fgd_baseline_plugin<fgd_paper::gpu_clustering> {
  static constexpr std::string_view summary = "score: co-locate pods of the same GPU shape (FGD paper baseline)";
};
struct gpu_packing_plugin : fgd_baseline_plugin<fgd_paper::gpu_packing> {
  static constexpr std::string_view summary = "score: partly used GPUs first, then partly used nodes (FGD paper baseline)";
};
struct best_fit_plugin : fgd_baseline_plugin<fgd_paper::best_fit> {
  static constexpr std::string_view summary = "score: least CPU+GPU left after placement (FGD paper baseline)";
};

// Kubernetes' node constraints (preflight/node_constraint_checks.hpp, scoring/node_constraint_scores.hpp;
// upstream pkg/scheduler/framework/plugins/{nodeunschedulable,tainttoleration,nodeaffinity}).
// NodeAffinity's addedAffinity is not read from YAML yet.
struct node_unschedulable_plugin : argless_plugin<unschedulable_check> {
  static constexpr std::string_view name = "NodeUnschedulable";
  static constexpr std::string_view summary = "filter: nodes marked spec.unschedulable, unless the pod tolerates the taint";
};

struct taint_toleration_plugin : argless_plugin<taint_toleration, taint_toleration_score> {
  static constexpr std::string_view name = "TaintToleration";
  static constexpr std::string_view summary =
      "filter: NoSchedule/NoExecute taints the pod does not tolerate; score: fewer intolerable PreferNoSchedule taints";
};

struct node_affinity_plugin : argless_plugin<node_affinity, node_affinity_score> {
  static constexpr std::string_view name = "NodeAffinity";
  static constexpr std::string_view summary =
      "filter: nodeSelector and required node affinity; score: preferred node affinity terms' weights";
};

}  // namespace plugins

// THE list of built-in plugins: one line per plugin.
using builtin_plugins =
    plugin_list<plugins::gpu_check_plugin, plugins::node_resources_fit_plugin, plugins::balanced_allocation_plugin,
                plugins::load_aware_plugin, plugins::model_affinity_plugin, plugins::qos_aware_plugin,
                plugins::fgd_plugin, plugins::fill_aware_plugin, plugins::random_plugin, plugins::dot_product_plugin,
                plugins::fill_aware_binding_plugin,
                plugins::fill_aware_refill_plugin,
                plugins::gpu_clustering_plugin, plugins::gpu_packing_plugin, plugins::best_fit_plugin,
                plugins::node_unschedulable_plugin, plugins::taint_toleration_plugin, plugins::node_affinity_plugin>;

}  // namespace gpusched
