// SIMD lanes for the CPU batch engine: GCC / Clang vector extensions of 2, 4 or 8 doubles, with
// number_traits for them so that the formula templates of scoring/formulas.hpp run on a vector of
// nodes at a time. The same formulas run on scalars in the per-pod plugins and the CUDA kernels.
//
// The width is chosen at run time (docs/adr/0007-runtime-simd-dispatch.md): every build has the
// kernels of all three widths — 2 lanes compiled for the build's target, 4 lanes in functions
// compiled for AVX2 and 8 lanes in functions compiled for AVX-512 (GPUSCHED_BATCH_TARGET_AVX2 /
// _AVX512 below, with `flatten` so that the formula templates are inlined into them and compiled
// for that target) — and batch_scorer calls the widest the CPU supports (runtime_simd_lanes()).
// GPUSCHED_SIMD=baseline|avx2|avx512 in the environment, or batch_options::max_lanes, caps the
// width, so that every path can be tested and measured on one machine.
//
// simd_lanes is the compile target's own width (2 on the x86-64 baseline, 4 with AVX, 8 with
// AVX-512); only the normalising scorers' paths (tile_add / tile_raw) still use it.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "gpusched/config.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/scoring/formulas.hpp"

// Forces inlining of the lane functions into the engine's loops on the host; nvcc's GPUSCHED_HD
// already inlines.
#if defined(__GNUC__) && !defined(__CUDACC__)
#define GPUSCHED_BATCH_INLINE [[gnu::always_inline]]
#else
#define GPUSCHED_BATCH_INLINE
#endif

namespace gpusched::batch {

// Loads of the per-node arrays a batch kernel reads: one node (scalar T) or the lanes of a
// vector T from node n.
template <class T>
struct lane_io {
  GPUSCHED_HD static double load(const double* p, std::uint32_t n) noexcept { return p[n]; }
  GPUSCHED_HD static std::uint64_t load(const std::uint64_t* p, std::uint32_t n) noexcept { return p[n]; }
};

}  // namespace gpusched::batch

#if defined(__GNUC__) && !defined(__CUDACC__)
#define GPUSCHED_BATCH_SIMD 1

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace gpusched::batch {

// Translation units compiled with different SIMD settings must not share inline code that differs
// (an AVX copy could be linked into a baseline caller); the settings name an inline namespace for
// the code that depends on them. Still, as with Eigen, compile all translation units that use the
// batch engine alike.
#if defined(__AVX512F__)
#define GPUSCHED_BATCH_ABI simd8
#elif defined(__AVX__)
#define GPUSCHED_BATCH_ABI simd4
#elif defined(__SSE4_1__)
#define GPUSCHED_BATCH_ABI simd2_sse41
#else
#define GPUSCHED_BATCH_ABI simd2
#endif

#if defined(__AVX512F__)
inline constexpr std::uint32_t simd_lanes = 8;
#elif defined(__AVX__)
inline constexpr std::uint32_t simd_lanes = 4;
#else
inline constexpr std::uint32_t simd_lanes = 2;
#endif

// Runtime dispatch (docs/adr/0007-runtime-simd-dispatch.md). The wide kernels are member functions
// marked GPUSCHED_BATCH_TARGET_AVX2 / _AVX512: compiled for that instruction set whatever the
// build's flags, with everything they call inlined (`flatten`), and with floating-point
// contraction off, so that AVX-512's FMA cannot round differently from the other paths.
// Generic-vector templates of 4 and 8 lanes take and return vectors by value, so GCC warns
// (-Wpsabi, partly without a source location, so no pragma can silence it) that their out-of-line
// ABI would depend on the target; they are only ever inlined into the kernels (no out-of-line copy
// is emitted). The gpusched CMake target adds -Wno-psabi for GCC; other builds add it themselves.
#if defined(__x86_64__) || defined(__i386__)
#if defined(__clang__)
// Clang cannot switch contraction off per function, and AVX-512 implies FMA: Clang builds stop at
// the AVX2 kernel.
#define GPUSCHED_BATCH_TARGET_AVX2 __attribute__((target("avx2"), flatten))
#define GPUSCHED_BATCH_TARGET_AVX512 __attribute__((target("avx2"), flatten))
#define GPUSCHED_BATCH_MAX_RUNTIME_LANES 4
#else
#define GPUSCHED_BATCH_TARGET_AVX2 __attribute__((target("avx2"), flatten, optimize("fp-contract=off")))
#define GPUSCHED_BATCH_TARGET_AVX512 \
  __attribute__((target("avx512f,avx512dq,avx512vl,avx512bw"), flatten, optimize("fp-contract=off")))
#define GPUSCHED_BATCH_MAX_RUNTIME_LANES 8
#endif
#else
#define GPUSCHED_BATCH_TARGET_AVX2
#define GPUSCHED_BATCH_TARGET_AVX512
#define GPUSCHED_BATCH_MAX_RUNTIME_LANES 2
#endif

// The widest kernel the CPU and its operating system support: 8 lanes with AVX-512 (F, DQ, VL,
// BW), 4 with AVX2, else 2 (GCC's and Clang's __builtin_cpu_supports check the OS's XSAVE state).
inline std::uint32_t cpu_simd_lanes() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (GPUSCHED_BATCH_MAX_RUNTIME_LANES >= 8 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw")) {
    return 8;
  }
  if (__builtin_cpu_supports("avx2")) return 4;
#endif
  return 2;
}

