// SPDX-License-Identifier: MIT
// Closest-hit raycasts (grid DDA) and the per-agent slot raycast (gather + branch-free loops).
#include "contextsteer/raycast.hpp"

#include "contextsteer/geometry.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "contextsteer/parallel.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace contextsteer {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// ---------------------------------------------------------------------------------------
// Ray against segment, in coordinates relative to the ray origin (a = A - O, b = B - O).
//
// The ray is p(t) = t d (|d| = 1, t >= 0), the segment q(u) = a + u (b - a), u in [0, 1].
// Crossing with d: cross(d, p) = 0 on the ray's line, so the segment meets the line where
//   cross(d, a + u (b - a)) = 0  <=>  u = sa / (sa - sb),   sa = cross(a, d), sb = cross(b, d)
// (cross(x, d) = x.x d.y - x.y d.x). u in [0, 1] <=> sa and sb do not have the same strict
// sign: a and b lie on opposite sides of (or on) the ray's line. Crossing p(t) = q(u) with
// (b - a) instead gives
//   t = cross(a, b - a) / cross(d, b - a) = cross(a, b) / (sa - sb).
// Testing sides with sa and sb, each computed from one endpoint only, makes neighbouring
// segments agree at a shared vertex (both see the same sb / sa value), so a ray through a
// vertex never slips between two walls. sa == sb == 0 means the segment lies on the ray's
// line (collinear): the hit is the first point of the segment at t >= 0, found by
// projecting both endpoints on d (distance 0 when the segment covers the origin).
// Precision: double, relative to the origin. The inputs are floats, so a - o is exact and
// the products in sa, sb are exact; each is rounded once, which keeps its sign exact (the
// side test is robust) and t accurate to a few ulps of double even for grazing hits.
// Returns +inf on a miss.
inline double ray_segment(double ax, double ay, double bx, double by, double dx, double dy) {
  const double sa = ax * dy - ay * dx;
  const double sb = bx * dy - by * dx;
  if (((sa > 0.0) & (sb > 0.0)) | ((sa < 0.0) & (sb < 0.0))) return kInf;
  const double den = sa - sb;
  if (den == 0.0) {
    const double pa = ax * dx + ay * dy, pb = bx * dx + by * dy;
    if ((pa <= 0.0 && pb >= 0.0) || (pb <= 0.0 && pa >= 0.0)) return 0.0;
    return pa > 0.0 ? std::min(pa, pb) : kInf;
  }
  const double t = (ax * by - ay * bx) / den;
  return t >= 0.0 ? t + 0.0 : kInf;  // + 0 turns -0 into +0
}

// Ray against the disc |x - q| <= r, q relative to the origin, in double. Solving

// Thick ray (a circle of radius r swept along d) against a segment = thin ray against the
// capsule {x : dist(x, segment) <= r}. Origin inside the capsule: t = 0. Otherwise the ray
// enters the (convex) capsule once, through one of the end discs or a side segment (the
// segment offset by r along a normal); when the origin lies beyond the offset line on one
// side, only that side can be the entry (a line crosses it once, from outside in), so the
// far side is not tested, and the discs only when that side is missed (a side hit is the
// entry, up to the junction points where both agree). Returns +inf on a miss or when the hit lies beyond tmax (the
// best hit so far; a tie is still returned).
inline double ray_capsule(double ax, double ay, double bx, double by, double r, double dx, double dy,
                          double tmax) {
  // Cheap rejects first: sa, sb are the signed distances of a and b from the ray's line, so
  // a segment entirely more than r to one side is missed; pa, pb are the distances along the
  // ray, so a segment more than r behind the origin, or beyond tmax + r, cannot do better.
  const double sa = ax * dy - ay * dx, sb = bx * dy - by * dx;
  if ((sa > r && sb > r) || (sa < -r && sb < -r)) return kInf;
  const double pa = ax * dx + ay * dy, pb = bx * dx + by * dy;
  if (pa < -r && pb < -r) return kInf;
  if (std::min(pa, pb) - r > tmax) return kInf;
  const double ex = bx - ax, ey = by - ay;
  const double len2 = ex * ex + ey * ey;
  const double u = std::clamp(-(ax * ex + ay * ey) / len2, 0.0, 1.0);
  const double px = ax + u * ex, py = ay + u * ey;
  if (px * px + py * py <= r * r) return 0.0;
  const double s = r / std::sqrt(len2);
  double nx = -ey * s, ny = ex * s;  // |n| = r
  // dot(n, -a) = r h, h the signed distance of the origin from the segment's line.
  const double rh = (ey * ax - ex * ay) * s;
  if (std::fabs(rh) > r * r * (1.0 + 1e-9)) {
    // The origin is clearly outside the offset line on its side: test that side only.
    if (rh < 0.0) {
      nx = -nx;
      ny = -ny;
    }
    const double t = ray_segment(ax + nx, ay + ny, bx + nx, by + ny, dx, dy);
    if (t < kInf) return t;
    return std::min(ray_circle(ax, ay, r, dx, dy), ray_circle(bx, by, r, dx, dy));
  }
  // The origin lies beyond an end, within r of the segment's line (or about on an offset
  // line): a line crosses each offset line once, so it cannot enter through a side; the
  // sides are still tested for rays starting about on them.
  double t = std::min(ray_circle(ax, ay, r, dx, dy), ray_circle(bx, by, r, dx, dy));
  t = std::min(t, ray_segment(ax + nx, ay + ny, bx + nx, by + ny, dx, dy));
  return std::min(t, ray_segment(ax - nx, ay - ny, bx - nx, by - ny, dx, dy));
}

