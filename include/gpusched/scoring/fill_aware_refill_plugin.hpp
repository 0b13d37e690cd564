// The FillAwareRefill plugin's descriptor (profile/plugin_descriptor.hpp): FillAwareBinding
// (scoring/fill_aware_binding.hpp) whose hole refill chance is scaled by the workload's share of
// sharing pods (fill_aware_options::fill_per_sharing_pod; docs/adr/0017-quality-method.md,
// "Amendment 2").
// Listed in builtin_plugins (profile/builtin_plugins.hpp); its arguments are FillAware's
// (plugin_decode::fill_aware_args, scoring/fill_aware_binding_plugin.hpp).
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
#include "gpusched/scoring/fill_aware_binding_plugin.hpp"  // plugin_decode::fill_aware_args

namespace gpusched {

namespace plugins {

// gpusched's FillAwareRefill: FillAwareBinding with kappa = fillPerSharingPod / P_share; score and devices.
struct fill_aware_refill_plugin {
  static constexpr std::string_view name = "FillAwareRefill";
  static constexpr std::string_view summary =
      "score and device choice: FillAwareBinding, hole refill chance scaled by the workload's share of GPU-sharing "
      "pods (gpusched)";
  using check_types = plugin_types<>;
  using score_types = plugin_types<fill_aware_refill_scorer>;
  template <Cluster C>
  static void add_score(dynamic_profile<C>& p, std::int64_t weight, const plugin_args& a, const plugin_context& ctx) {
    fill_aware_options o = fill_aware_refill_scorer::defaults();
    o.observe_demand = true;  // the default where the host counts pods (plugin_context::counts_pods)
    const auto d = plugin_decode::fill_aware_args(a, ctx, name, "fillPerSharingPod", &fill_aware_options::fill_per_sharing_pod,
                                                  o, true);
    const fill_aware_refill_scorer fill(*d.workload, d.options);
    if (plugin_decode::flag(a, "selectDevices", true)) p.set_gpu_selector(fill);
    p.add_score(fill, weight);
  }
};

}  // namespace plugins
}  // namespace gpusched