// The width cap a GPUSCHED_SIMD value names: "baseline" 2, "avx2" 4, "avx512" 8; empty or absent:
// none (0). Anything else is an error naming the variable.
inline std::uint32_t simd_lanes_cap(std::string_view v) {
  if (v.empty()) return 0;
  if (v == "baseline") return 2;
  if (v == "avx2") return 4;
  if (v == "avx512") return 8;
  throw invalid_argument_error("GPUSCHED_SIMD", "must be baseline, avx2 or avx512 (got \"" + std::string(v) + "\")");
}

// The width the batch engine uses by default: the CPU's widest, capped by GPUSCHED_SIMD (read
// once per process). A cap above what the CPU has gives the CPU's widest.
inline std::uint32_t runtime_simd_lanes() {
  static const std::uint32_t lanes = [] {
    const char* env = std::getenv("GPUSCHED_SIMD");
    const std::uint32_t cap = simd_lanes_cap(env == nullptr ? std::string_view{} : std::string_view(env));
    const std::uint32_t cpu = cpu_simd_lanes();
    return cap == 0 || cap > cpu ? cpu : cap;
  }();
  return lanes;
}

// Vectors of L lanes, and their element-aligned forms for unaligned loads and stores (GCC and
// Clang give a vector type its element's alias set, so a store of int32 lanes is known not to
// touch doubles or pointers and loop-invariant loads stay hoisted; memcpy would alias everything).
template <std::uint32_t L>
struct simd;
#define GPUSCHED_BATCH_SIMD_TYPES(L)                                                                   \
  template <>                                                                                          \
  struct simd<L> {                                                                                     \
    using f64 = double __attribute__((vector_size(8 * (L))));                                          \
    using u64 = std::uint64_t __attribute__((vector_size(8 * (L))));                                   \
    using i64 = std::int64_t __attribute__((vector_size(8 * (L))));                                    \
    using i32 = std::int32_t __attribute__((vector_size(4 * (L))));                                    \
    using i32_words = std::int32_t __attribute__((vector_size(8 * (L)))); /* a u64's 32-bit words */     \
    /* typedef, not using: Clang ignores aligned() in an alias-declaration's type (alignof stays the  \
       vector's size, so it loads with vmovapd and faults on an element-aligned address at -O0). */   \
    typedef double f64_u __attribute__((vector_size(8 * (L)), aligned(alignof(double))));              \
    typedef std::uint64_t u64_u __attribute__((vector_size(8 * (L)), aligned(alignof(std::uint64_t)))); \
    typedef std::int64_t i64_u __attribute__((vector_size(8 * (L)), aligned(alignof(std::int64_t))));   \
    typedef std::int32_t i32_u __attribute__((vector_size(4 * (L)), aligned(alignof(std::int32_t))));   \
  };
