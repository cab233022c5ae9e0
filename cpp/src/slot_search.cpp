// SPDX-License-Identifier: MIT
// The velocity decision's searches over a slot row: the slot nearest a heading and the
// interest peak, eight slots a step where AVX2 is (slot_search.hpp).
#include "slot_search.hpp"

#include <algorithm>
#include <bit>

#include "cpu.hpp"

namespace contextsteer::detail {

/// The slot whose direction is nearest d: the first q with the largest dir_q·d (0 when
/// none exceeds −2, e.g. for a NaN d).
std::size_t nearest_slot_scalar(const float* dir, std::size_t k, Vec2 d) {
  std::size_t q = 0;
  float best = -2.0f;
  for (std::size_t j = 0; j < k; ++j) {
    const float c = dir[2 * j] * d.x + dir[2 * j + 1] * d.y;
    if (c > best) best = c, q = j;
  }
  return q;
}

#if defined(CONTEXTSTEER_AVX2)
/// nearest_slot_scalar for k a multiple of 8, at most 64, eight slots a step (AVX2, no
/// FMA): the same products and sums per slot (hadd adds x·d.x and y·d.y in that order),
/// then the first slot equal to the maximum. A NaN product, or a maximum not above −2,
/// falls back to the scalar loop, so the answer is always the loop's.
CS_AVX2 std::size_t nearest_slot_avx2(const float* dir, std::size_t k, Vec2 d) {
  // (d.x, d.y) four times: one 64-bit broadcast from the register d arrives in. Built with
  // _mm256_setr_ps, GCC stored the pair four times to the stack and reloaded the 32 bytes
  // inside the loop, a load that store-forwarding cannot serve: 3.5 % of the velocity
  // step's time (perf, crowd-track-10k) for 0.3 % of its instructions.
  const __m256 dd = _mm256_castpd_ps(_mm256_set1_pd(std::bit_cast<double>(d)));
  const __m256i order = _mm256_setr_epi32(0, 1, 4, 5, 2, 3, 6, 7);
  alignas(32) float c[64];
  __m256 mx = _mm256_set1_ps(-2.0f), nan = _mm256_setzero_ps();
  for (std::size_t j = 0; j < k; j += 8) {
    const __m256 a = _mm256_mul_ps(_mm256_loadu_ps(dir + 2 * j), dd);
    const __m256 b = _mm256_mul_ps(_mm256_loadu_ps(dir + 2 * j + 8), dd);
    const __m256 v = _mm256_permutevar8x32_ps(_mm256_hadd_ps(a, b), order);
    _mm256_store_ps(c + j, v);
    mx = _mm256_max_ps(mx, v);
    nan = _mm256_or_ps(nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
  }
  if (_mm256_movemask_ps(nan)) return nearest_slot_scalar(dir, k, d);
  __m256 m = _mm256_max_ps(mx, _mm256_permute2f128_ps(mx, mx, 1));
  m = _mm256_max_ps(m, _mm256_permute_ps(m, 0b01001110));
  m = _mm256_max_ps(m, _mm256_permute_ps(m, 0b10110001));
  const float top = _mm256_cvtss_f32(m);
  if (!(top > -2.0f)) return nearest_slot_scalar(dir, k, d);
  for (std::size_t j = 0; j < k; j += 8) {
    const int hit = _mm256_movemask_ps(_mm256_cmp_ps(_mm256_load_ps(c + j), m, _CMP_EQ_OQ));
    if (hit) return j + static_cast<std::size_t>(__builtin_ctz(static_cast<unsigned>(hit)));
  }
  return 0;  // not reached: the maximum is one of the products
}

/// std::max_element(v, v + k) − v for k a multiple of 8 (AVX2): the first index of the
/// largest value (equal values, ±0 included, keep the first). A row holding a NaN falls
/// back to std::max_element, whose answer then depends on where the NaN is.
CS_AVX2 std::size_t first_max_avx2(const float* v, std::size_t k) {
  __m256 mx = _mm256_loadu_ps(v);
  __m256 nan = _mm256_cmp_ps(mx, mx, _CMP_UNORD_Q);
  for (std::size_t j = 8; j < k; j += 8) {
    const __m256 x = _mm256_loadu_ps(v + j);
    mx = _mm256_max_ps(mx, x);
    nan = _mm256_or_ps(nan, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
  }
  if (_mm256_movemask_ps(nan)) return static_cast<std::size_t>(std::max_element(v, v + k) - v);
  __m256 m = _mm256_max_ps(mx, _mm256_permute2f128_ps(mx, mx, 1));
  m = _mm256_max_ps(m, _mm256_permute_ps(m, 0b01001110));
  m = _mm256_max_ps(m, _mm256_permute_ps(m, 0b10110001));
  for (std::size_t j = 0; j < k; j += 8) {
    const int hit = _mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(v + j), m, _CMP_EQ_OQ));
    if (hit) return j + static_cast<std::size_t>(__builtin_ctz(static_cast<unsigned>(hit)));
  }
  return 0;  // not reached: the maximum is one of the values
}
#endif

/// std::max_element(v, v + k) − v (the interest peak), eight values a step where AVX2 is.
std::size_t first_max(const float* v, std::size_t k) {
#if defined(CONTEXTSTEER_AVX2)
  if (k % 8 == 0 && detail::use_avx2()) return first_max_avx2(v, k);
#endif
  return static_cast<std::size_t>(std::max_element(v, v + k) - v);
}

std::size_t nearest_slot(const float* dir, std::size_t k, Vec2 d) {
#if defined(CONTEXTSTEER_AVX2)
  if (k % 8 == 0 && k <= 64 && detail::use_avx2()) return nearest_slot_avx2(dir, k, d);
#endif
  return nearest_slot_scalar(dir, k, d);
}

}  // namespace contextsteer::detail
