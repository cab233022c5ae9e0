// SPDX-License-Identifier: MIT
// Navigation fields: blocked mask, fast marching, descent, bilinear queries.
#include "contextsteer/nav_field.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "contextsteer/geometry.hpp"
#include "contextsteer/slot_set.hpp"
#include "parallel.hpp"
#include "thread_scratch.hpp"

namespace contextsteer {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
enum : std::uint8_t { kFar = 0, kTrial = 1, kKnown = 2, kBlocked = 3, kSeed = 4 };

/// Crossing-number test of p against ring [s, e) of `pts` (boundary counts as either).
bool in_ring(double px, double py, const float* pts, std::int32_t s, std::int32_t e) {
  bool in = false;
  for (std::int32_t i = s, j = e - 1; i < e; j = i++) {
    const double xi = pts[2 * i], yi = pts[2 * i + 1], xj = pts[2 * j], yj = pts[2 * j + 1];
    if ((yi > py) != (yj > py) && px < xi + (py - yi) * (xj - xi) / (yj - yi)) in = !in;
  }
  return in;
}

/// The eight grid neighbours (di, dj) of a node, in the order of NavField's open-edge bits.
constexpr int kNeighbours[8][2] = {{-1, -1}, {0, -1}, {1, -1}, {-1, 0},
                                   {1, 0},   {-1, 1}, {0, 1},  {1, 1}};

/// The bit of the edge from a node to its neighbour (di, dj) (kNeighbours' order).
constexpr std::uint8_t neighbour_bit(int di, int dj) {
  const int k = (dj + 1) * 3 + (di + 1);  // 0..8, 4 is the node itself
  return static_cast<std::uint8_t>(1u << (k > 4 ? k - 1 : k));
}

/// A count that may not fit an integer, e.g. "4.2e+17" (a cast would overflow).
std::string approximate(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", x);
  return buf;
}

/// Nodes [i0, i1] × [j0, j1] of the grid covering the box [x0, x1] × [y0, y1], clamped;
/// false when the box misses the grid.
bool node_box(const NavGrid& g, double x0, double y0, double x1, double y1, int& i0, int& i1,
              int& j0, int& j1) {
  const double inv = 1.0 / g.cell;
  const double fi0 = std::ceil((x0 - g.x0) * inv), fi1 = std::floor((x1 - g.x0) * inv);
  const double fj0 = std::ceil((y0 - g.y0) * inv), fj1 = std::floor((y1 - g.y0) * inv);
  if (fi1 < 0.0 || fj1 < 0.0 || fi0 > g.nx - 1 || fj0 > g.ny - 1) return false;
  i0 = static_cast<int>(std::max(fi0, 0.0));
  j0 = static_cast<int>(std::max(fj0, 0.0));
  i1 = static_cast<int>(std::min(fi1, static_cast<double>(g.nx - 1)));
  j1 = static_cast<int>(std::min(fj1, static_cast<double>(g.ny - 1)));
  return i0 <= i1 && j0 <= j1;
}

}  // namespace

/// The build's `stop` callback, asked about every 20 ms of work wherever the build spends
/// it. Counting one kind of work was not enough: the march's 2^20 accepted nodes never
/// came in a build of 100,000 walls that blocked most nodes (2.2 s without an ask, most
/// of it blocking the nodes round the walls). The bindings' callback takes the GIL,
/// which another Python thread may hold for its switch interval (5 ms), so it is asked
/// by the clock, not at every unit of work.
class NavField::StopPoll {
 public:
  explicit StopPoll(const std::function<bool()>& stop) : stop_(stop) {}
  /// After `work` units (each about a distance test or a heap operation): reads the clock
  /// every kUnitsPerClock units and asks `stop` at the first read, then once 20 ms have
  /// passed since it last asked; throws NavInterrupted when it says so.
  void operator()(std::size_t work = 1) {
    if (!stop_) return;
    credit_ += work;
    if (credit_ < kUnitsPerClock) return;
    credit_ = 0;
    if (Clock::now() < next_) return;
    if (stop_()) throw NavInterrupted();
    next_ = Clock::now() + kEvery;  // after the ask: a wait for the GIL is not work
  }

 private:
  using Clock = std::chrono::steady_clock;
  // A clock read (tens of ns) every few tens of µs of work.
  static constexpr std::size_t kUnitsPerClock = 4096;
  static constexpr std::chrono::milliseconds kEvery{20};
  const std::function<bool()>& stop_;
  std::size_t credit_ = 0;
  Clock::time_point next_{};  // the first read asks
};

void NavField::block(const World& world, std::uint32_t layers, StopPoll& poll) {
  const NavGrid& g = grid_;
  blocked_.assign(g.nodes(), 0);
  const auto obstacle_layers = world.obstacle_layers();
  const double rb = block_radius_, rb2 = rb * rb;
  auto x_of = [&](int i) { return static_cast<double>(g.x0) + i * static_cast<double>(g.cell); };
  auto y_of = [&](int j) { return static_cast<double>(g.y0) + j * static_cast<double>(g.cell); };
  // Walls: nodes within rb of a segment (its capsule).
  const auto walls = world.walls();
  const auto wall_obstacle = world.wall_obstacle();
  for (std::size_t s = 0; s < wall_obstacle.size(); ++s) {
    if (!(obstacle_layers[static_cast<std::size_t>(wall_obstacle[s])] & layers)) continue;
    const double ax = walls[4 * s], ay = walls[4 * s + 1], bx = walls[4 * s + 2],
                 by = walls[4 * s + 3];
    int i0, i1, j0, j1;
    if (!node_box(g, std::min(ax, bx) - rb, std::min(ay, by) - rb, std::max(ax, bx) + rb,
                  std::max(ay, by) + rb, i0, i1, j0, j1))
      continue;
    // (A long diagonal wall's box holds many nodes: asked row by row.)
    for (int j = j0; j <= j1; ++j) {
      for (int i = i0; i <= i1; ++i)
        if (segment_distance2(ax, ay, bx, by, x_of(i), y_of(j)) <= rb2)
          blocked_[static_cast<std::size_t>(j) * g.nx + i] = 1;
      poll(static_cast<std::size_t>(i1 - i0 + 1));
    }
  }
  // Circles: nodes within rc + rb of the centre.
  const auto cc = world.circle_centers();
  const auto cr = world.circle_radii();
  const auto circle_obstacle = world.circle_obstacle();
  for (std::size_t c = 0; c < cr.size(); ++c) {
    if (!(obstacle_layers[static_cast<std::size_t>(circle_obstacle[c])] & layers)) continue;
    const double x = cc[2 * c], y = cc[2 * c + 1], r = cr[c] + rb;
    int i0, i1, j0, j1;
    if (!node_box(g, x - r, y - r, x + r, y + r, i0, i1, j0, j1)) continue;
    for (int j = j0; j <= j1; ++j) {
      for (int i = i0; i <= i1; ++i) {
        const double dx = x_of(i) - x, dy = y_of(j) - y;
        if (dx * dx + dy * dy <= r * r) blocked_[static_cast<std::size_t>(j) * g.nx + i] = 1;
      }
      poll(static_cast<std::size_t>(i1 - i0 + 1));
    }
  }
  // Polygon interiors: scanlines through the node rows, filled between crossing pairs.
  const auto pts = world.ring_points();
  const auto start = world.ring_start();
  const auto poly_obstacle = world.polygon_obstacle();
  std::vector<double> xs;
  // A polygon with holes is consecutive ring entries with one id: their crossings fill
  // together (even-odd), so a hole stays free.
  for (std::size_t k = 0, k1; k < poly_obstacle.size(); k = k1) {
    k1 = k + 1;
    while (k1 < poly_obstacle.size() && poly_obstacle[k1] == poly_obstacle[k]) ++k1;
    if (!(obstacle_layers[static_cast<std::size_t>(poly_obstacle[k])] & layers)) continue;
    double ylo = kInf, yhi = -kInf;
    for (std::int32_t v = start[k]; v < start[k1]; ++v) {
      ylo = std::min<double>(ylo, pts[2 * v + 1]);
      yhi = std::max<double>(yhi, pts[2 * v + 1]);
    }
    int i0, i1, j0, j1;
    if (!node_box(g, g.x0, ylo, g.x0 + (g.nx - 1) * static_cast<double>(g.cell), yhi, i0, i1, j0,
                  j1))
      continue;
    for (int j = j0; j <= j1; ++j) {
      const double y = y_of(j);
      xs.clear();
      for (std::size_t r = k; r < k1; ++r)
        for (std::int32_t v = start[r], w = start[r + 1] - 1; v < start[r + 1]; w = v++) {
          const double yv = pts[2 * v + 1], yw = pts[2 * w + 1];
          if ((yv > y) != (yw > y))
            xs.push_back(pts[2 * v] + (y - yv) * (pts[2 * w] - pts[2 * v]) / (yw - yv));
        }
      std::sort(xs.begin(), xs.end());
      for (std::size_t q = 0; q + 1 < xs.size(); q += 2) {
        // The columns only: row j is known. (Re-deriving it from y can round to an empty
        // row range, (y − y0)/cell a hair above j, and leave the row inside unblocked.)
        int a0, a1, b0, b1;
        if (!node_box(g, xs[q], g.y0, xs[q + 1], g.y0, a0, a1, b0, b1)) continue;
        for (int i = a0; i <= a1; ++i) blocked_[static_cast<std::size_t>(j) * g.nx + i] = 1;
      }
      poll(static_cast<std::size_t>(start[k1] - start[k]) + xs.size());
    }
  }
}

