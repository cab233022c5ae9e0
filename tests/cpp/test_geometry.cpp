// SPDX-License-Identifier: MIT
// The geometric primitives of geometry.hpp against an independent long-double oracle
// (random cases, plus the collinear, grazing, vertex and zero-length cases their contracts
// name), and the agreement they exist for: a thick ray (the sensor) and a swept circle (the
// mover) meet a wall at the same distance.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "contextsteer/collide.hpp"
#include "contextsteer/geometry.hpp"
#include "contextsteer/raycast.hpp"

using namespace contextsteer;

namespace {

using LD = long double;
constexpr double kInf = std::numeric_limits<double>::infinity();

// Oracle: distance from the point (x, y) to the segment a..b, in long double.
LD oracle_dist(LD x, LD y, LD ax, LD ay, LD bx, LD by) {
  const LD ex = bx - ax, ey = by - ay, l2 = ex * ex + ey * ey;
  LD u = l2 > 0 ? ((x - ax) * ex + (y - ay) * ey) / l2 : 0;
  u = std::clamp<LD>(u, 0, 1);
  const LD qx = ax + u * ex - x, qy = ay + u * ey - y;
  return std::sqrt(qx * qx + qy * qy);
}

// Oracle for the ray t d (t in [0, T]) against the capsule of radius r around a..b, by
// search rather than by the closed forms under test: f(t) = dist(t d, segment) is convex,
// so a ternary search finds its minimum t*, and the first t with f(t) <= r (when f(t*) <= r)
// is found by bisection on [0, t*], where f decreases. Returns the distance (or +inf) and
// the clearance margin min f - r (negative: a hit that deep).
struct OracleHit {
  LD t;
  LD margin;
};
OracleHit oracle_capsule(LD ax, LD ay, LD bx, LD by, LD r, LD dx, LD dy, LD T) {
  auto f = [&](LD t) { return oracle_dist(t * dx, t * dy, ax, ay, bx, by); };
  LD lo = 0, hi = T;
  for (int i = 0; i < 300; ++i) {
    const LD m1 = lo + (hi - lo) / 3, m2 = hi - (hi - lo) / 3;
    if (f(m1) <= f(m2)) hi = m2;
    else lo = m1;
  }
  const LD tstar = (lo + hi) / 2;
  const LD margin = f(tstar) - r;
  if (margin > 0) return {std::numeric_limits<LD>::infinity(), margin};
  if (f(0) <= r) return {0, margin};
  lo = 0, hi = tstar;
  for (int i = 0; i < 300; ++i) {
    const LD m = (lo + hi) / 2;
    if (f(m) <= r) hi = m;
    else lo = m;
  }
  return {hi, margin};
}

struct Case {
  double ax, ay, bx, by, dx, dy;
};

Case random_case(std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-5.0f, 5.0f);
  std::uniform_real_distribution<float> ang(-3.14159f, 3.14159f);
  Case c{};
  c.ax = u(rng), c.ay = u(rng), c.bx = u(rng), c.by = u(rng);
  const float a = ang(rng);
  // A unit direction to double precision: the solves take |d| = 1, and a float32 unit
  // vector's |d|^2 - 1 (~1e-8) moves a shallow entry by up to ~1e-6, more than the
  // tolerance below (the kernels accept that; it is the input's error, not the solve's).
  c.dx = std::cos(static_cast<double>(a));
  c.dy = std::sin(static_cast<double>(a));
  return c;
}

}  // namespace

TEST(Geometry, ClosestOnSegmentMatchesOracle) {
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-5.0f, 5.0f);
  for (int i = 0; i < 20000; ++i) {
    const double ax = u(rng), ay = u(rng), bx = u(rng), by = u(rng), px = u(rng), py = u(rng);
    const SegmentPoint q = closest_on_segment(ax, ay, bx, by, px, py);
    ASSERT_GE(q.u, 0.0);
    ASSERT_LE(q.u, 1.0);
    const LD d = oracle_dist(px, py, ax, ay, bx, by);
    ASSERT_NEAR(std::sqrt(segment_distance2(ax, ay, bx, by, px, py)), static_cast<double>(d),
                1e-12);
    ASSERT_NEAR(std::hypot(px - q.x, py - q.y), static_cast<double>(d), 1e-12);
  }
}

