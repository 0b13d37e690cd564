// Kubernetes' TaintToleration and NodeAffinity scores (their filters are in
// preflight/node_constraint_checks.hpp). Both normalise over the feasible nodes as upstream does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "gpusched/core/node_constraints.hpp"
#include "gpusched/preflight/node_constraint_checks.hpp"
#include "gpusched/scoring/scorer.hpp"

namespace gpusched {

// TaintToleration's score (kubernetes pkg/scheduler/framework/plugins/tainttoleration/
// taint_toleration.go, Score and NormalizeScore): the raw score is the number of PreferNoSchedule
// taints of the node that none of the pod's tolerations with effect PreferNoSchedule (or no
// effect) tolerates; DefaultNormalizeScore(MaxNodeScore, reverse) then gives the node with the
// most such taints 0 and nodes with none 100.
struct taint_toleration_score {
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "TaintToleration"; }
  template <Cluster C>
  [[nodiscard]] std::int64_t score(const C& c, const pod& p, node_index n) const {
    const auto& tolerations = p.placement.get().tolerations;
    std::int64_t count = 0;
    for (const node_taint& t : taints_of(c, n)) {
      if (t.effect != taint_effect::prefer_no_schedule) continue;
      bool ok = false;
      for (const toleration& tol : tolerations) {
        // getAllTolerationPreferNoSchedule: only tolerations with no effect or PreferNoSchedule count.
        if ((!tol.effect || *tol.effect == taint_effect::prefer_no_schedule) && tol.tolerates(t)) {
          ok = true;
          break;
        }
      }
      count += ok ? 0 : 1;
    }
    return count;
  }
  static void normalize(std::span<std::int64_t> scores) noexcept { default_normalize_score(max_node_score, true, scores); }
};

// NodeAffinity's score (nodeaffinity/node_affinity.go, PreScore, Score and NormalizeScore): the sum
// of the weights of the pod's preferred terms (and the plugin's addedAffinity preferred terms)
// that the node matches, normalised so that the best node gets 100 (DefaultNormalizeScore,
// forward). PreScore answers Skip for a pod with no preferred terms when there are no added ones.
struct node_affinity_score {
  std::vector<preferred_term> added;  // addedAffinity.preferredDuringScheduling...

  [[nodiscard]] static constexpr std::string_view name() noexcept { return "NodeAffinity"; }
  template <Cluster C>
  [[nodiscard]] score_status pre_score(const C&, const pod& p) const noexcept {
    return p.placement.get().preferred.empty() && added.empty() ? score_status::skip : score_status::ok;
  }
  template <Cluster C>
  [[nodiscard]] std::int64_t score(const C& c, const pod& p, node_index n) const {
    const auto labels = labels_of(c, n);
    std::int64_t sum = 0;
    for (const preferred_term& t : added) {
      const bool usable = !(t.preference.match_expressions.empty() && t.preference.match_fields.empty());
      if (detail::term_matches(t.preference, usable, labels, c, n)) sum += t.weight;
    }
    const placement_ref& ref = p.placement;
    const auto& preferred = ref.get().preferred;
    for (std::size_t i = 0; i < preferred.size(); ++i) {
      if (detail::term_matches(preferred[i].preference, ref.preferred_term_usable(i), labels, c, n)) sum += preferred[i].weight;
    }
    return sum;
  }
  static void normalize(std::span<std::int64_t> scores) noexcept { default_normalize_score(max_node_score, false, scores); }
};

}  // namespace gpusched
