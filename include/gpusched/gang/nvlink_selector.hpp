// nvlink_aware_gpus: a GpuSelector that gives multi-GPU pods devices joined by NVLink.
//
//   auto profile = make_profile(checks(gpu_check{}, resource_fit{}), scores(...), nvlink_aware_gpus{});
//
// Inside a node it reads the interconnect as a weighted graph: the island model of
// gpu_device::nvlink_island by default, or a gpu_interconnect the host described for that node
// (interconnect_table), and takes the subset choose_gpu_subset prefers (most bandwidth inside,
// best fit, smallest cut).
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpusched/core/binding.hpp"
#include "gpusched/core/cluster.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/core/in_memory_cluster.hpp"
#include "gpusched/gang/interconnect.hpp"
#include "gpusched/preflight/gpu_check.hpp"
#include "gpusched/schedule/gpu_selection.hpp"

namespace gpusched {

// Interconnects described by the host, shared by the nodes of the same make: layouts once, and per
// node the index of its layout (-1: use the island model). 4 bytes per node.
class interconnect_table {
 public:
  // Adds a layout and returns its index.
  std::int32_t add_layout(gpu_interconnect t) {
    layouts_.push_back(std::move(t));
    return static_cast<std::int32_t>(layouts_.size() - 1);
  }
  // Node n uses layout `layout` (-1: the island model).
  void assign(node_index n, std::int32_t layout) {
    if (layout < -1 || layout >= static_cast<std::int32_t>(layouts_.size())) {
      throw invalid_argument_error("interconnect_table.layout", "no layout " + std::to_string(layout));
    }
    if (layout_of_.size() <= n) layout_of_.resize(static_cast<std::size_t>(n) + 1, -1);
    layout_of_[n] = layout;
  }
  [[nodiscard]] const gpu_interconnect* find(node_index n) const noexcept {
    if (n >= layout_of_.size() || layout_of_[n] < 0) return nullptr;
    return &layouts_[static_cast<std::size_t>(layout_of_[n])];
  }

 private:
  std::vector<gpu_interconnect> layouts_;
  std::vector<std::int32_t> layout_of_;
};

struct nvlink_aware_gpus {
  std::uint32_t nvlink = nvlink_gbps;  // island model: bandwidth inside an island
  std::uint32_t pcie = pcie_gbps;      // and between islands
  std::shared_ptr<const interconnect_table> table;  // optional explicit interconnects

  [[nodiscard]] static constexpr std::string_view name() noexcept { return "NVLinkAware"; }

  template <Cluster C>
  [[nodiscard]] gpu_set select(const C& c, const pod& p, node_index n) const {
    if (!p.wants_gpu()) return 0;
    const int count = std::min(traits_of<C>::node_resources(c, n).gpu_count, max_gpus_per_node);
    gpu_set fitting = 0;
    std::int32_t share[max_gpus_per_node];
    std::int16_t island[max_gpus_per_node];
    for (int g = 0; g < count; ++g) {
      const gpu_device& d = traits_of<C>::node_gpu(c, n, g);
      share[g] = d.milli_free;
      island[g] = d.nvlink_island;
      if (p.model_allowed(d.model) && device_fits(d.milli_free, d.mem_free_mib, p.gpu_milli, p.gpu_mem_mib)) {
        fitting |= gpu_set{1} << g;
      }
    }
    if (std::popcount(fitting) < p.num_gpu) return 0;
    const gpu_interconnect* t = table ? table->find(n) : nullptr;
    if (t != nullptr && t->size() == count) {
      return choose_gpu_subset(count, fitting, p.num_gpu, share, [t](int a, int b) { return t->bandwidth(a, b); });
    }
    return choose_gpu_subset(count, fitting, p.num_gpu, share,
                             [&](int a, int b) { return island[a] == island[b] ? nvlink : pcie; });
  }
};

static_assert(GpuSelector<nvlink_aware_gpus, in_memory_cluster>);

}  // namespace gpusched
