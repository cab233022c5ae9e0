// SPDX-License-Identifier: MIT
// Agent neighbour queries: a uniform grid over alive agents, rebuilt every step.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numbers>
#include <span>
#include <vector>

#include "contextsteer/common.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace contextsteer {

/// Largest `max_neighbors` a query accepts (the sorted candidate list lives on the stack).
inline constexpr std::size_t kMaxNeighbors = 256;

/// Neighbour table shared by every behaviour of a step: row i holds counts[i] agent
/// indices in indices[i*max_neighbors ...], sorted by squared distance (float32, as
/// computed by the grid) with ascending index breaking ties; unused entries are -1.
struct NeighborLists {
  const std::int32_t* indices = nullptr;  ///< (N, max_neighbors)
  const std::int32_t* counts = nullptr;   ///< (N,)
  std::size_t max_neighbors = 0;
  bool empty() const { return indices == nullptr; }
};

/// Adds candidate j at squared distance d2 to `out` / `d2s`, the at most `max_count`
/// (>= 1) nearest candidates so far, kept sorted by (d2, index): the ordering of
/// NeighborGrid::query and NeighborLists, whatever order the candidates come in.
inline void insert_nearest(float* d2s, std::int32_t* out, std::size_t& count, std::size_t max_count,
                           float d2, std::int32_t j) {
  if (count == max_count) {
    const float wd = d2s[count - 1];
    if (d2 > wd || (d2 == wd && j > out[count - 1])) return;
    --count;  // drop the worst
  }
  std::size_t k = count;
  while (k > 0 && (d2s[k - 1] > d2 || (d2s[k - 1] == d2 && out[k - 1] > j))) {
    d2s[k] = d2s[k - 1];
    out[k] = out[k - 1];
    --k;
  }
  d2s[k] = d2;
  out[k] = j;
  ++count;
}

/// Uniform grid (counting sort of alive agents by cell) answering radius queries.
/// Buffers grow to the largest N / cell count seen and are then reused, so a rebuild
/// per step allocates nothing in steady state. Queries are const and thread-safe.
class NeighborGrid {
 public:
  /// Rebuilds over the alive agents among `n` positions ((n,2) flat; `alive` may be
  /// nullptr for "all alive"). `cell_size` > 0 is the intended query radius; it is
  /// enlarged when the bounding box would need more than max(64, 2·n) cells. With
  /// `dense_list` > 0 (the length of the neighbour lists the grid will answer), the cell
  /// is a third of `cell_size` when the agents' mean density over their bounding box puts
  /// `dense_list` of them within a third of it: a dense crowd's lists then come from the
  /// few cells round that smaller disc (Metrics, query). Any cell gives the same answers.
  /// Serial, O(n).
  void rebuild(const float* positions, const std::uint8_t* alive, std::size_t n, float cell_size,
               std::size_t dense_list = 0);

  /// Becomes `grid` (its cells and their agents, in the same order) with each agent at
  /// its position in `positions` ((n,2) flat, the n of grid's rebuild) instead: no
  /// re-sort. An agent may now lie outside its cell, so queries widen their cell ranges by
  /// the largest move (kept as slack, added to grid's own), and answer exactly what a
  /// rebuild over `positions` would (the same agents, visited in another order). For
  /// positions a little away from those `grid` was built over (a step's corrections):
  /// O(agents) gathers and no counting sort. Same alive set. Serial; allocates only
  /// when a buffer grows. False, and the grid is not fit to query, when an agent moved
  /// more than kReuseCells cells (|dx| + |dy|): the caller rebuilds instead. A query reads
  /// every cell within the slack, so positions rewritten wholesale (another thread writing
  /// them during a step, a data race the README allows) made each query read the whole
  /// crowd: a step of 200,000 agents took 110 s.
  [[nodiscard]] bool rebuild_from(const NeighborGrid& grid, const float* positions);

  /// The largest move, in cells, rebuild_from reuses a grid for.
  static constexpr double kReuseCells = 4.0;

  /// Writes to `out` (capacity `max_count` <= kMaxNeighbors) the indices of at most
  /// `max_count` alive agents j != self with |p_j − point|² <= radius² (float32
  /// arithmetic), the nearest first, ties by ascending index. Returns how many were
  /// written. Pure, allocation-free, reentrant. A cell of a rebuild() holding more than
  /// kGroupAbove agents at repeated positions is read by position (each distinct one
  /// once, its agents only while they can still enter the list): with many coincident
  /// agents a query costs the distinct positions in reach plus max_count, not every agent.
  std::size_t query(Vec2 point, float radius, std::int32_t self, std::size_t max_count,
                    std::int32_t* out) const;

