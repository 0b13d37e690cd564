// batch_scorer: a static profile evaluated for many pods against many nodes on the CPU.
//
//   batch::node_table nodes(cluster);                    // once; then apply() / refresh() per change
//   batch::pod_table pending(pods, nodes);
//   auto engine = batch::make_batch_scorer(profile, {.threads = 8, .seed = 42});
//   engine.prepare(nodes);
//   batch::top_k_result best;
//   engine.top_k(pending, 3, best);                      // best.best(i).node: pod i's node
//
// Per pod, as Kubernetes' scheduling cycle does for one pod: the checks give the feasible nodes;
// each scorer scores them; a scorer with a NormalizeScore is normalised over the pod's feasible
// nodes (DefaultNormalizeScore); the weighted sum ranks them; ties break by the hashed rule of
// top_k.hpp (schedule_one decides identically with tie_break_rule::hashed and
// percentage_of_nodes_to_score = 100). Every pair calls the plugins' batch forms
// (batch/checks.hpp, batch/scorers.hpp), which call the same formula functions as the plugins.
//
// Speed: nodes are processed in tiles (node_tile) and pods in blocks (pod_block) so that a tile's
// node data stays in cache while the block's pods are scored against it; the loops over a tile's
// nodes are branch-free and vectorise. Pod blocks are spread over a thread pool; each pod's result
// depends on nothing but its own computation, so results are identical for any thread count.
// After prepare(), scoring calls allocate nothing.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <tuple>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "gpusched/batch/checks.hpp"
#include "gpusched/batch/fgd_plugin.hpp"
#include "gpusched/batch/node_table.hpp"
#include "gpusched/batch/plugin.hpp"
#include "gpusched/batch/pod_table.hpp"
#include "gpusched/batch/scorers.hpp"
#include "gpusched/batch/simd.hpp"
#include "gpusched/batch/thread_pool.hpp"
#include "gpusched/batch/top_k.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/profile/static_profile.hpp"
#include "gpusched/schedule/tie_break.hpp"
#include "gpusched/scoring/formulas.hpp"

