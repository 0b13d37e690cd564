// gpusched/sim.hpp — umbrella of the simulators: the serving latency model and its engine, over
// the core (gpusched/gpusched.hpp). The openb replay headers live in gpusched/sim/ too.
#pragma once

#include "gpusched/gpusched.hpp"
#include "gpusched/sim/serving/arrivals.hpp"
#include "gpusched/sim/serving/csv.hpp"
#include "gpusched/sim/serving/engine.hpp"
#include "gpusched/sim/serving/engine_types.hpp"
#include "gpusched/sim/serving/interference.hpp"
#include "gpusched/sim/serving/latency_model.hpp"
#include "gpusched/sim/serving/metrics.hpp"
#include "gpusched/sim/serving/profile_table.hpp"
#include "gpusched/sim/serving/rng.hpp"
#include "gpusched/sim/serving/scenario.hpp"
