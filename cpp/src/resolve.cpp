// SPDX-License-Identifier: MIT
#include "contextsteer/resolve.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "batch.hpp"
#include "thread_scratch.hpp"

namespace contextsteer {

namespace {
// Godot "avoidance": the danger of slot m adds interest to the slots facing away from
// it, as a clamped-cosine lobe around -u_m. Taking the max over m (not the sum) keeps
// the added interest independent of K when danger covers many adjacent slots.
[[gnu::always_inline]] inline float lobe(const float* dg, const float* dx, const float* dy,
                                         std::size_t j, std::size_t m) {
  const float opposite = -(dx[j] * dx[m] + dy[j] * dy[m]);
  return dg[m] * std::max(opposite, 0.0f);
}

// Rings up to this size take every pair (K² products, cheap and branch-free); larger
// ones visit the dangerous slots from the most dangerous down and stop as soon as no
// remaining slot can beat the best lobe so far, so a huge ring costs about K·log K
// instead of K² (K = 65536: seconds a row). The maximum is the same either way.
constexpr std::size_t kAllPairs = 64;

[[gnu::always_inline]] inline void avoid_opposite_row(const float* in, const float* dg,
                                                      const float* dx, const float* dy,
                                                      std::size_t k, float* o) {
  if (k <= kAllPairs) {
    for (std::size_t j = 0; j < k; ++j) {
      float add = 0.0f;
      for (std::size_t m = 0; m < k; ++m) add = std::max(add, lobe(dg, dx, dy, j, m));
      o[j] = sat(in[j] + add);
    }
    return;
  }
  // The slots with danger, in slot order (the vector grows once per thread).
  struct OrderSite;
  std::vector<std::uint32_t>& order =
      detail::thread_scratch<std::vector<std::uint32_t>, OrderSite>();
  order.clear();
  for (std::size_t m = 0; m < k; ++m)
    if (dg[m] > 0.0f) order.push_back(static_cast<std::uint32_t>(m));
  std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    return dg[a] > dg[b] || (dg[a] == dg[b] && a < b);
  });
  // |u_j·u_m| <= 1 up to rounding, so lobe(j, m) <= dg[m]·kCap: once that bound (rounded,
  // and rounding is monotonic) is no more than the best, no later slot can raise it.
  constexpr float kCap = 1.0f + 1e-6f;
  for (std::size_t j = 0; j < k; ++j) {
    float add = 0.0f;
    for (const std::uint32_t m : order) {
      if (dg[m] * kCap <= add) break;
      add = std::max(add, lobe(dg, dx, dy, j, m));
    }
    o[j] = sat(in[j] + add);
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
    // Interest minus a negative danger can pass 2^60 (saturated: kSaturate, batch.hpp), a
    // map that choose, and a hand-composed pipeline, would refuse.
    case ResolveMode::kSubtract:
      for (std::size_t i = 0; i < len; ++i)
        o[i] = std::min(std::max(in[i] - dg[i], 0.0f), kSaturate);
      break;
    case ResolveMode::kSubtractUnclamped:
      for (std::size_t i = 0; i < len; ++i) o[i] = sat(in[i] - dg[i]);
      break;
    case ResolveMode::kScale:
      for (std::size_t i = 0; i < len; ++i)
        o[i] = in[i] * (1.0f - std::min(std::max(dg[i], 0.0f), 1.0f));
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
      [&](std::size_t b, std::size_t e) {
        resolve_rows(interest, danger, k, p, slots, out, b, e);
      });
}

}  // namespace contextsteer
