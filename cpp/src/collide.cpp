// SPDX-License-Identifier: MIT
// Swept-circle collision against the world (collide and slide) and agent push-apart.
#include "contextsteer/collide.hpp"

#include "contextsteer/geometry.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace contextsteer {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// A displacement whose component into a wall is below this fraction of its length is
// treated as running along the wall (not blocked): rounding must not stop a slide.
constexpr double kAlong = 1e-9;
// Hit::id of no obstacle; otherwise obstacle_id's value.
constexpr std::int64_t kNoObstacle = std::numeric_limits<std::int64_t>::min();
// One id for a grid entry's obstacle: a segment's row, or a circle's row below -1.
std::int64_t obstacle_id(bool circle, std::int32_t row) {
  return circle ? -2 - static_cast<std::int64_t>(row) : static_cast<std::int64_t>(row);
}

struct Hit {
  double t = kInf;  // distance along the unit direction
  double nx = 0.0, ny = 0.0;
  std::int64_t id = kNoObstacle;  // the obstacle met (obstacle_id)
  bool inside = false;            // the move started inside or on some obstacle
  bool on = false;                // the centre started on a segment's line (a circle's centre)
};

// Offers a contact at distance t with the unit normal n (from the wall to the circle).
void offer(Hit& h, double t, double nx, double ny) {
  if (t < h.t) {
    h.t = t;
    h.nx = nx;
    h.ny = ny;
    h.id = kNoObstacle;
  }
}

// Whether a skin (1e-3 r + 1e-6 of the coordinates) ahead of a centre at p along the unit
// u lies inside a solid polygon or circle in `layers`: a centre exactly on an obstacle's
// line moves into it only then (block_if_moving_in, moves_into).
bool solid_ahead(const World& world, double px, double py, double ux, double uy, double r,
                 std::uint32_t layers) {
  const double ahead = 1e-3 * r + 1e-6 * std::max(std::fabs(px), std::fabs(py));
  const Vec2 q{static_cast<float>(px + ux * ahead), static_cast<float>(py + uy * ahead)};
  return world.polygon_at(q, layers) >= 0 || world.circle_at(q, layers) >= 0;
}

// Already within reach of an obstacle whose closest point is q (at distance d0 from the
// origin): blocked at 0 only when moving into it (normal from q towards the origin), so an
// agent can always leave or slide. With the origin on the obstacle itself (d0 = 0: a
// centre on a wall's line) every way leaves that segment's capsule: `on` is set, and
// sweep_circle blocks the move (normal −u) only when it heads into a solid (a polygon's
// edge, a circle's centre). Blocked always, the skin stepped a body on a plain wall
// against its motion, to the wall's other side: an agent spawned on a room's wall ended
// outside the room.
void block_if_moving_in(double qx, double qy, double d0, double ux, double uy, Hit& h) {
  h.inside = true;
  if (!(d0 > 0.0)) {
    h.on = true;
    return;
  }
  const double nx = -qx / d0, ny = -qy / d0;
  if (ux * nx + uy * ny < -kAlong) offer(h, 0.0, nx, ny);
}

