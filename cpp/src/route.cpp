// SPDX-License-Identifier: MIT
// Visibility-graph routes around inflated obstacles (A* over circumscribed corners).
#include "contextsteer/route.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>
#include <stdexcept>
#include <string>
#include <utility>

#include "contextsteer/nearest.hpp"
#include "contextsteer/slot_set.hpp"
#include "parallel.hpp"
#include "contextsteer/raycast.hpp"

namespace contextsteer {

namespace {
constexpr double kPi = 3.14159265358979323846;
}

float Router::clearance(Vec2 p) const {
  float d = 0.0f, pt[2], nrm[2];
  std::int32_t id = -1;
  const float probe = radius_ > 0.0f ? radius_ : 1.0f;
  nearest_rows(*world_, {&p.x, 2}, probe, layers_, NearestOut{&d, pt, nrm, &id}, 0, 1);
  bool in = false;
  inside_rows(*world_, {&p.x, 2}, layers_, &in, 0, 1);
  if (in) return 0.0f;
  return id < 0 ? std::numeric_limits<float>::infinity() : d;
}

bool Router::clear(Vec2 a, Vec2 b, float radius) const {
  const Vec2 d = b - a;
  float len = length(d);
  if (!(len > 1e-18f)) {
    // |d|² leaves float32's normal range below 1e-18 and reads 0 below about 1e-23: a
    // leg of a scene 1e-25 units wide was called clear through a wall (fuzz round 20).
    // The length in double; only a leg of no length is clear without a cast.
    const double ld = std::sqrt(double{d.x} * d.x + double{d.y} * d.y);
    if (!(ld > 0.0)) return true;
    len = static_cast<float>(ld);
  }
  const float dir[2] = {d.x, d.y};
  const float org[2] = {a.x, a.y};
  float dist = 0.0f, nrm[2];
  bool hit = false;
  std::int32_t obs = -1;
  raycast_rows(*world_, {org, 2}, {dir, 2}, {&len, 1}, radius, layers_,
               RayHitsOut{&dist, &hit, nrm, &obs}, 0, 1);
  return !hit;
}

bool Router::build(const World& world, float radius, std::uint32_t layers, int arc_points,
                   const std::function<bool()>& stop) {
  world_ = &world;
  radius_ = radius;
  layers_ = layers;
  corners_.clear();
  float b[4];
  if (!world.bounds(b)) {
    edge_start_.assign(1, 0);
    edges_.clear();
    return true;
  }
  // Corners sit delta beyond the clearance: a fraction of the scene's extent (not of its
  // distance from the origin, so a scene routes alike wherever it sits, nor floored at 1,
  // which put every corner outside a room of 2e-5 units: fuzz round 19) plus 8 float32
  // ulps of its largest coordinate, which the corners' rounding cannot eat. A scene of
  // one point has no extent: its corners take 1e-4 of a unit.
  double extent = std::max(double{b[2]} - double{b[0]}, double{b[3]} - double{b[1]});
  if (!(extent > 0.0)) extent = 1.0;
  const double magnitude = std::max({std::fabs(double{b[0]}), std::fabs(double{b[1]}),
                                     std::fabs(double{b[2]}), std::fabs(double{b[3]})});
  const double delta = 1e-4 * extent + 8.0 * 0x1p-24 * magnitude + 1e-4 * radius;
  delta_ = static_cast<float>(delta);
  // Unique wall end points (of the layers), sorted so the corners do not depend on the
  // order of the walls' addition beyond their coordinates.
  std::vector<std::pair<float, float>> ends;
  const auto walls = world.walls();
  const auto wall_obstacle = world.wall_obstacle();
  const auto obstacle_layers = world.obstacle_layers();
  for (std::size_t s = 0; s < wall_obstacle.size(); ++s) {
    if (!(obstacle_layers[static_cast<std::size_t>(wall_obstacle[s])] & layers)) continue;
    ends.emplace_back(walls[4 * s], walls[4 * s + 1]);
    ends.emplace_back(walls[4 * s + 2], walls[4 * s + 3]);
  }
  std::sort(ends.begin(), ends.end());
  ends.erase(std::unique(ends.begin(), ends.end()), ends.end());
  std::vector<float> cand;
  auto ring = [&](double cx, double cy, double r, int m) {
    const double rr = r / std::cos(kPi / m);
    for (int k = 0; k < m; ++k) {
      const double a = 2.0 * kPi * (k + 0.5) / m;
      cand.push_back(static_cast<float>(cx + rr * std::cos(a)));
      cand.push_back(static_cast<float>(cy + rr * std::sin(a)));
    }
  };
  for (const auto& [x, y] : ends) ring(x, y, radius + delta, arc_points);
  const auto cc = world.circle_centers();
  const auto cr = world.circle_radii();
  const auto circle_obstacle = world.circle_obstacle();
  for (std::size_t c = 0; c < cr.size(); ++c) {
    if (!(obstacle_layers[static_cast<std::size_t>(circle_obstacle[c])] & layers)) continue;
    ring(cc[2 * c], cc[2 * c + 1], cr[c] + radius + delta, 2 * arc_points);
  }
  // Keep the corners with clearance > r.
  const std::size_t nc = cand.size() / 2;
  std::vector<std::uint8_t> keep(nc, 0);
  parallel_for(nc, 64, [&](std::size_t s, std::size_t e) {
    for (std::size_t i = s; i < e; ++i)
      keep[i] = clearance({cand[2 * i], cand[2 * i + 1]}) > radius;
  });
  for (std::size_t i = 0; i < nc; ++i)
    if (keep[i]) {
      corners_.push_back(cand[2 * i]);
      corners_.push_back(cand[2 * i + 1]);
    }
  // Edges: a disc of radius r + delta/2 swept between two corners touches nothing. The
  // corners' own rings are tangent at r + delta, and the half delta keeps out the chords
  // that pass through a wall's end (with r = 0 they touched it within rounding).
  const auto edge_radius = static_cast<float>(radius + 0.5 * delta);
  const std::size_t v = corners_.size() / 2;
  edge_start_.assign(1, 0);
  edges_.clear();
  if (v > kMaxCorners) {
    corners_.clear();
    throw std::invalid_argument(
        "route: the visibility graph would have " + std::to_string(v) + " corners, more than " +
        std::to_string(kMaxCorners) +
        " (it tests every pair); use fewer arc_points, fewer obstacles, or a NavField");
  }
  // adj[i]: the visible corners j > i, in order. Rows in blocks (about 2^20 pair tests
  // each) so that `stop` is asked every few tens of milliseconds.
  std::vector<std::vector<std::int32_t>> adj(v);
  for (std::size_t first = 0; first < v;) {
    std::size_t last = first, pairs = 0;
    while (last < v && pairs < (std::size_t{1} << 20)) pairs += v - 1 - last++;
    parallel_for(last - first, 8, [&](std::size_t s, std::size_t e) {
      for (std::size_t i = first + s; i < first + e; ++i)
        for (std::size_t j = i + 1; j < v; ++j)
          if (clear({corners_[2 * i], corners_[2 * i + 1]}, {corners_[2 * j], corners_[2 * j + 1]},
                    edge_radius))
            adj[i].push_back(static_cast<std::int32_t>(j));
    });
    first = last;
    if (first < v && stop && stop()) {
      corners_.clear();
      return false;
    }
  }
  // CSR of both directions, without a second copy: row r gets the corners k < r that see
  // it (in increasing k, as rows are visited in order) and then its own adj[r] (j > r,
  // increasing), so every row comes out sorted.
  std::vector<std::size_t> fill(v + 1, 0);
  for (std::size_t i = 0; i < v; ++i) {
    fill[i + 1] += adj[i].size();
    for (std::int32_t j : adj[i]) ++fill[static_cast<std::size_t>(j) + 1];
  }
  for (std::size_t i = 0; i < v; ++i) fill[i + 1] += fill[i];
  if (fill[v] > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()))
    throw std::invalid_argument("route: the visibility graph has more than 2^31 edges");
  edges_.assign(fill[v], 0);
  edge_start_.resize(v + 1);
  for (std::size_t i = 0; i <= v; ++i) edge_start_[i] = static_cast<std::int32_t>(fill[i]);
  for (std::size_t i = 0; i < v; ++i) {
    for (std::int32_t j : adj[i]) {
      edges_[fill[i]++] = j;
      edges_[fill[static_cast<std::size_t>(j)]++] = static_cast<std::int32_t>(i);
    }
    std::vector<std::int32_t>().swap(adj[i]);  // freed as it goes
  }
  return true;
}

