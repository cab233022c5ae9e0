// SPDX-License-Identifier: MIT
#include "contextsteer/postprocess.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "batch.hpp"
#include "contextsteer/slot_set.hpp"
#include "thread_scratch.hpp"

namespace contextsteer {

void turn_row(const float* in, const SlotSet& slots, double delta, float* out) {
  const std::size_t k = slots.size();
  if (delta == 0.0) {
    std::copy(in, in + k, out);
    return;
  }
  // Slot angles from slot 0, counter-clockwise: 0, gap 0, gap 0 + gap 1, ..., a turn.
  struct TurnRowSite;
  std::vector<double>& at = detail::thread_scratch<std::vector<double>, TurnRowSite>();
  at.resize(k + 1);
  at[0] = 0.0;
  for (std::size_t i = 0; i < k; ++i) at[i + 1] = at[i] + double(slots.gaps()[i]);
  const double turn = at[k];
  for (std::size_t j = 0; j < k; ++j) {
    double phi = std::fmod(at[j] + delta, turn);
    if (phi < 0.0) phi += turn;
    // The slot i at or before phi (phi < turn = at[k], so i < k).
    const std::size_t i = static_cast<std::size_t>(
        std::upper_bound(at.begin(), at.begin() + static_cast<std::ptrdiff_t>(k), phi) -
        at.begin() - 1);
    const double t = (phi - at[i]) / (at[i + 1] - at[i]);
    const double a = in[i], b = in[(i + 1) % k];
    out[j] = static_cast<float>(a + t * (b - a));
  }
}

void spread_rows(std::span<const float> values, std::size_t k, std::span<const float> kernel,
                 SpreadMode mode, std::span<float> out, std::size_t begin, std::size_t end) {
  const std::size_t len = kernel.size();
  const std::size_t h = len / 2;
  for (std::size_t r = begin; r < end; ++r) {
    const float* __restrict v = values.data() + r * k;
    float* __restrict o = out.data() + r * k;
    for (std::size_t m = 0; m < len; ++m) {
      const float w = kernel[m];
      // Source slot of out_j is j + m - h (mod K): split the ring into two straight runs.
      const std::size_t shift = (m + k - h) % k;  // source = (j + shift) mod K
      const std::size_t split = k - shift;        // j < split: source j + shift
      // Saturated at kSaturate (batch.hpp) term by term: a kernel weight and a value each
      // below 2^60 multiply far beyond it, and K such terms beyond float32.
      if (m == 0) {
        for (std::size_t j = 0; j < split; ++j) o[j] = sat(w * v[j + shift]);
        for (std::size_t j = split; j < k; ++j) o[j] = sat(w * v[j - split]);
      } else if (mode == SpreadMode::kSum) {
        for (std::size_t j = 0; j < split; ++j) o[j] = sat(o[j] + sat(w * v[j + shift]));
        for (std::size_t j = split; j < k; ++j) o[j] = sat(o[j] + sat(w * v[j - split]));
      } else {
        for (std::size_t j = 0; j < split; ++j) o[j] = std::max(o[j], sat(w * v[j + shift]));
        for (std::size_t j = split; j < k; ++j) o[j] = std::max(o[j], sat(w * v[j - split]));
      }
    }
  }
}

void spread(std::span<const float> values, std::size_t n, std::size_t k,
            std::span<const float> kernel, SpreadMode mode, std::span<float> out,
            std::atomic<bool>* nonfinite) {
  for_rows(
      n, k * kernel.size(), nonfinite,
      [&](std::size_t b, std::size_t e) { return all_finite(values.data() + b * k, (e - b) * k); },
      [&](std::size_t b, std::size_t e) { spread_rows(values, k, kernel, mode, out, b, e); });
}

void blend_rows(std::span<const float> previous, std::span<const float> current, std::size_t k,
                float alpha, std::span<float> out, std::size_t begin, std::size_t end) {
  const float* p = previous.data() + begin * k;
  const float* c = current.data() + begin * k;
  float* o = out.data() + begin * k;
  const std::size_t len = (end - begin) * k;
  for (std::size_t i = 0; i < len; ++i) o[i] = p[i] + alpha * (c[i] - p[i]);
}

void blend(std::span<const float> previous, std::span<const float> current, std::size_t n,
           std::size_t k, float alpha, std::span<float> out, std::atomic<bool>* nonfinite) {
  for_rows(
      n, k, nonfinite,
      [&](std::size_t b, std::size_t e) {
        return all_finite(previous.data() + b * k, (e - b) * k) &
               all_finite(current.data() + b * k, (e - b) * k);
      },
      [&](std::size_t b, std::size_t e) { blend_rows(previous, current, k, alpha, out, b, e); });
}

}  // namespace contextsteer