void NavField::open_edges(const World& world, std::uint32_t layers, std::vector<std::uint8_t>& open,
                          StopPoll& poll) const {
  // A blocked node took the value of its nearest free reached node whatever lay between:
  // one in a sealed room's band read the distance from outside the wall, and a direction
  // into it (fuzz round 24). Its sources now come through edges that cross no wall. An
  // edge lies in the closed cells beside it, so only the obstacles listed in those cells
  // (wall_cells) can meet it: each listed obstacle shuts the edges of its cell it meets,
  // and the rest stay open without a test.
  const NavGrid& g = grid_;
  const auto nx = static_cast<std::size_t>(g.nx);
  open.assign(g.nodes(), 0);
  for (int j = 0; j < g.ny; ++j)
    for (int i = 0; i < g.nx; ++i) {
      const std::size_t n = static_cast<std::size_t>(j) * nx + i;
      if (!blocked_[n]) continue;
      std::uint8_t bits = 0;
      for (const auto& d : kNeighbours) {
        const int qi = i + d[0], qj = j + d[1];
        if (qi >= 0 && qj >= 0 && qi < g.nx && qj < g.ny) bits |= neighbour_bit(d[0], d[1]);
      }
      open[n] = bits;
    }
  // Whether the edge p -> q meets the listed obstacle w (a path leaving a wall it starts
  // on does not).
  auto meets = [](const CellWall& w, Vec2 p, Vec2 q) {
    if (w.r < 0.0f) return path_meets_wall(p.x, p.y, q.x, q.y, w.ax, w.ay, w.bx, w.by);
    return segment_distance2(p.x, p.y, q.x, q.y, w.ax, w.ay) <= static_cast<double>(w.r) * w.r;
  };
  const auto kind = world.obstacle_kind();
  auto solid = [&](std::int32_t o) {
    const ObstacleKind k = kind[static_cast<std::size_t>(o)];
    return k == ObstacleKind::kBox || k == ObstacleKind::kPolygon || k == ObstacleKind::kCircle;
  };
  // Blocked nodes an edge of a solid was shut for: the solid may hold them.
  std::vector<std::uint32_t> retest;
  // The cell's six edges: its four sides and two diagonals, corners 0..3 at (i, j),
  // (i+1, j), (i, j+1), (i+1, j+1).
  constexpr int kEdges[6][2] = {{0, 1}, {2, 3}, {0, 2}, {1, 3}, {0, 3}, {1, 2}};
  constexpr int kCorner[4][2] = {{0, 0}, {1, 0}, {0, 1}, {1, 1}};
  for (const CellWall& w : cell_walls_) {
    poll(6);
    const int i = static_cast<int>(w.cell % nx), j = static_cast<int>(w.cell / nx);
    for (const auto& e : kEdges) {
      const int ui = i + kCorner[e[0]][0], uj = j + kCorner[e[0]][1];
      const int vi = i + kCorner[e[1]][0], vj = j + kCorner[e[1]][1];
      const std::size_t u = static_cast<std::size_t>(uj) * nx + ui;
      const std::size_t v = static_cast<std::size_t>(vj) * nx + vi;
      const std::uint8_t uv = neighbour_bit(vi - ui, vj - uj), vu = neighbour_bit(ui - vi, uj - vj);
      const Vec2 pu = node(ui, uj), pv = node(vi, vj);
      if (blocked_[u] && (open[u] & uv) && meets(w, pu, pv)) {
        open[u] &= static_cast<std::uint8_t>(~uv);
        if (solid(w.obstacle)) retest.push_back(static_cast<std::uint32_t>(u));
      }
      if (blocked_[v] && (open[v] & vu) && meets(w, pv, pu)) {
        open[v] &= static_cast<std::uint8_t>(~vu);
        if (solid(w.obstacle)) retest.push_back(static_cast<std::uint32_t>(v));
      }
    }
  }
  // The edges of a solid holding the node lead out of it (agents pushed into a box are
  // led out, as before): for the nodes a solid shut an edge of, each shut edge again,
  // against the obstacles of its cell but those holding the node.
  std::sort(retest.begin(), retest.end());
  retest.erase(std::unique(retest.begin(), retest.end()), retest.end());
  std::vector<std::int32_t> holding;
  for (const std::uint32_t n : retest) {
    poll(8);
    const int i = static_cast<int>(n % nx), j = static_cast<int>(n / nx);
    const Vec2 p = node(i, j);
    holding.clear();
    world.polygon_at(p, layers, &holding);
    world.circle_at(p, layers, &holding);
    if (holding.empty()) continue;
    for (const auto& d : kNeighbours) {
      const int qi = i + d[0], qj = j + d[1];
      const std::uint8_t bit = neighbour_bit(d[0], d[1]);
      if (qi < 0 || qj < 0 || qi >= g.nx || qj >= g.ny || (open[n] & bit)) continue;
      // The cells holding the edge: one for a diagonal, the two beside a side (clamped to
      // the grid's cells).
      const Vec2 q = node(qi, qj);
      auto shut_in = [&](int ci, int cj) {
        if (ci < 0 || cj < 0 || ci > g.nx - 2 || cj > g.ny - 2) return false;
        const auto c = static_cast<std::uint32_t>(static_cast<std::size_t>(cj) * nx + ci);
        const auto first =
            std::lower_bound(cell_walls_.begin(), cell_walls_.end(), c,
                             [](const CellWall& w, std::uint32_t k) { return w.cell < k; });
        for (auto w = first; w != cell_walls_.end() && w->cell == c; ++w)
          if (std::find(holding.begin(), holding.end(), w->obstacle) == holding.end() &&
              meets(*w, p, q))
            return true;
        return false;
      };
      const int ci = std::min(i, qi), cj = std::min(j, qj);
      bool shut;
      if (d[0] != 0 && d[1] != 0) shut = shut_in(ci, cj);
      else if (d[0] == 0)  // a vertical side: the cells left and right of it
        shut = shut_in(i - 1, cj) || shut_in(i, cj);
      else  // a horizontal side: the cells below and above it
        shut = shut_in(ci, j - 1) || shut_in(ci, j);
      if (!shut) open[n] |= bit;
    }
  }
}

void NavField::wall_cells(const World& world, std::uint32_t layers, StopPoll& poll) {
  const NavGrid& g = grid_;
  crossed_.assign(g.nodes(), 0);
  cell_walls_.clear();
  if (g.nx < 2 || g.ny < 2) return;
  const auto obstacle_layers = world.obstacle_layers();
  const double h = g.cell, slack = 1e-6 * h;
  // Cells [i0, i1] x [j0, j1] (lower-left nodes) whose closed squares, widened by the
  // slack, can meet the box; `meets` decides each (an extra cell costs a test a query in
  // it, a missing one a blend across the wall).
  auto add = [&](double x0, double y0, double x1, double y1, auto&& meets, const CellWall& w) {
    const double inv = 1.0 / h;
    // (One cell wider each way: the squares are placed in float below.)
    const double fi0 = std::floor((x0 - g.x0) * inv) - 1.0,
                 fi1 = std::floor((x1 - g.x0) * inv) + 1.0;
    const double fj0 = std::floor((y0 - g.y0) * inv) - 1.0,
                 fj1 = std::floor((y1 - g.y0) * inv) + 1.0;
    if (!(fi1 >= 0.0 && fj1 >= 0.0 && fi0 <= g.nx - 2 && fj0 <= g.ny - 2)) return;
    const int i0 = static_cast<int>(std::max(fi0, 0.0)),
              i1 = static_cast<int>(std::min(fi1, g.nx - 2.0));
    const int j0 = static_cast<int>(std::max(fj0, 0.0)),
              j1 = static_cast<int>(std::min(fj1, g.ny - 2.0));
    for (int j = j0; j <= j1; ++j) {
      for (int i = i0; i <= i1; ++i) {
        // The square between the nodes as open_edges() and the queries place them (in
        // float: a square in double missed a wall's end on its float corner by 7e-7).
        const Vec2 lo = node(i, j), hi = node(i + 1, j + 1);
        const double sx0 = lo.x - slack, sy0 = lo.y - slack;
        const double sx1 = hi.x + slack, sy1 = hi.y + slack;
        if (!meets(sx0, sy0, sx1, sy1)) continue;
        const auto c = static_cast<std::uint32_t>(static_cast<std::size_t>(j) * g.nx + i);
        crossed_[c] = 1;
        CellWall e = w;
        e.cell = c;
        cell_walls_.push_back(e);
      }
      poll(static_cast<std::size_t>(i1 - i0 + 1));
    }
  };
  const auto walls = world.walls();
  const auto wall_obstacle = world.wall_obstacle();
  for (std::size_t s = 0; s < wall_obstacle.size(); ++s) {
    if (!(obstacle_layers[static_cast<std::size_t>(wall_obstacle[s])] & layers)) continue;
    const double ax = walls[4 * s], ay = walls[4 * s + 1], bx = walls[4 * s + 2],
                 by = walls[4 * s + 3];
    add(
        std::min(ax, bx), std::min(ay, by), std::max(ax, bx), std::max(ay, by),
        [&](double x0, double y0, double x1, double y1) {
          auto in = [&](double x, double y) { return x >= x0 && x <= x1 && y >= y0 && y <= y1; };
          if (in(ax, ay) || in(bx, by)) return true;
          const double sides[4][4] = {
              {x0, y0, x1, y0}, {x1, y0, x1, y1}, {x1, y1, x0, y1}, {x0, y1, x0, y0}};
          for (const auto& e : sides)
            if (segments_meet(ax, ay, bx, by, e[0], e[1], e[2], e[3])) return true;
          return false;
        },
        CellWall{0, wall_obstacle[s], walls[4 * s], walls[4 * s + 1], walls[4 * s + 2],
                 walls[4 * s + 3], -1.0f});
  }
  const auto cc = world.circle_centers();
  const auto cr = world.circle_radii();
  const auto circle_obstacle = world.circle_obstacle();
  for (std::size_t c = 0; c < cr.size(); ++c) {
    if (!(obstacle_layers[static_cast<std::size_t>(circle_obstacle[c])] & layers)) continue;
    const double x = cc[2 * c], y = cc[2 * c + 1], r = cr[c];
    add(
        x - r, y - r, x + r, y + r,
        [&](double x0, double y0, double x1, double y1) {
          // The circle meets the square when its nearest point is within r and its
          // farthest corner beyond r (the boundary passes through).
          const double nx = std::clamp(x, x0, x1) - x, ny = std::clamp(y, y0, y1) - y;
          const double fx = std::max(std::abs(x0 - x), std::abs(x1 - x));
          const double fy = std::max(std::abs(y0 - y), std::abs(y1 - y));
          return nx * nx + ny * ny <= r * r && fx * fx + fy * fy >= r * r;
        },
        CellWall{0, circle_obstacle[c], cc[2 * c], cc[2 * c + 1], 0.0f, 0.0f, cr[c]});
  }
  std::stable_sort(cell_walls_.begin(), cell_walls_.end(),
                   [](const CellWall& a, const CellWall& b) { return a.cell < b.cell; });
}

