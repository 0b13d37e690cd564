// FGD as a batchable scorer: batch_plugin<fgd_scorer> for both batch engines.
//
// The per-pair score is the very function fgd_scorer::score evaluates, fgd_evaluate (Weng et al.,
// USENIX ATC'23; gpusched/scoring/fgd.hpp), over the node table's columns: each device's free
// share, the node's CPU left, the pod's allowed GPU models against each device's model. What the
// scalar scorer caches per node is prepared here once per node and refreshed by update(n): the
// node's F_n (expected fragmentation over the workload's typical shapes) and its CPU left. The
// typical shapes and, per GPU model, which shapes may use it are small tables shared by all nodes.
//
// Memory: 16 bytes per node (F_n 8, CPU left 8) plus the shapes (24 bytes each) and one byte per
// (GPU model, shape). The authors' integer score (0..100) only: fgd_options::fine_score (micro-
// points) would overflow the engines' 32-bit weighted totals and is refused at prepare().
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "gpusched/batch/node_table.hpp"
#include "gpusched/batch/plugin.hpp"
#include "gpusched/batch/pod_table.hpp"
#include "gpusched/config.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/core/short_name.hpp"
#include "gpusched/core/types.hpp"
#include "gpusched/scoring/fgd.hpp"
#include "gpusched/scoring/fragmentation.hpp"

namespace gpusched::batch {

template <>
struct batch_plugin<fgd_scorer> {
  // Rows of the accessibility table: one per GPU-model bit of the node table, and a last one for
  // nodes without GPUs (an empty model name, as fgd_scorer reads such a node).
  static constexpr int model_rows = name_bits::capacity + 1;

  struct node_view {
    const std::int32_t* milli_free;  // node table, slot-major
    const std::uint64_t* model_bit;  // node table, slot-major
    const std::int32_t* gpu_count;   // node table
    const std::int64_t* cpu_left;    // per node
    const double* frag;              // per node: F_n in the node's current state
    const frag_shape* shapes;        // shape_count entries
    const std::uint8_t* accessible;  // model_rows x shape_count
    std::uint32_t nodes;
    std::int32_t shape_count;
  };
  struct pod_args {
    milli cpu;
    std::int32_t gpu_milli;
    std::int32_t num_gpu;
    std::uint64_t allowed;  // GPU model bits the pod accepts
  };
  static constexpr normalization normalize = normalization::none;

  // The accessibility row of a node: its device 0's model (fgd_scorer's node model), or the last
  // row for a node without GPUs.
  GPUSCHED_HD static int model_row(std::uint64_t bit) noexcept {
    if (bit == 0) return model_rows - 1;
    int i = 0;
    while (((bit >> i) & 1U) == 0) ++i;
    return i;
  }

  class prepared {
   public:
    static constexpr std::size_t column_count = 7;

    void build(const fgd_scorer& s, const node_table& t) {
      if (s.options().fine_score) {
        throw invalid_argument_error("fgd_scorer.options.fine_score",
                                     "the batch engines take the authors' 0..100 score only (fine scores overflow 32-bit totals)");
      }
      t_ = &t;
      const auto sh = s.workload().shapes();
      shapes_.assign(sh.begin(), sh.end());
      if (shapes_.empty()) shapes_.push_back(frag_shape{});  // keeps every column non-empty; weight 0 adds nothing
      accessible_.assign(static_cast<std::size_t>(model_rows) * shapes_.size(), 0);
      filled_.assign(static_cast<std::size_t>(model_rows), 0);
      shape_count_ = static_cast<std::int32_t>(sh.size());
      cpu_left_.resize(static_cast<Eigen::Index>(t.size()));
      frag_.resize(static_cast<Eigen::Index>(t.size()));
      for (std::size_t n = 0; n < t.size(); ++n) update(s, t, static_cast<node_index>(n));
    }

    void update(const fgd_scorer& s, const node_table& t, node_index n) {
      t_ = &t;
      const auto k = static_cast<Eigen::Index>(n);
      const int gpus = t.gpu_count()[k];
      const std::uint64_t bit = gpus > 0 ? t.model_bit()(k, 0) : 0;
      const int row = model_row(bit);
      fill_row(s, t, row, bit);
      std::array<std::int32_t, max_gpus_per_node> free{};
      for (int g = 0; g < gpus; ++g) free[static_cast<std::size_t>(g)] = t.milli_free()(k, g);
      cpu_left_[k] = t.cpu_capacity()[k] - t.cpu_allocated()[k];
      frag_[k] = node_fragmentation(free.data(), gpus, cpu_left_[k], shapes_.data(),
                                    accessible_.data() + static_cast<std::size_t>(row) * shapes_.size(),
                                    static_cast<int>(s.workload().shapes().size()));
    }

