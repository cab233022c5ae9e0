// SPDX-License-Identifier: MIT
// The static world: walls (segments), circles and polygon rings in flat arrays, plus a uniform grid.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <span>
#include <utility>
#include <vector>

#include "contextsteer/common.hpp"

namespace contextsteer {

/// Layer mask that selects every obstacle.
inline constexpr std::uint32_t kAllLayers = 0xFFFFFFFFu;

/// What an obstacle id was created from.
enum class ObstacleKind : std::uint8_t { kSegment, kPolyline, kPolygon, kBox, kCircle };

/// Uniform grid over the world's bounds. Every segment (and circle) is listed in each cell
/// its axis-aligned bounding box overlaps ("AABB registration"); the lists are stored in
/// cell order as CSR arrays, with the segment coordinates copied next to each entry so a
/// query streams through contiguous memory.
///
/// Why a uniform grid (with empty-space skipping) and not a BVH: walls in steering scenes
/// (tracks, corridors, rooms) are short segments spread evenly along curves, and queries are
/// short rays from points inside the scene. A grid answers such a ray by jumping over empty
/// space (see `clearance`) to the wall band and testing the few segments of 2-4 cells there;
/// a BVH descends ~log2(M) levels for every ray. On the racetrack benchmark scene
/// (benchmarks/scenes.py "track-M-L", M = 10000 walls, look-ahead 50, one thread; measured
/// with benchmarks/bench_world_index.py and benchmarks/peers) the grid casts ~6.5 M rays/s
/// (raycast) and ~8 M (slot_raycast) against ~2.2 M for Box2D 2.4's dynamic AABB tree and
/// ~0.04 M for brute force. The cell size is chosen from the geometry (about 20 cells per
/// primitive, see build_index()). A BVH would win on worlds of wildly varying density (a
/// few huge walls next to millions of tiny ones); that is not the target workload. Slot
/// rays along a fixed slot set skip the grid altogether: they read the set's
/// strip index (cpp/src/strip_index.hpp).
///
/// Duplicates: a segment listed in several cells is tested more than once by a walk over
/// cells. Range queries dedupe exactly with the "owner cell" rule: in a query rectangle
/// [qx0, qx1] x [qy0, qy1] an entry is used only in cell (max(cx0, qx0), max(cy0, qy0)),
/// where (cx0, cy0) is the lowest cell of the entry's own box (stored per entry).
struct WorldGrid {
  float x0 = 0.0f;  ///< lower-left corner of cell (0, 0)
  float y0 = 0.0f;
  float cell = 1.0f;      ///< cell edge length (world units)
  float inv_cell = 1.0f;  ///< 1 / cell
  int nx = 0;             ///< cells along x (0 when the world is empty)
  int ny = 0;             ///< cells along y

  // Segment entries, cell c owns [seg_start[c], seg_start[c + 1]).
  std::vector<std::int32_t> seg_start;
  std::vector<float> ax, ay, bx, by;           ///< endpoints a, b of each entry
  std::vector<std::int32_t> seg_index;         ///< entry -> segment (row of World::walls())
  std::vector<std::uint32_t> seg_layers;       ///< entry -> layer mask of its obstacle
  std::vector<std::int32_t> seg_cx0, seg_cy0;  ///< lowest cell of the segment's box

  /// The segment entries of each cell again, in blocks of 4 (one cache line and a half):
  /// what the thin-ray cell loop reads, so a tested cell costs one or two cache misses
  /// instead of one per array. Lanes past a cell's last entry have layers = 0.
  struct alignas(16) SegBlock {
    float ax[4], ay[4], bx[4], by[4];  ///< endpoints
    std::uint32_t layers[4];           ///< layer masks (0: padding lane)
    std::int32_t index[4];             ///< segment rows
  };
  std::vector<SegBlock> seg_blocks;
  std::vector<std::int32_t>
      block_start;  ///< cell c owns blocks [block_start[c], block_start[c + 1])

