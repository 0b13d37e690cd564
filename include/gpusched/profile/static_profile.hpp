// Static profiles: the enabled plugins and their weights as types, resolved at compile time.
//
//   auto prof = gpusched::make_profile(gpusched::checks(gpu_check{}, resource_fit{}),
//                                      gpusched::scores(weighted{load_aware{}, 10}, weighted{model_affinity{}, 5}));
//
// Like every profile (docs/plugins.md, "The CPU/memory fit in code"), make_profile checks CPU and memory unless told
// otherwise: without a CPU/memory fit check in checks(...), resource_fit{} becomes the first check;
// checks(no_default_fit{}, ...) opts out.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "gpusched/core/cluster.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/core/reason.hpp"
#include "gpusched/preflight/preflight.hpp"
#include "gpusched/preflight/resource_fit.hpp"
#include "gpusched/schedule/gpu_selection.hpp"
#include "gpusched/scoring/scorer.hpp"

namespace gpusched {

// A scorer with its KubeSchedulerConfiguration weight (1..100).
template <class S>
struct weighted {
  S scorer;
  std::int64_t weight = 1;
};
template <class S>
weighted(S, std::int64_t) -> weighted<S>;

template <class... K>
struct check_list {
  std::tuple<K...> items;
};
template <class... S>
struct score_list {
  std::tuple<weighted<S>...> items;
};

template <class... K>
check_list<K...> checks(K... k) { return {std::tuple<K...>(std::move(k)...)}; }

// checks(no_default_fit{}, gpu_check{}): a profile that checks exactly the listed types, without the
// default CPU/memory fit (YAML: `disabled: - name: NodeResourcesFit`). The marker is not a check.
struct no_default_fit {};

// A check that decides CPU and memory fit: resource_fit, or a type declaring
// `static constexpr bool fits_cpu_memory = true` (overcommit_fit). The same rule as dynamic_profile's.
template <class K>
inline constexpr bool is_fit_check = std::is_same_v<K, resource_fit> || requires { requires K::fits_cpu_memory; };
template <class... S>
score_list<S...> scores(weighted<S>... s) { return {std::tuple<weighted<S>...>(std::move(s)...)}; }

inline void validate_weight(std::int64_t w, std::string_view plugin) {
  if (w < min_weight || w > max_weight) {
    throw invalid_argument_error("profile.score." + std::string(plugin) + ".weight",
                                 "must be within 1..100, got " + std::to_string(w));
  }
}

template <class Checks, class Scores, class Selector = best_fit_gpus>
class static_profile;

template <class... K, class... S, class Selector>
class static_profile<check_list<K...>, score_list<S...>, Selector> {
 public:
  static_profile(check_list<K...> k, score_list<S...> s, Selector sel = {})
      : checks_(std::move(k.items)), scores_(std::move(s.items)), selector_(std::move(sel)) {
    std::apply([](const auto&... w) { (validate_weight(w.weight, w.scorer.name()), ...); }, scores_);
  }

  // Writes, for nodes first..first+count-1, the reason of the first check that rejects it (ok if none).
  template <Cluster C>
  void filter(const C& c, const pod& p, node_index first, std::size_t count, reason* out) const {
    static_assert((PreflightCheck<K, C> && ...), "every check must model PreflightCheck");
    for (std::size_t i = 0; i < count; ++i) {
      const auto n = static_cast<node_index>(first + i);
      reason r = reason::ok;
      std::apply([&](const auto&... k) { (void)((r = k.check(c, p, n), r == reason::ok) && ...); }, checks_);
      out[i] = r;
    }
  }

  [[nodiscard]] static constexpr std::size_t score_plugin_count() noexcept { return sizeof...(S); }
  [[nodiscard]] std::string_view score_plugin_name(std::size_t i) const { return names_[i]; }
  [[nodiscard]] std::int64_t score_plugin_weight(std::size_t i) const {
    std::int64_t w = 0;
    std::size_t j = 0;
    std::apply([&](const auto&... s) { ((j++ == i ? (w = s.weight, 0) : 0), ...); }, scores_);
    return w;
  }

  // PreFilter (scoring/scorer.hpp): each scorer's that has one, once per cycle before filter. Only
  // profiles with such a scorer have it (schedule_one calls it where it exists).
  template <Cluster C>
    requires(PreFilteringScorer<S, C> || ...)
  void pre_filter(const C& c, const pod& p) const {
    std::apply([&](const auto&... s) { (pre_filter_one(s.scorer, c, p), ...); }, scores_);
  }

  // Fills raw[k * nodes.size() + j] with plugin k's (normalised) score of nodes[j].
  template <Cluster C>
  void score(const C& c, const pod& p, std::span<const node_index> nodes, std::int64_t* raw) const {
    static_assert((Scorer<S, C> && ...), "every scorer must model Scorer");
    std::size_t k = 0;
    std::apply([&](const auto&... s) { (score_one(s.scorer, c, p, nodes, raw + (k++) * nodes.size()), ...); }, scores_);
  }

  template <Cluster C>
  [[nodiscard]] gpu_set select_gpus(const C& c, const pod& p, node_index n) const {
    return selector_.select(c, p, n);
  }

  // The plugins themselves, for engines that evaluate the profile another way (gpusched/batch/).
  [[nodiscard]] const std::tuple<K...>& check_plugins() const noexcept { return checks_; }
  [[nodiscard]] const std::tuple<weighted<S>...>& score_plugins() const noexcept { return scores_; }
  [[nodiscard]] const Selector& gpu_selector() const noexcept { return selector_; }

 private:
  template <class Sc, class C>
  static void pre_filter_one(const Sc& s, const C& c, const pod& p) {
    if constexpr (PreFilteringScorer<Sc, C>) s.pre_filter(c, p);
  }
  template <class Sc, class C>
  static void score_one(const Sc& s, const C& c, const pod& p, std::span<const node_index> nodes, std::int64_t* out) {
    run_scorer(s, c, p, nodes, out);  // PreScore (Skip), Score, NormalizeScore
  }

  std::tuple<K...> checks_;
  std::tuple<weighted<S>...> scores_;
  Selector selector_;
  std::array<std::string_view, sizeof...(S)> names_ = std::apply(
      [](const auto&... w) { return std::array<std::string_view, sizeof...(S)>{w.scorer.name()...}; }, scores_);
};

namespace detail {
template <class K>
auto unless_marker(K& k) {
  if constexpr (std::is_same_v<K, no_default_fit>) {
    return std::tuple<>{};
  } else {
    return std::tuple<K>(std::move(k));
  }
}
template <class... K>
auto with_fit_default(check_list<K...> k) {
  if constexpr ((std::is_same_v<K, no_default_fit> || ...)) {
    auto kept = std::apply([](auto&... x) { return std::tuple_cat(unless_marker(x)...); }, k.items);
    return std::apply([](auto&... x) { return checks(std::move(x)...); }, kept);
  } else if constexpr ((is_fit_check<K> || ...)) {
    return k;
  } else {
    return std::apply([](auto&... x) { return checks(resource_fit{}, std::move(x)...); }, k.items);
  }
}
}  // namespace detail

template <class... K, class... S, class Selector = best_fit_gpus>
auto make_profile(check_list<K...> k, score_list<S...> s, Selector sel = {}) {
  auto ks = detail::with_fit_default(std::move(k));
  return static_profile<decltype(ks), score_list<S...>, Selector>(std::move(ks), std::move(s), std::move(sel));
}

}  // namespace gpusched
