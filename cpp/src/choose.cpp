// SPDX-License-Identifier: MIT
#include "contextsteer/choose.hpp"
#include "cpu.hpp"

#include <algorithm>
#include <bit>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <cstdlib>
#include <cmath>

#include "batch.hpp"
#include "slot_search.hpp"

namespace contextsteer {

namespace {

struct Out {
  float x, y, strength;
  std::int32_t slot;
};

constexpr Out kNothing{0.0f, 0.0f, 0.0f, -1};

// The slot set's arrays, read once per call of choose_rows rather than once per agent
// (the compiler cannot prove that the output stores leave the SlotSet unchanged).
struct Ring {
  const SlotSet* set;
  const float* x;
  const float* y;
  const double* x64;
  const double* y64;
  bool regular;
  explicit Ring(const SlotSet& s)
      : set(&s), x(s.x()), y(s.y()), x64(s.x64()), y64(s.y64()), regular(s.regular()) {}
};

float unit_strength(float v) { return std::clamp(v, 0.0f, 1.0f); }

// Highest slot, lowest index on ties; -1 when no value is positive.
std::int32_t best_slot(const float* v, std::size_t k) {
  std::size_t b = 0;
  float best = v[0];
  for (std::size_t j = 1; j < k; ++j) {  // selects, not branches: no mispredictions
    b = v[j] > best ? j : b;
    best = std::max(best, v[j]);
  }
  return best > 0.0f ? static_cast<std::int32_t>(b) : -1;
}

// Slot whose direction is nearest to (x, y): largest dot, lowest index on ties.
std::size_t nearest_slot(const SlotSet& s, float x, float y) {
  const float* dx = s.x();
  const float* dy = s.y();
  std::size_t b = 0;
  float best = dx[0] * x + dy[0] * y;
  for (std::size_t j = 1; j < s.size(); ++j) {
    const float d = dx[j] * x + dy[j] * y;
    b = d > best ? j : b;
    best = std::max(best, d);
  }
  return b;
}

// Turns a summed vector into the output. `fallback` is the slot whose direction is used
// when the sum is degenerate or, with guard, when the nearest slot of the sum is not one
// of the `count` summed ring slots starting at `first` (it crossed a masked gap).
Out finish_sum(const SlotSet& s, const float* v, double sx, double sy, double total,
               std::size_t fallback, bool guard, std::size_t first = 0, std::size_t count = 0) {
  const double len = std::sqrt(sx * sx + sy * sy);
  const float strength = unit_strength(v[fallback]);
  const auto slot = static_cast<std::int32_t>(fallback);
  if (!(len > 1e-6 * total)) return {s.x()[fallback], s.y()[fallback], strength, slot};
  const double inv = 1.0 / len;
  const auto ux = static_cast<float>(sx * inv), uy = static_cast<float>(sy * inv);
  if (guard) {
    const std::size_t k = s.size();
    const std::size_t near = nearest_slot(s, ux, uy);
    const std::size_t rel = near >= first ? near - first : near + k - first;
    if (rel >= count) return {s.x()[fallback], s.y()[fallback], strength, slot};
  }
  return {ux, uy, strength, slot};
}

// Godot rule over every positive slot.
Out vector_sum_raw(const SlotSet& s, const float* v, std::size_t k) {
  const std::int32_t b = best_slot(v, k);
  if (b < 0) return kNothing;
  double sx = 0.0, sy = 0.0;  // double: sums of many slots can cancel
  double total = 0.0;
  for (std::size_t j = 0; j < k; ++j) {
    const double w = std::max(v[j], 0.0f);
    sx += w * s.x()[j];
    sy += w * s.y()[j];
    total += w;
  }
  return finish_sum(s, v, sx, sy, total, static_cast<std::size_t>(b), false);
}

// Godot "levels of danger" read literally: every slot with its sign.
Out vector_sum_signed(const SlotSet& s, const float* v, std::size_t k) {
  const std::size_t b = detail::first_max(v, k);  // the first maximum, whatever its sign
  double sx = 0.0, sy = 0.0, total = 0.0;         // double: sums of many slots can cancel
  for (std::size_t j = 0; j < k; ++j) {
    const double w = v[j];
    sx += w * s.x()[j];
    sy += w * s.y()[j];
    total += std::fabs(w);
  }
  const double len = std::sqrt(sx * sx + sy * sy);
  if (!(len > 1e-6 * total)) return kNothing;
  const double inv = 1.0 / len;
  return {static_cast<float>(sx * inv), static_cast<float>(sy * inv), unit_strength(v[b]),
          static_cast<std::int32_t>(b)};
}

// Sum of v over `len` ring slots from `first`, in ring order, in double.
double run_total(const float* v, std::size_t k, std::size_t first, std::size_t len) {
  const std::size_t end1 = std::min(k, first + len);
  double t = 0.0;
  for (std::size_t j = first; j < end1; ++j) t += v[j];
  for (std::size_t j = 0; j < first + len - end1; ++j) t += v[j];
  return t;
}

// Takes the run (first, len, total) if it beats the best so far: larger total, or an
// equal total and a lower first slot.
void consider(std::size_t first, std::size_t len, double total, std::size_t& best_first,
              std::size_t& best_len, double& best_total) {
  if (total > best_total || (total == best_total && first < best_first)) {
    best_first = first;
    best_len = len;
    best_total = total;
  }
}

// Bit j set when v[j] > 0, for K <= 64. SSE2 (baseline on x86-64) compares four
// slots per instruction; elsewhere a plain loop.
std::uint64_t positive_bits(const float* v, std::size_t k) {
  std::uint64_t m = 0;
  std::size_t j = 0;
#if defined(__SSE2__)
  const __m128 zero = _mm_setzero_ps();
  for (; j + 4 <= k; j += 4) {
    const auto bits =
        static_cast<std::uint64_t>(_mm_movemask_ps(_mm_cmpgt_ps(_mm_loadu_ps(v + j), zero)));
    m |= bits << j;
  }
#endif
  for (; j < k; ++j) m |= std::uint64_t(v[j] > 0.0f) << j;
  return m;
}

// Best run for K <= 64: the positive slots as a bit mask, runs found with bit scans, so
// the work is per run instead of a branch per slot. A single run needs no totals here
// (the caller sums it anyway): total is left at -1 for the caller to fill in.
void best_run_bits(const float* v, std::size_t k, std::size_t& start, std::size_t& len,
                   double& total) {
  const std::uint64_t m = positive_bits(v, k);
  const std::uint64_t full = k == 64 ? ~std::uint64_t(0) : (std::uint64_t(1) << k) - 1;
  if (m == 0) return;
  if (m == full) {  // the whole ring is one run starting at 0
    start = 0;
    len = k;
    total = -1.0;
    return;
  }
  // Rotate right so that the first non-positive slot lands on the top bit k-1: then no
  // run wraps, and bit b stands for slot (b + r) mod k.
  const std::size_t r = static_cast<std::size_t>(std::countr_zero(~m & full)) + 1;
  std::uint64_t rm = r == k ? m : ((m >> r) | (m << (k - r))) & full;
  const std::uint64_t run_starts = rm & ~(rm << 1);
  const bool single = (run_starts & (run_starts - 1)) == 0;  // one run starts in rm
  while (rm) {
    const std::size_t b = static_cast<std::size_t>(std::countr_zero(rm));
    const std::size_t l = static_cast<std::size_t>(std::countr_zero(~(rm >> b)));
    rm &= ~(((std::uint64_t(1) << l) - 1) << b);  // l < 64: bit k-1 is clear
    std::size_t first = b + r;
    if (first >= k) first -= k;
    if (single) {
      start = first;
      len = l;
      total = -1.0;
      return;
    }
    consider(first, l, run_total(v, k, first, l), start, len, total);
  }
}

#if defined(__SSE2__)
// Lane masks for the 16 patterns of 4 bits: kLaneMask[b] has lane i all-ones if bit i of b.
alignas(16) constexpr std::uint32_t kLaneMask[16][4] = {
    {0, 0, 0, 0},     {~0u, 0, 0, 0},     {0, ~0u, 0, 0},     {~0u, ~0u, 0, 0},
    {0, 0, ~0u, 0},   {~0u, 0, ~0u, 0},   {0, ~0u, ~0u, 0},   {~0u, ~0u, ~0u, 0},
    {0, 0, 0, ~0u},   {~0u, 0, 0, ~0u},   {0, ~0u, 0, ~0u},   {~0u, ~0u, 0, ~0u},
    {0, 0, ~0u, ~0u}, {~0u, 0, ~0u, ~0u}, {0, ~0u, ~0u, ~0u}, {~0u, ~0u, ~0u, ~0u}};

inline __m128 lane_mask(std::uint64_t bits, std::size_t j) {
  return _mm_load_ps(reinterpret_cast<const float*>(kLaneMask[(bits >> j) & 15u]));
}

// Lane masks for the 4 patterns of 2 bits: kLaneMask64[b] has double lane i all-ones if
// bit i of b.
alignas(16) constexpr std::uint64_t kLaneMask64[4][2] = {
    {0, 0}, {~std::uint64_t(0), 0}, {0, ~std::uint64_t(0)}, {~std::uint64_t(0), ~std::uint64_t(0)}};

inline __m128d lane_mask64(std::uint64_t bits, std::size_t j) {
  return _mm_load_pd(reinterpret_cast<const double*>(kLaneMask64[(bits >> j) & 3u]));
}

inline double hsum(__m128d a) { return _mm_cvtsd_f64(_mm_add_sd(a, _mm_unpackhi_pd(a, a))); }

// x rotated left by `by` within k bits (by in [0, k), k <= 64, x < 2^k). No branch:
// for by = 0 the right shift is by k (< 64, giving 0) or by 0 when k = 64 (giving x).
inline std::uint64_t rotl_k(std::uint64_t x, std::size_t by, std::size_t k, std::uint64_t full) {
  return ((x << by) | (x >> ((k - by) & 63))) & full;
}

// Output for a run sum on a regular ring. The heading falls back to u_top when the sum
// is degenerate or lies strictly inside the wedge of the masked gap, i.e. between the
// bisector after the run's last slot and the bisector before its first slot
// (counter-clockwise). Only a run longer than half the ring can have its sum there, and
// then the gap wedge is narrower than half a turn, so two cross products decide it.
// Same result as the nearest-slot guard of finish_sum.
inline Out finish_run_regular(const Ring& s, std::size_t k, float vtop, double sx, double sy,
                              double total, std::size_t top, std::size_t first, std::size_t last,
                              std::size_t len) {
  const float* x = s.x;
  const float* y = s.y;
  const double norm = std::sqrt(sx * sx + sy * sy);
  bool use_top = !(norm > 1e-6 * total);
  const double inv = 1.0 / (use_top ? 1.0 : norm);
  const double ux = sx * inv, uy = sy * inv;
  if (2 * len > k) {
    const std::size_t prev = first == 0 ? k - 1 : first - 1;
    const std::size_t next = last + 1 == k ? 0 : last + 1;
    const double ax = double(x[prev]) + x[first], ay = double(y[prev]) + y[first];
    const double bx = double(x[last]) + x[next], by = double(y[last]) + y[next];
    use_top |= (bx * uy - by * ux > 0.0) & (ux * ay - uy * ax > 0.0);
  }
  return {use_top ? x[top] : static_cast<float>(ux), use_top ? y[top] : static_cast<float>(uy),
          unit_strength(vtop), static_cast<std::int32_t>(top)};
}

// vector_sum over the best run for K <= 64, K a multiple of 4, with G = K/4 groups of
// four slots known at compile time (G = 0: K given at run time). The positive slots
// become a bit mask, runs are found with bit operations; the values stay in registers;
// sums run in double in a fixed lane order (double lane i of the two accumulators sums
// slots i, i+4, i+8, ... in order; lanes are added (0+2) + (1+3)), so no data-dependent
// branch per slot.
template <std::size_t G>
Out vector_sum_run_simd(const Ring& s, const float* v, std::size_t kk) {
  constexpr std::size_t kMaxG = 16;
  const std::size_t g = G ? G : kk / 4;
  const std::size_t k = 4 * g;
  __m128 w[G ? G : kMaxG];          // values, zero where not positive
  __m128d wd[2 * (G ? G : kMaxG)];  // the same in double, two slots a register
  std::uint64_t m = 0;
  const __m128 zero = _mm_setzero_ps();
  for (std::size_t i = 0; i < g; ++i) {
    const __m128 x = _mm_loadu_ps(v + 4 * i);
    const __m128 p = _mm_cmpgt_ps(x, zero);
    m |= static_cast<std::uint64_t>(_mm_movemask_ps(p)) << (4 * i);
    w[i] = _mm_and_ps(x, p);
  }
  if (m == 0) return kNothing;
  for (std::size_t i = 0; i < g; ++i) {
    wd[2 * i] = _mm_cvtps_pd(w[i]);
    wd[2 * i + 1] = _mm_cvtps_pd(_mm_movehl_ps(w[i], w[i]));
  }
  const std::uint64_t full = k == 64 ? ~std::uint64_t(0) : (std::uint64_t(1) << k) - 1;
  // First slots of the runs: positive slots whose predecessor (mod K) is not positive.
  const std::uint64_t starts = m & ~rotl_k(m, 1, k, full);
  std::uint64_t run = m;  // one run (or the whole ring): all positive slots
  std::size_t first = starts ? static_cast<std::size_t>(std::countr_zero(starts)) : 0;
  if (starts & (starts - 1)) {
    // Several runs. Rotate right by r so that the first non-positive slot lands on bit
    // k-1: no run wraps, and bit b of rm stands for slot (b + r) mod k.
    std::size_t r = static_cast<std::size_t>(std::countr_zero(~m & full)) + 1;
    r = r == k ? 0 : r;
    std::uint64_t rm = rotl_k(m, r == 0 ? 0 : k - r, k, full);
    double best_total = -1.0;
    first = k;
    while (rm) {
      const std::size_t b = static_cast<std::size_t>(std::countr_zero(rm));
      const std::size_t l = static_cast<std::size_t>(std::countr_zero(~(rm >> b)));
      const std::uint64_t piece = ((std::uint64_t(1) << l) - 1) << b;  // l < 64
      rm &= ~piece;
      std::size_t f = b + r;
      if (f >= k) f -= k;
      const std::uint64_t bits = rotl_k(piece, r, k, full);
      __m128d lo = _mm_setzero_pd(), hi = _mm_setzero_pd();
      for (std::size_t i = 0; i < g; ++i) {
        lo = _mm_add_pd(lo, _mm_and_pd(wd[2 * i], lane_mask64(bits, 4 * i)));
        hi = _mm_add_pd(hi, _mm_and_pd(wd[2 * i + 1], lane_mask64(bits, 4 * i + 2)));
      }
      const double t = hsum(_mm_add_pd(lo, hi));
      if (t > best_total || (t == best_total && f < first)) {
        best_total = t;
        first = f;
        run = bits;
      }
    }
    for (std::size_t i = 0; i < g; ++i) {
      wd[2 * i] = _mm_and_pd(wd[2 * i], lane_mask64(run, 4 * i));
      wd[2 * i + 1] = _mm_and_pd(wd[2 * i + 1], lane_mask64(run, 4 * i + 2));
      w[i] = _mm_and_ps(w[i], lane_mask(run, 4 * i));
    }
  }
  // Last slot of the run: its successor (mod K) is not in the run (K - 1 for the ring).
  const std::uint64_t ends = run & ~rotl_k(run, k - 1, k, full);
  const std::size_t last = ends ? static_cast<std::size_t>(std::countr_zero(ends)) : k - 1;
  const std::size_t len = (last >= first ? last - first : last + k - first) + 1;
  __m128d x0 = _mm_setzero_pd(), x1 = _mm_setzero_pd(), y0 = _mm_setzero_pd(),
          y1 = _mm_setzero_pd(), t0 = _mm_setzero_pd(), t1 = _mm_setzero_pd();
  __m128 vmax = zero;
  const double* X = s.x64;
  const double* Y = s.y64;
  for (std::size_t i = 0; i < g; ++i) {
    const __m128d a = wd[2 * i], b = wd[2 * i + 1];
    vmax = _mm_max_ps(vmax, w[i]);
    x0 = _mm_add_pd(x0, _mm_mul_pd(a, _mm_loadu_pd(X + 4 * i)));
    x1 = _mm_add_pd(x1, _mm_mul_pd(b, _mm_loadu_pd(X + 4 * i + 2)));
    y0 = _mm_add_pd(y0, _mm_mul_pd(a, _mm_loadu_pd(Y + 4 * i)));
    y1 = _mm_add_pd(y1, _mm_mul_pd(b, _mm_loadu_pd(Y + 4 * i + 2)));
    t0 = _mm_add_pd(t0, a);
    t1 = _mm_add_pd(t1, b);
  }
  const double sx = hsum(_mm_add_pd(x0, x1));
  const double sy = hsum(_mm_add_pd(y0, y1));
  const double total = hsum(_mm_add_pd(t0, t1));
  // Broadcast the lane maximum, then the first slot of the run holding it.
  vmax = _mm_max_ps(vmax, _mm_shuffle_ps(vmax, vmax, _MM_SHUFFLE(2, 3, 0, 1)));
  vmax = _mm_max_ps(vmax, _mm_shuffle_ps(vmax, vmax, _MM_SHUFFLE(1, 0, 3, 2)));
  std::uint64_t eq = 0;
  for (std::size_t i = 0; i < g; ++i) {
    eq |= static_cast<std::uint64_t>(_mm_movemask_ps(_mm_cmpeq_ps(w[i], vmax))) << (4 * i);
  }
  const std::size_t top = static_cast<std::size_t>(std::countr_zero(eq & run));
  const float vtop = _mm_cvtss_f32(vmax);
  if (s.regular) return finish_run_regular(s, k, vtop, sx, sy, total, top, first, last, len);
  return finish_sum(*s.set, v, sx, sy, total, top, len < k, first, len);
}

#if defined(CONTEXTSTEER_AVX2)
// Lane masks for the 16 patterns of 4 bits over four doubles.
alignas(32) constexpr std::uint64_t kLaneMask64x4[16][4] = {{0, 0, 0, 0},
                                                            {~0ull, 0, 0, 0},
                                                            {0, ~0ull, 0, 0},
                                                            {~0ull, ~0ull, 0, 0},
                                                            {0, 0, ~0ull, 0},
                                                            {~0ull, 0, ~0ull, 0},
                                                            {0, ~0ull, ~0ull, 0},
                                                            {~0ull, ~0ull, ~0ull, 0},
                                                            {0, 0, 0, ~0ull},
                                                            {~0ull, 0, 0, ~0ull},
                                                            {0, ~0ull, 0, ~0ull},
                                                            {~0ull, ~0ull, 0, ~0ull},
                                                            {0, 0, ~0ull, ~0ull},
                                                            {~0ull, 0, ~0ull, ~0ull},
                                                            {0, ~0ull, ~0ull, ~0ull},
                                                            {~0ull, ~0ull, ~0ull, ~0ull}};

CS_AVX2 inline __m256d lane_mask64x4(std::uint64_t bits, std::size_t j) {
  return _mm256_load_pd(reinterpret_cast<const double*>(kLaneMask64x4[(bits >> j) & 15u]));
}

// (l0 + l2) + (l1 + l3): the order of hsum(lo + hi) of the SSE2 kernel.
CS_AVX2 inline double hsum4(__m256d a) {
  const __m128d s = _mm_add_pd(_mm256_castpd256_pd128(a), _mm256_extractf128_pd(a, 1));
  return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
}

// vector_sum_run_simd<2 * H> with AVX2: eight slots a float register, four a double
// register. Every double lane sees the same additions in the same order as in the SSE2
// kernel (double lane i sums slots i, i+4, ... of the run; lanes added (0+2) + (1+3)),
// and the float operations are exact (compare, and, max), so the results are
// bit-identical. No FMA: products and sums are rounded separately, as in SSE2.
template <std::size_t H>
CS_AVX2 Out vector_sum_run_avx2(const Ring& s, const float* v) {
  constexpr std::size_t k = 8 * H;
  constexpr std::uint64_t full = k == 64 ? ~std::uint64_t(0) : (std::uint64_t(1) << k) - 1;
  __m256 w[H];
  __m256d wd[2 * H];
  std::uint64_t m = 0;
  const __m256 zero = _mm256_setzero_ps();
  for (std::size_t i = 0; i < H; ++i) {
    const __m256 x = _mm256_loadu_ps(v + 8 * i);
    const __m256 p = _mm256_cmp_ps(x, zero, _CMP_GT_OQ);
    m |= static_cast<std::uint64_t>(_mm256_movemask_ps(p)) << (8 * i);
    w[i] = _mm256_and_ps(x, p);
  }
  if (m == 0) return kNothing;
  for (std::size_t i = 0; i < H; ++i) {
    wd[2 * i] = _mm256_cvtps_pd(_mm256_castps256_ps128(w[i]));
    wd[2 * i + 1] = _mm256_cvtps_pd(_mm256_extractf128_ps(w[i], 1));
  }
  const std::uint64_t starts = m & ~rotl_k(m, 1, k, full);
  std::uint64_t run = m;
  std::size_t first = starts ? static_cast<std::size_t>(std::countr_zero(starts)) : 0;
  if (starts & (starts - 1)) {
    std::size_t r = static_cast<std::size_t>(std::countr_zero(~m & full)) + 1;
    r = r == k ? 0 : r;
    std::uint64_t rm = rotl_k(m, r == 0 ? 0 : k - r, k, full);
    double best_total = -1.0;
    first = k;
    while (rm) {
      const std::size_t b = static_cast<std::size_t>(std::countr_zero(rm));
      const std::size_t l = static_cast<std::size_t>(std::countr_zero(~(rm >> b)));
      const std::uint64_t piece = ((std::uint64_t(1) << l) - 1) << b;
      rm &= ~piece;
      std::size_t f = b + r;
      if (f >= k) f -= k;
      const std::uint64_t bits = rotl_k(piece, r, k, full);
      __m256d acc = _mm256_setzero_pd();
      for (std::size_t i = 0; i < 2 * H; ++i) {
        acc = _mm256_add_pd(acc, _mm256_and_pd(wd[i], lane_mask64x4(bits, 4 * i)));
      }
      const double t = hsum4(acc);
      if (t > best_total || (t == best_total && f < first)) {
        best_total = t;
        first = f;
        run = bits;
      }
    }
    for (std::size_t i = 0; i < 2 * H; ++i) wd[i] = _mm256_and_pd(wd[i], lane_mask64x4(run, 4 * i));
    for (std::size_t i = 0; i < H; ++i) {
      const __m256 lm = _mm256_castpd_ps(_mm256_set_m128d(_mm_castps_pd(lane_mask(run, 8 * i + 4)),
                                                          _mm_castps_pd(lane_mask(run, 8 * i))));
      w[i] = _mm256_and_ps(w[i], lm);
    }
  }
  const auto len = static_cast<std::size_t>(std::popcount(run));  // POPCNT: see use_avx2
  const std::size_t last = first + len - 1 >= k ? first + len - 1 - k : first + len - 1;
  __m256d sx4 = _mm256_setzero_pd(), sy4 = _mm256_setzero_pd(), t4 = _mm256_setzero_pd();
  __m256 vmax = zero;
  const double* X = s.x64;
  const double* Y = s.y64;
  for (std::size_t i = 0; i < H; ++i) vmax = _mm256_max_ps(vmax, w[i]);
  for (std::size_t i = 0; i < 2 * H; ++i) {
    sx4 = _mm256_add_pd(sx4, _mm256_mul_pd(wd[i], _mm256_loadu_pd(X + 4 * i)));
    sy4 = _mm256_add_pd(sy4, _mm256_mul_pd(wd[i], _mm256_loadu_pd(Y + 4 * i)));
    t4 = _mm256_add_pd(t4, wd[i]);
  }
  const double sx = hsum4(sx4), sy = hsum4(sy4), total = hsum4(t4);
  __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(vmax), _mm256_extractf128_ps(vmax, 1));
  m4 = _mm_max_ps(m4, _mm_shuffle_ps(m4, m4, _MM_SHUFFLE(2, 3, 0, 1)));
  m4 = _mm_max_ps(m4, _mm_shuffle_ps(m4, m4, _MM_SHUFFLE(1, 0, 3, 2)));
  const __m256 vm = _mm256_set_m128(m4, m4);
  std::uint64_t eq = 0;
  for (std::size_t i = 0; i < H; ++i) {
    const __m256 same = _mm256_cmp_ps(w[i], vm, _CMP_EQ_OQ);
    eq |= static_cast<std::uint64_t>(_mm256_movemask_ps(same)) << (8 * i);
  }
  const std::size_t top = static_cast<std::size_t>(std::countr_zero(eq & run));
  const float vtop = _mm_cvtss_f32(m4);
  if (s.regular) return finish_run_regular(s, k, vtop, sx, sy, total, top, first, last, len);
  return finish_sum(*s.set, v, sx, sy, total, top, len < k, first, len);
}

template <std::size_t H>
CS_AVX2 void vector_sum_rows_avx2(const Ring& s, const float* v, float* dir, float* str,
                                  std::int32_t* slot, std::size_t begin, std::size_t end) {
  for (std::size_t i = begin; i < end; ++i) {
    const Out o = vector_sum_run_avx2<H>(s, v + i * 8 * H);
    dir[2 * i] = o.x;
    dir[2 * i + 1] = o.y;
    str[i] = o.strength;
    slot[i] = o.slot;
  }
}

// AVX2 (with the BMI1/BMI2/POPCNT bit instructions that come with it) is used when the
// CPU has it, unless CONTEXTSTEER_NO_AVX2 is set (tests compare both paths); see cpu.hpp.
using detail::use_avx2;
#endif
#endif

// Best run for any K: one walk around the ring from just after a non-positive slot.
void best_run_walk(const float* v, std::size_t k, std::size_t& start, std::size_t& len,
                   double& total) {
  std::size_t off = k;
  for (std::size_t j = 0; j < k && off == k; ++j) off = v[j] > 0.0f ? k : j;
  if (off == k) {
    start = 0;
    len = k;
    total = run_total(v, k, 0, k);
    return;
  }
  std::size_t first = 0, n = 0;
  for (std::size_t t = 1; t <= k; ++t) {  // ends on `off`, which closes the last run
    const std::size_t j = off + t >= k ? off + t - k : off + t;
    if (v[j] > 0.0f) {
      if (n++ == 0) first = j;
    } else if (n) {
      consider(first, n, run_total(v, k, first, n), start, len, total);
      n = 0;
    }
  }
}

// Godot rule restricted to the best contiguous run of positive slots.
Out vector_sum_run(const SlotSet& s, const float* v, std::size_t k) {
  std::size_t start = 0, len = 0;
  double total = 0.0;
  if (k <= 64) best_run_bits(v, k, start, len, total);
  else best_run_walk(v, k, start, len, total);
  if (len == 0) return kNothing;
  // Sum the run as (at most) two straight pieces of the ring; double: slots can cancel.
  const std::size_t end1 = std::min(k, start + len);
  const std::size_t rest = start + len - end1;
  double sx = 0.0, sy = 0.0, sum = 0.0;  // sum: the run total, in the same order
  std::size_t top = start;
  float vtop = v[start];
  for (std::size_t j = start; j < end1; ++j) {
    sx += double(v[j]) * s.x()[j];
    sy += double(v[j]) * s.y()[j];
    sum += v[j];
    top = v[j] > vtop ? j : top;
    vtop = std::max(vtop, v[j]);
  }
  for (std::size_t j = 0; j < rest; ++j) {
    sx += double(v[j]) * s.x()[j];
    sy += double(v[j]) * s.y()[j];
    sum += v[j];
    top = v[j] > vtop || (v[j] == vtop && j < top) ? j : top;
    vtop = std::max(vtop, v[j]);
  }
  total = sum;
  // A run of at most K/2 slots of a regular ring spans less than half a turn, so its
  // sum lies inside the run's cone and the guard cannot fire: skip the K dot products.
  const bool guard = len < k && (!s.regular() || 2 * len > k);
  return finish_sum(s, v, sx, sy, total, top, guard, start, len);
}

Out weighted_neighbours(const SlotSet& s, const float* v, std::size_t k, std::size_t width) {
  const std::int32_t bi = best_slot(v, k);
  if (bi < 0) return kNothing;
  const std::size_t b = static_cast<std::size_t>(bi);
  std::size_t l = 0, r = 0;
  while (l < width && l + 1 < k && v[(b + k - l - 1) % k] > 0.0f) ++l;
  while (r < width && l + r + 1 < k && v[(b + r + 1) % k] > 0.0f) ++r;
  double sx = 0.0, sy = 0.0;  // double: sums of many slots can cancel
  double total = 0.0;
  for (std::size_t t = 0; t <= l + r; ++t) {
    const std::size_t j = (b + k - l + t) % k;
    sx += double(v[j]) * s.x()[j];
    sy += double(v[j]) * s.y()[j];
    total += v[j];
  }
  const std::size_t len = l + r + 1;
  return finish_sum(s, v, sx, sy, total, b, len < k && (!s.regular() || 2 * len > k),
                    (b + k - l) % k, len);
}

// The best slot b and its two neighbours, with the angular gaps between them, for the
// sub-slot fits; ok = false when no slot is positive.
struct Peak3 {
  bool ok = false;
  std::int32_t slot = -1;
  std::size_t b = 0;
  double gl = 0.0, gr = 0.0;  // gaps to the lower and upper neighbour (radians)
  double yl = 0.0, yc = 0.0, yr = 0.0;
};

Peak3 peak3(const SlotSet& s, const float* v, std::size_t k) {
  Peak3 p;
  p.slot = best_slot(v, k);
  if (p.slot < 0) return p;
  p.ok = true;
  p.b = static_cast<std::size_t>(p.slot);
  const std::size_t lo = (p.b + k - 1) % k, hi = (p.b + 1) % k;
  p.gl = s.gaps()[lo];
  p.gr = s.gaps()[p.b];
  p.yl = v[lo];
  p.yc = v[p.b];
  p.yr = v[hi];
  return p;
}

// u_b turned by x radians (normalised), with the fitted peak value as strength.
Out turned(const SlotSet& s, const Peak3& p, double x, double peak) {
  const double c = std::cos(x), sn = std::sin(x);
  const double dx = s.x()[p.b], dy = s.y()[p.b];
  const double ox = dx * c - dy * sn, oy = dx * sn + dy * c;
  const double n = std::hypot(ox, oy);
  return {static_cast<float>(ox / n), static_cast<float>(oy / n),
          unit_strength(static_cast<float>(peak)), p.slot};
}

Out subslot(const SlotSet& s, const float* v, std::size_t k) {
  const Peak3 p = peak3(s, v, k);
  if (!p.ok) return kNothing;
  const PeakFit f = fit_peak(p.yl, p.yc, p.yr, p.gl, p.gr);
  return turned(s, p, f.x, f.peak);
}

// Fray's gradient intersection (see choose.hpp): equal slopes either side of the peak.
Out subslot_linear(const SlotSet& s, const float* v, std::size_t k) {
  const Peak3 p = peak3(s, v, k);
  if (!p.ok) return kNothing;
  const double sl = (p.yc - p.yl) / p.gl, sr = (p.yc - p.yr) / p.gr;  // both >= 0: b is the highest
  const double m = std::max(sl, sr);
  double x = 0.0;
  if (m > 0.0) x = sl >= sr ? 0.5 * p.gr * (1.0 - sr / m) : -0.5 * p.gl * (1.0 - sl / m);
  return turned(s, p, x, p.yc + m * std::fabs(x));
}

template <class Rule>
void each_row(const float* values, std::size_t k, float* dir, float* str, std::int32_t* slot,
              std::size_t begin, std::size_t end, Rule&& rule) {
  for (std::size_t i = begin; i < end; ++i) {
    const Out o = rule(values + i * k);
    dir[2 * i] = o.x;
    dir[2 * i + 1] = o.y;
    str[i] = o.strength;
    slot[i] = o.slot;
  }
}

#if defined(__SSE2__)

// Writes row i's choice for slot b (-1: none), reading the strength from the row.
inline void put_argmax(const Ring& s, const float* row, std::int32_t b, float* dir, float* str,
                       std::int32_t* slot, std::size_t i) {
  const bool some = b >= 0;
  const auto u = static_cast<std::size_t>(some ? b : 0);
  dir[2 * i] = some ? s.x[u] : 0.0f;
  dir[2 * i + 1] = some ? s.y[u] : 0.0f;
  str[i] = some ? unit_strength(row[u]) : 0.0f;
  slot[i] = b;
}

// argmax across agents, one agent per SSE2 lane (k % 4 == 0). Per agent, best_slot is a
// chain of K dependent compare-selects; four agents side by side run four such chains in
// the time of one. A 4x4 transpose turns four rows' slots j..j+3 into four registers of
// slot j, j+1, ... across the agents; each lane then takes exactly best_slot's steps
// (b = v_j > best ? j : b; best = max(best, v_j), where _mm_max_ps(v_j, best) returns
// best unless v_j > best, as std::max(best, v_j) does), so the slot, its value and the
// outputs are bit for bit best_slot's. cs.steer (N = 100k, K = 16, 3 maps, mask, argmax,
// one thread; benchmarks/bench_maps.py --only 100000:16 --choose argmax): 1.45 -> 1.18 ms,
// 31% -> 40% of a one-thread copy of the same bytes.
void argmax_rows_sse2(const Ring& s, const float* v, std::size_t k, float* dir, float* str,
                      std::int32_t* slot, std::size_t begin, std::size_t end) {
  std::size_t i = begin;
  for (; i + 4 <= end; i += 4) {
    const float* r = v + i * k;
    __m128 best = _mm_setzero_ps();
    __m128i idx = _mm_setzero_si128();
    for (std::size_t j = 0; j < k; j += 4) {
      __m128 a = _mm_loadu_ps(r + j), b = _mm_loadu_ps(r + k + j);
      __m128 c = _mm_loadu_ps(r + 2 * k + j), d = _mm_loadu_ps(r + 3 * k + j);
      _MM_TRANSPOSE4_PS(a, b, c, d);  // a: slot j of the four agents, b: slot j + 1, ...
      const __m128 col[4] = {a, b, c, d};
      for (int q = 0; q < 4; ++q) {
        if (j + q == 0) {
          best = col[0];
          continue;
        }
        const __m128i m = _mm_castps_si128(_mm_cmpgt_ps(col[q], best));
        const __m128i jj = _mm_set1_epi32(static_cast<int>(j + q));
        idx = _mm_or_si128(_mm_and_si128(m, jj), _mm_andnot_si128(m, idx));
        best = _mm_max_ps(col[q], best);
      }
    }
    alignas(16) float bv[4];
    alignas(16) std::int32_t bi[4];
    _mm_store_ps(bv, best);
    _mm_store_si128(reinterpret_cast<__m128i*>(bi), idx);
    for (int l = 0; l < 4; ++l) {
      const std::size_t a = i + static_cast<std::size_t>(l);
      const bool some = bv[l] > 0.0f;
      const auto b = static_cast<std::size_t>(bi[l]);
      dir[2 * a] = some ? s.x[b] : 0.0f;
      dir[2 * a + 1] = some ? s.y[b] : 0.0f;
      str[a] = some ? unit_strength(bv[l]) : 0.0f;
      slot[a] = some ? bi[l] : -1;
    }
  }
  for (; i < end; ++i) {  // the last rows, one at a time
    const std::int32_t b = best_slot(v + i * k, k);
    const Out o = b < 0 ? kNothing : Out{s.x[b], s.y[b], unit_strength(v[i * k + b]), b};
    dir[2 * i] = o.x;
    dir[2 * i + 1] = o.y;
    str[i] = o.strength;
    slot[i] = o.slot;
  }
}

#if defined(CONTEXTSTEER_AVX2)
// argmax of one row at a time with AVX2, K = 8H: the maximum m of the row (a tree of max
// over the H vectors, then across the lanes), then the lowest slot j with v_j == m (a
// compare and a bit scan). Without NaN, max is exact, so m is the row's maximum and the
// first slot equal to it is exactly best_slot's (which keeps the first of equal values,
// -0 == +0 included); a positive maximum is that slot's value bit for bit. A row holding
// a NaN (which max would drop or keep depending on the operand order) is flagged by an
// unordered compare and goes to best_slot itself. So the outputs are those of best_slot,
// and of the SSE2 kernel above (four agents in lanes). No data-dependent branch otherwise.
// choose argmax, N = 100k, K = 16, one thread: 0.43 ms (SSE2 lanes) -> 0.24 ms; the same
// one-row kernel in SSE2 took 0.55 ms, so SSE2 keeps the agents-in-lanes kernel.
CS_AVX2 inline __m256 broadcast_max8(__m256 m) {
  m = _mm256_max_ps(m, _mm256_permute2f128_ps(m, m, 1));
  m = _mm256_max_ps(m, _mm256_shuffle_ps(m, m, _MM_SHUFFLE(1, 0, 3, 2)));
  return _mm256_max_ps(m, _mm256_shuffle_ps(m, m, _MM_SHUFFLE(2, 3, 0, 1)));
}

template <std::size_t H>
CS_AVX2 void argmax_rows_avx2(const Ring& s, const float* v, float* dir, float* str,
                              std::int32_t* slot, std::size_t begin, std::size_t end) {
  static_assert(H >= 1 && H <= 8, "K = 8H <= 64");
  constexpr std::size_t k = 8 * H;
  for (std::size_t r = begin; r < end; ++r) {
    const float* row = v + r * k;
    __m256 x[H];
    for (std::size_t i = 0; i < H; ++i) x[i] = _mm256_loadu_ps(row + 8 * i);
    __m256 nan = _mm256_cmp_ps(x[0], x[H - 1], _CMP_UNORD_Q);
    for (std::size_t i = 1; i + 1 < H; i += 2)
      nan = _mm256_or_ps(nan, _mm256_cmp_ps(x[i], x[i + 1], _CMP_UNORD_Q));
    std::int32_t b;
    if (_mm256_movemask_ps(nan)) {
      b = best_slot(row, k);
    } else {
      __m256 t[H];
      for (std::size_t i = 0; i < H; ++i) t[i] = x[i];
      for (std::size_t w = 1; w < H; w *= 2)
        for (std::size_t i = 0; i + w < H; i += 2 * w) t[i] = _mm256_max_ps(t[i], t[i + w]);
      const __m256 m = broadcast_max8(t[0]);
      std::uint64_t eq = 0;
      for (std::size_t i = 0; i < H; ++i)
        eq |= static_cast<std::uint64_t>(_mm256_movemask_ps(_mm256_cmp_ps(x[i], m, _CMP_EQ_OQ)))
              << (8 * i);
      b = _mm256_cvtss_f32(m) > 0.0f ? static_cast<std::int32_t>(std::countr_zero(eq)) : -1;
    }
    put_argmax(s, row, b, dir, str, slot, r);
  }
}
#endif
#endif

}  // namespace

