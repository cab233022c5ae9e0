// SPDX-License-Identifier: MIT
// The sector index of thin slot rays in any direction: build, and the rays cast on it
// (SectorIndex in sector_index.hpp; docs/performance.md, "Rays", the eleventh design).
#include "sector_index.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "contextsteer/geometry.hpp"
#include "cpu.hpp"
#include "parallel.hpp"
#include "thread_scratch.hpp"

namespace contextsteer::detail {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr double kPi = 3.14159265358979323846;
constexpr int kBins = SectorIndex::kBins;

// Largest index (bytes); the cell grows until the records fit in a quarter of it, and a
// build whose pieces outgrow it declines (the rays walk the grid).
constexpr std::size_t kSectorBudget = std::size_t{64} << 20;
// Cell side as a fraction of the reach: 2 m for the 50 m rays of the racetrack benchmark,
// where 1.5-3 m ran within 10 % of each other (benchmarks/kernels/wedge_lists.cpp).
constexpr double kCellPerReach = 1.0 / 25.0;
// A sector is widened by this angle each side (radians), far beyond the float32 rounding
// of the diamond angle that picks it.
constexpr double kBinSlack = 1e-4;
// How clearly every corner of a cell must lie on one side of a piece's walls and chords
// (metres, times the wall's or chord's length in the test): rounding of the side values
// (about 1e-13 m here) must never flip a side the geometry fixed.
constexpr double kSideMargin = 1e-4;
// 'auto' builds an index once the thin rotated rays walked on the world reach this many per
// unit of estimated build work (walls x sectors x (1 + reach / cell)): there the walks
// have cost about what the build does (see sectors_for).
constexpr double kAutoRays = 1.0 / 3.0;
// Thick rays gain less from the index (about 2x the walk, against 3-4x for thin rays), so
// the walks must have cost more before a build pays: three times as many.
constexpr double kAutoRaysThick = 1.0;

// Sector of the unit direction (dx, dy): the diamond angle p in [0, 4) (monotone in the
// angle, quadrant by quadrant) scaled to kBins, in float32 as every query computes it (the
// AVX2 bins_avx2 too). The build bounds a sector by the angles of its diamond parameters in
// double, widened by kBinSlack.
inline int bin_of(float dx, float dy) {
  const float adx = std::fabs(dx), ady = std::fabs(dy);
  float p = ady / (adx + ady);
  p = dx < 0.0f ? 2.0f - p : p;
  p = dy < 0.0f ? 4.0f - p : p;
  const int b = static_cast<int>(p * (kBins * 0.25f));
  return b >= kBins ? kBins - 1 : b;
}

// The angle (radians, [0, 2 pi]) of diamond parameter p in [0, 4].
double diamond_angle(double p) {
  const int q = std::min(3, static_cast<int>(p));
  const double f = p - q;
  const double x[4] = {1 - f, -f, -(1 - f), f}, y[4] = {f, 1 - f, -f, -(1 - f)};
  double a = std::atan2(y[q], x[q]);
  if (a < 0) a += 2 * kPi;
  if (p >= 3.5 && a < 1) a += 2 * kPi;
  return a;
}

// Side of vertex (x, y) from the ray's line: line_side of (x - ox, y - oy), as ray_segment
// computes it (the walk's arguments: the float coordinate minus the double origin).
inline double side_of(const double* v, std::uint32_t k, double ox, double oy, double dx,
                      double dy) {
  return line_side(v[2 * k] - ox, v[2 * k + 1] - oy, dx, dy);
}

inline double exact(const SectorIndex& x, std::uint32_t i, double ox, double oy, double dx,
                    double dy) {
  return ray_segment(x.va[2 * i] - ox, x.va[2 * i + 1] - oy, x.vb[2 * i] - ox, x.vb[2 * i + 1] - oy,
                     dx, dy);
}

#if defined(CONTEXTSTEER_AVX2)
// Four consecutive points (x, y) from v as x and y lanes.
CS_AVX2 inline void split_points(const double* v, __m256d& px, __m256d& py) {
  const __m256d a = _mm256_loadu_pd(v), b = _mm256_loadu_pd(v + 4);  // x0 y0 x1 y1, x2 y2 x3 y3
  const __m256d lo = _mm256_permute2f128_pd(a, b, 0x20), hi = _mm256_permute2f128_pd(a, b, 0x31);
  px = _mm256_unpacklo_pd(lo, hi);  // lo: x0 y0 x2 y2, hi: x1 y1 x3 y3 -> x0 x1 x2 x3
  py = _mm256_unpackhi_pd(lo, hi);
}

// Walls [start, start + n) four at a time (exact_run): the exact side values of both ends in
// double lanes (line_side's arithmetic, so the same signs as ray_segment's), and
// ray_segment for the walls whose ends are not strictly on one side.
CS_AVX2 void loose_avx2(const SectorIndex& x, std::uint32_t start, std::uint32_t n, double ox,
                        double oy, double dx, double dy, double& best) {
  const __m256d vox = _mm256_set1_pd(ox), voy = _mm256_set1_pd(oy);
  const __m256d vdx = _mm256_set1_pd(dx), vdy = _mm256_set1_pd(dy), zero = _mm256_setzero_pd();
  std::uint32_t i = start;
  for (; i + 4 <= start + n; i += 4) {
    __m256d ax, ay, bx, by;
    split_points(x.va.data() + 2 * i, ax, ay);
    split_points(x.vb.data() + 2 * i, bx, by);
    const __m256d sa = _mm256_sub_pd(_mm256_mul_pd(_mm256_sub_pd(ax, vox), vdy),
                                     _mm256_mul_pd(_mm256_sub_pd(ay, voy), vdx));
    const __m256d sb = _mm256_sub_pd(_mm256_mul_pd(_mm256_sub_pd(bx, vox), vdy),
                                     _mm256_mul_pd(_mm256_sub_pd(by, voy), vdx));
    const __m256d same = _mm256_or_pd(
        _mm256_and_pd(_mm256_cmp_pd(sa, zero, _CMP_GT_OQ), _mm256_cmp_pd(sb, zero, _CMP_GT_OQ)),
        _mm256_and_pd(_mm256_cmp_pd(sa, zero, _CMP_LT_OQ), _mm256_cmp_pd(sb, zero, _CMP_LT_OQ)));
    unsigned keep = ~static_cast<unsigned>(_mm256_movemask_pd(same)) & 0xFu;
    while (keep) {
      const int l = __builtin_ctz(keep);
      keep &= keep - 1;
      best = std::min(best, exact(x, i + static_cast<std::uint32_t>(l), ox, oy, dx, dy));
    }
  }
  for (; i < start + n; ++i) best = std::min(best, exact(x, i, ox, oy, dx, dy));
}
#endif

// Every wall of [start, start + n) tested exactly (loose walls, or a piece whose sides a
// vertex on the ray's line leaves in doubt): screened four at a time where AVX2 is on.
void exact_run(const SectorIndex& x, std::uint32_t start, std::uint32_t n, double ox, double oy,
               double dx, double dy, double& best) {
#if defined(CONTEXTSTEER_AVX2)
  if (n >= 4 && use_avx2()) {
    loose_avx2(x, start, n, ox, oy, dx, dy, best);
    return;
  }
#endif
  for (std::uint32_t i = start; i < start + n; ++i)
    best = std::min(best, exact(x, i, ox, oy, dx, dy));
}

// f(start, len) for each piece of a cell-and-sector record.
template <class F>
inline void for_pieces(const SectorIndex& x, SectorIndex::Rec r, F&& f) {
  if (!(r.len & SectorIndex::kMany)) {
    f(r.start, r.len);
    return;
  }
  const std::uint32_t n = r.len & ~SectorIndex::kMany;
  for (std::uint32_t q = r.start; q < r.start + n; ++q) f(x.ps[q], x.pl[q]);
}

// One piece against one ray: lowers `best` to the piece's closest hit.
void cast_piece(const SectorIndex& x, std::uint32_t start, std::uint32_t len, double ox, double oy,
                double dx, double dy, double& best) {
  if (len & SectorIndex::kLoose) {
    exact_run(x, start, len & ~SectorIndex::kLoose, ox, oy, dx, dy, best);
    return;
  }
  const std::uint32_t last = start + len - 1;
  const double* A = x.va.data();
  const double* B = x.vb.data();
  const double s0 = side_of(A, start, ox, oy, dx, dy), s1 = side_of(B, last, ox, oy, dx, dy);
  // Every vertex keeps s0's side when the two ends do (the sides change at most once).
  if (same_side(s0, s1)) return;
  std::uint32_t lo = start;
  if (s0 != 0.0) {
    // Vertices lo (strictly on s0's side) and hi (not) bracket the crossing; vertex k is
    // wall k's a, the last one wall last's b (the same point as the next wall's a, bit
    // for bit). Secant guesses, each with the vertex after it, then halving when a guess
    // lands on the side that moved least.
    const bool pos = s0 > 0.0;
    auto on = [pos](double v) { return pos ? v > 0.0 : v < 0.0; };
    std::uint32_t hi = start + len;
    double slo = s0, shi = s1;
    int tries = 0;
    while (hi - lo > 1) {
      std::uint32_t g;
      if (tries++ < 3) {
        const double f = slo / (slo - shi) * static_cast<double>(hi - lo);
        const double span = static_cast<double>(hi - lo - 1);
        g = lo + static_cast<std::uint32_t>(f >= 0.0 ? std::min(f, span) : 0.0);
      } else {
        g = lo + (hi - lo) / 2;
      }
      const double sa = side_of(A, g, ox, oy, dx, dy), sb = side_of(B, g, ox, oy, dx, dy);
      if (on(sa) && !on(sb)) {
        lo = g;
        break;
      }
      if (on(sb)) {
        lo = g + 1;
        slo = sb;
      } else {
        hi = g;
        shi = sa;
      }
    }
  }
  // The crossing is wall lo. Its neighbours are tested too, and the whole piece when the
  // sides one vertex further out are not where a single crossing puts them (a vertex on
  // the ray's line, or rounding: never seen, but the test is cheap).
  const bool pos = s0 > 0.0;
  auto strict_on = [pos](double v) { return pos ? v > 0.0 : v < 0.0; };
  auto strict_off = [pos](double v) { return pos ? v < 0.0 : v > 0.0; };
  const bool before_ok = lo <= start + 1 || strict_on(side_of(A, lo - 1, ox, oy, dx, dy));
  const bool after_ok = lo + 1 >= last || strict_off(side_of(B, lo + 1, ox, oy, dx, dy));
  if (s0 == 0.0 || !before_ok || !after_ok) {
    exact_run(x, start, len, ox, oy, dx, dy, best);
    return;
  }
  if (lo > start) best = std::min(best, exact(x, lo - 1, ox, oy, dx, dy));
  best = std::min(best, exact(x, lo, ox, oy, dx, dy));
  if (lo < last) best = std::min(best, exact(x, lo + 1, ox, oy, dx, dy));
}

// One ray from inside the box, through every piece of its cell and sector.
double cast_ray(const SectorIndex& x, const SectorIndex::Rec* recs, float ox, float oy, float dx,
                float dy, double above) {
  double best = above;
  for_pieces(x, recs[bin_of(dx, dy)], [&](std::uint32_t start, std::uint32_t len) {
    cast_piece(x, start, len, ox, oy, dx, dy, best);
  });
  return best;
}

// ------------------------------------------------------------ thick rays ---
//
// A disc of radius r swept along the ray meets a wall only where the wall comes within r
// of the ray's line: ray_capsule's own screen (capsule_out_of_reach) drops every wall
// whose two ends lie more than r on one side. The index for radius >= r is made for cells
// grown by r, so every line parallel to the ray within r + band_eps of it crosses each
// piece at most once. Along a piece, the vertices more than rr = r + band_eps on one side
// of the ray's line then form a prefix, those more than rr on the other side a suffix,
// and the walls in between are the only ones the disc can meet there: a search for the
// last vertex of the prefix and the first of the suffix bounds them. Each candidate takes
// ray_capsule itself, so the distances are the walk's. (Walls outside the bounds have
// both ends beyond r + band_eps - rounding on one side: the walk's screen drops them.)

// Vertex k of the piece whose last wall is `last`: wall k's a, or for k = last + 1 the
// last wall's b (joined walls share their vertices bit for bit).
inline double vertex_side(const SectorIndex& x, std::uint32_t k, std::uint32_t last, double ox,
                          double oy, double dx, double dy) {
  return k <= last ? side_of(x.va.data(), k, ox, oy, dx, dy)
                   : side_of(x.vb.data(), last, ox, oy, dx, dy);
}

// Class of a side value: +1 beyond rr on the left, -1 beyond rr on the right, 0 between.
inline int side_class(double s, double rr) { return s > rr ? 1 : (s < -rr ? -1 : 0); }

// For vertices lo < hi with lo "in" and hi not, where f(k) = c s_k - e and "in" is f > 0:
// a vertex k in [lo, hi) in, with k + 1 not. Each secant guess g is tested with the vertex
// after it (wall g's two ends), then halving.
std::uint32_t band_edge(const SectorIndex& x, std::uint32_t lo, std::uint32_t hi, double flo,
                        double fhi, double c, double e, double ox, double oy, double dx,
                        double dy) {
  int tries = 0;
  while (hi - lo > 1) {
    std::uint32_t g;
    if (tries++ < 3) {
      const double f = flo / (flo - fhi) * static_cast<double>(hi - lo);
      g = lo +
          static_cast<std::uint32_t>(std::min(std::max(f, 0.0), static_cast<double>(hi - lo - 1)));
    } else {
      g = lo + (hi - lo) / 2;
    }
    // vertex g (wall g's a) and g + 1 (wall g's b, the same point as wall g + 1's a)
    const double fg = c * side_of(x.va.data(), g, ox, oy, dx, dy) - e;
    const double fn = c * side_of(x.vb.data(), g, ox, oy, dx, dy) - e;
    if (fg > 0.0 && !(fn > 0.0)) return g;
    if (fn > 0.0) {
      lo = g + 1;
      flo = fn;
    } else {
      hi = g;
      fhi = fg;
    }
  }
  return lo;
}

inline const SectorIndex::Rec* cell_records(const SectorIndex& x, float ox, float oy) {
  const auto cx = static_cast<std::size_t>((ox - x.fx0) * x.inv_cell);
  const auto cy = static_cast<std::size_t>((oy - x.fy0) * x.inv_cell);
  return x.rec.data() + (cy * static_cast<std::size_t>(x.nx) + cx) * kBins;
}

#if defined(CONTEXTSTEER_AVX2)
// Four rays in AVX2 double lanes with the scalar path's operations (no FMA): each lane's
// record, its piece's two end sides, two secant guesses (the bracket narrowed without a
// branch), then the crossing wall's exact distance from the sides already computed
// (ray_segment's arithmetic: den = sa - sb is non-zero as sa and sb lie strictly on
// opposite sides). A lane whose record is not one plain piece, whose guesses did not land
// on the crossing, or whose crossing's neighbours are not clearly on their sides is cast
// again by cast_ray. On the racetrack (M = 10000, L = 50) about 12 % are.
struct Lanes2 {
  __m256d x, y;
};
CS_AVX2 inline Lanes2 load_points(const double* v, __m128i idx) {
  alignas(16) std::int32_t k[4];
  _mm_store_si128(reinterpret_cast<__m128i*>(k), idx);
  const __m128d p0 = _mm_loadu_pd(v + 2 * k[0]), p1 = _mm_loadu_pd(v + 2 * k[1]);
  const __m128d p2 = _mm_loadu_pd(v + 2 * k[2]), p3 = _mm_loadu_pd(v + 2 * k[3]);
  const __m256d a = _mm256_insertf128_pd(_mm256_castpd128_pd256(p0), p2, 1);
  const __m256d b = _mm256_insertf128_pd(_mm256_castpd128_pd256(p1), p3, 1);
  return {_mm256_unpacklo_pd(a, b), _mm256_unpackhi_pd(a, b)};
}

// line_side in four lanes, as side_of computes it.
CS_AVX2 inline __m256d side4(const Lanes2& p, __m256d ox, __m256d oy, __m256d dx, __m256d dy) {
  return _mm256_sub_pd(_mm256_mul_pd(_mm256_sub_pd(p.x, ox), dy),
                       _mm256_mul_pd(_mm256_sub_pd(p.y, oy), dx));
}

CS_AVX2 inline __m256d mask_of(__m128i m) { return _mm256_castsi256_pd(_mm256_cvtepi32_epi64(m)); }

// Four (ray, piece) tasks at a time: the piece's two end sides, secant guesses narrowing
// the bracket without a branch (two, a third when a lane is still open), then the
// crossing wall's distance from the sides already computed. `tasks` of them, lanes past
// the end repeat the last task.
CS_AVX2 void piece_lanes(const SectorIndex& x, std::size_t tasks, const std::uint32_t* ray,
                         const std::int32_t* st, const std::int32_t* ln, const double* tdx,
                         const double* tdy, float ox, float oy, double* best) {
  const double* A = x.va.data();
  const double* B = x.vb.data();
  const __m256d vox = _mm256_set1_pd(ox), voy = _mm256_set1_pd(oy), zero = _mm256_setzero_pd();
  const __m256d sign = _mm256_set1_pd(-0.0), inf = _mm256_set1_pd(kInf);
  const __m256d one_d = _mm256_set1_pd(1.0);
  const __m128i one = _mm_set1_epi32(1);
  const __m256i halves = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
  for (std::size_t t0 = 0; t0 < tasks; t0 += 4) {
    const __m256d dx = _mm256_loadu_pd(tdx + t0), dy = _mm256_loadu_pd(tdy + t0);
    auto side = [&](const Lanes2& p) CS_AVX2 { return side4(p, vox, voy, dx, dy); };
    const __m128i n = _mm_loadu_si128(reinterpret_cast<const __m128i*>(ln + t0));
    const __m128i first = _mm_loadu_si128(reinterpret_cast<const __m128i*>(st + t0));
    const __m128i last = _mm_sub_epi32(_mm_add_epi32(first, n), one);
    const __m256d s0 = side(load_points(A, first)), s1 = side(load_points(B, last));
    const __m256d miss = _mm256_or_pd(
        _mm256_and_pd(_mm256_cmp_pd(s0, zero, _CMP_GT_OQ), _mm256_cmp_pd(s1, zero, _CMP_GT_OQ)),
        _mm256_and_pd(_mm256_cmp_pd(s0, zero, _CMP_LT_OQ), _mm256_cmp_pd(s1, zero, _CMP_LT_OQ)));
    const __m256d flip = _mm256_and_pd(s0, sign);  // turns s0's side positive
    __m128i lo = first, hi = _mm_add_epi32(first, n), g = first;
    __m256d slo = s0, shi = s1, sa = s0, sb = s1;
    Lanes2 pa{}, pb{};
    for (int it = 0; it < 3; ++it) {
      const __m128i open = _mm_cmpgt_epi32(_mm_sub_epi32(hi, lo), one);
      // A third guess only for lanes still open (and not already a miss).
      if (it == 2 && !(_mm_movemask_ps(_mm_castsi128_ps(open)) & ~_mm256_movemask_pd(miss) & 0xF))
        break;
      const __m256d width = _mm256_cvtepi32_pd(_mm_sub_epi32(hi, lo));
      __m256d f = _mm256_mul_pd(_mm256_div_pd(slo, _mm256_sub_pd(slo, shi)), width);
      // In [0, width - 1]; NaN (equal sides) -> width - 1. A lane whose s0 is 0 or that is
      // a miss (its answer discarded or not needed) may have an empty bracket: g stays on
      // the piece's walls.
      f = _mm256_max_pd(_mm256_min_pd(f, _mm256_sub_pd(width, one_d)), zero);
      g = _mm_min_epi32(_mm_max_epi32(_mm_add_epi32(lo, _mm256_cvttpd_epi32(f)), first), last);
      pa = load_points(A, g);
      pb = load_points(B, g);
      sa = side(pa);
      sb = side(pb);
      const __m256d on_a = _mm256_cmp_pd(_mm256_xor_pd(sa, flip), zero, _CMP_GT_OQ);
      const __m256d on_b = _mm256_cmp_pd(_mm256_xor_pd(sb, flip), zero, _CMP_GT_OQ);
      const __m256d done = _mm256_andnot_pd(on_b, on_a);
      const __m128i done_i =
          _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(_mm256_castpd_si256(done), halves));
      const __m128i onb_i =
          _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(_mm256_castpd_si256(on_b), halves));
      const __m128i g1 = _mm_add_epi32(g, one);
      // done: [g, g + 1]; b on s0's side: [g + 1, hi]; neither: [lo, g]
      const __m128i nlo = _mm_blendv_epi8(_mm_blendv_epi8(lo, g1, onb_i), g, done_i);
      const __m128i nhi = _mm_blendv_epi8(_mm_blendv_epi8(g, hi, onb_i), g1, done_i);
      lo = _mm_blendv_epi8(lo, nlo, open);
      hi = _mm_blendv_epi8(hi, nhi, open);
      const __m256d openv = mask_of(open);
      const __m256d nslo = _mm256_blendv_pd(_mm256_blendv_pd(slo, sb, on_b), sa, done);
      const __m256d nshi = _mm256_blendv_pd(_mm256_blendv_pd(sa, shi, on_b), sb, done);
      slo = _mm256_blendv_pd(slo, nslo, openv);
      shi = _mm256_blendv_pd(shi, nshi, openv);
    }
    const __m128i gp = _mm_max_epi32(_mm_sub_epi32(g, one), first);
    const __m128i gn = _mm_min_epi32(_mm_add_epi32(g, one), last);
    const __m256d sp = side(load_points(A, gp)), sn = side(load_points(B, gn));
    const __m256d at_first = mask_of(_mm_cmpeq_epi32(gp, g)),
                  at_last = mask_of(_mm_cmpeq_epi32(gn, g));
    const __m256d on_a = _mm256_cmp_pd(_mm256_xor_pd(sa, flip), zero, _CMP_GT_OQ);
    const __m256d off_b = _mm256_cmp_pd(_mm256_xor_pd(sb, flip), zero, _CMP_LT_OQ);
    const __m256d on_p = _mm256_cmp_pd(_mm256_xor_pd(sp, flip), zero, _CMP_GT_OQ);
    const __m256d off_n = _mm256_cmp_pd(_mm256_xor_pd(sn, flip), zero, _CMP_LT_OQ);
    const __m256d found =
        _mm256_and_pd(_mm256_and_pd(on_a, off_b),
                      _mm256_and_pd(_mm256_or_pd(at_first, on_p), _mm256_or_pd(at_last, off_n)));
    const __m256d ax = _mm256_sub_pd(pa.x, vox), ay = _mm256_sub_pd(pa.y, voy);
    const __m256d bx = _mm256_sub_pd(pb.x, vox), by = _mm256_sub_pd(pb.y, voy);
    const __m256d t = _mm256_div_pd(_mm256_sub_pd(_mm256_mul_pd(ax, by), _mm256_mul_pd(ay, bx)),
                                    _mm256_sub_pd(sa, sb));
    const __m256d hit =
        _mm256_blendv_pd(inf, _mm256_add_pd(t, zero), _mm256_cmp_pd(t, zero, _CMP_GE_OQ));
    const __m256d s0_set = _mm256_cmp_pd(s0, zero, _CMP_NEQ_UQ);
    const __m256d ok = _mm256_and_pd(s0_set, _mm256_or_pd(miss, found));
    const __m256d got = _mm256_blendv_pd(hit, inf, miss);
    alignas(32) double b4[4];
    _mm256_store_pd(b4, got);
    const int good = _mm256_movemask_pd(ok);
    for (std::size_t l = 0; l < 4 && t0 + l < tasks; ++l) {
      double& b = best[ray[t0 + l]];
      if ((good >> l) & 1) {
        b = std::min(b, b4[l]);
      } else {
        cast_piece(x, static_cast<std::uint32_t>(st[t0 + l]),
                   static_cast<std::uint32_t>(ln[t0 + l]), ox, oy, tdx[t0 + l], tdy[t0 + l], b);
      }
    }
  }
}