void NavField::seen_corners(std::size_t n00, Vec2 p, bool seen[4]) const {
  const auto nx = static_cast<std::size_t>(grid_.nx);
  const int i = static_cast<int>(n00 % nx), j = static_cast<int>(n00 / nx);
  const Vec2 corner[4] = {node(i, j), node(i + 1, j), node(i, j + 1), node(i + 1, j + 1)};
  for (int c = 0; c < 4; ++c) seen[c] = true;
  const auto first =
      std::lower_bound(cell_walls_.begin(), cell_walls_.end(), n00,
                       [](const CellWall& w, std::size_t cell) { return w.cell < cell; });
  for (auto w = first; w != cell_walls_.end() && w->cell == n00; ++w)
    for (int c = 0; c < 4; ++c) {
      if (!seen[c]) continue;
      const Vec2 q = corner[c];
      if (w->r < 0.0f) {
        seen[c] = !path_meets_wall(p.x, p.y, q.x, q.y, w->ax, w->ay, w->bx, w->by);
      } else {
        // Across the boundary (one end in the disc, one out), or a chord through it.
        const double r2 = static_cast<double>(w->r) * w->r;
        const bool pin = (double(p.x) - w->ax) * (double(p.x) - w->ax) +
                             (double(p.y) - w->ay) * (double(p.y) - w->ay) <=
                         r2;
        const bool qin = (double(q.x) - w->ax) * (double(q.x) - w->ax) +
                             (double(q.y) - w->ay) * (double(q.y) - w->ay) <=
                         r2;
        seen[c] = (pin && qin) || segment_distance2(p.x, p.y, q.x, q.y, w->ax, w->ay) > r2;
      }
    }
}

void NavField::sight_window(StopPoll& poll) {
  // Separable: the OR over columns [i-1, i+2] of each row, then over rows [j-1, j+2].
  const auto nx = static_cast<std::size_t>(grid_.nx), ny = static_cast<std::size_t>(grid_.ny);
  std::vector<std::uint8_t> rows(nx * ny, 0);
  for (std::size_t j = 0; j < ny; ++j) {
    const std::uint8_t* b = blocked_.data() + j * nx;
    for (std::size_t i = 0; i < nx; ++i) {
      std::uint8_t any = 0;
      for (std::size_t k = i > 0 ? i - 1 : 0; k <= std::min(i + 2, nx - 1); ++k) any |= b[k];
      rows[j * nx + i] = any;
    }
    poll(nx);
  }
  sight_.assign(nx * ny, 0);
  for (std::size_t j = 0; j < ny; ++j) {
    for (std::size_t k = j > 0 ? j - 1 : 0; k <= std::min(j + 2, ny - 1); ++k)
      for (std::size_t i = 0; i < nx; ++i) sight_[j * nx + i] |= rows[k * nx + i];
    poll(nx);
  }
}

