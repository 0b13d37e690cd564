// gpusched/batch.hpp — umbrella of the batch engine: node and pod tables, batch scorers (Eigen,
// SIMD, threads), greedy and min-cost-flow assignment (Boost.Graph), over the core.
#pragma once

#include "gpusched/gpusched.hpp"
#include "gpusched/batch/assign_flow.hpp"
#include "gpusched/batch/assign_greedy.hpp"
#include "gpusched/batch/batch_scorer.hpp"