constexpr std::size_t kMaxBinned = 64;

// bin_of for rays [0, n) (n a multiple of 8), eight at a time: the same float32 operations.
CS_AVX2 void bins_avx2(const double* dxs, const double* dys, std::size_t n, std::int32_t* out) {
  const __m256 absm = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
  const __m256 zero = _mm256_setzero_ps(), two = _mm256_set1_ps(2.0f), four = _mm256_set1_ps(4.0f);
  const __m256 scale = _mm256_set1_ps(kBins * 0.25f);
  const __m256i top = _mm256_set1_epi32(kBins - 1);
  for (std::size_t j = 0; j < n; j += 8) {
    const __m256 dx = _mm256_set_m128(_mm256_cvtpd_ps(_mm256_loadu_pd(dxs + j + 4)),
                                      _mm256_cvtpd_ps(_mm256_loadu_pd(dxs + j)));
    const __m256 dy = _mm256_set_m128(_mm256_cvtpd_ps(_mm256_loadu_pd(dys + j + 4)),
                                      _mm256_cvtpd_ps(_mm256_loadu_pd(dys + j)));
    const __m256 adx = _mm256_and_ps(dx, absm), ady = _mm256_and_ps(dy, absm);
    __m256 p = _mm256_div_ps(ady, _mm256_add_ps(adx, ady));
    p = _mm256_blendv_ps(p, _mm256_sub_ps(two, p), _mm256_cmp_ps(dx, zero, _CMP_LT_OQ));
    p = _mm256_blendv_ps(p, _mm256_sub_ps(four, p), _mm256_cmp_ps(dy, zero, _CMP_LT_OQ));
    const __m256i b = _mm256_min_epi32(_mm256_cvttps_epi32(_mm256_mul_ps(p, scale)), top);
    _mm256_store_si256(reinterpret_cast<__m256i*>(out + j), b);
  }
}