bool Router::escape(Vec2 p, Vec2 toward, Vec2& out) const {
  float d = 0.0f, pt[2], nrm[2];
  std::int32_t id = -1;
  nearest_rows(*world_, {&p.x, 2}, radius_, layers_, NearestOut{&d, pt, nrm, &id}, 0, 1);
  if (id < 0 || !(d >= 0.0f)) return false;
  const float step = radius_ + delta_;
  const double tol = on_wall_tolerance(p, step);
  if (d <= tol) {
    // p lies on a wall (within float rounding: a point meant on a slanted wall rounds off
    // its line), or where walls meet. No side is nearer, so it steps off in the direction
    // facing the route's other end most that leads somewhere clear: the walls' normals
    // both ways and a ring of 16, each at 1 to 3 times the step (a corner's inside needs
    // more).
    // A side inside a solid has no clearance there; the step is tested from just off p,
    // since a way from a point on a wall touches it. (Only d == 0 was handled: a goal
    // on a slanted wall, or where two walls meet, got no route or one round a wall's
    // end; fuzz round 25.)
    Vec2 normals[8];
    const int m = walls_through(*world_, p, tol, layers_, normals, 8);
    std::vector<Vec2> dirs;
    for (int i = 0; i < m; ++i) dirs.insert(dirs.end(), {normals[i], normals[i] * -1.0f});
    float ring[32];
    slot_directions(16, 0.0, ring);
    for (int i = 0; i < 16; ++i) dirs.push_back({ring[2 * i], ring[2 * i + 1]});
    const Vec2 to = toward - p;
    std::stable_sort(dirs.begin(), dirs.end(),
                     [&](Vec2 u, Vec2 v) { return dot(u, to) > dot(v, to); });
    const auto nudge = static_cast<float>(4.0 * tol);
    for (const Vec2 u : dirs)
      for (const float times : {1.0f, 1.5f, 2.0f, 3.0f}) {
        const Vec2 q = p + u * (step * times);
        if (clearance(q) > radius_ && clear(p + u * nudge, q, 0.0f)) {
          out = q;
          return true;
        }
      }
    return false;
  }
  // Straight away from the nearest wall point, to the corners' distance r + delta.
  const Vec2 w{pt[0], pt[1]};
  const Vec2 away = (p - w) * (1.0f / d);
  const Vec2 q = w + away * (radius_ + delta_);
  if (!(clearance(q) > radius_ && clear(p, q, 0.999f * d))) return false;
  out = q;  // only on success: the caller's end stays the end otherwise
  return true;
}