// floor() for the cell arithmetic: baseline x86-64 has no rounding instruction, and the
// libm call dominated the grid walk. Exact for |x| < 2^31.
inline int floor_int(double x) {
  const int i = static_cast<int>(x);
  return i - (x < static_cast<double>(i));
}

enum : int { kNone = 0, kSeg = 1, kCircle = 2, kPolygon = 3 };

struct Best {
  double t;  // compared with max_dist in double; rounded to float only for the output
  int kind;
  std::int32_t index;  // segment row, circle row or (kPolygon) obstacle id
};

// Keeps the closest hit; on equal distances the first one found stays (a hit exactly at
// max_dist is accepted while nothing has been found yet).
inline void offer(Best& best, double t, int kind, std::int32_t index) {
  if (t < best.t || (best.kind == kNone && t == best.t)) best = {t, kind, index};
}

// Circles of a cell (thin and thick rays alike: a thick ray hits a circle grown by r).
inline void test_circles(const WorldGrid& g, std::size_t cell, double ox, double oy, double dx, double dy, double r,
                         std::uint32_t layers, Best& best) {
  const auto c0 = static_cast<std::size_t>(g.circ_start[cell]);
  const auto c1 = static_cast<std::size_t>(g.circ_start[cell + 1]);
  for (std::size_t e = c0; e < c1; ++e) {
    if (!(g.circ_layers[e] & layers)) continue;
    const double t = ray_circle(g.cx[e] - ox, g.cy[e] - oy, g.cr[e] + r, dx, dy);
    if (t <= best.t) offer(best, t, kCircle, g.circ_index[e]);
  }
}

#if defined(__SSE2__)
// A thin ray's origin and direction broadcast to 4 float lanes (all exact: the origin and
// the unit direction are float32 values), for the screen in test_cell_thin.
struct RayLanes {
  __m128 ox, oy, dx, dy;
  __m128i layers;
  RayLanes(double x, double y, double ux, double uy, std::uint32_t l)
      : ox(_mm_set1_ps(static_cast<float>(x))), oy(_mm_set1_ps(static_cast<float>(y))),
        dx(_mm_set1_ps(static_cast<float>(ux))), dy(_mm_set1_ps(static_cast<float>(uy))),
        layers(_mm_set1_epi32(static_cast<int>(l))) {}
};
#else
struct RayLanes {
  RayLanes(double, double, double, double, std::uint32_t) {}
};
#endif

// Thin ray against the segments and circles of a cell. The segments are screened 4 at a
// time in float32 (SSE2): an entry is dropped when its layer mask misses or both endpoints
// lie certainly strictly on the same side of the ray's line; the rest take the exact
// double test (ray_segment), so the distances are those of testing every entry exactly.
// Rounding bound: with ax' = fl(ax - ox) etc., fl(ax' dy - ay' dx) is within ~3 ulp
// (2^-24 relative) of the exact side value times |ax' dy| + |ay' dx| <= |ax'| + |ay'|
// (|d| = 1); the screen keeps anything within 2^-20 (|ax'| + |ay'|), 16x that. Measured on
// the racetrack, slot rays, L = 50 (callgrind, per ray; branch misses from its simulator):
// M = 10000 (7 entries a ray, ~1.1 pass): scalar 912 instructions, 11.1 misses; screened
// 877, 8.4, ~7% less CPU time; M = 1000: 733, 9.7 -> 819, 7.1, same time (the screen
// pays per cell, and cells hold ~4 entries). Earlier measured alternatives (scalar):
// solving every entry branch-free with a select for the minimum ran 40% more instructions
// for no fewer branch misses; a branch-free side test into a bit mask, then solving only
// straddling entries, cut branch misses per ray from 10.2 to 6.8 but ran 4% slower.
inline void test_cell_thin(const WorldGrid& g, std::size_t cell, double ox, double oy, double dx, double dy,
                           const RayLanes& lanes, std::uint32_t layers, Best& best) {
  const WorldGrid::SegBlock* blk = g.seg_blocks.data() + g.block_start[cell];
  const WorldGrid::SegBlock* const blk_end = g.seg_blocks.data() + g.block_start[cell + 1];
  for (; blk != blk_end; ++blk) {
#if defined(__SSE2__)
    const __m128 abs_mask = _mm_castsi128_ps(_mm_set1_epi32(0x7FFFFFFF));
    const __m128 tol = _mm_set1_ps(0x1p-20f);
    const __m128 zero = _mm_setzero_ps();
    const __m128 ax = _mm_sub_ps(_mm_load_ps(blk->ax), lanes.ox);
    const __m128 ay = _mm_sub_ps(_mm_load_ps(blk->ay), lanes.oy);
    const __m128 bx = _mm_sub_ps(_mm_load_ps(blk->bx), lanes.ox);
    const __m128 by = _mm_sub_ps(_mm_load_ps(blk->by), lanes.oy);
    const __m128 sa = _mm_sub_ps(_mm_mul_ps(ax, lanes.dy), _mm_mul_ps(ay, lanes.dx));
    const __m128 sb = _mm_sub_ps(_mm_mul_ps(bx, lanes.dy), _mm_mul_ps(by, lanes.dx));
    const __m128 ta = _mm_mul_ps(_mm_add_ps(_mm_and_ps(ax, abs_mask), _mm_and_ps(ay, abs_mask)), tol);
    const __m128 tb = _mm_mul_ps(_mm_add_ps(_mm_and_ps(bx, abs_mask), _mm_and_ps(by, abs_mask)), tol);
    const __m128 left = _mm_and_ps(_mm_cmpgt_ps(sa, ta), _mm_cmpgt_ps(sb, tb));
    const __m128 right = _mm_and_ps(_mm_cmplt_ps(sa, _mm_sub_ps(zero, ta)), _mm_cmplt_ps(sb, _mm_sub_ps(zero, tb)));
    const __m128i lay = _mm_load_si128(reinterpret_cast<const __m128i*>(blk->layers));
    const __m128i off = _mm_cmpeq_epi32(_mm_and_si128(lay, lanes.layers), _mm_setzero_si128());
    unsigned keep = ~static_cast<unsigned>(_mm_movemask_ps(_mm_or_ps(_mm_or_ps(left, right), _mm_castsi128_ps(off)))) & 0xFu;
#else
    unsigned keep = 0;
    for (int l = 0; l < 4; ++l) keep |= (blk->layers[l] & layers) ? 1u << l : 0u;
#endif
    while (keep) {
      const int l = __builtin_ctz(keep);
      keep &= keep - 1;
      const double t = ray_segment(blk->ax[l] - ox, blk->ay[l] - oy, blk->bx[l] - ox, blk->by[l] - oy, dx, dy);
      if (t <= best.t) offer(best, t, kSeg, blk->index[l]);
    }
  }
  (void)layers;
  if (!g.cx.empty() && g.circ_start[cell + 1] > g.circ_start[cell]) {
    test_circles(g, cell, ox, oy, dx, dy, 0.0, layers, best);
  }
}

