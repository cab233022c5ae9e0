// SPDX-License-Identifier: MIT
// Internal: the grid walk of one ray (Amanatides & Woo DDA with empty-space skipping) over
// World::grid() or an inflated grid, per cell the exact tests of geometry.hpp (thin rays behind
// a float32 SSE2 screen). Header-only: inlined into the raycast loops (raycast.cpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cmath>
#include <limits>

#include "contextsteer/geometry.hpp"
#include "contextsteer/raycast.hpp"
#include "contextsteer/world.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace contextsteer::detail {

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

// Keeps the closest hit (a hit exactly at max_dist is accepted while nothing has been found
// yet); of hits at equal distances, the lowest kind, then row: not the first one found,
// which followed the order of the cells walked and so the grid walked (a thick ray starting
// within its radius of several walls reported another wall once the radius had left the
// thick grids' cache).
inline void offer(Best& best, double t, int kind, std::int32_t index) {
  if (t < best.t || (t == best.t && (best.kind == kNone || kind < best.kind ||
                                     (kind == best.kind && index < best.index))))
    best = {t, kind, index};
}

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

// The grid a ray of radius r walks: thick = w.thick_grid(r) for r > 0 (nullptr: the plain
// grid, with neighbourhoods).
inline const WorldGrid& walk_grid(const World& w, const WorldGrid* thick, float r) {
  return r > 0.0f && thick != nullptr ? *thick : w.grid();
}

// Circles of a cell (thin and thick rays alike: a thick ray hits a circle grown by r).
inline void test_circles(const WorldGrid& g, std::size_t cell, double ox, double oy, double dx,
                         double dy, double r, std::uint32_t layers, Best& best) {
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
      : ox(_mm_set1_ps(static_cast<float>(x))),
        oy(_mm_set1_ps(static_cast<float>(y))),
        dx(_mm_set1_ps(static_cast<float>(ux))),
        dy(_mm_set1_ps(static_cast<float>(uy))),
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
inline void test_cell_thin(const WorldGrid& g, std::size_t cell, double ox, double oy, double dx,
                           double dy, const RayLanes& lanes, std::uint32_t layers, Best& best) {
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
    const __m128 ta =
        _mm_mul_ps(_mm_add_ps(_mm_and_ps(ax, abs_mask), _mm_and_ps(ay, abs_mask)), tol);
    const __m128 tb =
        _mm_mul_ps(_mm_add_ps(_mm_and_ps(bx, abs_mask), _mm_and_ps(by, abs_mask)), tol);
    const __m128 left = _mm_and_ps(_mm_cmpgt_ps(sa, ta), _mm_cmpgt_ps(sb, tb));
    const __m128 right =
        _mm_and_ps(_mm_cmplt_ps(sa, _mm_sub_ps(zero, ta)), _mm_cmplt_ps(sb, _mm_sub_ps(zero, tb)));
    const __m128i lay = _mm_load_si128(reinterpret_cast<const __m128i*>(blk->layers));
    const __m128i off = _mm_cmpeq_epi32(_mm_and_si128(lay, lanes.layers), _mm_setzero_si128());
    unsigned keep = ~static_cast<unsigned>(
                        _mm_movemask_ps(_mm_or_ps(_mm_or_ps(left, right), _mm_castsi128_ps(off)))) &
                    0xFu;
#else
    unsigned keep = 0;
    for (int l = 0; l < 4; ++l) keep |= (blk->layers[l] & layers) ? 1u << l : 0u;
#endif
    while (keep) {
      const int l = __builtin_ctz(keep);
      keep &= keep - 1;
      const double t =
          ray_segment(blk->ax[l] - ox, blk->ay[l] - oy, blk->bx[l] - ox, blk->by[l] - oy, dx, dy);
      if (t <= best.t) offer(best, t, kSeg, blk->index[l]);
    }
  }
  (void)layers;
  if (!g.cx.empty() && g.circ_start[cell + 1] > g.circ_start[cell]) {
    test_circles(g, cell, ox, oy, dx, dy, 0.0, layers, best);
  }
}

