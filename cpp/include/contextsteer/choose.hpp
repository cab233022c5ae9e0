// SPDX-License-Identifier: MIT
// Choose: one heading, strength and slot per agent from its resolved context map.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>

#include "contextsteer/modes.hpp"
#include "contextsteer/slot_set.hpp"

namespace contextsteer {

/// The rule that turns a resolved map into a heading.
enum class ChooseMode {
  kVectorSum,           ///< normalised sum of value * direction (Godot recipe)
  kArgmax,              ///< direction of the highest positive slot (none: no slot)
  kWeightedNeighbours,  ///< best slot averaged with up to `width` neighbours a side (Lewis)
  kSubslot,             ///< parabola through the peak and its two neighbours, in angle
  kSubslotLinear,       ///< equal slopes either side of the peak (Fray's gradient intersection)
  kArgmaxAlways,        ///< the highest slot even when none is positive (Unity project)
  kVectorSumSigned,     ///< every slot summed with its sign (Godot "levels of danger")
};

/// The names of ChooseMode (contextsteer.CHOOSE_MODES), checked and listed from here.
inline constexpr ModeEntry<ChooseMode> kChooseModes[] = {
    {"vector_sum", ChooseMode::kVectorSum, "normalised sum of value * direction (Godot recipe)"},
    {"argmax", ChooseMode::kArgmax,
     "direction of the highest positive slot (none when no slot is)"},
    {"weighted_neighbours", ChooseMode::kWeightedNeighbours,
     "best slot averaged with up to `width` neighbours a side (Lewis)"},
    {"subslot", ChooseMode::kSubslot, "parabola through the peak and its two neighbours, in angle"},
    {"subslot_linear", ChooseMode::kSubslotLinear,
     "equal slopes either side of the peak (Fray's gradient intersection)"},
    {"argmax_always", ChooseMode::kArgmaxAlways,
     "the highest slot even when none is positive (Unity project)"},
    {"vector_sum_signed", ChooseMode::kVectorSumSigned,
     "every slot summed with its sign: negative slots push away (Godot 'levels of danger')"},
};

/// Scalars of choose.
struct ChooseParams {
  ChooseMode mode = ChooseMode::kVectorSum;
  /// kWeightedNeighbours: neighbours each side of the best slot (>= 0).
  std::size_t width = 2;
  /// kVectorSum: sum only the best contiguous run of positive slots (true) or every
  /// positive slot as the Godot recipe does (false).
  bool contiguous = true;
};

/// Rows [begin, end) of choose: values N*K floats; outputs direction N*2 (unit or zero),
/// strength N floats in [0, 1], slot N int32 (-1 when no slot is positive).
/// Only positive values count as interest. Pure, allocation-free, reentrant.
///
/// Rules (b = highest slot, lowest index on ties; v = values of the agent):
/// - kArgmax: direction u_b, strength clamp(v_b, 0, 1), slot b.
/// - kArgmaxAlways (the Unity project's Mathf.Max + FindIndex): b = the highest slot of
///   all K whatever its sign (lowest index on ties), direction u_b, strength
///   clamp(v_b, 0, 1), slot b: never "no slot". The Unity agent pushes with a constant
///   force whatever v_b: pair it with a motion model's speed="max".
/// - kVectorSum, contiguous: among the maximal runs of consecutive positive slots on the
///   ring pick the one with the largest total (sum in double, in ring order from the
///   run's first slot; ties: lowest first slot); direction = normalised sum of v_j u_j
///   over the run; slot = the run's highest slot s (lowest index on ties); strength
///   clamp(v_s, 0, 1). Guard: if the sum is degenerate (|sum| <= 1e-6 * run total) or
///   its nearest slot (largest dot) is not in the run (possible only for runs longer
///   than half the ring: the sum crossed the masked gap), the direction is u_s. So the
///   heading never points into a non-positive slot. (Totals: double; any summation
///   order gives the same double for values within 2^29 of each other.)
/// - kVectorSum, raw: sum over all positive slots (Godot); slot b, strength clamp(v_b);
///   a degenerate sum gives u_b. No guard: the heading may point into a masked slot.
/// - kVectorSumSigned (the Godot recipe's choose_direction over "levels of danger" read
///   literally: interest minus danger, unclamped, summed over every slot): direction =
///   normalised sum of v_j u_j over all K slots, each with its sign (sum in double), so
///   a negative slot pushes away from its direction. b = the highest slot of all K
///   (lowest index on ties), slot b, strength clamp(v_b, 0, 1). No direction (slot -1)
///   when |sum| <= 1e-6 * sum |v_j| (Godot: a zero vector normalised), all-zero included.
/// - kWeightedNeighbours: slots b-l..b+r where l, r <= width extend from b while the
///   next slot is positive (l first, l + r <= K - 1); direction = normalised sum of
///   v_j u_j over them, with the same guard as vector_sum (nearest slot must be one of
///   them); slot b, strength clamp(v_b).
/// - kSubslot: fit y = A x^2 + B x + C through (-g_l, v_{b-1}), (0, v_b), (g_r, v_{b+1})
///   where x is the angle from u_b and g_l, g_r are the gaps to the neighbours; if
///   A < 0 the heading is u_b rotated by x* = -B / (2A) clamped to [-g_l/2, g_r/2],
///   strength clamp(y(x*), 0, 1); else u_b and clamp(v_b). Exact (in double) for values
///   sampled from a parabola in angle. Slot b. Stays inside slot b's sector.
/// - kSubslotLinear (Fray's gradient intersection): a peak y = P - m |x - x*| with the same
///   slope m on both sides through the same three points. The side that falls more
///   steeply away from b, s_l = (v_b - v_{b-1}) / g_l or s_r = (v_b - v_{b+1}) / g_r, lies
///   wholly on one side of the peak, so m = max(s_l, s_r); the other side's line crosses it
///   at x* = (g_r / 2)(1 - s_r / m) (s_l >= s_r) or -(g_l / 2)(1 - s_l / m); P = v_b + m |x*|.
///   m = 0 (flat): u_b and clamp(v_b). Exact (in double) for values sampled from such a
///   peak; |x*| <= half a gap. Slot b, strength clamp(P, 0, 1).
/// The parabola y = A x² + B x + C in angle through (−gl, yl), (0, yc), (gr, yr), in
/// double: kSubslot's fit, also the crowd decision's free-way heading and settle's reading
/// of the interest's maximum. `fit` when it opens downwards (A < 0); then `x` is its
/// vertex clamped to half the gap on its side and `peak` its value there; else x = 0 and
/// peak = yc. One set of operations, so the three agree bit for bit. Pure.
struct PeakFit {
  bool fit;
  double x, peak;
};
inline PeakFit fit_peak(double yl, double yc, double yr, double gl, double gr) {
  const double sr = (yr - yc) / gr, sl = (yl - yc) / gl;  // sr = A gr + B, sl = A gl - B
  const double a = (sr + sl) / (gl + gr);
  if (!(a < 0.0)) return {false, 0.0, yc};
  const double bb = sr - a * gr;
  const double x = std::clamp(-bb / (2.0 * a), -0.5 * gl, 0.5 * gr);
  return {true, x, yc + x * (bb + a * x)};
}

void choose_rows(std::span<const float> values, std::size_t k, const SlotSet& slots,
                 const ChooseParams& p, std::span<float> direction, std::span<float> strength,
                 std::span<std::int32_t> slot, std::size_t begin, std::size_t end);

/// choose over all N agents on the thread pool; sets *nonfinite (if given) when a value
/// is NaN/inf.
void choose(std::span<const float> values, std::size_t n, std::size_t k, const SlotSet& slots,
            const ChooseParams& p, std::span<float> direction, std::span<float> strength,
            std::span<std::int32_t> slot, std::atomic<bool>* nonfinite = nullptr);

}  // namespace contextsteer
