// SPDX-License-Identifier: MIT
// Navigation fields: geodesic distance to the nearest goal over a grid of the world.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <new>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "contextsteer/common.hpp"
#include "contextsteer/world.hpp"

namespace contextsteer {

/// The goals of one field: points (P,2), segments (S,4: ax, ay, bx, by) and polygons
/// (vertices 2 floats each, polygon k owning points [ring_start[k], ring_start[k+1])).
/// A polygon goal is its interior and boundary (an exit region); a segment, an exit line.
struct NavGoals {
  std::vector<float> points;
  std::vector<float> segments;
  std::vector<float> rings;
  std::vector<std::int32_t> ring_start{0};
  bool empty() const { return points.empty() && segments.empty() && ring_start.size() < 2; }
};

/// Grid of the fields: nodes at (x0 + i·cell, y0 + j·cell), i < nx, j < ny, node n = j·nx + i.
struct NavGrid {
  float x0 = 0.0f, y0 = 0.0f;
  float cell = 1.0f;
  int nx = 0, ny = 0;
  std::size_t nodes() const { return static_cast<std::size_t>(nx) * static_cast<std::size_t>(ny); }
};

/// G navigation fields over one grid of a world, for agents of radius `radius`.
///
/// Obstacles are inflated by the blocking radius rb = max(radius, cell/2): a node is
/// blocked when it lies within rb of a wall or circle or inside a polygon or circle (of
/// the `layers`). rb >= cell/2 means no 4-neighbour grid edge crosses a wall between two
/// free nodes (the crossing point is within cell/2 of one of them), so nothing leaks
/// through thin walls.
///
/// Distance: the Eikonal equation |∇T| = 1 on the free nodes, solved by fast marching
/// (Sethian) with the second-order upwind stencil where two known nodes line up
/// (first order otherwise); nodes within 3 cells of a goal start from their exact
/// Euclidean distance to it, kept fixed (seeds are never lowered by an update). Measured
/// on an open 503 × 503 grid from a point goal (tests/test_nav.py, notebooks/07): absolute
/// error within [−0.19, +0.07] cell, mean relative error 0.06 % (−0.54 cell before the
/// seeds were fixed).
/// Fast marching rather than an 8/16-neighbour Dijkstra: the graph metric of a 16-neighbour
/// stencil is anisotropic (up to 2.7 % too long between its directions) and its gradient
/// is piecewise constant in 16 directions, which agents feel as zig-zags; the Eikonal
/// solution converges to the Euclidean geodesic, and with the second-order stencil its
/// error is a fraction of a percent.
///
/// Blocked nodes (where an agent pushed against a wall stands) are given the value of
/// their nearest free reachable node plus the distance to it, and a descent pointing back
/// to it and onwards, so agents inside the inflated band are led out, never deeper. That
/// node is found through grid edges that cross no wall (but the edges of a solid holding
/// the blocked node, which lead out of it): a blocked node by a wall takes its value from
/// its own side, and one in a room the wall seals reads +inf. A query in a cell a wall
/// passes through blends only the corners it sees (no wall between). Free nodes no goal
/// can reach have distance +inf and no descent.
///
/// What NavField::build throws when its fields would not fit in the memory it was given (a
/// std::bad_alloc that says how much they need).
class NavOutOfMemory : public std::bad_alloc {
 public:
  explicit NavOutOfMemory(std::string message) : message_(std::move(message)) {}
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  std::string message_;
};

/// What NavField::build throws when its `stop` callback asked it to stop.
struct NavInterrupted : std::exception {
  const char* what() const noexcept override { return "NavField build interrupted"; }
};

/// Descent: per node, the upwind gradient (per axis the smaller free neighbour, the
/// direction fast marching took), normalised; queries interpolate the node distances and
/// the node descents bilinearly (one bilinear lookup), so the direction is continuous.
class NavField {
 public:
  NavField() = default;

  /// Builds G = goals.size() fields over the world's bounds grown by `margin` (and
  /// covering every goal). cell > 0 (world units), radius >= 0, world indexed. Allocates;
  /// O(nodes·log(front)) per field. Throws std::invalid_argument when the grid would
  /// exceed kMaxNodes nodes or a goal set is empty; throws NavOutOfMemory, before
  /// allocating, when the fields and the build's scratch (bytes_per_node(G) a node) would
  /// exceed `max_bytes`. `stop` (when given) is asked about every 20 ms of the build's
  /// work (the walls' blocking, the sweeps over the nodes, the marches of every goal
  /// set), from the calling thread; when it returns true the build throws NavInterrupted
  /// (the field is then unusable).
  void build(const World& world, std::span<const NavGoals> goals, float cell, float radius,
             std::uint32_t layers, float margin,
             double max_bytes = std::numeric_limits<double>::infinity(),
             const std::function<bool()>& stop = {});