namespace gpusched::batch {

struct batch_options {
  unsigned threads = 1;           // threads in all, the caller included (0: hardware concurrency)
  std::uint64_t seed = 0;         // tie-break seed, as schedule_options::seed
  std::uint32_t node_tile = 512;  // nodes per tile, 1..max_tile
  std::uint32_t pod_block = 8;    // pods scored against a tile while it is in cache, 1..64
  std::uint32_t max_lanes = 0;    // SIMD width cap: 0 = none (the CPU's widest, batch/simd.hpp); 2, 4, 8
};

// Weighted totals, pods x nodes, row-major; -1 where the node does not fit the pod.
using score_matrix = Eigen::Array<std::int32_t, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

inline namespace GPUSCHED_BATCH_ABI {  // see batch/simd.hpp

template <class Profile>
class batch_scorer;

template <class... K, class... S, class Selector>
class batch_scorer<static_profile<check_list<K...>, score_list<S...>, Selector>> {
  static_assert((BatchCheck<K> && ...), "every check of the profile needs a batch_plugin specialisation (batch/plugin.hpp)");
  static_assert((BatchScorer<S> && ...), "every scorer of the profile needs a batch_plugin specialisation (batch/plugin.hpp)");

 public:
  using profile_type = static_profile<check_list<K...>, score_list<S...>, Selector>;
  using check_views = std::tuple<typename batch_plugin<K>::node_view...>;
  using score_views = std::tuple<typename batch_plugin<S>::node_view...>;
  using check_args = std::tuple<typename batch_plugin<K>::pod_args...>;
  // The checks' per-tile summaries, and each pod's arguments against them (an empty placeholder
  // for a check without a summary; the default arguments: the lane form without them).
  template <class Kc>
  using summary_of = typename batch_plugin<Kc>::tile_summary;
  template <class Kc>
  using summary_args_of = typename batch_plugin<Kc>::tile_pod_args;
  template <class Kc, template <class> class Part>
  struct tile_part {
    struct type {};
  };
  template <class Kc, template <class> class Part>
    requires HasTileSummary<Kc>
  struct tile_part<Kc, Part> {
    using type = Part<Kc>;
  };
  using tile_summaries = std::tuple<typename tile_part<K, summary_of>::type...>;
  using tile_pod_args = std::tuple<typename tile_part<K, summary_args_of>::type...>;
  static constexpr bool any_tile_summary = (HasTileSummary<K> || ... || false);
  static_assert(((!DeclaresTileSummary<K> || HasTileSummary<K>) && ... && true),
                "a check with a tile_summary needs summarize_tile, tile_pod_args and tile_args (batch/plugin.hpp)");
  using score_args = std::tuple<typename batch_plugin<S>::pod_args...>;
  static constexpr std::size_t scorer_count = sizeof...(S);
  static constexpr std::uint32_t max_block = 64;
  static constexpr bool normalizes = ((batch_plugin<S>::normalize != normalization::none) || ... || false);

  explicit batch_scorer(profile_type profile, batch_options opts = {})
      : profile_(std::move(profile)), opts_(opts), pool_(std::make_unique<thread_pool>(opts.threads)) {
    if (opts_.node_tile == 0 || opts_.node_tile > max_tile) {
      throw invalid_argument_error("batch_options.node_tile", "must be within 1..1024");
    }
    if (opts_.pod_block == 0 || opts_.pod_block > max_block) {
      throw invalid_argument_error("batch_options.pod_block", "must be within 1..64");
    }
    for (std::size_t i = 0; i < scorer_count; ++i) weights_[i] = static_cast<std::int32_t>(profile_.score_plugin_weight(i));
    scratch_.resize(pool_->size());
    lanes_ = pick_lanes(opts_.max_lanes);
  }

  [[nodiscard]] const profile_type& profile() const noexcept { return profile_; }
  [[nodiscard]] const batch_options& options() const noexcept { return opts_; }
  [[nodiscard]] const node_table* table() const noexcept { return table_; }
  // Doubles per SIMD step of the scoring loops (1 without SIMD).
  [[nodiscard]] std::uint32_t lanes() const noexcept { return lanes_; }

  // Prepares every node of t (t must outlive the scorer or the next prepare()).
  void prepare(const node_table& t) {
    build_all(t);
    table_ = &t;
    revision_ = t.revision();
    size_ = t.size();
    refresh_views();
    const std::size_t row = normalizes ? t.size() : 0;
    for (auto& s : scratch_) s.reserve(row, opts_.pod_block);
  }

  // Re-prepares the nodes changed (apply / refresh) since prepare() or the last sync(). Scoring
  // calls do this themselves; it costs one pass over the nodes' change stamps.
  void sync() {
    require_table();
    if (table_->revision() == revision_) return;
    const node_table& t = *table_;
    if (t.revision() == revision_) return;
    if (t.size() != size_ || t.revision() < revision_) {  // grown, or its stamps wrapped (node_table::touch)
      prepare(t);
      return;
    }
    const auto& stamps = t.stamps();
    for (std::size_t n = 0; n < t.size(); ++n) {
      if (stamps[static_cast<Eigen::Index>(n)] > revision_) update_node(static_cast<node_index>(n));
    }
    revision_ = t.revision();
    refresh_views();
  }

  // Re-prepares node n alone: for callers that changed exactly that node since the last sync
  // (assign_greedy after each placement); O(1) instead of sync()'s pass over all nodes.
  void sync_node(node_index n) {
    require_table();
    update_node(n);
    revision_ = table_->revision();
  }

  // The k best nodes of every pod (k >= 1).
  void top_k(const pod_table& pods, std::size_t k, top_k_result& out) {
    begin_call(pods);
    if (k == 0) throw invalid_argument_error("top_k.k", "must be >= 1");
    out.reset(pods.size(), k);
    const std::size_t group = group_pods(pods.size());
    pool_->run((pods.size() + group - 1) / group, [&](std::size_t task, unsigned worker) {
      const std::size_t first = task * group;
      const std::size_t last = std::min(pods.size(), first + group);
      score_block(pods, first, last, scratch_[worker], [&](std::size_t pod, std::uint32_t node0, std::uint32_t count,
                                                           const std::int32_t* total, std::uint32_t feasible, std::int32_t tile_max) {
        out.feasible_count(pod) += feasible;
        merge_tile(out.list(pod), static_cast<std::uint32_t>(k), out.count(pod), total, node0, count, tile_max,
                   pods.tie_keys()[static_cast<Eigen::Index>(pod)]);
      });
    });
  }

  // The weighted total of every (pod, node) pair, -1 where the node does not fit.
  void scores(const pod_table& pods, score_matrix& out) {
    begin_call(pods);
    out.resize(static_cast<Eigen::Index>(pods.size()), static_cast<Eigen::Index>(size_));
    const std::size_t group = group_pods(pods.size());
    pool_->run((pods.size() + group - 1) / group, [&](std::size_t task, unsigned worker) {
      const std::size_t first = task * group;
      const std::size_t last = std::min(pods.size(), first + group);
      score_block(pods, first, last, scratch_[worker], [&](std::size_t pod, std::uint32_t node0, std::uint32_t count,
                                                           const std::int32_t* total, std::uint32_t, std::int32_t) {
        std::copy(total, total + count, &out(static_cast<Eigen::Index>(pod), static_cast<Eigen::Index>(node0)));
      });
    });
  }

  // Pod `pod`'s weighted totals on the given nodes (-1: does not fit), for re-scoring the nodes a
  // placement changed. Not available for profiles that normalise (a change to one node changes the
  // normalised scores of all).
  void score_nodes(const pod_table& pods, std::size_t pod, std::span<const node_index> nodes, std::int32_t* out) {
    begin_call(pods);
    score_nodes(make_check_args(pods, pod), make_score_args(pods, pod), nodes, out);
  }
  // The same with the pod's arguments made beforehand; const and thread-safe, so call sync()
  // after the node table changed.
  void score_nodes(const check_args& ca, const score_args& sa, std::span<const node_index> nodes, std::int32_t* out) const noexcept {
    static_assert(!normalizes, "score_nodes needs a profile without normalising scorers");
    for (std::size_t j = 0; j < nodes.size(); ++j) out[j] = pair_total(ca, sa, nodes[j]);
  }

  // The k best nodes of one pod (k >= 1, else invalid_argument_error), into list[0..k) best first;
  // returns how many, the feasible nodes' count in `feasible`. Const, thread-safe (sync() after changes).
  std::uint32_t top_k_one(const check_args& ca, const score_args& sa, std::uint64_t pod_key, std::uint32_t k, candidate* list,
                          std::uint32_t& feasible, unsigned worker = 0) const {
    if (k == 0) throw invalid_argument_error("top_k_one.k", "must be >= 1");
    std::uint32_t size = 0;
    feasible = 0;
    scratch& s = scratch_[worker];
    s.cargs[0] = ca;
    s.sargs[0] = sa;
    auto sink = [&](std::size_t, std::uint32_t node0, std::uint32_t count, const std::int32_t* total, std::uint32_t f,
                    std::int32_t tile_max) {
      feasible += f;
      merge_tile(list, k, size, total, node0, count, tile_max, pod_key);
    };
    if constexpr (normalizes) {
      score_normalized(ca, sa, s, 0, sink);
    } else {
      const auto n = static_cast<std::uint32_t>(size_);
      for (std::uint32_t node0 = 0; node0 < n; node0 += opts_.node_tile) {
        const std::uint32_t count = std::min(opts_.node_tile, n - node0);
        std::int32_t tile_max = -1;
        const std::uint32_t f = tile_totals(ca, sa, node0, count, s, tile_max);
        sink(0, node0, count, s.total.data(), f, tile_max);
      }
    }
    return size;
  }

  // One pod's weighted totals on every node into row[0..nodes) (-1: does not fit). Const and
  // thread-safe (call sync() after changes).
  void score_row(const check_args& ca, const score_args& sa, std::int32_t* row, unsigned worker = 0) const {
    scratch& s = scratch_[worker];
    auto sink = [&](std::size_t, std::uint32_t node0, std::uint32_t count, const std::int32_t* total, std::uint32_t, std::int32_t) {
      std::copy(total, total + count, row + node0);
    };
    if constexpr (normalizes) {
      score_normalized(ca, sa, s, 0, sink);
    } else {
      const auto n = static_cast<std::uint32_t>(size_);
      for (std::uint32_t node0 = 0; node0 < n; node0 += opts_.node_tile) {
        const std::uint32_t count = std::min(opts_.node_tile, n - node0);
        std::int32_t tile_max = -1;
        tile_totals(ca, sa, node0, count, s, tile_max);
        sink(0, node0, count, s.total.data(), 0, tile_max);
      }
    }
  }

  // One pod's weighted totals on nodes [first, first + count) into out[0..count) (-1: does not fit);
  // returns how many fit. The same tiles as score_row, over a range: a host that holds a subset of
  // the nodes (an extender's candidates, in runs of consecutive indices) scores just those. Const
  // and thread-safe per worker (call sync() after changes). Not available for profiles that
  // normalise (a node's score would depend on nodes outside the range).
  std::uint32_t score_range(const check_args& ca, const score_args& sa, node_index first, std::uint32_t count, std::int32_t* out,
                            unsigned worker = 0) const {
    static_assert(!normalizes, "score_range needs a profile without normalising scorers");
    if (static_cast<std::size_t>(first) + count > size_) throw std::out_of_range("batch_scorer::score_range: nodes beyond the table");
    scratch& s = scratch_[worker];
    std::uint32_t feasible = 0;
    for (std::uint32_t done = 0; done < count;) {
      const std::uint32_t n = std::min(opts_.node_tile, count - done);
      std::int32_t tile_max = -1;
      feasible += tile_totals(ca, sa, first + done, n, s, tile_max);
      std::copy(s.total.data(), s.total.data() + n, out + done);
      done += n;
    }
    return feasible;
  }

  // Runs f(task, worker) for tasks [0, tasks) on the engine's threads (worker < threads()).
  template <class F>
  void parallel_for(std::size_t tasks, F&& f) {
    pool_->run(tasks, std::forward<F>(f));
  }
  [[nodiscard]] unsigned threads() const noexcept { return pool_->size(); }
  [[nodiscard]] std::uint64_t seed() const noexcept { return opts_.seed; }

  // Whether node n fits pod `pod`, and each scorer's score (before weights and normalisation).
  bool explain(const pod_table& pods, std::size_t pod, node_index n, std::span<std::int32_t, scorer_count> raw) {
    begin_call(pods);
    const check_args ca = make_check_args(pods, pod);
    const score_args sa = make_score_args(pods, pod);
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      ((raw[I] = batch_plugin<S>::score(std::get<I>(score_views_), std::get<I>(sa), n)), ...);
    }(std::index_sequence_for<S...>{});
    return pair_fits(ca, n);
  }

  // Per-node data the engine holds for its profile, in bytes (beyond the node table's own).
  [[nodiscard]] std::size_t prepared_bytes() const noexcept {
    std::size_t bytes = 0;
    auto add = [&](const auto& prep) {
      for (const column_ref& c : prep.columns()) {
        if (!is_table_column(c.data)) bytes += c.bytes();
      }
    };
    std::apply([&](const auto&... p) { (add(p), ...); }, check_prep_);
    std::apply([&](const auto&... p) { (add(p), ...); }, score_prep_);
    // Per-node data a plugin keeps outside its listed columns (batch/configured.hpp's erased parts).
    auto add_hidden = [&](const auto& prep) {
      if constexpr (requires { prep.hidden_bytes(); }) bytes += prep.hidden_bytes();
    };
    std::apply([&](const auto&... p) { (add_hidden(p), ...); }, check_prep_);
    std::apply([&](const auto&... p) { (add_hidden(p), ...); }, score_prep_);
    return bytes;
  }

  // For the CUDA engine: the prepared per-plugin data.
  [[nodiscard]] const auto& check_prepared() const noexcept { return check_prep_; }
  [[nodiscard]] const auto& score_prepared() const noexcept { return score_prep_; }
  [[nodiscard]] check_args make_check_args(const pod_table& pods, std::size_t pod) const {
    return make_args_impl<K...>(profile_.check_plugins(), check_prep_, pods, pod, std::index_sequence_for<K...>{});
  }
  [[nodiscard]] score_args make_score_args(const pod_table& pods, std::size_t pod) const {
    return make_score_args_impl(pods, pod, std::index_sequence_for<S...>{});
  }
  [[nodiscard]] std::int32_t weight(std::size_t scorer) const noexcept { return weights_[scorer]; }

 private:
  struct scratch {
    std::vector<std::int32_t> mask, total, raw;  // tile buffers; raw: per pod and normalising scorer, a row
    std::vector<double> extra;                   // a tile of the scorers without a lane form
    std::vector<check_args> cargs, group_cargs;  // a block's; a task's group of blocks
    std::vector<score_args> sargs, group_sargs;
    std::vector<std::int32_t> row_mask;
    std::vector<std::int32_t> block_mask, block_total;  // per pod of a block, `stride` apart
    std::vector<double> block_extra;
    std::vector<std::uint32_t> block_feasible;
    std::vector<std::int32_t> block_max;
    std::vector<tile_summaries> tiles;  // one, where a check keeps a per-tile summary
    void reserve(std::size_t row, std::size_t block) {
      tiles.resize(any_tile_summary ? 1 : 0);
      block_mask.assign(block * stride, 0);
      block_total.assign(block * stride, 0);
      block_extra.assign(any_scalar_scorer ? block * stride : 0, 0.0);
      block_feasible.assign(block, 0);
      block_max.assign(block, -1);
      mask.assign(max_tile + 16, 0);
      total.assign(max_tile + 16, 0);
      extra.assign(max_tile + 16, 0.0);
      raw.assign(row * std::max<std::size_t>(1, scorer_count), 0);
      row_mask.assign(row, 0);
      cargs.resize(block);
      sargs.resize(block);
      group_cargs.resize(block * max_group_blocks);
      group_sargs.resize(block * max_group_blocks);
    }
  };

  void build_all(const node_table& t) {
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (std::get<I>(check_prep_).build(std::get<I>(profile_.check_plugins()), t), ...);
    }(std::index_sequence_for<K...>{});
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (std::get<I>(score_prep_).build(std::get<I>(profile_.score_plugins()).scorer, t), ...);
    }(std::index_sequence_for<S...>{});
  }

  void update_node(node_index n) {
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (std::get<I>(check_prep_).update(std::get<I>(profile_.check_plugins()), *table_, n), ...);
    }(std::index_sequence_for<K...>{});
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (std::get<I>(score_prep_).update(std::get<I>(profile_.score_plugins()).scorer, *table_, n), ...);
    }(std::index_sequence_for<S...>{});
  }

  void refresh_views() {
    check_views_ = std::apply([](const auto&... p) { return check_views{p.view()...}; }, check_prep_);
    score_views_ = std::apply([](const auto&... p) { return score_views{p.view()...}; }, score_prep_);
  }

  bool is_table_column(const void* p) const noexcept { return table_ != nullptr && table_->owns(p); }

  void require_table() const {
    if (table_ == nullptr) throw std::logic_error("batch_scorer: call prepare(node_table) first");
  }

  void begin_call(const pod_table& pods) {
    require_table();
    sync();
    if (pods.gpu_models_seen() != table_->gpu_models().size()) {
      throw invalid_argument_error("pod_table", "was built before the node table learned new GPU models; rebuild it");
    }
  }

  template <class... Ks, class Plugins, class Preps, std::size_t... I>
  static check_args make_args_impl(const Plugins& plugins, const Preps& preps, const pod_table& pods, std::size_t pod,
                                   std::index_sequence<I...>) {
    return check_args{batch_plugin<Ks>::make_pod_args(std::get<I>(plugins), std::get<I>(preps), pods, pod)...};
  }
  template <std::size_t... I>
  score_args make_score_args_impl(const pod_table& pods, std::size_t pod, std::index_sequence<I...>) const {
    return score_args{batch_plugin<S>::make_pod_args(std::get<I>(profile_.score_plugins()).scorer, std::get<I>(score_prep_), pods, pod)...};
  }

  // ---- one pair (score_nodes / explain) ----
  bool pair_fits(const check_args& ca, node_index n) const noexcept {
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      return (batch_plugin<K>::fits(std::get<I>(check_views_), std::get<I>(ca), n) && ... && true);
    }(std::index_sequence_for<K...>{});
  }
  std::int32_t pair_total(const check_args& ca, const score_args& sa, node_index n) const noexcept {
    if (!pair_fits(ca, n)) return -1;
    std::int32_t total = 0;
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      ((total += weights_[I] * batch_plugin<S>::score(std::get<I>(score_views_), std::get<I>(sa), n)), ...);
    }(std::index_sequence_for<S...>{});
    return total;
  }

  // ---- tiles ----

  // mask[i] = whether node first + i fits; returns how many do.
  std::uint32_t tile_mask(const check_args& ca, std::uint32_t first, std::uint32_t count, std::int32_t* __restrict mask) const noexcept {
    for (std::uint32_t i = 0; i < count; ++i) mask[i] = 1;
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (tile_check<K>(std::get<I>(check_views_), std::get<I>(ca), first, count, mask), ...);
    }(std::index_sequence_for<K...>{});
    std::int32_t fits = 0;
    for (std::uint32_t i = 0; i < count; ++i) fits += mask[i];
    return static_cast<std::uint32_t>(fits);
  }

  template <class Kc>
  static void tile_check(typename batch_plugin<Kc>::node_view v, typename batch_plugin<Kc>::pod_args a, std::uint32_t first,
                         std::uint32_t count, std::int32_t* __restrict mask) noexcept {
    if constexpr (HasFitsTile<Kc>) {
      batch_plugin<Kc>::fits_tile(v, a, first, count, mask);
    } else {
      for (std::uint32_t i = 0; i < count; ++i) mask[i] &= batch_plugin<Kc>::fits(v, a, first + i) ? 1 : 0;
    }
  }

  // total[i] += w * score of node first + i; simd_lanes nodes at a time where the scorer has a
  // lane form.
  template <class Sc>
  static void tile_add(typename batch_plugin<Sc>::node_view v, typename batch_plugin<Sc>::pod_args a, std::int32_t w,
                       std::uint32_t first, std::uint32_t count, std::int32_t* __restrict total) noexcept {
    std::uint32_t i = 0;
#if GPUSCHED_BATCH_SIMD
    if constexpr (HasLaneScore<Sc, simd_double>) {
      for (; i + simd_lanes <= count; i += simd_lanes) {
        add_lanes(total + i, w, batch_plugin<Sc>::template score_as<simd_double>(v, a, first + i));
      }
    }
#endif
    for (; i < count; ++i) total[i] += w * batch_plugin<Sc>::score(v, a, first + i);
  }
  template <class Sc>
  static void tile_raw(typename batch_plugin<Sc>::node_view v, typename batch_plugin<Sc>::pod_args a, std::uint32_t first,
                       std::uint32_t count, std::int32_t* __restrict raw) noexcept {
    std::uint32_t i = 0;
#if GPUSCHED_BATCH_SIMD
    if constexpr (HasLaneScore<Sc, simd_double>) {
      for (; i + simd_lanes <= count; i += simd_lanes) {
        store_lanes(raw + i, batch_plugin<Sc>::template score_as<simd_double>(v, a, first + i));
      }
    }
#endif
    for (; i < count; ++i) raw[i] = batch_plugin<Sc>::score(v, a, first + i);
  }

  // Scores pods [first, last) against every node, tile by tile, and hands each pod's tile of
  // totals to `sink(pod, node0, count, totals, feasible)`.
  // Pods [first, last) are up to max_group_blocks blocks: each tile is scored for all of them in
  // turn while it is in cache (L2), so a large table is read from memory once per group rather
  // than once per block. Each pod still sees the tiles in order, so results do not depend on it.
  template <class Sink>
  void score_block(const pod_table& pods, std::size_t first, std::size_t last, scratch& s, Sink&& sink) const {
    for (std::size_t p = first; p < last; ++p) {
      s.group_cargs[p - first] = make_check_args(pods, p);
      s.group_sargs[p - first] = make_score_args(pods, p);
    }
    if constexpr (normalizes) {
      for (std::size_t p = first; p < last; ++p) score_normalized(s.group_cargs[p - first], s.group_sargs[p - first], s, p, sink);
    } else {
      const auto n = static_cast<std::uint32_t>(size_);
      // A check's tile summary costs about one pod's device loop per tile: worth it for two pods.
      const bool summarize = summaries_used() && last - first > 1;
      for (std::uint32_t node0 = 0; node0 < n; node0 += opts_.node_tile) {
        const std::uint32_t count = std::min(opts_.node_tile, n - node0);
        for (std::size_t b0 = first; b0 < last; b0 += opts_.pod_block) {
          const auto block = static_cast<std::uint32_t>(std::min<std::size_t>(opts_.pod_block, last - b0));
          std::copy_n(s.group_cargs.begin() + static_cast<std::ptrdiff_t>(b0 - first), block, s.cargs.begin());
          std::copy_n(s.group_sargs.begin() + static_cast<std::ptrdiff_t>(b0 - first), block, s.sargs.begin());
          // The first block of the group builds the tile's summaries; every block reads them.
          const tile_summary_use use = !summarize ? tile_summary_use::none
                                       : b0 == first ? tile_summary_use::build
                                                     : tile_summary_use::read;
          block_totals(s, block, node0, count, use);
          for (std::uint32_t b = 0; b < block; ++b) {
            sink(b0 + b, node0, count, s.block_total.data() + std::size_t{b} * stride, s.block_feasible[b], s.block_max[b]);
          }
        }
      }
    }
  }

  // Pods per task of top_k / scores: up to max_group_blocks blocks, fewer while that would leave
  // under two tasks per thread.
  static constexpr std::size_t max_group_blocks = 4;
  [[nodiscard]] std::size_t group_pods(std::size_t pods) const noexcept {
    const std::size_t blocks = (pods + opts_.pod_block - 1) / opts_.pod_block;
    const std::size_t g = std::clamp<std::size_t>(blocks / (2 * std::size_t{pool_->size()}), 1, max_group_blocks);
    return g * opts_.pod_block;
  }

  static constexpr std::size_t stride = max_tile + 16;  // per pod in the block buffers

  // The pods of a block (s.cargs / s.sargs[0..block)) against one tile: as tile_totals, but the
  // loop over the block's pods sits inside the loop over nodes, so that each node's data is
  // loaded, and its pod-independent terms (capacity tests, weight masks) computed, once for the
  // whole block.
  // The width is chosen at run time (batch/simd.hpp): lanes_ 8 and 4 run kernels compiled for
  // AVX-512 and AVX2, 2 the build's own target.
  // What a block does with the checks' tile summaries in s.tiles: nothing, read them, or build
  // them for this tile first.
  enum class tile_summary_use : std::uint8_t { none, read, build };
  void block_totals(scratch& s, std::uint32_t block, std::uint32_t node0, std::uint32_t count, tile_summary_use summarized) const noexcept {
#if GPUSCHED_BATCH_SIMD
    if (lanes_ == 8) return block_totals_avx512(s, block, node0, count, summarized);
    if (lanes_ == 4) return block_totals_avx2(s, block, node0, count, summarized);
    block_totals_impl<2>(s, block, node0, count, summarized);
#else
    block_totals_impl<1>(s, block, node0, count, summarized);
#endif
  }
