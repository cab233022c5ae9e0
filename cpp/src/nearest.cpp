// SPDX-License-Identifier: MIT
// Nearest wall point (grid ring search) and point-inside tests.
#include "contextsteer/nearest.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "contextsteer/geometry.hpp"
#include "parallel.hpp"

namespace contextsteer {
namespace {

struct Candidate {
  double d2 = std::numeric_limits<double>::infinity();
  double qx = 0.0, qy = 0.0;  // closest point
  double nx = 0.0, ny = 0.0;  // normal used when the query point is on the wall
  int kind = 0;               // 0 none, 1 segment, 2 circle
  std::int32_t index = -1;
};

// Distance from p to every entry of a cell, in double. Segments: closest_on_segment.
// Circles: the boundary point along the ray from the centre through p.
void visit(const WorldGrid& g, std::size_t cell, double px, double py, std::uint32_t layers,
           Candidate& best) {
  for (auto e = static_cast<std::size_t>(g.seg_start[cell]);
       e < static_cast<std::size_t>(g.seg_start[cell + 1]); ++e) {
    if (!(g.seg_layers[e] & layers)) continue;
    const double ax = g.ax[e], ay = g.ay[e];
    const SegmentPoint q = closest_on_segment(ax, ay, g.bx[e], g.by[e], px, py);
    const double d2 = (px - q.x) * (px - q.x) + (py - q.y) * (py - q.y);
    if (d2 < best.d2) {
      const double ex = g.bx[e] - ax, ey = g.by[e] - ay;
      const double len = std::sqrt(ex * ex + ey * ey);
      best = {d2, q.x, q.y, -ey / len, ex / len, 1, g.seg_index[e]};
    }
  }
  for (auto e = static_cast<std::size_t>(g.circ_start[cell]);
       e < static_cast<std::size_t>(g.circ_start[cell + 1]); ++e) {
    if (!(g.circ_layers[e] & layers)) continue;
    const double vx = px - g.cx[e], vy = py - g.cy[e];
    const double len = std::sqrt(vx * vx + vy * vy);
    const double ux = len > 0.0 ? vx / len : 1.0, uy = len > 0.0 ? vy / len : 0.0;
    const double d = std::fabs(len - g.cr[e]);
    if (d * d < best.d2) {
      best = {d * d, g.cx[e] + g.cr[e] * ux, g.cy[e] + g.cr[e] * uy, ux, uy, 2, g.circ_index[e]};
    }
  }
}

}  // namespace

void nearest_rows(const World& world, std::span<const float> points, float max_dist,
                  std::uint32_t layers, NearestOut out, std::size_t begin, std::size_t end) {
  CONTEXTSTEER_ASSERT(world.indexed());
  const WorldGrid& g = world.grid();
  const double h = g.cell;
  const double maxd = max_dist;
  for (std::size_t i = begin; i < end; ++i) {
    const double px = points[2 * i], py = points[2 * i + 1];
    Candidate best;
    if (!g.empty()) {
      // Cell of p on the unbounded grid (clamped far outside to keep integers small).
      const double lim = 1e9;
      const auto pcx = static_cast<long long>(std::floor(std::clamp((px - g.x0) / h, -lim, lim)));
      const auto pcy = static_cast<long long>(std::floor(std::clamp((py - g.y0) / h, -lim, lim)));
      const long long nx = g.nx, ny = g.ny;
      const long long gap_x = std::max({0LL, -pcx, pcx - (nx - 1)});
      const long long gap_y = std::max({0LL, -pcy, pcy - (ny - 1)});
      const long long far_x = std::max(std::llabs(pcx), std::llabs(pcx - (nx - 1)));
      const long long far_y = std::max(std::llabs(pcy), std::llabs(pcy - (ny - 1)));
      const long long r_last = std::max(far_x, far_y);
      // Rings closer than p's cell's clearance are empty (cells inside the grid): start at
      // the first ring that may list a wall. A point in open space then misses at once
      // when (clearance - 1) * h > max_dist (the test below), without walking the rings.
      long long r0 = std::max(gap_x, gap_y);
      if (r0 == 0) r0 = g.clearance[static_cast<std::size_t>(pcy * nx + pcx)];
      // Cells on ring r (Chebyshev distance r from p's cell) are at least (r - 1) * h from p.
      for (long long r = r0; r <= r_last; ++r) {
        const double lower = (static_cast<double>(r) - 1.0) * h;
        if (r >= 1 && (lower > maxd || lower * lower > best.d2)) break;
        const long long x_lo = std::max(pcx - r, 0LL), x_hi = std::min(pcx + r, nx - 1);
        const long long y_lo = std::max(pcy - r, 0LL), y_hi = std::min(pcy + r, ny - 1);
        for (long long cy = y_lo; cy <= y_hi; ++cy) {
          const bool edge_row = cy == pcy - r || cy == pcy + r;
          if (edge_row) {
            for (long long cx = x_lo; cx <= x_hi; ++cx)
              visit(g, static_cast<std::size_t>(cy * nx + cx), px, py, layers, best);
          } else {
            if (pcx - r >= 0 && pcx - r < nx)
              visit(g, static_cast<std::size_t>(cy * nx + pcx - r), px, py, layers, best);
            if (r > 0 && pcx + r >= 0 && pcx + r < nx)
              visit(g, static_cast<std::size_t>(cy * nx + pcx + r), px, py, layers, best);
          }
        }
      }
    }
    // A point on the wall up to rounding (the closest point of a segment is computed, and
    // lies up to an ulp or so beside an exact point of it) is on the wall: distance 0 and
    // the documented normal, also for max_dist = 0. Dividing the rounding residue by itself
    // gave a normal along the wall for 12 of 196 points of a wall from (-25, -25) to
    // (25, -25).
    const double raw = std::sqrt(best.d2);
    const bool on = !(raw > 1e-12 * (1.0 + std::max(std::fabs(px), std::fabs(py))));
    const double d = on ? 0.0 : raw;
    if (best.kind == 0 || !(d <= maxd)) {
      out.distance[i] = std::numeric_limits<float>::infinity();
      out.point[2 * i] = out.point[2 * i + 1] = 0.0f;
      out.normal[2 * i] = out.normal[2 * i + 1] = 0.0f;
      out.obstacle[i] = -1;
      continue;
    }
    out.distance[i] = static_cast<float>(d);
    out.point[2 * i] = static_cast<float>(best.qx);
    out.point[2 * i + 1] = static_cast<float>(best.qy);
    if (!on) {
      out.normal[2 * i] = static_cast<float>((px - best.qx) / d);
      out.normal[2 * i + 1] = static_cast<float>((py - best.qy) / d);
    } else {
      out.normal[2 * i] = static_cast<float>(best.nx);
      out.normal[2 * i + 1] = static_cast<float>(best.ny);
    }
    const auto idx = static_cast<std::size_t>(best.index);
    out.obstacle[i] = best.kind == 1 ? world.wall_obstacle()[idx] : world.circle_obstacle()[idx];
  }
}

void nearest(const World& world, std::span<const float> points, float max_dist,
             std::uint32_t layers, NearestOut out) {
  parallel_for(points.size() / 2, 256, [&](std::size_t b, std::size_t e) {
    nearest_rows(world, points, max_dist, layers, out, b, e);
  });
}

void inside_rows(const World& world, std::span<const float> points, std::uint32_t layers, bool* out,
                 std::size_t begin, std::size_t end) {
  CONTEXTSTEER_ASSERT(world.indexed());
  for (std::size_t i = begin; i < end; ++i) {
    const Vec2 p{points[2 * i], points[2 * i + 1]};
    out[i] = world.polygon_at(p, layers) >= 0 || world.circle_at(p, layers) >= 0;
  }
}

void inside(const World& world, std::span<const float> points, std::uint32_t layers, bool* out) {
  parallel_for(points.size() / 2, 512, [&](std::size_t b, std::size_t e) {
    inside_rows(world, points, layers, out, b, e);
  });
}

}  // namespace contextsteer
