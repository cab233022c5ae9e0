// SPDX-License-Identifier: MIT
// The geometric primitives every query and every move is composed of: closest point on a
// segment, ray against circle, segment and capsule. One contract each, shared by the sensor
// (raycast, slot_raycast, nearest) and the mover (sweep_circle).
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

namespace contextsteer {

// Conventions. Everything is double and relative to a frame chosen by the caller: the rays
// start at the origin (the caller subtracts the ray's origin from the obstacle, which is
// exact for float32 inputs of similar magnitude), so the side values below are computed
// from coordinates of the size of the ray, not of the world. Ray directions (dx, dy) are
// unit vectors; distances t are along them, t >= 0. A miss is +inf, never a sentinel.
// All functions are pure, allocation-free and branch only on the cases named.
//
// The composition (as Box2D's geometry.c builds its casts from each other):
//   ray_segment   - the solve of the ray against one line segment;
//   ray_circle    - the solve against a disc;
//   ray_capsule   = inside test (closest_on_segment) or the entry through one of the two
//                   side segments (ray_segment on the segment offset by r) or the two end
//                   discs (ray_circle);
// so a thick ray (a disc swept along a ray: raycast with radius > 0, WallDanger's padded
// rays) and a moving agent (sweep_circle) meet a wall at the same distance, and a grazing
// contact is the same contact for both.
//
// Contracts the mover took over from the sensor when the copies were merged (results of
// the library's own runs did not change: the golden hash and every scenario, raycast,
// nearest and sweep output stayed bit-identical):
// - a ray collinear with a segment (a capsule's side, or the wall itself for a radius-0
//   sweep) touches it at its first point; sweep_circle's private copy called it a miss and
//   left the touch to the end discs, which rounding could miss for radius 0;
// - the inside tests are the closed |q|^2 <= r^2 (inside_capsule, inside_disc); the mover
//   tested sqrt(|q|^2) <= r, which differs only at a rounding boundary;
// - the capsule entry tests the near side only when the origin is clearly outside it, as
//   the sensor did; the mover took the minimum over both sides and both discs, which
//   differs only at the junction of a side and a disc (and costs ~9% more instructions).
// Whether a touch blocks stays the mover's decision: a contact whose normal does not
// oppose the motion (a graze) lets it slide on.

/// Closest point of the segment a..b to the point p, as the parameter u in [0, 1] along
/// a..b and the point q = a + u (b - a) itself.
struct SegmentPoint {
  double u;
  double x, y;
};

/// Parameter of the projection of p on the line through a..b, unclamped:
/// u = dot(p - a, b - a) / |b - a|^2 (the foot of the perpendicular is a + u (b - a)).
/// A zero-length segment (a == b) gives 0. Pure.
inline double segment_parameter(double ax, double ay, double bx, double by, double px, double py) {
  const double ex = bx - ax, ey = by - ay;
  const double len2 = ex * ex + ey * ey;
  return len2 > 0.0 ? ((px - ax) * ex + (py - ay) * ey) / len2 : 0.0;
}

/// Closest point of the segment a..b to p: the projection's parameter clamped to [0, 1]
/// (|p - q(u)|^2 is a convex quadratic in u, so the clamped stationary point is the
/// minimum). The endpoints are returned exactly (u <= 0 gives a, u >= 1 gives b), so
/// neighbouring segments agree on a shared vertex. Zero-length segments give a. Pure.
inline SegmentPoint closest_on_segment(double ax, double ay, double bx, double by, double px,
                                       double py) {
  const double u = segment_parameter(ax, ay, bx, by, px, py);
  if (u <= 0.0) return {0.0, ax, ay};
  if (u >= 1.0) return {1.0, bx, by};
  return {u, ax + u * (bx - ax), ay + u * (by - ay)};
}

/// Squared distance from p to the segment a..b (see closest_on_segment). Pure.
inline double segment_distance2(double ax, double ay, double bx, double by, double px, double py) {
  const SegmentPoint q = closest_on_segment(ax, ay, bx, by, px, py);
  return (px - q.x) * (px - q.x) + (py - q.y) * (py - q.y);
}

/// Distance between the segments a-b and c-d (0 when they cross), in double. Pure.
inline double segment_gap(double ax, double ay, double bx, double by, double cx, double cy,
                          double dx, double dy) {
  auto orient = [](double px, double py, double qx, double qy, double rx, double ry) {
    const double v = (qx - px) * (ry - py) - (qy - py) * (rx - px);
    return (v > 0.0) - (v < 0.0);
  };
  const int o1 = orient(ax, ay, bx, by, cx, cy), o2 = orient(ax, ay, bx, by, dx, dy);
  const int o3 = orient(cx, cy, dx, dy, ax, ay), o4 = orient(cx, cy, dx, dy, bx, by);
  if (o1 * o2 < 0 && o3 * o4 < 0) return 0.0;
  return std::sqrt(std::min(
      {segment_distance2(ax, ay, bx, by, cx, cy), segment_distance2(ax, ay, bx, by, dx, dy),
       segment_distance2(cx, cy, dx, dy, ax, ay), segment_distance2(cx, cy, dx, dy, bx, by)}));
}

/// Sign (-1, 0, 1) of the turn a -> b -> c: cross(b - a, c - a). For float32 inputs of
/// similar magnitude the differences are exact in double, so a point on the line through
/// two others (an axis-parallel wall, or a point at a wall's end) reads 0, where a
/// distance computed through a projection could read 1e-17. Pure.
inline int turn_sign(double ax, double ay, double bx, double by, double cx, double cy) {
  const double v = (bx - ax) * (cy - ay) - (by - ay) * (cx - ax);
  return (v > 0.0) - (v < 0.0);
}

/// Whether the closed segments p-q and a-b meet (cross or touch), by the signs of the
/// four turns (collinear segments: whether their boxes overlap). Pure.
inline bool segments_meet(double px, double py, double qx, double qy, double ax, double ay,
                          double bx, double by) {
  const int o1 = turn_sign(ax, ay, bx, by, px, py), o2 = turn_sign(ax, ay, bx, by, qx, qy);
  const int o3 = turn_sign(px, py, qx, qy, ax, ay), o4 = turn_sign(px, py, qx, qy, bx, by);
  if (o1 * o2 > 0 || o3 * o4 > 0) return false;
  if (o1 != 0 || o2 != 0 || o3 != 0 || o4 != 0) return true;
  return std::max(px, qx) >= std::min(ax, bx) && std::max(ax, bx) >= std::min(px, qx) &&
         std::max(py, qy) >= std::min(ay, by) && std::max(ay, by) >= std::min(py, qy);
}

/// Whether the closed segments p-q and a-b meet other than by p lying on a-b with q off
/// its line: a path that starts on a wall and leaves it to one side (either side) does
/// not cross it. Pure.
inline bool path_meets_wall(double px, double py, double qx, double qy, double ax, double ay,
                            double bx, double by) {
  if (!segments_meet(px, py, qx, qy, ax, ay, bx, by)) return false;
  const bool p_on = turn_sign(ax, ay, bx, by, px, py) == 0 && px >= std::min(ax, bx) &&
                    px <= std::max(ax, bx) && py >= std::min(ay, by) && py <= std::max(ay, by);
  return !(p_on && turn_sign(ax, ay, bx, by, qx, qy) != 0);
}

/// Whether the path p → q touches the wall a–b only at p: p lies on the wall (an agent
/// centred exactly on a wall's line, inside a solid) and the path is not along it. Such
/// a path leaves the wall to one side, which either side is (fuzz round 14: an agent
/// spawned on a wall through a pillar had every way out refused). Pure.
inline bool leaves_from(double px, double py, double qx, double qy, double ax, double ay, double bx,
                        double by) {
  if (segment_distance2(ax, ay, bx, by, px, py) != 0.0) return false;
  return (bx - ax) * (qy - py) - (by - ay) * (qx - px) != 0.0;
}

/// Signed side of the point x relative to the line through the origin along the unit d:
/// cross(x, d) = x.x d.y - x.y d.x, the signed distance of x from the line (> 0: x lies to
/// the right of d). For float32 inputs the two products are exact in double and the
/// difference is rounded once, so the sign is exact. Pure.
inline double line_side(double x, double y, double dx, double dy) { return x * dy - y * dx; }

/// Whether a segment whose endpoints have the sides sa, sb (line_side) lies strictly on one
/// side of the ray's line (cannot meet it). Branch-free. Pure.
inline bool same_side(double sa, double sb) {
  return ((sa > 0.0) & (sb > 0.0)) | ((sa < 0.0) & (sb < 0.0));
}

/// Whether the origin lies in the closed disc of radius r centred at q: |q|^2 <= r^2, the
/// inside test of ray_circle (there written c = |q|^2 - r^2 <= 0, the same predicate: a
/// rounded difference is 0 only for equal operands) and of sweep_circle. Pure.
inline bool inside_disc(double qx, double qy, double r) { return qx * qx + qy * qy <= r * r; }

/// Distance along the unit direction (dx, dy) from the origin to the disc of radius r
/// centred at q = (qx, qy) (relative to the origin); 0 when the origin is inside or on the
/// disc, +inf on a miss. Pure, allocation-free.
///
/// |t d - q|^2 = r^2 with |d| = 1: t^2 - 2bt + c = 0, b = d.q, c = |q|^2 - r^2. c <= 0: the
/// origin is inside (t = 0). Otherwise the near root t = b - sqrt(b^2 - c), written as
/// c / (b + sqrt(b^2 - c)) to avoid cancellation; b <= 0 (disc behind) or b^2 < c: miss.
/// A tangent ray (b^2 == c) hits.
inline double ray_circle(double qx, double qy, double r, double dx, double dy) {
  constexpr double kMiss = std::numeric_limits<double>::infinity();
  const double c = qx * qx + qy * qy - r * r;
  if (c <= 0.0) return 0.0;
  const double b = qx * dx + qy * dy;
  if (b <= 0.0) return kMiss;
  // b^2 - c = r^2 - e^2, e = cross(q, d) the distance of q from the ray's line, computed
  // as the product (r - e)(r + e): b^2 - c cancels two numbers of the order |q|^2, and a
  // float32 unit direction, |d|^2 = 1 ± 1e-7, shifts b^2 by |q|^2 · 1e-7: 0.1 m^2 at
  // 1 km, as much as r^2 itself for r = 0.3, so thick rays from far away missed walls
  // they passed 0.17 m from (a route from 1 km away crossed a wall).
  const double e = std::fabs(qx * dy - qy * dx);
  const double disc = (r - e) * (r + e);
  if (disc < 0.0) return kMiss;
  return c / (b + std::sqrt(disc));
}

/// Distance along the unit direction (dx, dy) from the origin to the segment a..b
/// (relative to the origin), +inf on a miss. Pure, allocation-free.
///
/// The ray is p(t) = t d (t >= 0), the segment q(u) = a + u (b - a), u in [0, 1].
/// cross(p, d) = 0 on the ray's line, so the segment meets the line where
///   cross(a + u (b - a), d) = 0  <=>  u = sa / (sa - sb),   sa = cross(a, d), sb = cross(b, d)
/// (line_side). u in [0, 1] <=> sa and sb do not have the same strict sign: a and b lie on
/// opposite sides of (or on) the line. Solving p(t) = q(u) with cross(., b - a) instead gives
///   t = cross(a, b - a) / cross(d, b - a) = cross(a, b) / (sa - sb).
/// Testing sides with sa and sb, each computed from one endpoint only, makes neighbouring
/// segments agree at a shared vertex (both see the same value there), so a ray through a
/// vertex never slips between two walls.
///
/// Collinear (grazing along the segment): sa == sb == 0, the segment lies on the ray's
/// line; the hit is its first point at t >= 0, found by projecting both endpoints on d:
/// 0 when the segment covers the origin, min(pa, pb) when it lies ahead, a miss when it
/// lies behind. (A zero-length segment is a point: a hit when it lies on the ray.) This is
/// the contract both the sensor and the mover use: a ray along a wall touches it.
///
/// Precision: for float32 inputs the products in sa, sb are exact and each is rounded once,
/// which keeps its sign exact (the side test is robust) and t accurate to a few ulps of
/// double even for grazing hits. -0 is returned as +0.
inline double ray_segment(double ax, double ay, double bx, double by, double dx, double dy) {
  constexpr double kMiss = std::numeric_limits<double>::infinity();
  const double sa = line_side(ax, ay, dx, dy);
  const double sb = line_side(bx, by, dx, dy);
  if (same_side(sa, sb)) return kMiss;
  const double den = sa - sb;
  if (den == 0.0) {
    const double pa = ax * dx + ay * dy, pb = bx * dx + by * dy;
    if ((pa <= 0.0 && pb >= 0.0) || (pb <= 0.0 && pa >= 0.0)) return 0.0;
    return pa > 0.0 ? std::min(pa, pb) : kMiss;
  }
  const double t = (ax * by - ay * bx) / den;
  return t >= 0.0 ? t + 0.0 : kMiss;  // + 0 turns -0 into +0
}

/// Whether the origin lies in the capsule {x : dist(x, a..b) <= r} (closed): the one
/// inside test of ray_capsule and sweep_circle. `q` is closest_on_segment(a, b, origin).
inline bool inside_capsule(const SegmentPoint& q, double r) {
  return q.x * q.x + q.y * q.y <= r * r;
}

namespace detail {

/// The capsule of radius r around a..b cannot give a hit in [0, tmax] (see capsule_entry):
/// sa, sb are the signed distances of a and b from the ray's line, so a segment entirely
/// more than r to one side is missed; pa, pb are the distances along the ray, so a segment
/// more than r behind the origin, or beyond tmax + r, cannot do better. These hold for an
/// origin inside the capsule too (then a point of the segment lies within r of the origin,
/// hence within r of the line, and its projection lies in [-r, r]).
inline bool capsule_out_of_reach(double ax, double ay, double bx, double by, double r, double dx,
                                 double dy, double tmax) {
  const double sa = line_side(ax, ay, dx, dy), sb = line_side(bx, by, dx, dy);
  if ((sa > r && sb > r) || (sa < -r && sb < -r)) return true;
  const double pa = ax * dx + ay * dy, pb = bx * dx + by * dy;
  if (pa < -r && pb < -r) return true;
  return std::min(pa, pb) - r > tmax;
}

/// The entry solve of capsule_entry, after capsule_out_of_reach.
inline double capsule_entry_solve(double ax, double ay, double bx, double by, double r, double dx,
                                  double dy) {
  constexpr double kMiss = std::numeric_limits<double>::infinity();
  const double ex = bx - ax, ey = by - ay;
  const double s = r / std::sqrt(ex * ex + ey * ey);
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
    if (t < kMiss) return t;
    return std::min(ray_circle(ax, ay, r, dx, dy), ray_circle(bx, by, r, dx, dy));
  }
  // The origin lies beyond an end, within r of the segment's line (or about on an offset
  // line): a line crosses each offset line once, so it cannot enter through a side; the
  // sides are still tested for rays starting about on them.
  double t = std::min(ray_circle(ax, ay, r, dx, dy), ray_circle(bx, by, r, dx, dy));
  t = std::min(t, ray_segment(ax + nx, ay + ny, bx + nx, by + ny, dx, dy));
  return std::min(t, ray_segment(ax - nx, ay - ny, bx - nx, by - ny, dx, dy));
}

}  // namespace detail