// Thick ray (radius r) against the segments and circles of a cell.
inline void test_cell_thick(const WorldGrid& g, std::size_t cell, double ox, double oy, double dx, double dy,
                            double r, std::uint32_t layers, Best& best) {
  const auto s0 = static_cast<std::size_t>(g.seg_start[cell]);
  const auto s1 = static_cast<std::size_t>(g.seg_start[cell + 1]);
  for (std::size_t e = s0; e < s1; ++e) {
    if (!(g.seg_layers[e] & layers)) continue;
    const double t = ray_capsule(g.ax[e] - ox, g.ay[e] - oy, g.bx[e] - ox, g.by[e] - oy, r, dx, dy, best.t);
    if (t <= best.t) offer(best, t, kSeg, g.seg_index[e]);
  }
  test_circles(g, cell, ox, oy, dx, dy, r, layers, best);
}

// How walk() tests cells: thin rays on the plain grid; thick rays on the plain grid with a
// neighbourhood of cells around the path (fallback); thick rays on an inflated grid.
enum WalkMode : int { kThin = 0, kThickNeighbourhood = 1, kThickInflated = 2 };

// Walks the grid cells along the ray (Amanatides & Woo DDA) from t = 0 to max_dist, testing
// each cell's entries, and stops as soon as the best hit lies before the exit of the
// current cell: anything not yet tested is listed only in cells the ray enters later.
// kThickNeighbourhood (radius r) tests the (2k+1)^2 cells around each visited cell,
// k = ceil(r / cell): a hit point p(t) lies within r of the obstacle, so the obstacle is
// listed in a cell at most k cells from p(t)'s cell, and the stopping rule stays valid. The
// walk runs over the grid grown by k cells on each side, so thick rays passing just outside
// are caught. kThickInflated walks World::thick_grid(r), where p(t)'s own cell lists the
// obstacle, exactly like a thin ray but with capsule tests. Measured on the racetrack
// (M = 10000, L = 50, 16 slots of 10,000 agents, instructions per ray under callgrind,
// grid built beforehand): r = 0.5: neighbourhood walk 5,800, inflated grid 3,700 (with
// the near-side capsule test 3,100); r = 1.5: 12,500, 9,000 (7,500). Inflated cell sizes
// tried for r = 1.5: r / 4 and r 7,600, r / 2 7,500 (chosen).
using detail::WalkDir;

// The walk constants of the unit direction (dx, dy) on grid g.
inline WalkDir make_dir(const WorldGrid& g, double dx, double dy) {
  const double h = g.cell;
  const double inf = std::numeric_limits<double>::infinity();
  WalkDir d;
  d.dx = dx;
  d.dy = dy;
  // Reciprocal direction: every boundary crossing of the walk is a multiplication.
  d.idx = dx != 0.0 ? 1.0 / dx : inf;
  d.idy = dy != 0.0 ? 1.0 / dy : inf;
  d.stepx = dx > 0.0 ? 1 : (dx < 0.0 ? -1 : 0);
  d.stepy = dy > 0.0 ? 1 : (dy < 0.0 ? -1 : 0);
  d.offx = d.stepx > 0;
  d.offy = d.stepy > 0;
  d.bxh = d.stepx ? h * d.idx : 0.0;
  d.byh = d.stepy ? h * d.idy : 0.0;
  d.tdx = d.stepx ? h * std::fabs(d.idx) : inf;
  d.tdy = d.stepy ? h * std::fabs(d.idy) : inf;
  // Quadrant of the direction (an axis-parallel ray may use either side).
  d.qx = d.stepx >= 0 ? 1 : -1;
  d.qy = d.stepy >= 0 ? 1 : -1;
  d.quad = (d.qx > 0 ? 1 : 0) | (d.qy > 0 ? 2 : 0);
  return d;
}

// The origin-dependent constants of a walk over grid g (shared by the slot rays of an agent).
struct WalkOrigin {
  double ox, oy;
  double gx, gy;  // cell boundary x_i = gx + i h, relative to the origin
  bool inside;    // origin inside the grid box
  int ix, iy;     // its cell when inside
};

