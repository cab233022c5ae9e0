// SPDX-License-Identifier: MIT
#include "contextsteer/dot_map.hpp"

#include <algorithm>
#include <cmath>

#include "batch.hpp"

namespace contextsteer {

namespace {
template <DotShape S>
void fill_row(const float* __restrict dx, const float* __restrict dy, std::size_t k, float ux,
              float uy, float w, float* __restrict o) {
  for (std::size_t j = 0; j < k; ++j) {
    // sat: a value rounded a little above 1 times a saturated weight.
    if constexpr (S == DotShape::kChord) o[j] = sat(chord_value(dx[j], dy[j], ux, uy) * w);
    else o[j] = sat(dot_shape_value(S, dx[j] * ux + dy[j] * uy) * w);
  }
}

template <DotShape S>
void rows(const SlotSet& slots, const float* vec, const DotMapParams& p, float* out,
          std::size_t begin, std::size_t end) {
  const std::size_t k = slots.size();
  for (std::size_t i = begin; i < end; ++i) {
    const float vx = vec[2 * i], vy = vec[2 * i + 1];
    // Length in double: hypot without overflow for any finite float vector.
    const double len = std::hypot(double(vx), double(vy));
    float ux = 0.0f, uy = 0.0f;
    if (len > 0.0) {
      ux = static_cast<float>(vx / len);
      uy = static_cast<float>(vy / len);
    }
    // The weight, the agent's weight and the length multiplied in double and saturated:
    // each below 2^60 (the length below 1.5e8), their product can pass float32, and
    // 0 · inf would be NaN. A shape's value is within [-1, 1], so the row stays below
    // about kSaturate too.
    double w = p.weight;
    if (!p.agent_weights.empty()) w *= p.agent_weights[i];
    if (p.magnitude) w *= len;
    const float ws = sat_weight(w);
    fill_row<S>(slots.x(), slots.y(), k, ux, uy, ws, out + i * k);
  }
}
}  // namespace

void dot_map_rows(const SlotSet& slots, std::span<const float> vectors, const DotMapParams& p,
                  std::span<float> out, std::size_t begin, std::size_t end) {
  switch (p.shape) {
    case DotShape::kCosine:
      rows<DotShape::kCosine>(slots, vectors.data(), p, out.data(), begin, end);
      break;
    case DotShape::kClampedCosine:
      rows<DotShape::kClampedCosine>(slots, vectors.data(), p, out.data(), begin, end);
      break;
    case DotShape::kHalfCosine:
      rows<DotShape::kHalfCosine>(slots, vectors.data(), p, out.data(), begin, end);
      break;
    case DotShape::kOppositeCosine:
      rows<DotShape::kOppositeCosine>(slots, vectors.data(), p, out.data(), begin, end);
      break;
    case DotShape::kChord:
      rows<DotShape::kChord>(slots, vectors.data(), p, out.data(), begin, end);
      break;
  }
}

void dot_map(const SlotSet& slots, std::span<const float> vectors, const DotMapParams& p,
             std::span<float> out, std::atomic<bool>* nonfinite) {
  const std::size_t n = vectors.size() / 2;
  const bool weights = !p.agent_weights.empty();
  for_rows(
      n, slots.size(), nonfinite,
      [&](std::size_t b, std::size_t e) {
        return all_finite(vectors.data() + 2 * b, 2 * (e - b)) &&
               (!weights || all_finite(p.agent_weights.data() + b, e - b));
      },
      [&](std::size_t b, std::size_t e) { dot_map_rows(slots, vectors, p, out, b, e); });
}

}  // namespace contextsteer
