// The FillAwareRefill plugin's descriptor (profile/plugin_descriptor.hpp): FillAwareBinding
// (scoring/fill_aware_binding.hpp) whose hole refill chance is scaled by the workload's share of
// sharing pods (fill_aware_options::fill_per_sharing_pod; docs/adr/0017-quality-method.md,
// "Amendment 2").
// Listed in builtin_plugins (profile/builtin_plugins.hpp), whose argument decoders it uses
// (declared here, defined there, before the list).
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "gpusched/core/cluster.hpp"
#include "gpusched/profile/dynamic_profile.hpp"
#include "gpusched/profile/plugin_args.hpp"
#include "gpusched/profile/plugin_descriptor.hpp"
#include "gpusched/scoring/fill_aware.hpp"
#include "gpusched/scoring/fill_aware_binding.hpp"

namespace gpusched {

namespace plugin_decode {
inline std::shared_ptr<const typical_workload> workload(const plugin_args& a, const plugin_context& ctx,
                                                        std::string_view plugin);
inline bool flag(const plugin_args& a, std::string_view key, bool otherwise);
}  // namespace plugin_decode

namespace plugins {

// gpusched's FillAwareRefill: FillAwareBinding with kappa = fillPerSharingPod / P_share; score and devices.
struct fill_aware_refill_plugin {
  static constexpr std::string_view name = "FillAwareRefill";
  static constexpr std::string_view summary =
      "score and device choice: FillAwareBinding, hole refill chance scaled by the workload's share of GPU-sharing "
      "pods (gpusched)";
  using check_types = plugin_types<>;
  using score_types = plugin_types<fill_aware_binding_scorer>;
  template <Cluster C>
  static void add_score(dynamic_profile<C>& p, std::int64_t weight, const plugin_args& a, const plugin_context& ctx) {
    a.allow_only({"typicalPods", "fillPerSharingPod", "cpuWeight", "cpuPerGpu", "selectDevices"});
    const auto w = plugin_decode::workload(a, ctx, "FillAwareRefill");
    fill_aware_options o;
    o.fill_per_sharing_pod = refill_fill_per_sharing_pod;
    if (a.has("fillPerSharingPod")) {
      o.fill_per_sharing_pod = a.number(a.node()["fillPerSharingPod"], "fillPerSharingPod", 0, 1e6);
    }
    if (a.has("cpuWeight")) o.cpu_weight = a.number(a.node()["cpuWeight"], "cpuWeight", 0, 1e6);
    if (a.has("cpuPerGpu")) o.cpu_per_gpu = a.number(a.node()["cpuPerGpu"], "cpuPerGpu", 0, 1e9);
    const fill_aware_binding_scorer fill(*w, o);
    if (plugin_decode::flag(a, "selectDevices", true)) p.set_gpu_selector(fill);
    p.add_score(fill, weight);
  }
};

}  // namespace plugins
}  // namespace gpusched