// The agent's rays as (ray, piece) tasks: every plain piece of each ray's record is one
// (most records hold one); loose walls are screened at once. Tasks go four at a time
// through piece_lanes.
CS_AVX2 void sector_agent_avx2(const SectorIndex& x, float ox, float oy, const double* dxs,
                               const double* dys, std::size_t k, float L, double* best) {
  const SectorIndex::Rec* recs = cell_records(x, ox, oy);
  const double above = std::nextafter(static_cast<double>(L), static_cast<double>(kInf));
  constexpr std::size_t kTasks = 64;
  alignas(32) double tdx[kTasks + 4], tdy[kTasks + 4];
  alignas(16) std::int32_t st[kTasks + 4], ln[kTasks + 4];
  std::uint32_t ray[kTasks + 4];
  std::size_t tasks = 0;
  auto flush = [&]() CS_AVX2 {
    for (std::size_t l = tasks; l < ((tasks + 3) & ~std::size_t{3}); ++l) {
      tdx[l] = tdx[tasks - 1];
      tdy[l] = tdy[tasks - 1];
      st[l] = st[tasks - 1];
      ln[l] = ln[tasks - 1];
      ray[l] = ray[tasks - 1];
    }
    piece_lanes(x, tasks, ray, st, ln, tdx, tdy, ox, oy, best);
    tasks = 0;
  };
  // The rays' sectors, eight at a time (bin_of's float operations in lanes).
  alignas(32) std::int32_t bins[kMaxBinned];
  const std::size_t binned = std::min(k, kMaxBinned) & ~std::size_t{7};
  bins_avx2(dxs, dys, binned, bins);
  for (std::size_t j = 0; j < k; ++j) {
    best[j] = above;
    const double dx = dxs[j], dy = dys[j];
    const SectorIndex::Rec r =
        recs[j < binned ? bins[j] : bin_of(static_cast<float>(dx), static_cast<float>(dy))];
    auto add = [&](std::uint32_t start, std::uint32_t len) CS_AVX2 {
      if (len & SectorIndex::kLoose) {
        cast_piece(x, start, len, ox, oy, dx, dy, best[j]);
        return;
      }
      tdx[tasks] = dx;
      tdy[tasks] = dy;
      st[tasks] = static_cast<std::int32_t>(start);
      ln[tasks] = static_cast<std::int32_t>(len);
      ray[tasks] = static_cast<std::uint32_t>(j);
      if (++tasks == kTasks) flush();
    };
    // (for_pieces written out: through the generic template, GCC called this AVX2 lambda
    // instead of inlining it, 7 % slower on track-10000-50)
    if (!(r.len & SectorIndex::kMany)) {
      add(r.start, r.len);
    } else {
      const std::uint32_t n = r.len & ~SectorIndex::kMany;
      for (std::uint32_t q = r.start; q < r.start + n; ++q) add(x.ps[q], x.pl[q]);
    }
  }
  if (tasks > 0) flush();
}
#endif

