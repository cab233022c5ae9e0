// SPDX-License-Identifier: MIT
// Internal: the strip index of a fixed slot set (World::strips()) and the slot rays cast on it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "contextsteer/world.hpp"

namespace contextsteer {

/// Obstacles sorted for rays along one fixed unit direction d ("strips"; see
/// slot_raycast_rows). Coordinates of a point p: u = dot(d, p) along d and v = cross(d, p) =
/// dx py - dy px across it. The plane is cut into strips of width h parallel to d: strip k
/// holds v in [v0 + k h, v0 + (k + 1) h). A ray from o along d keeps v = v(o), so it meets
/// only the obstacles listed in the strip of v(o), and it meets them in order of u. Each
/// strip lists every obstacle that comes within the cast radius (plus a rounding slack) of
/// it, as an entry with the interval [umin, umax] of u that the obstacle's part near the
/// strip covers (grown by the radius and the slack), sorted by umax; rest_umin is the
/// smallest umin of the entry and all entries after it, so a scan may stop as soon as the
/// rest lies beyond the best hit.
struct DirectionStrips {
  double dx = 0.0, dy = 0.0;        ///< the direction (float32 values)
  double v0 = 0.0;                  ///< v at the lower edge of strip 0
  double v1 = -1.0;                 ///< largest v listed (v0 + count h is beyond it)
  double inv_h = 0.0;               ///< 1 / strip width
  int count = 0;                    ///< strips (0: no obstacle)
  std::vector<std::int32_t> start;  ///< strip k owns entries [start[k], start[k + 1])
  struct Entry {
    float umax;         ///< upper end of the entry's u interval (sort key)
    float rest_umin;    ///< min of umin over this and every later entry of the strip
    float umin;         ///< lower end of the entry's u interval
    std::int32_t prim;  ///< segment row (>= 0) or -1 - circle row
  };
  std::vector<Entry> entries;
};

/// The strips of every direction of a fixed slot set, for casts of one radius.
struct SlotStrips {
  float radius = 0.0f;  ///< cast radius the intervals are grown by (0: thin rays)
  double scale = 0.0;   ///< max |coordinate| of the geometry plus the radius (for the slack)
  double width = 0.0;   ///< strip width h
  std::vector<DirectionStrips> dirs;  ///< one per slot direction
  std::size_t bytes() const {
    std::size_t b = 0;
    for (const auto& d : dirs)
      b += d.start.size() * 4 + d.entries.size() * sizeof(DirectionStrips::Entry);
    return b;
  }
};

}  // namespace contextsteer

namespace contextsteer::detail {

/// The strips (DirectionStrips) of the K unit directions sd (2K floats) for casts of
/// `radius` (0: thin rays); nullptr when they would take more than the index's memory
/// budget (64 MB), then the slot rays walk the grid. Allocates; runs over the thread pool.
std::unique_ptr<const SlotStrips> build_strips(const World& w, std::span<const float> sd,
                                               float radius);

/// The K slot rays of agents [begin, end) on `strips` (built by build_strips for the slot
/// set and radius the caller casts): out[i * K + j] the closest hit distance up to
/// look_ahead (1 shared or N values, inclusive), or +inf; 0 for an agent inside a polygon.
/// Same hits as the grid walk bit for bit (same exact tests). Pure, allocation-free.
void strip_rows(const World& world, const SlotStrips& strips, std::span<const float> positions,
                std::span<const float> look_ahead, std::uint32_t layers, std::span<float> out,
                std::size_t begin, std::size_t end);

}  // namespace contextsteer::detail
