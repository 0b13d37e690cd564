// gpusched/sim — the trace-driven simulator in one include: openb reader, the FGD paper's protocol,
// dynamic replay (both configurations of the one driver, sim/driver.hpp), metrics and the policies
// by name. (Not part of gpusched.hpp, which holds the scheduling library proper.)
#pragma once

#include "gpusched/sim/driver.hpp"
#include "gpusched/sim/dynamic.hpp"
#include "gpusched/sim/metrics.hpp"
#include "gpusched/sim/openb.hpp"
#include "gpusched/sim/paper.hpp"
#include "gpusched/sim/policies.hpp"
#include "gpusched/sim/rng.hpp"
#include "gpusched/sim/replay_cluster.hpp"
#include "gpusched/sim/trace.hpp"
