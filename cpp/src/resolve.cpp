// SPDX-License-Identifier: MIT
#include "contextsteer/resolve.hpp"

#include <algorithm>

#include "batch.hpp"

namespace contextsteer {

namespace {
// Godot "avoidance": the danger of slot m adds interest to the slots facing away from
// it, as a clamped-cosine lobe around -u_m. Taking the max over m (not the sum) keeps
// the added interest independent of K when danger covers many adjacent slots.
[[gnu::always_inline]] inline void avoid_opposite_row(const float* in, const float* dg,
                                                      const float* dx, const float* dy,
                                                      std::size_t k, float* o) {
  for (std::size_t j = 0; j < k; ++j) {
    float add = 0.0f;
    for (std::size_t m = 0; m < k; ++m) {
      const float opposite = -(dx[j] * dx[m] + dy[j] * dy[m]);
      add = std::max(add, dg[m] * std::max(opposite, 0.0f));
    }
    o[j] = in[j] + add;
  }
}
}  // namespace

// Compiled for AVX2 and the baseline (element-wise float operations: same results).
CONTEXTSTEER_AVX2_CLONES void resolve_rows(std::span<const float> interest,
                                           std::span<const float> danger, std::size_t k,
                                           const ResolveParams& p, const SlotSet* slots,
                                           std::span<float> out, std::size_t begin,
                                           std::size_t end) {
  const float* in = interest.data() + begin * k;
  const float* dg = danger.data() + begin * k;
  float* o = out.data() + begin * k;
  const std::size_t len = (end - begin) * k;
  switch (p.mode) {
    case ResolveMode::kMask: {
      const float t = p.threshold;
      // Both operands loaded unconditionally so that the select vectorises (no branch).
      for (std::size_t i = 0; i < len; ++i) {
        const float x = in[i];
        o[i] = dg[i] > t ? 0.0f : x;
      }
      break;
    }
    case ResolveMode::kSubtract:
      for (std::size_t i = 0; i < len; ++i) o[i] = std::max(in[i] - dg[i], 0.0f);
      break;
    case ResolveMode::kSubtractUnclamped:
      for (std::size_t i = 0; i < len; ++i) o[i] = in[i] - dg[i];
      break;
    case ResolveMode::kScale:
      for (std::size_t i = 0; i < len; ++i) o[i] = in[i] * (1.0f - std::min(std::max(dg[i], 0.0f), 1.0f));
      break;
    case ResolveMode::kMaskMinDanger:
      for (std::size_t r = 0; r < end - begin; ++r) {
        const float* d = dg + r * k;
        float lo = d[0];
        for (std::size_t j = 1; j < k; ++j) lo = std::min(lo, d[j]);
        const float limit = lo + p.epsilon;
        // Read the row's danger before writing: out may be interest.
        for (std::size_t j = 0; j < k; ++j) {
          const float x = in[r * k + j];
          o[r * k + j] = d[j] <= limit ? x : 0.0f;
        }
      }
      break;
    case ResolveMode::kAvoidOpposite:
      for (std::size_t r = 0; r < end - begin; ++r) {
        avoid_opposite_row(in + r * k, dg + r * k, slots->x(), slots->y(), k, o + r * k);
      }
      break;
  }
}

void resolve(std::span<const float> interest, std::span<const float> danger, std::size_t n,
             std::size_t k, const ResolveParams& p, const SlotSet* slots, std::span<float> out,
             std::atomic<bool>* nonfinite) {
  for_rows(
      n, k, nonfinite,
      [&](std::size_t b, std::size_t e) {
        return all_finite(interest.data() + b * k, (e - b) * k) &
               all_finite(danger.data() + b * k, (e - b) * k);
      },
      [&](std::size_t b, std::size_t e) { resolve_rows(interest, danger, k, p, slots, out, b, e); });
}

}  // namespace contextsteer
