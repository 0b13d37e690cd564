// The FillAwareBinding plugin's descriptor (profile/plugin_descriptor.hpp), beside its scorer
// (scoring/fill_aware_binding.hpp); listed in builtin_plugins (profile/builtin_plugins.hpp), whose
// argument decoders it uses (declared here, defined there, before the list).
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "gpusched/core/cluster.hpp"
#include "gpusched/profile/dynamic_profile.hpp"
#include "gpusched/profile/plugin_args.hpp"
#include "gpusched/profile/plugin_descriptor.hpp"
#include "gpusched/scoring/fill_aware_binding.hpp"

namespace gpusched {

namespace plugin_decode {
inline std::shared_ptr<const typical_workload> workload(const plugin_args& a, const plugin_context& ctx,
                                                        std::string_view plugin);
inline bool flag(const plugin_args& a, std::string_view key, bool otherwise);
}  // namespace plugin_decode

namespace plugins {

// gpusched's FillAwareBinding: FillAware with the CPU term of the binding resource; score and devices.
struct fill_aware_binding_plugin {
  static constexpr std::string_view name = "FillAwareBinding";
  static constexpr std::string_view summary =
      "score and device choice: FillAware, CPU stranding by shape when the workload's CPU per GPU reaches the "
      "cluster's (gpusched)";
  using check_types = plugin_types<>;
  using score_types = plugin_types<fill_aware_binding_scorer>;
  template <Cluster C>
  static void add_score(dynamic_profile<C>& p, std::int64_t weight, const plugin_args& a, const plugin_context& ctx) {
    a.allow_only({"typicalPods", "fillCompetition", "cpuWeight", "cpuPerGpu", "selectDevices"});
    const auto w = plugin_decode::workload(a, ctx, "FillAwareBinding");
    fill_aware_options o;
    if (a.has("fillCompetition")) o.fill_competition = a.number(a.node()["fillCompetition"], "fillCompetition", 0, 1e6);
    if (a.has("cpuWeight")) o.cpu_weight = a.number(a.node()["cpuWeight"], "cpuWeight", 0, 1e6);
    if (a.has("cpuPerGpu")) o.cpu_per_gpu = a.number(a.node()["cpuPerGpu"], "cpuPerGpu", 0, 1e9);
    const fill_aware_binding_scorer fill(*w, o);
    if (plugin_decode::flag(a, "selectDevices", true)) p.set_gpu_selector(fill);
    p.add_score(fill, weight);
  }
};

}  // namespace plugins
}  // namespace gpusched