  // Circle entries, same layout.
  std::vector<std::int32_t> circ_start;
  std::vector<float> cx, cy, cr;
  std::vector<std::int32_t> circ_index;
  std::vector<std::uint32_t> circ_layers;
  std::vector<std::int32_t> circ_cx0, circ_cy0;

  /// Per cell: Chebyshev distance (in cells, capped at 255) to the nearest cell that lists
  /// a segment or circle; 0 for such cells. A walk may jump over the empty square of
  /// half-width clearance - 1 around a cell ("empty-space skipping").
  std::vector<std::uint8_t> clearance;
  /// Per cell and quadrant q (bit 0: +x, bit 1: +y; 4 bytes a cell): side (in cells, capped
  /// at 255) of the largest empty square that has this cell as its corner and extends
  /// toward the quadrant; 0 for non-empty cells. A thin ray moving into that quadrant stays
  /// in it, so it may jump to where it leaves the square: walls behind a ray do not limit
  /// its jump, unlike the symmetric `clearance`.
  std::vector<std::uint8_t> quadrant;

  // Polygon bounding boxes (for inside tests): entries are polygon numbers.
  std::vector<std::int32_t> poly_start;
  std::vector<std::int32_t> poly_index;

  /// Cell column of x, clamped to [0, nx - 1].
  int col(float x) const {
    float f = (x - x0) * inv_cell;
    if (!(f >= 0.0f)) return 0;
    if (f >= static_cast<float>(nx - 1)) return nx - 1;
    return static_cast<int>(f);
  }
  /// Cell row of y, clamped to [0, ny - 1].
  int row(float y) const {
    float f = (y - y0) * inv_cell;
    if (!(f >= 0.0f)) return 0;
    if (f >= static_cast<float>(ny - 1)) return ny - 1;
    return static_cast<int>(f);
  }
  bool empty() const { return nx == 0; }
};

/// Cache of the inflated grids of a World (see World::thick_grid). Copies start empty (the
/// grids are derived data, rebuilt on demand); every access takes the mutex.
class ThickGridCache {
 public:
  ThickGridCache() = default;
  ThickGridCache(const ThickGridCache&) {}
  ThickGridCache& operator=(const ThickGridCache&) {
    clear();
    return *this;
  }
  /// The grid cached for radius r, or the one `build()` returns (then cached) when there is
  /// room; nullptr when the cache already holds kMaxRadii other radii.
  template <class Build>
  const WorldGrid* get(float r, Build build) const {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& [radius, grid] : grids_)
      if (radius == r) return grid.get();
    if (grids_.size() >= kMaxRadii) return nullptr;
    grids_.emplace_back(r, std::make_unique<WorldGrid>(build()));
    return grids_.back().second.get();
  }
  void clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    grids_.clear();
  }
  /// Radii of the grids held, in order of construction.
  std::vector<float> radii() const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<float> r;
    for (const auto& e : grids_) r.push_back(e.first);
    return r;
  }
  static constexpr std::size_t kMaxRadii = 4;  ///< distinct radii kept (agent radius, paddings)

 private:
  mutable std::mutex mutex_;
  mutable std::vector<std::pair<float, std::unique_ptr<const WorldGrid>>> grids_;
};

/// The strip index of one fixed slot set and cast radius (internal: strip_index.hpp).
struct SlotStrips;