#if GPUSCHED_BATCH_SIMD
  GPUSCHED_BATCH_TARGET_AVX512 void block_totals_avx512(scratch& s, std::uint32_t block, std::uint32_t node0, std::uint32_t count,
                                                        tile_summary_use summarized) const noexcept {
    block_totals_impl<8>(s, block, node0, count, summarized);
  }
  GPUSCHED_BATCH_TARGET_AVX2 void block_totals_avx2(scratch& s, std::uint32_t block, std::uint32_t node0, std::uint32_t count,
                                                    tile_summary_use summarized) const noexcept {
    block_totals_impl<4>(s, block, node0, count, summarized);
  }
#endif

  template <std::uint32_t L>
  [[gnu::always_inline]] void block_totals_impl(scratch& s, std::uint32_t block, std::uint32_t node0, std::uint32_t count,
                                                [[maybe_unused]] tile_summary_use summarized) const noexcept {
#if GPUSCHED_BATCH_SIMD
    if constexpr (fused<L>) {
      if (summarized == tile_summary_use::build) summarize_tile<L>(s.tiles.front(), node0, count);
      fused_totals<L>(s.cargs.data(), s.sargs.data(), block, node0, count, s.block_total.data(), stride, s.block_feasible.data(),
                      s.block_max.data(), summarized != tile_summary_use::none ? s.tiles.data() : nullptr);
      return;
    }
#endif
    bool any = false;
    for (std::uint32_t b = 0; b < block; ++b) {
      std::int32_t* mask = s.block_mask.data() + std::size_t{b} * stride;
      s.block_feasible[b] = tile_mask(s.cargs[b], node0, count, mask);
      any = any || s.block_feasible[b] > 0;
      if constexpr (any_scalar_scorer) {
        double* extra = s.block_extra.data() + std::size_t{b} * stride;
        for (std::uint32_t i = 0; i < count; ++i) extra[i] = 0.0;
        if (s.block_feasible[b] > 0) {
          [&]<std::size_t... I>(std::index_sequence<I...>) {
            ((lane_scorer<S> ? void() : tile_add_scalar<S>(std::get<I>(score_views_), std::get<I>(s.sargs[b]), weights_[I], node0, count, extra)), ...);
          }(std::index_sequence_for<S...>{});
        }
      }
    }
    std::uint32_t i = 0;
#if GPUSCHED_BATCH_SIMD
    using V = typename simd<L>::f64;
    using I32 = typename simd<L>::i32;
    I32 vbest[max_block];
    V wv[scorer_count > 0 ? scorer_count : 1];  // the weights, splatted once (not reloaded per step)
    for (std::size_t k = 0; k < scorer_count; ++k) wv[k] = V{} + static_cast<double>(weights_[k]);
    (void)wv;
    for (std::uint32_t b = 0; b < block; ++b) vbest[b] = I32{} - 1;
    if (any) {
      for (; i + L <= count; i += L) {
        for (std::uint32_t b = 0; b < block; ++b) {
          V acc{};
          if constexpr (any_scalar_scorer) acc = load_lanes(s.block_extra.data() + std::size_t{b} * stride + i, lanes_tag<L>{});
          const score_args& sa = s.sargs[b];
          [&]<std::size_t... I>(std::index_sequence<I...>) {
            ((acc += lane_scorer<S> ? wv[I] * lane_score<S, L>(std::get<I>(score_views_), std::get<I>(sa), node0 + i)
                                    : V{}),
             ...);
          }(std::index_sequence_for<S...>{});
          const I32 fits = load_lanes(s.block_mask.data() + std::size_t{b} * stride + i, lanes_tag<L>{});
          const I32 t = fits != 0 ? __builtin_convertvector(acc, I32) : I32{} - 1;
          store_lanes(s.block_total.data() + std::size_t{b} * stride + i, t);
          vbest[b] = vbest[b] > t ? vbest[b] : t;
        }
      }
    }
#endif
    for (std::uint32_t b = 0; b < block; ++b) {
      std::int32_t best = -1;
#if GPUSCHED_BATCH_SIMD
      for (std::uint32_t l = 0; l < L; ++l) best = std::max(best, vbest[b][l]);
#endif
      const std::int32_t* mask = s.block_mask.data() + std::size_t{b} * stride;
      const double* extra = s.block_extra.data() + std::size_t{b} * stride;
      std::int32_t* total = s.block_total.data() + std::size_t{b} * stride;
      const score_args& sa = s.sargs[b];
      for (std::uint32_t j = any ? i : 0; j < count; ++j) {
        double acc = any_scalar_scorer ? extra[j] : 0.0;
        [&]<std::size_t... I>(std::index_sequence<I...>) {
          ((acc += lane_scorer<S> ? weights_[I] * static_cast<double>(batch_plugin<S>::score(std::get<I>(score_views_), std::get<I>(sa), node0 + j))
                                  : 0.0),
           ...);
        }(std::index_sequence_for<S...>{});
        total[j] = mask[j] != 0 ? static_cast<std::int32_t>(acc) : -1;
        best = std::max(best, total[j]);
      }
      s.block_max[b] = best;
    }
  }