  /// Bytes a node of a build with `sets` goal sets takes: the blocked, sight and
  /// wall-cell masks, and the build's scratch (open edges 1, the march's 8 + 1, the
  /// blocked nodes' sources 4), then per set a distance and a descent (4 + 8).
  static constexpr double bytes_per_node(std::size_t sets) { return 17.0 + 12.0 * sets; }

  static constexpr std::size_t kMaxNodes = std::size_t{1} << 24;

  const NavGrid& grid() const { return grid_; }
  std::size_t count() const { return dist_.size(); }
  float radius() const { return radius_; }
  /// Blocking radius max(radius, cell/2).
  float blocking_radius() const { return block_radius_; }
  /// Node distances (ny, nx) of field g (+inf where unreachable).
  std::span<const float> distance(std::size_t g) const { return dist_[g]; }
  /// The least node distance of field g: about 0 when a goal is reachable, the distance
  /// from the goals to the nearest place a body can stand when none is (a goal inside an
  /// obstacle or the inflated walls); +inf when no node is reached.
  float floor(std::size_t g) const { return floor_[g]; }
  /// Node descents (ny, nx, 2) of field g (unit or zero).
  std::span<const float> descent(std::size_t g) const { return desc_[g]; }
  /// Node blocked mask (ny, nx).
  std::span<const std::uint8_t> blocked() const { return blocked_; }

  /// Bilinear distance of field g at p (clamped to the grid; corners at +inf are left
  /// out, +inf when all four are). Pure, allocation-free.
  float distance_at(std::size_t g, Vec2 p) const;
  /// Unit descent direction of field g at p (bilinear node descents, normalised); (0, 0)
  /// where there is none. Pure, allocation-free.
  Vec2 direction_at(std::size_t g, Vec2 p) const;
  /// True when every sample of the segment a→b (every cell/2) is at least a node away from
  /// the blocked nodes: no blocked node among the 4 × 4 around the cell holding it (a thin
  /// wall's blocked nodes can lie a cell away from where a segment crosses it). From a
  /// point inside the inflated band (a corner of its cell blocked), the samples within one
  /// cell are skipped, so it still sees out. A line-of-sight test on the inflated grid;
  /// walls shorter than a cell may be missed as the grid misses them. Pure.
  bool visible(Vec2 a, Vec2 b) const;
  /// String-pulled direction of field g at p: follows the descent up to `look_ahead`
  /// (steps of one cell, at most 64), then aims at the farthest point of that trail
  /// visible from p (trying the end, 3/4, 1/2 and 1/4 of it); the plain descent when
  /// none is visible or look_ahead <= 0. Pure, allocation-free.
  Vec2 pulled_direction_at(std::size_t g, Vec2 p, float look_ahead) const;

