// Batch forms of the foundation's preflight checks: GPUCheck, NodeResourcesFit, LoadAware filter.
// Each calls the same GPUSCHED_HD functions as the per-pod check (device_fits, gpu_request_fits,
// fits_under_ceiling / overcommit_ceiling, load_threshold_exceeded), so a pair fits in the batch
// engines exactly when check() returns reason::ok.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "gpusched/batch/plugin.hpp"
#include "gpusched/batch/simd.hpp"
#include "gpusched/config.hpp"
#include "gpusched/preflight/gpu_check.hpp"
#include "gpusched/preflight/load_threshold.hpp"
#include "gpusched/preflight/preflight.hpp"
#include "gpusched/preflight/resource_fit.hpp"

namespace gpusched::batch {

// Node tiles of the CPU engine hold at most this many nodes (stack buffers in fits_tile).
inline constexpr std::uint32_t max_tile = 1024;

template <>
struct batch_plugin<gpu_check> {
  struct node_view {
    const std::int32_t* milli_free;  // slot-major, stride nodes
    const std::int32_t* mem_free;
    const std::uint64_t* model_bit;
    std::uint32_t stride;
    std::int32_t slots;
  };
  struct pod_args {
    std::int32_t num_gpu;
    std::int32_t gpu_milli;
    std::int32_t gpu_mem;
    std::uint64_t allowed;  // GPU model bits the pod accepts
  };
  class prepared {
   public:
    static constexpr std::size_t column_count = 3;
    void build(const gpu_check&, const node_table& t) noexcept { t_ = &t; }
    void update(const gpu_check&, const node_table& t, node_index) noexcept { t_ = &t; }
    [[nodiscard]] std::array<column_ref, column_count> columns() const noexcept {
      const auto s = static_cast<std::size_t>(t_->gpu_slots());
      return {column_of(t_->milli_free().data(), t_->size(), s), column_of(t_->mem_free().data(), t_->size(), s),
              column_of(t_->model_bit().data(), t_->size(), s)};
    }
    [[nodiscard]] node_view view_with(const std::array<const void*, column_count>& d) const noexcept {
      return {static_cast<const std::int32_t*>(d[0]), static_cast<const std::int32_t*>(d[1]),
              static_cast<const std::uint64_t*>(d[2]), static_cast<std::uint32_t>(t_->size()), t_->gpu_slots()};
    }
    [[nodiscard]] node_view view() const noexcept {
      const auto c = columns();
      return view_with({c[0].data, c[1].data, c[2].data});
    }

   private:
    const node_table* t_ = nullptr;
  };

  static pod_args make_pod_args(const gpu_check&, const prepared&, const pod_table& pods, std::size_t i) noexcept {
    const auto k = static_cast<Eigen::Index>(i);
    return {pods.num_gpu()[k], pods.gpu_milli()[k], pods.gpu_mem_mib()[k], pods.allowed_gpu_models()[k]};
  }

  // gpu_check::check == reason::ok: at least num_gpu devices of an allowed model fit.
  GPUSCHED_HD static bool fits(const node_view& v, const pod_args& a, std::uint32_t n) noexcept {
    std::int32_t fitting = 0;
    for (std::int32_t g = 0; g < v.slots; ++g) {
      const std::size_t k = static_cast<std::size_t>(g) * v.stride + n;
      const bool allowed = (v.model_bit[k] & a.allowed) != 0;
      fitting += (allowed && device_fits(v.milli_free[k], v.mem_free[k], a.gpu_milli, a.gpu_mem)) ? 1 : 0;
    }
    return gpu_request_fits(a.num_gpu, fitting);
  }