void NavField::march(const World& world, std::uint32_t layers, const NavGoals& goals,
                     const std::vector<std::uint8_t>& open, std::vector<double>& t,
                     std::vector<std::uint8_t>& state, std::vector<float>& dist,
                     std::vector<float>& desc, StopPoll& poll) const {
  const NavGrid& g = grid_;
  const int nx = g.nx, ny = g.ny;
  const std::size_t nn = g.nodes();
  const double h = g.cell;
  t.assign(nn, kInf);
  state.assign(nn, kFar);
  for (std::size_t n = 0; n < nn; ++n)
    if (blocked_[n]) state[n] = kBlocked;
  auto x_of = [&](int i) { return static_cast<double>(g.x0) + i * h; };
  auto y_of = [&](int j) { return static_cast<double>(g.y0) + j * h; };

  // Seeds: free nodes within `band` of a goal start from their exact Euclidean distance.
  // A goal with no free node that close (inside the inflated walls) widens the band.
  // Heap keys: the float bits of T (ordered like the values, T >= 0) over the node index,
  // one 64-bit integer an entry (ties go to the lower node: deterministic).
  std::vector<std::uint64_t> heap;
  auto key = [](double v, std::size_t n) {
    return (static_cast<std::uint64_t>(std::bit_cast<std::uint32_t>(static_cast<float>(v))) << 32) |
           static_cast<std::uint64_t>(n);
  };
  // Each goal's nearest free seed nodes (its "core"), from which the seeds must connect.
  std::vector<std::size_t> cores;
  const double span = std::max(nx, ny) * h;
  // One goal: free nodes within `band` of it start from their exact Euclidean distance. A
  // goal with no free node that close (inside the inflated walls, or an obstacle) widens
  // its own band, doubling, until it finds one (a goal of a set with others in the open
  // was left out when the band widened only where no goal of the set found a node).
  // near_of(x, y): the goal's point nearest (x, y), from which the sight test of a goal
  // inside an obstacle looks.
  std::vector<std::int32_t> holding;
  float ring[32];  // the directions of the points round a goal on a wall (in_sight)
  slot_directions(16, 0.0, ring);
  // unit: the work of one d_of (a polygon's walks its ring), counted for the stop poll.
  auto visit = [&](double bx0, double by0, double bx1, double by1, std::size_t unit, auto&& d_of,
                   auto&& near_of) {
    Vec2 held_at{std::numeric_limits<float>::quiet_NaN(), 0.0f};
    // Whether node (i, j) is in sight of the goal, but for the obstacles holding the
    // goal's point nearest it.
    auto goal_point = [&](int i, int j) {
      const Vec2 o = near_of(x_of(i), y_of(j));
      if (!(o.x == held_at.x && o.y == held_at.y)) {
        holding.clear();
        world.polygon_at(o, layers, &holding);
        world.circle_at(o, layers, &holding);
        held_at = o;
      }
      return o;
    };
    // Whether the goal's point nearest node (i, j) lies on a wall, to within float
    // rounding (a point meant on a slanted wall rounds off its line).
    auto on_wall = [&](int i, int j) {
      const Vec2 o = goal_point(i, j);
      Vec2 normal;
      return walls_through(world, o, on_wall_tolerance(o, h), layers, &normal, 1) > 0;
    };
    // Set for a goal on a wall (or where walls meet): it is reached from every side,
    // seen from a ring of 16 points just off it.
    bool wall_goal = false;
    auto in_sight = [&](int i, int j) {
      const Vec2 o = goal_point(i, j);
      const Vec2 q{static_cast<float>(x_of(i)), static_cast<float>(y_of(j))};
      // away_ok: a way that only leaves a wall the goal's point lies on is in sight (with
      // r = 0 it changes nothing else). A point goal exactly on a thin wall, or an exit
      // segment along one, had every node out of sight, and the whole field read inf
      // (fuzz round 25); it is reached from both sides of the wall, as a goal inside a
      // solid is from its sides.
      if (!blocked_way(world, o, q, q, 0.0f, holding, layers, /*away_ok=*/true)) return true;
      if (!wall_goal) return false;
      // A goal on a wall within rounding, or where walls meet: seen from just off it on
      // any side (a ring of points a few ulps out), so each side's nodes are in sight.
      const double nu = 4.0 * on_wall_tolerance(o, h);
      for (int a = 0; a < 16; ++a) {
        const Vec2 from{static_cast<float>(o.x + nu * ring[2 * a]),
                        static_cast<float>(o.y + nu * ring[2 * a + 1])};
        if (!blocked_way(world, from, q, q, 0.0f, holding, layers, /*away_ok=*/true)) return true;
      }
      return false;
    };
    // Set when the nearest free nodes are all out of sight of the goal: the band then
    // looks for the nearest free nodes in sight instead.
    bool sighted = false;
    for (double band = 3.0 * h;; band *= 2.0) {
      int i0, i1, j0, j1;
      if (!node_box(g, bx0 - band, by0 - band, bx1 + band, by1 + band, i0, i1, j0, j1)) return;
      // No obstacle in the band: every node in it is in sight, and no goal point is on a
      // wall (the sight tests below are skipped: a goal in the open costs what it did).
      const bool walls =
          obstacle_near(world, bx0 - band, by0 - band, bx1 + band, by1 + band, layers);
      double best = kInf;
      const std::size_t first = cores.size();
      for (int j = j0; j <= j1; ++j) {
        for (int i = i0; i <= i1; ++i) {
          const std::size_t n = static_cast<std::size_t>(j) * nx + i;
          if (blocked_[n]) continue;
          const double d = d_of(x_of(i), y_of(j));
          if (d > band || (sighted && !in_sight(i, j))) continue;
          if (d < best) {
            best = d;
            cores.resize(first);
          }
          if (d == best) cores.push_back(n);
        }
        poll(static_cast<std::size_t>(i1 - i0 + 1) * unit);  // a d_of per node of the row
      }
      if (!(best < kInf)) {
        if (band >= 2.0 * span) return;
        continue;
      }
      // Seeds at most three cells farther from the goal than its nearest free node: in a
      // band widened for a goal inside an obstacle, every free node round the obstacle
      // within the band took its straight-line distance, and a point behind the obstacle
      // read the way through it (3.0 m behind a 2 m box where the way round is 5 m). Now
      // the field leads to the obstacle's side nearest the goal. (A band of three cells is the first one tried:
      // there best + 3h >= band, so this changes nothing for goals in the open.)
      // A goal inside the inflated walls (the band had to widen): its cores are the seeds
      // in sight of it but for the obstacles holding its nearest point (blocked_way), so
      // that each side of an obstacle holding the goal within the cut is seeded, and no
      // side of a wall between. The cores were only the nodes at exactly the nearest
      // distance, and the ring of seeds breaks at an obstacle's corners: at the centre of
      // a 2 m box the float rounding of 1.35 m picked one side (a point 0.2 m above the
      // box read the way round it, 5.96 m for 1.5 m).
      // A goal on a wall (a point goal on a thin wall, an exit line along one, a point
      // where walls meet) is reached from every side, but its nearest free nodes lie on
      // one side only, and the other sides' seeds, not connected to them, were dropped: a
      // room whose exit point was put on its wall read inf everywhere inside (fuzz round
      // 25). Its cores are then every seed in sight, as for a goal inside the inflated
      // walls, over a band that reaches every side's nearest free nodes: inside a corner
      // they lie up to (blocking radius + cell) × √2 from the goal, beyond three cells.
      for (std::size_t c = first; walls && c < cores.size() && !wall_goal; ++c)
        if (on_wall(static_cast<int>(cores[c] % static_cast<std::size_t>(nx)),
                    static_cast<int>(cores[c] / static_cast<std::size_t>(nx)))) {
          wall_goal = true;
          const double want = 2.0 * (block_radius_ + h) + 3.0 * h;
          if (band < want) {
            cores.resize(first);
            band = want * 0.5;  // (doubled by the loop)
            break;
          }
        }
      if (wall_goal && cores.size() == first) continue;
      const double cut = wall_goal ? band : std::min(band, best + 3.0 * h);
      const bool inside = band > 3.0 * h || sighted || wall_goal;
      if (!inside) {
        // The nearest free nodes must be in sight of the goal. A goal in the inflated
        // band along a wall can have them on the wall's far side (the grid's margin
        // outside a closed room, as the grid lines fall): the room's seeds, not
        // connected to them, were then dropped and the whole room read inf. (Goals in
        // the open: every nearest node is in sight, and nothing changes.)
        std::size_t kept = first;
        for (std::size_t c = first; c < cores.size(); ++c) {
          const int ci = static_cast<int>(cores[c] % static_cast<std::size_t>(nx));
          const int cj = static_cast<int>(cores[c] / static_cast<std::size_t>(nx));
          if (in_sight(ci, cj)) cores[kept++] = cores[c];
        }
        cores.resize(kept);
        if (kept == first) {  // none: the same band again, for the nearest in sight
          sighted = true;
          band *= 0.5;
          continue;
        }
      }
      if (inside) cores.resize(first);
      for (int j = j0; j <= j1; ++j)
        for (int i = i0; i <= i1; ++i) {
          poll(unit);
          const std::size_t n = static_cast<std::size_t>(j) * nx + i;
          if (blocked_[n]) continue;
          const double d = d_of(x_of(i), y_of(j));
          if (d > cut) continue;
          // Only seeds in sight of the goal take their straight-line distance. Behind a
          // wall shorter than the band the seeds joined round its tips, so the check
          // below (seeds connected to the nearest ones) kept them: a node a cell behind
          // a 0.2 m wall read 0.2 where the way round is 0.38, its descent (0, 0), and an
          // agent there stood for good (fuzz round 25). The march reaches the rest.
          if (walls && !in_sight(i, j)) continue;
          if (d < t[n]) t[n] = d;
          if (inside) cores.push_back(n);
        }
      return;
    }
  };
  for (std::size_t p = 0; p + 1 < goals.points.size(); p += 2) {
    const double gx = goals.points[p], gy = goals.points[p + 1];
    const Vec2 g{static_cast<float>(gx), static_cast<float>(gy)};
    visit(
        gx, gy, gx, gy, 1, [&](double x, double y) { return std::hypot(x - gx, y - gy); },
        [&](double, double) { return g; });
  }
  for (std::size_t s = 0; s + 3 < goals.segments.size(); s += 4) {
    const double ax = goals.segments[s], ay = goals.segments[s + 1];
    const double bx = goals.segments[s + 2], by = goals.segments[s + 3];
    visit(
        std::min(ax, bx), std::min(ay, by), std::max(ax, bx), std::max(ay, by), 1,
        [&](double x, double y) { return std::sqrt(segment_distance2(ax, ay, bx, by, x, y)); },
        [&](double x, double y) {
          const SegmentPoint c = closest_on_segment(ax, ay, bx, by, x, y);
          return Vec2{static_cast<float>(c.x), static_cast<float>(c.y)};
        });
  }
  const float* rp = goals.rings.data();
  for (std::size_t k = 0; k + 1 < goals.ring_start.size(); ++k) {
    const std::int32_t s = goals.ring_start[k], e = goals.ring_start[k + 1];
    double b[4] = {kInf, kInf, -kInf, -kInf};
    for (std::int32_t v = s; v < e; ++v) {
      b[0] = std::min<double>(b[0], rp[2 * v]);
      b[1] = std::min<double>(b[1], rp[2 * v + 1]);
      b[2] = std::max<double>(b[2], rp[2 * v]);
      b[3] = std::max<double>(b[3], rp[2 * v + 1]);
    }
    visit(
        b[0], b[1], b[2], b[3], static_cast<std::size_t>(e - s) + 1,
        [&](double x, double y) {
          if (in_ring(x, y, rp, s, e)) return 0.0;
          double d2 = kInf;
          for (std::int32_t v = s, w = e - 1; v < e; w = v++)
            d2 = std::min(
                d2, segment_distance2(rp[2 * w], rp[2 * w + 1], rp[2 * v], rp[2 * v + 1], x, y));
          return std::sqrt(d2);
        },
        [&](double x, double y) {
          // (A node inside the ring: the node itself, always in sight.)
          if (in_ring(x, y, rp, s, e)) return Vec2{static_cast<float>(x), static_cast<float>(y)};
          double best2 = kInf;
          Vec2 o{};
          for (std::int32_t v = s, w = e - 1; v < e; w = v++) {
            const SegmentPoint c =
                closest_on_segment(rp[2 * w], rp[2 * w + 1], rp[2 * v], rp[2 * v + 1], x, y);
            const double d2 = (c.x - x) * (c.x - x) + (c.y - y) * (c.y - y);
            if (d2 < best2) {
              best2 = d2;
              o = {static_cast<float>(c.x), static_cast<float>(c.y)};
            }
          }
          return o;
        });
  }
  // The Euclidean seed values hold only where the goal is in sight. A wall thinner than
  // the band (a large cell, radius 0, a goal pressed against the wall) would otherwise
  // hand the nodes behind it their straight-line distance: keep the seeds that connect,
  // node to node (4-neighbours, free seeds only), to the free nodes nearest each goal, and
  // let the march reach the rest.
  {
    std::vector<std::size_t> stack;
    std::vector<std::uint8_t> kept(nn, 0);
    for (const std::size_t n : cores)
      if (!kept[n]) {
        kept[n] = 1;
        stack.push_back(n);
      }
    while (!stack.empty()) {
      poll();
      const std::size_t n = stack.back();
      stack.pop_back();
      const int i = static_cast<int>(n % static_cast<std::size_t>(nx));
      const int j = static_cast<int>(n / static_cast<std::size_t>(nx));
      const int di[4] = {1, -1, 0, 0}, dj[4] = {0, 0, 1, -1};
      for (int q = 0; q < 4; ++q) {
        const int a = i + di[q], b = j + dj[q];
        if (a < 0 || b < 0 || a >= nx || b >= ny) continue;
        const std::size_t m = static_cast<std::size_t>(b) * nx + a;
        if (!kept[m] && t[m] < kInf) {
          kept[m] = 1;
          stack.push_back(m);
        }
      }
    }
    for (std::size_t n = 0; n < nn; ++n)
      if (!kept[n]) t[n] = kInf;
  }
  // Seeds keep their exact values: a second-order update this close to a point goal
  // (high curvature) would lower them, and the undershoot would travel with the front
  // (measured: -0.54 cell along the diagonals, -0.18 with fixed seeds).
  for (std::size_t n = 0; n < nn; ++n)
    if (t[n] < kInf) {
      state[n] = kSeed;
      heap.push_back(key(t[n], n));
    }
  std::make_heap(heap.begin(), heap.end(), std::greater<>());

  // Fast marching. Per axis the smaller known neighbour T1 (and, for the second-order
  // stencil, T2 two nodes out on the same side when known and <= T1) gives a term
  // α(T − τ)² with α = 1, τ = T1 (first order) or α = 9/4, τ = (4·T1 − T2)/3 (second
  // order: the one-sided difference (3T − 4T1 + T2)/(2h)). The update solves
  // Σ α_d (T − τ_d)² = h² for the larger root, accepted when T >= every T1 (upwind
  // causality); otherwise first order on both axes, then the one-axis update T1 + h.
  auto known = [&](int i, int j) {
    return i >= 0 && j >= 0 && i < nx && j < ny &&
           state[static_cast<std::size_t>(j) * nx + i] == kKnown;
  };
  auto value = [&](int i, int j) { return t[static_cast<std::size_t>(j) * nx + i]; };
  auto axis = [&](int i, int j, int di, int dj, double& t1, double& alpha, double& tau) {
    const bool a = known(i - di, j - dj), b = known(i + di, j + dj);
    if (!a && !b) return false;
    int s = a && (!b || value(i - di, j - dj) <= value(i + di, j + dj)) ? -1 : 1;
    t1 = value(i + s * di, j + s * dj);
    alpha = 1.0;
    tau = t1;
    if (known(i + 2 * s * di, j + 2 * s * dj)) {
      const double t2 = value(i + 2 * s * di, j + 2 * s * dj);
      if (t2 <= t1) {
        alpha = 2.25;
        tau = (4.0 * t1 - t2) / 3.0;
      }
    }
    return true;
  };
  auto solve2 = [&](double ax, double tx, double ay, double ty, double lo, double& out) {
    const double a = ax + ay, b = -2.0 * (ax * tx + ay * ty),
                 c = ax * tx * tx + ay * ty * ty - h * h;
    const double disc = b * b - 4.0 * a * c;
    if (disc < 0.0) return false;
    out = (-b + std::sqrt(disc)) / (2.0 * a);
    return out >= lo;
  };
  auto update = [&](int i, int j) {
    double t1x = 0.0, ax = 0.0, tx = 0.0, t1y = 0.0, ay = 0.0, ty = 0.0;  // set when h*
    const bool hx = axis(i, j, 1, 0, t1x, ax, tx), hy = axis(i, j, 0, 1, t1y, ay, ty);
    double v;
    if (hx && hy) {
      const double lo = std::max(t1x, t1y);
      if (!solve2(ax, tx, ay, ty, lo, v) && !solve2(1.0, t1x, 1.0, t1y, lo, v))
        v = std::min(t1x, t1y) + h;
    } else if (hx) {
      v = tx + h / std::sqrt(ax);
    } else {
      v = ty + h / std::sqrt(ay);
    }
    return v;
  };
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), std::greater<>());
    const std::uint64_t top = heap.back();
    heap.pop_back();
    const auto n = static_cast<std::size_t>(top & 0xFFFFFFFFu);
    // Stale entries (the node was lowered since, or accepted) are skipped.
    if (state[n] == kKnown || (top >> 32) != std::bit_cast<std::uint32_t>(static_cast<float>(t[n])))
      continue;
    state[n] = kKnown;
    poll();
    const int i = static_cast<int>(n % static_cast<std::size_t>(nx)),
              j = static_cast<int>(n / static_cast<std::size_t>(nx));
    const int nb[4][2] = {{i - 1, j}, {i + 1, j}, {i, j - 1}, {i, j + 1}};
    for (const auto& q : nb) {
      if (q[0] < 0 || q[1] < 0 || q[0] >= nx || q[1] >= ny) continue;
      const std::size_t m = static_cast<std::size_t>(q[1]) * nx + q[0];
      if (state[m] == kKnown || state[m] == kBlocked || state[m] == kSeed) continue;
      const double v = update(q[0], q[1]);
      if (v < t[m]) {
        t[m] = v;
        state[m] = kTrial;
        heap.push_back(key(v, m));
        std::push_heap(heap.begin(), heap.end(), std::greater<>());
      }
    }
  }

  // Descent of free nodes: per axis towards the smaller free finite neighbour when it is
  // lower than the node, with slope (T − T_nb)/h; normalised.
  dist.assign(nn, std::numeric_limits<float>::infinity());
  desc.assign(2 * nn, 0.0f);
  auto free_value = [&](int i, int j) {
    if (i < 0 || j < 0 || i >= nx || j >= ny) return kInf;
    const std::size_t m = static_cast<std::size_t>(j) * nx + i;
    return blocked_[m] ? kInf : t[m];
  };
  for (int j = 0; j < ny; ++j) {
    poll(static_cast<std::size_t>(nx));
    for (int i = 0; i < nx; ++i) {
      const std::size_t n = static_cast<std::size_t>(j) * nx + i;
      if (blocked_[n] || !(t[n] < kInf)) continue;
      dist[n] = static_cast<float>(t[n]);
      const double l = free_value(i - 1, j), r = free_value(i + 1, j);
      const double d = free_value(i, j - 1), u = free_value(i, j + 1);
      double gx = 0.0, gy = 0.0;
      if (std::min(l, r) < t[n]) gx = l <= r ? -(t[n] - l) : (t[n] - r);
      if (std::min(d, u) < t[n]) gy = d <= u ? -(t[n] - d) : (t[n] - u);
      const double len = std::hypot(gx, gy);
      if (len > 0.0) {
        desc[2 * n] = static_cast<float>(gx / len);
        desc[2 * n + 1] = static_cast<float>(gy / len);
      }
    }
  }

  // Blocked nodes: the nearest free reachable node (an 8-neighbour two-pass propagation
  // of nearest sources through the open edges, exact integer distances in cells, ties to
  // the lower value), whose value they take plus the distance to it; descent back to it
  // and onwards. A blocked node no open edge leads from to a source (in the band of a
  // sealed room) keeps +inf and no descent.
  std::vector<std::int32_t> src(nn, -1);
  for (std::size_t n = 0; n < nn; ++n)
    if (!blocked_[n] && t[n] < kInf) src[n] = static_cast<std::int32_t>(n);
  auto d2 = [&](std::size_t n, std::int32_t s) {
    const long long di = static_cast<long long>(n % nx) - s % nx,
                    dj = static_cast<long long>(n / nx) - s / nx;
    return di * di + dj * dj;
  };
  auto offer = [&](int i, int j, int qi, int qj) {
    if (qi < 0 || qj < 0 || qi >= nx || qj >= ny) return;
    const std::size_t n = static_cast<std::size_t>(j) * nx + i;
    if (!blocked_[n] || !(open[n] & neighbour_bit(qi - i, qj - j))) return;
    const std::int32_t s = src[static_cast<std::size_t>(qj) * nx + qi];
    if (s < 0) return;
    const std::int32_t cur = src[n];
    if (cur < 0) {
      src[n] = s;
      return;
    }
    const long long a = d2(n, s), b = d2(n, cur);
    if (a < b || (a == b && (t[static_cast<std::size_t>(s)] < t[static_cast<std::size_t>(cur)] ||
                             (t[static_cast<std::size_t>(s)] == t[static_cast<std::size_t>(cur)] &&
                              s < cur))))
      src[n] = s;
  };
  for (int pass = 0; pass < 2; ++pass) {
    for (int j = 0; j < ny; ++j) {
      poll(5 * static_cast<std::size_t>(nx));
      for (int i = 0; i < nx; ++i) {
        offer(i, j, i - 1, j);
        offer(i, j, i - 1, j - 1);
        offer(i, j, i, j - 1);
        offer(i, j, i + 1, j - 1);
      }
      for (int i = nx - 1; i >= 0; --i) offer(i, j, i + 1, j);
    }
    for (int j = ny - 1; j >= 0; --j) {
      poll(5 * static_cast<std::size_t>(nx));
      for (int i = nx - 1; i >= 0; --i) {
        offer(i, j, i + 1, j);
        offer(i, j, i + 1, j + 1);
        offer(i, j, i, j + 1);
        offer(i, j, i - 1, j + 1);
      }
      for (int i = 0; i < nx; ++i) offer(i, j, i - 1, j);
    }
  }
  for (std::size_t n = 0; n < nn; ++n) {
    poll();
    if (!blocked_[n] || src[n] < 0) continue;
    const auto s = static_cast<std::size_t>(src[n]);
    const double dx = (static_cast<double>(s % nx) - static_cast<double>(n % nx)) * h;
    const double dy = (static_cast<double>(s / nx) - static_cast<double>(n / nx)) * h;
    const double len = std::hypot(dx, dy);
    dist[n] = static_cast<float>(t[s] + len);
    const double vx = dx / len + desc[2 * s], vy = dy / len + desc[2 * s + 1];
    const double vl = std::hypot(vx, vy);
    if (vl > 1e-9) {
      desc[2 * n] = static_cast<float>(vx / vl);
      desc[2 * n + 1] = static_cast<float>(vy / vl);
    } else {
      desc[2 * n] = static_cast<float>(dx / len);
      desc[2 * n + 1] = static_cast<float>(dy / len);
    }
  }
}

