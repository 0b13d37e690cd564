// cluster_totals: running totals of a cluster's capacity and allocation, kept by observing a
// bound_cluster (core/bound_cluster.hpp) instead of by a cluster type of its own.
//
//   bound_cluster<in_memory_cluster, cluster_totals> c;
//   c.add_node(spec);  c.bind(pod, binding);
//   c.observer<cluster_totals>().gpu_milli_allocated();
//
// Capacities are summed when the bound_cluster is built and as nodes are added through it;
// allocations when the bound_cluster reserves or releases (a reservation made before the
// bound_cluster was built counts too: attach reads each node's allocation). It also sums the GPU
// given back by releases since it was attached, which the cluster's GPU turnover reports. 40 bytes
// in all.
//
// A cluster may provide, found by ADL, `cluster_gpu_turnover(c) -> gpu_turnover` (concept
// TurnoverCounted): the GPU allocated now and the GPU released so far. A bound_cluster observed by
// cluster_totals provides it (core/bound_cluster.hpp). A scorer reads from it whether the cluster
// gives GPU back, which a trace replay without departures (the FGD paper's protocol) never does
// (FillAwareRefill's block term, scoring/fill_aware_binding.hpp).
#pragma once

#include <concepts>
#include <cstddef>

#include "gpusched/core/binding.hpp"
#include "gpusched/core/cluster.hpp"
#include "gpusched/core/pod.hpp"
#include "gpusched/core/types.hpp"

namespace gpusched {

struct gpu_turnover {
  milli allocated = 0;  // milli-GPU held now
  milli released = 0;   // milli-GPU given back by releases so far
  // Whether the cluster has given back at least the GPU it holds now: it has turned over once.
  [[nodiscard]] constexpr bool turned_over() const noexcept { return released > 0 && released >= allocated; }
};

namespace adl {
void cluster_gpu_turnover() = delete;
template <class C>
auto call_cluster_gpu_turnover(const C& c) -> decltype(cluster_gpu_turnover(c)) {
  return cluster_gpu_turnover(c);
}
}  // namespace adl

template <class C>
concept TurnoverCounted = Cluster<C> && requires(const C& c) {
  { adl::call_cluster_gpu_turnover(c) } -> std::convertible_to<gpu_turnover>;
};

class cluster_totals {
 public:
  [[nodiscard]] milli gpu_milli_capacity() const noexcept { return gpu_capacity_; }
  [[nodiscard]] milli gpu_milli_allocated() const noexcept { return gpu_allocated_; }
  [[nodiscard]] milli cpu_milli_capacity() const noexcept { return cpu_capacity_; }
  [[nodiscard]] milli cpu_milli_allocated() const noexcept { return cpu_allocated_; }
  // The GPU given back by releases since attach.
  [[nodiscard]] milli gpu_milli_released() const noexcept { return gpu_released_; }

  template <Cluster C>
  void attach(const C& c) {
    gpu_capacity_ = gpu_allocated_ = cpu_capacity_ = cpu_allocated_ = gpu_released_ = 0;
    const std::size_t n = num_nodes(c);
    for (std::size_t i = 0; i < n; ++i) node_added(c, static_cast<node_index>(i));
  }
  template <Cluster C>
  void node_added(const C& c, node_index n) {
    const node_state s = traits_of<C>::node_resources(c, n);
    gpu_capacity_ += milli{s.gpu_count} * gpu_milli_whole;
    cpu_capacity_ += s.cpu_capacity;
    cpu_allocated_ += s.cpu_allocated;
    for (int g = 0; g < s.gpu_count; ++g) {
      gpu_allocated_ += gpu_milli_whole - milli{traits_of<C>::node_gpu(c, n, g).milli_free};
    }
  }
  template <class C>
  void reserved(const C&, const pod&, const binding& b) noexcept {
    gpu_allocated_ += milli{b.gpu_milli} * b.gpu_count();
    cpu_allocated_ += b.cpu_milli;
  }
  template <class C>
  void released(const C&, const pod&, const binding& b) noexcept {
    gpu_allocated_ -= milli{b.gpu_milli} * b.gpu_count();
    gpu_released_ += milli{b.gpu_milli} * b.gpu_count();
    cpu_allocated_ -= b.cpu_milli;
  }

 private:
  milli gpu_capacity_ = 0, gpu_allocated_ = 0, cpu_capacity_ = 0, cpu_allocated_ = 0, gpu_released_ = 0;
};

}  // namespace gpusched
