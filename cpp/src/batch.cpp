// SPDX-License-Identifier: MIT
// Batched row loops shared by the map kernels: the finite check.
#include "batch.hpp"

namespace contextsteer {

// Integer arithmetic on the exponent bits, no branches, so the loop vectorises: adding
// one to an all-ones exponent carries into the sign bit (the other bits of the sums are
// ignored, so they are masked once at the end; four independent accumulators keep the
// vector units busy).
// Adding (256 − 187) << 23 to the exponent field carries into the sign bit exactly when
// the biased exponent is >= 187, i.e. |x| >= 2^60 (inf and NaN have exponent 255).
constexpr std::uint32_t kExponentGuard = (256u - 187u) << 23;
static_assert(kMaxMapMagnitude == 1152921504606846976.0f, "2^60 = the exponent guard's bound");

CONTEXTSTEER_AVX2_CLONES bool all_finite(const float* p, std::size_t n) {
  std::uint32_t bad[4] = {0, 0, 0, 0};
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    for (std::size_t a = 0; a < 4; ++a) {
      for (std::size_t l = 0; l < 4; ++l) {
        std::uint32_t u;
        std::memcpy(&u, p + i + 4 * a + l, sizeof u);
        bad[l] |= (u & 0x7f800000u) + kExponentGuard;
      }
    }
  }
  for (; i < n; ++i) {
    std::uint32_t u;
    std::memcpy(&u, p + i, sizeof u);
    bad[0] |= (u & 0x7f800000u) + kExponentGuard;
  }
  return ((bad[0] | bad[1] | bad[2] | bad[3]) & 0x80000000u) == 0;
}

}  // namespace contextsteer
