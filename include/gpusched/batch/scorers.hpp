// Batch forms of the foundation's scorers. Each score() calls the same formula functions as the
// plugin's score(c, p, n) (gpusched/scoring/formulas.hpp) over values prepared once per node:
//
//   LeastAllocated, MostAllocated, LoadAware, QoSAware   least/most_requested_with and
//       resource_weighted_mean over doubles holding integers, dividing with reciprocal_division
//       (exact below formula::reciprocal_domain_limit, which node_table and pod_table enforce), so
//       that the loop over nodes vectorises;
//   ModelAffinity                                        model_affinity_score over bit masks;
//   BalancedAllocation, RequestedToCapacityRatio         balanced_allocation_of (with and without the pod) /
//       requested_to_capacity_ratio over the same int64 values as the plugin.
//
// None of these normalise (Kubernetes' NodeResourcesFit and BalancedAllocation have no
// NormalizeScore, nor has Koordinator's LoadAware); scorers that do declare their form in
// `normalize` and the engines apply formula::default_normalized per pod over its feasible nodes.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "gpusched/batch/plugin.hpp"
#include "gpusched/batch/simd.hpp"
#include "gpusched/config.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/scoring/formulas.hpp"
#include "gpusched/scoring/load_aware.hpp"
#include "gpusched/scoring/model_affinity.hpp"
#include "gpusched/scoring/node_resources.hpp"
#include "gpusched/scoring/qos_aware.hpp"

namespace gpusched::batch {

namespace detail {

// Weights enter double arithmetic (score * weight sums); this keeps every sum far below 2^53.
// Named resources in scoringStrategy.resources have no column in the node table (docs/adr/0015).
template <class S>
void refuse_named(const S& s, const char* plugin) {
  if constexpr (requires { s.nonzero.enabled; }) {
    if (s.nonzero.enabled) {
      throw invalid_argument_error(std::string(plugin) + ".nonZeroRequests",
                                   "is not supported by the batch engines; use the per-pod scheduler (schedule_one)");
    }
  }
  if (!s.named.empty()) {
    throw invalid_argument_error(std::string(plugin) + ".resources",
                                 "named resource '" + std::string(s.named.front().name.str()) +
                                     "' is not supported by the batch engines; use the per-pod scheduler (schedule_one)");
  }
}
inline void check_weights(const resource_weights& w, const char* plugin) {
  for (int r = 0; r < resource_kinds; ++r) {
    if (w[r] < 0 || w[r] > (std::int64_t{1} << 20)) {
      throw invalid_argument_error(std::string(plugin) + ".weights", "must be within 0..2^20 for the batch engines");
    }
  }
}

// Per node and resource (cpu, memory, GPU milli): a base amount (allocation, or LoadAware's usage),
// the capacity and its reciprocal, the free amount prepared for least_requested_prepared
// ((capacity - base) * 100 + 0.5), plus the reciprocal of the node's weight sum; all doubles that
// hold integers (or halves). The pod adds its request to the base. 104 bytes per node.
class resource_columns {
 public:
  static constexpr std::size_t column_count = 13;

  struct view {
    const double* base[resource_kinds];
    const double* capacity[resource_kinds];
    const double* rcp[resource_kinds];
    const double* free_scaled[resource_kinds];
    const double* rcp_weight_sum;
    double weight[resource_kinds];
    bool unit_weights;  // every weight is 1: the weighted sum skips its multiplications (exact either way)
  };

