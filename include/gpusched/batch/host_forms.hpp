// Batch forms that call the plugin itself on the node table (node_table models Cluster) and the
// pod the table was built from: for scorers without a formula written over columns — the FGD
// paper's baselines, FillAware, and FillAwareBinding / FillAwareRefill (whose PreScore, which picks
// the form of the CPU term from the cluster's CPU per GPU, runs once per pod on the table). They
// decide exactly as the per-pod path (the same score function on the same state) at the per-pod
// path's speed; CPU engine only (not GPUSCHED_HD).
// GpuClustering needs GPU affinity tags that the node table does not keep, and BestFit normalises
// by min-max (not one of DefaultNormalizeScore's forms the engines apply): neither has a batch form.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>

#include "gpusched/batch/node_table.hpp"
#include "gpusched/batch/plugin.hpp"
#include "gpusched/batch/pod_table.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/scoring/fgd_paper/dot_product.hpp"
#include "gpusched/scoring/fgd_paper/gpu_packing.hpp"
#include "gpusched/scoring/fgd_paper/random_score.hpp"
#include "gpusched/scoring/fill_aware.hpp"
#include "gpusched/scoring/fill_aware_binding.hpp"

namespace gpusched::batch {

namespace detail {

template <class S>
struct host_score_form {
  struct node_view {
    const node_table* table;
    const S* scorer;
  };
  struct pod_args {
    const pod* p;
  };
  static constexpr normalization normalize = normalization::none;

  class prepared {
   public:
    static constexpr std::size_t column_count = 0;
    void build(const S& s, const node_table& t) {
      s_ = std::make_shared<const S>(s);
      t_ = &t;
    }
    void update(const S&, const node_table& t, node_index) noexcept { t_ = &t; }
    [[nodiscard]] std::array<column_ref, 0> columns() const noexcept { return {}; }
    [[nodiscard]] node_view view() const noexcept { return {t_, s_.get()}; }

   private:
    std::shared_ptr<const S> s_;
    const node_table* t_ = nullptr;
  };

  static pod_args make_pod_args(const S&, const prepared&, const pod_table& pods, std::size_t i) {
    if (pods.source().size() != pods.size()) {
      throw invalid_argument_error(std::string(S::name()), "needs the pod table's source pods (pod_table(pods, nodes))");
    }
    return {&pods.source()[i]};
  }
  static std::int32_t score(const node_view& v, const pod_args& a, std::uint32_t n) {
    const std::int64_t s = v.scorer->score(*v.table, *a.p, static_cast<node_index>(n));
    // The engines' totals are 32-bit (FillAware's scores are about 1e9; weight 1 fits).
    return static_cast<std::int32_t>(
        std::clamp<std::int64_t>(s, 0, std::numeric_limits<std::int32_t>::max()));
  }
};

// FillAware's scores are about 10^9 (fill_aware.hpp): the engine's 32-bit totals hold one of them,
// weight 1, and nothing beside it (batch::configured refuses other profiles, naming the plugin).
template <class S>
struct host_fill_aware_form : host_score_form<S> {
  static constexpr bool fills_totals = true;
};

// The same with the scorer's PreScore run on the node table for each pod, before its nodes are
// scored (FillAwareBinding: the form of the CPU term; the same for every pod of one table). PreScore
// counts nothing (observe_demand counts in PreFilter, which a batch never runs: a table's pods are
// scored in threads, before any check and in no arrival order), so they read the per-pod count.
template <class S>
struct host_prescored_form : host_fill_aware_form<S> {
  using typename host_score_form<S>::pod_args;
  using typename host_score_form<S>::prepared;
  static pod_args make_pod_args(const S& s, const prepared& prep, const pod_table& pods, std::size_t i) {
    const pod_args a = host_score_form<S>::make_pod_args(s, prep, pods, i);
    const auto v = prep.view();
    (void)v.scorer->pre_score(*v.table, *a.p);
    return a;
  }
};

}  // namespace detail

template <>
struct batch_plugin<fgd_paper::random_score> : detail::host_score_form<fgd_paper::random_score> {};
template <>
struct batch_plugin<fgd_paper::dot_product> : detail::host_score_form<fgd_paper::dot_product> {};
template <>
struct batch_plugin<fgd_paper::gpu_packing> : detail::host_score_form<fgd_paper::gpu_packing> {};
template <>
struct batch_plugin<fill_aware_scorer> : detail::host_fill_aware_form<fill_aware_scorer> {};

template <>
struct batch_plugin<fill_aware_binding_scorer> : detail::host_prescored_form<fill_aware_binding_scorer> {};
template <>
struct batch_plugin<fill_aware_refill_scorer> : detail::host_prescored_form<fill_aware_refill_scorer> {};

static_assert(BatchScorer<fgd_paper::random_score> && BatchScorer<fgd_paper::dot_product> &&
              BatchScorer<fgd_paper::gpu_packing> && BatchScorer<fill_aware_scorer> &&
              BatchScorer<fill_aware_binding_scorer> && BatchScorer<fill_aware_refill_scorer>);

}  // namespace gpusched::batch
