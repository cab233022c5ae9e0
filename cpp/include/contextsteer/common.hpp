// SPDX-License-Identifier: MIT
// Shared basics of the core: the debug assertion and small 2D vector helpers.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <limits>

#ifdef CONTEXTSTEER_DEBUG
/// Internal invariant check, compiled in Debug builds only. Never used on user input.
#define CONTEXTSTEER_ASSERT(cond)                                                       \
  do {                                                                                  \
    if (!(cond)) {                                                                      \
      std::fprintf(stderr, "%s:%d: assertion failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                     \
    }                                                                                   \
  } while (0)
#else
#define CONTEXTSTEER_ASSERT(cond) ((void)0)
#endif

namespace contextsteer {

/// A 2D vector of floats; the unit of every position, direction and velocity.
struct Vec2 {
  float x = 0.0f;
  float y = 0.0f;
};

inline Vec2 operator+(Vec2 a, Vec2 b) { return {a.x + b.x, a.y + b.y}; }
inline Vec2 operator-(Vec2 a, Vec2 b) { return {a.x - b.x, a.y - b.y}; }
inline Vec2 operator*(Vec2 a, float s) { return {a.x * s, a.y * s}; }
inline Vec2 operator*(float s, Vec2 a) { return {a.x * s, a.y * s}; }
inline float dot(Vec2 a, Vec2 b) { return a.x * b.x + a.y * b.y; }
/// z component of the 3D cross product: > 0 when b is counter-clockwise of a.
inline float cross(Vec2 a, Vec2 b) { return a.x * b.y - a.y * b.x; }
inline float length(Vec2 a) { return std::sqrt(dot(a, a)); }

/// a / |a|, 0 for a zero vector. Where |a|² overflows float32 (|a| beyond about 1.8e19,
/// as a prediction far ahead reaches) the length is taken in double: the direction, not
/// the 0 that a * (1 / inf) gave.
inline Vec2 unit_of(Vec2 a) {
  const float n = length(a);
  if (n > 0.0f && n <= std::numeric_limits<float>::max()) return a * (1.0f / n);
  if (!(n > 0.0f) || !std::isfinite(a.x) || !std::isfinite(a.y)) return Vec2{};
  const double s = 1.0 / std::sqrt(double(a.x) * a.x + double(a.y) * a.y);
  return {static_cast<float>(a.x * s), static_cast<float>(a.y * s)};
}

/// Adds `by` (>= 0) to a per-agent int32 counter, saturating at INT32_MAX rather than
/// wrapping to a negative count (2^31 steps is 414 days at 60 Hz, minutes of CPU for a
/// one-agent run).
inline void count_up(std::int32_t& c, std::int32_t by = 1) {
  constexpr std::int32_t kMax = std::numeric_limits<std::int32_t>::max();
  c = c > kMax - by ? kMax : c + by;  // kMax - by cannot overflow for by >= 0, whatever c is
}

}  // namespace contextsteer
