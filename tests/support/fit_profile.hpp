// The smallest profile that places pods by their requests: NodeResourcesFit and the GPU check, no
// scorers (the first feasible node wins). Shared by the driver and replay tests.
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

}  // namespace testing
