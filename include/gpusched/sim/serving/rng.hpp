// The serving simulator's random numbers: the simulator's portable generator (sim/rng.hpp: the same
// seed gives the same numbers with every compiler and standard library, which per-seed determinism
// needs), plus independent streams per seed.
#pragma once

#include <cstdint>

#include "gpusched/sim/rng.hpp"

namespace gpusched::sim::serving {

using sim::rng;
using sim::splitmix64;

// Independent stream `stream` of seed `seed` (e.g. one per service, so that adding a service does not
// change the arrivals of the others, and both profiles of an A/B run see the same arrivals).
constexpr std::uint64_t derive_seed(std::uint64_t seed, std::uint64_t stream) noexcept {
  std::uint64_t s = seed;
  std::uint64_t a = splitmix64(s);
  std::uint64_t t = stream ^ 0xD1B54A32D192ED03ULL;
  return a ^ splitmix64(t);
}

}  // namespace gpusched::sim::serving