bool Router::route(Vec2 a, Vec2 b, std::vector<float>& out) const {
  if (!world_) return false;
  const float ra = std::min(radius_, 0.999f * clearance(a));
  const float rb = std::min(radius_, 0.999f * clearance(b));
  // An end pressed against a wall (closer than r) first steps straight off it to where a
  // disc of r is clear, and the route keeps r from there; only when it cannot step off
  // (no such point nearby) or no route keeps r, its legs keep its own clearance.
  Vec2 sa = a, sb = b;
  const bool off_a = ra < radius_ && escape(a, b, sa);
  const bool off_b = rb < radius_ && escape(b, a, sb);
  if (off_a || off_b) {
    std::vector<float> mid;
    if (search(sa, sb, off_a ? radius_ : ra, off_b ? radius_ : rb, mid)) {
      if (off_a) out.insert(out.end(), {a.x, a.y});
      out.insert(out.end(), mid.begin(), mid.end());
      if (off_b) out.insert(out.end(), {b.x, b.y});
      return true;
    }
  }
  return search(a, b, ra, rb, out);
}

bool Router::search(Vec2 a, Vec2 b, float ra, float rb, std::vector<float>& out) const {
  if (clear(a, b, std::min(ra, rb))) {
    out.insert(out.end(), {a.x, a.y, b.x, b.y});
    return true;
  }
  const std::size_t v = corners_.size() / 2;
  auto corner = [&](std::size_t i) { return Vec2{corners_[2 * i], corners_[2 * i + 1]}; };
  // Nodes 0..v-1 corners, v the start; the goal is reached from corners that see it.
  std::vector<std::uint8_t> to_goal(v, 0);
  std::vector<double> g(v + 1, std::numeric_limits<double>::infinity());
  std::vector<std::int32_t> parent(v + 1, -1);
  using Item = std::pair<double, std::int32_t>;
  std::priority_queue<Item, std::vector<Item>, std::greater<>> open;
  auto h = [&](Vec2 p) { return static_cast<double>(length(b - p)); };
  g[v] = 0.0;
  for (std::size_t i = 0; i < v; ++i) {
    to_goal[i] = clear(corner(i), b, rb);
    if (clear(a, corner(i), ra)) {
      g[i] = length(corner(i) - a);
      parent[i] = static_cast<std::int32_t>(v);
      open.emplace(g[i] + h(corner(i)), static_cast<std::int32_t>(i));
    }
  }
  double best = std::numeric_limits<double>::infinity();
  std::int32_t last = -1;
  std::vector<std::uint8_t> closed(v, 0);
  while (!open.empty()) {
    const auto [f, u32] = open.top();
    open.pop();
    const auto u = static_cast<std::size_t>(u32);
    if (closed[u]) continue;
    if (f >= best) break;
    closed[u] = 1;
    if (to_goal[u]) {
      const double total = g[u] + h(corner(u));
      if (total < best) {
        best = total;
        last = u32;
      }
    }
    for (std::int32_t e = edge_start_[u]; e < edge_start_[u + 1]; ++e) {
      const auto w = static_cast<std::size_t>(edges_[static_cast<std::size_t>(e)]);
      if (closed[w]) continue;
      const double gw = g[u] + length(corner(w) - corner(u));
      if (gw < g[w]) {
        g[w] = gw;
        parent[w] = u32;
        open.emplace(gw + h(corner(w)), static_cast<std::int32_t>(w));
      }
    }
  }
  if (last < 0) return false;
  std::vector<std::int32_t> chain;
  for (std::int32_t u = last; u != static_cast<std::int32_t>(v);
       u = parent[static_cast<std::size_t>(u)])
    chain.push_back(u);
  out.insert(out.end(), {a.x, a.y});
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    const Vec2 c = corner(static_cast<std::size_t>(*it));
    out.insert(out.end(), {c.x, c.y});
  }
  out.insert(out.end(), {b.x, b.y});
  return true;
}

void route_all(const Router& router, std::span<const float> starts, std::span<const float> goals,
               std::vector<float>& points, std::vector<std::int64_t>& offsets) {
  const std::size_t n = starts.size() / 2;
  std::vector<std::vector<float>> each(n);
  parallel_for(n, 1, [&](std::size_t s, std::size_t e) {
    for (std::size_t i = s; i < e; ++i)
      router.route({starts[2 * i], starts[2 * i + 1]}, {goals[2 * i], goals[2 * i + 1]}, each[i]);
  });
  points.clear();
  offsets.assign(n + 1, 0);
  for (std::size_t i = 0; i < n; ++i) {
    points.insert(points.end(), each[i].begin(), each[i].end());
    offsets[i + 1] = static_cast<std::int64_t>(points.size() / 2);
  }
}

}  // namespace contextsteer
