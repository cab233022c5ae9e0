// SPDX-License-Identifier: MIT
// Counter-based random numbers: splitmix64 mixing, per-agent seeds and 1D value noise.
#pragma once

#include <cmath>
#include <cstdint>

namespace contextsteer {

/// The splitmix64 finaliser (Steele, Lea & Flood 2014): a bijective 64-bit mix. Pure.
inline std::uint64_t splitmix64(std::uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// Initial RNG state of agent slot `index` for simulation seed `seed`. Depends only on
/// (seed, index), so a run is reproducible whatever order agents are added in. Pure.
inline std::uint64_t agent_seed(std::uint64_t seed, std::uint64_t index) {
  return splitmix64(splitmix64(seed) ^ (index * 0xD1B54A32D192ED03ull));
}

/// Uniform float in [0, 1) from the top 24 bits of a 64-bit value (exact in float). Pure.
inline float unit_float(std::uint64_t bits) {
  return static_cast<float>(bits >> 40) * (1.0f / 16777216.0f);
}

/// Smooth 1D value noise in [-1, 1]: random values at integer lattice points of `x`
/// (hashed from `key` and the lattice index) joined by a smoothstep. Continuous in x,
/// pure, allocation-free. x must be finite.
inline float value_noise(std::uint64_t key, double x) {
  // The lattice index must fit int64 (a larger one made the cast undefined, and on x86 every
  // such x the same cell: Wander froze once time · rate passed 2^63). Beyond 2^62 the
  // lattice repeats with that period; |x| < 2^62 is unchanged (fmod is exact).
  if (!(std::fabs(x) < 0x1p62)) x = std::fmod(x, 0x1p62);
  const double cell = std::floor(x);
  const float t = static_cast<float>(x - cell);
  const std::uint64_t c = static_cast<std::uint64_t>(static_cast<std::int64_t>(cell));
  const float a = 2.0f * unit_float(splitmix64(key ^ (c * 0x9E3779B97F4A7C15ull))) - 1.0f;
  const float b = 2.0f * unit_float(splitmix64(key ^ ((c + 1) * 0x9E3779B97F4A7C15ull))) - 1.0f;
  const float s = t * t * (3.0f - 2.0f * t);
  return a + (b - a) * s;
}

}  // namespace contextsteer