inline WalkOrigin make_origin(const WorldGrid& g, double ox, double oy) {
  WalkOrigin o;
  o.ox = ox;
  o.oy = oy;
  o.gx = static_cast<double>(g.x0) - ox;
  o.gy = static_cast<double>(g.y0) - oy;
  const double h = g.cell, ih = g.inv_cell;
  o.inside = o.gx <= 0.0 && o.gy <= 0.0 && o.gx + g.nx * h > 0.0 && o.gy + g.ny * h > 0.0;
  // (0 d - g) is -g for either sign of d, so this is the walk's start cell at t = 0.
  o.ix = std::clamp(floor_int(std::clamp(-o.gx * ih, -1e9, 1e9)), 0, std::max(g.nx - 1, 0));
  o.iy = std::clamp(floor_int(std::clamp(-o.gy * ih, -1e9, 1e9)), 0, std::max(g.ny - 1, 0));
  return o;
}

template <int kMode, bool kJump = false>
void walk(const WorldGrid& g, const WalkOrigin& org, const WalkDir& dir, double r, std::uint32_t layers,
          Best& best, double tstart = 0.0) {
  constexpr bool kThick = kMode == kThickNeighbourhood;
  if (g.empty()) return;
  // A k larger than the (Chebyshev) cell distance from any point of the ray's path to any
  // cell of the grid changes nothing: cap it there, so huge radii never overflow the int.
  int k = 0;
  if constexpr (kThick) {
    const double reach = (std::fabs(static_cast<double>(g.x0) - org.ox) + std::fabs(static_cast<double>(g.y0) - org.oy) +
                          best.t) * g.inv_cell + g.nx + g.ny + 2.0;
    k = static_cast<int>(std::min({std::ceil(static_cast<double>(r) * g.inv_cell), reach, 1e8}));
  }
  const double h = g.cell, ih = g.inv_cell;
  const double inf = std::numeric_limits<double>::infinity();
  const double dx = dir.dx, dy = dir.dy, idx = dir.idx, idy = dir.idy;
  const double ox = org.ox, oy = org.oy, gx = org.gx, gy = org.gy;
  double t0 = 0.0, t1 = best.t;
  const bool inside = org.inside;
  // Slab clipping against the (grown) grid box, needed only for origins outside it (the
  // walk returns when it steps off the grid).
  if (!inside) {
    if (dx != 0.0) {
      const double ta = (gx - k * h) * idx, tb = (gx + (g.nx + k) * h) * idx;
      t0 = std::max(t0, std::min(ta, tb));
      t1 = std::min(t1, std::max(ta, tb));
    } else if (gx > k * h || gx + (g.nx + k) * h < 0.0) {
      return;
    }
    if (dy != 0.0) {
      const double ta = (gy - k * h) * idy, tb = (gy + (g.ny + k) * h) * idy;
      t0 = std::max(t0, std::min(ta, tb));
      t1 = std::min(t1, std::max(ta, tb));
    } else if (gy > k * h || gy + (g.ny + k) * h < 0.0) {
      return;
    }
  }
  if (t0 > t1) return;
  int ix = org.ix, iy = org.iy;
  if (!inside) {
    ix = std::clamp(floor_int(std::clamp((t0 * dx - gx) * ih, -1e9, 1e9)), -k, g.nx + k - 1);
    iy = std::clamp(floor_int(std::clamp((t0 * dy - gy) * ih, -1e9, 1e9)), -k, g.ny + k - 1);
  }
  const int stepx = dir.stepx, stepy = dir.stepy;
  // t at which the ray leaves cell column ix / row iy.
  // exit_x(i) = (gx + (i + offx) h) / dx, or +inf when dx = 0, without a branch.
  const double bx0 = stepx ? (gx + dir.offx * h) * idx : inf, bxh = dir.bxh;
  const double by0 = stepy ? (gy + dir.offy * h) * idy : inf, byh = dir.byh;
  auto exit_x = [&](int i) { return bx0 + i * bxh; };
  auto exit_y = [&](int i) { return by0 + i * byh; };
  const int qx = dir.qx, qy = dir.qy, quad = dir.quad;
  if constexpr (kJump) {
    static_assert(kMode == kThin);
    if (tstart > 0.0 && inside) {
      // Free-distance jump: no hit before tstart. Start in the cell of p(tstart), biased
      // toward the cell behind it when about on a boundary (a cell behind is on the path or
      // next to it; walking it only costs exact tests).
      if (tstart > t1) return;
      if (stepx) ix = std::clamp(floor_int((tstart * dx - gx) * ih - qx * 1e-9), 0, g.nx - 1);
      if (stepy) iy = std::clamp(floor_int((tstart * dy - gy) * ih - qy * 1e-9), 0, g.ny - 1);
    }
  }
  double tmx = exit_x(ix), tmy = exit_y(iy);
  const double tdx = dir.tdx, tdy = dir.tdy;
  int strip = 0;  // thick rays: 0 test the whole neighbourhood, 1 the new column, 2 the new row
  const RayLanes lanes(ox, oy, dx, dy, layers);
  for (;;) {
    // Empty-space skipping. A thin ray moving into quadrant (qx, qy) stays in it, so it may
    // jump over the empty square anchored at its cell toward that quadrant (`quadrant`):
    // cells [ix, ix + qx skip] x [iy, iy + qy skip], skip = side - 1. A thick ray also needs
    // the k cells around its path empty: it uses the square anchored k cells behind it,
    // skip = side - 1 - 2k, or else the symmetric `clearance` (skip = clearance - 1 - k,
    // cells within skip of its cell in every direction).
    int clear = 0;
    int skip = 0;
    bool symmetric = false;
    if constexpr (!kThick) {
      clear = g.quadrant[(static_cast<std::size_t>(iy) * g.nx + ix) * 4 + quad];
      skip = clear - 1;
    } else {
      const int ax = ix - qx * k, ay = iy - qy * k;
      if (ax >= 0 && ay >= 0 && ax < g.nx && ay < g.ny) {
        skip = g.quadrant[(static_cast<std::size_t>(ay) * g.nx + ax) * 4 + quad] - 1 - 2 * k;
      }
      if (skip < 1 && ix >= 0 && iy >= 0 && ix < g.nx && iy < g.ny) {
        skip = g.clearance[static_cast<std::size_t>(iy) * g.nx + ix] - 1 - k;
        symmetric = true;
      }
    }
    if (skip >= 1) {
      const double ex = exit_x(ix + qx * skip), ey = exit_y(iy + qy * skip);
      const double t = std::min(ex, ey);
      if (t >= t1 || best.t <= t) return;
      if (ex < ey) {
        const int lo = symmetric ? iy - skip : std::min(iy, iy + qy * skip);
        const int hi = symmetric ? iy + skip : std::max(iy, iy + qy * skip);
        iy = std::clamp(floor_int((t * dy - gy) * ih), lo, hi);
        ix += stepx * (skip + 1);
      } else {
        const int lo = symmetric ? ix - skip : std::min(ix, ix + qx * skip);
        const int hi = symmetric ? ix + skip : std::max(ix, ix + qx * skip);
        ix = std::clamp(floor_int((t * dx - gx) * ih), lo, hi);
        iy += stepy * (skip + 1);
      }
      if (ix < -k || ix >= g.nx + k || iy < -k || iy >= g.ny + k) return;
      tmx = exit_x(ix);
      tmy = exit_y(iy);
      strip = 0;
      continue;
    }
    if constexpr (kThick) {
      // Cells within k of the cells visited so far have been tested already (each against
      // the whole ray), so after a step only the leading column or row of the neighbourhood
      // is new; after the start or a jump the whole neighbourhood is.
      int xa = ix - k, xb = ix + k, ya = iy - k, yb = iy + k;
      if (strip == 1) xa = xb = ix + stepx * k;
      if (strip == 2) ya = yb = iy + stepy * k;
      xa = std::max(xa, 0);
      xb = std::min(xb, g.nx - 1);
      ya = std::max(ya, 0);
      yb = std::min(yb, g.ny - 1);
      for (int cy = ya; cy <= yb; ++cy)
        for (int cx = xa; cx <= xb; ++cx)
          test_cell_thick(g, static_cast<std::size_t>(cy) * g.nx + cx, ox, oy, dx, dy, r, layers, best);
    } else if (clear == 0) {
      // Thin rays never leave [0, nx) x [0, ny) inside the loop (k = 0); cells with
      // clearance > 0 are empty.
      const std::size_t cell = static_cast<std::size_t>(iy) * g.nx + ix;
      if constexpr (kMode == kThickInflated) test_cell_thick(g, cell, ox, oy, dx, dy, r, layers, best);
      else test_cell_thin(g, cell, ox, oy, dx, dy, lanes, layers, best);
    }
    const double texit = std::min(tmx, tmy);
    if (best.t <= texit || texit >= t1) return;
    if (tmx < tmy) {
      ix += stepx;
      tmx += tdx;
      strip = 1;
      if (ix < -k || ix >= g.nx + k) return;
    } else {
      iy += stepy;
      tmy += tdy;
      strip = 2;
      if (iy < -k || iy >= g.ny + k) return;
    }
  }
}