// Circle of radius r moving from the origin along unit u for length L against the
// segment a..b. Starting inside the capsule of radius r (inside_capsule, the sensor's own
// test; the user put it there) or on its boundary (within `on`, a rounding tolerance):
// blocked at 0 only when moving into the wall. Otherwise the time of impact is the ray's
// entry into the capsule (capsule_entry: the same solve as a thick ray of radius r, so the
// sensor and the mover meet a wall at the same distance). The tolerance matters where a
// slide's last contact left the body exactly on a capsule: there inside_capsule may say
// outside while the entry solve takes the origin for inside the near side (a rounding
// apart) and finds only the far side, so a move into the wall went through it (crowd fuzz
// run, tests/test_collide_corners.py).
void segment_toi(double ax, double ay, double bx, double by, double r, double ux, double uy,
                 double L, double on, Hit& h) {
  const SegmentPoint q = closest_on_segment(ax, ay, bx, by, 0.0, 0.0);
  const double d0 = std::sqrt(q.x * q.x + q.y * q.y);
  if (inside_capsule(q, r) || d0 <= r + on) {
    block_if_moving_in(q.x, q.y, d0, ux, uy, h);
    return;
  }
  // Quick reject: the capsule is out of reach of the whole move.
  if (d0 > L + r) return;
  const double t = capsule_entry(ax, ay, bx, by, r, ux, uy, L);
  if (!(t <= L) || t >= h.t) return;
  const double ex = bx - ax, ey = by - ay;
  // Contact normal. Touching the side of the capsule: the segment's normal on the
  // origin's side (exact, whatever r); touching an end disc: from the end point to the
  // circle's centre (−u when r is too small for that to be more than rounding noise).
  const double cx = t * ux, cy = t * uy;
  const double w = segment_parameter(ax, ay, bx, by, cx, cy);
  double nx = -ux, ny = -uy;
  if (w > 0.0 && w < 1.0) {
    const double el = std::sqrt(ex * ex + ey * ey);
    nx = ey / el;
    ny = -ex / el;
    const double side = -(ax * nx + ay * ny);  // (origin − a)·n
    if (side < 0.0) {
      nx = -nx;
      ny = -ny;
    } else if (side == 0.0) {
      nx = -ux;
      ny = -uy;
    }
  } else {
    const double px = w <= 0.0 ? ax : bx, py = w <= 0.0 ? ay : by;
    const double vx = cx - px, vy = cy - py;
    const double n = std::sqrt(vx * vx + vy * vy);
    if (n > 0.5 * r && n > 1e-9 * (std::fabs(cx) + std::fabs(cy) + 1.0)) {
      nx = vx / n;
      ny = vy / n;
    }
  }
  // A grazing contact whose normal does not oppose the motion does not block it.
  if (ux * nx + uy * ny >= -kAlong) return;
  offer(h, t, nx, ny);
}

// The same against a circle obstacle of radius rc centred at q (relative to the origin).
void circle_toi(double qx, double qy, double rc, double r, double ux, double uy, double L,
                double on, Hit& h) {
  const double R = rc + r;
  const double d0 = std::sqrt(qx * qx + qy * qy);
  if (inside_disc(qx, qy, R) || d0 <= R + on) {  // ray_circle's inside test, or on the rim
    block_if_moving_in(qx, qy, d0, ux, uy, h);
    return;
  }
  if (d0 > L + R) return;
  const double t = ray_circle(qx, qy, R, ux, uy);
  if (!(t <= L) || t >= h.t) return;
  double nx = -ux, ny = -uy;
  if (R > 1e-9 * (std::fabs(qx) + std::fabs(qy) + 1.0)) {
    nx = (t * ux - qx) / R;
    ny = (t * uy - qy) / R;
  }
  if (ux * nx + uy * ny >= -kAlong) return;
  offer(h, t, nx, ny);
}

// Visits the grid entries of the non-empty cells in columns [x0, x1] × rows [y0, y1] on
// `layers`: seg(e) for a segment's entry, circ(e) for a circle's. Either returns true to
// stop the visit (then this returns true). An obstacle listed in several cells is visited
// once per cell.
template <class Seg, class Circ>
bool visit_cells(const WorldGrid& g, int x0, int x1, int y0, int y1, std::uint32_t layers,
                 Seg&& seg, Circ&& circ) {
  for (int cy = y0; cy <= y1; ++cy) {
    for (int cx = x0; cx <= x1; ++cx) {
      const std::size_t cell = static_cast<std::size_t>(cy) * static_cast<std::size_t>(g.nx) +
                               static_cast<std::size_t>(cx);
      if (g.clearance[cell] != 0) continue;  // an empty cell
      for (auto e = static_cast<std::size_t>(g.seg_start[cell]);
           e < static_cast<std::size_t>(g.seg_start[cell + 1]); ++e)
        if ((g.seg_layers[e] & layers) && seg(e)) return true;
      for (auto e = static_cast<std::size_t>(g.circ_start[cell]);
           e < static_cast<std::size_t>(g.circ_start[cell + 1]); ++e)
        if ((g.circ_layers[e] & layers) && circ(e)) return true;
    }
  }
  return false;
}