  void resize(std::size_t n, const resource_weights& w) {
    for (int r = 0; r < resource_kinds; ++r) {
      base_[r].resize(static_cast<Eigen::Index>(n));
      cap_[r].resize(static_cast<Eigen::Index>(n));
      rcp_[r].resize(static_cast<Eigen::Index>(n));
      free_scaled_[r].resize(static_cast<Eigen::Index>(n));
      weight_[r] = static_cast<double>(w[r]);
    }
    rcp_w_.resize(static_cast<Eigen::Index>(n));
    weights_ = w;
  }
  void set(node_index n, const std::int64_t (&base)[resource_kinds], const std::int64_t (&cap)[resource_kinds]) noexcept {
    const auto w = weights_.as_array();
    const std::int64_t wsum = formula::resource_weight_sum(w.data(), cap, resource_kinds);
    for (int r = 0; r < resource_kinds; ++r) {
      base_[r][n] = static_cast<double>(base[r]);
      cap_[r][n] = static_cast<double>(cap[r]);
      rcp_[r][n] = cap[r] == 0 ? 0.0 : 1.0 / static_cast<double>(cap[r]);  // reciprocal_division's rcp
      free_scaled_[r][n] = static_cast<double>((cap[r] - base[r]) * formula::max_score) + 0.5;
    }
    rcp_w_[n] = wsum == 0 ? 0.0 : 1.0 / static_cast<double>(wsum);
  }
  [[nodiscard]] std::array<column_ref, column_count> columns() const noexcept {
    const auto n = static_cast<std::size_t>(rcp_w_.size());
    return {column_of(base_[0].data(), n), column_of(base_[1].data(), n), column_of(base_[2].data(), n),
            column_of(cap_[0].data(), n),  column_of(cap_[1].data(), n),  column_of(cap_[2].data(), n),
            column_of(rcp_[0].data(), n),  column_of(rcp_[1].data(), n),  column_of(rcp_[2].data(), n),
            column_of(free_scaled_[0].data(), n), column_of(free_scaled_[1].data(), n), column_of(free_scaled_[2].data(), n),
            column_of(rcp_w_.data(), n)};
  }
  [[nodiscard]] view view_with(const std::array<const void*, column_count>& d) const noexcept {
    view v{};
    for (int r = 0; r < resource_kinds; ++r) {
      v.base[r] = static_cast<const double*>(d[static_cast<std::size_t>(r)]);
      v.capacity[r] = static_cast<const double*>(d[static_cast<std::size_t>(3 + r)]);
      v.rcp[r] = static_cast<const double*>(d[static_cast<std::size_t>(6 + r)]);
      v.free_scaled[r] = static_cast<const double*>(d[static_cast<std::size_t>(9 + r)]);
      v.weight[r] = weight_[r];
    }
    v.rcp_weight_sum = static_cast<const double*>(d[12]);
    v.unit_weights = weight_[0] == 1.0 && weight_[1] == 1.0 && weight_[2] == 1.0;
    return v;
  }
  [[nodiscard]] view host_view() const noexcept {
    const auto c = columns();
    std::array<const void*, column_count> d{};
    for (std::size_t i = 0; i < column_count; ++i) d[i] = c[i].data;
    return view_with(d);
  }

