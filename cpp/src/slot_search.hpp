// SPDX-License-Identifier: MIT
// Internal: the velocity decision's searches over a slot row (slot_search.cpp). Each has a
// scalar definition and, for K a multiple of 8, an AVX2 one (no FMA) that returns the same
// index for every input, NaN included (tests/cpp/test_decision_helpers.cpp compares them).
#pragma once

#include <cstddef>

#include "contextsteer/common.hpp"
#include "cpu.hpp"

namespace contextsteer::detail {

/// The slot whose direction (dir: K interleaved unit vectors) is nearest d: the first q
/// with the largest dir_q·d, 0 when none exceeds −2 (e.g. d NaN). AVX2 when K % 8 == 0.
std::size_t nearest_slot(const float* dir, std::size_t k, Vec2 d);
/// The loop nearest_slot stands for.
std::size_t nearest_slot_scalar(const float* dir, std::size_t k, Vec2 d);
/// std::max_element(v, v + k) − v: the first index of the largest value. AVX2 when
/// K % 8 == 0.
std::size_t first_max(const float* v, std::size_t k);

#if defined(CONTEXTSTEER_AVX2)
/// The AVX2 variants (K % 8 == 0, nearest_slot_avx2 K <= 64); call only when
/// use_avx2() (cpu.hpp).
CS_AVX2 std::size_t nearest_slot_avx2(const float* dir, std::size_t k, Vec2 d);
CS_AVX2 std::size_t first_max_avx2(const float* v, std::size_t k);
#endif

}  // namespace contextsteer::detail