// ------------------------------------------------------------ thick rays, cast ---
//
// An agent's thick rays in three passes. First each ray's candidates: the walls its
// pieces' band searches leave, and its loose walls, each with a lower bound of its entry
// (thick_wall). Then every ray's candidate of least bound is solved (ray_capsule), and
// last every other candidate whose bound can still lower its ray's best. The solves run
// four (ray, wall) pairs at a time in AVX2 double lanes with ray_capsule's own operations,
// branch-free (a ray's branches through the pieces and the capsule cases were what a
// thick ray spent most of its time on, mispredicted).

// The candidates of one agent's rays, ray by ray, and the pairs to solve.
struct ThickScratch {
  static constexpr std::size_t kMax = 2048;
  double lb[kMax];
  std::uint32_t wall[kMax];
  std::uint32_t ray[kMax];
  std::size_t n = 0;
  std::uint32_t pair_wall[kMax + 4], pair_ray[kMax + 4];
  std::size_t pairs = 0;
  static constexpr std::size_t kBins = 256;
  int bin[kBins];      // the rays' sectors (the first kBins rays; the rest compute theirs)
  bool lanes = false;  // AVX2 gathers and solves
};

// Whether bound lb can still lower best: a margin far above the rounding of the bounds and
// of a solve (a grazing solve's quotient loses digits: about 1e-16 |a| / |den| of t).
inline bool may_lower(double lb, double best) { return lb <= best * (1.0 + 1e-9) + 1e-9; }

inline double solve_wall(const SectorIndex& x, std::uint32_t i, double ox, double oy, double dx,
                         double dy, double r, double above) {
  return ray_capsule(x.va[2 * i] - ox, x.va[2 * i + 1] - oy, x.vb[2 * i] - ox, x.vb[2 * i + 1] - oy,
                     r, dx, dy, above);
}

// Wall i as a candidate of ray j, with a lower bound of its entry: the disc touches a
// point (t, s) of the wall (along the ray, from its line) at t - sqrt(r^2 - s^2) at the
// earliest, so at no less than the wall's least t minus sqrt(r^2 - s'^2), s' the least
// |s| on the wall (0 when it crosses the line). A wall more than r to one side, or more
// than r behind the origin, is none (ray_capsule's own screen drops it too). When the
// list is full the wall is solved at once. Returns whether its b vertex lies beyond rr on
// `stop`'s side (-1, +1; 0 never): the end of a piece's band.
inline bool thick_wall(const SectorIndex& x, std::uint32_t i, std::uint32_t j, double ox, double oy,
                       double dx, double dy, double r, double above, double& best, ThickScratch& c,
                       int stop, double rr) {
  const double ax = x.va[2 * i] - ox, ay = x.va[2 * i + 1] - oy;
  const double bx = x.vb[2 * i] - ox, by = x.vb[2 * i + 1] - oy;
  const double sa = line_side(ax, ay, dx, dy), sb = line_side(bx, by, dx, dy);
  const bool beyond = stop != 0 && stop * sb > rr;
  const double near_s = same_side(sa, sb) ? std::min(std::fabs(sa), std::fabs(sb)) : 0.0;
  if (near_s > r) return beyond;
  const double pa = ax * dx + ay * dy, pb = bx * dx + by * dy;
  if (pa < -r && pb < -r) return beyond;
  const double lb = std::min(pa, pb) - std::sqrt(r * r - near_s * near_s);
  if (!may_lower(lb, best)) return beyond;
  if (c.n == ThickScratch::kMax) {
    best = std::min(best, ray_capsule(ax, ay, bx, by, r, dx, dy, above));
    return beyond;
  }
  c.lb[c.n] = lb;
  c.wall[c.n] = i;
  c.ray[c.n++] = j;
  return beyond;
}

#if defined(CONTEXTSTEER_AVX2)
// For each mask of four lanes, its set lanes in order (the rest padding).
constexpr std::uint8_t kCompact[16][4] = {{0, 0, 0, 0}, {0, 0, 0, 0}, {1, 0, 0, 0}, {0, 1, 0, 0},
                                          {2, 0, 0, 0}, {0, 2, 0, 0}, {1, 2, 0, 0}, {0, 1, 2, 0},
                                          {3, 0, 0, 0}, {0, 3, 0, 0}, {1, 3, 0, 0}, {0, 1, 3, 0},
                                          {2, 3, 0, 0}, {0, 2, 3, 0}, {1, 2, 3, 0}, {0, 1, 2, 3}};

// thick_wall for walls [start, start + n), four at a time in double lanes. The bounds may
// differ from the scalar ones by rounding, far inside may_lower's margin, so the answer
// does not.
CS_AVX2 void gather_avx2(const SectorIndex& x, std::uint32_t start, std::uint32_t n,
                         std::uint32_t j, double ox, double oy, double dx, double dy, double r,
                         double above, double& best, ThickScratch& c, int stop, double rr) {
  // The band's end: a b vertex beyond rr on stop's side (stop s > rr); never for stop 0.
  const __m256d vstop = _mm256_set1_pd(stop), vrr = _mm256_set1_pd(stop != 0 ? rr : kInf);
  const __m256d vox = _mm256_set1_pd(ox), voy = _mm256_set1_pd(oy);
  const __m256d vdx = _mm256_set1_pd(dx), vdy = _mm256_set1_pd(dy), zero = _mm256_setzero_pd();
  const __m256d vr = _mm256_set1_pd(r), nr = _mm256_set1_pd(-r), r2 = _mm256_set1_pd(r * r);
  const __m256d absm = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7FFFFFFFFFFFFFFF));
  const __m256d limit = _mm256_set1_pd(best * (1.0 + 1e-9) + 1e-9);
  // Chunks of four walls; the last is moved back to stay in the arrays (x.walls >= 4) and
  // its lanes outside [i, start + n) are masked.
  const auto top = static_cast<std::uint32_t>(x.walls - 4);
  for (std::uint32_t i = start; i < start + n; i += 4) {
    const std::uint32_t base = std::min(i, top);
    const std::uint32_t e = std::min(start + n - base, 4u);
    const unsigned valid = ((1u << e) - 1u) & ~((1u << (i - base)) - 1u);
    __m256d ax, ay, bx, by;
    split_points(x.va.data() + 2 * base, ax, ay);
    split_points(x.vb.data() + 2 * base, bx, by);
    ax = _mm256_sub_pd(ax, vox);
    ay = _mm256_sub_pd(ay, voy);
    bx = _mm256_sub_pd(bx, vox);
    by = _mm256_sub_pd(by, voy);
    const __m256d sa = _mm256_sub_pd(_mm256_mul_pd(ax, vdy), _mm256_mul_pd(ay, vdx));
    const __m256d sb = _mm256_sub_pd(_mm256_mul_pd(bx, vdy), _mm256_mul_pd(by, vdx));
    const __m256d pa = _mm256_add_pd(_mm256_mul_pd(ax, vdx), _mm256_mul_pd(ay, vdy));
    const __m256d pb = _mm256_add_pd(_mm256_mul_pd(bx, vdx), _mm256_mul_pd(by, vdy));
    const __m256d same = _mm256_or_pd(
        _mm256_and_pd(_mm256_cmp_pd(sa, zero, _CMP_GT_OQ), _mm256_cmp_pd(sb, zero, _CMP_GT_OQ)),
        _mm256_and_pd(_mm256_cmp_pd(sa, zero, _CMP_LT_OQ), _mm256_cmp_pd(sb, zero, _CMP_LT_OQ)));
    const __m256d near_s =
        _mm256_and_pd(same, _mm256_min_pd(_mm256_and_pd(sa, absm), _mm256_and_pd(sb, absm)));
    const __m256d behind =
        _mm256_and_pd(_mm256_cmp_pd(pa, nr, _CMP_LT_OQ), _mm256_cmp_pd(pb, nr, _CMP_LT_OQ));
    const __m256d h2 = _mm256_max_pd(_mm256_sub_pd(r2, _mm256_mul_pd(near_s, near_s)), zero);
    const __m256d lb = _mm256_sub_pd(_mm256_min_pd(pa, pb), _mm256_sqrt_pd(h2));
    const __m256d keep =
        _mm256_andnot_pd(_mm256_or_pd(behind, _mm256_cmp_pd(near_s, vr, _CMP_GT_OQ)),
                         _mm256_cmp_pd(lb, limit, _CMP_LE_OQ));
    unsigned m = static_cast<unsigned>(_mm256_movemask_pd(keep)) & valid;
    const bool end = (static_cast<unsigned>(_mm256_movemask_pd(
                          _mm256_cmp_pd(_mm256_mul_pd(vstop, sb), vrr, _CMP_GT_OQ))) &
                      valid) != 0;
    if (!m) {
      if (end) break;
      continue;
    }
    alignas(32) double l4[4];
    _mm256_store_pd(l4, lb);
    if (c.n + 4 <= ThickScratch::kMax) {
      // The kept lanes appended without a branch: four slots written, popcount kept.
      const std::uint8_t* lane = kCompact[m];
      for (int q = 0; q < 4; ++q) {
        c.lb[c.n + q] = l4[lane[q]];
        c.wall[c.n + q] = base + lane[q];
        c.ray[c.n + q] = j;
      }
      c.n += static_cast<std::size_t>(__builtin_popcount(m));
    } else {
      while (m) {
        const int l = __builtin_ctz(m);
        m &= m - 1;
        const std::uint32_t wall = base + static_cast<std::uint32_t>(l);
        if (c.n == ThickScratch::kMax) {
          best = std::min(best, solve_wall(x, wall, ox, oy, dx, dy, r, above));
          continue;
        }
        c.lb[c.n] = l4[l];
        c.wall[c.n] = wall;
        c.ray[c.n++] = j;
      }
    }
    if (end) break;
  }
}

