// SPDX-License-Identifier: MIT
// Steer: the fused map pipeline combine -> resolve -> choose, one cache-sized block of rows at a time.
#include "contextsteer/pipeline.hpp"

#include <algorithm>

#include "batch.hpp"

namespace contextsteer {

void steer_rows(std::span<const float> interest_maps, std::size_t b, std::size_t n, std::size_t k,
                std::span<const float> danger, const SlotSet& slots, const SteerParams& p,
                std::span<float> direction, std::span<float> strength,
                std::span<std::int32_t> slot, std::span<float> scratch, std::size_t begin,
                std::size_t end) {
  const std::size_t block = std::max<std::size_t>(1, kSteerBlockFloats / k);
  for (std::size_t r0 = begin; r0 < end; r0 += block) {
    const std::size_t rows = std::min(block, end - r0);
    // Row r0 becomes row 0 of the block: the map stack keeps its stride N*K between maps.
    const std::span<float> buf = scratch.first(rows * k);
    combine_rows(interest_maps.subspan(r0 * k), b, n, k, p.combine, p.weights, buf, 0, rows);
    resolve_rows(buf, danger.subspan(r0 * k, rows * k), k, p.resolve, &slots, buf, 0, rows);
    choose_rows(buf, k, slots, p.choose, direction.subspan(2 * r0, 2 * rows),
                strength.subspan(r0, rows), slot.subspan(r0, rows), 0, rows);
  }
}

void steer(std::span<const float> interest_maps, std::size_t b, std::size_t n, std::size_t k,
           std::span<const float> danger, const SlotSet& slots, const SteerParams& p,
           std::span<float> direction, std::span<float> strength, std::span<std::int32_t> slot,
           std::span<float> big_scratch, std::atomic<bool>* nonfinite) {
  const auto finite = [&](std::size_t r0, std::size_t r1) {
    bool ok = all_finite(danger.data() + r0 * k, (r1 - r0) * k);
    for (std::size_t s = 0; s < b; ++s) ok &= all_finite(interest_maps.data() + (s * n + r0) * k, (r1 - r0) * k);
    return ok;
  };
  if (k > kSteerBlockFloats) {  // rows too long for a block on the stack
    for_rows(n, k * (b + 1), nonfinite, finite, [&](std::size_t r0, std::size_t r1) {
      steer_rows(interest_maps, b, n, k, danger, slots, p, direction, strength, slot,
                 big_scratch.subspan(r0 * k, (r1 - r0) * k), r0, r1);
    });
    return;
  }
  for_rows(n, k * (b + 1), nonfinite, finite, [&](std::size_t r0, std::size_t r1) {
    alignas(64) float buf[kSteerBlockFloats];  // uninitialised: combine writes it first
    steer_rows(interest_maps, b, n, k, danger, slots, p, direction, strength, slot, buf, r0, r1);
  });
}

}  // namespace contextsteer
