// Configured (dynamic) profiles in the batch engine: batch::configured(profile) turns a
// dynamic_profile whose every check and scorer has a batch form (a batch_plugin specialisation,
// batch/plugin.hpp) into a static profile of three erased plugins that batch_scorer runs as any other:
//
//   auto cfg = load_scheduler_config("my-config.yaml");              // or Python's Profile
//   auto engine = batch::make_batch_scorer(batch::configured(cfg.profile("ai").profile), {.threads = 8});
//
// The plugins are found by type among the descriptors' check_types / score_types
// (profile/builtin_plugins.hpp, or a host's own plugin_list); a plugin without a batch form is
// refused with invalid_argument_error naming it. Decisions are those of the static profile with the
// same plugins; speed is lower (one virtual call per plugin and tile: checks through their tile
// forms, scorers through their lane forms at the run-time width in optimised builds; no fused pass).
// CPU engine only. Scores are summed in 64 bits and must fit the engine's 32-bit totals.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "gpusched/batch/checks.hpp"
#include "gpusched/batch/fgd_plugin.hpp"
#include "gpusched/batch/host_forms.hpp"
#include "gpusched/batch/node_table.hpp"
#include "gpusched/batch/plugin.hpp"
#include "gpusched/batch/pod_table.hpp"
#include "gpusched/batch/scorers.hpp"
#include "gpusched/batch/simd.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/profile/builtin_plugins.hpp"
#include "gpusched/profile/dynamic_profile.hpp"
#include "gpusched/profile/plugin_descriptor.hpp"
#include "gpusched/profile/static_profile.hpp"
#include "gpusched/schedule/gpu_selection.hpp"
#include "gpusched/schedule/random_gpus.hpp"

namespace gpusched::batch {

namespace detail {

inline constexpr std::size_t erased_args_bytes = 128;  // one plugin's pod_args, at most
inline constexpr std::size_t erased_max_parts = 8;     // checks (or scorers) per configured profile

struct erased_args_slot {
  alignas(16) unsigned char bytes[erased_args_bytes];
};

// One check or scorer of a configured profile in its batch form.
class erased_part {
 public:
  erased_part(std::string name, std::int64_t weight) : name_(std::move(name)), weight_(weight) {}
  erased_part(const erased_part&) = default;
  erased_part& operator=(const erased_part&) = delete;
  virtual ~erased_part() = default;
  [[nodiscard]] virtual std::unique_ptr<erased_part> clone() const = 0;
  virtual void build(const node_table& t) = 0;
  virtual void update(const node_table& t, node_index n) = 0;
  virtual void pod_args(const pod_table& pods, std::size_t i, erased_args_slot& out) const = 0;
  virtual void fits_tile(const erased_args_slot& a, std::uint32_t first, std::uint32_t count, std::int32_t* mask) const = 0;
  [[nodiscard]] virtual bool fits(const erased_args_slot& a, std::uint32_t n) const = 0;
  [[nodiscard]] virtual std::int32_t score(const erased_args_slot& a, std::uint32_t n) const = 0;
  // out[i] += w * score of node first + i, for a tile: one virtual call per tile, the scorer's lane
  // form inside where it has one.
  virtual void add_score_tile(const erased_args_slot& a, std::int64_t w, std::uint32_t first, std::uint32_t count,
                              double* out) const = 0;
  // Bytes of the plugin's prepared per-node data outside the node table (batch_scorer::prepared_bytes).
  [[nodiscard]] virtual std::size_t prepared_bytes() const = 0;
  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  [[nodiscard]] std::int64_t weight() const noexcept { return weight_; }

 private:
  std::string name_;
  std::int64_t weight_;
};

template <class P>
class erased_part_of final : public erased_part {
  using form = batch_plugin<P>;
  using args_t = typename form::pod_args;
  static_assert(sizeof(args_t) <= erased_args_bytes && alignof(args_t) <= 16 && std::is_trivially_copyable_v<args_t>,
                "a plugin's batch pod_args must fit detail::erased_args_slot to run in a configured profile");

