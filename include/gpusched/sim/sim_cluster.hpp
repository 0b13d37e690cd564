// The simulator's cluster: gpusched's in_memory_cluster plus what the FGD paper's policies and the
// metrics need beyond the Cluster concept — each node's GPU affinity tags (GpuClustering) and running
// totals of allocated GPU share.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "gpusched/core/binding.hpp"
#include "gpusched/core/cluster.hpp"
#include "gpusched/core/in_memory_cluster.hpp"
#include "gpusched/core/node.hpp"
#include "gpusched/scoring/fgd_paper/gpu_clustering.hpp"

namespace gpusched::sim {

class sim_cluster {
 public:
  explicit sim_cluster(std::span<const node_spec> nodes) {
    affinity_.reserve(nodes.size());
    for (const node_spec& n : nodes) {
      base_.add_node(n);
      affinity_.emplace_back();
      gpu_capacity_ += static_cast<milli>(n.gpus.size()) * gpu_milli_whole;
      cpu_capacity_ += n.cpu_milli;
    }
  }

  [[nodiscard]] const in_memory_cluster& base() const noexcept { return base_; }
  [[nodiscard]] std::size_t size() const noexcept { return base_.size(); }
  [[nodiscard]] milli gpu_milli_capacity() const noexcept { return gpu_capacity_; }
  [[nodiscard]] milli gpu_milli_allocated() const noexcept { return gpu_allocated_; }
  [[nodiscard]] milli cpu_milli_capacity() const noexcept { return cpu_capacity_; }
  [[nodiscard]] milli cpu_milli_allocated() const noexcept { return cpu_allocated_; }
  [[nodiscard]] const fgd_paper::gpu_affinity& affinity(node_index n) const noexcept { return affinity_[n]; }

  void reserve(const pod& p, const binding& b) {
    base_.reserve(p, b);  // throws and changes nothing when b does not fit
    affinity_[b.node].add(p);
    gpu_allocated_ += milli{b.gpu_milli} * b.gpu_count();
    cpu_allocated_ += b.cpu_milli;
  }
  void release(const pod& p, const binding& b) {
    base_.release(p, b);  // throws and changes nothing when b was not reserved (see in_memory_cluster)
    affinity_[b.node].remove(p);
    gpu_allocated_ -= milli{b.gpu_milli} * b.gpu_count();
    cpu_allocated_ -= b.cpu_milli;
  }

 private:
  in_memory_cluster base_;
  std::vector<fgd_paper::gpu_affinity> affinity_;
  milli gpu_capacity_ = 0, gpu_allocated_ = 0, cpu_capacity_ = 0, cpu_allocated_ = 0;
};

inline std::size_t node_count(const sim_cluster& c) noexcept { return c.size(); }
inline node_state node_resources(const sim_cluster& c, node_index n) noexcept { return c.base().resources(n); }
inline const gpu_device& node_gpu(const sim_cluster& c, node_index n, int g) noexcept {
  return c.base().gpus(n)[static_cast<std::size_t>(g)];
}
inline std::string_view node_name(const sim_cluster& c, node_index n) noexcept { return c.base().name(n); }
inline void reserve(sim_cluster& c, const pod& p, const binding& b) { c.reserve(p, b); }
inline void release(sim_cluster& c, const pod& p, const binding& b) { c.release(p, b); }
inline const fgd_paper::gpu_affinity& gpu_affinity_of(const sim_cluster& c, node_index n) noexcept {
  return c.affinity(n);
}

static_assert(MutableCluster<sim_cluster> && NamedNodes<sim_cluster>);
static_assert(fgd_paper::GpuAffinitySource<sim_cluster>);

}  // namespace gpusched::sim
