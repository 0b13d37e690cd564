// plugin_descriptor: what the registry, the simulator, Python, the batch engine and the docs know of
// one plugin, written once, beside the plugin (docs/adr/0008-plugin-descriptors.md).
//
// A descriptor is a type with
//
//   static constexpr std::string_view name;        its configuration name (KubeSchedulerConfiguration)
//   static constexpr std::string_view alias;       a second accepted name, or "" (optional)
//   static constexpr std::string_view summary;     one line for docs/plugins.md's table
//   using check_types = plugin_types<K...>;        the checks (filters) it may add, for the batch engine
//   using score_types = plugin_types<S...>;        the scorers (and device selectors) it may add
//   using selector_types = plugin_types<G...>;     device selectors it adds that are not scorers (optional)
//   static constexpr tie_break_rule ties;          how it wants equal scores separated (optional)
//   template <Cluster C>                           when check_types is not empty: decodes the args and
//   static void add_check(dynamic_profile<C>&, const plugin_args&, const plugin_context&);  adds the check
//   template <Cluster C>                           when score_types is not empty: the same for the scorer
//   static void add_score(dynamic_profile<C>&, std::int64_t weight, const plugin_args&, const plugin_context&);
//
// and the built-ins are listed once, as a plugin_list, in profile/builtin_plugins.hpp. A plugin's batch
// form is its batch_plugin<T> specialisation (batch/plugin.hpp); the batch engine finds it through
// the types listed here.
#pragma once

#include <concepts>
#include <cstdint>
#include <memory>
#include <string_view>

#include "gpusched/core/cluster.hpp"
#include "gpusched/schedule/tie_break.hpp"
#include "gpusched/scoring/typical_pods.hpp"

namespace gpusched {

// What a plugin may take from where it runs rather than from its args: the workload's typical pods
// (FGD and FillAware use them when `typicalPods` is not given: the replayed trace's) and a seed
// (Random's device choice).
struct plugin_context {
  std::shared_ptr<const typical_workload> workload;  // null: none; FGD / FillAware then need typicalPods
  std::uint64_t seed = 0;
  // The host places pods one at a time, in arrival order, on one thread per profile, and every pod
  // reaches the profile (the simulator): plugins may count the pods they see (FillAwareRefill's
  // observeDemand, on by default only then; scoring/fill_aware_binding.hpp).
  bool counts_pods = false;
};

template <class... T>
struct plugin_types {};

template <class... D>
struct plugin_list {};

template <class D>
concept PluginDescriptor = requires {
  { D::name } -> std::convertible_to<std::string_view>;
  { D::summary } -> std::convertible_to<std::string_view>;
  typename D::check_types;
  typename D::score_types;
};

// A descriptor's second name ("" when it has none).
template <PluginDescriptor D>
constexpr std::string_view plugin_alias() noexcept {
  if constexpr (requires { D::alias; }) {
    return D::alias;
  } else {
    return {};
  }
}

// How a plugin wants equally scored nodes separated (the Random baseline draws uniformly among them).
template <PluginDescriptor D>
constexpr tie_break_rule plugin_ties() noexcept {
  if constexpr (requires { D::ties; }) {
    return D::ties;
  } else {
    return tie_break_rule::first_node;
  }
}

template <class L>
struct plugin_list_size;
template <class... D>
struct plugin_list_size<plugin_list<D...>> : std::integral_constant<std::size_t, sizeof...(D)> {};

// f.template operator()<D>() for each descriptor D of the list, in order.
template <class... D, class F>
constexpr void for_each_plugin(plugin_list<D...>, F&& f) {
  static_assert((PluginDescriptor<D> && ...), "every entry of a plugin_list must be a plugin descriptor");
  (f.template operator()<D>(), ...);
}

}  // namespace gpusched
