// SPDX-License-Identifier: MIT
// Steer: the fused map pipeline combine -> resolve -> choose, one cache-sized block of rows at a time.
#include "contextsteer/pipeline.hpp"

#include <algorithm>

#include "batch.hpp"
#include "cpu.hpp"

#if defined(CONTEXTSTEER_AVX2)
#include <bit>
#endif

namespace contextsteer {

namespace {

#if defined(CONTEXTSTEER_AVX2)

// Combine = max and resolve = mask of one row of K = 8H slots in registers, the same
// operations as the blocked path, so bit-identical to it:
// - combine: std::max(m0, m1) is _mm256_max_ps(m1, m0) (max_ps(a, b) = a > b ? a : b and
//   std::max(a, b) = a < b ? b : a), a fold std::max(o, m) is _mm256_max_ps(m, o), so
//   even NaN goes the same way; resolve: dg > t ? 0 : x with the same compare;
// - the finite check: |x| >= 2^60, inf or NaN is an absolute bit pattern >= 187 << 23,
//   all_finite's exponent test; one unsigned max a vector (`worst`), compared once per
//   call by inputs_finite.
template <std::size_t H, std::size_t B>
struct MaxMaskRows {
  const float* maps;
  std::size_t nb;  // B, or the number of maps at run time when B = 0
  std::size_t stride;
  const float* danger;
  __m256 t;
  __m256i worst;

  CS_AVX2 MaxMaskRows(const float* m, std::size_t b, std::size_t s, const float* d, float threshold)
      : maps(m),
        nb(B ? B : b),
        stride(s),
        danger(d),
        t(_mm256_set1_ps(threshold)),
        worst(_mm256_setzero_si256()) {}

  CS_AVX2 void check(__m256 v) {
    worst = _mm256_max_epu32(
        worst, _mm256_and_si256(_mm256_castps_si256(v), _mm256_set1_epi32(0x7fffffff)));
  }

  CS_AVX2 void row(std::size_t r, __m256 (&x)[H]) {
    constexpr std::size_t k = 8 * H;
    const float* row0 = maps + r * k;
    for (std::size_t i = 0; i < H; ++i) {
      x[i] = _mm256_loadu_ps(row0 + 8 * i);
      check(x[i]);
    }
    for (std::size_t s = 1; s < nb; ++s) {
      for (std::size_t i = 0; i < H; ++i) {
        const __m256 v = _mm256_loadu_ps(row0 + s * stride + 8 * i);
        check(v);
        x[i] = _mm256_max_ps(v, x[i]);
      }
    }
    for (std::size_t i = 0; i < H; ++i) {
      const __m256 d = _mm256_loadu_ps(danger + r * k + 8 * i);
      check(d);
      x[i] = _mm256_andnot_ps(_mm256_cmp_ps(d, t, _CMP_GT_OQ), x[i]);
    }
  }