// The grid a ray of radius r walks: thick = w.thick_grid(r) for r > 0 (nullptr: the plain
// grid, with neighbourhoods).
inline const WorldGrid& walk_grid(const World& w, const WorldGrid* thick, float r) {
  return r > 0.0f && thick != nullptr ? *thick : w.grid();
}

// The walk of one ray; org = make_origin(walk_grid(w, thick, r), ...) and
// dir = make_dir(walk_grid(w, thick, r), ...).
inline void walk_any(const World& w, const WorldGrid* thick, const WalkOrigin& org, const WalkDir& dir, float r,
                     std::uint32_t layers, Best& best) {
  if (r > 0.0f) {
    if (thick != nullptr) walk<kThickInflated>(*thick, org, dir, r, layers, best);
    else walk<kThickNeighbourhood>(w.grid(), org, dir, r, layers, best);
  } else {
    walk<kThin>(w.grid(), org, dir, r, layers, best);
  }
}

// One ray from (ox, oy) along the unit (dx, dy).
inline Best cast_one(const World& w, const WorldGrid* thick, float ox, float oy, float dx, float dy, float maxd,
                     float r, std::uint32_t layers) {
  Best best{maxd, kNone, -1};
  const std::int32_t poly = w.polygon_at({ox, oy}, layers);
  if (poly >= 0) return {0.0f, kPolygon, poly};
  const WorldGrid& g = walk_grid(w, thick, r);
  walk_any(w, thick, make_origin(g, ox, oy), make_dir(g, dx, dy), r, layers, best);
  return best;
}

// Free-distance table of K fixed slot directions u_j on the plain grid g: F[cell * K + j] is
// a lower bound of the first hit distance (any layer) of every thin ray along u_j starting
// in the cell, so the walk may start at t = F (walk's tstart). Value: the capsule cast
// from the cell centre c along u_j with radius rc = half the cell diagonal (walk on
// thick_grid(rc)): a thin ray from p in the cell hitting q at t puts the swept disc of c at
// c + t u_j within |c - p| <= rc of q, so the capsule cast hits at t_caps <= t. rc is grown
// by 1e-5 relative and t_caps shrunk by 1e-7 relative + 1e-5 cells and rounded down to
// float, which covers the rounding of the cell lookup and of the capsule tests. The casts
// stop at kFreeCap cells (a ray walks on from there). Cost: K capsule casts per cell, once
// per (world, slot set); measured on the racetrack M = 10000 (196k cells, K = 16): 3.5 G
// instructions, ~1 s single thread; then 606 instead of 725 instructions per slot ray
// (L = 50, callgrind), 10.3 vs 8.1 M rays/s. All zeros when the thick-grid cache is full.
constexpr double kFreeCap = 64.0;

