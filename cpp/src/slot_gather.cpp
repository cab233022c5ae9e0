// SPDX-License-Identifier: MIT
// The gather path of the slot raycast: collect the walls near an agent once, then test every
// slot ray against that list in branch-free loops.
#include "slot_gather.hpp"

#include <algorithm>
#include <cmath>

#include "contextsteer/geometry.hpp"

namespace contextsteer::detail {
namespace {

// Tests the gathered walls against all K rays. The inner loop runs over walls in blocks of
// 8 independent lanes with no branches (the compiler vectorises it); lanes whose
// denominator is 0 (a wall on the ray's line) flag the ray for the scalar path, which
// handles the collinear case. Same double operations as ray_segment (line_side, same_side,
// cross(a, b) / (sa - sb)), so same distances.
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
        const double sa = line_side(ax, ay, dx, dy);
        const double sb = line_side(bx, by, dx, dy);
        const double den = sa - sb;
        const double t = s.c[i + l] / den;  // c = cross(a, b): ray_segment's t
        const bool same = same_side(sa, sb);
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
      for (std::size_t q = 0; q < n; ++q)
        b = std::min(b, ray_segment(s.ax[q], s.ay[q], s.bx[q], s.by[q], dx, dy));
    }
    s.best[j] = b + 0.0;
  }
  s.count = 0;
}

}  // namespace

// Gathers the walls whose boxes meet the look-ahead disc of radius L around (ox, oy), each
// once (owner-cell rule), relative to the origin, and tests all rays against them.
void gather_and_test(const WorldGrid& g, double ox, double oy, double L, std::uint32_t layers,
                     SlotScratch& s, std::size_t k) {
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
        s.ax[i] = ax;
        s.ay[i] = ay;
        s.bx[i] = bx;
        s.by[i] = by;
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

}  // namespace contextsteer::detail