 public:
  erased_part_of(P plugin, std::string name, std::int64_t weight)
      : erased_part(std::move(name), weight), plugin_(std::move(plugin)) {}
  erased_part_of(const erased_part_of& o) : erased_part(o), plugin_(o.plugin_) {}  // unprepared copy
  [[nodiscard]] std::unique_ptr<erased_part> clone() const override { return std::make_unique<erased_part_of>(*this); }
  void build(const node_table& t) override {
    prep_.build(plugin_, t);
    view_ = prep_.view();
    table_ = &t;
    lanes_ = runtime_simd_lanes();
  }
  void update(const node_table& t, node_index n) override {
    prep_.update(plugin_, t, n);
    view_ = prep_.view();
  }
  void pod_args(const pod_table& pods, std::size_t i, erased_args_slot& out) const override {
    ::new (static_cast<void*>(out.bytes)) args_t(form::make_pod_args(plugin_, prep_, pods, i));
  }
  void fits_tile(const erased_args_slot& a, std::uint32_t first, std::uint32_t count, std::int32_t* mask) const override {
    if constexpr (BatchCheck<P>) {
      if constexpr (HasFitsTile<P>) {
        form::fits_tile(view_, args(a), first, count, mask);
      } else {
        for (std::uint32_t i = 0; i < count; ++i) mask[i] &= form::fits(view_, args(a), first + i) ? 1 : 0;
      }
    }
  }
  [[nodiscard]] bool fits(const erased_args_slot& a, std::uint32_t n) const override {
    if constexpr (BatchCheck<P>) {
      return form::fits(view_, args(a), n);
    } else {
      return true;
    }
  }
  [[nodiscard]] std::int32_t score(const erased_args_slot& a, std::uint32_t n) const override {
    if constexpr (BatchScorer<P>) {
      return form::score(view_, args(a), n);
    } else {
      return 0;
    }
  }
  [[nodiscard]] std::size_t prepared_bytes() const override {
    std::size_t bytes = 0;
    for (const column_ref& c : prep_.columns()) {
      if (table_ == nullptr || !table_->owns(c.data)) bytes += c.bytes();
    }
    return bytes;
  }
  // The lane form at the run-time width (the CPU's widest, capped by GPUSCHED_SIMD; ADR 0007), as
  // batch_scorer's own kernels: the AVX2 and AVX-512 loops are compiled for their ISA with the
  // formulas inlined and contraction off, so every width gives the same sums.
  void add_score_tile(const erased_args_slot& a, std::int64_t w, std::uint32_t first, std::uint32_t count,
                      double* out) const override {
    if constexpr (BatchScorer<P>) {
#if GPUSCHED_BATCH_SIMD && defined(__OPTIMIZE__)
      // Optimised builds only: unoptimised GCC leaves helpers such as formula::splat out of line,
      // and a wide vector returned from such a baseline-ABI call into an AVX-512 function breaks
      // (the ASan + UBSan Debug build crashed); those builds keep the build's width.
      if (lanes_ == 8) return add_tile_avx512(a, w, first, count, out);
      if (lanes_ == 4) return add_tile_avx2(a, w, first, count, out);
#endif
#if GPUSCHED_BATCH_SIMD
      add_tile<simd_lanes>(a, w, first, count, out);
#else
      add_tile<1>(a, w, first, count, out);
#endif
    }
  }

 private:
  static const args_t& args(const erased_args_slot& a) noexcept {
    return *std::launder(reinterpret_cast<const args_t*>(a.bytes));
  }
  P plugin_;
  typename form::prepared prep_;
  template <std::uint32_t L>
  [[gnu::always_inline]] void add_tile(const erased_args_slot& a, std::int64_t w, std::uint32_t first, std::uint32_t count,
                                       double* __restrict out) const noexcept {
    const double wd = static_cast<double>(w);
    std::uint32_t i = 0;
#if GPUSCHED_BATCH_SIMD
    if constexpr (L > 1 && HasLaneScore<P, typename simd<L>::f64>) {  // lane scores hold integers (batch/plugin.hpp)
      using V = typename simd<L>::f64;
      using out_t = typename simd<L>::f64_u;
      for (; i + L <= count; i += L) {
        const V x = form::template score_as<V>(view_, args(a), first + i);
        *reinterpret_cast<out_t*>(out + i) = *reinterpret_cast<const out_t*>(out + i) + wd * x;
      }
    }
#endif
    for (; i < count; ++i) out[i] += wd * static_cast<double>(form::score(view_, args(a), first + i));
  }
#if GPUSCHED_BATCH_SIMD
  GPUSCHED_BATCH_TARGET_AVX512 void add_tile_avx512(const erased_args_slot& a, std::int64_t w, std::uint32_t first,
                                                    std::uint32_t count, double* out) const noexcept {
    add_tile<8>(a, w, first, count, out);
  }
  GPUSCHED_BATCH_TARGET_AVX2 void add_tile_avx2(const erased_args_slot& a, std::int64_t w, std::uint32_t first,
                                                std::uint32_t count, double* out) const noexcept {
    add_tile<4>(a, w, first, count, out);
  }
#endif