std::vector<float> build_free_table(const World& w, std::span<const float> sd) {
  const WorldGrid& g = w.grid();
  const std::size_t k = sd.size() / 2;
  std::vector<float> table(static_cast<std::size_t>(g.nx) * g.ny * k, 0.0f);
  const double h = g.cell;
  const float rc = static_cast<float>(0.5 * h * std::sqrt(2.0) * (1.0 + 1e-5));
  const WorldGrid* tg = w.thick_grid(rc);
  if (tg == nullptr || g.empty()) return table;
  const double cap = kFreeCap * h;
  std::vector<WalkDir> dirs(k);
  for (std::size_t j = 0; j < k; ++j) dirs[j] = make_dir(*tg, sd[2 * j], sd[2 * j + 1]);
  float* F = table.data();
  parallel_for(static_cast<std::size_t>(g.ny), 4, [&](std::size_t b, std::size_t e) {
    for (std::size_t iy = b; iy < e; ++iy) {
      for (int ix = 0; ix < g.nx; ++ix) {
        const double cx = g.x0 + (ix + 0.5) * h, cy = g.y0 + (static_cast<double>(iy) + 0.5) * h;
        const WalkOrigin org = make_origin(*tg, cx, cy);
        for (std::size_t j = 0; j < k; ++j) {
          Best best{cap, kNone, -1};
          walk<kThickInflated>(*tg, org, dirs[j], rc, kAllLayers, best);
          const double v = std::max(best.t * (1.0 - 1e-7) - 1e-5 * h, 0.0);
          float fv = static_cast<float>(v);
          if (static_cast<double>(fv) > v) fv = std::max(0.0f, std::nextafter(fv, 0.0f));
          F[(iy * static_cast<std::size_t>(g.nx) + ix) * k + j] = fv;
        }
      }
    }
  });
  return table;
}

// Not inlined: inlined into raycast_rows, g++ 12 -O2/-O3 kept the double quotient x / n
// instead of the float32 it is assigned to (seen once the walk took its direction through
// WalkDir), which broke raycast == slot_raycast bit for bit.
__attribute__((noinline)) void unit(float x, float y, float& ux, float& uy) {
  const double n = std::sqrt(static_cast<double>(x) * x + static_cast<double>(y) * y);
  ux = static_cast<float>(x / n);
  uy = static_cast<float>(y / n);
}

// Normal of a hit, see RayHitsOut.
void hit_normal(const World& w, const Best& b, float ox, float oy, float dx, float dy, float r, float& nx, float& ny) {
  nx = -dx;
  ny = -dy;
  if (b.t == 0.0 || b.kind == kPolygon) return;
  const double px = ox + b.t * dx, py = oy + b.t * dy;
  double vx, vy;  // from the surface point toward the ray
  if (b.kind == kCircle) {
    const auto i = static_cast<std::size_t>(b.index);
    vx = px - w.circle_centers()[2 * i];
    vy = py - w.circle_centers()[2 * i + 1];
  } else {
    const float* s = &w.walls()[4 * static_cast<std::size_t>(b.index)];
    const double ex = static_cast<double>(s[2]) - s[0], ey = static_cast<double>(s[3]) - s[1];
    if (r > 0.0f) {
      const double u = std::clamp(((px - s[0]) * ex + (py - s[1]) * ey) / (ex * ex + ey * ey), 0.0, 1.0);
      vx = px - (s[0] + u * ex);
      vy = py - (s[1] + u * ey);
    } else {
      vx = -ey;
      vy = ex;
      const double side = vx * dx + vy * dy;
      if (side == 0.0) return;  // collinear: -direction
      if (side > 0.0) {
        vx = -vx;
        vy = -vy;
      }
    }
  }
  const double n = std::sqrt(vx * vx + vy * vy);
  if (n > 0.0) {
    nx = static_cast<float>(vx / n);
    ny = static_cast<float>(vy / n);
  }
}

std::int32_t obstacle_of(const World& w, const Best& b) {
  switch (b.kind) {
    case kSeg: return w.wall_obstacle()[static_cast<std::size_t>(b.index)];
    case kCircle: return w.circle_obstacle()[static_cast<std::size_t>(b.index)];
    case kPolygon: return b.index;
    default: return -1;
  }
}

// ------------------------------------------------------------------ slot raycast ---

// Tests the gathered walls against all K rays. The inner loop runs over walls in blocks of
// 8 independent lanes with no branches (the compiler vectorises it); lanes whose
// denominator is 0 (a wall on the ray's line) flag the ray for the scalar path, which
// handles the collinear case. Same double operations as ray_segment, so same distances.
void flush(SlotScratch& s, std::size_t k) {
  const std::size_t n = s.count;
  if (n == 0) return;
  for (std::size_t j = 0; j < k; ++j) {
    const double dx = s.dx[j], dy = s.dy[j];
    double acc[8];
    bool flag[8];
    for (int l = 0; l < 8; ++l) {
      acc[l] = s.best[j];
      flag[l] = false;
    }
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      for (int l = 0; l < 8; ++l) {
        const double ax = s.ax[i + l], ay = s.ay[i + l], bx = s.bx[i + l], by = s.by[i + l];
        const double sa = ax * dy - ay * dx;
        const double sb = bx * dy - by * dx;
        const double den = sa - sb;
        const double t = s.c[i + l] / den;
        const bool same = ((sa > 0.0) & (sb > 0.0)) | ((sa < 0.0) & (sb < 0.0));
        const bool ok = !same & (t >= 0.0) & (t < acc[l]);
        acc[l] = ok ? t : acc[l];
        flag[l] |= !same & (den == 0.0);
      }
    }
    double b = acc[0];
    bool f = flag[0];
    for (int l = 1; l < 8; ++l) {
      b = std::min(b, acc[l]);
      f |= flag[l];
    }
    for (; i < n; ++i) b = std::min(b, ray_segment(s.ax[i], s.ay[i], s.bx[i], s.by[i], dx, dy));
    if (f) {
      for (std::size_t q = 0; q < n; ++q) b = std::min(b, ray_segment(s.ax[q], s.ay[q], s.bx[q], s.by[q], dx, dy));
    }
    s.best[j] = b + 0.0;
  }
  s.count = 0;
}

