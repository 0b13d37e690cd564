// gpu_affinity_tags: each node's GPU affinity tags (gpu_clustering.hpp), kept by observing a
// bound_cluster (core/bound_cluster.hpp). A bound_cluster<C, ..., gpu_affinity_tags, ...> is a
// GpuAffinitySource, so GpuClusteringScore runs on it:
//
//   bound_cluster<in_memory_cluster, fgd_paper::gpu_affinity_tags> c;
//   c.add_node(spec);  c.bind(pod, binding);  gpu_affinity_of(c, node);
//
// The tags count the pods bound through the bound_cluster since it was built (the wrapped cluster
// records no pods, so reservations made before are not seen). 260 bytes per node.
#pragma once

#include <cstddef>
#include <vector>

#include "gpusched/core/binding.hpp"
#include "gpusched/core/bound_cluster.hpp"
#include "gpusched/core/cluster.hpp"
#include "gpusched/core/pod.hpp"
#include "gpusched/scoring/fgd_paper/gpu_clustering.hpp"

namespace gpusched::fgd_paper {

class gpu_affinity_tags {
 public:
  [[nodiscard]] const gpu_affinity& of(node_index n) const noexcept { return tags_[n]; }
  [[nodiscard]] std::size_t size() const noexcept { return tags_.size(); }

  template <Cluster C>
  void attach(const C& c) {
    tags_.assign(num_nodes(c), gpu_affinity{});
  }
  template <Cluster C>
  void node_added(const C&, node_index n) {
    if (tags_.size() <= n) tags_.resize(std::size_t{n} + 1);
  }
  template <class C>
  void reserved(const C&, const pod& p, const binding& b) noexcept {
    tags_[b.node].add(p);
  }
  template <class C>
  void released(const C&, const pod& p, const binding& b) noexcept {
    tags_[b.node].remove(p);
  }

 private:
  std::vector<gpu_affinity> tags_;
};

namespace detail {
template <class T, class... O>
inline constexpr bool one_of = (std::is_same_v<T, O> || ...);
}  // namespace detail

// The GpuAffinitySource hook of a bound_cluster observed by gpu_affinity_tags (found by ADL through
// the observer's namespace).
template <class C, class... O>
  requires detail::one_of<gpu_affinity_tags, O...>
const gpu_affinity& gpu_affinity_of(const bound_cluster<C, O...>& c, node_index n) noexcept {
  return c.template observer<gpu_affinity_tags>().of(n);
}

static_assert(GpuAffinitySource<bound_cluster<in_memory_cluster, gpu_affinity_tags>>);

}  // namespace gpusched::fgd_paper
