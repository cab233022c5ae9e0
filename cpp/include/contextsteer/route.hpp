// SPDX-License-Identifier: MIT
// Per-agent routes: shortest paths on a visibility graph around the inflated obstacles.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "contextsteer/common.hpp"
#include "contextsteer/world.hpp"

namespace contextsteer {

/// Visibility graph of a world for agents of radius r >= 0.
///
/// Every obstacle inflated by r (a segment becomes a capsule, a circle a larger circle,
/// a polygon its rounded offset) is covered by circumscribed polygons: a regular
/// `arc_points`-gon of circumradius (r + δ)/cos(π/m) around every wall end point, one of
/// 2·arc_points corners around every circle (δ = 1e-4 of the scene's size, so the corners
/// stay strictly outside). The convex hull of a wall's two end polygons covers its capsule.
/// Corners closer than r to any wall or inside a polygon or circle are dropped; two
/// corners are joined when a disc of radius r swept between them touches nothing
/// (raycast_rows with radius r). A route joins start and goal to the graph the same way
/// and runs A* (Euclidean heuristic): the shortest path among polylines through those
/// corners, longer than the true shortest path of the inflated world by at most the
/// factor 1/cos(π/m) on its arcs (1.035 for m = 12), never crossing an inflated obstacle.
class Router {
 public:
  /// At most this many corners kept (V): the graph tests V²/2 pairs (about 25 s of two
  /// cores and up to 1.6 GB of edges at the limit) and build() refuses more.
  static constexpr std::size_t kMaxCorners = std::size_t{1} << 14;

  /// Builds the graph (allocates; O(V²) thick raycasts over the thread pool; V corners).
  /// Precondition world.indexed(); radius >= 0 finite; arc_points >= 4. Throws
  /// std::invalid_argument when more than kMaxCorners corners are kept. `stop` (when
  /// given) is called from the calling thread between blocks of the pair tests; when it
  /// returns true the build stops and returns false (the graph is then unusable).
  bool build(const World& world, float radius, std::uint32_t layers, int arc_points = 12,
             const std::function<bool()>& stop = {});

  /// Graph corners (V,2) and edges as CSR (adjacent corners of corner v:
  /// edges()[edge_start()[v] .. edge_start()[v+1])).
  std::span<const float> corners() const { return corners_; }
  std::span<const std::int32_t> edge_start() const { return edge_start_; }
  std::span<const std::int32_t> edges() const { return edges_; }
  float radius() const { return radius_; }

  /// Shortest route from a to b appended to `out` as points (2 floats each, a first, b
  /// last); false (out untouched) when b cannot be reached. A start or goal closer than r
  /// to a wall (an agent pressed against it) steps straight off its nearest wall to the
  /// corners' distance (an extra point after a, before b), and the rest of the route
  /// keeps r; where it cannot step off, or no route keeps r from there, its legs keep a
  /// disc of its own clearance. Reentrant; allocates its search memory.
  bool route(Vec2 a, Vec2 b, std::vector<float>& out) const;

 private:
  /// The shortest route a..b over the graph; the legs from a and to b keep discs of ra
  /// and rb clear.
  bool search(Vec2 a, Vec2 b, float ra, float rb, std::vector<float>& out) const;
  /// The point a straight step off p's nearest wall at which a disc of r + delta is clear
  /// (false when there is none, or p is inside a solid). A p on a wall steps off to the
  /// side facing `toward` (the route's other end) where it can, else the other side.
  bool escape(Vec2 p, Vec2 toward, Vec2& out) const;
  bool clear(Vec2 a, Vec2 b, float radius) const;
  float clearance(Vec2 p) const;

  const World* world_ = nullptr;  // borrowed for route(); the caller keeps it alive
  float radius_ = 0.0f;
  float delta_ = 0.0f;  // the corners' distance beyond r
  std::uint32_t layers_ = kAllLayers;
  std::vector<float> corners_;
  std::vector<std::int32_t> edge_start_;
  std::vector<std::int32_t> edges_;
};

/// Routes from starts[i] to goals[i] for i in [0, N) (each (N,2)) on the thread pool,
/// packed: points (P,2) in `points`, route i owning rows [offsets[i], offsets[i+1])
/// (empty when unreachable). Deterministic.
void route_all(const Router& router, std::span<const float> starts, std::span<const float> goals,
               std::vector<float>& points, std::vector<std::int64_t>& offsets);

}  // namespace contextsteer