// ray_segment in four lanes with its operations; lanes whose segment lies on the ray's
// line (den == 0 without a side: the collinear case) are marked in `odd` for the scalar
// solve.
CS_AVX2 inline __m256d segment_lanes(__m256d ax, __m256d ay, __m256d bx, __m256d by, __m256d dx,
                                     __m256d dy, __m256d& odd) {
  const __m256d zero = _mm256_setzero_pd(), inf = _mm256_set1_pd(kInf);
  const __m256d sa = _mm256_sub_pd(_mm256_mul_pd(ax, dy), _mm256_mul_pd(ay, dx));
  const __m256d sb = _mm256_sub_pd(_mm256_mul_pd(bx, dy), _mm256_mul_pd(by, dx));
  const __m256d same = _mm256_or_pd(
      _mm256_and_pd(_mm256_cmp_pd(sa, zero, _CMP_GT_OQ), _mm256_cmp_pd(sb, zero, _CMP_GT_OQ)),
      _mm256_and_pd(_mm256_cmp_pd(sa, zero, _CMP_LT_OQ), _mm256_cmp_pd(sb, zero, _CMP_LT_OQ)));
  const __m256d den = _mm256_sub_pd(sa, sb);
  odd = _mm256_or_pd(odd, _mm256_andnot_pd(same, _mm256_cmp_pd(den, zero, _CMP_EQ_OQ)));
  const __m256d t = _mm256_div_pd(_mm256_sub_pd(_mm256_mul_pd(ax, by), _mm256_mul_pd(ay, bx)), den);
  const __m256d hit =
      _mm256_blendv_pd(inf, _mm256_add_pd(t, zero), _mm256_cmp_pd(t, zero, _CMP_GE_OQ));
  return _mm256_blendv_pd(hit, inf, same);
}

// ray_circle in four lanes with its operations.
CS_AVX2 inline __m256d circle_lanes(__m256d qx, __m256d qy, __m256d r, __m256d r2, __m256d dx,
                                    __m256d dy) {
  const __m256d zero = _mm256_setzero_pd(), inf = _mm256_set1_pd(kInf);
  const __m256d absm = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7FFFFFFFFFFFFFFF));
  const __m256d c = _mm256_sub_pd(_mm256_add_pd(_mm256_mul_pd(qx, qx), _mm256_mul_pd(qy, qy)), r2);
  const __m256d b = _mm256_add_pd(_mm256_mul_pd(qx, dx), _mm256_mul_pd(qy, dy));
  const __m256d e =
      _mm256_and_pd(_mm256_sub_pd(_mm256_mul_pd(qx, dy), _mm256_mul_pd(qy, dx)), absm);
  const __m256d disc = _mm256_mul_pd(_mm256_sub_pd(r, e), _mm256_add_pd(r, e));
  __m256d t = _mm256_div_pd(c, _mm256_add_pd(b, _mm256_sqrt_pd(_mm256_max_pd(disc, zero))));
  t = _mm256_blendv_pd(t, inf, _mm256_cmp_pd(disc, zero, _CMP_LT_OQ));
  t = _mm256_blendv_pd(t, inf, _mm256_cmp_pd(b, zero, _CMP_LE_OQ));
  return _mm256_blendv_pd(t, zero, _mm256_cmp_pd(c, zero, _CMP_LE_OQ));
}

// ray_capsule(a, b, r, d, tmax) in four lanes with its operations (a, b relative to the
// origin); `odd` marks the lanes to solve with the scalar code (the collinear case).
CS_AVX2 __m256d capsule_lanes(__m256d ax, __m256d ay, __m256d bx, __m256d by, double r, __m256d dx,
                              __m256d dy, double tmax, __m256d& odd) {
  const __m256d zero = _mm256_setzero_pd(), one = _mm256_set1_pd(1.0);
  const __m256d inf = _mm256_set1_pd(kInf), sign = _mm256_set1_pd(-0.0);
  const __m256d absm = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7FFFFFFFFFFFFFFF));
  const __m256d vr = _mm256_set1_pd(r), nr = _mm256_set1_pd(-r), r2 = _mm256_set1_pd(r * r);
  // capsule_out_of_reach
  const __m256d sa = _mm256_sub_pd(_mm256_mul_pd(ax, dy), _mm256_mul_pd(ay, dx));
  const __m256d sb = _mm256_sub_pd(_mm256_mul_pd(bx, dy), _mm256_mul_pd(by, dx));
  __m256d out = _mm256_or_pd(
      _mm256_and_pd(_mm256_cmp_pd(sa, vr, _CMP_GT_OQ), _mm256_cmp_pd(sb, vr, _CMP_GT_OQ)),
      _mm256_and_pd(_mm256_cmp_pd(sa, nr, _CMP_LT_OQ), _mm256_cmp_pd(sb, nr, _CMP_LT_OQ)));
  const __m256d pa = _mm256_add_pd(_mm256_mul_pd(ax, dx), _mm256_mul_pd(ay, dy));
  const __m256d pb = _mm256_add_pd(_mm256_mul_pd(bx, dx), _mm256_mul_pd(by, dy));
  out = _mm256_or_pd(
      out, _mm256_and_pd(_mm256_cmp_pd(pa, nr, _CMP_LT_OQ), _mm256_cmp_pd(pb, nr, _CMP_LT_OQ)));
  out = _mm256_or_pd(out, _mm256_cmp_pd(_mm256_sub_pd(_mm256_min_pd(pa, pb), vr),
                                        _mm256_set1_pd(tmax), _CMP_GT_OQ));
  // inside_capsule(closest_on_segment(a, b, 0, 0), r)
  const __m256d ex = _mm256_sub_pd(bx, ax), ey = _mm256_sub_pd(by, ay);
  const __m256d len2 = _mm256_add_pd(_mm256_mul_pd(ex, ex), _mm256_mul_pd(ey, ey));
  const __m256d num = _mm256_add_pd(_mm256_mul_pd(_mm256_sub_pd(zero, ax), ex),
                                    _mm256_mul_pd(_mm256_sub_pd(zero, ay), ey));
  const __m256d u =
      _mm256_blendv_pd(zero, _mm256_div_pd(num, len2), _mm256_cmp_pd(len2, zero, _CMP_GT_OQ));
  const __m256d lo = _mm256_cmp_pd(u, zero, _CMP_LE_OQ), hi = _mm256_cmp_pd(u, one, _CMP_GE_OQ);
  __m256d qx = _mm256_add_pd(ax, _mm256_mul_pd(u, ex));
  __m256d qy = _mm256_add_pd(ay, _mm256_mul_pd(u, ey));
  qx = _mm256_blendv_pd(_mm256_blendv_pd(qx, bx, hi), ax, lo);
  qy = _mm256_blendv_pd(_mm256_blendv_pd(qy, by, hi), ay, lo);
  const __m256d inside =
      _mm256_cmp_pd(_mm256_add_pd(_mm256_mul_pd(qx, qx), _mm256_mul_pd(qy, qy)), r2, _CMP_LE_OQ);
  // capsule_entry_solve
  const __m256d s = _mm256_div_pd(vr, _mm256_sqrt_pd(len2));
  const __m256d nx = _mm256_mul_pd(_mm256_xor_pd(ey, sign), s), ny = _mm256_mul_pd(ex, s);
  const __m256d rh = _mm256_mul_pd(_mm256_sub_pd(_mm256_mul_pd(ey, ax), _mm256_mul_pd(ex, ay)), s);
  const __m256d clear =
      _mm256_cmp_pd(_mm256_and_pd(rh, absm), _mm256_set1_pd(r * r * (1.0 + 1e-9)), _CMP_GT_OQ);
  const __m256d circ =
      _mm256_min_pd(circle_lanes(ax, ay, vr, r2, dx, dy), circle_lanes(bx, by, vr, r2, dx, dy));
  __m256d odd_solve = zero;
  const __m256d plus =
      segment_lanes(_mm256_add_pd(ax, nx), _mm256_add_pd(ay, ny), _mm256_add_pd(bx, nx),
                    _mm256_add_pd(by, ny), dx, dy, odd_solve);
  const __m256d minus =
      segment_lanes(_mm256_sub_pd(ax, nx), _mm256_sub_pd(ay, ny), _mm256_sub_pd(bx, nx),
                    _mm256_sub_pd(by, ny), dx, dy, odd_solve);
  // Clear of the offset line on its side: that side (plus, or minus when rh < 0; the
  // scalar code negates n, and a + (-n) is a - n bit for bit), the discs when it misses.
  const __m256d side = _mm256_blendv_pd(plus, minus, _mm256_cmp_pd(rh, zero, _CMP_LT_OQ));
  const __m256d t_clear = _mm256_blendv_pd(side, circ, _mm256_cmp_pd(side, inf, _CMP_EQ_OQ));
  const __m256d t_near = _mm256_min_pd(_mm256_min_pd(circ, plus), minus);
  __m256d t = _mm256_blendv_pd(t_near, t_clear, clear);
  t = _mm256_blendv_pd(t, zero, inside);
  odd = _mm256_andnot_pd(_mm256_or_pd(out, inside), odd_solve);
  return _mm256_blendv_pd(t, inf, out);
}

