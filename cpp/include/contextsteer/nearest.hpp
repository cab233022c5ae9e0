// SPDX-License-Identifier: MIT
// Batched nearest-wall and point-inside queries against the world.
#pragma once

#include <cstdint>
#include <span>

#include "contextsteer/world.hpp"

namespace contextsteer {

/// Where nearest writes its results; pointers address N (point, normal: 2N) elements.
/// Hit: distance to the closest point on any wall (segment or circle boundary) within
/// max_dist (inclusive), that point, the unit normal from it toward the query point (for a
/// query point exactly on the wall: the segment's left normal, i.e. its direction turned
/// counter-clockwise, or the circle's outward normal) and the obstacle id.
/// Miss: distance = +inf, point = (0, 0), normal = (0, 0), obstacle = -1.
struct NearestOut {
  float* distance = nullptr;
  float* point = nullptr;
  float* normal = nullptr;
  std::int32_t* obstacle = nullptr;
};

/// Nearest wall point of points [begin, end) (N, 2) within max_dist (finite >= 0).
/// Searches grid rings outward from the point's cell. Precondition world.indexed().
/// Pure, reentrant, allocation-free.
void nearest_rows(const World& world, std::span<const float> points, float max_dist,
                  std::uint32_t layers, NearestOut out, std::size_t begin, std::size_t end);

/// Nearest-wall answers found ahead of time, one per point (N,): for the layers `layers`
/// and any max_dist <= reach[i], nearest_rows at point i reports (distance[i],
/// normal[2i..2i+1], obstacle[i]) when distance[i] < max_dist and a miss when
/// distance[i] > max_dist (+inf: no wall within reach[i]); when they are equal it must be
/// asked. reach[i] < 0: nothing known. (The ring search visits the same cells in the same
/// order whatever max_dist, and stops only beyond max_dist, so a larger max_dist finds
/// the same nearest wall when it lies within the smaller one.)
struct NearestWalls {
  float* distance = nullptr;
  float* normal = nullptr;
  std::int32_t* obstacle = nullptr;
  float* reach = nullptr;
  std::uint32_t layers = 0;
};

/// nearest_rows over all N points on the thread pool. Deterministic.
void nearest(const World& world, std::span<const float> points, float max_dist,
             std::uint32_t layers, NearestOut out);

/// out[i] = points[i] lies in the closed interior of a polygon, box or circle (in the
/// layers); segments and polylines have no interior. Precondition world.indexed().
void inside_rows(const World& world, std::span<const float> points, std::uint32_t layers, bool* out,
                 std::size_t begin, std::size_t end);

/// inside_rows over all N points on the thread pool.
void inside(const World& world, std::span<const float> points, std::uint32_t layers, bool* out);

}  // namespace contextsteer
