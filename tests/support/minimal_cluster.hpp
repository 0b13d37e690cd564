// Archetype: a cluster that models exactly MutableCluster and nothing more — no names, no load,
// no served models — so that every algorithm compiled against it uses only the required
// expressions (after Boost.Graph's graph_archetypes.hpp). Its storage is a plain struct of vectors.
#pragma once

#include <cstddef>
#include <vector>

#include "gpusched/core/binding.hpp"
#include "gpusched/core/cluster.hpp"

namespace archetype {

struct minimal_cluster {
  std::vector<gpusched::node_state> nodes;
  std::vector<std::vector<gpusched::gpu_device>> gpus;
};

inline std::size_t node_count(const minimal_cluster& c) { return c.nodes.size(); }
inline gpusched::node_state node_resources(const minimal_cluster& c, gpusched::node_index n) { return c.nodes[n]; }
inline gpusched::gpu_device node_gpu(const minimal_cluster& c, gpusched::node_index n, int g) {
  return c.gpus[n][static_cast<std::size_t>(g)];
}
inline void reserve(minimal_cluster& c, const gpusched::pod&, const gpusched::binding& b) {
  c.nodes[b.node].cpu_allocated += b.cpu_milli;
  c.nodes[b.node].mem_allocated += b.memory_mib;
  gpusched::for_each_gpu(b.gpus, [&](int g) {
    c.gpus[b.node][static_cast<std::size_t>(g)].milli_free -= b.gpu_milli;
    c.gpus[b.node][static_cast<std::size_t>(g)].mem_free_mib -= b.gpu_mem_mib;
  });
}
inline void release(minimal_cluster& c, const gpusched::pod&, const gpusched::binding& b) {
  c.nodes[b.node].cpu_allocated -= b.cpu_milli;
  c.nodes[b.node].mem_allocated -= b.memory_mib;
  gpusched::for_each_gpu(b.gpus, [&](int g) {
    c.gpus[b.node][static_cast<std::size_t>(g)].milli_free += b.gpu_milli;
    c.gpus[b.node][static_cast<std::size_t>(g)].mem_free_mib += b.gpu_mem_mib;
  });
}

static_assert(gpusched::MutableCluster<minimal_cluster>);
static_assert(!gpusched::NamedNodes<minimal_cluster>);
static_assert(!gpusched::MeasuredLoad<minimal_cluster>);
static_assert(!gpusched::ServedModels<minimal_cluster>);

}  // namespace archetype
