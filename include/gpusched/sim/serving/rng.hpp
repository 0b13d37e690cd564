// A small, portable random source: the same seed gives the same numbers with every compiler and
// standard library (std::*_distribution does not promise that), which per-seed determinism needs.
#pragma once

#include <cmath>
#include <cstdint>

namespace gpusched::sim::serving {

// SplitMix64 (Steele, Lea, Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014):
// used to expand and mix seeds.
constexpr std::uint64_t splitmix64(std::uint64_t& state) noexcept {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// Independent stream `stream` of seed `seed` (e.g. one per service, so that adding a service does not
// change the arrivals of the others, and both profiles of an A/B run see the same arrivals).
constexpr std::uint64_t derive_seed(std::uint64_t seed, std::uint64_t stream) noexcept {
  std::uint64_t s = seed;
  std::uint64_t a = splitmix64(s);
  std::uint64_t t = stream ^ 0xD1B54A32D192ED03ULL;
  return a ^ splitmix64(t);
}

// xoshiro256** 1.0 (Blackman and Vigna, "Scrambled linear pseudorandom number generators", 2018).
class rng {
 public:
  explicit constexpr rng(std::uint64_t seed) noexcept {
    std::uint64_t s = seed;
    for (auto& w : s_) w = splitmix64(s);
  }

  constexpr std::uint64_t next() noexcept {
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

  // Uniform in (0, 1]: the top 53 bits, shifted so that log() below never sees 0.
  double uniform_open0() noexcept { return static_cast<double>((next() >> 11) + 1) * 0x1.0p-53; }

  // Exponential with the given rate (inverse transform).
  double exponential(double rate) noexcept { return -std::log(uniform_open0()) / rate; }

 private:
  static constexpr std::uint64_t rotl(std::uint64_t x, int k) noexcept { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4]{};
};

}  // namespace gpusched::sim::serving