  // Any lane above (187 << 23) - 1 (unsigned): |x| >= 2^60, inf or NaN.
  CS_AVX2 bool inputs_finite() const {
    const __m256i limit = _mm256_set1_epi32(0x5D800000 - 1);
    const __m256i over = _mm256_cmpeq_epi32(_mm256_max_epu32(worst, limit), limit);
    return _mm256_movemask_epi8(over) == -1;
  }
};

// steer with the defaults combine = max, resolve = mask and choose = argmax, for K = 8H,
// in one pass over each row: the B interest rows and the danger row are loaded once into
// registers, checked, combined, masked and the argmax taken, with nothing written but the
// choice (the blocked path writes the combined map, reads it back to resolve it, and reads
// it again to choose). Bit-identical to that path: MaxMaskRows' row, then choose_rows'
// argmax kernel (the row maximum, then the first slot equal to it; a row holding a NaN
// takes best_slot's loop), on the same values.
// Returns false when an input fails the check (the outputs are written all the same).
template <std::size_t H, std::size_t B>
CS_AVX2 bool steer_max_mask_argmax_avx2(const float* maps, std::size_t b, std::size_t stride,
                                        const float* danger, float threshold, const float* sx,
                                        const float* sy, float* dir, float* str, std::int32_t* slot,
                                        std::size_t begin, std::size_t end) {
  constexpr std::size_t k = 8 * H;
  MaxMaskRows<H, B> in(maps, b, stride, danger, threshold);
  for (std::size_t r = begin; r < end; ++r) {
    __m256 x[H];
    in.row(r, x);
    __m256 nan = _mm256_cmp_ps(x[0], x[H - 1], _CMP_UNORD_Q);
    for (std::size_t i = 1; i + 1 < H; i += 2)
      nan = _mm256_or_ps(nan, _mm256_cmp_ps(x[i], x[i + 1], _CMP_UNORD_Q));
    std::int32_t best;
    float value;  // the chosen slot's value
    if (_mm256_movemask_ps(nan)) [[unlikely]] {
      alignas(32) float row[k];
      for (std::size_t i = 0; i < H; ++i) _mm256_store_ps(row + 8 * i, x[i]);
      std::size_t j0 = 0;  // best_slot (choose.cpp): highest, lowest index on ties
      float top = row[0];
      for (std::size_t j = 1; j < k; ++j) {
        j0 = row[j] > top ? j : j0;
        top = std::max(top, row[j]);
      }
      best = top > 0.0f ? static_cast<std::int32_t>(j0) : -1;
      value = row[j0];
    } else {
      __m256 m[H];
      for (std::size_t i = 0; i < H; ++i) m[i] = x[i];
      for (std::size_t w = 1; w < H; w *= 2)
        for (std::size_t i = 0; i + w < H; i += 2 * w) m[i] = _mm256_max_ps(m[i], m[i + w]);
      __m256 top = _mm256_max_ps(m[0], _mm256_permute2f128_ps(m[0], m[0], 1));
      top = _mm256_max_ps(top, _mm256_shuffle_ps(top, top, _MM_SHUFFLE(1, 0, 3, 2)));
      top = _mm256_max_ps(top, _mm256_shuffle_ps(top, top, _MM_SHUFFLE(2, 3, 0, 1)));
      std::uint64_t eq = 0;
      for (std::size_t i = 0; i < H; ++i)
        eq |= static_cast<std::uint64_t>(_mm256_movemask_ps(_mm256_cmp_ps(x[i], top, _CMP_EQ_OQ)))
              << (8 * i);
      // A positive maximum equals the first slot holding it bit for bit (only zeros have
      // two encodings), so it is that slot's value.
      value = _mm256_cvtss_f32(top);
      best = value > 0.0f ? static_cast<std::int32_t>(std::countr_zero(eq)) : -1;
    }
    const bool some = best >= 0;
    const auto u = static_cast<std::size_t>(some ? best : 0);
    dir[2 * r] = some ? sx[u] : 0.0f;
    dir[2 * r + 1] = some ? sy[u] : 0.0f;
    str[r] = some ? std::clamp(value, 0.0f, 1.0f) : 0.0f;
    slot[r] = best;
  }
  return in.inputs_finite();
}

// steer with combine = max and resolve = mask and any other choose mode, for K = 8H: each
// row combined, masked and checked in registers (MaxMaskRows) and stored into a block of
// at most kSteerBlockFloats floats on the stack, then choose_rows on the block. The
// blocked path makes the same block with combine_rows and resolve_rows (a pass each, and
// the finite check a third pass over the inputs), so the values chosen from are the same
// bits. Returns false when an input fails the check (the outputs are written all the same).
template <std::size_t H, std::size_t B>
CS_AVX2 bool steer_max_mask_avx2(const float* maps, std::size_t b, std::size_t stride,
                                 const float* danger, float threshold, const SlotSet& slots,
                                 const ChooseParams& choose, std::span<float> direction,
                                 std::span<float> strength, std::span<std::int32_t> slot,
                                 std::size_t begin, std::size_t end) {
  constexpr std::size_t k = 8 * H;
  constexpr std::size_t block = kSteerBlockFloats / k;
  MaxMaskRows<H, B> in(maps, b, stride, danger, threshold);
  alignas(64) float buf[kSteerBlockFloats];  // uninitialised: every row is stored first
  for (std::size_t r0 = begin; r0 < end; r0 += block) {
    const std::size_t rows = std::min(block, end - r0);
    for (std::size_t r = 0; r < rows; ++r) {
      __m256 x[H];
      in.row(r0 + r, x);
      for (std::size_t i = 0; i < H; ++i) _mm256_store_ps(buf + r * k + 8 * i, x[i]);
    }
    choose_rows(std::span<const float>(buf, rows * k), k, slots, choose,
                direction.subspan(2 * r0, 2 * rows), strength.subspan(r0, rows),
                slot.subspan(r0, rows), 0, rows);
  }
  return in.inputs_finite();
}
#endif

}  // namespace

void steer_rows(std::span<const float> interest_maps, std::size_t b, std::size_t n, std::size_t k,
                std::span<const float> danger, const SlotSet& slots, const SteerParams& p,
                std::span<float> direction, std::span<float> strength, std::span<std::int32_t> slot,
                std::span<float> scratch, std::size_t begin, std::size_t end) {
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
    for (std::size_t s = 0; s < b; ++s)
      ok &= all_finite(interest_maps.data() + (s * n + r0) * k, (r1 - r0) * k);
    return ok;
  };
#if defined(CONTEXTSTEER_AVX2)
  if (p.combine == CombineMode::kMax && p.resolve.mode == ResolveMode::kMask &&
      (k == 8 || k == 16 || k == 32 || k == 64) && b >= 1 && detail::use_avx2()) {
    const bool argmax = p.choose.mode == ChooseMode::kArgmax;
    const float* sx = slots.x();
    const float* sy = slots.y();
    auto run = [&]<std::size_t H>(std::size_t r0, std::size_t r1) {
      // The usual numbers of interest maps unrolled; more at run time.
      auto with = [&]<std::size_t B>() {
        if (argmax)
          return steer_max_mask_argmax_avx2<H, B>(interest_maps.data(), b, n * k, danger.data(),
                                                  p.resolve.threshold, sx, sy, direction.data(),
                                                  strength.data(), slot.data(), r0, r1);
        return steer_max_mask_avx2<H, B>(interest_maps.data(), b, n * k, danger.data(),
                                         p.resolve.threshold, slots, p.choose, direction, strength,
                                         slot, r0, r1);
      };
      switch (b) {
        case 1:
          return with.template operator()<1>();
        case 2:
          return with.template operator()<2>();
        case 3:
          return with.template operator()<3>();
        case 4:
          return with.template operator()<4>();
        default:
          return with.template operator()<0>();
      }
    };
    for_rows(
        n, k * (b + 1), nullptr, [](std::size_t, std::size_t) { return true; },
        [&](std::size_t r0, std::size_t r1) {
          bool ok = true;
          switch (k) {
            case 8:
              ok = run.template operator()<1>(r0, r1);
              break;
            case 16:
              ok = run.template operator()<2>(r0, r1);
              break;
            case 32:
              ok = run.template operator()<4>(r0, r1);
              break;
            default:
              ok = run.template operator()<8>(r0, r1);
              break;
          }
          if (!ok && nonfinite) nonfinite->store(true, std::memory_order_relaxed);
        });
    return;
  }
#endif
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
