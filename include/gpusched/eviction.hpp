// gpusched/eviction.hpp — umbrella of the eviction layer: GPU-memory leak detection (Boost.Math's
// Student t) and eviction plans, over the core (gpusched/gpusched.hpp).
#pragma once

#include "gpusched/gpusched.hpp"
#include "gpusched/eviction/eviction_plan.hpp"
#include "gpusched/eviction/leak_detector.hpp"
