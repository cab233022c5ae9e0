// SPDX-License-Identifier: MIT
#include "exp_float.hpp"

#include "cpu.hpp"

namespace contextsteer::detail {

namespace {

#if defined(CONTEXTSTEER_AVX2)
// Four doubles of exp_float's table method, the same operations in the same order (each
// _mm256_fmadd_pd / _mm256_fmsub_pd a correctly rounded fused multiply-add as std::fma is).
CS_AVX2_FMA __m128 exp4(__m256d xd) {
  using D = ExpFloatData;
  const __m256d kds = _mm256_fmadd_pd(_mm256_set1_pd(D::inv_ln2_n), xd, _mm256_set1_pd(D::shift));
  const __m256i ki = _mm256_castpd_si256(kds);
  const __m256d kd = _mm256_sub_pd(kds, _mm256_set1_pd(D::shift));
  const __m256d r = _mm256_fmsub_pd(_mm256_set1_pd(D::inv_ln2_n), xd, kd);
  const __m256i idx = _mm256_and_si256(ki, _mm256_set1_epi64x(31));
  const __m256i t = _mm256_i64gather_epi64(reinterpret_cast<const long long*>(D::table), idx, 8);
  const __m256d s = _mm256_castsi256_pd(_mm256_add_epi64(t, _mm256_slli_epi64(ki, 47)));
  const __m256d z = _mm256_fmadd_pd(r, _mm256_set1_pd(D::c0), _mm256_set1_pd(D::c1));
  const __m256d r2 = _mm256_mul_pd(r, r);
  const __m256d y1 = _mm256_fmadd_pd(r, _mm256_set1_pd(D::c2), _mm256_set1_pd(1.0));
  const __m256d y = _mm256_fmadd_pd(z, r2, y1);
  return _mm256_cvtpd_ps(_mm256_mul_pd(y, s));  // round to nearest, as static_cast<float>
}

CS_AVX2_FMA void exp_floats_avx2(float* x, std::size_t n) {
  std::size_t i = 0;
  const __m256i limit = _mm256_set1_epi32(static_cast<int>(ExpFloatData::top_limit));
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    const __m256i top =
        _mm256_and_si256(_mm256_srli_epi32(_mm256_castps_si256(v), 20), _mm256_set1_epi32(0x7ff));
    if (!_mm256_testz_si256(_mm256_cmpgt_epi32(top, limit), _mm256_set1_epi32(-1))) {
      for (std::size_t q = i; q < i + 8; ++q) x[q] = exp_float(x[q]);  // a lane out of range
      continue;
    }
    const __m128 lo = exp4(_mm256_cvtps_pd(_mm256_castps256_ps128(v)));
    const __m128 hi = exp4(_mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
    _mm256_storeu_ps(x + i, _mm256_set_m128(hi, lo));
  }
  for (; i < n; ++i) x[i] = exp_float(x[i]);
}
#endif

}  // namespace

void exp_floats_scalar(float* x, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) x[i] = exp_float(x[i]);
}

void exp_floats(float* x, std::size_t n) {
#if defined(CONTEXTSTEER_AVX2)
  if (use_avx2_fma()) return exp_floats_avx2(x, n);
#endif
  exp_floats_scalar(x, n);
}

}  // namespace contextsteer::detail