    [[nodiscard]] std::array<column_ref, column_count> columns() const noexcept {
      const std::size_t n = t_->size();
      const auto slots = static_cast<std::size_t>(t_->gpu_slots());
      return {column_of(t_->milli_free().data(), n, slots),
              column_of(t_->model_bit().data(), n, slots),
              column_of(t_->gpu_count().data(), n),
              column_of(cpu_left_.data(), n),
              column_of(frag_.data(), n),
              column_of(shapes_.data(), 1, shapes_.size()),
              column_of(accessible_.data(), 1, accessible_.size())};
    }
    [[nodiscard]] node_view view_with(const std::array<const void*, column_count>& d) const noexcept {
      return {static_cast<const std::int32_t*>(d[0]), static_cast<const std::uint64_t*>(d[1]), static_cast<const std::int32_t*>(d[2]),
              static_cast<const std::int64_t*>(d[3]),  static_cast<const double*>(d[4]),        static_cast<const frag_shape*>(d[5]),
              static_cast<const std::uint8_t*>(d[6]),  static_cast<std::uint32_t>(t_->size()), shape_count_};
    }
    [[nodiscard]] node_view view() const noexcept {
      const auto c = columns();
      std::array<const void*, column_count> d{};
      for (std::size_t i = 0; i < column_count; ++i) d[i] = c[i].data;
      return view_with(d);
    }

   private:
    void fill_row(const fgd_scorer& s, const node_table& t, int row, std::uint64_t bit) {
      if (filled_[static_cast<std::size_t>(row)] != 0) return;
      const short_name model = bit == 0 ? short_name{} : t.gpu_models().name(row);
      s.workload().accessible_for(model, scratch_);
      for (std::size_t i = 0; i < scratch_.size(); ++i) accessible_[static_cast<std::size_t>(row) * shapes_.size() + i] = scratch_[i];
      filled_[static_cast<std::size_t>(row)] = 1;
    }

    const node_table* t_ = nullptr;
    std::vector<frag_shape> shapes_;
    std::vector<std::uint8_t> accessible_;
    std::vector<std::uint8_t> filled_;
    std::vector<std::uint8_t> scratch_;
    column<std::int64_t> cpu_left_;
    column<double> frag_;
    std::int32_t shape_count_ = 0;
  };

  static pod_args make_pod_args(const fgd_scorer&, const prepared&, const pod_table& pods, std::size_t i) noexcept {
    const auto k = static_cast<Eigen::Index>(i);
    return {pods.cpu_milli()[k], pods.gpu_milli()[k], pods.num_gpu()[k], pods.allowed_gpu_models()[k]};
  }

  // fgd_scorer::score: fgd_evaluate over node n's devices (0 where the pod does not fit them).
  GPUSCHED_HD static std::int32_t score(const node_view& v, const pod_args& a, std::uint32_t n) noexcept {
    const int gpus = v.gpu_count[n];
    std::int32_t free[max_gpus_per_node];
    gpu_set ok = 0;
    for (int g = 0; g < gpus; ++g) {
      const std::size_t at = static_cast<std::size_t>(g) * v.nodes + n;
      free[g] = v.milli_free[at];
      if ((v.model_bit[at] & a.allowed) != 0) ok |= gpu_set{1} << g;
    }
    const int row = model_row(gpus > 0 ? v.model_bit[n] : 0);
    const fgd_pick pick = fgd_evaluate(free, gpus, v.cpu_left[n], ok, a.cpu, a.gpu_milli, a.num_gpu, v.shapes,
                                       v.accessible + static_cast<std::size_t>(row) * static_cast<std::size_t>(v.shape_count > 0 ? v.shape_count : 1),
                                       v.shape_count, v.frag[n], false);
    return static_cast<std::int32_t>(pick.score);
  }
};

static_assert(BatchScorer<fgd_scorer>);

}  // namespace gpusched::batch