/// Entry distance of the ray from the origin along the unit (dx, dy) into the capsule of
/// radius r >= 0 around a..b (a non-zero-length segment), for an origin outside it
/// (inside_capsule false); +inf on a miss, or when the capsule lies wholly beyond tmax (a
/// bound the caller does not need beaten, e.g. the best hit so far; a hit at exactly tmax
/// is still returned). Pure.
///
/// The capsule is convex, so a ray from outside enters it at most once, through one of
/// the two side segments (a..b offset by +-n, |n| = r, n normal to b - a) or one of the two
/// end discs. With h the signed distance of the origin from the segment's line
/// (dot(n, -a) = r h): when |h| > r the origin lies beyond the offset line on its own side,
/// and a line crosses that offset line once, from outside in, so only that side can be
/// the entry and the far side is never tested; the end discs only when that side is
/// missed (a side hit is the entry, up to the junction points where both agree). When
/// |h| <= r (the origin beyond an end, within r of the line, or about on an offset line)
/// both sides and both discs are tested and the nearest taken. r = 0 is the segment itself
/// (ray_segment, plus its endpoints as discs of radius 0).
///
/// Grazing: a ray along an offset line touches the capsule (ray_segment's collinear rule
/// and ray_circle's tangent rule); whether such a touch blocks is the caller's decision
/// (sweep_circle lets a contact whose normal does not oppose the motion slide).
inline double capsule_entry(double ax, double ay, double bx, double by, double r, double dx,
                            double dy, double tmax) {
  if (detail::capsule_out_of_reach(ax, ay, bx, by, r, dx, dy, tmax))
    return std::numeric_limits<double>::infinity();
  return detail::capsule_entry_solve(ax, ay, bx, by, r, dx, dy);
}

/// Distance along the unit (dx, dy) from the origin to the capsule of radius r > 0 around
/// a..b (relative to the origin): 0 when the origin is inside or on it (inside_capsule),
/// otherwise capsule_entry (same tmax contract). A thick ray (a disc of radius r swept along
/// the ray) against a segment is this thin ray against the segment's capsule. Pure.
inline double ray_capsule(double ax, double ay, double bx, double by, double r, double dx,
                          double dy, double tmax) {
  if (detail::capsule_out_of_reach(ax, ay, bx, by, r, dx, dy, tmax))
    return std::numeric_limits<double>::infinity();
  if (inside_capsule(closest_on_segment(ax, ay, bx, by, 0.0, 0.0), r)) return 0.0;
  return detail::capsule_entry_solve(ax, ay, bx, by, r, dx, dy);
}

}  // namespace contextsteer
