// SPDX-License-Identifier: MIT
// Internal: the grid walk of one ray over World::grid() or an inflated grid (raycast, slot rays).
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>

#include "contextsteer/raycast.hpp"
#include "contextsteer/world.hpp"

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

// Keeps the closest hit; on equal distances the first one found stays (a hit exactly at
// max_dist is accepted while nothing has been found yet).
inline void offer(Best& best, double t, int kind, std::int32_t index) {
  if (t < best.t || (best.kind == kNone && t == best.t)) best = {t, kind, index};
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

// The walk of one ray from org along dir (radius r, 0: thin) over walk_grid(w, thick, r),
// keeping the closest hit in `best` (best.t on entry: the farthest distance wanted);
// org = make_origin(walk_grid(w, thick, r), ...), dir = make_dir(walk_grid(w, thick, r), ...).
// See grid_walk.cpp. Pure, allocation-free.
void walk_any(const World& w, const WorldGrid* thick, const WalkOrigin& org, const WalkDir& dir, float r,
              std::uint32_t layers, Best& best);

// One ray from (ox, oy) along the unit (dx, dy) up to maxd (inclusive): the closest hit, a
// polygon containing the origin (distance 0) or kNone. thick = w.thick_grid(r) or nullptr.
Best cast_one(const World& w, const WorldGrid* thick, float ox, float oy, float dx, float dy, float maxd,
              float r, std::uint32_t layers);

}  // namespace contextsteer::detail