 private:
  column<double> base_[resource_kinds], cap_[resource_kinds], rcp_[resource_kinds], free_scaled_[resource_kinds], rcp_w_;
  double weight_[resource_kinds] = {0, 0, 0};
  resource_weights weights_{};
};

// The table's allocation of node n per resource, as usage_with() reads it from a cluster.
inline void allocation_of(const node_table& t, node_index n, std::int64_t (&alloc)[resource_kinds],
                          std::int64_t (&cap)[resource_kinds]) noexcept {
  alloc[0] = t.cpu_allocated()[n];
  alloc[1] = t.mem_allocated()[n];
  alloc[2] = t.gpu_milli_allocated(n);
  cap[0] = t.cpu_capacity()[n];
  cap[1] = t.mem_capacity()[n];
  cap[2] = std::int64_t{t.gpu_count()[n]} * gpu_milli_whole;
}

struct request_args {
  double request[resource_kinds];
  double request_scaled[resource_kinds];  // request * 100, for least_requested_prepared
  bool skip_gpu = false;  // usage_with's rule: a weighted GPU dimension the pod does not request is not scored
};

// The reciprocal of the weight sum over cpu and memory only (the GPU dimension skipped), as
// resource_columns::set computes it for all three: the same correctly rounded 1.0 / sum.
template <class T>
GPUSCHED_BATCH_INLINE GPUSCHED_HD T rcp_weight_sum_without_gpu(const resource_columns::view& v, std::uint32_t n) noexcept {
  using io = lane_io<T>;
  const T zero{};
  T ws = zero;
  for (int r = 0; r < 2; ++r) ws += io::load(v.capacity[r], n) != zero ? formula::splat<T>(v.weight[r]) : zero;
  const T q = formula::splat<T>(1.0) / (ws == zero ? formula::splat<T>(1.0) : ws);
  return ws == zero ? zero : q;
}

inline request_args make_request_args(double cpu, double mem, double gpu) noexcept {
  const double m = static_cast<double>(formula::max_score);
  return {{cpu, mem, gpu}, {cpu * m, mem * m, gpu * m}, false};
}

// LeastAllocated's (and LoadAware's) weighted mean, every per-node part prepared: the same sum and
// division as formula::least_requested_mean with reciprocal_division (a resource without capacity
// scores 0, so it adds nothing, as there; a node whose weight sum is 0 has reciprocal 0, hence 0).
// SkipGpu leaves the GPU dimension out (usage_with's rule for a pod that requests no GPU).
// The sum starts at reciprocal_division's + 0.5: every term is an integer below 2^52, so the sum is
// exact in any order and (0.5 + sum) * rcp is reciprocal_division(sum)'s product, without its
// addition of 0.5 or an addition of the first term to 0. Weights all 1 (LoadAware's default) skip
// their multiplications, which are exact either way.
template <class T, bool SkipGpu = false>
GPUSCHED_BATCH_INLINE GPUSCHED_HD T least_requested_mean_prepared(const resource_columns::view& v, const request_args& a,
                                                                  std::uint32_t n) noexcept {
  using io = lane_io<T>;
  T sum = formula::splat<T>(0.5);
  for (int r = 0; r < (SkipGpu ? 2 : resource_kinds); ++r) {
    const T q = formula::least_requested_prepared(io::load(v.free_scaled[r], n), formula::splat<T>(a.request_scaled[r]), io::load(v.rcp[r], n));
    if (v.unit_weights) {
      sum += q;
    } else {
      sum += formula::splat<T>(v.weight[r]) * q;
    }
  }
  if constexpr (SkipGpu) {
    return formula::number_traits<T>::truncate_nonnegative(sum * rcp_weight_sum_without_gpu<T>(v, n));
  } else {
    return formula::number_traits<T>::truncate_nonnegative(sum * io::load(v.rcp_weight_sum, n));
  }
}

// The inputs of least/most_requested_mean at node n (or at simd_lanes nodes from n): requested =
// base + the pod's request, the capacities, a reciprocal division per resource and one for the
// weight sum.
template <class T>
struct resource_inputs {
  T requested[resource_kinds];
  T capacity[resource_kinds];
  T weight[resource_kinds];
  formula::reciprocal_division<T> div[resource_kinds];
  formula::reciprocal_division<T> by_weight_sum;

  GPUSCHED_BATCH_INLINE GPUSCHED_HD resource_inputs(const resource_columns::view& v, const double (&request)[resource_kinds], std::uint32_t n,
                                                    bool skip_gpu = false) noexcept {
    using io = lane_io<T>;
    for (int r = 0; r < resource_kinds; ++r) {
      requested[r] = io::load(v.base[r], n) + formula::splat<T>(request[r]);
      capacity[r] = io::load(v.capacity[r], n);
      weight[r] = formula::splat<T>(v.weight[r]);
      div[r] = formula::reciprocal_division<T>{io::load(v.rcp[r], n)};
    }
    if (skip_gpu) weight[2] = T{};
    by_weight_sum = formula::reciprocal_division<T>{skip_gpu ? rcp_weight_sum_without_gpu<T>(v, n) : io::load(v.rcp_weight_sum, n)};
  }
};

// least_allocated and most_allocated differ only in the formula.
template <class Plugin, bool Least>
struct node_resources_batch {
  using node_view = resource_columns::view;
  using pod_args = request_args;
  static constexpr normalization normalize = normalization::none;

