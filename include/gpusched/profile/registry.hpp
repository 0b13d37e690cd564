// plugin_registry: every plugin a dynamic profile can be built from, by its configuration name.
// Derived from the one list of descriptors (profile/builtin_plugins.hpp, as Kubernetes'
// plugins/registry.go lists them all); hosts add their own with add_* or from().
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpusched/core/cluster.hpp"
#include "gpusched/profile/builtin_plugins.hpp"
#include "gpusched/profile/dynamic_profile.hpp"
#include "gpusched/profile/plugin_args.hpp"
#include "gpusched/profile/plugin_descriptor.hpp"

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

  // The built-in plugins (profile/builtin_plugins.hpp; docs/plugins.md describes each, with its
  // arguments). `ctx` gives FGD / FillAware a workload when their args name none, Random its seed.
  static plugin_registry builtins(plugin_context ctx = {});
  // The plugins of a list of descriptors, each under its name and alias.
  template <class... D>
  static plugin_registry from(plugin_list<D...> list, plugin_context ctx = {});

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

template <Cluster C>
template <class... D>
plugin_registry<C> plugin_registry<C>::from(plugin_list<D...> list, plugin_context ctx) {
  plugin_registry r;
  auto shared = std::make_shared<const plugin_context>(std::move(ctx));
  for_each_plugin(list, [&]<class P>() {
    auto add = [&](std::string_view name) {
      if (name.empty()) return;
      if constexpr (requires(dynamic_profile<C>& p, const plugin_args& a) { P::template add_check<C>(p, a, *shared); }) {
        r.add_check(std::string(name), [shared](dynamic_profile<C>& p, const plugin_args& a) {
          P::template add_check<C>(p, a, *shared);
        });
      }
      if constexpr (requires(dynamic_profile<C>& p, const plugin_args& a) { P::template add_score<C>(p, 1, a, *shared); }) {
        r.add_score(std::string(name), [shared](dynamic_profile<C>& p, std::int64_t w, const plugin_args& a) {
          P::template add_score<C>(p, w, a, *shared);
          if constexpr (plugin_ties<P>() != tie_break_rule::first_node) p.prefer_ties(plugin_ties<P>());
        });
      }
    };
    add(P::name);
    add(plugin_alias<P>());
  });
  return r;
}

template <Cluster C>
plugin_registry<C> plugin_registry<C>::builtins(plugin_context ctx) {
  return from(builtin_plugins{}, std::move(ctx));
}

}  // namespace gpusched