// Solves the pairs (pair_ray, pair_wall) of c, four at a time, into best.
CS_AVX2 void solve_pairs_avx2(const SectorIndex& x, ThickScratch& c, const double* dxs,
                              const double* dys, double ox, double oy, double r, double above,
                              double* best) {
  const __m256d vox = _mm256_set1_pd(ox), voy = _mm256_set1_pd(oy);
  for (std::size_t l = c.pairs; l < ((c.pairs + 3) & ~std::size_t{3}); ++l) {
    c.pair_wall[l] = c.pair_wall[c.pairs - 1];
    c.pair_ray[l] = c.pair_ray[c.pairs - 1];
  }
  for (std::size_t p = 0; p < c.pairs; p += 4) {
    const std::uint32_t* rj = c.pair_ray + p;
    const __m128i w = _mm_loadu_si128(reinterpret_cast<const __m128i*>(c.pair_wall + p));
    const Lanes2 a = load_points(x.va.data(), w), b = load_points(x.vb.data(), w);
    const __m256d dx = _mm256_setr_pd(dxs[rj[0]], dxs[rj[1]], dxs[rj[2]], dxs[rj[3]]);
    const __m256d dy = _mm256_setr_pd(dys[rj[0]], dys[rj[1]], dys[rj[2]], dys[rj[3]]);
    __m256d odd = _mm256_setzero_pd();
    const __m256d t =
        capsule_lanes(_mm256_sub_pd(a.x, vox), _mm256_sub_pd(a.y, voy), _mm256_sub_pd(b.x, vox),
                      _mm256_sub_pd(b.y, voy), r, dx, dy, above, odd);
    alignas(32) double t4[4];
    _mm256_store_pd(t4, t);
    const int odd_m = _mm256_movemask_pd(odd);
    for (std::size_t l = 0; l < 4 && p + l < c.pairs; ++l) {
      const double v = (odd_m >> l) & 1 ? solve_wall(x, c.pair_wall[p + l], ox, oy, dxs[rj[l]],
                                                     dys[rj[l]], r, above)
                                        : t4[l];
      best[rj[l]] = std::min(best[rj[l]], v);
    }
  }
  c.pairs = 0;
}
#endif

// The walls [start, start + n) as candidates of ray j, up to the first whose b vertex lies
// beyond rr on stop's side (none for stop 0).
inline void gather_run(const SectorIndex& x, std::uint32_t start, std::uint32_t n, std::uint32_t j,
                       double ox, double oy, double dx, double dy, double r, double above,
                       double& best, ThickScratch& c, int stop = 0, double rr = 0.0) {
#if defined(CONTEXTSTEER_AVX2)
  if (x.walls >= 4 && c.lanes) {
    gather_avx2(x, start, n, j, ox, oy, dx, dy, r, above, best, c, stop, rr);
    return;
  }
#endif
  for (std::uint32_t i = start; i < start + n; ++i)
    if (thick_wall(x, i, j, ox, oy, dx, dy, r, above, best, c, stop, rr)) break;
}

// One piece's candidates for ray j.
void thick_piece(const SectorIndex& x, std::uint32_t start, std::uint32_t len, std::uint32_t j,
                 double ox, double oy, double dx, double dy, double r, double rr, double above,
                 double& best, ThickScratch& cand) {
  if (len & SectorIndex::kLoose) {
    gather_run(x, start, len & ~SectorIndex::kLoose, j, ox, oy, dx, dy, r, above, best, cand);
    return;
  }
  const std::uint32_t last = start + len - 1, end = start + len;
  const double s0 = vertex_side(x, start, last, ox, oy, dx, dy);
  const double s1 = vertex_side(x, end, last, ox, oy, dx, dy);
  const int c0 = side_class(s0, rr), c1 = side_class(s1, rr);
  if (c0 != 0 && c0 == c1) return;  // every vertex beyond rr on that side
  std::uint32_t a = start;          // candidates: walls from a
  if (c0 != 0) {
    // The last vertex of the prefix beyond rr on c0's side (f = c0 s - rr > 0).
    a = band_edge(x, start, end, c0 * s0 - rr, c0 * s1 - rr, c0, rr, ox, oy, dx, dy);
  }
  // Up to the first vertex beyond rr on c1's side, where the gather stops (every vertex
  // after it is beyond too; with c1 = 0 the band reaches the piece's end).
  gather_run(x, a, end - a, j, ox, oy, dx, dy, r, above, best, cand, c1, rr);
}

// Solves the pairs of c one by one (without AVX2).
void solve_pairs_scalar(const SectorIndex& x, ThickScratch& c, const double* dxs, const double* dys,
                        double ox, double oy, double r, double above, double* best) {
  for (std::size_t p = 0; p < c.pairs; ++p) {
    const std::uint32_t j = c.pair_ray[p];
    best[j] = std::min(best[j], solve_wall(x, c.pair_wall[p], ox, oy, dxs[j], dys[j], r, above));
  }
  c.pairs = 0;
}

void solve_pairs(const SectorIndex& x, ThickScratch& c, const double* dxs, const double* dys,
                 double ox, double oy, double r, double above, double* best) {
  if (c.pairs == 0) return;
#if defined(CONTEXTSTEER_AVX2)
  if (c.lanes) {
    solve_pairs_avx2(x, c, dxs, dys, ox, oy, r, above, best);
    return;
  }
#endif
  solve_pairs_scalar(x, c, dxs, dys, ox, oy, r, above, best);
}

// The agent's thick rays: candidates, then each ray's least bound solved, then the rest
// whose bounds can still lower their rays' best.
void thick_agent(const SectorIndex& x, float ox, float oy, const double* dxs, const double* dys,
                 std::size_t k, float L, float rf, double* best, ThickScratch& c) {
  const SectorIndex::Rec* recs = cell_records(x, ox, oy);
  const double above = std::nextafter(static_cast<double>(L), static_cast<double>(kInf));
  const double r = rf, rr = r + x.band_eps;
  c.n = 0;
  c.pairs = 0;
  // Each ray's record and its pieces are fetched for all rays before the first is cast:
  // read ray by ray, each waited on memory twice (on random origins most of its time).
  // (The first kBins rays keep their sectors; beyond them, only those are fetched early.)
  const std::size_t early = std::min(k, ThickScratch::kBins);
  for (std::size_t j = 0; j < k; ++j) best[j] = above;
  for (std::size_t j = 0; j < early; ++j) {
    const int b = bin_of(static_cast<float>(dxs[j]), static_cast<float>(dys[j]));
    c.bin[j] = b;
    __builtin_prefetch(recs + b);
  }
  for (std::size_t j = 0; j < early; ++j) {
    const SectorIndex::Rec rec = recs[c.bin[j]];
    if (rec.len & SectorIndex::kMany) {
      __builtin_prefetch(x.ps.data() + rec.start);
      __builtin_prefetch(x.pl.data() + rec.start);
    } else {
      __builtin_prefetch(x.va.data() + 2 * rec.start);
    }
  }
  for (std::size_t j0 = 0; j0 < k;) {
    // Rays [j0, j1): while the list has room for 512 more candidates (a ray with more
    // solves its overflow as it is met).
    std::size_t j1 = j0;
    for (; j1 < k && c.n + 512 <= ThickScratch::kMax; ++j1) {
      const double dx = dxs[j1], dy = dys[j1];
      const auto jj = static_cast<std::uint32_t>(j1);
      const int bin = j1 < ThickScratch::kBins
                          ? c.bin[j1]
                          : bin_of(static_cast<float>(dx), static_cast<float>(dy));
      for_pieces(x, recs[bin], [&](std::uint32_t start, std::uint32_t len) {
        thick_piece(x, start, len, jj, ox, oy, dx, dy, r, rr, above, best[j1], c);
      });
    }
    // Each ray's candidate of least bound (the candidates come ray by ray).
    std::size_t q = 0;
    while (q < c.n) {
      const std::uint32_t j = c.ray[q];
      std::size_t m = q, e = q + 1;
      for (; e < c.n && c.ray[e] == j; ++e)
        if (c.lb[e] < c.lb[m]) m = e;
      if (may_lower(c.lb[m], best[j])) {
        c.pair_wall[c.pairs] = c.wall[m];
        c.pair_ray[c.pairs++] = j;
      }
      c.lb[m] = kInf;  // solved (or not needed)
      q = e;
    }
    solve_pairs(x, c, dxs, dys, ox, oy, r, above, best);
    // The rest that can still lower their ray's best.
    for (std::size_t p = 0; p < c.n; ++p) {
      const std::uint32_t j = c.ray[p];
      c.pair_wall[c.pairs] = c.wall[p];
      c.pair_ray[c.pairs] = j;
      c.pairs += may_lower(c.lb[p], best[j]) ? 1 : 0;
    }
    solve_pairs(x, c, dxs, dys, ox, oy, r, above, best);
    c.n = 0;
    j0 = j1;
  }
}

// ------------------------------------------------------------------ build ---

}  // namespace

