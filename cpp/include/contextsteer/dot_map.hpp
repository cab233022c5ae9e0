// SPDX-License-Identifier: MIT
// The "dot product" writer: per-slot interest or danger from one desired vector per agent.
#pragma once

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <span>

#include "contextsteer/modes.hpp"
#include "contextsteer/slot_set.hpp"

namespace contextsteer {

/// How the cosine c = dot(slot direction, unit vector) becomes a slot value.
enum class DotShape {
  kCosine,          ///< c, in [-1, 1] (Lewis: keep the negative scores)
  kClampedCosine,   ///< max(0, c) (Godot recipe, Lewis "clamp to [0, 1]")
  kHalfCosine,      ///< (1 + c) / 2, in [0, 1] (a normalised score for multiply)
  kOppositeCosine,  ///< max(0, -c) (Lewis "avoiding a target": flip the sign)
  kChord,           ///< 1 - sin(θ/2) = 1 - √((1 - c)/2), in [0, 1]: a turn by θ costs the
                    ///< length of the change of a unit velocity (half its chord), as in ORCA
};

/// The slot value of cosine c = s·u under `shape`, for every shape but kChord.
inline float dot_shape_value(DotShape shape, float c) {
  switch (shape) {
    case DotShape::kCosine:
      return c;
    case DotShape::kClampedCosine:
      return std::max(c, 0.0f);
    case DotShape::kHalfCosine:
      return 0.5f * (1.0f + c);
    case DotShape::kOppositeCosine:
    case DotShape::kChord:
      break;
  }
  return std::max(-c, 0.0f);
}

/// The kChord value of unit slot direction (sx, sy) and unit vector (ux, uy):
/// 1 − |s − u|/2, which is 1 − sin(θ/2). It is read from the difference of the two
/// vectors rather than from their cosine, whose rounding near 1 would move the square
/// root by 2e-4 at the peak. A zero u (no direction) scores as c = 0: 1 − √½.
inline float chord_value(float sx, float sy, float ux, float uy) {
  if (ux == 0.0f && uy == 0.0f) return 1.0f - 0.70710678f;
  const float dx = sx - ux, dy = sy - uy;
  return std::max(0.0f, 1.0f - 0.5f * std::sqrt(dx * dx + dy * dy));
}

/// The names of DotShape (contextsteer.DOT_SHAPES), checked and listed from here.
inline constexpr ModeEntry<DotShape> kDotShapes[] = {
    {"clamped_cosine", DotShape::kClampedCosine,
     "max(0, c) (Godot recipe, Lewis 'clamp to [0, 1]')"},
    {"cosine", DotShape::kCosine, "c, in [-1, 1] (Lewis: keep the negative scores)"},
    {"half_cosine", DotShape::kHalfCosine,
     "(1 + c) / 2, in [0, 1] (a normalised score for multiply)"},
    {"opposite_cosine", DotShape::kOppositeCosine,
     "max(0, -c) (Lewis 'avoiding a target': flip the sign)"},
    {"chord", DotShape::kChord,
     "1 - sin(theta/2), in [0, 1]: a turn costs the change of a unit velocity (ORCA)"},
};

/// Parameters of dot_map: value = shape(c) * weight * w[i] * (|v_i| if magnitude).
struct DotMapParams {
  DotShape shape = DotShape::kClampedCosine;
  float weight = 1.0f;
  /// Optional per-agent weights (N floats) or empty.
  std::span<const float> agent_weights = {};
  /// Multiply by the length of the agent's vector (Unity's `0.8 * up` interest).
  bool magnitude = false;
};

/// Rows [begin, end) of dot_map: vectors (N*2), out (N*K). A zero vector has no
/// direction: c = 0 in every slot. Pure, allocation-free, reentrant.
void dot_map_rows(const SlotSet& slots, std::span<const float> vectors, const DotMapParams& p,
                  std::span<float> out, std::size_t begin, std::size_t end);

/// dot_map over all N agents on the thread pool; sets *nonfinite (if given) when a
/// vector or agent weight is NaN/inf.
void dot_map(const SlotSet& slots, std::span<const float> vectors, const DotMapParams& p,
             std::span<float> out, std::atomic<bool>* nonfinite = nullptr);

}  // namespace contextsteer