  class prepared {
   public:
    static constexpr std::size_t column_count = resource_columns::column_count;
    void build(const Plugin& s, const node_table& t) {
      check_weights(s.weights, Least ? "LeastAllocated" : "MostAllocated");
      refuse_named(s, Least ? "LeastAllocated" : "MostAllocated");
      cols_.resize(t.size(), s.weights);
      for (std::size_t n = 0; n < t.size(); ++n) update(s, t, static_cast<node_index>(n));
    }
    void update(const Plugin&, const node_table& t, node_index n) noexcept {
      std::int64_t alloc[resource_kinds], cap[resource_kinds];
      allocation_of(t, n, alloc, cap);
      cols_.set(n, alloc, cap);
    }
    [[nodiscard]] std::array<column_ref, column_count> columns() const noexcept { return cols_.columns(); }
    [[nodiscard]] node_view view_with(const std::array<const void*, column_count>& d) const noexcept { return cols_.view_with(d); }
    [[nodiscard]] node_view view() const noexcept { return cols_.host_view(); }

   private:
    resource_columns cols_;
  };

  // usage_with(c, p, n, weights.gpu != 0): the pod's request added to the node's allocation.
  static pod_args make_pod_args(const Plugin& s, const prepared&, const pod_table& pods, std::size_t i) noexcept {
    const auto k = static_cast<Eigen::Index>(i);
    request_args a = make_request_args(static_cast<double>(pods.cpu_milli()[k]), static_cast<double>(pods.memory_mib()[k]),
                                       s.weights.gpu != 0 ? static_cast<double>(pods.gpu_milli_total(i)) : 0.0);
    a.skip_gpu = s.weights.gpu != 0 && pods.gpu_milli_total(i) == 0;
    return a;
  }

  // One node (T = double) or simd_lanes nodes (T = simd_double) from n.
  template <class T>
  GPUSCHED_BATCH_INLINE GPUSCHED_HD static T score_as(const node_view& v, const pod_args& a, std::uint32_t n) noexcept {
    if constexpr (Least) {
      return a.skip_gpu ? least_requested_mean_prepared<T, true>(v, a, n) : least_requested_mean_prepared<T>(v, a, n);
    } else {
      if (a.skip_gpu) {
        const resource_inputs<T> in(v, a.request, n, true);
        return formula::most_requested_mean(in.requested, in.capacity, in.weight, in.div, in.by_weight_sum);
      }
      const resource_inputs<T> in(v, a.request, n);
      return formula::most_requested_mean(in.requested, in.capacity, in.weight, in.div, in.by_weight_sum);
    }
  }
  GPUSCHED_HD static std::int32_t score(const node_view& v, const pod_args& a, std::uint32_t n) noexcept {
    return static_cast<std::int32_t>(score_as<double>(v, a, n));
  }
};

}  // namespace detail

template <>
struct batch_plugin<least_allocated> : detail::node_resources_batch<least_allocated, true> {};
template <>
struct batch_plugin<most_allocated> : detail::node_resources_batch<most_allocated, false> {};

template <>
struct batch_plugin<load_aware> {
  using node_view = detail::resource_columns::view;
  using pod_args = detail::request_args;
  static constexpr normalization normalize = normalization::none;

  class prepared {
   public:
    static constexpr std::size_t column_count = detail::resource_columns::column_count;
    void build(const load_aware& s, const node_table& t) {
      detail::check_weights(s.weights, "LoadAware");
      cols_.resize(t.size(), s.weights);
      for (std::size_t n = 0; n < t.size(); ++n) update(s, t, static_cast<node_index>(n));
    }
    // The node's usage as load_aware::score computes it (formula::load_aware_used).
    void update(const load_aware& s, const node_table& t, node_index n) noexcept {
      std::int64_t alloc[resource_kinds], cap[resource_kinds];
      detail::allocation_of(t, n, alloc, cap);
      const node_metrics* m = t.load(n);
      const bool measured = m != nullptr;
      const node_metrics none{};
      const node_metrics& mm = measured ? *m : none;
      const std::int64_t gpu_alloc = (!measured && s.weights.gpu != 0 && cap[2] != 0) ? alloc[2] : 0;
      const std::int64_t used[resource_kinds] = {
          formula::load_aware_used(measured, mm.cpu_used, cap[0], mm.assigned_cpu_since, formula::estimated_cpu_factor, alloc[0]),
          formula::load_aware_used(measured, mm.mem_used, cap[1], mm.assigned_mem_since, formula::estimated_memory_factor, alloc[1]),
          formula::load_aware_used(measured, mm.gpu_used, cap[2], mm.assigned_gpu_milli_since, 100, gpu_alloc)};
      cols_.set(n, used, cap);
    }
    [[nodiscard]] std::array<column_ref, column_count> columns() const noexcept { return cols_.columns(); }
    [[nodiscard]] node_view view_with(const std::array<const void*, column_count>& d) const noexcept { return cols_.view_with(d); }
    [[nodiscard]] node_view view() const noexcept { return cols_.host_view(); }