void cut_sector_run(const std::vector<SectorWall>& w, std::uint32_t start, std::uint32_t end,
                    const double qx[4], const double qy[4], std::vector<std::uint32_t>& ps,
                    std::vector<std::uint32_t>& pl, std::size_t from, std::size_t& pieces,
                    std::size_t& loose) {
  constexpr double m2 = kSideMargin * kSideMargin;
  auto joined = [&](std::uint32_t k) { return w[k].bx == w[k + 1].ax && w[k].by == w[k + 1].ay; };
  std::uint32_t i = start;
  while (i < end) {
    int sg = 0;
    std::uint32_t j = i;
    for (; j < end; ++j) {
      if (j > i && !joined(j - 1)) break;
      const SectorWall& s = w[j];
      const double ex = s.bx - s.ax, ey = s.by - s.ay, len2 = ex * ex + ey * ey;
      int ok = 0;
      for (int q = 0; q < 4; ++q) {
        // cross(b - a, corner - a) = cross(a - corner, b - corner): the turn the wall makes
        // seen from the corner, clearly one way
        const double cr = ex * (qy[q] - s.ay) - ey * (qx[q] - s.ax);
        const int sq = cr * cr > m2 * len2 ? (cr > 0.0 ? 1 : -1) : 0;
        if (sq == 0 || (ok != 0 && sq != ok)) {
          ok = 0;
          break;
        }
        ok = sq;
      }
      if (ok == 0 || (sg != 0 && ok != sg)) break;
      // Less than a half turn from the first vertex to the last, from every corner: the
      // chord turns the walls' way. Checked at each wall added, each adding less than a
      // half turn, so the total cannot pass a half turn unseen.
      bool chord = true;
      for (int q = 0; q < 4 && j > i; ++q) {
        const double ux = w[i].ax - qx[q], uy = w[i].ay - qy[q];
        const double vx = w[j].bx - qx[q], vy = w[j].by - qy[q];
        const double cr = ok * (ux * vy - uy * vx), cx = vx - ux, cy = vy - uy;
        if (!(cr > 0.0 && cr * cr > m2 * (cx * cx + cy * cy))) {
          chord = false;
          break;
        }
      }
      if (!chord) break;
      sg = ok;
    }
    if (j == i) {
      // A loose wall: joined to the loose piece just before it when there is one.
      if (ps.size() > from && (pl.back() & SectorIndex::kLoose) &&
          ps.back() + (pl.back() & ~SectorIndex::kLoose) == i)
        ++pl.back();
      else {
        ps.push_back(i);
        pl.push_back(1u | SectorIndex::kLoose);
      }
      ++loose;
      ++i;
      continue;
    }
    ps.push_back(i);
    pl.push_back(j - i);
    ++pieces;
    i = j;
  }
}

namespace {

// The convex hull of six points (monotone chain), counter-clockwise in hx, hy (at most 6
// vertices; 1 or 2 when they are coincident or collinear). Returns the count.
int convex_hull6(const double* px, const double* py, double* hx, double* hy) {
  int o[6] = {0, 1, 2, 3, 4, 5};
  std::sort(o, o + 6,
            [&](int a, int b) { return px[a] < px[b] || (px[a] == px[b] && py[a] < py[b]); });
  auto cross = [&](int a, int b, int c) {
    return (px[b] - px[a]) * (py[c] - py[a]) - (py[b] - py[a]) * (px[c] - px[a]);
  };
  int h[12], n = 0;
  for (int i = 0; i < 6; ++i) {  // lower chain
    while (n >= 2 && cross(h[n - 2], h[n - 1], o[i]) <= 0.0) --n;
    h[n++] = o[i];
  }
  for (int i = 4, lo = n + 1; i >= 0; --i) {  // upper chain
    while (n >= lo && cross(h[n - 2], h[n - 1], o[i]) <= 0.0) --n;
    h[n++] = o[i];
  }
  --n;  // the first point, repeated at the end
  if (n < 1) n = 1;
  for (int i = 0; i < n; ++i) {
    hx[i] = px[h[i]];
    hy[i] = py[h[i]];
  }
  return n;
}

// The cells [i0, i1] of a row or column of `count` cells from `origin` that the interval
// [lo, hi] meets; false when none.
bool cell_span(double lo, double hi, double origin, double cell, std::size_t count, std::size_t& i0,
               std::size_t& i1) {
  const double f0 = std::floor((lo - origin) / cell), f1 = std::floor((hi - origin) / cell);
  if (f1 < 0 || f0 >= static_cast<double>(count)) return false;
  i0 = static_cast<std::size_t>(std::max(0.0, f0));
  i1 = static_cast<std::size_t>(std::min(static_cast<double>(count) - 1, f1));
  return true;
}

// What one sector's pass produces: for each cell with walls, its pieces.
struct BinPieces {
  std::vector<std::uint32_t> cell;   // cells with a list, in order
  std::vector<std::uint32_t> first;  // their first piece in ps / pl (one more at the end)
  std::vector<std::uint32_t> ps, pl;
  std::size_t pieces = 0, loose = 0;
};

}  // namespace

std::unique_ptr<const SectorIndex> build_sectors(const World& w, std::uint32_t layers, float reach,
                                                 float radius) {
  if (!(reach > 0.0f) || !std::isfinite(reach)) return nullptr;
  if (!(radius >= 0.0f) || !std::isfinite(radius)) return nullptr;
  const auto lay = w.obstacle_layers();
  for (std::size_t c = 0; c < w.circle_count(); ++c)
    if (lay[static_cast<std::size_t>(w.circle_obstacle()[c])] & layers) return nullptr;
  std::vector<SectorWall> walls;
  const auto xy = w.walls();
  double xmin = kInf, ymin = kInf, xmax = -kInf, ymax = -kInf;
  for (std::size_t i = 0; i < w.segment_count(); ++i) {
    if (!(lay[static_cast<std::size_t>(w.wall_obstacle()[i])] & layers)) continue;
    const SectorWall s{xy[4 * i], xy[4 * i + 1], xy[4 * i + 2], xy[4 * i + 3]};
    walls.push_back(s);
    xmin = std::min({xmin, s.ax, s.bx});
    xmax = std::max({xmax, s.ax, s.bx});
    ymin = std::min({ymin, s.ay, s.by});
    ymax = std::max({ymax, s.ay, s.by});
  }
  if (walls.empty()) return nullptr;
  auto x = std::make_unique<SectorIndex>();
  x->layers = layers;
  x->reach = reach;
  const double R = reach;
  const double scale =
      std::max({std::fabs(xmin), std::fabs(xmax), std::fabs(ymin), std::fabs(ymax)}) + R +
      static_cast<double>(radius);
  // Origins are placed in cells in float32: a few ulps of the scene's coordinates.
  x->pad = 1e-3 + 0x1p-18 * scale;
  x->radius = radius;
  // A side value's rounding is below 1e-15 of the scale; the band's margin is far above
  // it and far below the pad.
  x->band_eps = radius > 0.0f ? 1e-12 * (scale + static_cast<double>(radius)) : 0.0;
  // Thick rays: a wall within r of a ray from the cell is met by a thin ray of the same
  // direction from the cell grown by r, so lists and pieces are made for the grown cell
  // (every line at a distance up to r + band_eps from an origin of the cell passes through
  // it, and crosses each piece at most once).
  const double pad =
      x->pad + (radius > 0.0f ? static_cast<double>(radius) + 2.0 * x->band_eps : 0.0);
  // Thick rays: cells at least the radius wide (a cell grown by r on each side is mostly
  // growth below that, and lists every wall in (2 r / cell)^2 times as many cells).
  double cell = std::max(
      {R * kCellPerReach, static_cast<double>(w.grid().cell), static_cast<double>(radius)});
  // The box: the walls' box grown by a cell (a ray from further out walks the grid).
  auto fit = [&](double s) {
    const double nx = std::floor((xmax - xmin) / s) + 3, ny = std::floor((ymax - ymin) / s) + 3;
    return nx * ny * kBins * sizeof(SectorIndex::Rec) <= kSectorBudget / 4;
  };
  for (int grow = 0; grow < 64 && !fit(cell); ++grow) cell *= 1.25;
  if (!fit(cell)) return nullptr;
  x->cell = cell;
  x->x0 = xmin - cell;
  x->y0 = ymin - cell;
  x->nx = static_cast<std::int32_t>(std::floor((xmax - xmin) / cell)) + 3;
  x->ny = static_cast<std::int32_t>(std::floor((ymax - ymin) / cell)) + 3;
  x->fx0 = static_cast<float>(x->x0);
  x->fy0 = static_cast<float>(x->y0);
  x->inv_cell = static_cast<float>(1.0 / cell);
  const std::size_t nx = static_cast<std::size_t>(x->nx), ny = static_cast<std::size_t>(x->ny);
  const std::size_t cells = nx * ny;
  const std::size_t m = walls.size();
  x->walls = m;
  x->va.resize(2 * m);
  x->vb.resize(2 * m);
  for (std::size_t i = 0; i < m; ++i) {
    x->va[2 * i] = walls[i].ax;
    x->va[2 * i + 1] = walls[i].ay;
    x->vb[2 * i] = walls[i].bx;
    x->vb[2 * i + 1] = walls[i].by;
  }

  // Per sector: every wall's cells, a convex hull of the wall swept back over the sector's
  // ray triangle (wall a, b each minus 0, R' u_lo, R' u_hi, R' = R / cos(half angle):
  // the triangle holds the sector of radius R), scanned row by row, the rows and columns
  // padded; then each cell's list (wall order) cut into runs and pieces.
  std::vector<BinPieces> bins(kBins);
  std::atomic<std::size_t> bytes{0};
  std::atomic<bool> over{false};
  parallel_for(kBins, 1, [&](std::size_t b0, std::size_t b1) {
    std::vector<std::vector<std::uint32_t>> lists(cells);
    std::vector<std::uint32_t> used;
    for (std::size_t b = b0; b < b1 && !over.load(std::memory_order_relaxed); ++b) {
      for (std::uint32_t c : used) lists[c].clear();
      used.clear();
      double lo = diamond_angle(4.0 * b / kBins) - kBinSlack;
      double hi = diamond_angle(4.0 * (b + 1) / kBins) + kBinSlack;
      if (hi < lo) hi += 2 * kPi;
      const double Rp = R / std::cos(0.5 * (hi - lo)) + pad;
      const double ex[3] = {0.0, -Rp * std::cos(lo), -Rp * std::cos(hi)};
      const double ey[3] = {0.0, -Rp * std::sin(lo), -Rp * std::sin(hi)};
      for (std::uint32_t i = 0; i < m; ++i) {
        double px[6], py[6];
        for (int e = 0; e < 3; ++e) {
          px[e] = walls[i].ax + ex[e];
          py[e] = walls[i].ay + ey[e];
          px[3 + e] = walls[i].bx + ex[e];
          py[3 + e] = walls[i].by + ey[e];
        }
        double ylo = py[0], yhi = py[0];
        for (int e = 1; e < 6; ++e) {
          ylo = std::min(ylo, py[e]);
          yhi = std::max(yhi, py[e]);
        }
        double hx[12], hy[12];
        const int nh = convex_hull6(px, py, hx, hy);
        std::size_t j0, j1;
        if (!cell_span(ylo - pad, yhi + pad, x->y0, cell, ny, j0, j1)) continue;
        for (std::size_t j = j0; j <= j1; ++j) {
          // The hull's x extent over the row's band: each hull edge clipped to the band
          // (a convex region's extremes lie on its boundary).
          const double sy0 = x->y0 + static_cast<double>(j) * cell - pad;
          const double sy1 = x->y0 + static_cast<double>(j + 1) * cell + pad;
          double xl = kInf, xh = -kInf;
          for (int e = 0; e < nh; ++e) {
            const int f = e + 1 < nh ? e + 1 : 0;
            const double ya = hy[e], yb = hy[f], xa = hx[e], xb = hx[f];
            double t0 = 0.0, t1 = 1.0;
            if (ya == yb) {
              if (ya < sy0 || ya > sy1) continue;
            } else {
              double ta = (sy0 - ya) / (yb - ya), tb = (sy1 - ya) / (yb - ya);
              if (ta > tb) std::swap(ta, tb);
              t0 = std::max(0.0, ta);
              t1 = std::min(1.0, tb);
              if (t0 > t1) continue;
            }
            const double xa_ = xa + t0 * (xb - xa), xb_ = xa + t1 * (xb - xa);
            xl = std::min({xl, xa_, xb_});
            xh = std::max({xh, xa_, xb_});
          }
          if (xl > xh) continue;
          std::size_t c0, c1;
          if (!cell_span(xl - pad, xh + pad, x->x0, cell, nx, c0, c1)) continue;
          for (std::size_t c = c0; c <= c1; ++c) {
            auto& l = lists[j * nx + c];
            if (l.empty()) used.push_back(static_cast<std::uint32_t>(j * nx + c));
            l.push_back(i);
          }
        }
      }
      std::sort(used.begin(), used.end());
      BinPieces& out = bins[b];
      for (std::uint32_t c : used) {
        const auto& l = lists[c];
        const double cx0 = x->x0 + static_cast<double>(c % nx) * cell - pad;
        const double cy0 = x->y0 + static_cast<double>(c / nx) * cell - pad;
        const double cx1 = cx0 + cell + 2 * pad, cy1 = cy0 + cell + 2 * pad;
        const double qx[4] = {cx0, cx1, cx0, cx1}, qy[4] = {cy0, cy0, cy1, cy1};
        out.cell.push_back(c);
        const std::size_t from = out.ps.size();
        out.first.push_back(static_cast<std::uint32_t>(from));
        for (std::size_t k = 0; k < l.size();) {
          std::size_t e = k + 1;
          while (e < l.size() && l[e] == l[e - 1] + 1) ++e;
          cut_sector_run(walls, l[k], l[e - 1] + 1, qx, qy, out.ps, out.pl, from, out.pieces,
                         out.loose);
          k = e;
        }
      }
      out.first.push_back(static_cast<std::uint32_t>(out.ps.size()));
      const std::size_t add = out.ps.size() * 8 + out.cell.size() * 8;
      if (bytes.fetch_add(add) + add > kSectorBudget) over.store(true);
    }
  });
  if (over.load()) return nullptr;

  // Records, cell-major: one piece in the record itself, else the pieces copied to ps / pl.
  x->rec.assign(cells * kBins, SectorIndex::Rec{0, SectorIndex::kMany});
  for (int b = 0; b < kBins; ++b) {
    const BinPieces& bp = bins[static_cast<std::size_t>(b)];
    x->pieces += bp.pieces;
    x->loose += bp.loose;
    for (std::size_t q = 0; q < bp.cell.size(); ++q) {
      const std::uint32_t a = bp.first[q], e = bp.first[q + 1];
      SectorIndex::Rec& r = x->rec[static_cast<std::size_t>(bp.cell[q]) * kBins + b];
      if (e - a == 1 && !(bp.pl[a] & SectorIndex::kLoose)) {
        r = {bp.ps[a], bp.pl[a]};
      } else {
        r = {static_cast<std::uint32_t>(x->ps.size()), (e - a) | SectorIndex::kMany};
        x->ps.insert(x->ps.end(), bp.ps.begin() + a, bp.ps.begin() + e);
        x->pl.insert(x->pl.end(), bp.pl.begin() + a, bp.pl.begin() + e);
      }
    }
  }
  if (x->bytes() > kSectorBudget) return nullptr;
  return x;
}