/// Cache of the strip indexes of a World, one per (set of K fixed slot directions, radius),
/// built by the caller's `build()` on first use; `build()` may return nullptr (too large),
/// which is cached too. Copies start empty (derived data); every access takes the mutex.
class StripCache {
 public:
  StripCache() = default;
  StripCache(const StripCache&) {}
  StripCache& operator=(const StripCache&) {
    clear();
    return *this;
  }
  /// The index cached for the directions `dirs` (2K floats, compared bit for bit) and
  /// radius, or the one `build()` returns (then cached) when there is room; nullptr when
  /// the cache already holds kMaxSets other entries or the build declined. It lives until
  /// clear().
  /// The build runs without the cache's lock held: it uses the thread pool, and a thread
  /// holding this lock while waiting for the pool (whose setup another thread may hold
  /// while it waits for a job that is waiting for this lock) could deadlock. Two threads
  /// asking for the same new entry may both build it; the first stored is kept.
  template <class Build>
  const SlotStrips* get(std::span<const float> dirs, float radius, Build build) const {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (const Entry* hit = find(dirs, radius)) return hit->strips.get();
      if (sets_.size() >= kMaxSets) return nullptr;
    }
    std::shared_ptr<const SlotStrips> built(build());
    std::lock_guard<std::mutex> lock(mutex_);
    if (const Entry* hit = find(dirs, radius)) return hit->strips.get();
    if (sets_.size() >= kMaxSets) return nullptr;
    sets_.push_back({std::vector<float>(dirs.begin(), dirs.end()), radius, std::move(built)});
    return sets_.back().strips.get();
  }
  void clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    sets_.clear();
  }
  /// What an entry holds: its slot count and radius; built = false when the build declined
  /// (then width and bytes are 0).
  struct Info {
    std::size_t slots;
    float radius;
    bool built;
    double width;
    std::size_t bytes;
  };
  /// The entries held, in order of construction (defined in strip_index.cpp).
  std::vector<Info> info() const;
  static constexpr std::size_t kMaxSets = 4;  ///< distinct (slot set, radius) pairs kept

 private:
  static bool bit_equal(float a, float b) {
    std::uint32_t x, y;
    std::memcpy(&x, &a, 4);
    std::memcpy(&y, &b, 4);
    return x == y;
  }
  struct Entry {
    std::vector<float> dirs;
    float radius;
    std::shared_ptr<const SlotStrips> strips;  // shared_ptr: SlotStrips is incomplete here
  };
  /// The entry for (dirs, radius), or nullptr; the caller holds mutex_.
  const Entry* find(std::span<const float> dirs, float radius) const {
    for (const auto& e : sets_)
      if (bit_equal(e.radius, radius) && e.dirs.size() == dirs.size() &&
          std::equal(dirs.begin(), dirs.end(), e.dirs.begin(),
                     [](float a, float b) { return bit_equal(a, b); }))
        return &e;
    return nullptr;
  }
  mutable std::mutex mutex_;
  mutable std::vector<Entry> sets_;
};

/// The sector index of thin slot rays in any direction (internal: sector_index.hpp).
struct SectorIndex;

