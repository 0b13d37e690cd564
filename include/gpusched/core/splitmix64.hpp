// SplitMix64, the one copy (Steele, Lea & Flood, "Fast splittable pseudorandom number generators",
// OOPSLA 2014; the constants of Vigna's splitmix64.c, https://prng.di.unimi.it/splitmix64.c): the
// scheduler's and preemption's seeded tie-breaks, random device choice, the simulator's seeding of
// xoshiro256** and the tie-break keys of the batch engines all draw from here.
#pragma once

#include <cstdint>

#include "gpusched/config.hpp"

namespace gpusched {

// The finaliser: a bijection on 64-bit words that mixes every input bit into every output bit.
GPUSCHED_HD constexpr std::uint64_t mix64(std::uint64_t z) noexcept {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// The generator: advances `state` by the golden-ratio increment and returns its mix.
GPUSCHED_HD constexpr std::uint64_t splitmix64(std::uint64_t& state) noexcept {
  return mix64(state += 0x9E3779B97F4A7C15ULL);
}

}  // namespace gpusched