   private:
    detail::resource_columns cols_;
  };

  // load_aware::estimated_request: cpu 85%, memory 70%, GPU milli 100% of the request.
  static pod_args make_pod_args(const load_aware&, const prepared&, const pod_table& pods, std::size_t i) noexcept {
    const auto k = static_cast<Eigen::Index>(i);
    return detail::make_request_args(static_cast<double>(formula::estimated_usage(pods.cpu_milli()[k], formula::estimated_cpu_factor)),
                                     static_cast<double>(formula::estimated_usage(pods.memory_mib()[k], formula::estimated_memory_factor)),
                                     static_cast<double>(pods.gpu_milli_total(i)));
  }

  template <class T>
  GPUSCHED_BATCH_INLINE GPUSCHED_HD static T score_as(const node_view& v, const pod_args& a, std::uint32_t n) noexcept {
    return detail::least_requested_mean_prepared<T>(v, a, n);
  }
  GPUSCHED_HD static std::int32_t score(const node_view& v, const pod_args& a, std::uint32_t n) noexcept {
    return static_cast<std::int32_t>(score_as<double>(v, a, n));
  }
};

template <>
struct batch_plugin<qos_aware> {
  using node_view = detail::resource_columns::view;
  struct pod_args {
    qos_class qos;
    std::int32_t resource;  // 2 (GPU milli) for GPU pods, 0 (CPU) otherwise
    double request;
  };
  static constexpr normalization normalize = normalization::none;

  class prepared {
   public:
    static constexpr std::size_t column_count = detail::resource_columns::column_count;
    void build(const qos_aware& s, const node_table& t) {
      cols_.resize(t.size(), resource_weights{1, 1, 1});
      for (std::size_t n = 0; n < t.size(); ++n) update(s, t, static_cast<node_index>(n));
    }
    void update(const qos_aware&, const node_table& t, node_index n) noexcept {
      std::int64_t alloc[resource_kinds], cap[resource_kinds];
      detail::allocation_of(t, n, alloc, cap);
      cols_.set(n, alloc, cap);
    }
    [[nodiscard]] std::array<column_ref, column_count> columns() const noexcept { return cols_.columns(); }
    [[nodiscard]] node_view view_with(const std::array<const void*, column_count>& d) const noexcept { return cols_.view_with(d); }
    [[nodiscard]] node_view view() const noexcept { return cols_.host_view(); }

   private:
    detail::resource_columns cols_;
  };

  static pod_args make_pod_args(const qos_aware&, const prepared&, const pod_table& pods, std::size_t i) noexcept {
    const auto k = static_cast<Eigen::Index>(i);
    const bool gpu = pods.num_gpu()[k] > 0;
    return {pods.qos_of(i), gpu ? 2 : 0, gpu ? static_cast<double>(pods.gpu_milli_total(i)) : static_cast<double>(pods.cpu_milli()[k])};
  }