void choose_rows(std::span<const float> values, std::size_t k, const SlotSet& slots,
                 const ChooseParams& p, std::span<float> direction, std::span<float> strength,
                 std::span<std::int32_t> slot, std::size_t begin, std::size_t end) {
  const float* v = values.data();
  float* d = direction.data();
  float* st = strength.data();
  std::int32_t* sl = slot.data();
  switch (p.mode) {
    case ChooseMode::kArgmax:
#if defined(__SSE2__)
      if (k % 4 == 0) {
        const Ring ring(slots);
#if defined(CONTEXTSTEER_AVX2)
        if (use_avx2() && k <= 64 && (k & (k - 1)) == 0 && k >= 8) {  // 8, 16, 32, 64
          switch (k) {
            case 8:
              argmax_rows_avx2<1>(ring, v, d, st, sl, begin, end);
              break;
            case 16:
              argmax_rows_avx2<2>(ring, v, d, st, sl, begin, end);
              break;
            case 32:
              argmax_rows_avx2<4>(ring, v, d, st, sl, begin, end);
              break;
            default:
              argmax_rows_avx2<8>(ring, v, d, st, sl, begin, end);
              break;
          }
          break;
        }
#endif
        argmax_rows_sse2(ring, v, k, d, st, sl, begin, end);
        break;
      }
#endif
      each_row(v, k, d, st, sl, begin, end, [&](const float* row) {
        const std::int32_t b = best_slot(row, k);
        if (b < 0) return kNothing;
        return Out{slots.x()[b], slots.y()[b], unit_strength(row[b]), b};
      });
      break;
    case ChooseMode::kArgmaxAlways:
      each_row(v, k, d, st, sl, begin, end, [&](const float* row) {
        std::size_t b = 0;  // first index of the maximum (Unity: FindIndex(x == max))
        for (std::size_t j = 1; j < k; ++j)
          if (row[j] > row[b]) b = j;
        return Out{slots.x()[b], slots.y()[b], unit_strength(row[b]), static_cast<std::int32_t>(b)};
      });
      break;
    case ChooseMode::kVectorSum:
      if (p.contiguous) {
#if defined(__SSE2__)
        if (k <= 64 && k % 4 == 0) {
          const Ring ring(slots);
          const auto fast = [&]<std::size_t G>() {
            each_row(v, k, d, st, sl, begin, end,
                     [&](const float* row) { return vector_sum_run_simd<G>(ring, row, k); });
          };
#if defined(CONTEXTSTEER_AVX2)
          if (use_avx2() && k % 8 == 0 && (k & (k - 1)) == 0) {  // 8, 16, 32, 64
            switch (k) {
              case 8:
                vector_sum_rows_avx2<1>(ring, v, d, st, sl, begin, end);
                break;
              case 16:
                vector_sum_rows_avx2<2>(ring, v, d, st, sl, begin, end);
                break;
              case 32:
                vector_sum_rows_avx2<4>(ring, v, d, st, sl, begin, end);
                break;
              default:
                vector_sum_rows_avx2<8>(ring, v, d, st, sl, begin, end);
                break;
            }
            break;
          }
#endif
          switch (k) {  // the common sizes fully unrolled, the values in registers
            case 8:
              fast.template operator()<2>();
              break;
            case 16:
              fast.template operator()<4>();
              break;
            case 32:
              fast.template operator()<8>();
              break;
            case 64:
              fast.template operator()<16>();
              break;
            default:
              fast.template operator()<0>();
              break;
          }
          break;
        }
#endif
        each_row(v, k, d, st, sl, begin, end,
                 [&](const float* row) { return vector_sum_run(slots, row, k); });
      } else {
        each_row(v, k, d, st, sl, begin, end,
                 [&](const float* row) { return vector_sum_raw(slots, row, k); });
      }
      break;
    case ChooseMode::kWeightedNeighbours:
      each_row(v, k, d, st, sl, begin, end,
               [&](const float* row) { return weighted_neighbours(slots, row, k, p.width); });
      break;
    case ChooseMode::kSubslot:
      each_row(v, k, d, st, sl, begin, end,
               [&](const float* row) { return subslot(slots, row, k); });
      break;
    case ChooseMode::kSubslotLinear:
      each_row(v, k, d, st, sl, begin, end,
               [&](const float* row) { return subslot_linear(slots, row, k); });
      break;
    case ChooseMode::kVectorSumSigned:
      each_row(v, k, d, st, sl, begin, end,
               [&](const float* row) { return vector_sum_signed(slots, row, k); });
      break;
  }
}

void choose(std::span<const float> values, std::size_t n, std::size_t k, const SlotSet& slots,
            const ChooseParams& p, std::span<float> direction, std::span<float> strength,
            std::span<std::int32_t> slot, std::atomic<bool>* nonfinite) {
  for_rows(
      n, k, nonfinite,
      [&](std::size_t b, std::size_t e) { return all_finite(values.data() + b * k, (e - b) * k); },
      [&](std::size_t b, std::size_t e) {
        choose_rows(values, k, slots, p, direction, strength, slot, b, e);
      });
}

}  // namespace contextsteer
