// gpusched/all.hpp — every CPU layer: the core, gangs, eviction, the batch engine and the simulator
// (what gpusched/gpusched.hpp held before it became the core only). Never includes cuda/ nor
// headers needing yaml-cpp (gpusched/profile/config_yaml.hpp).
#pragma once

#include "gpusched/batch.hpp"
#include "gpusched/eviction.hpp"
#include "gpusched/gang.hpp"
#include "gpusched/gpusched.hpp"
#include "gpusched/sim.hpp"