  // The same test, slot by slot over a tile so that the loop over nodes vectorises. A pod that
  // accepts any model skips the model bits (padded slots have free share -1, which no request fits).
  static void fits_tile(const node_view& v, const pod_args& a, std::uint32_t first, std::uint32_t count,
                        std::int32_t* __restrict mask) noexcept {
    if (a.num_gpu == 0) return;
    std::int32_t fitting[max_tile];
    for (std::uint32_t i = 0; i < count; ++i) fitting[i] = 0;
    const std::int32_t want = a.gpu_milli, want_mem = a.gpu_mem;
    for (std::int32_t g = 0; g < v.slots; ++g) {
      const std::size_t base = static_cast<std::size_t>(g) * v.stride + first;
      const std::int32_t* __restrict milli = v.milli_free + base;
      const std::int32_t* __restrict mem = v.mem_free + base;
      if (a.allowed == ~std::uint64_t{0}) {
        for (std::uint32_t i = 0; i < count; ++i) fitting[i] += device_fits(milli[i], mem[i], want, want_mem) ? 1 : 0;
      } else {
        const std::uint64_t* __restrict model = v.model_bit + base;
        const std::uint64_t allowed = a.allowed;
        for (std::uint32_t i = 0; i < count; ++i) {
          fitting[i] += static_cast<std::int32_t>((model[i] & allowed) != 0) & (device_fits(milli[i], mem[i], want, want_mem) ? 1 : 0);
        }
      }
    }
    for (std::uint32_t i = 0; i < count; ++i) mask[i] &= gpu_request_fits(a.num_gpu, fitting[i]) ? 1 : 0;
  }

#if GPUSCHED_BATCH_SIMD
  // The same test on L nodes from n at once, -1 in the lanes of the nodes that fit, 0 elsewhere:
  // device_fits' two comparisons and gpu_request_fits on int32 lanes, the devices counted in
  // registers (the CPU engine's fused kernel calls it once per pod and L nodes). Written with
  // int32 `>` and 64-bit sign bits read through high_words only: GCC lowers this generic-vector
  // code for the baseline target before it is inlined into the AVX2 / AVX-512 kernels, and would
  // split a 64-bit comparison (none before SSE4.2) into scalar code.
  template <std::uint32_t L>
  GPUSCHED_BATCH_INLINE static typename simd<L>::i32 fits_lanes(const node_view& v, const pod_args& a, std::uint32_t n) noexcept {
    using I32 = typename simd<L>::i32;
    if (a.num_gpu == 0) return I32{} - 1;
    const I32 want = I32{} + a.gpu_milli, want_mem = I32{} + a.gpu_mem;
    I32 unfit{};  // minus the number of devices on which the request does not fit
    if (a.allowed == ~std::uint64_t{0}) {
#pragma GCC unroll 8
      for (std::int32_t g = 0; g < v.slots; ++g) {
        const std::size_t k = static_cast<std::size_t>(g) * v.stride + n;
        unfit += (want > load_lanes(v.milli_free + k, lanes_tag<L>{})) | (want_mem > load_lanes(v.mem_free + k, lanes_tag<L>{}));
      }
    } else {
      using U64 = typename simd<L>::u64;
      const U64 allowed = U64{} + a.allowed;
      for (std::int32_t g = 0; g < v.slots; ++g) {
        const std::size_t k = static_cast<std::size_t>(g) * v.stride + n;
        const U64 bits = load_lanes(v.model_bit + k, lanes_tag<L>{}) & allowed;
        const I32 model_bad = ~(high_words<L>(bits | (U64{} - bits)) >> 31);  // -1 where no allowed bit (no sign bit)
        unfit += model_bad | (want > load_lanes(v.milli_free + k, lanes_tag<L>{})) | (want_mem > load_lanes(v.mem_free + k, lanes_tag<L>{}));
      }
    }
    // gpu_request_fits: slots + unfit devices fit, at least num_gpu of them.
    return unfit > I32{} + (a.num_gpu - v.slots - 1);
  }
#endif

#if GPUSCHED_BATCH_SIMD
  // The devices of a tile's nodes in four numbers each (as gpu_check's summary, core/gpu_summary.hpp,
  // plus the least free memory of a wholly free device), and two minima over them: built by the
  // CPU engine's fused kernel once per tile for a group of pods, in its per-thread scratch (no
  // per-node memory). Index i: node first + i, for the nodes the lane form reads (the tile's full
  // vectors of L; the kernel checks the rest node by node).
  struct tile_summary {
    static constexpr std::int32_t none = std::numeric_limits<std::int32_t>::max();
    std::int32_t max_milli[max_tile + 16];      // the largest free share (-1: no device)
    std::int32_t min_mem[max_tile + 16];        // the least free memory of a device with a share >= 0 (none: no device)
    std::int32_t whole[max_tile + 16];          // devices with the whole share free
    std::int32_t whole_min_mem[max_tile + 16];  // the least free memory among those (none: no such device)
    std::int32_t tile_min_mem = none;           // min of min_mem over those nodes
    std::int32_t tile_whole_min_mem = none;     // min of whole_min_mem over those nodes
  };
  // Builds t for nodes [first, first + count), L at a time, the devices of each in registers.
  template <std::uint32_t L>
  GPUSCHED_BATCH_INLINE static void summarize_tile(const node_view& v, std::uint32_t first, std::uint32_t count, tile_summary& t) noexcept {
    using I32 = typename simd<L>::i32;
    const I32 none = I32{} + tile_summary::none;
    I32 tile_min = none, tile_whole_min = none;
    for (std::uint32_t i = 0; i + L <= count; i += L) {
      I32 max_milli = I32{} - 1, min_mem = none, whole{}, whole_min = none;
      for (std::int32_t g = 0; g < v.slots; ++g) {  // padded slots have free share -1: they count nowhere
        const std::size_t k = static_cast<std::size_t>(g) * v.stride + first + i;
        const I32 milli = load_lanes(v.milli_free + k, lanes_tag<L>{}), mem = load_lanes(v.mem_free + k, lanes_tag<L>{});
        max_milli = milli > max_milli ? milli : max_milli;
        const I32 dev_mem = milli > I32{} - 1 ? mem : none;
        min_mem = dev_mem < min_mem ? dev_mem : min_mem;
        const I32 is_whole = milli > I32{} + (gpu_milli_whole - 1);
        whole -= is_whole;
        const I32 whole_mem = is_whole ? mem : none;
        whole_min = whole_mem < whole_min ? whole_mem : whole_min;
      }
      store_lanes(t.max_milli + i, max_milli);
      store_lanes(t.min_mem + i, min_mem);
      store_lanes(t.whole + i, whole);
      store_lanes(t.whole_min_mem + i, whole_min);
      tile_min = min_mem < tile_min ? min_mem : tile_min;
      tile_whole_min = whole_min < tile_whole_min ? whole_min : tile_whole_min;
    }
    t.tile_min_mem = tile_summary::none;
    t.tile_whole_min_mem = tile_summary::none;
    for (std::uint32_t l = 0; l < L; ++l) {
      t.tile_min_mem = std::min(t.tile_min_mem, tile_min[l]);
      t.tile_whole_min_mem = std::min(t.tile_whole_min_mem, tile_whole_min[l]);
    }
  }