float sector_radius(float radius) {
  if (!(radius > 0.0f)) return 0.0f;
  // 2^(n/4): the least step at or above the radius (to 1e-6, so a step is its own radius).
  const double n = std::ceil(4.0 * std::log2(static_cast<double>(radius)) - 1e-6);
  const float step = static_cast<float>(std::exp2(n / 4.0));
  return std::max(step, radius);
}

const SectorIndex* sectors_for(const World& w, std::uint32_t layers, float reach, float radius,
                               std::size_t rays, bool force) {
  const SectorCache& cache = w.sectors();
  const SectorIndex* idx = nullptr;
  const float built_radius = sector_radius(radius);
  if (cache.find(layers, reach, built_radius, idx)) return idx;
  // A full cache keeps no more: these rays walk (a build here would be thrown away, and
  // the next call would build again).
  if (!cache.room()) return nullptr;
  if (!force) {
    // Ski rental: walk until the rays walked have cost about what a build would, then build.
    // A thick index lists each wall in the cells grown by its radius too.
    const double cell =
        std::max({static_cast<double>(reach) * kCellPerReach, static_cast<double>(w.grid().cell),
                  static_cast<double>(built_radius)});
    const double grown = 1.0 + 2.0 * static_cast<double>(built_radius) / std::max(cell, 1e-9);
    const double work = static_cast<double>(w.segment_count()) * kBins *
                        (1.0 + static_cast<double>(reach) / std::max(cell, 1e-9)) * grown;
    const double share = built_radius > 0.0f ? kAutoRaysThick : kAutoRays;
    if (static_cast<double>(cache.add_walked(built_radius, rays)) < share * work) return nullptr;
  }
  // One build at a time; meanwhile the other threads walk.
  if (!cache.begin_build()) return nullptr;
  struct Release {
    const SectorCache& c;
    ~Release() { c.end_build(); }
  } release{cache};
  if (cache.find(layers, reach, built_radius, idx)) return idx;
  if (!cache.room()) return nullptr;  // another build may have filled it since
  // Look-aheads that vary (with speed, say) outgrow the index built for the first: the next
  // reaches a quarter further than the longest held, so a few builds cover them.
  const float held = cache.longest_reach(layers, built_radius);
  const float built_reach = held > 0.0f ? std::max(reach, 1.25f * held) : reach;
  cache.count_build();
  std::shared_ptr<const SectorIndex> built(build_sectors(w, layers, built_reach, built_radius));
  return cache.store(layers, built_reach, built_radius, std::move(built));
}

void sector_agent(const SectorIndex& idx, float ox, float oy, const double* dx, const double* dy,
                  std::size_t k, float L, double* best) {
#if defined(CONTEXTSTEER_AVX2)
  if (use_avx2()) {
    sector_agent_avx2(idx, ox, oy, dx, dy, k, L, best);
    return;
  }
#endif
  sector_agent_scalar(idx, ox, oy, dx, dy, k, L, best);
}

void sector_agent_scalar(const SectorIndex& idx, float ox, float oy, const double* dx,
                         const double* dy, std::size_t k, float L, double* best) {
  const SectorIndex::Rec* recs = cell_records(idx, ox, oy);
  const double above = std::nextafter(static_cast<double>(L), static_cast<double>(kInf));
  for (std::size_t j = 0; j < k; ++j) {
    best[j] =
        cast_ray(idx, recs, ox, oy, static_cast<float>(dx[j]), static_cast<float>(dy[j]), above);
  }
}

void sector_agent_thick(const SectorIndex& idx, float ox, float oy, const double* dx,
                        const double* dy, std::size_t k, float L, float r, double* best,
                        bool scalar) {
  ThickScratch& scratch = thread_scratch<ThickScratch, ThickScratch>();
  scratch.lanes = !scalar && use_avx2();
  thick_agent(idx, ox, oy, dx, dy, k, L, r, best, scratch);
}

}  // namespace contextsteer::detail

namespace contextsteer {

std::vector<SectorCache::Info> SectorCache::info() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<Info> out;
  for (const auto& e : sets_) {
    const SectorIndex* x = e.index.get();
    out.push_back({e.layers, e.reach, e.radius, x != nullptr, x ? x->cell : 0.0, SectorIndex::kBins,
                   x ? x->bytes() : 0, x ? x->walls : 0, x ? x->pieces : 0, x ? x->loose : 0});
  }
  return out;
}

}  // namespace contextsteer