// First contact of the circle (radius r, at p) moving by (dx, dy) of length L > 0.
// `skip`: an obstacle left out (obstacle_id), or kNoObstacle.
Hit first_contact(const WorldGrid& g, double px, double py, double dx, double dy, double L,
                  double r, std::uint32_t layers, std::int64_t skip = kNoObstacle) {
  Hit h;
  const double ux = dx / L, uy = dy / L;
  const double reach = r + 1e-6 * (1.0 + std::max(std::fabs(px), std::fabs(py)));
  // "On" an obstacle's boundary: within rounding of it (far below the skin).
  const double on = 1e-9 * (1.0 + std::max(std::fabs(px), std::fabs(py)));
  // Empty-space early out: every cell within clearance − 1 of the start cell is empty,
  // so a move that stays (with its reach) inside that square meets nothing.
  const double fx = (px - g.x0) * g.inv_cell, fy = (py - g.y0) * g.inv_cell;
  if (fx >= 0.0 && fy >= 0.0 && fx < g.nx && fy < g.ny) {
    const int c = g.clearance[static_cast<std::size_t>(fy) * static_cast<std::size_t>(g.nx) +
                              static_cast<std::size_t>(fx)];
    if (c >= 2 &&
        std::max(std::fabs(dx), std::fabs(dy)) + reach < (c - 1) * static_cast<double>(g.cell))
      return h;
  }
  const int x0 = g.col(static_cast<float>(std::min(px, px + dx) - reach));
  const int x1 = g.col(static_cast<float>(std::max(px, px + dx) + reach));
  const int y0 = g.row(static_cast<float>(std::min(py, py + dy) - reach));
  const int y1 = g.row(static_cast<float>(std::max(py, py + dy) + reach));
  // A wall listed in several cells is tested more than once: harmless for a minimum.
  visit_cells(
      g, x0, x1, y0, y1, layers,
      [&](std::size_t e) {
        const std::int64_t id = obstacle_id(false, g.seg_index[e]);
        if (id == skip) return false;
        const double before = h.t;
        segment_toi(g.ax[e] - px, g.ay[e] - py, g.bx[e] - px, g.by[e] - py, r, ux, uy, L, on, h);
        if (h.t < before) h.id = id;
        return false;
      },
      [&](std::size_t e) {
        const std::int64_t id = obstacle_id(true, g.circ_index[e]);
        if (id == skip) return false;
        const double before = h.t;
        circle_toi(g.cx[e] - px, g.cy[e] - py, g.cr[e], r, ux, uy, L, on, h);
        if (h.t < before) h.id = id;
        return false;
      });
  return h;
}

// Whether the circle (radius r) ends at (fx, fy) deeper inside some obstacle than it was
// at the start (sx, sy), beyond rounding (`tol`): a depth r − distance > max(0, the start's
// depth) + tol for one segment's capsule or circle. A sweep starting inside one obstacle
// may leave it or slide along it (block_if_moving_in), and each contact steps a skin
// away; but in a wedge narrower than the body, pressed in again and again (push-apart's
// passes), the time-of-impact advances towards one wall carried a component into the
// other, and an agent sank about 5 µm a step without limit (a motion fuzz run).
bool sinks_deeper(const WorldGrid& g, double sx, double sy, double fx, double fy, double r,
                  std::uint32_t layers, double tol) {
  const double reach = r + tol;
  const int x0 = g.col(static_cast<float>(fx - reach)), x1 = g.col(static_cast<float>(fx + reach));
  const int y0 = g.row(static_cast<float>(fy - reach)), y1 = g.row(static_cast<float>(fy + reach));
  auto deeper = [&](double end2, double start2, double R) {
    if (!(end2 < R * R)) return false;  // not inside at the end
    const double end_depth = R - std::sqrt(end2);
    const double start_depth = std::max(0.0, R - std::sqrt(start2));
    return end_depth > start_depth + tol;
  };
  return visit_cells(
      g, x0, x1, y0, y1, layers,
      [&](std::size_t e) {
        return deeper(segment_distance2(g.ax[e], g.ay[e], g.bx[e], g.by[e], fx, fy),
                      segment_distance2(g.ax[e], g.ay[e], g.bx[e], g.by[e], sx, sy), r);
      },
      [&](std::size_t e) {
        const double ex = fx - g.cx[e], ey = fy - g.cy[e];
        const double qx = sx - g.cx[e], qy = sy - g.cy[e];
        return deeper(ex * ex + ey * ey, qx * qx + qy * qy, r + g.cr[e]);
      });
}

}  // namespace

