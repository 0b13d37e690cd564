// A host-written batchable scorer with a NormalizeScore, shared by the CPU batch tests and the CUDA
// tests: the raw score is the node's free memory in GiB (unbounded), normalised per pod with
// Kubernetes' DefaultNormalizeScore (reverse: the node with the least free memory scores 100).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "gpusched/batch/plugin.hpp"
#include "gpusched/core/cluster.hpp"
#include "gpusched/core/pod.hpp"
#include "gpusched/scoring/scorer.hpp"

namespace testing {

struct free_memory_packing {
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "FreeMemoryPacking"; }
  template <gpusched::Cluster C>
  [[nodiscard]] std::int64_t score(const C& c, const gpusched::pod&, gpusched::node_index n) const {
    const gpusched::node_state r = gpusched::traits_of<C>::node_resources(c, n);
    return (r.mem_capacity - r.mem_allocated) / 1024;
  }
  void normalize(std::span<std::int64_t> s) const {
    gpusched::default_normalize_score(gpusched::max_node_score, true, s);
  }
};

}  // namespace testing

template <>
struct gpusched::batch::batch_plugin<testing::free_memory_packing> {
  struct node_view {
    const std::int64_t* capacity;
    const std::int64_t* allocated;
  };
  struct pod_args {
    std::uint8_t unused;
  };
  static constexpr normalization normalize = normalization::reverse;
  class prepared {
   public:
    static constexpr std::size_t column_count = 2;
    void build(const testing::free_memory_packing&, const node_table& t) noexcept { t_ = &t; }
    void update(const testing::free_memory_packing&, const node_table& t, node_index) noexcept { t_ = &t; }
    [[nodiscard]] std::array<column_ref, column_count> columns() const noexcept {
      return {column_of(t_->mem_capacity().data(), t_->size()), column_of(t_->mem_allocated().data(), t_->size())};
    }
    [[nodiscard]] node_view view_with(const std::array<const void*, column_count>& d) const noexcept {
      return {static_cast<const std::int64_t*>(d[0]), static_cast<const std::int64_t*>(d[1])};
    }
    [[nodiscard]] node_view view() const noexcept { return view_with({t_->mem_capacity().data(), t_->mem_allocated().data()}); }

   private:
    const node_table* t_ = nullptr;
  };
  static pod_args make_pod_args(const testing::free_memory_packing&, const prepared&, const pod_table&, std::size_t) noexcept { return {0}; }
  GPUSCHED_HD static std::int32_t score(const node_view& v, const pod_args&, std::uint32_t n) noexcept {
    return static_cast<std::int32_t>((v.capacity[n] - v.allocated[n]) / 1024);
  }
};
static_assert(gpusched::batch::BatchScorer<testing::free_memory_packing>);
