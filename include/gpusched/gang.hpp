// gpusched/gang.hpp — umbrella of the gang layer: all-or-nothing, topology-aware gang placement,
// the coordinator and gang preemption (Boost.Graph), over the core (gpusched/gpusched.hpp).
#pragma once

#include "gpusched/gpusched.hpp"
#include "gpusched/gang/coordinator.hpp"
#include "gpusched/gang/gang_pods.hpp"
#include "gpusched/gang/gang_preemption.hpp"
#include "gpusched/gang/nvlink_selector.hpp"
