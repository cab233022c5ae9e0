// SPDX-License-Identifier: MIT
// Batched closest-hit raycasts against the world, and the per-agent slot raycast (hot path).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "contextsteer/world.hpp"

namespace contextsteer {

/// Where raycast writes its results; every pointer addresses R (normal: 2R) elements.
/// Misses: distance = +inf, hit = false, normal = (0, 0), obstacle = -1.
/// Rays that start inside or on an obstacle (inside a circle or polygon, on a segment, or
/// for radius > 0 within radius of one): distance 0, hit, normal = -direction.
/// Otherwise the normal is the unit surface normal at the hit facing the ray
/// (dot(normal, direction) < 0); a ray running along a segment (collinear) gets -direction.
struct RayHitsOut {
  float* distance = nullptr;
  bool* hit = nullptr;
  float* normal = nullptr;
  std::int32_t* obstacle = nullptr;
};

/// Closest hit of rays [begin, end). origins, directions: (R, 2); directions non-zero
/// (normalised here; distances are along the unit direction); max_dist: 1 value shared by
/// all rays or R values, each finite >= 0; a hit needs distance <= max_dist. radius > 0
/// casts a circle of that radius (a thick ray). Only obstacles whose layer mask shares a
/// bit with `layers` count. Precondition world.indexed(). Pure, reentrant, allocation-free,
/// except that radius > 0 builds world.thick_grid(radius) on the first use of that radius
/// (thread-safe; call it beforehand to keep a hot loop allocation-free).
void raycast_rows(const World& world, std::span<const float> origins,
                  std::span<const float> directions, std::span<const float> max_dist, float radius,
                  std::uint32_t layers, RayHitsOut out, std::size_t begin, std::size_t end);

/// raycast_rows over all R rays, split over the thread pool. Deterministic.
void raycast(const World& world, std::span<const float> origins, std::span<const float> directions,
             std::span<const float> max_dist, float radius, std::uint32_t layers, RayHitsOut out);

/// How slot_raycast finds the walls of an agent's K rays.
/// kStrips (fixed slot directions, no headings): per slot direction, the obstacles sorted
/// into strips parallel to it (World::strips(), built once per slot set and radius); a ray
/// scans the few entries of its strip that lie ahead of it. kAuto uses it whenever there
/// are no headings and the index fits its memory budget, otherwise:
/// kGather: collect the walls in the agent's look-ahead disc once from the grid, then test
/// all K rays against that list in branch-free loops (SIMD-friendly; wins for short
/// look-ahead). kPerRay: walk the grid cells along each ray (DDA; wins when the look-ahead
/// covers many cells). kAuto chooses by the number of cells the look-ahead disc covers.
/// kSectors (thin rays, radius 0, any directions: the rotated slots of headings): per
/// cell and sector of directions, the walls a ray from there can meet, cut into pieces a
/// ray's line crosses at most once (World::sectors(), sector_index.hpp); a ray searches its
/// one or two pieces instead of walking. Built on first use with kSectors; kAuto uses it
/// for thin rotated rays once it is built, and builds it once the thin rotated rays walked
/// on the world have cost about what the build does. Worlds with circles in the rays'
/// layers, look-aheads beyond the index's reach and origins outside its box walk instead.
/// Every mode returns the same distances.
enum class SlotMode : std::uint8_t { kAuto, kGather, kPerRay, kStrips, kSectors };

namespace detail {
/// Constants of a grid walk along one unit direction (dx, dy) over one grid, independent of
/// the ray's origin (computed by the grid walk, cpp/src/grid_walk.hpp; slot_raycast_rows
/// keeps one per slot).
struct WalkDir {
  double dx = 0.0, dy = 0.0;     ///< unit direction
  double idx = 0.0, idy = 0.0;   ///< 1 / dx, 1 / dy (+inf for 0)
  double bxh = 0.0, byh = 0.0;   ///< cell / dx, cell / dy (0 for a zero component)
  double tdx = 0.0, tdy = 0.0;   ///< cell / |dx|, cell / |dy| (+inf for a zero component)
  int stepx = 0, stepy = 0;      ///< signs of dx, dy
  int offx = 0, offy = 0;        ///< stepx > 0, stepy > 0
  int qx = 1, qy = 1, quad = 3;  ///< quadrant of the direction (see WorldGrid::quadrant)
};
}  // namespace detail

/// Per-thread working memory of slot_raycast_rows. Sized once by the caller (reserve) and
/// reused for every call on that thread; the kernel never allocates.
struct SlotScratch {
  static constexpr std::size_t kBatch = 256;  ///< walls tested per flush of the gather list
  std::vector<double> dx, dy, best;           ///< K rotated unit directions and running minima
  std::vector<detail::WalkDir> dirs;  ///< K walk constants (shared by all agents without headings)
  double ax[kBatch], ay[kBatch], bx[kBatch], by[kBatch], c[kBatch];  ///< gathered walls
  std::size_t count = 0;
  /// Set by slot_raycast, which counts its rays towards the automatic sector build itself
  /// (see SlotMode::kSectors); a caller of slot_raycast_rows leaves it false.
  bool sectors_counted = false;
  /// Makes room for K slots (allocates; call outside the hot loop).
  void reserve(std::size_t k) {
    dx.resize(k);
    dy.resize(k);
    best.resize(k);
    dirs.resize(k);
  }
};

/// Distances of every slot ray of agents [begin, end): agent i casts K rays from
/// positions[i] (N, 2) along slot_directions (K, 2, unit) rotated counter-clockwise by
/// headings[i] (radians; headings empty = no rotation), up to look_ahead (1 shared value or
/// N values, finite >= 0). Writes out[i * K + j] (N, K): the closest hit distance or +inf.
/// radius > 0 casts circles. Same hits as raycast on the expanded rays (same maths, bit for bit).
/// Precondition world.indexed(), scratch.reserve(K) done. Reentrant, allocation-free once
/// its cached indexes exist: without headings (kAuto, kStrips) the strip index of the slot
/// set and radius, world.strips(); otherwise, for radius > 0, world.thick_grid(radius).
/// Both are built on first use (thread-safe).
void slot_raycast_rows(const World& world, std::span<const float> positions,
                       std::span<const float> slot_directions, std::span<const float> look_ahead,
                       std::span<const float> headings, float radius, std::uint32_t layers,
                       std::span<float> out, std::size_t begin, std::size_t end,
                       SlotScratch& scratch, SlotMode mode = SlotMode::kAuto);

/// slot_raycast_rows over all N agents, split over the thread pool (one scratch per thread).
/// Builds the indexes it needs first (over the pool): the strip index, and the sector index
/// (kSectors, or kAuto once the rays walked have paid for it, counting these N K rays)
/// unless `prepared` says slot_raycast_prepare already did for a call these rays belong to.
void slot_raycast(const World& world, std::span<const float> positions,
                  std::span<const float> slot_directions, std::span<const float> look_ahead,
                  std::span<const float> headings, float radius, std::uint32_t layers,
                  std::span<float> out, SlotMode mode = SlotMode::kAuto, bool prepared = false);

/// The sector index slot_raycast would build for rays of these look-aheads (all of one call
/// that is then cast in slices, each slot_raycast(..., prepared = true)): built now with
/// kSectors, or with kAuto and headings once the rays walked (`rays` counted here) have paid
/// for it, for the longest look-ahead. Thread-safe.
void slot_raycast_prepare(const World& world, std::span<const float> look_ahead, bool headings,
                          float radius, std::uint32_t layers, std::size_t rays, SlotMode mode);

}  // namespace contextsteer