// Gathers the walls whose boxes meet the look-ahead disc of radius L around (ox, oy), each
// once (owner-cell rule), relative to the origin, and tests all rays against them.
void gather_and_test(const WorldGrid& g, double ox, double oy, double L, std::uint32_t layers, SlotScratch& s,
                     std::size_t k) {
  if (g.empty()) return;
  const int qx0 = g.col(static_cast<float>(ox - L)), qx1 = g.col(static_cast<float>(ox + L));
  const int qy0 = g.row(static_cast<float>(oy - L)), qy1 = g.row(static_cast<float>(oy + L));
  const double L2 = L * L;
  s.count = 0;
  for (int cy = qy0; cy <= qy1; ++cy) {
    for (int cx = qx0; cx <= qx1; ++cx) {
      const std::size_t cell = static_cast<std::size_t>(cy) * g.nx + cx;
      const auto e0 = static_cast<std::size_t>(g.seg_start[cell]);
      const auto e1 = static_cast<std::size_t>(g.seg_start[cell + 1]);
      for (std::size_t e = e0; e < e1; ++e) {
        if (!(g.seg_layers[e] & layers)) continue;
        if (std::max(g.seg_cx0[e], qx0) != cx || std::max(g.seg_cy0[e], qy0) != cy) continue;
        const double ax = g.ax[e] - ox, ay = g.ay[e] - oy, bx = g.bx[e] - ox, by = g.by[e] - oy;
        // Skip walls whose box misses the disc (closest point of the box to the origin).
        const double px = std::clamp(0.0, std::min(ax, bx), std::max(ax, bx));
        const double py = std::clamp(0.0, std::min(ay, by), std::max(ay, by));
        if (px * px + py * py > L2) continue;
        const std::size_t i = s.count++;
        s.ax[i] = ax; s.ay[i] = ay; s.bx[i] = bx; s.by[i] = by;
        s.c[i] = ax * by - ay * bx;
        if (s.count == SlotScratch::kBatch) flush(s, k);
      }
      const auto c0 = static_cast<std::size_t>(g.circ_start[cell]);
      const auto c1 = static_cast<std::size_t>(g.circ_start[cell + 1]);
      for (std::size_t e = c0; e < c1; ++e) {
        if (!(g.circ_layers[e] & layers)) continue;
        if (std::max(g.circ_cx0[e], qx0) != cx || std::max(g.circ_cy0[e], qy0) != cy) continue;
        const double qx = g.cx[e] - ox, qy = g.cy[e] - oy;
        for (std::size_t j = 0; j < k; ++j) {
          s.best[j] = std::min(s.best[j], ray_circle(qx, qy, g.cr[e], s.dx[j], s.dy[j]));
        }
      }
    }
  }
  flush(s, k);
}

// Look-ahead discs covering at most this many cells use the gather path (kAuto). Measured
// on the racetrack with agents 0.8 from a wall (16 slots, one thread, M rays/s gather vs
// per-ray): M = 1000 (cell 1.1): disc of 8 cells 31 vs 28, 22 cells 36 vs 27, 69 cells 17
// vs 24; M = 10000 (cell 0.35): 46 cells 8 vs 22, 157 cells 4 vs 8. In open space gather
// wins up to ~100 cells; with dense walls per-ray wins above ~30, so the switch is at 36.
// For the benchmark look-aheads (10 and 50) the per-ray walk is 5-50x faster than gather.
constexpr double kGatherMaxCells = 36.0;

}  // namespace

void raycast_rows(const World& world, std::span<const float> origins, std::span<const float> directions,
                  std::span<const float> max_dist, float radius, std::uint32_t layers, RayHitsOut out,
                  std::size_t begin, std::size_t end) {
  CONTEXTSTEER_ASSERT(world.indexed());
  const bool shared = max_dist.size() == 1;
  const WorldGrid* thick = radius > 0.0f && begin < end ? world.thick_grid(radius) : nullptr;
  for (std::size_t i = begin; i < end; ++i) {
    const float ox = origins[2 * i], oy = origins[2 * i + 1];
    float dx, dy;
    unit(directions[2 * i], directions[2 * i + 1], dx, dy);
    const float maxd = shared ? max_dist[0] : max_dist[i];
    const Best b = cast_one(world, thick, ox, oy, dx, dy, maxd, radius, layers);
    if (b.kind == kNone) {
      out.distance[i] = kInf;
      out.hit[i] = false;
      out.normal[2 * i] = 0.0f;
      out.normal[2 * i + 1] = 0.0f;
      out.obstacle[i] = -1;
    } else {
      out.distance[i] = static_cast<float>(b.t);
      out.hit[i] = true;
      hit_normal(world, b, ox, oy, dx, dy, radius, out.normal[2 * i], out.normal[2 * i + 1]);
      out.obstacle[i] = obstacle_of(world, b);
    }
  }
}