GPUSCHED_BATCH_SIMD_TYPES(2)
GPUSCHED_BATCH_SIMD_TYPES(4)
GPUSCHED_BATCH_SIMD_TYPES(8)
#undef GPUSCHED_BATCH_SIMD_TYPES
static_assert(alignof(simd<4>::f64_u) == alignof(double) && alignof(simd<8>::i32_u) == alignof(std::int32_t),
              "the _u vector types must be element-aligned: their loads and stores are unaligned");

using simd_double = simd<simd_lanes>::f64;
using simd_uint64 = simd<simd_lanes>::u64;
using simd_int32 = simd<simd_lanes>::i32;

// Loads, stores and truncation for each width. Plain overloads rather than templates: GCC places
// a template's -Wpsabi note at the end of the translation unit, outside the pragma above.
#if defined(__AVX512F__)
// The masked form: the unmasked one trips GCC 12's -Wmaybe-uninitialized (GCC bug 105593).
#define GPUSCHED_BATCH_TRUNC_8(x) _mm512_mask_roundscale_pd(x, static_cast<__mmask8>(0xFF), x, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC)
#else
// Only run inside the AVX-512 kernel, whose AVX512DQ converts 8 doubles to 8 int64 and back in one
// instruction each (through int32 it would split the vector in halves).
#define GPUSCHED_BATCH_TRUNC_8(x) __builtin_convertvector(__builtin_convertvector(x, ::gpusched::batch::simd<8>::i64), ::gpusched::batch::simd<8>::f64)
#endif
// Vector builtins of an instruction set the build's target lacks (vroundpd and maxpd on 4 lanes,
// maxpd on 8, in a baseline build): GCC checks a builtin's instruction set where the call is
// expanded, and these lanes are only expanded inside the AVX2 / AVX-512 kernels, which `flatten`
// the formula templates into themselves (_mm256_round_pd and the like would refuse to inline into
// the formulas' own baseline bodies). With inlining off or limited (-O0, -fno-inline, -Os) the
// formula bodies are expanded on their own, so such builds, Clang (which checks builtins per
// function before inlining) and builds defining GPUSCHED_BATCH_NO_WIDE_BUILTINS (should another
// compiler or flag set reject them) use generic vector code instead. Measured on 4 lanes,
// BM_ScorePairs/batch_cpu/1000: 0.66 -> 0.58 ms with vroundpd, 0.565 -> 0.50 ms with maxpd
// (docs/benchmarks.md).
#if (defined(__x86_64__) || defined(__i386__)) && !defined(__clang__) && defined(__OPTIMIZE__) && \
    !defined(__OPTIMIZE_SIZE__) && !defined(__NO_INLINE__) && !defined(GPUSCHED_BATCH_NO_WIDE_BUILTINS)