  template <class T>
  GPUSCHED_BATCH_INLINE GPUSCHED_HD static T score_as(const node_view& v, const pod_args& a, std::uint32_t n) noexcept {
    using io = lane_io<T>;
    const int r = a.resource;
    return formula::qos_aware_score(a.qos, io::load(v.base[r], n) + formula::splat<T>(a.request), io::load(v.capacity[r], n),
                                    formula::reciprocal_division<T>{io::load(v.rcp[r], n)});
  }
  GPUSCHED_HD static std::int32_t score(const node_view& v, const pod_args& a, std::uint32_t n) noexcept {
    return static_cast<std::int32_t>(score_as<double>(v, a, n));
  }
};

template <>
struct batch_plugin<model_affinity> {
  struct node_view {
    const std::uint64_t* served;  // model-type bits served by each node
  };
  struct pod_args {
    std::uint64_t same;         // the pod's own model-type bit; 0 without a model type
    std::uint64_t interfering;  // bits of the model types that interfere with it; 0 without one
  };
  static constexpr normalization normalize = normalization::none;

  class prepared {
   public:
    static constexpr std::size_t column_count = 1;
    void build(const model_affinity&, const node_table& t) noexcept { t_ = &t; }
    void update(const model_affinity&, const node_table& t, node_index) noexcept { t_ = &t; }
    [[nodiscard]] std::array<column_ref, column_count> columns() const noexcept {
      return {column_of(t_->model_mask().data(), t_->size())};
    }
    [[nodiscard]] node_view view_with(const std::array<const void*, column_count>& d) const noexcept {
      return {static_cast<const std::uint64_t*>(d[0])};
    }
    [[nodiscard]] node_view view() const noexcept { return view_with({t_->model_mask().data()}); }
    [[nodiscard]] const node_table& table() const noexcept { return *t_; }

   private:
    const node_table* t_ = nullptr;
  };

  // As model_affinity::score: a served type other than the pod's own that is listed as interfering.
  static pod_args make_pod_args(const model_affinity& s, const prepared& prep, const pod_table& pods, std::size_t i) noexcept {
    const std::uint64_t same = pods.model_type_bit()[static_cast<Eigen::Index>(i)];
    std::uint64_t bad = 0;
    if (same != 0) {
      const name_bits& names = prep.table().model_types();
      const short_name& mine = names.name(std::countr_zero(same));
      for (std::size_t m = 0; m < names.size(); ++m) {
        const std::uint64_t bit = std::uint64_t{1} << m;
        if (bit != same && s.interferes(names.name(static_cast<int>(m)), mine)) bad |= bit;
      }
    }
    return {same, bad};
  }

  // Without a model type, `same` and `interfering` are 0 (make_pod_args), so both tests are false
  // and the formula's served-model branch gives its 50, the score of a pod without a model type:
  // no branch on whether the pod has one (it was one per pod and step of the fused kernel).
  template <class T>
  GPUSCHED_BATCH_INLINE GPUSCHED_HD static T score_as(const node_view& v, const pod_args& a, std::uint32_t n) noexcept {
    const auto served = lane_io<T>::load(v.served, n);
    return formula::model_affinity_score<T>(true, (served & a.same) != 0, (served & a.interfering) != 0);
  }
  // w * score_as (w a splatted plugin weight): the formula on 50 * w, invariant in the fused
  // kernel's loops (the compiler hoists it), instead of a multiplication per pod and step.
  template <class T>
  GPUSCHED_BATCH_INLINE GPUSCHED_HD static T weighted_score_as(const node_view& v, const pod_args& a, std::uint32_t n, T w) noexcept {
    const auto served = lane_io<T>::load(v.served, n);
    return formula::model_affinity_score<T>(true, (served & a.same) != 0, (served & a.interfering) != 0, w * formula::splat<T>(50));
  }
  GPUSCHED_HD static std::int32_t score(const node_view& v, const pod_args& a, std::uint32_t n) noexcept {
    return static_cast<std::int32_t>(score_as<double>(v, a, n));
  }
};

namespace detail {

// The int64 requested / capacity values of usage_with(), for the scorers that compute in int64.
class int_resource_columns {
 public:
  static constexpr std::size_t column_count = 6;
  struct view {
    const std::int64_t* allocated[resource_kinds];
    const std::int64_t* capacity[resource_kinds];
  };
  void build(const node_table& t) {
    t_ = &t;
    gpu_alloc_.resize(static_cast<Eigen::Index>(t.size()));
    gpu_cap_.resize(static_cast<Eigen::Index>(t.size()));
    for (std::size_t n = 0; n < t.size(); ++n) update(t, static_cast<node_index>(n));
  }
  void update(const node_table& t, node_index n) noexcept {
    t_ = &t;
    gpu_alloc_[n] = t.gpu_milli_allocated(n);
    gpu_cap_[n] = std::int64_t{t.gpu_count()[n]} * gpu_milli_whole;
  }
  [[nodiscard]] std::array<column_ref, column_count> columns() const noexcept {
    const std::size_t n = t_->size();
    return {column_of(t_->cpu_allocated().data(), n), column_of(t_->mem_allocated().data(), n), column_of(gpu_alloc_.data(), n),
            column_of(t_->cpu_capacity().data(), n),  column_of(t_->mem_capacity().data(), n),  column_of(gpu_cap_.data(), n)};
  }
  [[nodiscard]] view view_with(const std::array<const void*, column_count>& d) const noexcept {
    view v{};
    for (std::size_t r = 0; r < 3; ++r) {
      v.allocated[r] = static_cast<const std::int64_t*>(d[r]);
      v.capacity[r] = static_cast<const std::int64_t*>(d[3 + r]);
    }
    return v;
  }
  [[nodiscard]] view host_view() const noexcept {
    const auto c = columns();
    return view_with({c[0].data, c[1].data, c[2].data, c[3].data, c[4].data, c[5].data});
  }