TEST(Geometry, ClosestOnSegmentEndsAreExactAndZeroLengthIsAPoint) {
  // Beyond the ends the endpoints themselves, bit for bit (shared vertices agree).
  const double ax = 0.1, ay = 0.7, bx = 3.3, by = -1.9;
  SegmentPoint q = closest_on_segment(ax, ay, bx, by, 10.0, -10.0);
  EXPECT_EQ(q.u, 1.0);
  EXPECT_EQ(q.x, bx);
  EXPECT_EQ(q.y, by);
  q = closest_on_segment(ax, ay, bx, by, -10.0, 10.0);
  EXPECT_EQ(q.u, 0.0);
  EXPECT_EQ(q.x, ax);
  EXPECT_EQ(q.y, ay);
  // A zero-length segment is its point (no 0 / 0).
  q = closest_on_segment(1.0, 2.0, 1.0, 2.0, 4.0, 6.0);
  EXPECT_EQ(q.u, 0.0);
  EXPECT_EQ(q.x, 1.0);
  EXPECT_EQ(q.y, 2.0);
  EXPECT_EQ(segment_distance2(1.0, 2.0, 1.0, 2.0, 4.0, 6.0), 25.0);
  EXPECT_EQ(segment_parameter(1.0, 2.0, 1.0, 2.0, 4.0, 6.0), 0.0);
}

TEST(Geometry, RaySegmentMatchesOracle) {
  std::mt19937 rng(2);
  int hits = 0;
  for (int i = 0; i < 20000; ++i) {
    const Case c = random_case(rng);
    const double t = ray_segment(c.ax, c.ay, c.bx, c.by, c.dx, c.dy);
    // Oracle: Cramer's rule for t d = a + u (b - a) in long double.
    const LD ex = LD(c.bx) - c.ax, ey = LD(c.by) - c.ay;
    const LD det = -LD(c.dx) * ey + LD(c.dy) * ex;  // det [d, -(b - a)]
    ASSERT_NE(det, 0) << "random case is collinear";
    const LD tt = (-LD(c.ax) * ey + LD(c.ay) * ex) / det;
    const LD uu = (LD(c.dx) * c.ay - LD(c.dy) * c.ax) / det;
    const LD slack = 1e-9L;
    if (tt >= slack && uu >= slack && uu <= 1 - slack) {
      ++hits;
      ASSERT_NEAR(t, static_cast<double>(tt), 1e-12 * (1.0 + static_cast<double>(tt))) << i;
    } else if (tt < -slack || uu < -slack || uu > 1 + slack) {
      ASSERT_EQ(t, kInf) << i;
    }
  }
  EXPECT_GT(hits, 2000);
}

TEST(Geometry, RaySegmentCollinearAndDegenerateContract) {
  // A segment on the ray's line: the first point at t >= 0.
  EXPECT_EQ(ray_segment(2.0, 0.0, 5.0, 0.0, 1.0, 0.0), 2.0);
  EXPECT_EQ(ray_segment(5.0, 0.0, 2.0, 0.0, 1.0, 0.0), 2.0);
  // Covering the origin: 0, whichever way round; behind: a miss.
  EXPECT_EQ(ray_segment(-1.0, 0.0, 3.0, 0.0, 1.0, 0.0), 0.0);
  EXPECT_EQ(ray_segment(3.0, 0.0, -1.0, 0.0, 1.0, 0.0), 0.0);
  EXPECT_EQ(ray_segment(-3.0, 0.0, -1.0, 0.0, 1.0, 0.0), kInf);
  // Parallel but off the line: a miss.
  EXPECT_EQ(ray_segment(1.0, 0.5, 3.0, 0.5, 1.0, 0.0), kInf);
  // A zero-length segment is a point: hit when on the ray, at its distance.
  EXPECT_EQ(ray_segment(0.0, 4.0, 0.0, 4.0, 0.0, 1.0), 4.0);
  EXPECT_EQ(ray_segment(0.0, -4.0, 0.0, -4.0, 0.0, 1.0), kInf);
  EXPECT_EQ(ray_segment(0.5, 4.0, 0.5, 4.0, 0.0, 1.0), kInf);
  // An endpoint on the ray (grazing a corner): hit, +0 not -0.
  EXPECT_EQ(ray_segment(3.0, 0.0, 3.0, 2.0, 1.0, 0.0), 3.0);
  const double z = ray_segment(0.0, 0.0, 0.0, 2.0, 1.0, 0.0);
  EXPECT_EQ(z, 0.0);
  EXPECT_FALSE(std::signbit(z));
}