bool moves_into(const World& world, Vec2 p, Vec2 u, float r, std::uint32_t layers, double along) {
  const WorldGrid& g = world.grid();
  const double len = std::sqrt(double(u.x) * u.x + double(u.y) * u.y);
  if (g.empty() || !(len > 0.0)) return false;
  const double ux = u.x / len, uy = u.y / len;
  const double px = p.x, py = p.y, rr = std::max(0.0, double(r));
  // The inside tests of first_contact (segment_toi, circle_toi): inside or on, within
  // rounding; then block_if_moving_in's test with the caller's tolerance.
  const double on = 1e-9 * (1.0 + std::max(std::fabs(px), std::fabs(py)));
  const double reach = rr + 1e-6 * (1.0 + std::max(std::fabs(px), std::fabs(py)));
  // The centre on an obstacle's line (d0 = 0): into it only when a skin ahead lies inside a
  // solid, as sweep_circle decides (every way was "in": WallDanger then marked every slot
  // and an agent centred on a room's wall stood for good). Asked once, when first needed.
  int ahead = -1;
  auto into = [&](double qx, double qy, double d0) {
    if (!(d0 > 0.0)) {
      if (ahead < 0) ahead = solid_ahead(world, px, py, ux, uy, rr, layers) ? 1 : 0;
      return ahead == 1;
    }
    return -(ux * qx + uy * qy) / d0 < -along;
  };
  return visit_cells(
      g, g.col(static_cast<float>(px - reach)), g.col(static_cast<float>(px + reach)),
      g.row(static_cast<float>(py - reach)), g.row(static_cast<float>(py + reach)), layers,
      [&](std::size_t e) {
        const SegmentPoint q =
            closest_on_segment(g.ax[e] - px, g.ay[e] - py, g.bx[e] - px, g.by[e] - py, 0.0, 0.0);
        const double d0 = std::sqrt(q.x * q.x + q.y * q.y);
        return (inside_capsule(q, rr) || d0 <= rr + on) && into(q.x, q.y, d0);
      },
      [&](std::size_t e) {
        const double qx = g.cx[e] - px, qy = g.cy[e] - py, R = g.cr[e] + rr;
        const double d0 = std::sqrt(qx * qx + qy * qy);
        return (inside_disc(qx, qy, R) || d0 <= R + on) && into(qx, qy, d0);
      });
}

