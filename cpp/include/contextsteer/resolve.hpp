// SPDX-License-Identifier: MIT
// Resolve: apply an agent's danger map to its interest map, slot by slot.
#pragma once

#include <atomic>
#include <cstddef>
#include <span>

#include "contextsteer/modes.hpp"
#include "contextsteer/slot_set.hpp"

namespace contextsteer {

/// How danger d acts on interest i (per slot j of one agent).
enum class ResolveMode {
  kMask,               ///< d_j > threshold ? 0 : i_j (Godot recipe)
  kSubtract,           ///< max(0, i_j - d_j) (Godot "levels of danger", clamped reading)
  kScale,              ///< i_j * (1 - clamp(d_j, 0, 1))
  kMaskMinDanger,      ///< d_j <= min_m d_m + epsilon ? i_j : 0 (Fray)
  kAvoidOpposite,      ///< i_j + max_m d_m * max(0, -dot(u_j, u_m)) (Godot "avoidance")
  kSubtractUnclamped,  ///< i_j - d_j, negative values kept (the Unity project's exact rule)
};

/// The names of ResolveMode (contextsteer.RESOLVE_MODES), checked and listed from here.
inline constexpr ModeEntry<ResolveMode> kResolveModes[] = {
    {"mask", ResolveMode::kMask,
     "interest 0 where danger > threshold, unchanged elsewhere (Godot recipe)"},
    {"subtract", ResolveMode::kSubtract,
     "max(0, interest - danger) (Godot 'levels of danger', clamped)"},
    {"scale", ResolveMode::kScale, "interest * (1 - clamp(danger, 0, 1))"},
    {"mask_min_danger", ResolveMode::kMaskMinDanger,
     "interest kept only where danger <= min danger + epsilon (Fray)"},
    {"avoid_opposite", ResolveMode::kAvoidOpposite,
     "interest plus the largest danger times its opposite cosine (Godot 'avoidance')"},
    {"subtract_unclamped", ResolveMode::kSubtractUnclamped,
     "interest - danger, negative values kept (the Unity project's exact rule)"},
};

/// Scalars of resolve.
struct ResolveParams {
  ResolveMode mode = ResolveMode::kMask;
  float threshold = 0.0f;  ///< kMask
  float epsilon = 0.0f;    ///< kMaskMinDanger
};

/// Rows [begin, end) of resolve: interest, danger, out are N*K floats; out may be
/// interest or danger (same index) except for kAvoidOpposite and kMaskMinDanger, where
/// out must not be danger. `slots` is used by kAvoidOpposite only (size K).
/// Pure, allocation-free, reentrant.
void resolve_rows(std::span<const float> interest, std::span<const float> danger, std::size_t k,
                  const ResolveParams& p, const SlotSet* slots, std::span<float> out,
                  std::size_t begin, std::size_t end);

/// resolve over all N agents on the thread pool; sets *nonfinite (if given) when an
/// interest or danger value is NaN/inf.
void resolve(std::span<const float> interest, std::span<const float> danger, std::size_t n,
             std::size_t k, const ResolveParams& p, const SlotSet* slots, std::span<float> out,
             std::atomic<bool>* nonfinite = nullptr);

}  // namespace contextsteer