  /// Calls fn(j, d2) for every alive agent j with d2 = |p_j − point|² <= radius²
  /// (float32), self included, in grid order (cell rows bottom-up, cells left to right,
  /// ascending index within a cell): deterministic, but not sorted by distance. Cheaper
  /// than query() when every neighbour is needed and order only has to be reproducible.
  /// Pure, allocation-free, reentrant.
  template <class Fn>
  void visit(Vec2 point, float radius, Fn&& fn) const {
    if (order_.empty() || !(radius >= 0.0f)) return;
    const float r2 = radius * radius;
    std::int64_t x0, x1, y0, y1;
    if (!cell_range(point.x, radius + slack_, min_x_, nx_, cols_, x0, x1)) return;
    if (!cell_range(point.y, radius + slack_, min_y_, ny_, rows_, y0, y1)) return;
    // Local copies of the arrays: fn may write through pointers the compiler cannot tell
    // apart from the grid's members, which would reload them at every candidate.
    const std::uint32_t* start = cell_start_.data();
    const float* pos = sorted_pos_.data();
    const std::int32_t* order = order_.data();
    const auto nx = static_cast<std::size_t>(nx_);
#if defined(__SSE2__)
    const __m128 px = _mm_set1_ps(point.x), py = _mm_set1_ps(point.y), pr2 = _mm_set1_ps(r2);
#endif
    for (std::int64_t cy = y0; cy <= y1; ++cy) {
      const std::size_t row = static_cast<std::size_t>(cy) * nx;
      const std::size_t s_end = start[row + static_cast<std::size_t>(x1) + 1];
      std::size_t s = start[row + static_cast<std::size_t>(x0)];
#if defined(__SSE2__)
      // Four candidates at a time: the same float operations as the scalar loop below
      // (dx·dx + dy·dy, then <=), so the same d2 and the same hits, called in the same
      // order. Loads may run up to 3 positions past the span (into the next cells or the
      // padding after the last position); those lanes are masked off.
      for (; s < s_end; s += 4) {
        const __m128 a = _mm_loadu_ps(pos + 2 * s);      // x0 y0 x1 y1
        const __m128 b = _mm_loadu_ps(pos + 2 * s + 4);  // x2 y2 x3 y3
        const __m128 dx = _mm_sub_ps(_mm_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0)), px);
        const __m128 dy = _mm_sub_ps(_mm_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1)), py);
        const __m128 d2 = _mm_add_ps(_mm_mul_ps(dx, dx), _mm_mul_ps(dy, dy));
        auto hit = static_cast<unsigned>(_mm_movemask_ps(_mm_cmple_ps(d2, pr2)));
        if (s_end - s < 4) hit &= (1u << (s_end - s)) - 1u;
        if (!hit) continue;
        alignas(16) float d2s[4];
        _mm_store_ps(d2s, d2);
        do {
          const auto l = static_cast<std::size_t>(std::countr_zero(hit));
          hit &= hit - 1u;
          fn(order[s + l], d2s[l]);
        } while (hit);
      }
#else
      for (; s < s_end; ++s) {
        const float dx = pos[2 * s] - point.x;
        const float dy = pos[2 * s + 1] - point.y;
        const float d2 = dx * dx + dy * dy;
        if (d2 <= r2) fn(order[s], d2);
      }
