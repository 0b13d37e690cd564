// ModelAffinity: prefer nodes already serving the pod's model type; avoid known-interfering pairs.
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "gpusched/core/short_name.hpp"
#include "gpusched/scoring/formulas.hpp"
#include "gpusched/scoring/scorer.hpp"

namespace gpusched {

// gpusched's own rule (no published formula): 50 is neutral; +50 when the node already runs a
// replica of the pod's model type (warm weights, shared page cache, the seed's affinity), -50 when
// it runs a model type listed as interfering with it (pairs from a profiling study such as gpu-let's
// interference table). Result clamped to 0..100. Pods without a model type score 50 everywhere.
struct model_affinity {
  std::vector<std::pair<short_name, short_name>> interfering;  // unordered pairs

  [[nodiscard]] static constexpr std::string_view name() noexcept { return "ModelAffinity"; }

  [[nodiscard]] bool interferes(const short_name& a, const short_name& b) const noexcept {
    for (const auto& [x, y] : interfering) {
      if ((x == a && y == b) || (x == b && y == a)) return true;
    }
    return false;
  }

  template <Cluster C>
  [[nodiscard]] std::int64_t score(const C& c, const pod& p, node_index n) const {
    if constexpr (ServedModels<C>) {
      if (p.model_type.empty()) return formula::model_affinity_score<std::int64_t>(false, false, false);
      bool same = false, bad = false;
      for (const auto& mc : traits_of<C>::node_model_types(c, n)) {
        if (mc.replicas <= 0) continue;
        if (mc.model == p.model_type) {
          same = true;
        } else if (!interfering.empty() && interferes(mc.model, p.model_type)) {
          bad = true;
        }
      }
      return formula::model_affinity_score<std::int64_t>(true, same, bad);
    } else {
      (void)c, (void)n;
      return formula::model_affinity_score<std::int64_t>(!p.model_type.empty(), false, false);
    }
  }
};

}  // namespace gpusched