void NavField::build(const World& world, std::span<const NavGoals> goals, float cell, float radius,
                     std::uint32_t layers, float margin, double max_bytes,
                     const std::function<bool()>& stop) {
  if (!(cell > 0.0f)) throw std::invalid_argument("cell must be > 0");
  if (goals.empty()) throw std::invalid_argument("expected at least one goal set");
  static std::atomic<std::uint64_t> serials{0};
  serial_ = ++serials;
  double b[4] = {kInf, kInf, -kInf, -kInf};
  float wb[4];
  if (world.bounds(wb)) {
    b[0] = wb[0];
    b[1] = wb[1];
    b[2] = wb[2];
    b[3] = wb[3];
  }
  for (std::size_t k = 0; k < goals.size(); ++k) {
    const NavGoals& g = goals[k];
    if (g.empty()) throw std::invalid_argument("goal set " + std::to_string(k) + " is empty");
    auto grow = [&](const std::vector<float>& xy) {
      for (std::size_t i = 0; i + 1 < xy.size(); i += 2) {
        b[0] = std::min<double>(b[0], xy[i]);
        b[1] = std::min<double>(b[1], xy[i + 1]);
        b[2] = std::max<double>(b[2], xy[i]);
        b[3] = std::max<double>(b[3], xy[i + 1]);
      }
    };
    grow(g.points);
    grow(g.segments);
    grow(g.rings);
  }
  // At least the blocking radius and a cell beyond the walls, so that the grid's edge
  // nodes are free: a point outside the grid comes in through them (outside_at), and a
  // wall within the blocking radius of the edge (margin 0, or a radius above the margin)
  // left none free on that side.
  const double blocking = std::max(radius, 0.5f * cell);
  const double pad = std::max<double>(std::max<double>(margin, 0.0), blocking + cell) + cell;
  const double x0 = b[0] - pad, y0 = b[1] - pad;
  const double w = b[2] - b[0] + 2 * pad, hgt = b[3] - b[1] + 2 * pad;
  const double nx = std::ceil(w / cell) + 1, ny = std::ceil(hgt / cell) + 1;
  if (nx * ny > static_cast<double>(kMaxNodes))
    throw std::invalid_argument("the grid would have " + approximate(nx * ny) +
                                " nodes (more than " + std::to_string(kMaxNodes) +
                                "); use a larger cell");
  // The segment goals' bucket lists (near_goal): at most three entries a bucket row and
  // one a bucket column a segment spans, 16 bytes each.
  double bucket_entries = 0.0;
  for (const NavGoals& g : goals)
    for (std::size_t i = 0; i + 3 < g.segments.size(); i += 4)
      bucket_entries +=
          3.0 * std::abs(double(g.segments[i + 3]) - g.segments[i + 1]) / (2.0 * cell) +
          std::abs(double(g.segments[i + 2]) - g.segments[i]) / (2.0 * cell) + 8.0;
  // The wall cells' lists (wall_cells): a wall crosses at most |dx|/cell + |dy|/cell + 2
  // cells, each listed with its neighbours where it runs along their sides (three times
  // at most); a circle's boundary as its bounding square's rim.
  double wall_entries = 0.0;
  {
    const auto walls = world.walls();
    const auto radii = world.circle_radii();
    for (std::size_t i = 0; i + 3 < walls.size(); i += 4)
      wall_entries += 3.0 * ((std::abs(double(walls[i + 2]) - walls[i]) +
                              std::abs(double(walls[i + 3]) - walls[i + 1])) /
                                 cell +
                             2.0);
    for (const float r : radii) wall_entries += 3.0 * (8.0 * r / cell + 4.0);
  }
  const double need = nx * ny * bytes_per_node(goals.size()) + 16.0 * bucket_entries +
                      static_cast<double>(sizeof(CellWall)) * wall_entries;
  if (need > max_bytes)
    throw NavOutOfMemory("NavField: " + std::to_string(goals.size()) +
                         " goal set(s) on a grid of " + approximate(nx * ny) +
                         " nodes need about " + approximate(need / 1073741824.0) +
                         " GiB, more than the " + approximate(max_bytes / 1073741824.0) +
                         " GiB this process may use (the machine's memory, or a ulimit or "
                         "cgroup limit below it; use a larger cell or fewer goal sets)");
  grid_ = {static_cast<float>(x0), static_cast<float>(y0), cell, static_cast<int>(nx),
           static_cast<int>(ny)};
  radius_ = radius;
  block_radius_ = std::max(radius, 0.5f * cell);
  StopPoll poll(stop);
  block(world, layers, poll);
  sight_window(poll);
  wall_cells(world, layers, poll);
  std::vector<std::uint8_t> open;
  open_edges(world, layers, open, poll);
  dist_.assign(goals.size(), {});
  desc_.assign(goals.size(), {});
  std::vector<double> t;
  std::vector<std::uint8_t> state;
  // One poll across the goal sets' marches: many small marches add up too.
  for (std::size_t k = 0; k < goals.size(); ++k)
    march(world, layers, goals[k], open, t, state, dist_[k], desc_[k], poll);
  floor_.assign(goals.size(), std::numeric_limits<float>::infinity());
  for (std::size_t k = 0; k < goals.size(); ++k)
    for (const float v : dist_[k]) floor_[k] = std::min(floor_[k], v);
  goal_points_.assign(goals.size(), {});
  goal_segments_.assign(goals.size(), {});
  segment_buckets_.assign(goals.size(), {});
  for (std::size_t k = 0; k < goals.size(); ++k) {
    // Points sorted by bucket of two cells (then x, y), so that near_goal reads only
    // the nine buckets round a query.
    std::vector<GoalPoint>& pts = goal_points_[k];
    for (std::size_t i = 0; i + 1 < goals[k].points.size(); i += 2) {
      const float x = goals[k].points[i], y = goals[k].points[i + 1];
      pts.push_back({goal_bucket(x, y), x, y});
    }
    std::sort(pts.begin(), pts.end(), [](const GoalPoint& a, const GoalPoint& b) {
      return a.key != b.key ? a.key < b.key : a.x != b.x ? a.x < b.x : a.y < b.y;
    });
    goal_segments_[k] = goals[k].segments;
    // Segments by the buckets they pass through: a query reads the nine buckets round it
    // (was a scan of every segment: 44 µs a query with 10,000 segment goals).
    std::vector<GoalSegment>& sb = segment_buckets_[k];
    const std::vector<float>& seg = goal_segments_[k];
    for (std::size_t i = 0; i + 3 < seg.size(); i += 4)
      add_segment_buckets(sb, static_cast<std::uint32_t>(i), seg[i], seg[i + 1], seg[i + 2],
                          seg[i + 3]);
    std::sort(sb.begin(), sb.end(), [](const GoalSegment& a, const GoalSegment& b) {
      return a.key != b.key ? a.key < b.key : a.index < b.index;
    });
  }
}