  typename form::node_view view_{};
  const node_table* table_ = nullptr;  // the table built on (its columns are not this part's memory)
  std::uint32_t lanes_ = 1;            // the run-time SIMD width, read at build
};

// The prepared parts of one configured_checks / configured_scores, on the heap so that views
// stay valid when the engine moves.
struct erased_parts {
  std::vector<std::unique_ptr<erased_part>> parts;
};

struct erased_list_form {
  struct node_view {
    const erased_parts* parts;
  };
  struct pod_args {
    erased_args_slot slot[erased_max_parts];
  };
  static constexpr normalization normalize = normalization::none;
};

}  // namespace detail

// The checks of a configured profile, as one batch check (all must pass).
struct configured_checks {
  std::vector<std::shared_ptr<const detail::erased_part>> parts;
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "ConfiguredChecks"; }
};
// The scorers of a configured profile with their weights, as one batch scorer (weight 1: the sum
// of weight x score over its parts).
struct configured_scores {
  std::vector<std::shared_ptr<const detail::erased_part>> parts;
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "ConfiguredScores"; }
};

namespace detail {
template <class L>
class erased_list_prepared {
 public:
  static constexpr std::size_t column_count = 0;
  void build(const L& l, const node_table& t) {
    state_ = std::make_unique<erased_parts>();
    for (const auto& p : l.parts) {
      state_->parts.push_back(p->clone());
      state_->parts.back()->build(t);
    }
  }
  void update(const L&, const node_table& t, node_index n) {
    for (auto& p : state_->parts) p->update(t, n);
  }
  [[nodiscard]] std::array<column_ref, 0> columns() const noexcept { return {}; }
  [[nodiscard]] typename erased_list_form::node_view view() const noexcept { return {state_.get()}; }
  [[nodiscard]] std::size_t hidden_bytes() const {
    std::size_t bytes = 0;
    if (state_) {
      for (const auto& p : state_->parts) bytes += p->prepared_bytes();
    }
    return bytes;
  }

 private:
  std::unique_ptr<erased_parts> state_;
};

template <class L>
typename erased_list_form::pod_args erased_list_args(const erased_list_prepared<L>& prep, const pod_table& pods,
                                                            std::size_t i) {
  typename erased_list_form::pod_args a;
  const erased_parts& ps = *prep.view().parts;
  for (std::size_t k = 0; k < ps.parts.size(); ++k) ps.parts[k]->pod_args(pods, i, a.slot[k]);
  return a;
}
}  // namespace detail

template <>
struct batch_plugin<configured_checks> : detail::erased_list_form {
  using prepared = detail::erased_list_prepared<configured_checks>;
  static pod_args make_pod_args(const configured_checks&, const prepared& prep, const pod_table& pods, std::size_t i) {
    return detail::erased_list_args(prep, pods, i);
  }
  static bool fits(const node_view& v, const pod_args& a, std::uint32_t n) noexcept {
    for (std::size_t k = 0; k < v.parts->parts.size(); ++k) {
      if (!v.parts->parts[k]->fits(a.slot[k], n)) return false;
    }
    return true;
  }
  static void fits_tile(const node_view& v, const pod_args& a, std::uint32_t first, std::uint32_t count,
                        std::int32_t* mask) noexcept {
    for (std::size_t k = 0; k < v.parts->parts.size(); ++k) v.parts->parts[k]->fits_tile(a.slot[k], first, count, mask);
  }
};