/// Cache of the sector indexes of a World, one per (layer mask, reach), and the count of
/// thin rotated slot rays walked so far, by which 'auto' decides when to build one
/// (sector_index.cpp). An entry may hold nullptr (the build declined). Copies start empty
/// (derived data); thread-safe.
class SectorCache {
 public:
  SectorCache() = default;
  SectorCache(const SectorCache&) {}
  SectorCache& operator=(const SectorCache&) {
    clear();
    return *this;
  }
  /// Whether an entry for `layers` reaching at least `reach`, built for thick rays of
  /// `radius` (a rung of sector_radius; 0 for thin rays), is held; `out` its index
  /// (nullptr when its build declined).
  bool find(std::uint32_t layers, float reach, float radius, const SectorIndex*& out) const {
    std::lock_guard<std::mutex> lock(mutex_);
    const Entry* e = find_locked(layers, reach, radius);
    if (e) out = e->index.get();
    return e != nullptr;
  }
  /// Keeps `index` for (layers, reach, radius) unless an entry covering it is held or the
  /// cache is full (kMaxSets); returns the index held for them, or nullptr.
  const SectorIndex* store(std::uint32_t layers, float reach, float radius,
                           std::shared_ptr<const SectorIndex> index) const {
    std::lock_guard<std::mutex> lock(mutex_);
    if (const Entry* e = find_locked(layers, reach, radius)) return e->index.get();
    if (sets_.size() >= kMaxSets) return nullptr;
    sets_.push_back({layers, reach, radius, std::move(index)});
    return sets_.back().index.get();
  }
  /// The longest reach held for (layers, radius), 0 for none.
  float longest_reach(std::uint32_t layers, float radius) const {
    std::lock_guard<std::mutex> lock(mutex_);
    float r = 0.0f;
    for (const auto& e : sets_)
      if (e.layers == layers && e.radius == radius) r = std::max(r, e.reach);
    return r;
  }
  /// Whether another entry can be kept (fewer than kMaxSets held).
  bool room() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return sets_.size() < kMaxSets;
  }
  /// Adds n rays of `radius` (a rung) walked; their total since the last clear().
  std::uint64_t add_walked(float radius, std::uint64_t n) const {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& [r, count] : walked_)
      if (r == radius) return count += n;
    walked_.emplace_back(radius, n);
    return n;
  }
  /// Claims the one build under way (false: another thread is building); end_build()
  /// releases it.
  bool begin_build() const { return !building_.exchange(true); }
  /// Counts a build (kept or not); builds() is the count since the last clear().
  void count_build() const { builds_.fetch_add(1); }
  std::uint64_t builds() const { return builds_.load(); }
  void end_build() const { building_.store(false); }
  void clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    sets_.clear();
    walked_.clear();
    builds_.store(0);
  }
  /// What an entry holds (built = false when the build declined; then the rest is 0).
  struct Info {
    std::uint32_t layers;
    float reach, radius;
    bool built;
    double cell;
    int bins;
    std::size_t bytes, walls, pieces, loose;
  };
  /// The entries held, in order of construction (defined in sector_index.cpp).
  std::vector<Info> info() const;
  static constexpr std::size_t kMaxSets = 4;  ///< distinct (layers, reach, radius) entries kept

 private:
  struct Entry {
    std::uint32_t layers;
    float reach, radius;
    std::shared_ptr<const SectorIndex> index;  // shared_ptr: SectorIndex is incomplete here
  };
  const Entry* find_locked(std::uint32_t layers, float reach, float radius) const {
    for (const auto& e : sets_)
      if (e.layers == layers && e.reach >= reach && e.radius == radius) return &e;
    return nullptr;
  }
  mutable std::mutex mutex_;
  mutable std::vector<Entry> sets_;
  mutable std::vector<std::pair<float, std::uint64_t>> walked_;  // per radius
  mutable std::atomic<bool> building_{false};
  mutable std::atomic<std::uint64_t> builds_{0};
};

/// The static world. Geometry is validated by the caller (the bindings): finite coordinates,
/// non-zero segment lengths, radii >= 0, polygons with >= 3 points. Obstacle ids are dense,
/// 0, 1, 2, ... in order of addition. Every add_* marks the grid dirty; build_index() rebuilds
/// it (queries require indexed()). Copying a World copies its storage (the bindings copy on
/// write so arrays handed out earlier never change).
class World {
 public:
  /// Adds M segments, xy = M * 4 floats (ax, ay, bx, by); one obstacle per segment.
  /// Returns the id of the first new obstacle (the others follow consecutively).
  std::int32_t add_segments(std::span<const float> xy, std::uint32_t layers);
  /// Adds one polyline obstacle through P >= 2 points (2P floats); closed adds the edge
  /// back to the first point. Returns its id.
  std::int32_t add_polyline(std::span<const float> points, bool closed, std::uint32_t layers);
  /// Adds one simple polygon (closed ring of P >= 3 points, either orientation) whose
  /// interior counts for inside(). Returns its id.
  std::int32_t add_polygon(std::span<const float> ring, std::uint32_t layers);
  /// Adds one polygon with holes: the outer ring, then each hole (2H_k floats, >= 3 points),
  /// one obstacle. Its rings are consecutive entries of ring_start() with the same obstacle
  /// id; its interior (for polygon_at) is where the rings' crossing counts add up odd.
  std::int32_t add_polygon(std::span<const float> ring,
                           const std::vector<std::span<const float>>& holes, std::uint32_t layers);
  /// Adds a box (a polygon) with the given centre, half extents > 0 and rotation angle
  /// (radians, counter-clockwise). Returns its id.
  std::int32_t add_box(Vec2 center, Vec2 half_extents, float angle, std::uint32_t layers);
  /// An axis-aligned box given by its corners lo < hi (a box obstacle, as add_box makes):
  /// boxes that share an edge share its coordinates bit for bit (an occupancy grid's
  /// rectangles), which centres and half extents in float32 cannot always give.
  std::int32_t add_rect(Vec2 lo, Vec2 hi, std::uint32_t layers);
  /// Adds C circles (centres 2C floats, radii C floats >= 0), one obstacle each.
  /// Returns the id of the first.
  std::int32_t add_circles(std::span<const float> centers, std::span<const float> radii,
                           std::uint32_t layers);

