// The simulator's cluster: gpusched's bookkeeping decorator (core/bound_cluster.hpp) over an
// in_memory_cluster, observed by the running totals the metrics read (core/cluster_totals.hpp) and
// by each node's GPU affinity tags that the FGD paper's GpuClustering scores
// (scoring/fgd_paper/affinity_tags.hpp), and by a per-node summary of free devices that lets
// GPUCheck decide most requests without walking the devices (core/gpu_summary.hpp). It replaces sim_cluster, a rival decorator kept in step
// by hand (ADR 0009); since it records bound pods, preemption and eviction run on it as well. A
// stamp per node (schedule/node_versions.hpp) lets FGD's per-node cache skip unchanged nodes.
#pragma once

#include <span>

#include "gpusched/core/bound_cluster.hpp"
#include "gpusched/core/cluster_totals.hpp"
#include "gpusched/core/gpu_summary.hpp"
#include "gpusched/core/in_memory_cluster.hpp"
#include "gpusched/core/node.hpp"
#include "gpusched/schedule/node_versions.hpp"
#include "gpusched/scoring/fgd_paper/affinity_tags.hpp"

namespace gpusched::sim {

using replay_cluster =
    bound_cluster<in_memory_cluster, cluster_totals, fgd_paper::gpu_affinity_tags, gpu_summary, node_versions>;

// A replay cluster holding `nodes` in order (each validated; a bad node throws invalid_argument_error).
inline replay_cluster make_replay_cluster(std::span<const node_spec> nodes) {
  replay_cluster c;
  for (const node_spec& n : nodes) c.add_node(n);
  return c;
}

// The running totals of c.
inline const cluster_totals& totals(const replay_cluster& c) noexcept { return c.observer<cluster_totals>(); }

static_assert(MutableCluster<replay_cluster> && NamedNodes<replay_cluster> && PodsOnNodes<replay_cluster>);
static_assert(fgd_paper::GpuAffinitySource<replay_cluster> && GpuSummarized<replay_cluster> &&
              NodeVersioned<replay_cluster>);

}  // namespace gpusched::sim