void NavField::add_segment_buckets(std::vector<GoalSegment>& out, std::uint32_t index, double ax,
                                   double ay, double bx, double by) const {
  // Row by row of buckets (two cells high), the span of x the segment covers within the
  // row, widened by a small slack so that rounding cannot leave out a bucket it touches
  // (an extra bucket costs one more test, a missing one a wrong answer). Every point of
  // the segment then lies in a listed bucket, and a query within two cells of it reads
  // that bucket among its nine.
  const double b = 2.0 * double(grid_.cell);
  const double slack = 1e-6 * b;
  if (ay > by) {
    std::swap(ax, bx);
    std::swap(ay, by);
  }
  const std::uint64_t row0 = goal_bucket(ax, ay - slack) & 0xFFFFFFFFu;
  const std::uint64_t row1 = goal_bucket(ax, by + slack) & 0xFFFFFFFFu;
  const double dy = by - ay;
  for (std::uint64_t row = row0; row <= row1; ++row) {
    const double lo = double(grid_.y0) + double(row) * b - slack;
    const double hi = double(grid_.y0) + double(row + 1) * b + slack;
    double x_lo, x_hi;
    if (dy > 0.0) {
      const double t0 = std::clamp((lo - ay) / dy, 0.0, 1.0);
      const double t1 = std::clamp((hi - ay) / dy, 0.0, 1.0);
      const double xa = ax + t0 * (bx - ax), xb = ax + t1 * (bx - ax);
      x_lo = std::min(xa, xb);
      x_hi = std::max(xa, xb);
    } else {  // horizontal (or a point): the whole of it in its one row
      x_lo = std::min(ax, bx);
      x_hi = std::max(ax, bx);
    }
    const std::uint64_t c0 = goal_bucket(x_lo - slack, ay) >> 32;
    const std::uint64_t c1 = goal_bucket(x_hi + slack, ay) >> 32;
    for (std::uint64_t col = c0; col <= c1; ++col) out.push_back({(col << 32) | row, index});
  }
}

namespace {

/// Cell and bilinear weights of p: corners n00, n10, n01, n11 and fractions (u, v).
struct Bilinear {
  std::size_t n00, n10, n01, n11;
  float u, v;
};

Bilinear bilinear(const NavGrid& g, Vec2 p) {
  const float inv = 1.0f / g.cell;
  float fx = std::clamp((p.x - g.x0) * inv, 0.0f, static_cast<float>(g.nx - 1));
  float fy = std::clamp((p.y - g.y0) * inv, 0.0f, static_cast<float>(g.ny - 1));
  if (!(fx == fx)) fx = 0.0f;
  if (!(fy == fy)) fy = 0.0f;
  const int i = std::min(static_cast<int>(fx), g.nx - 2),
            j = std::min(static_cast<int>(fy), g.ny - 2);
  const std::size_t n00 = static_cast<std::size_t>(j) * g.nx + i;
  return {n00, n00 + 1, n00 + g.nx, n00 + g.nx + 1, fx - i, fy - j};
}

}  // namespace

std::uint64_t NavField::goal_bucket(double x, double y) const {
  // Buckets of two cells (near_goal's reach) from the grid's origin; every goal point is
  // on the grid, so the indexes are small and non-negative.
  const double b = 2.0 * double(grid_.cell);
  const auto ix = static_cast<std::uint64_t>(std::max(0.0, std::floor((x - grid_.x0) / b)));
  const auto iy = static_cast<std::uint64_t>(std::max(0.0, std::floor((y - grid_.y0) / b)));
  return (std::min<std::uint64_t>(ix, 0xFFFFFFFFu) << 32) |
         std::min<std::uint64_t>(iy, 0xFFFFFFFFu);
}