#if GPUSCHED_BATCH_SIMD
  template <class Sc>
  static constexpr bool lane_scorer = HasLaneScore<Sc, simd_double>;
#else
  template <class Sc>
  static constexpr bool lane_scorer = false;
#endif
  static constexpr bool any_scalar_scorer = ((!lane_scorer<S>) || ... || false);

#if GPUSCHED_BATCH_SIMD
  // Profiles whose checks and scorers all have lane forms filter and score in one pass.
  template <std::uint32_t L>
  static constexpr bool fused = L > 1 && !any_scalar_scorer && (HasFitsLanes<K, L> && ... && true);

  // Pods ca[0..block) / sa[0..block) against nodes [node0, node0 + count): for each L nodes, every
  // pod's checks (lane forms, combined into a mask in registers) and scores, so that the nodes'
  // data is read once from memory for the whole block and no mask buffer is written or read.
  // total[b * total_stride + i] = pod b's weighted total of node node0 + i, or -1 where it does not
  // fit; feasible[b] and best[b] its count of fitting nodes and highest total (-1: none).
  // With `tiles` (the checks' summaries of this tile), the checks that keep one read it.
  template <std::uint32_t L>
  [[gnu::always_inline]] void fused_totals(const check_args* ca, const score_args* sa, std::uint32_t block, std::uint32_t node0,
                                           std::uint32_t count, std::int32_t* total, std::size_t total_stride,
                                           std::uint32_t* feasible, std::int32_t* best,
                                           const tile_summaries* tiles = nullptr) const noexcept {
    using V = typename simd<L>::f64;
    using I32 = typename simd<L>::i32;
    I32 vbest[max_block], vfeas[max_block];
    V wv[scorer_count > 0 ? scorer_count : 1];  // the weights, splatted once (not reloaded per step)
    for (std::size_t k = 0; k < scorer_count; ++k) wv[k] = V{} + static_cast<double>(weights_[k]);
    (void)wv;
    tile_pod_args targs[max_block];  // each pod against the tile's summaries, once per tile
    for (std::uint32_t b = 0; b < block; ++b) {
      vbest[b] = I32{} - 1;
      vfeas[b] = I32{};
      if (tiles != nullptr) targs[b] = make_tile_pod_args(ca[b], *tiles);
    }
    std::uint32_t i = 0;
    for (; i + L <= count; i += L) {
      const std::uint32_t n = node0 + i;
      for (std::uint32_t b = 0; b < block; ++b) {
        I32 fits = I32{} - 1;
        [&]<std::size_t... I>(std::index_sequence<I...>) {
          ((fits &= check_lanes<K, L, I>(std::get<I>(check_views_), std::get<I>(ca[b]), n, targs[b], i)), ...);
        }(std::index_sequence_for<K...>{});
        // The weighted scores summed from the first (not added to 0: an addition saved per step;
        // the terms are integers, so the sum is the same). The lambda assigns rather than returns
        // the vector: where it is not inlined (-O0) it is compiled without the kernel's target, and
        // a 4- or 8-lane vector returned across that boundary changes ABI (GCC's -Wpsabi).
        V acc;
        [&]<std::size_t... I>(std::index_sequence<I...>) {
          if constexpr (sizeof...(I) == 0) {
            acc = V{};
          } else {
            acc = (... + weighted_lane_score<S, L>(std::get<I>(score_views_), std::get<I>(sa[b]), n, wv[I]));
          }
        }(std::index_sequence_for<S...>{});
        const I32 t = fits != 0 ? __builtin_convertvector(acc, I32) : I32{} - 1;
        store_lanes(total + b * total_stride + i, t);
        vbest[b] = vbest[b] > t ? vbest[b] : t;
        vfeas[b] -= fits;
      }
    }
    for (std::uint32_t b = 0; b < block; ++b) {
      std::int32_t m = -1, f = 0;
      for (std::uint32_t l = 0; l < L; ++l) {
        m = std::max(m, vbest[b][l]);
        f += vfeas[b][l];
      }
      std::int32_t* row = total + b * total_stride;
      for (std::uint32_t j = i; j < count; ++j) {
        const bool fit = pair_fits(ca[b], node0 + j);
        double acc = 0.0;
        [&]<std::size_t... I>(std::index_sequence<I...>) {
          ((acc += weights_[I] * static_cast<double>(batch_plugin<S>::score(std::get<I>(score_views_), std::get<I>(sa[b]), node0 + j))), ...);
        }(std::index_sequence_for<S...>{});
        row[j] = fit ? static_cast<std::int32_t>(acc) : -1;
        m = std::max(m, row[j]);
        f += fit ? 1 : 0;
      }
      feasible[b] = static_cast<std::uint32_t>(f);
      best[b] = m;
    }
  }
