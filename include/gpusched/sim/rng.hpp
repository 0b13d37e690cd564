// The simulator's random numbers: a small, portable, seeded generator, so that the same seed gives
// the same workload and decisions on every platform (std::shuffle and the std distributions are
// implementation-defined).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>

#include "gpusched/core/splitmix64.hpp"

namespace gpusched::sim {

// SplitMix64 expands and mixes seeds (core/splitmix64.hpp, the one copy).
using gpusched::splitmix64;

// xoshiro256** (Blackman and Vigna, https://prng.di.unimi.it/xoshiro256starstar.c), seeded through
// splitmix64 as its authors recommend.
class rng {
  __extension__ typedef unsigned __int128 u128;  // GCC and Clang; __extension__ keeps -Wpedantic quiet

 public:
  explicit rng(std::uint64_t seed) noexcept {
    for (auto& w : s_) w = splitmix64(seed);
  }

  std::uint64_t next() noexcept {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  // Uniform in [0, n), n > 0, without modulo bias (Lemire, "Fast Random Integer Generation in an
  // Interval", ACM TOMACS 2019).
  std::uint64_t below(std::uint64_t n) noexcept {
    u128 m = static_cast<u128>(next()) * n;
    auto low = static_cast<std::uint64_t>(m);
    if (low < n) {
      const std::uint64_t threshold = (0 - n) % n;
      while (low < threshold) {
        m = static_cast<u128>(next()) * n;
        low = static_cast<std::uint64_t>(m);
      }
    }
    return static_cast<std::uint64_t>(m >> 64);
  }

  // Uniform in (0, 1]: the top 53 bits, shifted so that log() below never sees 0.
  double uniform_open0() noexcept { return static_cast<double>((next() >> 11) + 1) * 0x1.0p-53; }

  // Exponential with the given rate (inverse transform).
  double exponential(double rate) noexcept { return -std::log(uniform_open0()) / rate; }

  // Fisher-Yates, as Go's rand.Shuffle.
  template <class T>
  void shuffle(std::span<T> v) noexcept {
    for (std::size_t i = v.size(); i > 1; --i) {
      const std::size_t j = static_cast<std::size_t>(below(i));
      std::swap(v[i - 1], v[j]);
    }
  }

 private:
  static constexpr std::uint64_t rotl(std::uint64_t x, int k) noexcept { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
};

}  // namespace gpusched::sim