bool NavField::near_goal(std::size_t g, Vec2 p, float d, float& w, float& e, Vec2& q) const {
  if (g >= goal_points_.size()) return false;
  const float c = grid_.cell;
  const double reach2 = 4.0 * double(c) * c;
  double best = kInf;
  // Point goals in the 3 × 3 buckets round p: per bucket column, one range of the
  // (column, row)-sorted keys (a binary search each).
  const std::vector<GoalPoint>& pts = goal_points_[g];
  const std::uint64_t centre = goal_bucket(p.x, p.y);
  const std::uint64_t cx = centre >> 32, cy = centre & 0xFFFFFFFFu;
  for (std::uint64_t ix = cx > 0 ? cx - 1 : 0; ix <= cx + 1; ++ix) {
    const std::uint64_t lo_key = (ix << 32) | (cy > 0 ? cy - 1 : 0), hi_key = (ix << 32) | (cy + 1);
    auto it = std::lower_bound(pts.begin(), pts.end(), lo_key,
                               [](const GoalPoint& a, std::uint64_t k) { return a.key < k; });
    for (; it != pts.end() && it->key <= hi_key; ++it) {
      const double dx = double(p.x) - it->x, dy = double(p.y) - it->y;
      const double d2 = dx * dx + dy * dy;
      if (d2 < best && d2 < reach2) {
        best = d2;
        q = {it->x, it->y};
      }
    }
  }
  // Segment goals in the same nine buckets. A segment may be listed in several of them;
  // the nearest wins, the lowest index among equals (the order of a scan of them all),
  // and it replaces the nearest point only when strictly nearer.
  const std::vector<float>& seg = goal_segments_[g];
  const std::vector<GoalSegment>& sb = segment_buckets_[g];
  double seg_best = kInf;
  std::uint32_t seg_index = 0;
  Vec2 seg_q{};
  for (std::uint64_t ix = cx > 0 ? cx - 1 : 0; !sb.empty() && ix <= cx + 1; ++ix) {
    const std::uint64_t lo_key = (ix << 32) | (cy > 0 ? cy - 1 : 0), hi_key = (ix << 32) | (cy + 1);
    auto it = std::lower_bound(sb.begin(), sb.end(), lo_key,
                               [](const GoalSegment& a, std::uint64_t k) { return a.key < k; });
    for (; it != sb.end() && it->key <= hi_key; ++it) {
      const std::uint32_t k = it->index;
      const SegmentPoint c2 =
          closest_on_segment(seg[k], seg[k + 1], seg[k + 2], seg[k + 3], p.x, p.y);
      const double d2 = (p.x - c2.x) * (p.x - c2.x) + (p.y - c2.y) * (p.y - c2.y);
      if (d2 < seg_best || (d2 == seg_best && k < seg_index)) {
        seg_best = d2;
        seg_index = k;
        seg_q = {static_cast<float>(c2.x), static_cast<float>(c2.y)};
      }
    }
  }
  if (seg_best < best && seg_best < reach2) {
    best = seg_best;
    q = seg_q;
  }
  if (!(best < reach2)) return false;
  e = static_cast<float>(std::sqrt(best));
  // In sight by the field's own account: the geodesic distance d agrees with the straight
  // one (full weight within a cell, none two cells or more beyond it: a wall between them
  // sends the field's way round; near a goal the field itself can read 0.6 cell long). A
  // test of the grid's blocked nodes refused every goal within a blocking radius and two
  // cells of a wall, and switched off at once.
  const float agree = std::clamp((e + 2.0f * c - d) / c, 0.0f, 1.0f);
  w = std::clamp((2.0f * c - e) / c, 0.0f, 1.0f) * agree;
  return w > 0.0f;
}

float NavField::distance_at(std::size_t g, Vec2 p) const {
  const float d = field_distance_at(g, p);
  // Near a point or segment goal the nodes hold exact distances, but their bilinear
  // blend does not reach 0 at a goal between nodes (0.1 cell away at a cell's centre).
  // The nearest goal, when in sight, is exactly e away (no goal is nearer, and the
  // straight way is open): within a cell e, blended back into the field's over the next.
  float w, e;
  Vec2 q;
  if (!(d <= 3.0f * grid_.cell) || !near_goal(g, p, d, w, e, q)) return d;
  return d + w * (e - d);
}

bool NavField::outside_at(std::size_t g, Vec2 p, float& distance, Vec2& direction) const {
  const NavGrid& gr = grid_;
  const double c = gr.cell;
  const double xmin = gr.x0, ymin = gr.y0;
  const double xmax = xmin + (gr.nx - 1) * c, ymax = ymin + (gr.ny - 1) * c;
  const double px = p.x, py = p.y;
  if (px >= xmin && px <= xmax && py >= ymin && py <= ymax) return false;
  // A query asks twice (distance, then direction) at one point: the scan is O(nx + ny).
  struct Memo {
    std::uint64_t serial = 0;
    std::size_t g = 0;
    float x = 0.0f, y = 0.0f, distance = 0.0f;
    Vec2 direction{};
  };
  Memo& memo = detail::thread_scratch<Memo, Memo>();
  if (memo.serial == serial_ && memo.g == g &&
      std::bit_cast<std::uint32_t>(memo.x) == std::bit_cast<std::uint32_t>(p.x) &&
      std::bit_cast<std::uint32_t>(memo.y) == std::bit_cast<std::uint32_t>(p.y)) {
    distance = memo.distance;
    direction = memo.direction;
    return true;
  }
  const float* d = dist_[g].data();
  double best = std::numeric_limits<double>::infinity(), bx = 0.0, by = 0.0;
  // Only free nodes: the grid reaches a blocking radius and a cell beyond the walls (build),
  // so its edge nodes are free, and a blocked node's value may come from behind a wall.
  // One side of the box facing p: nodes origin + k c t (k < count), p at `along` on it and
  // `e` > 0 off it. Between two usable nodes D is linear, slope q per metre, and
  // sqrt(u² + e²) + q u is least at u = −q e / sqrt(1 − q²) (|q| < 1; else at an end).
  auto side = [&](double ox, double oy, double tx, double ty, int count, std::size_t node0,
                  std::size_t stride, double along, double e) {
    auto value = [&](int k) -> double {
      const std::size_t n = node0 + static_cast<std::size_t>(k) * stride;
      return blocked_[n] ? std::numeric_limits<double>::infinity() : d[n];
    };
    auto offer = [&](double u, double dv) {
      const double f = std::hypot(u, e) + dv;
      if (f < best) {
        best = f;
        bx = ox + (along + u) * tx;
        by = oy + (along + u) * ty;
      }
    };
    for (int k = 0; k < count; ++k) {
      const double dk = value(k);
      if (!std::isfinite(dk)) continue;
      offer(k * c - along, dk);
      if (k + 1 >= count) continue;
      const double dn = value(k + 1);
      if (!std::isfinite(dn)) continue;
      const double q = (dn - dk) / c;
      if (!(std::fabs(q) < 1.0)) continue;  // least at a node, offered already
      const double lo = k * c - along, hi = lo + c;
      const double u = std::clamp(-q * e / std::sqrt(1.0 - q * q), lo, hi);
      offer(u, dk + q * (u - lo));
    }
  };
  const auto nx = static_cast<std::size_t>(gr.nx);
  if (px < xmin) side(xmin, ymin, 0.0, 1.0, gr.ny, 0, nx, py - ymin, xmin - px);
  if (px > xmax) side(xmax, ymin, 0.0, 1.0, gr.ny, nx - 1, nx, py - ymin, px - xmax);
  if (py < ymin) side(xmin, ymin, 1.0, 0.0, gr.nx, 0, 1, px - xmin, ymin - py);
  if (py > ymax)
    side(xmin, ymax, 1.0, 0.0, gr.nx, (static_cast<std::size_t>(gr.ny) - 1) * nx, 1, px - xmin,
         py - ymax);
  distance = static_cast<float>(best);
  direction = {};
  if (std::isfinite(best)) {
    const double vx = bx - px, vy = by - py, len = std::hypot(vx, vy);
    if (len > 0.0) direction = {static_cast<float>(vx / len), static_cast<float>(vy / len)};
  }
  memo = {serial_, g, p.x, p.y, distance, direction};
  return true;
}

float NavField::field_distance_at(std::size_t g, Vec2 p) const {
  {
    float d;
    Vec2 u;
    if (outside_at(g, p, d, u)) return d;
  }
  const Bilinear b = bilinear(grid_, p);
  const float* d = dist_[g].data();
  const float w[4] = {(1 - b.u) * (1 - b.v), b.u * (1 - b.v), (1 - b.u) * b.v, b.u * b.v};
  const std::size_t n[4] = {b.n00, b.n10, b.n01, b.n11};
  // In a cell a wall passes through, only the corners on p's side of it. Their blend
  // alone, renormalised, read 0.16 m short 3 cm beside a wall through the cell's lower
  // corners (cell 0.25): where a corner is not seen, each seen corner's value is carried
  // to p along its descent (|grad T| = 1), T(c) - desc(c).(p - c), and those are blended.
  // (Compiled twice: a cell no wall passes through, nearly every query, reads as before
  // the walls were asked; one test instead of a third more instructions a query.)
  auto blend = [&](auto walls) {
    constexpr bool kWalls = decltype(walls)::value;
    bool seen[4] = {true, true, true, true};
    bool partial = false;
    if constexpr (kWalls) {
      seen_corners(b.n00, p, seen);
      partial = !(seen[0] && seen[1] && seen[2] && seen[3]);
    }
    const float* e = desc_[g].data();
    auto value = [&](int c) {
      const float v = d[n[c]];
      if (!kWalls || !partial) return v;
      const auto nx = static_cast<std::size_t>(grid_.nx);
      const Vec2 q = node(static_cast<int>(n[c] % nx), static_cast<int>(n[c] / nx));
      return std::max(0.0f, v - (e[2 * n[c]] * (p.x - q.x) + e[2 * n[c] + 1] * (p.y - q.y)));
    };
    // A cell whose free corners are all unreachable lies in a region the goal cannot be
    // reached from (e.g. a pocket whose openings are narrower than the grid resolves): its
    // blocked corners carry values extrapolated from the wall's other side, not a way out.
    bool free_corner = false, free_reached = false;
    for (int c = 0; c < 4; ++c)
      if (seen[c] && !blocked_[n[c]]) {
        free_corner = true;
        free_reached |= std::isfinite(d[n[c]]);
      }
    if (free_corner && !free_reached) return std::numeric_limits<float>::infinity();
    float sum = 0.0f, wsum = 0.0f;
    for (int c = 0; c < 4; ++c)
      if (seen[c] && std::isfinite(d[n[c]])) {
        sum += w[c] * value(c);
        wsum += w[c];
      }
    if (wsum > 0.0f) return sum / wsum;
    for (int c = 0; c < 4; ++c)  // p sits on a corner with zero weight for the finite ones
      if (seen[c] && std::isfinite(d[n[c]])) return value(c);
    return std::numeric_limits<float>::infinity();
  };
  return crossed_[b.n00] ? blend(std::true_type{}) : blend(std::false_type{});
}