  /// Sets the layer mask of the obstacles `ids` (each in [0, obstacle_count()), checked by
  /// the caller): 0 hides an obstacle from every query (a door opened), its old mask shows
  /// it again. Ids and geometry are unchanged; the grid is rebuilt on the next build_index().
  void set_layers(std::span<const std::int32_t> ids, std::uint32_t layers);
  std::size_t segment_count() const { return wall_obstacle_.size(); }
  std::size_t circle_count() const { return circle_obstacle_.size(); }
  std::size_t polygon_count() const { return polygon_obstacle_.size(); }
  std::size_t obstacle_count() const { return obstacle_layers_.size(); }

  /// Segments as (M, 4) rows ax, ay, bx, by.
  std::span<const float> walls() const { return walls_; }
  /// Obstacle id of each segment (M,).
  std::span<const std::int32_t> wall_obstacle() const { return wall_obstacle_; }
  /// Circle centres (C, 2), radii (C,), obstacle ids (C,).
  std::span<const float> circle_centers() const { return circle_centers_; }
  std::span<const float> circle_radii() const { return circle_radii_; }
  std::span<const std::int32_t> circle_obstacle() const { return circle_obstacle_; }
  /// Polygon rings: every polygon ring's vertices (2 floats each), ring k owning points
  /// [ring_start()[k], ring_start()[k + 1]); its obstacle id (a polygon with holes has one
  /// ring entry per ring, consecutive, with one id: the first is the outer ring).
  std::span<const float> ring_points() const { return ring_points_; }
  std::span<const std::int32_t> ring_start() const { return ring_start_; }
  std::span<const std::int32_t> polygon_obstacle() const { return polygon_obstacle_; }
  /// Layer mask and kind of each obstacle.
  std::span<const std::uint32_t> obstacle_layers() const { return obstacle_layers_; }
  std::span<const ObstacleKind> obstacle_kind() const { return obstacle_kind_; }

  /// Bounding box of all geometry as (xmin, ymin, xmax, ymax); false when empty.
  bool bounds(float out[4]) const;

  /// Cell size of the grid: 0 (default) picks it from the geometry, see build_index().
  void set_cell_size(float cell);
  float cell_size() const { return cell_size_; }

  /// True when the grid matches the geometry.
  bool indexed() const { return indexed_; }
  /// A number unique to each build_index() (over all worlds): a result derived from the
  /// geometry (a wall distance bound, say) stays valid while it is unchanged.
  std::uint64_t index_generation() const { return index_generation_; }
  /// Rebuilds the grid (allocates; O(entries)). Not thread-safe with concurrent queries.
  void build_index();
  /// The grid; precondition indexed().
  const WorldGrid& grid() const { return grid_; }
  /// Grid for thick rays of radius r > 0 ("inflated grid"): every segment and circle is
  /// listed in each cell its box grown by r overlaps, so a circle of radius r swept along a
  /// ray touches an obstacle only at points whose cell lists it, and a thick ray walks it
  /// cell by cell like a thin ray (with `clearance` / `quadrant` skipping). Cell size
  /// max(grid().cell, r / 2). Built on first use for a radius and cached (up to
  /// ThickGridCache::kMaxRadii radii; rebuilt after build_index()); nullptr when the cache
  /// is full, then callers use the plain grid. Thread-safe. Precondition indexed().
  const WorldGrid* thick_grid(float r) const;