#endif

#if GPUSCHED_BATCH_SIMD
  template <class Kc, std::uint32_t L, std::size_t I>
  GPUSCHED_BATCH_INLINE static typename simd<L>::i32 check_lanes(const typename batch_plugin<Kc>::node_view& v,
                                                                  const typename batch_plugin<Kc>::pod_args& a, std::uint32_t n,
                                                                  [[maybe_unused]] const tile_pod_args& ta,
                                                                  [[maybe_unused]] std::uint32_t i) noexcept {
    if constexpr (HasTileSummary<Kc>) {
      return batch_plugin<Kc>::template fits_lanes<L>(v, a, n, std::get<I>(ta), i);
    } else {
      return batch_plugin<Kc>::template fits_lanes<L>(v, a, n);
    }
  }
  static tile_pod_args make_tile_pod_args(const check_args& ca, const tile_summaries& t) noexcept {
    tile_pod_args r{};
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (set_tile_pod_args<K>(std::get<I>(r), std::get<I>(ca), std::get<I>(t)), ...);
    }(std::index_sequence_for<K...>{});
    return r;
  }
  template <class Kc, class Args, class Pod, class Summary>
  static void set_tile_pod_args([[maybe_unused]] Args& out, [[maybe_unused]] const Pod& a, [[maybe_unused]] const Summary& t) noexcept {
    if constexpr (HasTileSummary<Kc>) out = batch_plugin<Kc>::tile_args(a, t);
  }
