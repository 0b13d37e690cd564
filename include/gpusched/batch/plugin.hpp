// What makes a plugin batchable: a specialisation of gpusched::batch::batch_plugin<P>.
//
// The batch engines (CPU: batch_scorer.hpp; CUDA: gpusched/cuda/) evaluate a profile for many pods
// against many nodes. They never call P::check / P::score; they call, per (pod, node) pair, a
// GPUSCHED_HD function of the specialisation that calls the same formula functions as the plugin
// (gpusched/scoring/formulas.hpp, gpusched/preflight/), over values prepared once per node and once
// per pod. For a plugin P, batch_plugin<P> provides:
//
//   using node_view = ...;   trivially copyable: pointers to per-node arrays plus scalars
//   using pod_args  = ...;   trivially copyable: what the plugin needs of one pod
//   class prepared {         the per-node arrays, owned on the host
//     void build(const P&, const node_table&);                    every node
//     void update(const P&, const node_table&, node_index n);      node n changed
//     static constexpr std::size_t column_count;
//     std::array<column_ref, column_count> columns() const;       the arrays a view points into
//     node_view view_with(const std::array<const void*, column_count>&) const;  over copies (device)
//     node_view view() const;                                      over the host arrays
//   };
//   static pod_args make_pod_args(const P&, const prepared&, const pod_table&, std::size_t pod);
//   checks:  GPUSCHED_HD static bool fits(const node_view&, const pod_args&, std::uint32_t node);
//   scorers: GPUSCHED_HD static std::int32_t score(const node_view&, const pod_args&, std::uint32_t node);
//            static constexpr normalization normalize;   Kubernetes' NormalizeScore, if any
//   optional CPU fast paths over a tile of nodes [first, first + count):
//            static void fits_tile(const node_view&, const pod_args&, std::uint32_t first,
//                                  std::uint32_t count, std::int32_t* mask);   mask[i] &= fits
//            template <std::uint32_t L> static simd<L>::i32 fits_lanes(const node_view&, const pod_args&,
//                                  std::uint32_t n);   L nodes from n: -1 where fits, else 0
//            struct tile_summary; template <std::uint32_t L> static void summarize_tile(const node_view&, std::uint32_t first,
//                                  std::uint32_t count, tile_summary&);   node-side values the fused kernel
//                                  computes once per tile for a group of pods (per-thread scratch; SIMD builds)
//            struct tile_pod_args; static tile_pod_args tile_args(const pod_args&, const tile_summary&)
//                                  a pod against one tile, worked out once per tile (not per step)
//            template <std::uint32_t L> fits_lanes(view, args, n, const tile_pod_args&, std::uint32_t i)
//                                  the lane form reading them (i = n - first)
//            static void score_tile(const node_view&, const pod_args&, std::int64_t w, std::uint32_t first,
//                                  std::uint32_t count, double* out);   out[i] += w * score, for scorers
//                                  without a lane form (one call per tile instead of one per pair:
//                                  batch/configured.hpp's erased scorers)
//   optional, scorers: static constexpr bool fills_totals;   scores near the 32-bit totals' range
//                                  (FillAware's, about 10^9): configured profiles take it alone, weight 1
//
// The foundation plugins are specialised in batch/checks.hpp and batch/scorers.hpp, FGD in
// batch/fgd_plugin.hpp; a new plugin (a host's own) adds its specialisation next to it and
// becomes usable by both engines.
#pragma once

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "gpusched/batch/node_table.hpp"
#include "gpusched/batch/pod_table.hpp"
#include "gpusched/config.hpp"