 private:
  const node_table* t_ = nullptr;
  column<std::int64_t> gpu_alloc_, gpu_cap_;
};

struct int_request_args {
  std::int64_t request[resource_kinds];
  bool skip_gpu = false;  // usage_with's rule: a weighted GPU dimension the pod does not request is not scored
};

inline int_request_args int_requests(const resource_weights& w, const pod_table& pods, std::size_t i) noexcept {
  const auto k = static_cast<Eigen::Index>(i);
  return {{pods.cpu_milli()[k], pods.memory_mib()[k], w.gpu != 0 ? pods.gpu_milli_total(i) : 0},
          w.gpu != 0 && pods.gpu_milli_total(i) == 0};
}

// Node n's allocation with the pod's request added, and its capacity, per resource.
GPUSCHED_HD void requested_and_capacity(const int_resource_columns::view& v, const int_request_args& a, std::uint32_t n,
                                        std::int64_t (&requested)[resource_kinds], std::int64_t (&capacity)[resource_kinds]) noexcept {
  for (int r = 0; r < resource_kinds; ++r) {
    requested[r] = v.allocated[r][n] + a.request[r];
    capacity[r] = v.capacity[r][n];
  }
  if (a.skip_gpu) capacity[2] = 0;
}

}  // namespace detail

template <>
struct batch_plugin<balanced_allocation> {
  struct node_view {
    detail::int_resource_columns::view res;
    std::int64_t weight[resource_kinds];
    balance_formula formula;
  };
  using pod_args = detail::int_request_args;
  static constexpr normalization normalize = normalization::none;

  class prepared {
   public:
    static constexpr std::size_t column_count = detail::int_resource_columns::column_count;
    void build(const balanced_allocation& s, const node_table& t) {
      detail::refuse_named(s, "NodeResourcesBalancedAllocation");
      cols_.build(t);
      w_ = s.weights;
      formula_ = s.formula;
    }
    void update(const balanced_allocation&, const node_table& t, node_index n) noexcept { cols_.update(t, n); }
    [[nodiscard]] std::array<column_ref, column_count> columns() const noexcept { return cols_.columns(); }
    [[nodiscard]] node_view view_with(const std::array<const void*, column_count>& d) const noexcept {
      return {cols_.view_with(d), {w_.cpu, w_.memory, w_.gpu}, formula_};
    }
    [[nodiscard]] node_view view() const noexcept { return {cols_.host_view(), {w_.cpu, w_.memory, w_.gpu}, formula_}; }

