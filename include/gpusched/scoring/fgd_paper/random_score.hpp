// The FGD paper's Random baseline: every feasible node is equally good.
#pragma once

#include <cstdint>
#include <string_view>

#include "gpusched/core/cluster.hpp"
#include "gpusched/core/pod.hpp"
#include "gpusched/scoring/scorer.hpp"

namespace gpusched::fgd_paper {

// hkust-adsl/kubernetes-scheduler-simulator pkg/simulator/plugin/random_score.go picks one feasible
// node uniformly in PreScore and gives it MaxNodeScore, the others 0. Scoring every node the same
// lets the scheduler's seeded tie-break (uniform among the best) make that same uniform pick. Pair
// it with random_gpus, the authors' device policy for this baseline.
struct random_score {
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "RandomScore"; }
  template <Cluster C>
  [[nodiscard]] std::int64_t score(const C&, const pod&, node_index) const noexcept {
    return 0;
  }
};

}  // namespace gpusched::fgd_paper