template <>
struct batch_plugin<configured_scores> : detail::erased_list_form {
  using prepared = detail::erased_list_prepared<configured_scores>;
  static pod_args make_pod_args(const configured_scores&, const prepared& prep, const pod_table& pods, std::size_t i) {
    return detail::erased_list_args(prep, pods, i);
  }
  static std::int32_t score(const node_view& v, const pod_args& a, std::uint32_t n) noexcept {
    std::int64_t total = 0;
    for (std::size_t k = 0; k < v.parts->parts.size(); ++k) {
      total += v.parts->parts[k]->weight() * v.parts->parts[k]->score(a.slot[k], n);
    }
    return static_cast<std::int32_t>(total);
  }
  static void score_tile(const node_view& v, const pod_args& a, std::int64_t w, std::uint32_t first, std::uint32_t count,
                         double* out) noexcept {
    for (std::size_t k = 0; k < v.parts->parts.size(); ++k) {
      v.parts->parts[k]->add_score_tile(a.slot[k], w * v.parts->parts[k]->weight(), first, count, out);
    }
  }
};

// The configured profile's device choice, over the node table.
class configured_selector {
 public:
  struct base {
    virtual ~base() = default;
    [[nodiscard]] virtual gpu_set select(const node_table& t, const pod& p, node_index n) const = 0;
    [[nodiscard]] virtual std::string_view name() const = 0;
  };
  configured_selector() = default;
  explicit configured_selector(std::shared_ptr<const base> b) : impl_(std::move(b)) {}
  [[nodiscard]] gpu_set select(const node_table& t, const pod& p, node_index n) const {
    return impl_ ? impl_->select(t, p, n) : best_fit_gpus{}.select(t, p, n);
  }
  [[nodiscard]] std::string_view name() const { return impl_ ? impl_->name() : best_fit_gpus::name(); }

 private:
  std::shared_ptr<const base> impl_;
};

using configured_profile = static_profile<check_list<configured_checks>, score_list<configured_scores>, configured_selector>;

namespace detail {

template <class G>
struct selector_of final : configured_selector::base {
  explicit selector_of(G g) : impl(std::move(g)) {}
  [[nodiscard]] gpu_set select(const node_table& t, const pod& p, node_index n) const override { return impl.select(t, p, n); }
  [[nodiscard]] std::string_view name() const override { return impl.name(); }
  G impl;
};

template <class... T, class F>
void for_each_type(plugin_types<T...>, F&& f) {
  (f.template operator()<T>(), ...);
}

template <class D>
struct selector_types_of {
  using type = plugin_types<>;
};
template <class D>
  requires requires { typename D::selector_types; }
struct selector_types_of<D> {
  using type = typename D::selector_types;
};

}  // namespace detail

// The plugins configured_split() leaves to the caller, by their index in the profile.
struct per_node_plugins {
  std::vector<std::size_t> checks;  // without a batch form
  std::vector<std::size_t> scores;  // without a batch form, or normalising (over the caller's feasible nodes)
};

namespace detail {
// configured() and configured_split(): with `per_node`, plugins the batch form cannot hold are left
// out and recorded there; without, they are refused.
template <class List, Cluster C>
configured_profile configured_impl(const dynamic_profile<C>& p, List list, per_node_plugins* per_node);
}  // namespace detail

// The batch form of a configured profile (see the top of this file); `List` the descriptors whose
// plugin types are looked for (the built-ins by default).
template <class List = builtin_plugins, Cluster C>
configured_profile configured(const dynamic_profile<C>& p, List list = {}) {
  return detail::configured_impl(p, list, nullptr);
}

// The batch form of the part of p it can hold; the rest, by index in p, goes to `per_node`: checks
// without a batch form, for the caller to run through p (dynamic_profile::filter_check) on the nodes
// the engine passes (a node is then feasible exactly when p's filter passes it), and scorers without
// one or with a NormalizeScore, for the caller to run through p (dynamic_profile::score_plugin) on
// its feasible nodes and add, times their weights, to the engine's totals. For profiles whose
// remaining plugins are cheap beside the rest: Kubernetes' node-constraint plugins
// (NodeUnschedulable, TaintToleration, NodeAffinity), which read per-node data the node table does
// not hold, for one. gpusched-extender runs profiles this way.
template <class List = builtin_plugins, Cluster C>
configured_profile configured_split(const dynamic_profile<C>& p, per_node_plugins& per_node, List list = {}) {
  return detail::configured_impl(p, list, &per_node);
}