Sweep sweep_circle(const World& world, Vec2 p, Vec2 d, float radius, int iterations,
                   std::uint32_t layers) {
  Sweep out;
  const WorldGrid& g = world.grid();
  double px = p.x, py = p.y, dx = d.x, dy = d.y;
  // A circle of radius 0 (or below the coordinates' float32 spacing) is swept as one of
  // two float32 spacings (ulps) of its larger coordinate, at least of 1. A point sliding
  // along one wall into the shared vertex of a sharp corner could pass between the two
  // walls there (the time-of-impact tests of zero-width capsules both missed by a
  // rounding), and the depth check below, r − distance, is never positive for r = 0 to
  // catch it: 41 of 117 sweeps from just inside a 37° corner ended outside it (a
  // game-loop fuzz run). The body then stops that far short of a wall instead of on it.
  // (A first version took 1e-6 × (1 + the coordinate), 16 spacings: at x = 1e6 every body
  // under 1 m was swept as 1 m and thrown back from walls.)
  const double r =
      std::max(double(radius), 0x1p-22 * std::max(1.0, std::max(std::fabs(px), std::fabs(py))));
  iterations = std::clamp(iterations, 1, kMaxSlideIterations);
  bool inside = false;  // some sweep started inside or on an obstacle
  // Where each contact left the circle (before sliding on), float32 as stored: the
  // fallbacks of the depth check below.
  Vec2 stops[kMaxSlideIterations];
  if (!g.empty()) {
    for (int it = 0; it < iterations; ++it) {
      const double L = std::sqrt(dx * dx + dy * dy);
      if (!(L > 0.0)) {
        dx = dy = 0.0;
        break;
      }
      Hit h = first_contact(g, px, py, dx, dy, L, r, layers);
      inside = inside || h.inside;
      if (h.on && h.t > 0.0) {
        // The centre on an obstacle's line (block_if_moving_in): blocked as before (normal
        // −u) when a skin ahead lies inside a solid polygon or circle.
        if (solid_ahead(world, px, py, dx / L, dy / L, r, layers)) offer(h, 0.0, -dx / L, -dy / L);
      }
      if (h.t == kInf) break;
      // Stop at the contact, a skin away from the wall along its normal. The skin is swept
      // too, against every obstacle but the one touched, and stops at any: in an acute
      // corner (two walls, a wall and a circle) the normal of one points into the other,
      // and an unswept skin pushed the body a little deeper into it every step (a crowd
      // fuzz run found up to 36 mm with one slide iteration; tests/test_collide_corners.py).
      double skin = 1e-3 * r + 1e-6 * std::max(std::fabs(px), std::fabs(py));
      const double s = h.t / L;
      if (skin > 0.0) {
        const Hit back = first_contact(g, px + dx * s, py + dy * s, h.nx * skin, h.ny * skin, skin,
                                       r, layers, h.id);
        if (back.t < skin) skin = back.t;
      }
      px += dx * s + h.nx * skin;
      py += dy * s + h.ny * skin;
      stops[out.contacts] = {static_cast<float>(px), static_cast<float>(py)};
      out.normals[out.contacts++] = {static_cast<float>(h.nx), static_cast<float>(h.ny)};
      // Slide: the rest of the displacement without its component into the wall.
      dx *= 1.0 - s;
      dy *= 1.0 - s;
      const double into = dx * h.nx + dy * h.ny;
      if (into < 0.0) {
        dx -= into * h.nx;
        dy -= into * h.ny;
      }
      if (it + 1 == iterations) dx = dy = 0.0;  // out of iterations: stay at the contact
    }
  }
  out.position = {static_cast<float>(px + dx), static_cast<float>(py + dy)};
  // Never deeper into an obstacle than at the start: a move that sinks in (a body wedged
  // between obstacles closer than its diameter, where the skin is clipped to nothing) is
  // not taken. Compared on the stored float32 positions, so that the rounding of each
  // pass cannot creep inwards (a push-apart's 64 passes a step, an ulp or so each). Far
  // from the origin the float32 rounding of a slide's end in an acute corner alone can
  // sink it by an ulp; dropping the whole move then (as a first version did) left a circle
  // at x = 1024 standing at its start where at x = 0 it slid 2.8 m into the corner. So
  // the move first tries the float32 neighbours of its end (the nearest that does not
  // sink), then its contact stops from the last, and only then stays at p.
  if (out.contacts > 0 || inside) {
    const double tol = 1e-12 * (1.0 + std::max(std::fabs(px), std::fabs(py)));
    auto sinks = [&](Vec2 q) { return sinks_deeper(g, p.x, p.y, q.x, q.y, r, layers, tol); };
    if (sinks(out.position)) {
      const double ex = px + dx, ey = py + dy;
      const float inf = std::numeric_limits<float>::infinity();
      Vec2 keep = p;
      double best = std::numeric_limits<double>::infinity();
      // Only where a float32 step is small against the body (up to 1/4 of its radius): far
      // out a neighbour can be across a wall thinner than the spacing.
      auto ulp = [&](float v) { return std::nextafter(std::fabs(v), inf) - std::fabs(v); };
      const bool fine = std::max(ulp(out.position.x), ulp(out.position.y)) <= 0.25f * r;
      for (int sx = -1; sx <= 1 && fine; ++sx) {
        for (int sy = -1; sy <= 1; ++sy) {
          if (sx == 0 && sy == 0) continue;
          const Vec2 q{sx == 0 ? out.position.x : std::nextafter(out.position.x, sx * inf),
                       sy == 0 ? out.position.y : std::nextafter(out.position.y, sy * inf)};
          const double e2 = (q.x - ex) * (q.x - ex) + (q.y - ey) * (q.y - ey);
          if (e2 < best && !sinks(q)) {
            best = e2;
            keep = q;
          }
        }
      }
      for (int c = out.contacts - 1; c >= 0 && best == std::numeric_limits<double>::infinity();
           --c) {
        if (!sinks(stops[c])) {
          keep = stops[c];
          best = 0.0;
        }
      }
      out.position = keep;
    }
  }
  return out;
}

void collide_rows(const World& world, const float* start, float* target, float* velocity,
                  const float* radius, const std::uint8_t* alive, int iterations,
                  std::uint32_t layers, std::int32_t* contacts, std::size_t begin, std::size_t end,
                  float* heading, bool stop, const float* max_speed) {
  for (std::size_t i = begin; i < end; ++i) {
    if (!alive[i]) continue;
    const Vec2 p = {start[2 * i], start[2 * i + 1]};
    const Vec2 q = {target[2 * i], target[2 * i + 1]};
    // One iteration: after its only contact the sweep stays there (move_and_collide).
    const Sweep s = sweep_circle(world, p, q - p, radius[i], stop ? 1 : iterations, layers);
    target[2 * i] = s.position.x;
    target[2 * i + 1] = s.position.y;
    if (s.contacts == 0) continue;
    count_up(contacts[i]);
    if (stop) continue;
    Vec2 v = {velocity[2 * i], velocity[2 * i + 1]};
    for (int c = 0; c < s.contacts; ++c) {
      const float into = dot(v, s.normals[c]);
      if (into < 0.0f) v = v - s.normals[c] * into;
    }
    velocity[2 * i] = v.x;
    velocity[2 * i + 1] = v.y;
    if (heading && has_direction(v, max_speed ? max_speed[i] : 1.0f))
      heading[i] = std::atan2(v.y, v.x);
  }
}