namespace gpusched::batch {

// Which of Kubernetes' DefaultNormalizeScore forms a scorer's NormalizeScore is (none: the scorer
// has no NormalizeScore and its 0..100 score is used as is).
enum class normalization : std::uint8_t { none, forward, reverse };

// One per-node array a kernel reads: `per_node` values of `elem_bytes` for each of `nodes` nodes,
// stored slot-major (value s of node n at s * nodes + n).
struct column_ref {
  const void* data = nullptr;
  std::size_t elem_bytes = 0;
  std::size_t per_node = 1;
  std::size_t nodes = 0;
  [[nodiscard]] std::size_t bytes() const noexcept { return elem_bytes * per_node * nodes; }
};

template <class T>
column_ref column_of(const T* data, std::size_t nodes, std::size_t per_node = 1) noexcept {
  return column_ref{data, sizeof(T), per_node, nodes};
}

// The primary template is undefined: a plugin without a specialisation is not batchable.
template <class P>
struct batch_plugin;

template <class P>
concept BatchPlugin = requires(const P& plugin, const node_table& t, const pod_table& pods, node_index n) {
  typename batch_plugin<P>::node_view;
  typename batch_plugin<P>::pod_args;
  typename batch_plugin<P>::prepared;
  requires std::is_trivially_copyable_v<typename batch_plugin<P>::node_view>;
  requires std::is_trivially_copyable_v<typename batch_plugin<P>::pod_args>;
  requires requires(typename batch_plugin<P>::prepared& prep, const typename batch_plugin<P>::prepared& cprep) {
    prep.build(plugin, t);
    prep.update(plugin, t, n);
    { cprep.view() } -> std::same_as<typename batch_plugin<P>::node_view>;
    { cprep.columns() } -> std::same_as<std::array<column_ref, batch_plugin<P>::prepared::column_count>>;
    { batch_plugin<P>::make_pod_args(plugin, cprep, pods, std::size_t{0}) } -> std::same_as<typename batch_plugin<P>::pod_args>;
  };
};

template <class P>
concept BatchCheck = BatchPlugin<P> && requires(const typename batch_plugin<P>::node_view& v,
                                                const typename batch_plugin<P>::pod_args& a, std::uint32_t n) {
  { batch_plugin<P>::fits(v, a, n) } -> std::same_as<bool>;
};

template <class P>
concept BatchScorer = BatchPlugin<P> && requires(const typename batch_plugin<P>::node_view& v,
                                                 const typename batch_plugin<P>::pod_args& a, std::uint32_t n) {
  { batch_plugin<P>::score(v, a, n) } -> std::same_as<std::int32_t>;
  { batch_plugin<P>::normalize } -> std::convertible_to<normalization>;
};

// Scorers whose score is `static_cast<std::int32_t>(score_as<double>(v, a, n))` and whose
// score_as<T> also runs on T = simd_double (simd_lanes nodes from n): the CPU engine calls that.
template <class P, class T>
concept HasLaneScore = requires(const typename batch_plugin<P>::node_view& v, const typename batch_plugin<P>::pod_args& a,
                                std::uint32_t n) {
  { batch_plugin<P>::template score_as<T>(v, a, n) } -> std::same_as<T>;
};

template <class P>
concept HasFitsTile = requires(const typename batch_plugin<P>::node_view& v, const typename batch_plugin<P>::pod_args& a,
                               std::uint32_t n, std::int32_t* mask) { batch_plugin<P>::fits_tile(v, a, n, n, mask); };

// A tile form of a scorer without a lane form (CPU engine): out[i] += w * score of node first + i.
template <class P>
concept HasScoreTile = requires(const typename batch_plugin<P>::node_view& v, const typename batch_plugin<P>::pod_args& a,
                                std::uint32_t n, double* out) { batch_plugin<P>::score_tile(v, a, std::int64_t{1}, n, n, out); };

// A lane form of a check (CPU engine, batch/simd.hpp): with one for every check of a profile whose
// scorers all have lane forms, the engine filters and scores in one pass over the nodes.
template <class P, std::uint32_t L>
concept HasFitsLanes = requires(const typename batch_plugin<P>::node_view& v, const typename batch_plugin<P>::pod_args& a,
                                std::uint32_t n) { batch_plugin<P>::template fits_lanes<L>(v, a, n); };

// A per-tile summary beside a check's lane form (the CPU engine's fused kernel builds it once per
// tile when it scores a group of pods, makes each pod's tile_pod_args from it, and calls the
// five-argument fits_lanes with them).
template <class P>
concept HasTileSummary = requires(const typename batch_plugin<P>::node_view& v, typename batch_plugin<P>::tile_summary& t,
                                  const typename batch_plugin<P>::pod_args& a, std::uint32_t n) {
  batch_plugin<P>::template summarize_tile<2>(v, n, n, t);
  { batch_plugin<P>::tile_args(a, t) } -> std::same_as<typename batch_plugin<P>::tile_pod_args>;
};
// A check that declares a tile_summary but not the rest of the contract would silently lose the
// summary path; batch_scorer refuses it at compile time.
template <class P>
concept DeclaresTileSummary = requires { typename batch_plugin<P>::tile_summary; };

}  // namespace gpusched::batch
