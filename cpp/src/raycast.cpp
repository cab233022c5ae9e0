// SPDX-License-Identifier: MIT
// Closest-hit raycasts (grid DDA) and the per-agent slot raycast (gather + branch-free loops).
#include "contextsteer/raycast.hpp"

#include "contextsteer/geometry.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
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

template <int kMode>
void walk(const WorldGrid& g, const WalkOrigin& org, const WalkDir& dir, double r, std::uint32_t layers,
          Best& best) {
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

// ------------------------------------------------------------------ strips ---
//
// Fixed slot directions (no headings): per direction, the obstacles sorted into strips
// parallel to it (DirectionStrips in world.hpp). A ray from o along d stays at v = v(o), so
// it can only meet the entries of that strip with umax >= u(o); it meets them in order of
// u, so a scan of the strip (sorted by umax) from there may stop once the smallest umin of
// the rest lies beyond the best hit. Every candidate takes the same exact test as the grid
// walk (ray_segment / ray_capsule / ray_circle on the same float coordinates), so the hits
// are those of raycast bit for bit; the intervals only decide what is tested.
//
// Slack. Interval ends are computed in double and grown by kStripSlack * scale (scale =
// largest |coordinate| of the geometry plus the radius), then rounded outward to float; a
// query widens its v and u by kStripSlack * (scale + |o|). That covers, with many orders of
// magnitude to spare, the double rounding of u and v, and the error of the hit tests'
// side values (a few ulps of |a - o|): a segment the exact test reports as hit has v(o)
// within that error of its v range, and the hit point's u within it of the u interval.
// Hit distances are compared to u with the factor 1 + 2^-20, which covers |d|^2 != 1 for
// a float32 unit direction (|d|^2 - 1 is ~2^-23).
//
// Cost. Measured on the racetrack (M = 10000, L = 50, 16 slots of 10,000 agents, one
// thread, benchmarks/kernels/ray_kernels.cpp): see kStripWidth.
constexpr double kStripSlack = 0x1p-30;
constexpr double kStripGrow = 1.0 + 0x1p-20;
// Strip width as a multiple of the median obstacle extent (segment length, circle
// diameter). Narrower strips list fewer entries near a ray's hit but list each obstacle in
// more strips.
constexpr double kStripWidth = 0.25;
// Largest strip index of one slot set (bytes); a larger one is not built (the slot rays
// walk the grid instead). The width doubles (up to kStripWiden times) until it fits.
constexpr std::size_t kStripBudget = std::size_t{64} << 20;
constexpr int kStripWiden = 8;

// Rounds x down (dir < 0) or up (dir > 0) to a float.
inline float round_out(double x, int dir) {
  float f = static_cast<float>(x);
  if (dir < 0 && static_cast<double>(f) > x) f = std::nextafter(f, -kInf);
  if (dir > 0 && static_cast<double>(f) < x) f = std::nextafter(f, kInf);
  return f;
}

// One obstacle of the strip build, in double: a segment (a, b) or a circle (centre a, radius rr).
struct StripPrim {
  double ax, ay, bx, by, rr;
  std::int32_t prim;  // segment row, or -1 - circle row
};

// Strip of v, clamped to [0, count - 1]. Monotone in v; the build and the queries both map
// values through it, so a value lies in the same strip for both.
inline int strip_of(const DirectionStrips& S, double v) {
  const double f = std::min(std::max((v - S.v0) * S.inv_h, -1.0), static_cast<double>(S.count));
  return std::min(std::max(floor_int(f), 0), S.count - 1);
}

// Lowest u of the capsule of radius R around the segment (ua, va)-(ub, vb) (in u, v
// coordinates) on the line v = c; +inf when it misses the line. Over the segment's points
// q(s) within R of the line, f(s) = u(s) - sqrt(R^2 - (v(s) - c)^2) is convex; its
// stationary point has v(s) - c = -R g sign(m) / hypot(g, m) (g, m: the segment's u, v
// extents). The minimum is taken with both ends of the feasible interval too.
inline double capsule_line_umin(double ua, double va, double ub, double vb, double R, double c) {
  const double g = ub - ua, m = vb - va, x0 = va - c;
  double s0 = 0.0, s1 = 1.0;
  if (m != 0.0) {
    const double p = (-R - x0) / m, q = (R - x0) / m;
    s0 = std::max(0.0, std::min(p, q));
    s1 = std::min(1.0, std::max(p, q));
    if (!(s0 <= s1)) return kInf;
  } else if (std::fabs(x0) > R) {
    return kInf;
  }
  auto f = [&](double s) {
    const double x = x0 + m * s;
    return ua + g * s - std::sqrt(std::max(0.0, R * R - x * x));
  };
  double best = std::min(f(s0), f(s1));
  if (m != 0.0) {
    const double xs = -R * g * (m > 0.0 ? 1.0 : -1.0) / std::hypot(g, m);
    best = std::min(best, f(std::clamp((xs - x0) / m, s0, s1)));
  }
  return best;
}

// Lowest u of the capsule of radius R around (ua, va)-(ub, vb) within the band v in
// [lo, hi]; +inf when they do not meet. A lowest point inside the band is a lowest point of
// the whole (convex) capsule, the disc at the segment's lowest end; otherwise it lies on
// one of the band's edge lines.
inline double capsule_band_umin(double ua, double va, double ub, double vb, double R, double lo, double hi) {
  double best = kInf;
  if (ua < ub) {
    if (va >= lo && va <= hi) best = ua - R;
  } else if (ub < ua) {
    if (vb >= lo && vb <= hi) best = ub - R;
  } else if (std::max(va, vb) >= lo && std::min(va, vb) <= hi) {
    best = ua - R;
  }
  return std::min({best, capsule_line_umin(ua, va, ub, vb, R, lo), capsule_line_umin(ua, va, ub, vb, R, hi)});
}

// v interval of a primitive (grown by the cast radius r and the slack).
inline void prim_v(const StripPrim& p, double dx, double dy, double r, double slack, double& lo, double& hi) {
  const double va = dx * p.ay - dy * p.ax;
  if (p.prim >= 0) {
    const double vb = dx * p.by - dy * p.bx;
    lo = std::min(va, vb) - r - slack;
    hi = std::max(va, vb) + r + slack;
  } else {
    lo = va - p.rr - slack;
    hi = va + p.rr + slack;
  }
}

// The v range all primitives cover along (dx, dy), and the sum of their v extents.
struct VSpan {
  double vmin = kInf, vmax = -kInf, extent_sum = 0.0;
};
VSpan v_span(std::span<const StripPrim> prims, double dx, double dy, double r, double slack) {
  VSpan out;
  for (const StripPrim& p : prims) {
    double lo, hi;
    prim_v(p, dx, dy, r, slack, lo, hi);
    out.vmin = std::min(out.vmin, lo);
    out.vmax = std::max(out.vmax, hi);
    out.extent_sum += hi - lo;
  }
  return out;
}

void build_direction(std::span<const StripPrim> prims, double dx, double dy, double r, double h, double slack,
                     DirectionStrips& S) {
  S.dx = dx;
  S.dy = dy;
  S.inv_h = 1.0 / h;
  if (prims.empty()) return;
  const VSpan span = v_span(prims, dx, dy, r, slack);
  const double vmin = span.vmin, vmax = span.vmax;
  S.v0 = vmin;
  S.count = static_cast<int>(std::floor((vmax - vmin) * S.inv_h)) + 1;
  S.v1 = vmax;
  S.start.assign(static_cast<std::size_t>(S.count) + 1, 0);
  for (const StripPrim& p : prims) {
    double lo, hi;
    prim_v(p, dx, dy, r, slack, lo, hi);
    for (int k = strip_of(S, lo), k1 = strip_of(S, hi); k <= k1; ++k) ++S.start[static_cast<std::size_t>(k) + 1];
  }
  for (int k = 0; k < S.count; ++k) S.start[k + 1] += S.start[k];
  S.entries.resize(static_cast<std::size_t>(S.start[S.count]));
  std::vector<std::int32_t> cursor(S.start.begin(), S.start.end() - 1);
  for (const StripPrim& p : prims) {
    double lo, hi;
    prim_v(p, dx, dy, r, slack, lo, hi);
    const double ua = dx * p.ax + dy * p.ay;
    for (int k = strip_of(S, lo), k1 = strip_of(S, hi); k <= k1; ++k) {
      double umin, umax;
      // Strip k's band, widened by the slack (the cast radius is in the capsules below).
      const double band_lo = S.v0 + k * h - slack, band_hi = S.v0 + (k + 1) * h + slack;
      if (p.prim < 0) {
        // The disc's extent within the band: its full width when the band holds its centre.
        const double vc = dx * p.ay - dy * p.ax;
        const double gap = std::max({band_lo - vc, vc - band_hi, 0.0});
        const double R = p.rr + slack;
        const double half = std::sqrt(std::max(0.0, R * R - gap * gap));
        umin = ua - half - 2.0 * slack;
        umax = ua + half + 2.0 * slack;
      } else if (r > 0.0) {
        // A thick ray meets the capsule of radius r around the segment: its exact extent
        // within the band (radius grown by the slack, which also absorbs the rounding of
        // the square roots), instead of the segment's part near the band grown by r.
        const double ub = dx * p.bx + dy * p.by;
        const double va = dx * p.ay - dy * p.ax, vb = dx * p.by - dy * p.bx;
        const double R = r + slack;
        umin = capsule_band_umin(ua, va, ub, vb, R, band_lo, band_hi);
        umax = -capsule_band_umin(-ua, va, -ub, vb, R, band_lo, band_hi);
        if (!(umin <= umax)) {  // (rounding at the band's reach) the box bound
          umin = std::min(ua, ub) - R;
          umax = std::max(ua, ub) + R;
        }
        umin -= 3.0 * slack;
        umax += 3.0 * slack;
      } else {
        // The part of the segment within r (+ slack) of strip k's band, by its parameter s.
        const double ub = dx * p.bx + dy * p.by;
        const double va = dx * p.ay - dy * p.ax, vb = dx * p.by - dy * p.bx;
        double s0 = 0.0, s1 = 1.0;
        if (va != vb) {
          const double band_lo = S.v0 + k * h - r - slack, band_hi = S.v0 + (k + 1) * h + r + slack;
          const double q0 = (band_lo - va) / (vb - va), q1 = (band_hi - va) / (vb - va);
          s0 = std::clamp(std::min(q0, q1), 0.0, 1.0);
          s1 = std::clamp(std::max(q0, q1), 0.0, 1.0);
        }
        const double u0 = ua + s0 * (ub - ua), u1 = ua + s1 * (ub - ua);
        const double grow = r + 3.0 * slack;
        umin = std::min(u0, u1) - grow;
        umax = std::max(u0, u1) + grow;
      }
      S.entries[static_cast<std::size_t>(cursor[k]++)] = {round_out(umax, 1), 0.0f, round_out(umin, -1), p.prim};
    }
  }
  for (int k = 0; k < S.count; ++k) {
    auto* b = S.entries.data() + S.start[k];
    auto* e = S.entries.data() + S.start[k + 1];
    std::sort(b, e, [](const DirectionStrips::Entry& x, const DirectionStrips::Entry& y) {
      return x.umax < y.umax || (x.umax == y.umax && x.prim < y.prim);
    });
    float m = kInf;
    for (auto* q = e; q != b;) {
      --q;
      m = std::min(m, q->umin);
      q->rest_umin = m;
    }
  }
}

// The strips of the K unit directions sd for casts of radius r; nullptr when they would
// take more than kStripBudget bytes.
std::unique_ptr<const SlotStrips> build_strips(const World& w, std::span<const float> sd, float radius) {
  const std::size_t k = sd.size() / 2;
  const auto walls = w.walls();
  const auto centers = w.circle_centers();
  const auto radii = w.circle_radii();
  const auto lay = w.obstacle_layers();
  const double r = radius;
  // Obstacles no query can see (layer mask 0) are left out.
  std::vector<StripPrim> prims;
  std::vector<double> extent;
  double scale = 0.0;
  for (std::size_t i = 0; i < w.segment_count(); ++i) {
    if (lay[static_cast<std::size_t>(w.wall_obstacle()[i])] == 0) continue;
    const float* s = &walls[4 * i];
    prims.push_back({s[0], s[1], s[2], s[3], 0.0, static_cast<std::int32_t>(i)});
    extent.push_back(std::hypot(static_cast<double>(s[2]) - s[0], static_cast<double>(s[3]) - s[1]));
    scale = std::max({scale, std::fabs(static_cast<double>(s[0])), std::fabs(static_cast<double>(s[1])),
                      std::fabs(static_cast<double>(s[2])), std::fabs(static_cast<double>(s[3]))});
  }
  for (std::size_t i = 0; i < w.circle_count(); ++i) {
    if (lay[static_cast<std::size_t>(w.circle_obstacle()[i])] == 0) continue;
    const double cx = centers[2 * i], cy = centers[2 * i + 1];
    const double rr = static_cast<double>(radii[i]) + r;  // as the hit test grows it
    prims.push_back({cx, cy, 0.0, 0.0, rr, -1 - static_cast<std::int32_t>(i)});
    extent.push_back(2.0 * radii[i]);
    scale = std::max(scale, std::max(std::fabs(cx), std::fabs(cy)) + radii[i]);
  }
  scale += r;
  auto out = std::make_unique<SlotStrips>();
  out->radius = radius;
  out->scale = scale;
  out->dirs.resize(k);
  const double slack = kStripSlack * scale;
  double h = 0.0;
  if (!extent.empty()) {
    std::nth_element(extent.begin(), extent.begin() + extent.size() / 2, extent.end());
    h = kStripWidth * extent[extent.size() / 2];
  }
  // At least a 2^-20 of the scene (points and zero-radius circles have no extent).
  h = std::max(h, std::max(scale, 1e-30) * 0x1p-20);
  // Size estimate (an upper bound of the entries and strips actually built): per direction
  // sum(hi - lo) / h + 2 entries a primitive and (vmax - vmin) / h + 3 strip starts. Widen
  // until it fits the budget.
  std::vector<double> extent_sum(k, 0.0), v_range(k, 0.0);
  for (std::size_t j = 0; j < k && !prims.empty(); ++j) {
    const VSpan span = v_span(prims, sd[2 * j], sd[2 * j + 1], r, slack);
    extent_sum[j] = span.extent_sum;
    v_range[j] = span.vmax - span.vmin;
  }
  for (int attempt = 0;; ++attempt) {
    double bytes = 0.0;
    for (std::size_t j = 0; j < k && !prims.empty(); ++j) {
      const double entries = extent_sum[j] / h + 2.0 * static_cast<double>(prims.size());
      bytes += entries * sizeof(DirectionStrips::Entry) + (v_range[j] / h + 3.0) * 4.0;
    }
    if (bytes <= static_cast<double>(kStripBudget)) break;
    if (attempt == kStripWiden) return nullptr;
    h *= 2.0;
  }
  out->width = h;
  parallel_for(k, 1, [&](std::size_t b, std::size_t e) {
    for (std::size_t j = b; j < e; ++j) build_direction(prims, sd[2 * j], sd[2 * j + 1], r, h, slack, out->dirs[j]);
  });
  return out;
}

// Origins farther than this (in units of SlotStrips::scale, as |ox| + |oy|) from the
// coordinate origin scan every strip within sq of v(o) (strip_cast's kFar); nearer ones only
// the strip of v(o): the registration slack kStripSlack * scale then exceeds the rounding of
// v(o) and the side-test error (~2^-50 (scale + |o|)) together.
constexpr double kStripNear = 0x1p16;

// Closest hit before `best` (an exclusive bound) of the ray from (ox, oy) along S's
// direction, radius r (0: thin): the new bound, or `best` when nothing is closer.
// sq = kStripSlack * (scale + |ox| + |oy|).
template <bool kThick, bool kFar>
inline double strip_cast(const World& w, const DirectionStrips& S, double ox, double oy, double sq, double r,
                         std::uint32_t layers, double best) {
  const double dx = S.dx, dy = S.dy;
  const double ou = ox * dx + oy * dy, ov = dx * oy - dy * ox;
  int k0, k1;
  if constexpr (kFar) {
    // Beyond the outer strips (or no strips at all): nothing to meet.
    if (!(ov + sq >= S.v0) || ov - sq > S.v1) return best;
    k0 = strip_of(S, ov - sq);
    k1 = strip_of(S, ov + sq);
  } else {
    // Same value as strip_of(S, ov) inside [0, count) (truncation is floor there).
    const double f = (ov - S.v0) * S.inv_h;
    if (!(f >= 0.0 && f < static_cast<double>(S.count))) return best;
    k0 = k1 = static_cast<int>(f);
  }
  const float* walls = w.walls().data();
  const double key = ou - sq;
  for (int k = k0; k <= k1; ++k) {
    const DirectionStrips::Entry* e = S.entries.data() + S.start[k];
    const DirectionStrips::Entry* const end = S.entries.data() + S.start[k + 1];
    // First entry with umax >= u(o) - sq: those before it lie behind the origin.
    // (Branch-free lower bound: the answer stays in [e, e + n].)
    std::size_t n = static_cast<std::size_t>(end - e);
    if (n == 0) continue;
    while (n > 1) {
      const std::size_t half = n / 2;
      e += static_cast<double>(e[half].umax) < key ? half : 0;
      n -= half;
    }
    e += static_cast<double>(e->umax) < key;
    double lim = ou + best * kStripGrow + sq;
    // The hit of one entry, tightening best and lim.
    auto test = [&](const DirectionStrips::Entry* q) {
      const std::int32_t p = q->prim;
      if (layers != kAllLayers) {
        const std::int32_t obs = p >= 0 ? w.wall_obstacle()[static_cast<std::size_t>(p)]
                                        : w.circle_obstacle()[static_cast<std::size_t>(-1 - p)];
        if (!(w.obstacle_layers()[static_cast<std::size_t>(obs)] & layers)) return;
      }
      double t;
      if (p >= 0) {
        const float* s = walls + 4 * static_cast<std::size_t>(p);
        if constexpr (kThick) t = ray_capsule(s[0] - ox, s[1] - oy, s[2] - ox, s[3] - oy, r, dx, dy, best);
        else t = ray_segment(s[0] - ox, s[1] - oy, s[2] - ox, s[3] - oy, dx, dy);
      } else {
        const auto c = static_cast<std::size_t>(-1 - p);
        t = ray_circle(w.circle_centers()[2 * c] - ox, w.circle_centers()[2 * c + 1] - oy,
                       w.circle_radii()[c] + r, dx, dy);
      }
      if (t < best) {
        best = t;
        lim = ou + best * kStripGrow + sq;
      }
    };
    // Thick rays: the capsules of a wall's neighbouring segments overlap, and the one a ray
    // meets first (the nearest to its line) has the largest umax of them, so in umax order
    // it would come last, after every other one had been tested against a loose bound. Test
    // first the entry ahead with the lowest umin (the first whose umin equals the suffix
    // minimum), which usually gives the final bound at once.
    const DirectionStrips::Entry* first = nullptr;
    if constexpr (kThick) {
      if (e != end && static_cast<double>(e->rest_umin) <= lim) {
        first = e;
        while (first->umin != e->rest_umin) ++first;
        test(first);
      }
    }
    for (; e != end && static_cast<double>(e->rest_umin) <= lim; ++e) {
      if (static_cast<double>(e->umin) > lim || e == first) continue;
      test(e);
    }
  }
  return best;
}

// The K slot rays of agents [begin, end) on the strips (see slot_raycast_rows).
template <bool kThick>
void strip_rows(const World& world, const SlotStrips& strips, std::span<const float> positions,
                std::span<const float> look_ahead, std::uint32_t layers, std::span<float> out, std::size_t begin,
                std::size_t end) {
  const std::size_t k = strips.dirs.size();
  const bool shared = look_ahead.size() == 1;
  const double r = strips.radius;
  // Hits need t <= L: minima start just above L and are mapped back.
  auto above = [](float L) { return std::nextafter(static_cast<double>(L), static_cast<double>(kInf)); };
  const double above_shared = shared ? above(look_ahead[0]) : 0.0;
  // The strip of agent q's ray j, or -1 outside the strips (for the prefetches).
  auto strip_at = [&](std::size_t q, const DirectionStrips& S) {
    const double f = (S.dx * positions[2 * q + 1] - S.dy * positions[2 * q] - S.v0) * S.inv_h;
    return f >= 0.0 && f < static_cast<double>(S.count) ? static_cast<int>(f) : -1;
  };
  for (std::size_t i = begin; i < end; ++i) {
    const float ox = positions[2 * i], oy = positions[2 * i + 1];
    const float L = shared ? look_ahead[0] : look_ahead[i];
    float* row = &out[i * k];
    // The chain of a ray (strip start -> entries -> segment) is a few dependent loads that
    // miss L1 (the index outgrows it): prefetch two agents ahead the strip starts, one
    // agent ahead the first entries the lower-bound search reads.
    if (i + 2 < end) {
      for (std::size_t j = 0; j < k; ++j) {
        const int q = strip_at(i + 2, strips.dirs[j]);
        if (q >= 0) __builtin_prefetch(strips.dirs[j].start.data() + q);
      }
    }
    if (i + 1 < end) {
      for (std::size_t j = 0; j < k; ++j) {
        const DirectionStrips& S = strips.dirs[j];
        const int q = strip_at(i + 1, S);
        if (q < 0) continue;
        const std::int32_t a = S.start[q], b = S.start[q + 1];
        __builtin_prefetch(S.entries.data() + a);
        __builtin_prefetch(S.entries.data() + (a + b) / 2);
      }
    }
    if (world.polygon_at({ox, oy}, layers) >= 0) {
      std::fill(row, row + k, 0.0f);
      continue;
    }
    const double lim = shared ? above_shared : above(L);
    const double reach = std::fabs(static_cast<double>(ox)) + std::fabs(static_cast<double>(oy));
    const double sq = kStripSlack * (strips.scale + reach);
    if (reach <= kStripNear * strips.scale) {
      for (std::size_t j = 0; j < k; ++j) {
        const double t = strip_cast<kThick, false>(world, strips.dirs[j], ox, oy, sq, r, layers, lim);
        row[j] = t <= L ? static_cast<float>(t) : kInf;
      }
    } else {
      for (std::size_t j = 0; j < k; ++j) {
        const double t = strip_cast<kThick, true>(world, strips.dirs[j], ox, oy, sq, r, layers, lim);
        row[j] = t <= L ? static_cast<float>(t) : kInf;
      }
    }
  }
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

// Thick rays (radius 1.5) on the racetrack, M rays/s strips vs per-ray walk: M = 1000,
// L = 5: 27.6 vs 18.0, L = 50: 11.1 vs 5.1 (7.6 with box bounds and umax order instead of
// the exact capsule extents and lowest-umin-first); M = 10000 (tiny walls, each listed in
// ~25 strips, the index at its 64 MB budget, memory-bound): L = 10: 3.7 vs 3.2.

// kAuto uses the strips (fixed slot directions) when the longest look-ahead of the agents
// spans at least this many grid cells. Shorter rays mostly end in open space, where the
// per-ray walk leaves after a table lookup or two. Measured on the racetrack (M = 10000,
// cell 0.35, one thread, M rays/s strips vs per-ray walk): L = 2 (6 cells) 50 vs 102; L = 5
// 47 vs 51; L = 10 38 vs 25; L = 50 26 vs 8; radius 1.5: L = 2 12 vs 18, L = 5 6.4 vs 6.9,
// L = 10 4.8 vs 3.9.
constexpr double kStripMinCells = 8.0;

// Whether agents [begin, end) cast on the strips (see SlotMode).
bool use_strips(const World& world, std::span<const float> headings, std::span<const float> look_ahead,
                std::size_t begin, std::size_t end, SlotMode mode) {
  if (!headings.empty() || begin >= end || world.grid().empty()) return false;
  if (mode == SlotMode::kStrips) return true;
  if (mode != SlotMode::kAuto) return false;
  float L = look_ahead.empty() ? 0.0f : look_ahead[0];
  if (look_ahead.size() > 1) L = *std::max_element(look_ahead.begin() + begin, look_ahead.begin() + end);
  return static_cast<double>(L) * world.grid().inv_cell >= kStripMinCells;
}

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
  if (begin >= end) return;
  const WorldGrid& g = world.grid();
  const bool shared = look_ahead.size() == 1;
  // Fixed slot directions: the strip index of the slot set (built on first use, cached).
  const SlotStrips* strips = nullptr;
  if (use_strips(world, headings, look_ahead, begin, end, mode)) {
    strips = world.strips().get(slot_directions, radius, [&] { return build_strips(world, slot_directions, radius); });
  }
  if (strips != nullptr) {
    if (radius > 0.0f) strip_rows<true>(world, *strips, positions, look_ahead, layers, out, begin, end);
    else strip_rows<false>(world, *strips, positions, look_ahead, layers, out, begin, end);
    return;
  }
  const WorldGrid* thick = radius > 0.0f ? world.thick_grid(radius) : nullptr;
  const WorldGrid& wg = walk_grid(world, thick, radius);
  for (std::size_t i = begin; i < end; ++i) {
    const float ox = positions[2 * i], oy = positions[2 * i + 1];
    const float L = shared ? look_ahead[0] : look_ahead[i];
    float* row = &out[i * k];
    if (!headings.empty() || i == begin) {
      float c = 1.0f, sn = 0.0f;
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
    const double above = std::nextafter(static_cast<double>(L), static_cast<double>(kInf));
    bool gather = radius == 0.0f && mode != SlotMode::kPerRay;
    if (gather && mode != SlotMode::kGather && !g.empty()) {
      const double span = 2.0 * L * g.inv_cell + 1.0;
      gather = span * span <= kGatherMaxCells;
    }
    if (gather) {
      for (std::size_t j = 0; j < k; ++j) s.best[j] = above;
      gather_and_test(g, ox, oy, L, layers, s, k);
      for (std::size_t j = 0; j < k; ++j) row[j] = s.best[j] <= L ? static_cast<float>(s.best[j]) : kInf;
    } else {
      const WalkOrigin org = make_origin(wg, ox, oy);
      for (std::size_t j = 0; j < k; ++j) {
        Best b{L, kNone, -1};
        walk_any(world, thick, org, s.dirs[j], radius, layers, b);
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
  // Build the strip index here, over the thread pool (inside a chunk the build would run on
  // one thread while the others wait for it).
  if (use_strips(world, headings, look_ahead, 0, n, mode)) {
    world.strips().get(slot_directions, radius, [&] { return build_strips(world, slot_directions, radius); });
  }
  parallel_for(n, 64, [&](std::size_t b, std::size_t e) {
    thread_local SlotScratch scratch;
    if (scratch.dx.size() < k) scratch.reserve(k);
    slot_raycast_rows(world, positions, slot_directions, look_ahead, headings, radius, layers, out, b, e,
                      scratch, mode);
  });
}

}  // namespace contextsteer