namespace {
constexpr double kGoldenAngle = 2.399963229728653;  // π·(3 − √5)
}  // namespace

std::int32_t push_apart_row(const NeighborGrid& grid, const float* positions, const float* radius,
                            const std::uint8_t* kinematic, float max_radius, bool push, float relax,
                            const World* world, int iterations, std::uint32_t layers, std::size_t i,
                            float* out) {
  const Vec2 p = {positions[2 * i], positions[2 * i + 1]};
  out[2 * i] = p.x;
  out[2 * i + 1] = p.y;
  // Accumulated in double in the grid's (deterministic) visiting order.
  double cx = 0.0, cy = 0.0, deepest = 0.0;
  std::int32_t count = 0;
  if (kinematic && kinematic[i]) push = false;  // never moved; its partners take it all
  for_each_overlap(grid, positions, radius, max_radius, i,
                   [&](std::size_t j, double ex, double ey, double d, double reach) {
                     ++count;
                     if (!push) return;
                     // Separate to a hair beyond contact (1e-3 of the radii) so that float32
                     // rounding of the result does not leave the pair touching.
                     const double share = kinematic && kinematic[j] ? 1.0 : 0.5;
                     const double depth = share * (reach * 1.001 - d) * relax;
                     deepest = std::max(deepest, depth);
                     if (d > 0.0) {
                       cx += ex / d * depth;
                       cy += ey / d * depth;
                     } else {
                       // Coincident: apart along the difference of the two agents' own
                       // directions u(k) = (cos kφ, sin kφ), φ the golden angle, so that
                       // a pile on one point spreads into a disc (along ±x only, it became
                       // a line, and stayed stacked where a corridor blocked x). Both rows
                       // compute the same difference, negated: the pair moves apart.
                       const double ai = kGoldenAngle * static_cast<double>(i),
                                    aj = kGoldenAngle * static_cast<double>(j);
                       const double ux = std::cos(ai) - std::cos(aj),
                                    uy = std::sin(ai) - std::sin(aj);
                       const double un = std::hypot(ux, uy);
                       cx += ux / un * depth;
                       cy += uy / un * depth;
                     }
                   });
  if (!push || (cx == 0.0 && cy == 0.0)) return count;
  // The pushes add up; in a pile (many bodies on one point) they would fling the agent far
  // in one pass (8,000 bodies on a point: 2.4 km). A pass moves it at most its diameter or
  // its deepest single push, whichever is larger, times the square root of how many it
  // overlaps (about the radius of the disc that many bodies pack into): pairs and most
  // clumps are unchanged.
  const double cap = std::max(2.0 * static_cast<double>(radius[i]), deepest) *
                     std::sqrt(static_cast<double>(count)),
               norm = std::hypot(cx, cy);
  if (norm > cap) {
    cx *= cap / norm;
    cy *= cap / norm;
  }
  const Vec2 corr = {static_cast<float>(cx), static_cast<float>(cy)};
  const Vec2 q =
      world ? sweep_circle(*world, p, corr, radius[i], iterations, layers).position : p + corr;
  out[2 * i] = q.x;
  out[2 * i + 1] = q.y;
  return count;
}

void push_apart_rows(const NeighborGrid& grid, const float* positions, const float* radius,
                     const std::uint8_t* alive, const std::uint8_t* kinematic, float max_radius,
                     bool push, float relax, const World* world, int iterations,
                     std::uint32_t layers, std::int32_t* overlaps, float* out, std::size_t begin,
                     std::size_t end, std::uint8_t* touched) {
  for (std::size_t i = begin; i < end; ++i) {
    if (!alive[i]) {
      out[2 * i] = positions[2 * i];
      out[2 * i + 1] = positions[2 * i + 1];
      if (touched) touched[i] = 0;
      continue;
    }
    const std::int32_t count = push_apart_row(grid, positions, radius, kinematic, max_radius, push,
                                              relax, world, iterations, layers, i, out);
    count_up(overlaps[i], count);
    if (touched) touched[i] = count > 0 ? 1 : 0;
  }
}

}  // namespace contextsteer
