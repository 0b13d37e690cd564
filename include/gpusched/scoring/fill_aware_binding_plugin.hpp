// The FillAwareBinding plugin's descriptor (profile/plugin_descriptor.hpp), beside its scorer
// (scoring/fill_aware_binding.hpp); listed in builtin_plugins (profile/builtin_plugins.hpp), whose
// argument decoders it uses (declared here, defined there, before the list).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

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

// FillAware's arguments as FillAware, FillAwareBinding and FillAwareRefill read them, in this order:
// the allowed keys, typicalPods, the hole-competition key (`competition_key`, stored in the
// option `competition`), cpuWeight, cpuPerGpu, and for the two binding plugins (`binding`)
// observeDemand (its default, o.observe_demand, only where plugin_context::counts_pods; an explicit
// true elsewhere is refused; read first), countedHoles (fill_aware_options::counted_holes; it acts
// only with observeDemand), keepBlocks (fill_aware_options::keep_blocks), drainBlocks
// (fill_aware_options::drain_blocks; it acts only with the block term) and cpuOnlyFit
// (fill_aware_options::cpu_only_fit; it acts only when CPU binds). `o` holds the plugin's defaults.
struct fill_aware_decoded {
  std::shared_ptr<const typical_workload> workload;
  fill_aware_options options;
};
// (A template, like the add_score that call it, so that it is instantiated only where
// builtin_plugins.hpp has defined the decoders it calls.)
template <class Context>
fill_aware_decoded fill_aware_args(const plugin_args& a, const Context& ctx, std::string_view plugin,
                                   std::string_view competition_key, double fill_aware_options::*competition,
                                   fill_aware_options o = {}, bool binding = false) {
  if (!binding) {
    a.allow_only({"typicalPods", competition_key, "cpuWeight", "cpuPerGpu", "selectDevices"});
  } else {
    a.allow_only({"typicalPods", competition_key, "cpuWeight", "cpuPerGpu", "observeDemand", "keepBlocks",
                  "drainBlocks", "countedHoles", "cpuOnlyFit", "selectDevices"});
    // The default (o.observe_demand: FillAwareRefill's) applies only where the host counts pods.
    o.observe_demand = flag(a, "observeDemand", o.observe_demand && ctx.counts_pods);
    if (o.observe_demand && !ctx.counts_pods) {
      a.fail(a.node()["observeDemand"],
             "observeDemand: true needs a host that hands every pod to the profile once, in arrival order, on one "
             "thread (gpusched-sim's trace replay); this one does not (an extender sees only the pods kube-scheduler "
             "sends it, in parallel requests)");
    }
  }
  auto w = workload(a, ctx, plugin);
  if (a.has(competition_key)) o.*competition = a.number(a.node()[std::string(competition_key)], competition_key, 0, 1e6);
  if (a.has("cpuWeight")) o.cpu_weight = a.number(a.node()["cpuWeight"], "cpuWeight", 0, 1e6);
  if (a.has("cpuPerGpu")) o.cpu_per_gpu = a.number(a.node()["cpuPerGpu"], "cpuPerGpu", 0, 1e9);
  if (binding) o.counted_holes = flag(a, "countedHoles", o.counted_holes);
  if (binding && a.has("keepBlocks")) o.keep_blocks = a.number(a.node()["keepBlocks"], "keepBlocks", 0, fill_aware_binding_scorer::max_keep_blocks);
  if (binding) o.drain_blocks = flag(a, "drainBlocks", o.drain_blocks);
  if (binding && a.has("cpuOnlyFit")) o.cpu_only_fit = a.number(a.node()["cpuOnlyFit"], "cpuOnlyFit", 0, 1);
  return {std::move(w), o};
}
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
    const auto d = plugin_decode::fill_aware_args(a, ctx, name, "fillCompetition", &fill_aware_options::fill_competition,
                                                  fill_aware_options{}, true);
    const fill_aware_binding_scorer fill(*d.workload, d.options);
    if (plugin_decode::flag(a, "selectDevices", true)) p.set_gpu_selector(fill);
    p.add_score(fill, weight);
  }
};

}  // namespace plugins
}  // namespace gpusched