// Thick ray (radius r) against the segments and circles of a cell.
inline void test_cell_thick(const WorldGrid& g, std::size_t cell, double ox, double oy, double dx,
                            double dy, double r, std::uint32_t layers, Best& best) {
  const auto s0 = static_cast<std::size_t>(g.seg_start[cell]);
  const auto s1 = static_cast<std::size_t>(g.seg_start[cell + 1]);
  for (std::size_t e = s0; e < s1; ++e) {
    if (!(g.seg_layers[e] & layers)) continue;
    const double t =
        ray_capsule(g.ax[e] - ox, g.ay[e] - oy, g.bx[e] - ox, g.by[e] - oy, r, dx, dy, best.t);
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

template <int kMode>
void walk(const WorldGrid& g, const WalkOrigin& org, const WalkDir& dir, double r,
          std::uint32_t layers, Best& best) {
  constexpr bool kThick = kMode == kThickNeighbourhood;
  // A NaN origin (another thread writing an agent's position mid-step: the step checks
  // positions once, before perceiving) is no ray: along an axis its loop compared only
  // NaNs and never left the grid, and the step spun for good.
  if (g.empty() || !(std::isfinite(org.ox) && std::isfinite(org.oy))) return;
  // A k larger than the (Chebyshev) cell distance from any point of the ray's path to any
  // cell of the grid changes nothing: cap it there, so huge radii never overflow the int.
  int k = 0;
  if constexpr (kThick) {
    const double reach = (std::fabs(static_cast<double>(g.x0) - org.ox) +
                          std::fabs(static_cast<double>(g.y0) - org.oy) + best.t) *
                             g.inv_cell +
                         g.nx + g.ny + 2.0;
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
  // (Also returns on a NaN bound, which checked inputs never give: the loop below ends
  // only through comparisons with t1 or by leaving the grid.)
  if (!(t0 <= t1)) return;
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
          test_cell_thick(g, static_cast<std::size_t>(cy) * g.nx + cx, ox, oy, dx, dy, r, layers,
                          best);
    } else if (clear == 0) {
      // Thin rays never leave [0, nx) x [0, ny) inside the loop (k = 0); cells with
      // clearance > 0 are empty.
      const std::size_t cell = static_cast<std::size_t>(iy) * g.nx + ix;
      if constexpr (kMode == kThickInflated)
        test_cell_thick(g, cell, ox, oy, dx, dy, r, layers, best);
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

// The walk of one ray from org along dir (radius r, 0: thin) over walk_grid(w, thick, r),
// keeping the closest hit in `best` (best.t on entry: the farthest distance wanted);
// org = make_origin(walk_grid(w, thick, r), ...), dir = make_dir(walk_grid(w, thick, r), ...).
// Pure, allocation-free.
inline void walk_any(const World& w, const WorldGrid* thick, const WalkOrigin& org,
                     const WalkDir& dir, float r, std::uint32_t layers, Best& best) {
  if (r > 0.0f) {
    if (thick != nullptr) walk<kThickInflated>(*thick, org, dir, r, layers, best);
    else walk<kThickNeighbourhood>(w.grid(), org, dir, r, layers, best);
  } else {
    walk<kThin>(w.grid(), org, dir, r, layers, best);
  }
}

// One ray from (ox, oy) along the unit (dx, dy) up to maxd (inclusive): the closest hit, a
// polygon containing the origin (distance 0) or kNone. thick = w.thick_grid(r) or nullptr.
inline Best cast_one(const World& w, const WorldGrid* thick, float ox, float oy, float dx, float dy,
                     float maxd, float r, std::uint32_t layers) {
  Best best{maxd, kNone, -1};
  const std::int32_t poly = w.polygon_at({ox, oy}, layers);
  if (poly >= 0) return {0.0f, kPolygon, poly};
  const WorldGrid& g = walk_grid(w, thick, r);
  walk_any(w, thick, make_origin(g, ox, oy), make_dir(g, dx, dy), r, layers, best);
  return best;
}

}  // namespace contextsteer::detail
