// SPDX-License-Identifier: MIT
// Internal: the sector index of thin slot rays in any direction (World::sectors()) and the
// slot rays cast on it without a walk.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "contextsteer/raycast.hpp"
#include "contextsteer/world.hpp"

namespace contextsteer {

/// Walls sorted for thin rays of any direction up to a reach R, from any origin in a box
/// ("sectors"; see docs/performance.md, "Rays"). The box is cut into square cells and the
/// directions into kBins sectors (bins of the diamond angle). For every cell and sector the
/// index lists each wall that a ray from a point of the cell, in a direction of the sector,
/// can meet within R. The list is cut into pieces: runs of walls joined end to end (b of one
/// wall is a of the next, bit for bit) that every point of the cell sees strictly from one
/// side, turning one way through less than a half turn. A ray's line then crosses such a
/// piece at most once, so the side of the ray's line on which each vertex lies changes at
/// most once along it, and a search on the vertices finds the one wall the ray can meet
/// there. A wall that fits no piece is listed alone ("loose") and tested as it is. Every
/// candidate takes the grid walk's exact test (ray_segment on the same float coordinates),
/// so the hits are those of raycast bit for bit; the pieces only decide what is tested.
struct SectorIndex {
  static constexpr int kBins = 128;
  /// A cell-and-sector record: one piece (start, len), or with kMany in len the pieces
  /// [start, start + (len & ~kMany)) of ps / pl; an empty list is kMany with no piece.
  struct Rec {
    std::uint32_t start, len;
  };
  static constexpr std::uint32_t kMany = 0x40000000u;
  /// A piece's length with kLoose: walls [start, start + (len & ~kLoose)) tested one by one.
  static constexpr std::uint32_t kLoose = 0x80000000u;

  std::uint32_t layers = 0;  ///< the layer mask whose walls are listed
  float reach = 0.0f;        ///< R: rays up to this length may use the index
  /// Thick rays (discs swept along the ray) up to this radius may use it: each cell is
  /// grown by it for the lists and the pieces (0: thin rays only).
  float radius = 0.0f;
  /// Margin of the thick search's side classes (metres): more than the rounding of a side
  /// value anywhere in the box, less than the growth beyond the radius.
  double band_eps = 0.0;
  double x0 = 0.0, y0 = 0.0, cell = 0.0;
  float fx0 = 0.0f, fy0 = 0.0f, inv_cell = 0.0f;  ///< the same, for the cell lookup
  std::int32_t nx = 0, ny = 0;
  /// The listed walls (the world's segments in the layers, in order): a and b as (x, y)
  /// doubles of the float coordinates.
  std::vector<double> va, vb;
  std::vector<Rec> rec;  ///< (cell * kBins + bin)
  std::vector<std::uint32_t> ps, pl;
  double pad = 0.0;  ///< how far outside its cell an origin read from it may lie
  std::size_t walls = 0, pieces = 0, loose = 0;
  std::size_t bytes() const {
    return (va.size() + vb.size()) * 8 + rec.size() * sizeof(Rec) + (ps.size() + pl.size()) * 4;
  }
};

}  // namespace contextsteer

namespace contextsteer::detail {

/// The sector index of the world's segments in `layers` for rays up to `reach`; nullptr
/// when it does not apply (circles in the layers, no segment, reach 0) or would exceed its
/// memory budget (64 MB). Allocates; runs over the thread pool.
std::unique_ptr<const SectorIndex> build_sectors(const World& w, std::uint32_t layers, float reach,
                                                 float radius = 0.0f);

/// The index to cast slot rays of length up to `reach` in `layers` on, thin or of
/// `radius` (its rung, sector_radius, is what is looked up), or nullptr
/// (walk the grid): with `force` (SlotMode::kSectors) it is built now if not cached; else
/// only a cached one is returned, and `rays` (the rays the caller is about to walk) count
/// towards the automatic build (sector_index.cpp, kAutoRays), which runs once enough
/// rays have been walked to have paid for it. Thread-safe.
const SectorIndex* sectors_for(const World& w, std::uint32_t layers, float reach, float radius,
                               std::size_t rays, bool force);

/// The radius an index is built for when rays of `radius` need one: the next step of a
/// quarter-octave ladder (2^(n/4) m), so agents of slightly different radii share one.
float sector_radius(float radius);

/// One agent's K rays (unit directions dx, dy, float32 values) from (ox, oy), inside the
/// index's box, L <= reach: best[j] the closest hit distance in double (the walk's Best.t),
/// or a value above L for none. The AVX2 path when use_avx2(), else one ray at a time;
/// both give the walk's double distances bit for bit.
void sector_agent(const SectorIndex& idx, float ox, float oy, const double* dx, const double* dy,
                  std::size_t k, float L, double* best);

/// sector_agent for thick rays of radius r (0 < r <= idx.radius): best[j] the least
/// ray_capsule(..., tmax = L's next double) over the walls, the walk's double distance, or
/// a value above L for none. Candidates from each piece's band search with a lower bound
/// of their entries: each ray's least-bound candidate solved first, then every other whose
/// bound can still lower its best; the bounds and solves in AVX2 double lanes where
/// use_avx2() and not `scalar` (the tests' switch), with the same bits either way.
void sector_agent_thick(const SectorIndex& idx, float ox, float oy, const double* dx,
                        const double* dy, std::size_t k, float L, float r, double* best,
                        bool scalar = false);

/// One wall of the build, in double.
struct SectorWall {
  double ax, ay, bx, by;
};

/// Cuts the run of walls [start, end) of `w` (consecutive in the index) into pieces for the
/// cell whose padded corners are (qx[q], qy[q]), appended to ps / pl (SectorIndex's
/// encoding; entries from `from` on are the cell's own, so loose walls join only those):
/// a piece is walls joined end to end (bit for bit), each with all four corners more than
/// kSideMargin times its length on one side of its line, the same side for all, and the
/// chord from the piece's first vertex to its last turning the same way from every corner
/// by that margin; a wall that starts no piece is loose. Counts pieces and loose walls.
void cut_sector_run(const std::vector<SectorWall>& w, std::uint32_t start, std::uint32_t end,
                    const double qx[4], const double qy[4], std::vector<std::uint32_t>& ps,
                    std::vector<std::uint32_t>& pl, std::size_t from, std::size_t& pieces,
                    std::size_t& loose);

/// sector_agent's one-ray-at-a-time path (what it runs without AVX2; exposed for the tests).
void sector_agent_scalar(const SectorIndex& idx, float ox, float oy, const double* dx,
                         const double* dy, std::size_t k, float L, double* best);

/// Whether (ox, oy) lies in the index's box (finite, in a cell).
inline bool sector_inside(const SectorIndex& idx, float ox, float oy) {
  const float fx = (ox - idx.fx0) * idx.inv_cell, fy = (oy - idx.fy0) * idx.inv_cell;
  return fx >= 0.0f && fy >= 0.0f && fx < static_cast<float>(idx.nx) &&
         fy < static_cast<float>(idx.ny);
}

}  // namespace contextsteer::detail
