// gpusched — the core umbrella header: clusters, pods, preflight checks, scorers, profiles,
// schedule_one / scheduler, transactions, the queue, preemption and overcommit. Standard library
// only (no Eigen, no Boost, no simulator, no yaml-cpp); g++ 12 parses it in 1.3-2 s of CPU time
// (all layers: ~10 s).
// The other layers have their own umbrellas (docs/getting-started.md):
//   gpusched/gang.hpp      gang scheduling (Boost.Graph)
//   gpusched/eviction.hpp  GPU-memory leak detection and eviction (Boost.Math)
//   gpusched/batch.hpp     the batch engine (Eigen, Boost.Graph min-cost flow)
//   gpusched/sim.hpp       the serving simulator
//   gpusched/all.hpp       all of the above
//   gpusched/profile/config_yaml.hpp  KubeSchedulerConfiguration files (yaml-cpp)
#pragma once

#include "gpusched/config.hpp"
#include "gpusched/core/binding.hpp"
#include "gpusched/core/bound_cluster.hpp"
#include "gpusched/core/bound_pods.hpp"
#include "gpusched/core/cluster.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/core/in_memory_cluster.hpp"
#include "gpusched/core/node.hpp"
#include "gpusched/core/pod.hpp"
#include "gpusched/core/reason.hpp"
#include "gpusched/core/short_name.hpp"
#include "gpusched/core/types.hpp"
#include "gpusched/overcommit/overcommit_fit.hpp"
#include "gpusched/overcommit/overcommit_policy.hpp"
#include "gpusched/overcommit/usage_overcommit.hpp"
#include "gpusched/preemption/node_overlay.hpp"
#include "gpusched/preemption/preemption.hpp"
#include "gpusched/preemption/preemption_budget.hpp"
#include "gpusched/preflight/gpu_check.hpp"
#include "gpusched/preflight/load_threshold.hpp"
#include "gpusched/preflight/preflight.hpp"
#include "gpusched/preflight/resource_fit.hpp"
#include "gpusched/profile/static_profile.hpp"
#include "gpusched/queue/fair_share.hpp"
#include "gpusched/queue/queue_policy.hpp"
#include "gpusched/queue/scheduling_queue.hpp"
#include "gpusched/schedule/gpu_selection.hpp"
#include "gpusched/schedule/random_gpus.hpp"
#include "gpusched/schedule/schedule_one.hpp"
#include "gpusched/schedule/transaction.hpp"
#include "gpusched/scoring/fgd.hpp"
#include "gpusched/scoring/fgd_paper/best_fit.hpp"
#include "gpusched/scoring/fgd_paper/dot_product.hpp"
#include "gpusched/scoring/fgd_paper/gpu_clustering.hpp"
#include "gpusched/scoring/fgd_paper/gpu_packing.hpp"
#include "gpusched/scoring/fgd_paper/random_score.hpp"
#include "gpusched/scoring/fill_aware.hpp"
#include "gpusched/scoring/formulas.hpp"
#include "gpusched/scoring/fragmentation.hpp"
#include "gpusched/scoring/load_aware.hpp"
#include "gpusched/scoring/model_affinity.hpp"
#include "gpusched/scoring/node_resources.hpp"
#include "gpusched/scoring/qos_aware.hpp"
#include "gpusched/scoring/scorer.hpp"
#include "gpusched/scoring/typical_pods.hpp"
