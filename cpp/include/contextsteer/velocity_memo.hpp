// SPDX-License-Identifier: MIT
// Internal: a per-agent memo of velocity_ttc answers for the velocity decision (see
// Simulation::memo_ttc). Header-only.
#pragma once

#include <bit>
#include <cstdint>

#include "contextsteer/common.hpp"

namespace contextsteer::detail {

/// The last four (velocity → time to collision) answers of one agent, keyed by the
/// velocity's bits (so +0 and −0, or two NaNs with different payloads, are different
/// keys: a hit returns exactly what the call would have). clear() empties it; put()
/// overwrites the oldest entry once four are held.
struct VelocityMemo {
  std::uint32_t x[4], y[4];
  float t[4];
  std::uint32_t count = 0;

  void clear() { count = 0; }
  /// The remembered answer for v, or nullptr.
  const float* find(Vec2 v) const {
    const auto bx = std::bit_cast<std::uint32_t>(v.x), by = std::bit_cast<std::uint32_t>(v.y);
    const std::uint32_t n = count < 4 ? count : 4;
    for (std::uint32_t e = 0; e < n; ++e)
      if (x[e] == bx && y[e] == by) return &t[e];
    return nullptr;
  }
  void put(Vec2 v, float ttc) {
    const std::uint32_t e = count++ % 4;
    x[e] = std::bit_cast<std::uint32_t>(v.x);
    y[e] = std::bit_cast<std::uint32_t>(v.y);
    t[e] = ttc;
  }
};

}  // namespace contextsteer::detail