#define GPUSCHED_BATCH_WIDE_BUILTINS 1
#endif
#if defined(__AVX__)
#define GPUSCHED_BATCH_TRUNC_4(x) _mm256_round_pd(x, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC)
#define GPUSCHED_BATCH_TRUNC_NONNEG_4(x) GPUSCHED_BATCH_TRUNC_4(x)
#elif defined(GPUSCHED_BATCH_WIDE_BUILTINS)
#define GPUSCHED_BATCH_TRUNC_4(x) __builtin_ia32_roundpd256(x, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC)
#define GPUSCHED_BATCH_TRUNC_NONNEG_4(x) GPUSCHED_BATCH_TRUNC_4(x)
#else
#define GPUSCHED_BATCH_TRUNC_4(x) __builtin_convertvector(__builtin_convertvector(x, ::gpusched::batch::simd<4>::i32), ::gpusched::batch::simd<4>::f64)
// GCC splits the int32 -> double half of the round trip above into two halves and an insert
// (lowered for the baseline before it is inlined into the AVX2 kernel); for x >= 0 rounding with
// additions is cheaper (measured: 0.80 -> 0.70 ms, BM_ScorePairs/batch_cpu/1000 on 4 lanes).
#if defined(__FAST_MATH__)  // which would fold (x + c) - c to x
#define GPUSCHED_BATCH_TRUNC_NONNEG_4(x) GPUSCHED_BATCH_TRUNC_4(x)
#else
#define GPUSCHED_BATCH_TRUNC_NONNEG_4(x) ::gpusched::batch::truncate_nonnegative_by_rounding(x)
#endif
#endif
// a > b ? a : b as one maxpd (which returns its second operand unless the first is greater, NaN
// included), where the select would be a comparison and a blend. 2 lanes: SSE2, every x86-64; 4
// and 8 lanes: the target's own intrinsic or, in a narrower build, GCC's wide builtins above.
#if defined(__SSE2__)
#define GPUSCHED_BATCH_LARGER_2(a, b) _mm_max_pd(a, b)
#else
#define GPUSCHED_BATCH_LARGER_2(a, b) ((a) > (b) ? (a) : (b))
#endif
#if defined(__AVX__)
#define GPUSCHED_BATCH_LARGER_4(a, b) _mm256_max_pd(a, b)
#elif defined(GPUSCHED_BATCH_WIDE_BUILTINS)
#define GPUSCHED_BATCH_LARGER_4(a, b) __builtin_ia32_maxpd256(a, b)
#else
#define GPUSCHED_BATCH_LARGER_4(a, b) ((a) > (b) ? (a) : (b))
#endif
#if defined(__AVX512F__)  // masked, as TRUNC_8 above (GCC bug 105593)
#define GPUSCHED_BATCH_LARGER_8(a, b) _mm512_mask_max_pd(a, static_cast<__mmask8>(0xFF), a, b)
#elif defined(GPUSCHED_BATCH_WIDE_BUILTINS)
#define GPUSCHED_BATCH_LARGER_8(a, b) __builtin_ia32_maxpd512_mask(a, b, a, static_cast<unsigned char>(0xFF), _MM_FROUND_CUR_DIRECTION)
#else
#define GPUSCHED_BATCH_LARGER_8(a, b) ((a) > (b) ? (a) : (b))
#endif
#define GPUSCHED_BATCH_TRUNC_NONNEG_8(x) GPUSCHED_BATCH_TRUNC_8(x)
#define GPUSCHED_BATCH_TRUNC_NONNEG_2(x) GPUSCHED_BATCH_TRUNC_2(x)

// Toward zero for 0 <= x < 2^51 without a conversion instruction: adding and subtracting
// 1.5 * 2^52 rounds x to the nearest integer exactly (the sum lies in [2^52, 2^53), where doubles
// are the integers); a step of one down where that rounded up gives the floor, which is the
// truncation for x >= 0.
template <class V>
[[gnu::always_inline]] inline V truncate_nonnegative_by_rounding(V x) noexcept {
  const V magic = V{} + 0x1.8p52;
  const V r = (x + magic) - magic;
  return r - (r > x ? V{} + 1.0 : V{});
}
#if defined(__SSE4_1__)
#define GPUSCHED_BATCH_TRUNC_2(x) _mm_round_pd(x, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC)
#else
#define GPUSCHED_BATCH_TRUNC_2(x) __builtin_convertvector(__builtin_convertvector(x, ::gpusched::batch::simd<2>::i32), ::gpusched::batch::simd<2>::f64)
#endif