TEST(Geometry, RayThroughASharedVertexNeverSlipsBetweenTwoSegments) {
  // A fan of segment pairs sharing a vertex v; a ray aimed exactly at v (float coordinates)
  // hits at least one of the two, at v's distance.
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-4.0f, 4.0f);
  for (int i = 0; i < 5000; ++i) {
    const float vx = u(rng), vy = u(rng);
    const double len = std::hypot(double(vx), double(vy));
    if (len < 0.5) continue;
    const double dx = static_cast<float>(vx / len), dy = static_cast<float>(vy / len);
    const float px = u(rng), py = u(rng), qx = u(rng), qy = u(rng);
    // The two neighbours must lie on opposite sides of the ray's line, else the vertex is a
    // tip both segments touch only there (still a hit by the rule below).
    const double t =
        std::min(ray_segment(px, py, vx, vy, dx, dy), ray_segment(vx, vy, qx, qy, dx, dy));
    const double sp = line_side(px, py, dx, dy), sq = line_side(qx, qy, dx, dy);
    if ((sp > 0 && sq < 0) || (sp < 0 && sq > 0)) ASSERT_LT(t, kInf) << i;
  }
}

TEST(Geometry, RayCircleMatchesOracleAndTangentHits) {
  std::mt19937 rng(4);
  std::uniform_real_distribution<float> u(-5.0f, 5.0f), ur(0.0f, 2.0f);
  for (int i = 0; i < 20000; ++i) {
    const Case c = random_case(rng);
    const double r = ur(rng);
    const double t = ray_circle(c.ax, c.ay, r, c.dx, c.dy);
    const LD b = LD(c.ax) * c.dx + LD(c.ay) * c.dy;
    const LD cc = LD(c.ax) * c.ax + LD(c.ay) * c.ay - LD(r) * r;
    if (cc <= 0) {
      ASSERT_EQ(t, 0.0);
      ASSERT_TRUE(inside_disc(c.ax, c.ay, r));
      continue;
    }
    ASSERT_FALSE(inside_disc(c.ax, c.ay, r));
    const LD disc = b * b - cc;
    if (b > 1e-9L && disc > 1e-9L)
      ASSERT_NEAR(t, static_cast<double>(b - std::sqrt(disc)), 1e-10) << i;
    if (b < -1e-9L || disc < -1e-9L) ASSERT_EQ(t, kInf) << i;
  }
  // Tangent: a ray along y = 1 touches the unit disc at (3, 0) + (0, 1).
  EXPECT_EQ(ray_circle(3.0, -1.0, 1.0, 1.0, 0.0), 3.0);
  // Zero radius: a point, hit when on the ray.
  EXPECT_EQ(ray_circle(2.0, 0.0, 0.0, 1.0, 0.0), 2.0);
}

