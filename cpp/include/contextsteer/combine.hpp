// SPDX-License-Identifier: MIT
// Combine: merge a stack of B context maps (B, N, K) slot by slot into one (N, K) map.
#pragma once

#include <atomic>
#include <cstddef>
#include <span>

#include "contextsteer/modes.hpp"

namespace contextsteer {

/// Per-slot merge rule over the B maps of a stack.
enum class CombineMode {
  kMax,          ///< max_b m[b] (Unity project, Fray)
  kSum,          ///< sum_b m[b]
  kWeightedSum,  ///< sum_b w[b] * m[b]
  kMultiply,     ///< prod_b m[b] (Lewis: product of normalised scores)
  kMin,          ///< min_b m[b]
};

/// The names of CombineMode (contextsteer.COMBINE_MODES). Add a mode here and in
/// combine.cpp's kernel; the Python API lists and checks the names from this table.
inline constexpr ModeEntry<CombineMode> kCombineModes[] = {
    {"max", CombineMode::kMax, "per slot, the largest value of the maps (Unity project, Fray)"},
    {"sum", CombineMode::kSum, "per slot, the sum of the maps"},
    {"weighted_sum", CombineMode::kWeightedSum,
     "per slot, the sum of the maps times one weight per map"},
    {"multiply", CombineMode::kMultiply,
     "per slot, the product of the maps (Lewis: product of normalised scores)"},
    {"min", CombineMode::kMin, "per slot, the smallest value of the maps"},
};

/// Whether a Steering (one map per behaviour, already scaled by the behaviour's weight)
/// combines with the mode: every mode but kWeightedSum, which needs a weight per map.
constexpr bool steering_can_combine(CombineMode mode) { return mode != CombineMode::kWeightedSum; }

/// Rows [begin, end) of combine: maps is B*N*K floats (map b, agent i, slot j at
/// (b*N + i)*K + j), weights B floats (kWeightedSum only), out N*K floats. out may be
/// one of the maps (element-wise, same index), but must not partly overlap them.
/// Sums and products run in float in stack order. Pure, allocation-free, reentrant.
void combine_rows(std::span<const float> maps, std::size_t b, std::size_t n, std::size_t k,
                  CombineMode mode, std::span<const float> weights, std::span<float> out,
                  std::size_t begin, std::size_t end);

/// combine over all N agents on the thread pool; sets *nonfinite (if given) when a map
/// value is NaN/inf.
void combine(std::span<const float> maps, std::size_t b, std::size_t n, std::size_t k,
             CombineMode mode, std::span<const float> weights, std::span<float> out,
             std::atomic<bool>* nonfinite = nullptr);

}  // namespace contextsteer
