// The seed's profile as a static type (shared by SeedStaticScheduler and BatchScorer): checks in the
// order a config gives them (NodeResourcesFit, then GPUCheck), LoadAware and ModelAffinity weighted.
// The same decisions as the dynamic profile loaded from data/scheduler-config.yaml.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <gpusched/core/short_name.hpp>
#include <gpusched/preflight/gpu_check.hpp>
#include <gpusched/preflight/resource_fit.hpp>
#include <gpusched/profile/static_profile.hpp>
#include <gpusched/scoring/load_aware.hpp>
#include <gpusched/scoring/model_affinity.hpp>

namespace gpusched::python {

using seed_static_profile =
    static_profile<check_list<resource_fit, gpu_check>, score_list<load_aware, model_affinity>>;

inline seed_static_profile make_seed_profile(std::int64_t load_aware_weight, std::int64_t model_affinity_weight,
                                             const std::vector<std::pair<std::string, std::string>>& interfering) {
  model_affinity ma;
  for (const auto& [a, b] : interfering) {
    ma.interfering.emplace_back(short_name(a, "interfering_pairs"), short_name(b, "interfering_pairs"));
  }
  return make_profile(checks(resource_fit{}, gpu_check{}),
                      scores(weighted{load_aware{}, load_aware_weight}, weighted{std::move(ma), model_affinity_weight}));
}

}  // namespace gpusched::python