namespace detail {
template <class List, Cluster C>
configured_profile configured_impl(const dynamic_profile<C>& p, List list, per_node_plugins* per_node) {
  configured_checks ks;
  for (std::size_t i = 0; i < p.check_count(); ++i) {
    std::shared_ptr<const erased_part> found;
    for_each_plugin(list, [&]<class D>() {
      for_each_type(typename D::check_types{}, [&]<class T>() {
        if constexpr (BatchCheck<T>) {
          if (const T* k = p.template check_as<T>(i); k != nullptr && !found) {
            found = std::make_shared<erased_part_of<T>>(*k, std::string(p.check_name(i)), 1);
          }
        }
      });
    });
    if (!found && per_node != nullptr) {
      per_node->checks.push_back(i);
      continue;
    }
    if (!found) {
      throw invalid_argument_error("profile.check." + std::string(p.check_name(i)),
                                   "has no batch form (a batch_plugin specialisation, batch/plugin.hpp): the batch engine "
                                   "cannot run this profile");
    }
    ks.parts.push_back(std::move(found));
  }
  configured_scores ss;
  for (std::size_t i = 0; i < p.score_plugin_count(); ++i) {
    std::shared_ptr<const erased_part> found;
    bool normalises = false;
    for_each_plugin(list, [&]<class D>() {
      for_each_type(typename D::score_types{}, [&]<class T>() {
        if constexpr (BatchScorer<T>) {
          if (const T* s = p.template score_as<T>(i); s != nullptr && !found && !normalises) {
            if (batch_plugin<T>::normalize != normalization::none && per_node != nullptr) {
              normalises = true;
              return;
            }
            if (batch_plugin<T>::normalize != normalization::none) {
              throw invalid_argument_error("profile.score." + std::string(p.score_plugin_name(i)),
                                           "normalises its scores; configured profiles in the batch engine take "
                                           "scorers without NormalizeScore only");
            }
            if constexpr (requires { batch_plugin<T>::fills_totals; }) {
              if (p.score_plugin_count() != 1 || p.score_plugin_weight(i) != 1) {
                throw invalid_argument_error("profile.score." + std::string(p.score_plugin_name(i)),
                                             "scores about 10^9, which fills the batch engine's 32-bit totals: give it "
                                             "alone, weight 1");
              }
            }
            found = std::make_shared<erased_part_of<T>>(*s, std::string(p.score_plugin_name(i)), p.score_plugin_weight(i));
          }
        }
      });
    });
    if (!found && per_node != nullptr) {
      per_node->scores.push_back(i);
      continue;
    }
    if (!found) {
      throw invalid_argument_error("profile.score." + std::string(p.score_plugin_name(i)),
                                   "has no batch form (a batch_plugin specialisation, batch/plugin.hpp): the batch engine "
                                   "cannot run this profile");
    }
    ss.parts.push_back(std::move(found));
  }
  if (ks.parts.size() > erased_max_parts || ss.parts.size() > erased_max_parts) {
    throw invalid_argument_error("profile", "the batch engine runs configured profiles of at most 8 checks and 8 scorers");
  }
  std::shared_ptr<const configured_selector::base> sel;
  auto try_selector = [&]<class T>() {
    if constexpr (GpuSelector<T, node_table>) {
      if (const T* g = p.template gpu_selector_as<T>(); g != nullptr && !sel) sel = std::make_shared<selector_of<T>>(*g);
    }
  };
  try_selector.template operator()<best_fit_gpus>();
  for_each_plugin(list, [&]<class D>() {
    for_each_type(typename D::score_types{}, try_selector);
    for_each_type(typename selector_types_of<D>::type{}, try_selector);
  });
  if (!sel) {
    throw invalid_argument_error("profile.gpu_selector." + std::string(p.gpu_selector_name()),
                                 "is not a device selector the batch engine knows (none of the descriptors' types)");
  }
  return configured_profile(gpusched::checks(std::move(ks)), gpusched::scores(weighted{std::move(ss), 1}),
                            configured_selector(std::move(sel)));
}
}  // namespace detail

}  // namespace gpusched::batch
