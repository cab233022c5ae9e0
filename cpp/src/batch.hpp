// SPDX-License-Identifier: MIT
// Batched row loops shared by the map kernels: thread split plus a fused finite check.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "parallel.hpp"

namespace contextsteer {

/// Marks a function to be compiled twice, for AVX2 and for the baseline ISA, with the
/// loader picking one at start-up (GCC/Clang ifunc on x86-64 Linux; elsewhere a plain
/// function). Only for loops whose result does not depend on the vector width
/// (element-wise float operations, integer reductions): no FMA is enabled, so the
/// results are bit-identical either way. Not under ThreadSanitizer: its instrumented ifunc
/// resolvers run during the loader's relocation, before TSan is set up, and the extension
/// crashed on import (the baseline function is used then).
#if defined(__x86_64__) && defined(__linux__) && defined(__has_attribute) && \
    !defined(__SANITIZE_THREAD__)
#if __has_attribute(target_clones)
#define CONTEXTSTEER_AVX2_CLONES __attribute__((target_clones("avx2", "default")))
#endif
#endif
#ifndef CONTEXTSTEER_AVX2_CLONES
#define CONTEXTSTEER_AVX2_CLONES
#endif

/// Largest magnitude a map kernel accepts (exclusive): 2^60 ≈ 1.15e18. Sums of up to
/// kMaxSlots such values, their squares and products of two stay finite in float32, so
/// finite inputs never give inf or NaN.
inline constexpr float kMaxMapMagnitude = 1152921504606846976.0f;

/// The largest float below kMaxMapMagnitude. Sums, weighted sums, products, resolved
/// values, spread sums and the hysteresis bonus saturate there: maps each below 2^60 can
/// add or multiply beyond it (or beyond float32), and a map the next stage or a functional
/// call refuses, or inf, or NaN from 0 · inf, must not reach the choice. A saturated slot
/// ties with others.
inline constexpr float kSaturate = 1152921435887370240.0f;  // 2^60 − 2^36
static_assert(kSaturate < kMaxMapMagnitude);

/// x saturated to ±kSaturate (NaN stays NaN; the inputs were checked finite).
[[gnu::always_inline]] inline float sat(float x) {
  return std::min(std::max(x, -kSaturate), kSaturate);
}

/// A product of weights (each below 2^60, multiplied in double) as a float saturated at
/// ±kSaturate: finite, so that a map value times it is never 0 · inf.
inline float sat_weight(double w) {
  return static_cast<float>(std::clamp(w, -double{kSaturate}, double{kSaturate}));
}

/// True when all n floats are finite and |x| < kMaxMapMagnitude. Pure, allocation-free.
bool all_finite(const float* p, std::size_t n);

/// Floats per block of the fused finite check (16 KiB: the block is still in L1 when
/// the kernel reads it right after the check, so inputs cross the memory bus once).
inline constexpr std::size_t kCheckBlockFloats = 4096;
/// Minimum floats of work handed to one thread.
inline constexpr std::size_t kGrainFloats = 16384;

/// Runs body(begin, end) over rows [0, n) of K floats each on the thread pool. When
/// `nonfinite` is not null, rows are processed in small blocks and each block's inputs
/// are checked with inputs_finite(begin, end) just before body reads them; any
/// non-finite input sets *nonfinite (outputs are still written). Each row is written by
/// exactly one call of body, so results do not depend on the thread count.
template <class Check, class Body>
void for_rows(std::size_t n, std::size_t k, std::atomic<bool>* nonfinite, Check&& inputs_finite,
              Body&& body) {
  const std::size_t kk = std::max<std::size_t>(k, 1);
  const std::size_t grain = std::max<std::size_t>(1, kGrainFloats / kk);
  const std::size_t block = std::max<std::size_t>(1, kCheckBlockFloats / kk);
  parallel_for(n, grain, [&](std::size_t begin, std::size_t end) {
    if (!nonfinite) {
      body(begin, end);
      return;
    }
    bool ok = true;
    for (std::size_t b = begin; b < end; b += block) {
      const std::size_t e = std::min(end, b + block);
      ok &= inputs_finite(b, e);
      body(b, e);
    }
    if (!ok) nonfinite->store(true, std::memory_order_relaxed);
  });
}

}  // namespace contextsteer