#endif
    }
  }

  /// Number of agents in the grid (alive at the last rebuild).
  std::size_t size() const { return order_.size(); }

  /// Cells with more agents than this are grouped by position at a rebuild() when some of
  /// their agents coincide (query). Below it a cell costs a query at most this many
  /// distance tests, and the sort that finds coincident agents would cost a per-step
  /// rebuild more than it could save.
  static constexpr std::uint32_t kGroupAbove = 256;

  /// A grid whose cells grew past the query radius (a bounding box too large for
  /// max(64, 2·n) cells of it) is compressed (compress()) when a cell holds more agents
  /// than this: one agent kilometres away from a crowd put the crowd in one cell, and
  /// every query read all of it.
  static constexpr std::uint32_t kCompressAbove = 64;

  /// Whether the last rebuild compressed the grid's axes (compress()).
  bool compressed() const { return !cols_.empty(); }

  /// Number of cells the last rebuild grouped by position (query); 0 after rebuild_from.
  std::size_t grouped_cells() const { return grouped_cells_; }

  /// The most agents in one cell (at the last rebuild): a query reads at most a few
  /// cells' worth of positions, so a bound on its cost for callers that slice the queries.
  std::size_t most_in_a_cell() const { return most_; }

  /// Whether the last rebuild made the cells finer for a dense crowd (`dense_list`).
  bool fine() const { return fine_; }

  /// Whether the crowd round `point` is dense enough that a disc of radius `radius` is
  /// expected to hold `enough` agents: the grid's fullest cell and then the point's own
  /// cell, at their densities, put that many in it. A cheap test (two multiplications, one
  /// lookup) for asking a small disc before a large one; any answer keeps results exact.
  bool dense_enough(Vec2 point, float radius, double enough) const {
    // π radius² / cell²: the share of a cell's agents expected within the radius; the
    // grid's fullest cell rules the lookup out at once in a sparse crowd (inline: the
    // metrics ask it for every agent).
    const double share =
        std::numbers::pi * static_cast<double>(radius) * radius * inv_cell_ * inv_cell_;
    return static_cast<double>(most_) * share >= enough && dense_cell(point, share, enough);
  }

 private:
  /// Cell range [a, b] along one axis covering [p − radius, p + radius], widened by a
  /// thousandth of a cell against rounding; false when it misses the grid (or NaN). On a
  /// compressed axis (`occupied` not empty: the sorted cell indices that hold agents,
  /// whose positions in it are the grid's columns or rows) the range is that of the
  /// occupied cells within it, and false when there are none.
  bool cell_range(float p, double radius, float lo, std::int64_t cells,
                  const std::vector<std::int64_t>& occupied, std::int64_t& a,
                  std::int64_t& b) const {
    const double margin = 1e-3;
    const double fa = (static_cast<double>(p) - radius - lo) * inv_cell_ - margin;
    const double fb = (static_cast<double>(p) + radius - lo) * inv_cell_ + margin;
    if (!occupied.empty()) {
      // Occupied indices lie in [0, 2^53): clamping to just outside keeps the casts
      // defined and the range the same.
      if (!(fb >= 0.0 && fa < 0x1p53)) return false;
      const auto lo_cell = static_cast<std::int64_t>(std::floor(std::max(fa, -1.0)));
      const auto hi_cell = static_cast<std::int64_t>(std::floor(std::min(fb, 0x1p53)));
      a = std::lower_bound(occupied.begin(), occupied.end(), lo_cell) - occupied.begin();
      b = (std::upper_bound(occupied.begin(), occupied.end(), hi_cell) - occupied.begin()) - 1;
      return a <= b;
    }
    if (!(fb >= 0.0 && fa < static_cast<double>(cells))) return false;
    const double top = static_cast<double>(cells - 1);
    a = static_cast<std::int64_t>(std::floor(std::clamp(fa, 0.0, top)));
    b = static_cast<std::int64_t>(std::floor(std::clamp(fb, 0.0, top)));
    return true;
  }

  /// rebuild()'s way out of a grid whose cells grew for a few far agents: when the
  /// bounding box needs cells larger than `base`, the fullest of them holds more than
  /// kCompressAbove agents and at most a sixteenth of them hold any, the columns and rows
  /// become the occupied cell indices only (cols_, rows_), at the smallest cell from
  /// `base` up whose occupied columns times rows fit `limit`. False (nothing changed)
  /// when that is not at least four times finer than `dense`.
  bool compress(const float* positions, double base, double dense, double limit, double w,
                double h);

  /// dense_enough's second test: the point's own cell at `share` holds `enough`.
  bool dense_cell(Vec2 point, double share, double enough) const;

  /// rebuild()'s last part: the groups of the cells above kGroupAbove whose agents
  /// repeat a position (group_start_ ...); none when no cell has repeats.
  void group_by_position();

  float min_x_ = 0.0f, min_y_ = 0.0f;
  bool fine_ = false;  // rebuild(): cells of a third of cell_size (dense_list)
  /// How far an agent may lie outside its cell (rebuild_from); 0 after a rebuild.
  float slack_ = 0.0f;
  std::uint32_t most_ = 0;  // the most agents in one cell
  double cell_ = 1.0, inv_cell_ = 1.0;
  std::int64_t nx_ = 0, ny_ = 0;
  // Compressed axes (compress()): the sorted occupied cell indices along x and y, whose
  // positions are the grid's columns and rows; both empty on a plain grid.
  std::vector<std::int64_t> cols_, rows_;
  std::vector<double> axis_scratch_[2];    // compress(): each axis's sorted offsets
  std::vector<std::uint32_t> cell_start_;  // (cells + 1) prefix sums
  std::vector<std::int32_t> order_;        // agent index, grouped by cell, ascending within
  // Positions in `order_` order (flat x,y), then kPad zeros: visit() loads four
  // positions at a time and may read up to three past the last.
  std::vector<float> sorted_pos_;
  static constexpr std::size_t kPad = 8;
  std::vector<std::uint32_t> cell_of_;    // scratch: cell of each agent (n)
  std::vector<std::uint32_t> alive_ids_;  // scratch: the rows alive when first read (m)
  // Agents grouped by position (group_by_position), for the query only: visit() and the
  // agents' order in a cell are the same with and without them. Cell c's groups are
  // [group_start_[c], group_start_[c + 1]) (an empty range: read the cell's agents);
  // group g sits at group_pos_[2g], [2g + 1] and holds the agents
  // group_member_[member_start_[g] ... member_start_[g + 1]), ascending. group_start_ is
  // empty when no cell is grouped.
  std::vector<std::uint32_t> group_start_;
  std::vector<float> group_pos_;
  std::vector<std::uint32_t> member_start_;
  std::vector<std::int32_t> group_member_;
  std::size_t grouped_cells_ = 0;
  std::vector<std::uint32_t> group_slots_;  // scratch: one cell's slots, by position
};