TEST(Geometry, RayCapsuleMatchesTheSearchOracle) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> ur(0.05f, 1.5f);
  int hits = 0, inside = 0;
  for (int i = 0; i < 4000; ++i) {
    Case c = random_case(rng);
    if (std::hypot(c.bx - c.ax, c.by - c.ay) < 1e-3) continue;
    const double r = ur(rng);
    const double T = 30.0;
    const double t = ray_capsule(c.ax, c.ay, c.bx, c.by, r, c.dx, c.dy, kInf);
    const OracleHit o = oracle_capsule(c.ax, c.ay, c.bx, c.by, r, c.dx, c.dy, T);
    if (std::fabs(static_cast<double>(o.margin)) < 1e-6) continue;  // too close to grazing to judge
    if (o.margin > 0) {
      ASSERT_EQ(t, kInf) << i;
      continue;
    }
    ++hits;
    if (o.t == 0) ++inside;
    ASSERT_NEAR(t, static_cast<double>(o.t), 1e-9) << i;
    // Outside the capsule capsule_entry is the same solve.
    if (o.t > 0) ASSERT_EQ(capsule_entry(c.ax, c.ay, c.bx, c.by, r, c.dx, c.dy, kInf), t) << i;
    // tmax only drops capsules wholly beyond it: a hit at or before tmax is kept.
    ASSERT_EQ(ray_capsule(c.ax, c.ay, c.bx, c.by, r, c.dx, c.dy, t), t) << i;
  }
  EXPECT_GT(hits, 400);
  EXPECT_GT(inside, 20);
}

TEST(Geometry, CapsuleGrazingAlongASideTouchesAtTheEndDisc) {
  // Segment (2, 0)-(6, 0), r = 1: the ray along y = 1 runs along the upper side; it touches
  // the capsule where the side begins, x = 2 (the end disc's tangent point agrees).
  const double t = ray_capsule(2.0, -1.0, 6.0, -1.0, 1.0, 1.0, 0.0, kInf);
  EXPECT_NEAR(t, 2.0, 1e-12);
  // Starting on the side line over the segment: on the boundary, inside (closed): 0.
  EXPECT_EQ(ray_capsule(-1.0, -1.0, 3.0, -1.0, 1.0, 1.0, 0.0, kInf), 0.0);
  // Just outside the side line: parallel, a miss.
  EXPECT_EQ(ray_capsule(2.0, -1.0 - 1e-9, 6.0, -1.0 - 1e-9, 1.0, 1.0, 0.0, kInf), kInf);
}

TEST(Geometry, ThickRayAndSweptCircleMeetAWallAtTheSameDistance) {
  // The sensor (raycast with radius r) and the mover (sweep_circle of radius r) compose the
  // same capsule solve: where the ray reports a head-on hit at t, a circle moving further
  // than t along the ray stops at t (less the sweep's skin, 1e-3 r + 1e-6 |p|).
  std::mt19937 rng(6);
  std::uniform_real_distribution<float> u(-8.0f, 8.0f), ang(-3.14159f, 3.14159f), ur(0.1f, 0.8f);
  World w;
  std::vector<float> seg;
  for (int i = 0; i < 40; ++i) {
    const float ax = u(rng), ay = u(rng);
    seg.insert(seg.end(), {ax, ay, ax + u(rng) / 4, ay + u(rng) / 4});
  }
  w.add_segments(seg, kAllLayers);
  w.build_index();
  int compared = 0;
  for (int i = 0; i < 4000; ++i) {
    const float ox = u(rng), oy = u(rng), a = ang(rng), r = ur(rng);
    const float dir[2] = {std::cos(a), std::sin(a)}, org[2] = {ox, oy}, maxd = 6.0f;
    float dist, normal[2];
    bool hit;
    std::int32_t obstacle;
    raycast(w, org, dir, {&maxd, 1}, r, kAllLayers, RayHitsOut{&dist, &hit, normal, &obstacle});
    if (!hit || dist <= 0.0f) continue;
    const double ux = dir[0] / std::hypot(double(dir[0]), double(dir[1]));
    const double uy = dir[1] / std::hypot(double(dir[0]), double(dir[1]));
    if (normal[0] * ux + normal[1] * uy > -0.2) continue;  // grazing: the mover slides
    const Vec2 d{static_cast<float>(ux * (dist + 1.0)), static_cast<float>(uy * (dist + 1.0))};
    const Sweep s = sweep_circle(w, {ox, oy}, d, r, 1, kAllLayers);
    ASSERT_EQ(s.contacts, 1) << i;
    const double along = (s.position.x - ox) * ux + (s.position.y - oy) * uy;
    const double skin = 1e-3 * r + 1e-6 * std::max(std::fabs(ox), std::fabs(oy));
    ASSERT_NEAR(along, dist, skin + 1e-4) << i;
    ++compared;
  }
  EXPECT_GT(compared, 200);
}