#endif

  // Whether score_block builds the checks' tile summaries: a check keeps one and the fused kernel runs.
  [[nodiscard]] bool summaries_used() const noexcept {
#if GPUSCHED_BATCH_SIMD
    return any_tile_summary && fused<2> && lanes_ > 1;
#else
    return false;
#endif
  }
#if GPUSCHED_BATCH_SIMD
  // The checks' summaries of nodes [node0, node0 + count), inside the kernel of width L.
  template <std::uint32_t L>
  [[gnu::always_inline]] void summarize_tile(tile_summaries& t, std::uint32_t node0, std::uint32_t count) const noexcept {
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (batch_plugin_summarize<K, L>(std::get<I>(check_views_), node0, count, std::get<I>(t)), ...);
    }(std::index_sequence_for<K...>{});
  }
  template <class Kc, std::uint32_t L, class T>
  [[gnu::always_inline]] static void batch_plugin_summarize([[maybe_unused]] const typename batch_plugin<Kc>::node_view& v,
                                                            [[maybe_unused]] std::uint32_t node0,
                                                            [[maybe_unused]] std::uint32_t count,
                                                            [[maybe_unused]] T& t) noexcept {
    if constexpr (HasTileSummary<Kc>) batch_plugin<Kc>::template summarize_tile<L>(v, node0, count, t);
  }