#define GPUSCHED_BATCH_SIMD_OPS(L)                                                                             \
  inline namespace GPUSCHED_BATCH_ABI {                                                                      \
  [[gnu::always_inline]] inline simd<L>::f64 load_lanes(const double* p, lanes_tag<L>) noexcept {             \
    return *reinterpret_cast<const simd<L>::f64_u*>(p);                                                      \
  }                                                                                                          \
  [[gnu::always_inline]] inline simd<L>::u64 load_lanes(const std::uint64_t* p, lanes_tag<L>) noexcept {      \
    return *reinterpret_cast<const simd<L>::u64_u*>(p);                                                      \
  }                                                                                                          \
  [[gnu::always_inline]] inline simd<L>::i32 load_lanes(const std::int32_t* p, lanes_tag<L>) noexcept {       \
    return *reinterpret_cast<const simd<L>::i32_u*>(p);                                                      \
  }                                                                                                          \
  [[gnu::always_inline]] inline simd<L>::i64 load_lanes(const std::int64_t* p, lanes_tag<L>) noexcept {       \
    return *reinterpret_cast<const simd<L>::i64_u*>(p);                                                      \
  }                                                                                                          \
  [[gnu::always_inline]] inline void store_lanes(std::int32_t* p, simd<L>::i32 v) noexcept {                  \
    *reinterpret_cast<simd<L>::i32_u*>(p) = v;                                                               \
  }                                                                                                          \
  [[gnu::always_inline]] inline simd<L>::f64 truncate_lanes(simd<L>::f64 x) noexcept { return GPUSCHED_BATCH_TRUNC_##L(x); } \
  }                                                                                                          \
  template <>                                                                                                \
  struct lane_io<simd<L>::f64> {                                                                             \
    [[gnu::always_inline]] static simd<L>::f64 load(const double* p, std::uint32_t n) noexcept {             \
      return *reinterpret_cast<const simd<L>::f64_u*>(p + n);                                                \
    }                                                                                                        \
    [[gnu::always_inline]] static simd<L>::u64 load(const std::uint64_t* p, std::uint32_t n) noexcept {      \
      return *reinterpret_cast<const simd<L>::u64_u*>(p + n);                                                \
    }                                                                                                        \
  };

template <std::uint32_t L>
struct lanes_tag {};
// Every width: the 4- and 8-lane forms are only called from the AVX2 / AVX-512 kernels, into which
// they are inlined (and compiled for that target).
GPUSCHED_BATCH_SIMD_OPS(2)
GPUSCHED_BATCH_SIMD_OPS(4)
GPUSCHED_BATCH_SIMD_OPS(8)
#undef GPUSCHED_BATCH_SIMD_OPS

// The upper 32 bits of each 64-bit lane, as int32 lanes: one shuffle of the vector's 32-bit words,
// where __builtin_convertvector to int32 narrows through several (measured on 4 lanes, the
// resource-fit mask: five shuffles replaced by one permute).
template <std::uint32_t L>
[[gnu::always_inline]] inline typename simd<L>::i32 high_words(typename simd<L>::u64 v) noexcept {
#if !defined(__clang__) && __GNUC__ < 12  // no __builtin_shufflevector: the narrowing conversion
  return __builtin_convertvector(__builtin_bit_cast(typename simd<L>::i64, v) >> 32, typename simd<L>::i32);
#else
  using W = typename simd<L>::i32_words;
  const W w = __builtin_bit_cast(W, v);
  constexpr int h = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? 1 : 0;
  if constexpr (L == 2) {
    return __builtin_shufflevector(w, w, h, 2 + h);
  } else if constexpr (L == 4) {
    return __builtin_shufflevector(w, w, h, 2 + h, 4 + h, 6 + h);
  } else {
    static_assert(L == 8);
    return __builtin_shufflevector(w, w, h, 2 + h, 4 + h, 6 + h, 8 + h, 10 + h, 12 + h, 14 + h);
  }
#endif
}

#if defined(__x86_64__) || defined(__i386__)
// In the ABI namespace like the kernels: target("avx2") adds to the translation unit's own flags,
// so a copy compiled with -march=x86-64-v4 may use AVX-512 encodings, and inline functions keep one
// copy per program.
inline namespace GPUSCHED_BATCH_ABI {
// Bit i % 64 of bits[i / 64] set where total[i] >= floor, for i < count; returns the number of
// words written, (count + 63) / 64. Eight totals per comparison and one movemask, for the CPU
// engine's top-k merge where the run-time width is 4 or 8 lanes (batch_scorer::merge_tile): it then
// hashes and ranks only the marked nodes instead of reading every total again. floor > INT32_MIN.
GPUSCHED_BATCH_TARGET_AVX2 inline std::uint64_t at_least_eight_avx2(const std::int32_t* total, __m256i below) noexcept {
  const __m256i t = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(total));
  return static_cast<unsigned>(_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpgt_epi32(t, below))));
}
GPUSCHED_BATCH_TARGET_AVX2 inline std::uint32_t at_least_bits_avx2(const std::int32_t* total, std::uint32_t count, std::int32_t floor,
                                                                  std::uint64_t* bits) noexcept {
  const __m256i below = _mm256_set1_epi32(floor - 1);
  const std::uint32_t words = (count + 63) / 64;
  for (std::uint32_t w = 0; w < words; ++w) {
    const std::uint32_t first = w * 64;
    std::uint64_t word = 0;
    if (count - first >= 64) {  // a full word: eight comparisons, constant shifts
#pragma GCC unroll 8
      for (std::uint32_t j = 0; j < 8; ++j) word |= at_least_eight_avx2(total + first + 8 * j, below) << (8 * j);
    } else {
      std::uint32_t i = first;
      for (; i + 8 <= count; i += 8) word |= at_least_eight_avx2(total + i, below) << (i - first);
      for (; i < count; ++i) word |= std::uint64_t{total[i] >= floor} << (i - first);
    }
    bits[w] = word;
  }
  return words;
}
}  // inline namespace GPUSCHED_BATCH_ABI
#endif

