// SPDX-License-Identifier: MIT
// Shared basics of the core: the debug assertion and small 2D vector helpers.
#pragma once

#include <algorithm>
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
/// as a prediction far ahead reaches) or leaves its normal range (|a| below 1e-18, where
/// it loses precision and then reads 0: a unit of length 1.01, then 0, fuzz round 19) the
/// length is taken in double.
inline Vec2 unit_of(Vec2 a) {
  const float n = length(a);
  if (n > 1e-18f && n <= std::numeric_limits<float>::max()) return a * (1.0f / n);
  if ((a.x == 0.0f && a.y == 0.0f) || !std::isfinite(a.x) || !std::isfinite(a.y)) return Vec2{};
  const double s = 1.0 / std::sqrt(double(a.x) * a.x + double(a.y) * a.y);
  return {static_cast<float>(a.x * s), static_cast<float>(a.y * s)};
}

/// Whether an agent moving at v has a direction to face: faster than 1e-6 units a second,
/// or, for an agent whose max speed is below 1, faster than 1e-6 of its max speed, so that
/// a scene in small units turns as it does in large ones (an agent of max speed 1e-6
/// walked at 90° facing 0°: fuzz round 19). Below that a velocity is the rounding of a
/// stop. Squares in double: |v|² underflows float32 below about 1e-19.
inline bool has_direction(Vec2 v, float max_speed) {
  if (!(max_speed < 1.0f)) return length(v) > 1e-6f;
  const double t = 1e-6 * std::max(double{max_speed}, 0.0);
  return double{v.x} * v.x + double{v.y} * v.y > t * t;
}

/// Adds `by` (>= 0) to a per-agent int32 counter, saturating at INT32_MAX rather than
/// wrapping to a negative count (2^31 steps is 414 days at 60 Hz, minutes of CPU for a
/// one-agent run).
inline void count_up(std::int32_t& c, std::int32_t by = 1) {
  constexpr std::int32_t kMax = std::numeric_limits<std::int32_t>::max();
  c = c > kMax - by ? kMax : c + by;  // kMax - by cannot overflow for by >= 0, whatever c is
}

}  // namespace contextsteer