  // A pod against one tile, decided once per tile (tile_args) instead of at every step of the fused
  // kernel: the summary column that decides every node of the tile for this pod (the node fits where
  // column[i] >= at_least, i = n - first), or none (column nullptr: the device loop). Made at every
  // step, these tests were most of GPUCheck's cost in the 4-lane kernel (the whole check: 13% of
  // batch_cpu/1000; once per tile: 5% faster; docs/benchmarks.md, session 12).
  struct tile_pod_args {
    const std::int32_t* column = nullptr;
    std::int32_t at_least = 0;
  };
  // Where the summary pins down the device loop's count on every node of the tile:
  //   no GPU asked: every node fits (the count of wholly free devices is >= 0);
  //   the whole share, with memory at most that of every wholly free device in the tile: the
  //     fitting devices are the wholly free ones, so whole[i] >= num_gpu;
  //   one device's partial share, with memory at most that of every device in the tile: it fits
  //     where the largest free share covers it (that device has the memory), max_milli[i] >= share.
  // A pod restricted to some GPU models takes the loop (the summary does not know models).
  static tile_pod_args tile_args(const pod_args& a, const tile_summary& t) noexcept {
    if (a.num_gpu == 0) return {t.whole, 0};
    if (a.allowed == ~std::uint64_t{0} && a.gpu_milli >= 0) {
      if (a.gpu_milli == gpu_milli_whole) {
        if (a.gpu_mem <= t.tile_whole_min_mem) return {t.whole, a.num_gpu};
      } else if (a.num_gpu == 1 && a.gpu_mem <= t.tile_min_mem) {
        return {t.max_milli, a.gpu_milli};
      }
    }
    return {};
  }
  template <std::uint32_t L>
  GPUSCHED_BATCH_INLINE static typename simd<L>::i32 fits_lanes(const node_view& v, const pod_args& a, std::uint32_t n,
                                                                 const tile_pod_args& ta, std::uint32_t i) noexcept {
    using I32 = typename simd<L>::i32;
    if (ta.column != nullptr) return load_lanes(ta.column + i, lanes_tag<L>{}) > I32{} + (ta.at_least - 1);
    return fits_lanes<L>(v, a, n);
  }
#endif
};

template <>
struct batch_plugin<resource_fit> {
  struct node_view {
    const std::int64_t* cpu_allocated;
    const std::int64_t* cpu_ceiling;
    const std::int64_t* mem_allocated;
    const std::int64_t* mem_ceiling;
  };
  struct pod_args {
    std::int64_t cpu;
    std::int64_t mem;
  };
  class prepared {
   public:
    static constexpr std::size_t column_count = 4;
    void build(const resource_fit& f, const node_table& t) {
      t_ = &t;
      cpu_ceiling_.resize(static_cast<Eigen::Index>(t.size()));
      mem_ceiling_.resize(static_cast<Eigen::Index>(t.size()));
      for (std::size_t n = 0; n < t.size(); ++n) update(f, t, static_cast<node_index>(n));
    }
    void update(const resource_fit& f, const node_table& t, node_index n) noexcept {
      t_ = &t;
      cpu_ceiling_[n] = overcommit_ceiling(t.cpu_capacity()[n], f.cpu_ratio_permille);
      mem_ceiling_[n] = overcommit_ceiling(t.mem_capacity()[n], f.memory_ratio_permille);
    }
    [[nodiscard]] std::array<column_ref, column_count> columns() const noexcept {
      const std::size_t n = t_->size();
      return {column_of(t_->cpu_allocated().data(), n), column_of(cpu_ceiling_.data(), n),
              column_of(t_->mem_allocated().data(), n), column_of(mem_ceiling_.data(), n)};
    }
    [[nodiscard]] node_view view_with(const std::array<const void*, column_count>& d) const noexcept {
      return {static_cast<const std::int64_t*>(d[0]), static_cast<const std::int64_t*>(d[1]),
              static_cast<const std::int64_t*>(d[2]), static_cast<const std::int64_t*>(d[3])};
    }
    [[nodiscard]] node_view view() const noexcept {
      const auto c = columns();
      return view_with({c[0].data, c[1].data, c[2].data, c[3].data});
    }

