// The Scorer concept (Kubernetes' Score + NormalizeScore extension points).
//
// For a scorer `s`, `const C& c` (a Cluster), `const pod& p`, `node_index n`:
//   s.score(c, p, n) -> std::int64_t   0..100 (max_node_score), or a raw value when s normalises
//   s.name()         -> std::string_view
// Optional (detected): s.normalize(std::span<std::int64_t> scores) maps the raw scores of all
// feasible nodes onto 0..100 in place, as Kubernetes' ScoreExtensions.NormalizeScore does.
// Optional (detected): s.pre_score(c, p) -> score_status, once per pod before any node is scored
// (Kubernetes' PreScore): score_status::skip means the plugin has nothing to say about this pod; it
// is then neither run nor normalised and contributes nothing (run_scorer writes 0 for every node,
// which adds nothing to the weighted sum). Kubernetes' NodeAffinity skips a pod without preferred
// terms this way (framework/interface.go, Skip: "the plugin will be skipped in the following
// extension points").
//
// Optional (detected): s.pre_filter(c, p), once per scheduling cycle before any node is filtered,
// whether or not a node then fits (Kubernetes' PreFilter, which a score plugin may implement as
// well: framework/interface.go, PreFilterPlugin). For state that must see every pod a cycle is run
// for, including pods no node fits and pods then placed by preemption; PreScore sees only pods that
// reached scoring. schedule_one calls it through the profile (static_profile / dynamic_profile
// pre_filter); a host that scores without schedule_one calls the profile's pre_filter itself.
//
// A SpanScorer scores all feasible nodes of a pod in one call instead (a vectorised plugin, or one
// written in another language, such as the Python scorers of the bindings):
//   s.score_nodes(c, p, std::span<const node_index> nodes, std::int64_t* out)   out[j] for nodes[j]
//   s.name()         -> std::string_view
// dynamic_profile accepts both kinds.
#pragma once

#include <algorithm>
#include <concepts>
#include <cstdint>
#include <span>
#include <string_view>

#include "gpusched/config.hpp"
#include "gpusched/core/cluster.hpp"
#include "gpusched/core/pod.hpp"

namespace gpusched {

inline constexpr std::int64_t max_node_score = 100;  // framework.MaxNodeScore
inline constexpr std::int64_t min_weight = 1;        // KubeSchedulerConfiguration plugin weights
inline constexpr std::int64_t max_weight = 100;

template <class S, class C>
concept Scorer = Cluster<C> && requires(const S& s, const C& c, const pod& p, node_index n) {
  { s.score(c, p, n) } -> std::convertible_to<std::int64_t>;
  { s.name() } -> std::convertible_to<std::string_view>;
};

template <class S, class C>
concept SpanScorer = Cluster<C> && requires(const S& s, const C& c, const pod& p, std::span<const node_index> nodes,
                                           std::int64_t* out) {
  s.score_nodes(c, p, nodes, out);
  { s.name() } -> std::convertible_to<std::string_view>;
};

template <class S>
concept NormalizingScorer = requires(const S& s, std::span<std::int64_t> scores) { s.normalize(scores); };

// What PreScore answers.
enum class score_status : std::uint8_t { ok, skip };

template <class S, class C>
concept PreScoringScorer = Cluster<C> && requires(const S& s, const C& c, const pod& p) {
  { s.pre_score(c, p) } -> std::same_as<score_status>;
};

template <class S, class C>
concept PreFilteringScorer = Cluster<C> && requires(const S& s, const C& c, const pod& p) { s.pre_filter(c, p); };

// Kubernetes' DefaultNormalizeScore: scale so that the highest score becomes 100; with reverse,
// score = 100 - scaled. (kubernetes pkg/scheduler/framework/plugins/helper/normalize_score.go)
inline void default_normalize_score(std::int64_t max_score_value, bool reverse, std::span<std::int64_t> scores) noexcept {
  std::int64_t max_count = 0;
  for (std::int64_t s : scores) max_count = std::max(max_count, s);
  if (max_count == 0) {
    if (reverse) std::fill(scores.begin(), scores.end(), max_score_value);
    return;
  }
  for (std::int64_t& s : scores) {
    s = max_score_value * s / max_count;
    if (reverse) s = max_score_value - s;
  }
}

// Runs one scorer for one pod over its feasible nodes, writing out[j] for nodes[j]: PreScore (a
// skip writes 0 everywhere and returns false), then Score (per node, or all at once for a
// SpanScorer), then NormalizeScore. The one sequence every profile runs a scorer by.
template <class S, class C>
  requires Scorer<S, C> || SpanScorer<S, C>
bool run_scorer(const S& s, const C& c, const pod& p, std::span<const node_index> nodes, std::int64_t* out) {
  if constexpr (PreScoringScorer<S, C>) {
    if (s.pre_score(c, p) == score_status::skip) {
      std::fill(out, out + nodes.size(), std::int64_t{0});
      return false;
    }
  }
  if constexpr (SpanScorer<S, C>) {
    s.score_nodes(c, p, nodes, out);
  } else {
    for (std::size_t j = 0; j < nodes.size(); ++j) out[j] = static_cast<std::int64_t>(s.score(c, p, nodes[j]));
  }
  if constexpr (NormalizingScorer<S>) s.normalize(std::span<std::int64_t>(out, nodes.size()));
  return true;
}

}  // namespace gpusched