// Lanes of a vector of doubles.
template <class V>
inline constexpr std::uint32_t lanes_of = sizeof(V) / sizeof(double);

inline namespace GPUSCHED_BATCH_ABI {
// out[0..simd_lanes) += w * x and out = x, x holding integers within int32 (native width).
inline void add_lanes(std::int32_t* out, std::int32_t w, simd_double x) noexcept {
  store_lanes(out, load_lanes(out, lanes_tag<simd_lanes>{}) + w * __builtin_convertvector(x, simd_int32));
}
inline void store_lanes(std::int32_t* out, simd_double x) noexcept { store_lanes(out, __builtin_convertvector(x, simd_int32)); }
}  // inline namespace GPUSCHED_BATCH_ABI

}  // namespace gpusched::batch

#define GPUSCHED_BATCH_NUMBER_TRAITS(L)                                                                       \
  template <>                                                                                                \
  struct gpusched::formula::number_traits<gpusched::batch::simd<L>::f64> {                                   \
    using V = gpusched::batch::simd<L>::f64;                                                                 \
    /* A broadcast of v's bits: `V{} + v` would cost an addition and a broadcast in the kernels, */         \
    /* since 0.0 + v is not v for v = -0.0; OR-ing zero bits folds away. */                                  \
    [[gnu::always_inline]] static V from(double v) noexcept {                                                \
      return __builtin_bit_cast(V, gpusched::batch::simd<L>::u64{} | __builtin_bit_cast(std::uint64_t, v));  \
    }                                                                                                        \
    [[gnu::always_inline]] static V from(std::int64_t v) noexcept { return from(static_cast<double>(v)); }   \
    [[gnu::always_inline]] static V from(std::int32_t v) noexcept { return from(static_cast<double>(v)); }   \
    [[gnu::always_inline]] static V truncate(V x) noexcept { return GPUSCHED_BATCH_TRUNC_##L(x); }             \
    [[gnu::always_inline]] static V truncate_nonnegative(V x) noexcept { return GPUSCHED_BATCH_TRUNC_NONNEG_##L(x); } \
    [[gnu::always_inline]] static V larger(V a, V b) noexcept { return GPUSCHED_BATCH_LARGER_##L(a, b); }     \
  };
GPUSCHED_BATCH_NUMBER_TRAITS(2)
GPUSCHED_BATCH_NUMBER_TRAITS(4)
GPUSCHED_BATCH_NUMBER_TRAITS(8)
#undef GPUSCHED_BATCH_NUMBER_TRAITS
#undef GPUSCHED_BATCH_TRUNC_2
#undef GPUSCHED_BATCH_TRUNC_4
#undef GPUSCHED_BATCH_TRUNC_8
#undef GPUSCHED_BATCH_TRUNC_NONNEG_2
#undef GPUSCHED_BATCH_TRUNC_NONNEG_4
#undef GPUSCHED_BATCH_TRUNC_NONNEG_8
#undef GPUSCHED_BATCH_LARGER_2
#undef GPUSCHED_BATCH_LARGER_4
#undef GPUSCHED_BATCH_LARGER_8
#undef GPUSCHED_BATCH_WIDE_BUILTINS

#else
#define GPUSCHED_BATCH_SIMD 0
#define GPUSCHED_BATCH_ABI scalar
#endif
