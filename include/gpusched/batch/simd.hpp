// SIMD lanes for the CPU batch engine: GCC / Clang vector extensions, as wide as the target the
// including code is compiled for (2 doubles with the x86-64 baseline, 4 with AVX, 8 with AVX-512),
// and number_traits for them so that the formula templates of scoring/formulas.hpp run on a vector
// of nodes at a time. The same formulas run on scalars in the per-pod plugins and the CUDA kernels.
#pragma once

#include <cstdint>
#include <cstring>

#include "gpusched/config.hpp"
#include "gpusched/scoring/formulas.hpp"

namespace gpusched::batch {

// Loads of the per-node arrays a batch kernel reads: one node (scalar T) or simd_lanes nodes
// from n (T = simd_double).
template <class T>
struct lane_io {
  GPUSCHED_HD static double load(const double* p, std::uint32_t n) noexcept { return p[n]; }
  GPUSCHED_HD static std::uint64_t load(const std::uint64_t* p, std::uint32_t n) noexcept { return p[n]; }
};

}  // namespace gpusched::batch

#if defined(__GNUC__) && !defined(__CUDACC__)
#define GPUSCHED_BATCH_SIMD 1

#if defined(__SSE4_1__) || defined(__AVX__) || defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace gpusched::batch {

#if defined(__AVX512F__)
inline constexpr std::uint32_t simd_lanes = 8;
#elif defined(__AVX__)
inline constexpr std::uint32_t simd_lanes = 4;
#else
inline constexpr std::uint32_t simd_lanes = 2;
#endif

using simd_double = double __attribute__((vector_size(8 * simd_lanes)));
using simd_uint64 = std::uint64_t __attribute__((vector_size(8 * simd_lanes)));
using simd_int32 = std::int32_t __attribute__((vector_size(4 * simd_lanes)));

template <class V, class E>
inline V load_vector(const E* p) noexcept {
  V v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <class V, class E>
inline void store_vector(E* p, V v) noexcept {
  std::memcpy(p, &v, sizeof v);
}

template <>
struct lane_io<simd_double> {
  static simd_double load(const double* p, std::uint32_t n) noexcept { return load_vector<simd_double>(p + n); }
  static simd_uint64 load(const std::uint64_t* p, std::uint32_t n) noexcept { return load_vector<simd_uint64>(p + n); }
};

// Toward zero, lane by lane (values within int32).
inline simd_double truncate_lanes(simd_double x) noexcept {
#if defined(__AVX512F__)
  // The masked form: the unmasked one trips GCC 12's -Wmaybe-uninitialized (GCC bug 105593).
  return _mm512_mask_roundscale_pd(x, static_cast<__mmask8>(0xFF), x, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
#elif defined(__AVX__)
  return _mm256_round_pd(x, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
#elif defined(__SSE4_1__)
  return _mm_round_pd(x, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
#else
  return __builtin_convertvector(__builtin_convertvector(x, simd_int32), simd_double);
#endif
}

// out[0..simd_lanes) += w * x, x holding integers within int32.
inline void add_lanes(std::int32_t* out, std::int32_t w, simd_double x) noexcept {
  simd_int32 o;
  std::memcpy(&o, out, sizeof o);
  o += w * __builtin_convertvector(x, simd_int32);
  std::memcpy(out, &o, sizeof o);
}
inline void store_lanes(std::int32_t* out, simd_double x) noexcept {
  const simd_int32 o = __builtin_convertvector(x, simd_int32);
  std::memcpy(out, &o, sizeof o);
}

}  // namespace gpusched::batch

template <>
struct gpusched::formula::number_traits<gpusched::batch::simd_double> {
  using V = gpusched::batch::simd_double;
  template <class U>
  static V from(U v) noexcept {
    return V{} + static_cast<double>(v);
  }
  static V truncate(V x) noexcept { return gpusched::batch::truncate_lanes(x); }
};

#else
#define GPUSCHED_BATCH_SIMD 0
#endif