   private:
    const node_table* t_ = nullptr;
    column<std::int64_t> cpu_ceiling_, mem_ceiling_;
  };

  static pod_args make_pod_args(const resource_fit&, const prepared&, const pod_table& pods, std::size_t i) noexcept {
    const auto k = static_cast<Eigen::Index>(i);
    return {pods.cpu_milli()[k], pods.memory_mib()[k]};
  }

  GPUSCHED_HD static bool fits(const node_view& v, const pod_args& a, std::uint32_t n) noexcept {
    return fits_under_ceiling(v.cpu_allocated[n], a.cpu, v.cpu_ceiling[n]) &&
           fits_under_ceiling(v.mem_allocated[n], a.mem, v.mem_ceiling[n]);
  }

  // The same test over a tile, without the short-circuit, so that the loop vectorises.
  static void fits_tile(const node_view& v, const pod_args& a, std::uint32_t first, std::uint32_t count,
                        std::int32_t* __restrict mask) noexcept {
    const std::int64_t* __restrict cpu = v.cpu_allocated + first;
    const std::int64_t* __restrict cpu_max = v.cpu_ceiling + first;
    const std::int64_t* __restrict mem = v.mem_allocated + first;
    const std::int64_t* __restrict mem_max = v.mem_ceiling + first;
    const std::int64_t want_cpu = a.cpu, want_mem = a.mem;
    for (std::uint32_t i = 0; i < count; ++i) {
      mask[i] &= static_cast<std::int32_t>(fits_under_ceiling(cpu[i], want_cpu, cpu_max[i])) &
                 static_cast<std::int32_t>(fits_under_ceiling(mem[i], want_mem, mem_max[i]));
    }
  }

#if GPUSCHED_BATCH_SIMD
  // The same test on L nodes from n, -1 in the lanes that fit: fits_under_ceiling as the sign of
  // (ceiling - allocated) - request on int64 lanes (its high word's sign, not a 64-bit comparison: see
  // gpu_check's fits_lanes; the values are within 0..2^40, node_table and pod_table check it).
  template <std::uint32_t L>
  GPUSCHED_BATCH_INLINE static typename simd<L>::i32 fits_lanes(const node_view& v, const pod_args& a, std::uint32_t n) noexcept {
    using U64 = typename simd<L>::u64;
    // (ceiling - allocated) - request: the node's part does not depend on the pod, so it is
    // invariant in the fused kernel's loop over a block's pods and the compiler hoists it (no
    // overflow within 2^40: the same value as ceiling - (allocated + request)).
    const auto cpu_room = (load_lanes(v.cpu_ceiling + n, lanes_tag<L>{}) - load_lanes(v.cpu_allocated + n, lanes_tag<L>{})) - a.cpu;
    const auto mem_room = (load_lanes(v.mem_ceiling + n, lanes_tag<L>{}) - load_lanes(v.mem_allocated + n, lanes_tag<L>{})) - a.mem;
    const U64 either = reinterpret_cast<const U64&>(cpu_room) | reinterpret_cast<const U64&>(mem_room);  // sign: does not fit
    return ~(high_words<L>(either) >> 31);
  }
#endif
};

template <>
struct batch_plugin<load_threshold> {
  struct node_view {
    const std::uint8_t* pass;  // the node's measured load is within every threshold (or unknown)
  };
  struct pod_args {
    std::uint8_t unused;
  };
  class prepared {
   public:
    static constexpr std::size_t column_count = 1;
    void build(const load_threshold& f, const node_table& t) {
      pass_.resize(static_cast<Eigen::Index>(t.size()));
      for (std::size_t n = 0; n < t.size(); ++n) update(f, t, static_cast<node_index>(n));
    }
    void update(const load_threshold& f, const node_table& t, node_index n) noexcept {
      const node_metrics* m = t.load(n);
      pass_[n] = (m == nullptr || load_threshold_exceeded(m->cpu_used, m->mem_used, m->gpu_used, f.cpu, f.memory, f.gpu) == 0) ? 1 : 0;
    }
    [[nodiscard]] std::array<column_ref, column_count> columns() const noexcept {
      return {column_of(pass_.data(), static_cast<std::size_t>(pass_.size()))};
    }
    [[nodiscard]] node_view view_with(const std::array<const void*, column_count>& d) const noexcept {
      return {static_cast<const std::uint8_t*>(d[0])};
    }
    [[nodiscard]] node_view view() const noexcept { return view_with({pass_.data()}); }

   private:
    column<std::uint8_t> pass_;
  };

  static pod_args make_pod_args(const load_threshold&, const prepared&, const pod_table&, std::size_t) noexcept { return {0}; }

  GPUSCHED_HD static bool fits(const node_view& v, const pod_args&, std::uint32_t n) noexcept { return v.pass[n] != 0; }
};

static_assert(BatchCheck<gpu_check> && BatchCheck<resource_fit> && BatchCheck<load_threshold>);
static_assert(HasFitsTile<gpu_check> && HasFitsTile<resource_fit>);

}  // namespace gpusched::batch