  /// Cache of the strip indexes of fixed slot sets (filled by strip_index.cpp; emptied by
  /// build_index()). Thread-safe.
  const StripCache& strips() const { return strips_; }
  /// Cache of the sector indexes of thin slot rays in any direction (filled by
  /// sector_index.cpp; emptied by build_index()). Thread-safe.
  const SectorCache& sectors() const { return sectors_; }
  /// Radii of the inflated grids built so far (see thick_grid). Thread-safe.
  std::vector<float> thick_radii() const { return thick_.radii(); }

  /// Id of a polygon (in the layers) whose closed interior contains p, or -1. Pure,
  /// allocation-free; O(vertices) of the polygons whose box contains p. Precondition indexed().
  /// With `all`, every such polygon's id is appended to it (once), and the first returned.
  std::int32_t polygon_at(Vec2 p, std::uint32_t layers,
                          std::vector<std::int32_t>* all = nullptr) const;
  /// Id of a circle (in the layers) whose closed disc contains p, or -1. Precondition indexed().
  /// With `all`, every such circle's id is appended to it (once).
  std::int32_t circle_at(Vec2 p, std::uint32_t layers,
                         std::vector<std::int32_t>* all = nullptr) const;

 private:
  std::int32_t new_obstacle(ObstacleKind kind, std::uint32_t layers);
  void push_segment(float ax, float ay, float bx, float by, std::int32_t obstacle);
  void push_ring(std::span<const float> ring, std::int32_t obstacle);

  std::vector<float> walls_;
  std::vector<std::int32_t> wall_obstacle_;
  std::vector<float> circle_centers_;
  std::vector<float> circle_radii_;
  std::vector<std::int32_t> circle_obstacle_;
  std::vector<float> ring_points_;  // all polygon vertices, 2 floats each
  std::vector<std::int32_t>
      ring_start_;  // polygon k owns [ring_start_[k], ring_start_[k+1]) points
  std::vector<std::int32_t> polygon_obstacle_;
  std::vector<float> polygon_box_;  // 4 floats per polygon
  std::vector<std::uint32_t> obstacle_layers_;
  std::vector<ObstacleKind> obstacle_kind_;
  float cell_size_ = 0.0f;
  bool indexed_ = false;
  std::uint64_t index_generation_ = 0;
  WorldGrid grid_;
  ThickGridCache thick_;
  StripCache strips_;
  SectorCache sectors_;
  WorldGrid build_grid(float inflate, double cell) const;
};

/// The walls (segments and circles of obstacles in `layers`) passing within `tol` of p:
/// their unit normals (a segment's left normal, a circle's outward one), at most `max_out`
/// written, the count returned (duplicates from cells sharing a wall dropped). Pure.
int walls_through(const World& w, Vec2 p, double tol, std::uint32_t layers, Vec2* normals,
                  int max_out);

/// How close to a wall a point counts as on it: a few float32 ulps of p's largest
/// coordinate (a point meant on a slanted wall rounds off its line) plus 1e-6 × `scale`.
double on_wall_tolerance(Vec2 p, double scale);

/// Whether a wall or circle of an obstacle in `layers` may lie in the box [x0, x1] ×
/// [y0, y1]: any listed in the grid cells the box covers (each obstacle is listed in every
/// cell its box overlaps, so false means none does). Pure.
bool obstacle_near(const World& w, double x0, double y0, double x1, double y1,
                   std::uint32_t layers);

/// Whether the way from p to q (a centre's path) crosses or touches a wall or circle of
/// an obstacle in `layers` other than those of `ignore` (obstacle ids), or a body of
/// radius r on the way on from q to c comes within r of one. Reads the grid cells round
/// the paths (each obstacle is listed in every cell its box overlaps). The push out of
/// solids (a way out of the held solids `ignore`) and NavField's seeds of a goal inside
/// an obstacle (in sight of the goal but for the obstacle holding it) use it. With
/// `away_ok` (the push out of solids), a body already within r of another solid (a box,
/// polygon or circle) at q is blocked by it only where the way on comes closer than at q
/// (or through it); plain walls block as without it. Pure.
bool blocked_way(const World& w, Vec2 p, Vec2 q, Vec2 c, float r,
                 const std::vector<std::int32_t>& ignore, std::uint32_t layers,
                 bool away_ok = false);

}  // namespace contextsteer