#endif

  // One pod against one tile: s.total[i] = the weighted total of node node0 + i, or -1 where it
  // does not fit; returns how many fit and sets tile_max. All scorers are summed in one pass over
  // the tile (simd_lanes nodes at a time where a scorer has a lane form), in doubles holding
  // integers, and converted to int32 once.
  std::uint32_t tile_totals(const check_args& ca, const score_args& sa, std::uint32_t node0, std::uint32_t count, scratch& s,
                            std::int32_t& tile_max) const noexcept {
#if GPUSCHED_BATCH_SIMD
    if (lanes_ == 8) return tile_totals_avx512(ca, sa, node0, count, s, tile_max);
    if (lanes_ == 4) return tile_totals_avx2(ca, sa, node0, count, s, tile_max);
    return tile_totals_impl<2>(ca, sa, node0, count, s, tile_max);
#else
    return tile_totals_impl<1>(ca, sa, node0, count, s, tile_max);
#endif
  }
#if GPUSCHED_BATCH_SIMD
  GPUSCHED_BATCH_TARGET_AVX512 std::uint32_t tile_totals_avx512(const check_args& ca, const score_args& sa, std::uint32_t node0,
                                                                std::uint32_t count, scratch& s, std::int32_t& tile_max) const noexcept {
    return tile_totals_impl<8>(ca, sa, node0, count, s, tile_max);
  }
  GPUSCHED_BATCH_TARGET_AVX2 std::uint32_t tile_totals_avx2(const check_args& ca, const score_args& sa, std::uint32_t node0,
                                                            std::uint32_t count, scratch& s, std::int32_t& tile_max) const noexcept {
    return tile_totals_impl<4>(ca, sa, node0, count, s, tile_max);
  }
#endif

  template <std::uint32_t L>
  [[gnu::always_inline]] std::uint32_t tile_totals_impl(const check_args& ca, const score_args& sa, std::uint32_t node0, std::uint32_t count,
                                                        scratch& s, std::int32_t& tile_max) const noexcept {
#if GPUSCHED_BATCH_SIMD
    if constexpr (fused<L>) {
      std::uint32_t feasible = 0;
      fused_totals<L>(&ca, &sa, 1, node0, count, s.total.data(), 0, &feasible, &tile_max);
      return feasible;
    }
#endif
    std::int32_t* __restrict mask = s.mask.data();
    std::int32_t* __restrict total = s.total.data();
    const std::uint32_t feasible = tile_mask(ca, node0, count, mask);
    if (feasible == 0) {
      for (std::uint32_t i = 0; i < count; ++i) total[i] = -1;
      tile_max = -1;
      return 0;
    }
    double* __restrict extra = s.extra.data();
    if constexpr (any_scalar_scorer) {
      for (std::uint32_t i = 0; i < count; ++i) extra[i] = 0.0;
      [&]<std::size_t... I>(std::index_sequence<I...>) {
        ((lane_scorer<S> ? void() : tile_add_scalar<S>(std::get<I>(score_views_), std::get<I>(sa), weights_[I], node0, count, extra)), ...);
      }(std::index_sequence_for<S...>{});
    }
    std::uint32_t i = 0;
    std::int32_t best = -1;
#if GPUSCHED_BATCH_SIMD
    using V = typename simd<L>::f64;
    using I32 = typename simd<L>::i32;
    I32 vbest = I32{} - 1;
    V wv[scorer_count > 0 ? scorer_count : 1];  // the weights, splatted once (not reloaded per step)
    for (std::size_t k = 0; k < scorer_count; ++k) wv[k] = V{} + static_cast<double>(weights_[k]);
    (void)wv;
    for (; i + L <= count; i += L) {
      V acc{};
      if constexpr (any_scalar_scorer) acc = load_lanes(extra + i, lanes_tag<L>{});
      [&]<std::size_t... I>(std::index_sequence<I...>) {
        ((acc += lane_scorer<S> ? wv[I] * lane_score<S, L>(std::get<I>(score_views_), std::get<I>(sa), node0 + i)
                                : V{}),
         ...);
      }(std::index_sequence_for<S...>{});
      const I32 fits = load_lanes(mask + i, lanes_tag<L>{});
      const I32 t = fits != 0 ? __builtin_convertvector(acc, I32) : I32{} - 1;
      store_lanes(total + i, t);
      vbest = vbest > t ? vbest : t;
    }
    for (std::uint32_t l = 0; l < L; ++l) best = std::max(best, vbest[l]);
#endif
    for (; i < count; ++i) {
      double acc = any_scalar_scorer ? extra[i] : 0.0;
      [&]<std::size_t... I>(std::index_sequence<I...>) {
        ((acc += lane_scorer<S> ? weights_[I] * static_cast<double>(batch_plugin<S>::score(std::get<I>(score_views_), std::get<I>(sa), node0 + i))
                                : 0.0),
         ...);
      }(std::index_sequence_for<S...>{});
      total[i] = mask[i] != 0 ? static_cast<std::int32_t>(acc) : -1;
      best = std::max(best, total[i]);
    }
    tile_max = best;
    return feasible;
  }

#if GPUSCHED_BATCH_SIMD
  // w * the lane score; a plugin with a weighted_score_as folds the weight in itself (exactly, on
  // integers) where that saves the kernel a multiplication per pod and step.
  template <class Sc, std::uint32_t L>
  GPUSCHED_BATCH_INLINE static typename simd<L>::f64 weighted_lane_score(const typename batch_plugin<Sc>::node_view& v,
                                                                          const typename batch_plugin<Sc>::pod_args& a, std::uint32_t n,
                                                                          typename simd<L>::f64 w) noexcept {
    using V = typename simd<L>::f64;
    if constexpr (requires { batch_plugin<Sc>::template weighted_score_as<V>(v, a, n, w); }) {
      return batch_plugin<Sc>::template weighted_score_as<V>(v, a, n, w);
    } else {
      return w * lane_score<Sc, L>(v, a, n);
    }
  }
  template <class Sc, std::uint32_t L>
  GPUSCHED_BATCH_INLINE static typename simd<L>::f64 lane_score(const typename batch_plugin<Sc>::node_view& v, const typename batch_plugin<Sc>::pod_args& a,
                                          std::uint32_t n) noexcept {
    if constexpr (HasLaneScore<Sc, typename simd<L>::f64>) {
      return batch_plugin<Sc>::template score_as<typename simd<L>::f64>(v, a, n);
    } else {
      return typename simd<L>::f64{};
    }
  }