TEST(Geometry, MovesIntoAsksEveryWallTheCircleTouches) {
  // A corner: walls x = 1 and y = 1. A circle of radius 1 at (0.2, 0.3) is within reach of
  // both; the nearer is y = 1. Every direction with a component into either wall goes in;
  // away from both, or along one while leaving the other, does not.
  World w;
  w.add_segments(std::vector<float>{1, -5, 1, 5, -5, 1, 5, 1}, kAllLayers);
  w.build_index();
  const Vec2 p{0.2f, 0.3f};
  EXPECT_TRUE(moves_into(w, p, {1, 0}, 1.0f, kAllLayers));   // into x = 1 (the farther)
  EXPECT_TRUE(moves_into(w, p, {0, 1}, 1.0f, kAllLayers));   // into y = 1
  EXPECT_TRUE(moves_into(w, p, {1, -1}, 1.0f, kAllLayers));  // into x = 1, away from y = 1
  EXPECT_FALSE(moves_into(w, p, {-1, 0}, 1.0f, kAllLayers));
  EXPECT_FALSE(moves_into(w, p, {0, -1}, 1.0f, kAllLayers));
  EXPECT_FALSE(moves_into(w, p, {-1, -1}, 1.0f, kAllLayers));
  // Out of reach of both: nothing to go into, whatever the direction.
  EXPECT_FALSE(moves_into(w, p, {1, 1}, 0.5f, kAllLayers));
  // Another layer's walls are not there.
  EXPECT_FALSE(moves_into(w, p, {1, 0}, 1.0f, 0u));
}

TEST(Geometry, MovesIntoMatchesABruteForceOfTheTouchedWalls) {
  // Oracle: some segment whose distance from p is below r (by more than a rounding) has its
  // closest point q ahead of the move, u·(q − p) > 0 (by more than a rounding). Cases near
  // either boundary are skipped.
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-4.0f, 4.0f), ang(-3.14159f, 3.14159f), ur(0.2f, 1.5f);
  World w;
  std::vector<float> seg;
  for (int i = 0; i < 30; ++i) {
    const float ax = u(rng), ay = u(rng);
    seg.insert(seg.end(), {ax, ay, ax + u(rng) / 2, ay + u(rng) / 2});
  }
  w.add_segments(seg, kAllLayers);
  w.build_index();
  int into = 0, not_into = 0;
  for (int i = 0; i < 4000; ++i) {
    const float px = u(rng), py = u(rng), a = ang(rng), r = ur(rng);
    const double ux = std::cos(double(a)), uy = std::sin(double(a));
    bool expect = false, unclear = false;
    for (std::size_t s = 0; s < seg.size(); s += 4) {
      const SegmentPoint q = closest_on_segment(seg[s] - px, seg[s + 1] - py, seg[s + 2] - px,
                                                seg[s + 3] - py, 0.0, 0.0);
      const double d = std::hypot(q.x, q.y);
      if (std::fabs(d - r) < 1e-4) unclear = true;
      if (d >= r) continue;
      const double ahead = d > 0.0 ? (q.x * ux + q.y * uy) / d : 0.0;
      if (std::fabs(ahead) < 1e-4) unclear = true;
      expect = expect || ahead > 0.0;
    }
    if (unclear) continue;
    const bool got =
        moves_into(w, {px, py}, {static_cast<float>(ux), static_cast<float>(uy)}, r, kAllLayers);
    ASSERT_EQ(got, expect) << i;
    (expect ? into : not_into) += 1;
  }
  EXPECT_GT(into, 200);
  EXPECT_GT(not_into, 200);
}

