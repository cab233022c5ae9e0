// SPDX-License-Identifier: MIT
// Batched row loops shared by the map kernels: thread split plus a fused finite check.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "contextsteer/parallel.hpp"

namespace contextsteer {

/// True when all n floats are finite. Integer arithmetic on the exponent bits, no
/// branches, so the loop vectorises: adding one to an all-ones exponent carries into
/// the sign bit (the other bits of the sums are ignored, so they are only masked once at
/// the end; four independent accumulators keep the vector units busy). Pure,
/// allocation-free.
inline bool all_finite(const float* p, std::size_t n) {
  std::uint32_t bad[4] = {0, 0, 0, 0};
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    for (std::size_t a = 0; a < 4; ++a) {
      for (std::size_t l = 0; l < 4; ++l) {
        std::uint32_t u;
        std::memcpy(&u, p + i + 4 * a + l, sizeof u);
        bad[l] |= (u & 0x7f800000u) + 0x00800000u;
      }
    }
  }
  for (; i < n; ++i) {
    std::uint32_t u;
    std::memcpy(&u, p + i, sizeof u);
    bad[0] |= (u & 0x7f800000u) + 0x00800000u;
  }
  return ((bad[0] | bad[1] | bad[2] | bad[3]) & 0x80000000u) == 0;
}

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