#endif

  template <class Sc>
  static void tile_add_scalar(const typename batch_plugin<Sc>::node_view& v, const typename batch_plugin<Sc>::pod_args& a,
                              std::int32_t w, std::uint32_t first, std::uint32_t count, double* __restrict out) noexcept {
    if constexpr (HasScoreTile<Sc>) {
      batch_plugin<Sc>::score_tile(v, a, w, first, count, out);
    } else {
      for (std::uint32_t i = 0; i < count; ++i) out[i] += w * static_cast<double>(batch_plugin<Sc>::score(v, a, first + i));
    }
  }

  // Profiles with a normalising scorer: a first pass gives the feasible nodes and each normalising
  // scorer's highest score over them; the second adds the normalised scores.
  template <class Sink>
  void score_normalized(const check_args& ca, const score_args& sa, scratch& s, std::size_t pod, Sink& sink) const {
    const auto n = static_cast<std::uint32_t>(size_);
    std::int32_t max_raw[scorer_count > 0 ? scorer_count : 1] = {};
    std::uint32_t feasible_all = 0;
    for (std::uint32_t node0 = 0; node0 < n; node0 += opts_.node_tile) {
      const std::uint32_t count = std::min(opts_.node_tile, n - node0);
      std::int32_t* mask = s.row_mask.data() + node0;
      feasible_all += tile_mask(ca, node0, count, mask);
      [&]<std::size_t... I>(std::index_sequence<I...>) {
        ((batch_plugin<S>::normalize != normalization::none
              ? (tile_raw<S>(std::get<I>(score_views_), std::get<I>(sa), node0, count, s.raw.data() + I * size_ + node0),
                 update_max(max_raw[I], s.raw.data() + I * size_ + node0, mask, count), 0)
              : 0),
         ...);
      }(std::index_sequence_for<S...>{});
    }
    (void)feasible_all;
    for (std::uint32_t node0 = 0; node0 < n; node0 += opts_.node_tile) {
      const std::uint32_t count = std::min(opts_.node_tile, n - node0);
      const std::int32_t* mask = s.row_mask.data() + node0;
      std::int32_t* total = s.total.data();
      std::uint32_t feasible = 0;
      for (std::uint32_t i = 0; i < count; ++i) {
        total[i] = 0;
        feasible += static_cast<std::uint32_t>(mask[i]);
      }
      [&]<std::size_t... I>(std::index_sequence<I...>) {
        ((batch_plugin<S>::normalize != normalization::none
              ? add_normalized(batch_plugin<S>::normalize, weights_[I], max_raw[I], s.raw.data() + I * size_ + node0, count, total)
              : tile_add<S>(std::get<I>(score_views_), std::get<I>(sa), weights_[I], node0, count, total)),
         ...);
      }(std::index_sequence_for<S...>{});
      std::int32_t tile_max = -1;
      for (std::uint32_t i = 0; i < count; ++i) {
        total[i] = mask[i] != 0 ? total[i] : -1;
        tile_max = std::max(tile_max, total[i]);
      }
      sink(pod, node0, count, total, feasible, tile_max);
    }
  }

  static void update_max(std::int32_t& m, const std::int32_t* raw, const std::int32_t* mask, std::uint32_t count) noexcept {
    std::int32_t best = m;
    for (std::uint32_t i = 0; i < count; ++i) best = std::max(best, mask[i] != 0 ? raw[i] : 0);
    m = best;
  }
  static void add_normalized(normalization form, std::int32_t w, std::int32_t max_raw, const std::int32_t* raw, std::uint32_t count,
                             std::int32_t* total) noexcept {
    const bool reverse = form == normalization::reverse;
    const double max_d = static_cast<double>(max_raw);
    const formula::reciprocal_division<double> div{max_raw == 0 ? 0.0 : 1.0 / max_d};
    for (std::uint32_t i = 0; i < count; ++i) {
      total[i] += w * static_cast<std::int32_t>(formula::default_normalized(static_cast<double>(raw[i]), max_d,
                                                                           static_cast<double>(max_node_score), reverse, div));
    }
  }

  // Folds a tile of totals into a pod's best-first list.
  void merge_tile(candidate* list, std::uint32_t k, std::uint32_t& size, const std::int32_t* total, std::uint32_t node0,
                  std::uint32_t count, std::int32_t tile_max, std::uint64_t pod_key) const noexcept {
    if (tile_max < 0 || tile_max < list_floor(list, k, size)) return;
    // For k = 1 only the tile's highest total can be the best: nodes below it are not hashed.
    const std::int32_t at_least = k == 1 ? tile_max : 0;
#if GPUSCHED_BATCH_SIMD && (defined(__x86_64__) || defined(__i386__))
    if (lanes_ >= 4) {  // the candidates marked eight totals at a time (AVX2), then only those read
      std::uint64_t bits[(max_tile + 63) / 64];
      const std::uint32_t words = at_least_bits_avx2(total, count, list_floor(list, k, size, at_least), bits);
      merge_marked(list, k, size, total, node0, bits, words, opts_.seed, pod_key, at_least);
      return;
    }
#endif
    merge_candidates(list, k, size, total, node0, count, opts_.seed, pod_key, at_least);
  }

  // The run-time SIMD width (runtime_simd_lanes: the CPU's widest, capped by GPUSCHED_SIMD),
  // capped at max_lanes (0: no cap).
  static std::uint32_t pick_lanes(std::uint32_t max_lanes) {
#if GPUSCHED_BATCH_SIMD
    const std::uint32_t widest = runtime_simd_lanes();
    const std::uint32_t l = max_lanes == 0 ? widest : std::min(max_lanes, widest);
    return l >= 8 ? 8 : l >= 4 ? 4 : 2;
#else
    (void)max_lanes;
    return 1;
#endif
  }

  profile_type profile_;
  batch_options opts_;
  std::uint32_t lanes_ = 1;
  std::unique_ptr<thread_pool> pool_;
  std::array<std::int32_t, scorer_count == 0 ? 1 : scorer_count> weights_{};
  std::tuple<typename batch_plugin<K>::prepared...> check_prep_;
  std::tuple<typename batch_plugin<S>::prepared...> score_prep_;
  check_views check_views_{};
  score_views score_views_{};
  const node_table* table_ = nullptr;
  std::uint32_t revision_ = 0;
  std::size_t size_ = 0;
  mutable std::vector<scratch> scratch_;
};

template <class Profile>
batch_scorer<Profile> make_batch_scorer(Profile profile, batch_options opts = {}) {
  return batch_scorer<Profile>(std::move(profile), opts);
}

}  // inline namespace GPUSCHED_BATCH_ABI

}  // namespace gpusched::batch