// segments_meet: hand-worked cases (a crossing, a touch at an end, a wall's end on the
// other segment, collinear overlap and gap, parallel apart), then random float32 cases
// against a long-double oracle of the closed intersection, skipping near-degenerate ones.
TEST(Geometry, SegmentsMeetCrossingsTouchesAndCollinearOverlaps) {
  EXPECT_TRUE(segments_meet(0, 0, 2, 2, 0, 2, 2, 0));     // an X
  EXPECT_TRUE(segments_meet(0, 0, 1, 0, 1, -1, 1, 1));    // an end on the other
  EXPECT_TRUE(segments_meet(0, 0, 1, 1, 1, 1, 3, 0));     // ends touching
  EXPECT_TRUE(segments_meet(0, 0, 2, 0, 1, 0, 3, 0));     // collinear, overlapping
  EXPECT_TRUE(segments_meet(0, 0, 1, 0, 1, 0, 3, 0));     // collinear, end to end
  EXPECT_FALSE(segments_meet(0, 0, 1, 0, 1.5, 0, 3, 0));  // collinear, apart
  EXPECT_FALSE(segments_meet(0, 0, 1, 0, 0, 1, 1, 1));    // parallel
  EXPECT_FALSE(segments_meet(0, 0, 1, 1, 2, 0, 3, -5));   // lines cross beyond the ends
  // A node on an axis-parallel wall (the projection read it 1e-17 away).
  const float y = -0.23205089569091797f;
  EXPECT_TRUE(segments_meet(-0.875, y - 0.125, -1.0, y, -1.0, 1.7320508f, -1.0, -1.7320508f));
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  int met = 0, apart = 0;
  for (int i = 0; i < 20000; ++i) {
    const float v[8] = {u(rng), u(rng), u(rng), u(rng), u(rng), u(rng), u(rng), u(rng)};
    auto turn = [&](int a, int b, int c) {
      return (LD(v[2 * b]) - v[2 * a]) * (LD(v[2 * c + 1]) - v[2 * a + 1]) -
             (LD(v[2 * b + 1]) - v[2 * a + 1]) * (LD(v[2 * c]) - v[2 * a]);
    };
    const LD o1 = turn(2, 3, 0), o2 = turn(2, 3, 1), o3 = turn(0, 1, 2), o4 = turn(0, 1, 3);
    if (std::fabs(o1) < 1e-9L || std::fabs(o2) < 1e-9L || std::fabs(o3) < 1e-9L ||
        std::fabs(o4) < 1e-9L)
      continue;
    const bool expect = o1 * o2 < 0 && o3 * o4 < 0;
    ASSERT_EQ(segments_meet(v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]), expect) << i;
    (expect ? met : apart) += 1;
  }
  EXPECT_GT(met, 2000);
  EXPECT_GT(apart, 2000);
}

// path_meets_wall: a path from a point on the wall leaves it to either side; one that
// ends on it, runs along it, or starts on it and crosses another wall does not.
TEST(Geometry, APathLeavingAWallItStartsOnDoesNotMeetIt) {
  EXPECT_FALSE(path_meets_wall(1, 0, 1, 1, 0, 0, 2, 0));   // up from the wall
  EXPECT_FALSE(path_meets_wall(1, 0, 1, -1, 0, 0, 2, 0));  // down from it
  EXPECT_FALSE(path_meets_wall(0, 0, -1, 1, 0, 0, 2, 0));  // from its end
  EXPECT_TRUE(path_meets_wall(1, 1, 1, 0, 0, 0, 2, 0));    // ending on it
  EXPECT_TRUE(path_meets_wall(1, 1, 1, -1, 0, 0, 2, 0));   // across it
  EXPECT_TRUE(path_meets_wall(1, 0, 3, 0, 0, 0, 2, 0));    // along it
  EXPECT_FALSE(path_meets_wall(3, 0, 3, 1, 0, 0, 2, 0));   // on its line, beyond its end
}
