// The smallest profiles that place pods by their requests, no scorers (the first feasible node
// wins): NodeResourcesFit then the GPU check (the driver and replay tests), or the GPU check first
// (the gang, preemption and schedule tests); the order decides which reason a node is refused for.
#pragma once

#include "gpusched/preflight/gpu_check.hpp"
#include "gpusched/preflight/resource_fit.hpp"
#include "gpusched/profile/static_profile.hpp"

namespace testing {

inline auto fit_only_profile() {
  using namespace gpusched;
  return make_profile(checks(resource_fit{}, gpu_check{}), scores());
}
using fit_only_profile_t = decltype(fit_only_profile());

inline auto gpu_first_profile() {
  using namespace gpusched;
  return make_profile(checks(gpu_check{}, resource_fit{}), scores());
}

}  // namespace testing