   private:
    detail::int_resource_columns cols_;
    resource_weights w_{};
    balance_formula formula_ = balance_formula::change;
  };

  static pod_args make_pod_args(const balanced_allocation& s, const prepared&, const pod_table& pods, std::size_t i) noexcept {
    return detail::int_requests(s.weights, pods, i);
  }

  GPUSCHED_HD static std::int32_t score(const node_view& v, const pod_args& a, std::uint32_t n) noexcept {
    std::int64_t requested[resource_kinds], capacity[resource_kinds];
    detail::requested_and_capacity(v.res, a, n, requested, capacity);
    const std::int64_t with_pod = formula::balanced_allocation_of(requested, capacity, v.weight, resource_kinds);
    if (v.formula == balance_formula::after) return static_cast<std::int32_t>(with_pod);
    std::int64_t before[resource_kinds];  // the node's allocation without the pod (as balanced_allocation::score)
    for (int r = 0; r < resource_kinds; ++r) before[r] = v.res.allocated[r][n];
    return static_cast<std::int32_t>(
        balance_change_score(with_pod, formula::balanced_allocation_of(before, capacity, v.weight, resource_kinds)));
  }
};

template <>
struct batch_plugin<requested_to_capacity_ratio> {
  static constexpr int max_points = 16;
  struct node_view {
    detail::int_resource_columns::view res;
    std::int64_t weight[resource_kinds];
    std::int64_t util[max_points];
    std::int64_t score[max_points];
    std::int32_t points;
  };
  using pod_args = detail::int_request_args;
  static constexpr normalization normalize = normalization::none;

  class prepared {
   public:
    static constexpr std::size_t column_count = detail::int_resource_columns::column_count;
    void build(const requested_to_capacity_ratio& s, const node_table& t) {
      detail::refuse_named(s, "RequestedToCapacityRatio");
      if (s.util_.size() > static_cast<std::size_t>(max_points)) {
        throw invalid_argument_error("RequestedToCapacityRatio.shape", "the batch engines take at most 16 points");
      }
      cols_.build(t);
      extra_ = node_view{};
      extra_.weight[0] = s.weights.cpu;
      extra_.weight[1] = s.weights.memory;
      extra_.weight[2] = s.weights.gpu;
      extra_.points = static_cast<std::int32_t>(s.util_.size());
      for (std::size_t i = 0; i < s.util_.size(); ++i) {
        extra_.util[i] = s.util_[i];
        extra_.score[i] = s.score_[i];
      }
    }
    void update(const requested_to_capacity_ratio&, const node_table& t, node_index n) noexcept { cols_.update(t, n); }
    [[nodiscard]] std::array<column_ref, column_count> columns() const noexcept { return cols_.columns(); }
    [[nodiscard]] node_view view_with(const std::array<const void*, column_count>& d) const noexcept {
      node_view v = extra_;
      v.res = cols_.view_with(d);
      return v;
    }
    [[nodiscard]] node_view view() const noexcept {
      node_view v = extra_;
      v.res = cols_.host_view();
      return v;
    }

   private:
    detail::int_resource_columns cols_;
    node_view extra_{};
  };

  static pod_args make_pod_args(const requested_to_capacity_ratio& s, const prepared&, const pod_table& pods, std::size_t i) noexcept {
    return detail::int_requests(s.weights, pods, i);
  }

  GPUSCHED_HD static std::int32_t score(const node_view& v, const pod_args& a, std::uint32_t n) noexcept {
    std::int64_t requested[resource_kinds], capacity[resource_kinds];
    detail::requested_and_capacity(v.res, a, n, requested, capacity);
    return static_cast<std::int32_t>(
        formula::requested_to_capacity_ratio(requested, capacity, v.weight, resource_kinds, v.util, v.score, v.points));
  }
};

static_assert(BatchScorer<least_allocated> && BatchScorer<most_allocated> && BatchScorer<load_aware> &&
              BatchScorer<qos_aware> && BatchScorer<model_affinity> && BatchScorer<balanced_allocation> &&
              BatchScorer<requested_to_capacity_ratio>);

}  // namespace gpusched::batch
