// SPDX-License-Identifier: MIT
#include "contextsteer/combine.hpp"

#include <algorithm>

#include "batch.hpp"

namespace contextsteer {

namespace {
// Sums, weighted sums and products saturate at kSaturate (batch.hpp): B maps each below
// 2^60 can multiply (or, B in the hundreds, add) beyond float32.

// Element-wise loops over a contiguous range; no __restrict because out may be an input
// (the compiler versions the loops on an overlap check and still vectorises). Always
// inlined, so that they are compiled for the ISA of each clone of combine_rows.
[[gnu::always_inline]] inline void first(const float* m, float w, bool weighted, float* o,
                                         std::size_t len) {
  if (weighted) {
    for (std::size_t i = 0; i < len; ++i) o[i] = sat(w * m[i]);
  } else if (o != m) {
    std::copy(m, m + len, o);
  }
}

// o = fold(first(m0), m1) in one pass (same operations, so the same result).
[[gnu::always_inline]] inline void first_two(CombineMode mode, const float* m0, const float* m1,
                                             float w0, float w1, float* o, std::size_t len) {
  switch (mode) {
    case CombineMode::kMax:
      for (std::size_t i = 0; i < len; ++i) o[i] = std::max(m0[i], m1[i]);
      break;
    case CombineMode::kMin:
      for (std::size_t i = 0; i < len; ++i) o[i] = std::min(m0[i], m1[i]);
      break;
    case CombineMode::kSum:
      for (std::size_t i = 0; i < len; ++i) o[i] = sat(m0[i] + m1[i]);
      break;
    case CombineMode::kWeightedSum:
      for (std::size_t i = 0; i < len; ++i) o[i] = sat(w0 * m0[i] + w1 * m1[i]);
      break;
    case CombineMode::kMultiply:
      for (std::size_t i = 0; i < len; ++i) o[i] = sat(m0[i] * m1[i]);
      break;
  }
}

[[gnu::always_inline]] inline void fold(CombineMode mode, const float* m, float w, float* o,
                                        std::size_t len) {
  switch (mode) {
    case CombineMode::kMax:
      for (std::size_t i = 0; i < len; ++i) o[i] = std::max(o[i], m[i]);
      break;
    case CombineMode::kMin:
      for (std::size_t i = 0; i < len; ++i) o[i] = std::min(o[i], m[i]);
      break;
    case CombineMode::kSum:
      for (std::size_t i = 0; i < len; ++i) o[i] = sat(o[i] + m[i]);
      break;
    case CombineMode::kWeightedSum:
      for (std::size_t i = 0; i < len; ++i) o[i] = sat(o[i] + w * m[i]);
      break;
    case CombineMode::kMultiply:
      for (std::size_t i = 0; i < len; ++i) o[i] = sat(o[i] * m[i]);
      break;
  }
}
}  // namespace

// Compiled for AVX2 and the baseline (element-wise float operations: same results).
CONTEXTSTEER_AVX2_CLONES void combine_rows(std::span<const float> maps, std::size_t b,
                                           std::size_t n, std::size_t k, CombineMode mode,
                                           std::span<const float> weights, std::span<float> out,
                                           std::size_t begin, std::size_t end) {
  const bool weighted = mode == CombineMode::kWeightedSum;
  // Work in blocks that stay in L1 while all B maps are folded into them.
  constexpr std::size_t kBlock = 2048;
  const std::size_t hi = end * k;
  for (std::size_t lo = begin * k; lo < hi; lo += kBlock) {
    const std::size_t len = std::min(kBlock, hi - lo);
    float* o = out.data() + lo;
    if (b == 1) {
      first(maps.data() + lo, weighted ? weights[0] : 1.0f, weighted, o, len);
    } else {
      first_two(mode, maps.data() + lo, maps.data() + n * k + lo, weighted ? weights[0] : 1.0f,
                weighted ? weights[1] : 1.0f, o, len);
    }
    for (std::size_t s = 2; s < b; ++s) {
      fold(mode, maps.data() + s * n * k + lo, weighted ? weights[s] : 1.0f, o, len);
    }
  }
}

void combine(std::span<const float> maps, std::size_t b, std::size_t n, std::size_t k,
             CombineMode mode, std::span<const float> weights, std::span<float> out,
             std::atomic<bool>* nonfinite) {
  for_rows(
      n, k * b, nonfinite,
      [&](std::size_t r0, std::size_t r1) {
        bool ok = true;
        for (std::size_t s = 0; s < b; ++s)
          ok &= all_finite(maps.data() + (s * n + r0) * k, (r1 - r0) * k);
        return ok;
      },
      [&](std::size_t r0, std::size_t r1) {
        combine_rows(maps, b, n, k, mode, weights, out, r0, r1);
      });
}

}  // namespace contextsteer