Vec2 NavField::direction_at(std::size_t g, Vec2 p) const {
  return direction_at(g, p, field_distance_at(g, p));
}

Vec2 NavField::direction_at(std::size_t g, Vec2 p, float d) const {
  // Where the goal cannot be reached (+inf), no way to it: the blended descents of
  // blocked nodes there pointed somewhere (into the wall of a sealed room, and an agent
  // followed it).
  if (!(d < std::numeric_limits<float>::infinity())) return {};
  Vec2 u = field_direction_at(g, p);
  // Near a point or segment goal in sight, straight at it (as distance_at): within a
  // cell the exact direction ((0, 0) at the goal), blended back into the field's over
  // the next.
  float w, e;
  Vec2 q;
  if (!(d <= 3.0f * grid_.cell) || !near_goal(g, p, d, w, e, q)) return u;
  const Vec2 to = q - p;
  if (w >= 1.0f && !(e > 0.0f)) return {};
  const Vec2 exact = e > 0.0f ? to * (1.0f / e) : Vec2{};
  const Vec2 mix = exact * w + u * (1.0f - w);
  const float len = length(mix);
  if (!(len > 1e-6f)) return exact;
  return mix * (1.0f / len);
}

Vec2 NavField::field_direction_at(std::size_t g, Vec2 p) const {
  {
    float d;
    Vec2 u;
    if (outside_at(g, p, d, u)) return u;
  }
  const Bilinear b = bilinear(grid_, p);
  const float* e = desc_[g].data();
  // In a cell a wall passes through, only the corners on p's side of it (weight 0 for
  // the others). (Compiled twice, as field_distance_at's blend.)
  auto blend = [&](auto walls) -> Vec2 {
    constexpr bool kWalls = decltype(walls)::value;
    bool seen[4] = {true, true, true, true};
    if constexpr (kWalls) seen_corners(b.n00, p, seen);
    const float w00 = seen[0] ? (1 - b.u) * (1 - b.v) : 0.0f,
                w10 = seen[1] ? b.u * (1 - b.v) : 0.0f, w01 = seen[2] ? (1 - b.u) * b.v : 0.0f,
                w11 = seen[3] ? b.u * b.v : 0.0f;
    float x = w00 * e[2 * b.n00] + w10 * e[2 * b.n10] + w01 * e[2 * b.n01] + w11 * e[2 * b.n11];
    float y = w00 * e[2 * b.n00 + 1] + w10 * e[2 * b.n10 + 1] + w01 * e[2 * b.n01 + 1] +
              w11 * e[2 * b.n11 + 1];
    float len = std::sqrt(x * x + y * y);
    // On a ridge (the corners disagree: ways round an obstacle on either side, or two
    // goals) opposite descents cancel and the remainder, normalised, can point anywhere —
    // into the obstacle between the two ways. There, when the blend keeps less than half
    // of the weight of the corners that have a descent, take the heaviest corner's.
    float wsum = 0.0f, wbest = -1.0f;
    std::size_t best = b.n00;
    const std::size_t n[4] = {b.n00, b.n10, b.n01, b.n11};
    const float w[4] = {w00, w10, w01, w11};
    for (int c = 0; c < 4; ++c) {
      if (!seen[c] || (e[2 * n[c]] == 0.0f && e[2 * n[c] + 1] == 0.0f)) continue;
      wsum += w[c];
      if (w[c] > wbest) {
        wbest = w[c];
        best = n[c];
      }
    }
    if (len < 0.5f * wsum) {
      x = e[2 * best];
      y = e[2 * best + 1];
      len = std::sqrt(x * x + y * y);
    }
    if (!(len > 1e-6f)) return {};
    return {x / len, y / len};
  };
  return crossed_[b.n00] ? blend(std::true_type{}) : blend(std::false_type{});
}

bool NavField::visible(Vec2 a, Vec2 b) const {
  const NavGrid& g = grid_;
  const Vec2 d = b - a;
  const float len = length(d);
  // Capped before the cast (points 1e8 apart on a fine grid exceed int).
  const int m = static_cast<int>(std::min(std::ceil(len / (0.5f * g.cell)), 0x1p30f));
  const float inv = 1.0f / g.cell;
  // An agent pushed into the inflated band (a corner of its cell blocked) skips the
  // samples within one cell of it, so that it still sees out; any other agent checks
  // them all, the ones beside it included.
  bool in_band = false;
  {
    const float ax = (a.x - g.x0) * inv, ay = (a.y - g.y0) * inv;
    if (ax >= 0.0f && ay >= 0.0f && ax <= g.nx - 1 && ay <= g.ny - 1) {
      const auto nx = static_cast<std::size_t>(g.nx), ny = static_cast<std::size_t>(g.ny);
      const auto i0 = static_cast<std::size_t>(ax), j0 = static_cast<std::size_t>(ay);
      const std::size_t i1 = std::min(i0 + 1, nx - 1), j1 = std::min(j0 + 1, ny - 1);
      in_band = blocked_[j0 * nx + i0] || blocked_[j0 * nx + i1] || blocked_[j1 * nx + i0] ||
                blocked_[j1 * nx + i1];
    }
  }
  const int first = std::min(m, in_band ? 2 : 1);
  for (int k = first; k <= m; ++k) {
    const Vec2 q = a + d * (m > 0 ? static_cast<float>(k) / static_cast<float>(m) : 0.0f);
    const float fx = (q.x - g.x0) * inv, fy = (q.y - g.y0) * inv;
    if (!(fx >= 0.0f && fy >= 0.0f && fx <= g.nx - 1 && fy <= g.ny - 1)) return false;
    // The nodes around the cell holding q, one node beyond its corners: a wall is seen
    // through the nodes within the blocking radius (>= cell/2) of it, which near a thin
    // wall's tip can all lie a cell away from where the segment crosses it. sight_ holds
    // that window's OR per cell (fx, fy >= 0 and within the grid, so ic, jc are nodes).
    const auto ic = static_cast<std::size_t>(fx), jc = static_cast<std::size_t>(fy);
    if (sight_[jc * static_cast<std::size_t>(g.nx) + ic]) return false;
  }
  return true;
}

Vec2 NavField::pulled_direction_at(std::size_t g, Vec2 p, float look_ahead) const {
  const Vec2 d0 = direction_at(g, p);
  if (!(look_ahead > 0.0f) || (d0.x == 0.0f && d0.y == 0.0f)) return d0;
  {
    // Outside the grid the direction is already the straight way in (outside_at): no
    // trail to pull (and each of its points would scan the grid's sides again).
    float d;
    Vec2 u;
    if (outside_at(g, p, d, u)) return d0;
  }
  constexpr int kMaxSteps = 64;
  Vec2 trail[kMaxSteps + 1];
  const float step = grid_.cell;
  // The cap before the cast: look_ahead / step may exceed int (1e8 / 0.01), which cast
  // gave INT_MIN, no trail and the unpulled direction.
  const int n = static_cast<int>(std::min<float>(kMaxSteps, std::ceil(look_ahead / step)));
  Vec2 q = p;
  int count = 0;
  for (int s = 1; s <= n; ++s) {
    // A point or segment goal in sight within a step: the trail ends on it (stepping a
    // cell past it and back, the trail turned an agent near its goal by up to 100°).
    float w, e;
    Vec2 at;
    const float dq = field_distance_at(g, q);
    if (dq <= 3.0f * grid_.cell && near_goal(g, q, dq, w, e, at) && e <= step) {
      trail[s] = at;
      count = s;
      break;
    }
    const Vec2 d = direction_at(g, q, dq);
    if (d.x == 0.0f && d.y == 0.0f) break;
    q = q + d * step;
    trail[s] = q;
    count = s;
  }
  if (count == 0) return d0;
  int last = -1;
  for (const int quarter : {4, 3, 2, 1}) {
    const int idx = std::max(1, (count * quarter + 3) / 4);
    if (idx == last) continue;
    last = idx;
    if (visible(p, trail[idx])) {
      const Vec2 v = trail[idx] - p;
      const float len = length(v);
      if (len > 1e-6f) return v * (1.0f / len);
    }
  }
  return d0;
}

void nav_query_rows(const NavField& field, std::span<const float> points,
                    std::span<const std::int32_t> which, std::span<float> distance,
                    std::span<float> direction, std::size_t begin, std::size_t end) {
  const auto count = static_cast<std::int32_t>(field.count());
  for (std::size_t i = begin; i < end; ++i) {
    const std::int32_t g = which.empty() ? 0 : which[i];
    const Vec2 p{points[2 * i], points[2 * i + 1]};
    if (g < 0 || g >= count) {
      if (!distance.empty()) distance[i] = std::numeric_limits<float>::infinity();
      if (!direction.empty()) direction[2 * i] = direction[2 * i + 1] = 0.0f;
      continue;
    }
    if (!distance.empty()) distance[i] = field.distance_at(static_cast<std::size_t>(g), p);
    if (!direction.empty()) {
      const Vec2 d = field.direction_at(static_cast<std::size_t>(g), p);
      direction[2 * i] = d.x;
      direction[2 * i + 1] = d.y;
    }
  }
}

void nav_query(const NavField& field, std::span<const float> points,
               std::span<const std::int32_t> which, std::span<float> distance,
               std::span<float> direction) {
  parallel_for(points.size() / 2, 1024, [&](std::size_t s, std::size_t e) {
    nav_query_rows(field, points, which, distance, direction, s, e);
  });
}

}  // namespace contextsteer