void raycast(const World& world, std::span<const float> origins, std::span<const float> directions,
             std::span<const float> max_dist, float radius, std::uint32_t layers, RayHitsOut out) {
  const std::size_t n = origins.size() / 2;
  parallel_for(n, 256, [&](std::size_t b, std::size_t e) {
    raycast_rows(world, origins, directions, max_dist, radius, layers, out, b, e);
  });
}

void slot_raycast_rows(const World& world, std::span<const float> positions,
                       std::span<const float> slot_directions, std::span<const float> look_ahead,
                       std::span<const float> headings, float radius, std::uint32_t layers,
                       std::span<float> out, std::size_t begin, std::size_t end, SlotScratch& s,
                       SlotMode mode) {
  CONTEXTSTEER_ASSERT(world.indexed());
  const std::size_t k = slot_directions.size() / 2;
  CONTEXTSTEER_ASSERT(s.dx.size() >= k && s.dirs.size() >= k);
  const WorldGrid& g = world.grid();
  const bool shared = look_ahead.size() == 1;
  const WorldGrid* thick = radius > 0.0f && begin < end ? world.thick_grid(radius) : nullptr;
  const WorldGrid& wg = walk_grid(world, thick, radius);
  // Thin rays along fixed slot directions (no headings) start at the free distance of their
  // cell (see build_free_table), looked up on the first per-ray walk.
  bool use_free = radius == 0.0f && headings.empty() && !g.empty();
  const float* ftab = nullptr;
  for (std::size_t i = begin; i < end; ++i) {
    const float ox = positions[2 * i], oy = positions[2 * i + 1];
    const float L = shared ? look_ahead[0] : look_ahead[i];
    float* row = &out[i * k];
    float c = 1.0f, sn = 0.0f;
    if (!headings.empty() || i == begin) {
      if (!headings.empty()) {
        c = static_cast<float>(std::cos(static_cast<double>(headings[i])));
        sn = static_cast<float>(std::sin(static_cast<double>(headings[i])));
      }
      // Without headings the directions (and their walk constants) are the same for all
      // agents: computed once per call.
      for (std::size_t j = 0; j < k; ++j) {
        const float ux = slot_directions[2 * j], uy = slot_directions[2 * j + 1];
        s.dx[j] = c * ux - sn * uy;
        s.dy[j] = sn * ux + c * uy;
        s.dirs[j] = make_dir(wg, s.dx[j], s.dy[j]);
      }
    }
    if (world.polygon_at({ox, oy}, layers) >= 0) {
      std::fill(row, row + k, 0.0f);
      continue;
    }
    bool gather = radius == 0.0f && mode != SlotMode::kPerRay;
    if (gather && mode == SlotMode::kAuto && !g.empty()) {
      const double span = 2.0 * L * g.inv_cell + 1.0;
      gather = span * span <= kGatherMaxCells;
    }
    if (gather) {
      // Hits need t <= L: start every minimum just above L and map it back.
      const double above = std::nextafter(static_cast<double>(L), static_cast<double>(kInf));
      for (std::size_t j = 0; j < k; ++j) s.best[j] = above;
      gather_and_test(g, ox, oy, L, layers, s, k);
      for (std::size_t j = 0; j < k; ++j) row[j] = s.best[j] <= L ? static_cast<float>(s.best[j]) : kInf;
    } else {
      const WalkOrigin org = make_origin(wg, ox, oy);
      if (use_free) {
        ftab = world.free_tables().get(slot_directions, [&] { return build_free_table(world, slot_directions); });
        use_free = false;  // once per call (nullptr: the cache is full)
      }
      const float* F = nullptr;
      if (ftab != nullptr && org.inside) F = ftab + (static_cast<std::size_t>(org.iy) * wg.nx + org.ix) * k;
      for (std::size_t j = 0; j < k; ++j) {
        Best b{L, kNone, -1};
        if (F != nullptr) walk<kThin, true>(g, org, s.dirs[j], 0.0, layers, b, F[j]);
        else walk_any(world, thick, org, s.dirs[j], radius, layers, b);
        row[j] = b.kind == kNone ? kInf : static_cast<float>(b.t);
      }
    }
  }
}

void slot_raycast(const World& world, std::span<const float> positions, std::span<const float> slot_directions,
                  std::span<const float> look_ahead, std::span<const float> headings, float radius,
                  std::uint32_t layers, std::span<float> out, SlotMode mode) {
  const std::size_t n = positions.size() / 2;
  const std::size_t k = slot_directions.size() / 2;
  if (k == 0) return;
  // Build the free-distance table here, over the thread pool, when some agent will walk per
  // ray (inside a chunk the build would run on one thread while the others wait for it).
  const WorldGrid& g = world.grid();
  if (radius == 0.0f && headings.empty() && n > 0 && !g.empty() && mode != SlotMode::kGather) {
    const float L = look_ahead.empty() ? 0.0f : *std::max_element(look_ahead.begin(), look_ahead.end());
    const double span = 2.0 * L * g.inv_cell + 1.0;
    if (mode == SlotMode::kPerRay || span * span > kGatherMaxCells) {
      world.free_tables().get(slot_directions, [&] { return build_free_table(world, slot_directions); });
    }
  }
  parallel_for(n, 64, [&](std::size_t b, std::size_t e) {
    thread_local SlotScratch scratch;
    if (scratch.dx.size() < k) scratch.reserve(k);
    slot_raycast_rows(world, positions, slot_directions, look_ahead, headings, radius, layers, out, b, e,
                      scratch, mode);
  });
}

}  // namespace contextsteer
