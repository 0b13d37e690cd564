// Kubernetes' default plugins of a KubeSchedulerConfiguration v1 profile, as kube-scheduler merges
// them into every profile (docs/plugins.md, "Default plugins"; docs/adr/0015-resources-by-name.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace gpusched {

struct kube_default_plugin {
  std::string_view name;
  std::int64_t weight;  // the default score weight; 0: none given (Kubernetes then uses 1 for a scorer)
};

// pkg/scheduler/apis/config/v1/default_plugins.go getDefaultPlugins (kubernetes/kubernetes commit
// 01db4ae9e74af4d97f67d2e92060f72ed91898da): MultiPoint.Enabled, in this order. gpusched runs the ones
// it has (NodeUnschedulable, TaintToleration, NodeAffinity, NodeResourcesFit,
// NodeResourcesBalancedAllocation); the others are listed in scheduler_profile::defaults_not_run.
inline constexpr kube_default_plugin kube_v1_default_plugins[] = {
    {"SchedulingGates", 0},   {"PrioritySort", 0},       {"NodeUnschedulable", 0},
    {"NodeName", 0},          {"TaintToleration", 3},    {"NodeAffinity", 2},
    {"NodePorts", 0},         {"NodeResourcesFit", 1},   {"VolumeRestrictions", 0},
    {"EBSLimits", 0},         {"GCEPDLimits", 0},        {"NodeVolumeLimits", 0},
    {"AzureDiskLimits", 0},   {"VolumeBinding", 0},      {"VolumeZone", 0},
    {"PodTopologySpread", 2}, {"InterPodAffinity", 2},   {"DefaultPreemption", 0},
    {"NodeResourcesBalancedAllocation", 1},              {"ImageLocality", 1},
    {"DefaultBinder", 0},
};

// A name kube-scheduler knows as one of its defaults (or DynamicResources, which its feature gate adds
// before DefaultPreemption): accepted under `disabled` even where gpusched has no such plugin, since
// disabling a default gpusched does not run changes nothing.
constexpr bool is_kube_default_plugin(std::string_view name) noexcept {
  for (const auto& d : kube_v1_default_plugins) {
    if (d.name == name) return true;
  }
  return name == "DynamicResources";
}

namespace kube {

// E: an enabled entry with a `name` (and whatever else the caller keeps: weight, source position).
template <class E>
bool lists_plugin(const std::vector<E>& list, std::string_view n) {
  for (const auto& e : list) {
    if (e.name == n) return true;
  }
  return false;
}
template <class S>
bool disables(const S& disabled, std::string_view n) {
  for (const auto& d : disabled) {
    if (std::string_view(d) == n) return true;
  }
  return false;
}

// mergePluginSet (apis/config/v1/default_plugins.go, kubernetes commit 01db4ae9e74a): the defaults in
// their order unless disabled (`*`: all); a default the custom list names again is replaced in place
// by the custom entry (its last occurrence); then the custom entries that replaced nothing, in order.
template <class E, class S>
std::vector<E> merge_plugin_set(const std::vector<E>& defaults, const std::vector<E>& custom, const S& disabled) {
  std::vector<E> out;
  std::vector<bool> replaced(custom.size(), false);
  if (!disables(disabled, "*")) {
    for (const auto& d : defaults) {
      if (disables(disabled, d.name)) continue;
      std::size_t last = custom.size();
      for (std::size_t i = 0; i < custom.size(); ++i) {
        if (custom[i].name == d.name) last = i;
      }
      if (last < custom.size()) {
        replaced[last] = true;
        out.push_back(custom[last]);
      } else {
        out.push_back(d);
      }
    }
  }
  for (std::size_t i = 0; i < custom.size(); ++i) {
    if (!replaced[i]) out.push_back(custom[i]);
  }
  return out;
}

// expandMultiPointPlugins for one extension point (framework/runtime/framework.go, kubernetes commit
// 0b68137114ea): with `*` disabled there, the point's own list alone. Otherwise: the point's entries
// that multiPoint also enables (in the point's order: the explicit entry overrides multiPoint's), then
// the multiPoint plugins implementing the point that it neither disables nor names, then the point's
// other entries. implements(name): whether that plugin has this extension point.
template <class E, class S, class F>
std::vector<E> expand_multi_point(const std::vector<E>& multi, const std::vector<E>& point, const S& disabled,
                                  F&& implements) {
  if (disables(disabled, "*")) return point;
  auto overrides = [&](const E& e) { return lists_plugin(multi, e.name) && implements(e.name) && !disables(disabled, e.name); };
  std::vector<E> out;
  for (const auto& e : point) {
    if (overrides(e)) out.push_back(e);
  }
  for (const auto& m : multi) {
    if (implements(m.name) && !disables(disabled, m.name) && !lists_plugin(point, m.name)) out.push_back(m);
  }
  for (const auto& e : point) {
    if (!overrides(e)) out.push_back(e);
  }
  return out;
}

}  // namespace kube

}  // namespace gpusched