 private:
  // Near-goal lookup entries: a point goal, or a segment goal listed in one bucket.
  struct GoalPoint {
    std::uint64_t key;
    float x, y;
  };
  struct GoalSegment {
    std::uint64_t key;
    std::uint32_t index;  // into the set's goal_segments_, in fours
  };
  /// The build's `stop`, asked about every 20 ms of work (nav_field.cpp).
  class StopPoll;
  void block(const World& world, std::uint32_t layers, StopPoll& poll);
  /// Within two cells of a point or segment goal of set g, in sight by the field's own
  /// distance d at p (d within a cell of the straight distance e, fading out by two
  /// cells): the weight w of its exact distance and direction (1 within one cell, falling
  /// to 0 at two), the goal point q nearest p; false elsewhere (the field alone).
  bool near_goal(std::size_t g, Vec2 p, float d, float& w, float& e, Vec2& q) const;
  /// A goal point's bucket (two cells square, from the grid's origin) as one sort key.
  std::uint64_t goal_bucket(double x, double y) const;
  /// The buckets segment a→b passes through (row by row, each row's span of the segment
  /// widened by a rounding's worth), sorted, for segment_buckets_.
  void add_segment_buckets(std::vector<GoalSegment>& out, std::uint32_t index, double ax, double ay,
                           double bx, double by) const;
  /// direction_at given the field's own distance d at p (field_distance_at).
  Vec2 direction_at(std::size_t g, Vec2 p, float d) const;
  /// The bilinear blend of the nodes alone (distance_at, direction_at without near_goal).
  float field_distance_at(std::size_t g, Vec2 p) const;
  /// Outside the grid's box (nothing there is an obstacle: the grid covers the world and
  /// the goals, grown by the margin): true, with the least over the points b on the box's
  /// sides facing p of |p − b| + D(b) (D linear between two free nodes) and the unit
  /// direction towards that b; (+inf, (0, 0)) when no such node is reached. False inside.
  bool outside_at(std::size_t g, Vec2 p, float& distance, Vec2& direction) const;
  Vec2 field_direction_at(std::size_t g, Vec2 p) const;
  /// sight_ from blocked_ (after block()).
  void sight_window(StopPoll& poll);
  /// Node (i, j)'s position, as every wall test of the build and the queries take it.
  Vec2 node(int i, int j) const {
    return {static_cast<float>(grid_.x0 + i * static_cast<double>(grid_.cell)),
            static_cast<float>(grid_.y0 + j * static_cast<double>(grid_.cell))};
  }
  /// Per blocked node, bit d set when the grid edge to its neighbour kNeighbours[d] crosses
  /// or touches no wall or circle of the layers, but those of a solid holding the node
  /// (the way out of it) and a wall the node lies on (left to either side).
  void open_edges(const World& world, std::uint32_t layers, std::vector<std::uint8_t>& open,
                  StopPoll& poll) const;
  /// crossed_ and cell_walls_ (after block(); before open_edges(), which reads them).
  void wall_cells(const World& world, std::uint32_t layers, StopPoll& poll);
  /// Which corners (n00, n10, n01, n11) of the cell at node n00 the point p sees: no wall
  /// or circle boundary of the cell between them (p on a wall sees both sides).
  void seen_corners(std::size_t n00, Vec2 p, bool seen[4]) const;
  void march(const World& world, std::uint32_t layers, const NavGoals& goals,
             const std::vector<std::uint8_t>& open, std::vector<double>& t,
             std::vector<std::uint8_t>& state, std::vector<float>& dist, std::vector<float>& desc,
             StopPoll& poll) const;

  NavGrid grid_;
  float radius_ = 0.0f;
  float block_radius_ = 0.0f;
  std::uint64_t serial_ = 0;  // unique to each build (outside_at's per-thread memo)
  std::vector<std::uint8_t> blocked_;
  // Per node (i, j): whether any node of [i-1, i+2] x [j-1, j+2] (clamped to the grid) is
  // blocked, the window visible() tests round each sample in the cell at (i, j): one read
  // a sample instead of sixteen.
  std::vector<std::uint8_t> sight_;
  // Per node (i, j): whether a wall or circle boundary of the field's obstacles meets the
  // cell [i, i+1] x [j, j+1]; the obstacles meeting each such cell, sorted by cell (r < 0:
  // the segment a-b; else the circle of radius r at a), with their obstacle ids.
  struct CellWall {
    std::uint32_t cell;
    std::int32_t obstacle;
    float ax, ay, bx, by, r;
  };
  std::vector<std::uint8_t> crossed_;
  std::vector<CellWall> cell_walls_;
  std::vector<std::vector<float>> dist_;
  std::vector<std::vector<float>> desc_;
  std::vector<float> floor_;  // per set, the least of dist_
  // Each set's point goals by bucket, and segment goals (ax, ay, bx, by) with the buckets
  // each passes through (a segment once per bucket), for near_goal.
  std::vector<std::vector<GoalPoint>> goal_points_;
  std::vector<std::vector<float>> goal_segments_;
  std::vector<std::vector<GoalSegment>> segment_buckets_;
};

/// Distances (N,) and unit descents (N,2) of points [begin, end) (N,2), agent/point i
/// reading field which[i] (or field 0 when `which` is empty; values outside [0, G) give
/// +inf and (0, 0)). Serial, reentrant, allocation-free.
void nav_query_rows(const NavField& field, std::span<const float> points,
                    std::span<const std::int32_t> which, std::span<float> distance,
                    std::span<float> direction, std::size_t begin, std::size_t end);
/// nav_query_rows over all N points on the thread pool. Deterministic.
void nav_query(const NavField& field, std::span<const float> points,
               std::span<const std::int32_t> which, std::span<float> distance,
               std::span<float> direction);

}  // namespace contextsteer