/// Neighbour lists of rows begin, begin + step, ... (< end): for each alive agent i, the query of
/// `grid` around position i with `radius`, excluding i; dead agents get count 0. Writes
/// out_indices (N, max_neighbors) padded with -1 and out_counts (N,). Serial,
/// allocation-free, reentrant.
void find_neighbors_rows(const NeighborGrid& grid, const float* positions,
                         const std::uint8_t* alive, float radius, std::size_t max_neighbors,
                         std::int32_t* out_indices, std::int32_t* out_counts, std::size_t begin,
                         std::size_t end, std::size_t step = 1);

/// find_neighbors_rows over all n rows through parallel_for.
void find_neighbors(const NeighborGrid& grid, const float* positions, const std::uint8_t* alive,
                    std::size_t n, float radius, std::size_t max_neighbors,
                    std::int32_t* out_indices, std::int32_t* out_counts);

/// The per-step neighbour query of a simulation: a grid plus the (N, M) table, rebuilt
/// together; buffers are kept across steps (allocation only when N·M grows).
class NeighborTable {
 public:
  /// Rebuilds the grid over the alive agents among `n` positions and fills the table
  /// (parallel over agents). radius >= 0, max_neighbors <= kMaxNeighbors.
  void build(const float* positions, const std::uint8_t* alive, std::size_t n, float radius,
             std::size_t max_neighbors);
  /// build() in two parts, for a caller that fills the rows in slices (the bindings, to
  /// check for Ctrl-C between them): prepare() rebuilds the grid and sizes the table;
  /// fill_rows(begin, end) then fills rows [begin, end) of it (parallel over them) from
  /// the same `positions` and `alive`, which must stay alive and unchanged. Rows are
  /// independent: once every row is filled, the table is build()'s.
  void prepare(const float* positions, const std::uint8_t* alive, std::size_t n, float radius,
               std::size_t max_neighbors);
  void fill_rows(std::size_t begin, std::size_t end);
  /// The table of the last build (valid until the next build).
  NeighborLists lists() const { return {indices_.data(), counts_.data(), max_neighbors_}; }
  const NeighborGrid& grid() const { return grid_; }

 private:
  NeighborGrid grid_;
  std::vector<std::int32_t> indices_, counts_;
  std::size_t max_neighbors_ = 0;
  // prepare()'s inputs, for fill_rows.
  const float* positions_ = nullptr;
  const std::uint8_t* alive_ = nullptr;
  float radius_ = 0.0f;
};

}  // namespace contextsteer
