// SPDX-License-Identifier: MIT
// Uniform-grid neighbour search with deterministic (distance, index) ordering.
#include "contextsteer/neighbours.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <numeric>

#include "parallel.hpp"

namespace contextsteer {

void NeighborGrid::rebuild(const float* positions, const std::uint8_t* alive, std::size_t n,
                           float cell_size, std::size_t dense_list) {
  order_.clear();
  sorted_pos_.clear();
  float lo_x = 0.0f, lo_y = 0.0f, hi_x = 0.0f, hi_y = 0.0f;
  // The alive rows are read once, here, and the passes below go over that list: a mask
  // that another thread rewrote between two reads (a caller's array, cs.neighbours'
  // alive=) sized the buffers for fewer rows than the later pass wrote, and corrupted the
  // heap.
  alive_ids_.clear();
  for (std::size_t i = 0; i < n; ++i)
    if (!alive || alive[i]) alive_ids_.push_back(static_cast<std::uint32_t>(i));
  const std::size_t m = alive_ids_.size();
  bool bounded = false;
  for (const std::uint32_t id : alive_ids_) {
    const std::size_t i = id;
    const float x = positions[2 * i], y = positions[2 * i + 1];
    // Non-finite positions (written into a view mid-step) stay out of the bounds: they
    // land in cell 0 below and are never within a finite radius of anything.
    if (!std::isfinite(x) || !std::isfinite(y)) continue;
    if (!bounded) {
      lo_x = hi_x = x;
      lo_y = hi_y = y;
      bounded = true;
    } else {
      lo_x = std::min(lo_x, x);
      hi_x = std::max(hi_x, x);
      lo_y = std::min(lo_y, y);
      hi_y = std::max(hi_y, y);
    }
  }
  min_x_ = lo_x;
  min_y_ = lo_y;
  // Cell size: the query radius, enlarged until the box needs at most `limit` cells
  // (a sparse crowd spread over a huge area must not allocate a huge grid).
  const double limit = static_cast<double>(std::max<std::size_t>(64, 2 * m));
  const double w = static_cast<double>(hi_x) - lo_x, h = static_cast<double>(hi_y) - lo_y;
  // w, h are differences of finite floats in double, so finite (at most 2·FLT_MAX); a
  // non-finite or non-positive cell size (a radius overflowing float) starts from 1. Each
  // pass grows the cell by >= 1.1 while w / cell is finite, so this ends.
  double cell = cell_size > 0.0f && std::isfinite(cell_size) ? static_cast<double>(cell_size) : 1.0;
  // A dense crowd: cells of a third of the radius. A list query visits the cells its disc
  // overlaps: for the whole radius 7 × 7 of them (a square 2.33 radii wide, against 3 × 3
  // cells of one radius, 3 radii), and for a first visit of a third of the radius 2 × 2
  // or 3 × 3 (at most one radius wide), which in such a crowd usually answers alone. In a
  // sparse crowd the first visit would rarely answer and the finer cells would only add
  // cells to read, so they are kept for dense ones (and the metrics skip the first visit
  // on a coarse grid: fine()).
  fine_ = false;
  if (dense_list > 0 && m > 0 && w > 0.0 && h > 0.0) {
    const double third = cell / 3.0;
    if (static_cast<double>(m) / (w * h) * std::numbers::pi * third * third >=
        static_cast<double>(dense_list)) {
      cell = third;
      fine_ = true;
    }
  }
  const double base = cell;
  for (;;) {
    const double cx = std::floor(w / cell) + 1.0, cy = std::floor(h / cell) + 1.0;
    if (cx * cy <= limit) break;
    cell *= std::max(1.1, std::sqrt(cx * cy / limit));
  }
  cell_ = cell;
  inv_cell_ = 1.0 / cell;
  nx_ = static_cast<std::int64_t>(std::floor(w * inv_cell_)) + 1;
  ny_ = static_cast<std::int64_t>(std::floor(h * inv_cell_)) + 1;
  cols_.clear();
  rows_.clear();

  // Counting sort by cell; iterating agents in index order keeps each cell ascending.
  // Written so that a NaN (a user writing NaN into a view) lands in cell 0, never UB; on
  // compressed axes an agent's column is the position of its cell index among the
  // occupied ones (there by construction: the same arithmetic).
  auto axis_cell = [](double f, std::int64_t cells, const std::vector<std::int64_t>& occupied) {
    if (occupied.empty())
      return static_cast<std::int64_t>(f > 0.0 ? std::min(f, static_cast<double>(cells - 1)) : 0.0);
    if (!(f > 0.0)) return std::int64_t{0};
    const auto c = static_cast<std::int64_t>(std::floor(std::min(f, 0x1p53)));
    // (Clamped: a position another thread moved since compress() listed the cells, a
    // race the README allows, may lie beyond the last; it must not index past a row.)
    const auto at = std::lower_bound(occupied.begin(), occupied.end(), c) - occupied.begin();
    return std::min<std::int64_t>(at, static_cast<std::int64_t>(occupied.size()) - 1);
  };
  auto count = [&] {
    cell_start_.assign(static_cast<std::size_t>(nx_ * ny_) + 1, 0);
    most_ = 0;
    cell_of_.resize(m);
    std::size_t r = 0;
    for (const std::uint32_t id : alive_ids_) {
      const std::size_t i = id;
      const double fx = (static_cast<double>(positions[2 * i]) - min_x_) * inv_cell_;
      const double fy = (static_cast<double>(positions[2 * i + 1]) - min_y_) * inv_cell_;
      const auto c =
          static_cast<std::uint32_t>(axis_cell(fy, ny_, rows_) * nx_ + axis_cell(fx, nx_, cols_));
      cell_of_[r++] = c;
      most_ = std::max(most_, ++cell_start_[c + 1]);
    }
  };
  count();
  // Compressed only where the cells grew and few of them hold the agents (a crowd and a
  // few far agents: most cells empty); a sparse crowd spread evenly fills its grown
  // cells, and compressing it cost two sorts a rebuild for cells no finer (a pile of 64
  // among 200k agents over 1e6 m: 2.2x slower; fuzz round 20).
  if (cell > base && most_ > kCompressAbove) {
    std::size_t occupied = 0;
    for (std::size_t c = 1; c < cell_start_.size(); ++c) occupied += cell_start_[c] != 0;
    if (16 * occupied <= cell_start_.size() - 1 && compress(positions, base, cell, limit, w, h))
      count();
  }
  const std::size_t cells = cell_start_.size() - 1;
  for (std::size_t c = 0; c < cells; ++c) cell_start_[c + 1] += cell_start_[c];
  order_.resize(m);
  sorted_pos_.assign(2 * m + kPad, 0.0f);
  // cell_start_[c] is used as the insertion cursor, then restored by shifting.
  std::size_t r = 0;
  for (const std::uint32_t id : alive_ids_) {
    const std::size_t i = id;
    const std::uint32_t slot = cell_start_[cell_of_[r++]]++;
    order_[slot] = static_cast<std::int32_t>(i);
    sorted_pos_[2 * slot] = positions[2 * i];
    sorted_pos_[2 * slot + 1] = positions[2 * i + 1];
  }
  for (std::size_t c = cells; c > 0; --c) cell_start_[c] = cell_start_[c - 1];
  cell_start_[0] = 0;
  slack_ = 0.0f;
  group_by_position();
}

bool NeighborGrid::compress(const float* positions, double base, double dense, double limit,
                            double w, double h) {
  // Cell indices must stay exact in double (and within int64).
  if (!(w / base < 0x1p52 && h / base < 0x1p52)) return false;
  // Each axis's offsets from the grid's corner, sorted: the occupied cells of a cell
  // size are then counted (and listed) in one pass.
  std::vector<double>& xs = axis_scratch_[0];
  std::vector<double>& ys = axis_scratch_[1];
  xs.clear();
  ys.clear();
  for (const std::uint32_t id : alive_ids_) {
    const double x = positions[2 * id], y = positions[2 * id + 1];
    if (!std::isfinite(x) || !std::isfinite(y)) continue;  // (cell 0, which is occupied)
    xs.push_back(x - min_x_);
    ys.push_back(y - min_y_);
  }
  std::sort(xs.begin(), xs.end());
  std::sort(ys.begin(), ys.end());
  auto occupied = [](const std::vector<double>& v, double inv, std::vector<std::int64_t>* out) {
    std::size_t n = 0;
    std::int64_t last = -1;
    for (const double x : v) {
      const auto c = static_cast<std::int64_t>(std::floor(x * inv));
      if (c != last) {
        ++n;
        last = c;
        if (out) out->push_back(c);
      }
    }
    return static_cast<double>(n);
  };
  double cell = base;
  for (;;) {
    const double cells = occupied(xs, 1.0 / cell, nullptr) * occupied(ys, 1.0 / cell, nullptr);
    if (cells <= limit) break;
    cell *= std::max(1.1, std::sqrt(cells / limit));
  }
  if (!(4.0 * cell <= dense)) return false;  // (no finer by much: not worth the searches)
  cell_ = cell;
  inv_cell_ = 1.0 / cell;
  occupied(xs, inv_cell_, &cols_);
  occupied(ys, inv_cell_, &rows_);
  nx_ = static_cast<std::int64_t>(cols_.size());
  ny_ = static_cast<std::int64_t>(rows_.size());
  return true;
}

void NeighborGrid::group_by_position() {
  group_start_.clear();
  group_pos_.clear();
  member_start_.clear();
  group_member_.clear();
  grouped_cells_ = 0;
  if (most_ <= kGroupAbove) return;
  // Equal bits, equal position: every query computes the same d² for all of a group's
  // agents (the same float operations on the same operands). Bits rather than values so
  // that the order is total with NaN (a NaN group is never within any radius).
  auto key = [&](std::uint32_t s) {
    return (static_cast<std::uint64_t>(std::bit_cast<std::uint32_t>(sorted_pos_[2 * s])) << 32) |
           std::bit_cast<std::uint32_t>(sorted_pos_[2 * s + 1]);
  };
  const std::size_t cells = cell_start_.size() - 1;
  for (std::size_t c = 0; c < cells; ++c) {
    const std::uint32_t a = cell_start_[c], b = cell_start_[c + 1];
    if (b - a <= kGroupAbove) continue;
    // The cell's slots by position, then slot: a group's agents stay ascending.
    group_slots_.resize(b - a);
    std::iota(group_slots_.begin(), group_slots_.end(), a);
    std::sort(group_slots_.begin(), group_slots_.end(), [&](std::uint32_t x, std::uint32_t y) {
      const std::uint64_t kx = key(x), ky = key(y);
      return kx != ky ? kx < ky : x < y;
    });
    std::uint32_t distinct = 1;
    for (std::size_t k = 1; k < group_slots_.size(); ++k)
      distinct += key(group_slots_[k]) != key(group_slots_[k - 1]) ? 1 : 0;
    // No repeats: the groups would cost a query as many distance tests as the agents.
    if (distinct == b - a) continue;
    if (group_start_.empty()) group_start_.assign(cells + 1, 0);
    for (std::size_t k = 0; k < group_slots_.size(); ++k) {
      const std::uint32_t s = group_slots_[k];
      if (k == 0 || key(s) != key(group_slots_[k - 1])) {
        group_pos_.push_back(sorted_pos_[2 * s]);
        group_pos_.push_back(sorted_pos_[2 * s + 1]);
        member_start_.push_back(static_cast<std::uint32_t>(group_member_.size()));
      }
      group_member_.push_back(order_[s]);
    }
    group_start_[c + 1] = distinct;  // counts, summed below
    ++grouped_cells_;
  }
  if (group_start_.empty()) return;
  member_start_.push_back(static_cast<std::uint32_t>(group_member_.size()));
  for (std::size_t c = 0; c < cells; ++c) group_start_[c + 1] += group_start_[c];
}

bool NeighborGrid::rebuild_from(const NeighborGrid& grid, const float* positions) {
  min_x_ = grid.min_x_;
  min_y_ = grid.min_y_;
  cell_ = grid.cell_;
  inv_cell_ = grid.inv_cell_;
  nx_ = grid.nx_;
  ny_ = grid.ny_;
  cols_ = grid.cols_;
  rows_ = grid.rows_;
  cell_start_ = grid.cell_start_;
  most_ = grid.most_;
  fine_ = grid.fine_;
  order_ = grid.order_;
  // The groups hold positions of `grid`'s agents, which have moved: none (query reads
  // every agent, as it does in a cell without repeats).
  group_start_.clear();
  grouped_cells_ = 0;
  sorted_pos_.resize(grid.sorted_pos_.size());
  std::fill(sorted_pos_.begin() + static_cast<std::ptrdiff_t>(2 * order_.size()), sorted_pos_.end(),
            0.0f);
  // The largest move, as |dx| + |dy| (>= the distance) in double, rounded up to float
  // below. A non-finite position (NaN: never within a finite radius of anything) is
  // skipped by the comparison; an infinite one gives infinite slack (every cell).
  double move = 0.0;
  const std::size_t m = order_.size();
  for (std::size_t s = 0; s < m; ++s) {
    const auto j = static_cast<std::size_t>(order_[s]);
    const float x = positions[2 * j], y = positions[2 * j + 1];
    const double d = std::fabs(static_cast<double>(x) - grid.sorted_pos_[2 * s]) +
                     std::fabs(static_cast<double>(y) - grid.sorted_pos_[2 * s + 1]);
    if (d > move) move = d;
    sorted_pos_[2 * s] = x;
    sorted_pos_[2 * s + 1] = y;
  }
  // Cell ranges are widened by a thousandth of a cell besides, which covers the rounding
  // of radius + slack in float.
  slack_ = static_cast<float>(static_cast<double>(grid.slack_) + move * (1.0 + 0x1p-20));
  return static_cast<double>(slack_) <= kReuseCells * cell_;
}

std::size_t NeighborGrid::query(Vec2 point, float radius, std::int32_t self, std::size_t max_count,
                                std::int32_t* out) const {
  if (order_.empty() || max_count == 0 || !(radius >= 0.0f)) return 0;
  max_count = std::min(max_count, kMaxNeighbors);
  // The max_count nearest (by d², then index) alive j != self with d² <= rad², into out.
  // The cells x0..x1 of one grid row are contiguous in the sorted arrays, so each row is
  // one span (split only at grouped cells). Candidates are filtered branch-free into a
  // small buffer first (the inside/outside test is unpredictable), then merged into the
  // best-so-far list, kept sorted by (d², index) with insertion. The list does not depend
  // on the order candidates come in (insert_nearest), so grouped cells change no answer.
  auto scan = [&](float rad) __attribute__((always_inline))->std::size_t {
    const float r2 = rad * rad;
    // Agents lie at most slack_ outside their cells (rebuild_from).
    const double reach = static_cast<double>(rad) + slack_;
    std::int64_t x0, x1, y0, y1;
    // Cell ranges widened by a thousandth of a cell (cell_range), so that a point at
    // exactly the radius (float32) can never fall in an unvisited cell through rounding.
    if (!cell_range(point.x, reach, min_x_, nx_, cols_, x0, x1)) return 0;
    if (!cell_range(point.y, reach, min_y_, ny_, rows_, y0, y1)) return 0;
    float d2s[kMaxNeighbors];
    std::size_t count = 0;
    constexpr std::size_t kBatch = 64;
    std::uint32_t hit[kBatch];
    float hit_d2[kBatch];
    // The agents of slots [s_begin, s_end).
    auto read_slots = [&](std::uint32_t s_begin, std::uint32_t s_end)
        __attribute__((always_inline)) {
      for (std::uint32_t s0 = s_begin; s0 < s_end; s0 += kBatch) {
        const std::uint32_t s1 = std::min<std::uint32_t>(s_end, s0 + kBatch);
        std::size_t nh = 0;
        for (std::uint32_t s = s0; s < s1; ++s) {
          const float dx = sorted_pos_[2 * s] - point.x;
          const float dy = sorted_pos_[2 * s + 1] - point.y;
          const float d2 = dx * dx + dy * dy;
          hit[nh] = s;
          hit_d2[nh] = d2;
          nh += (d2 <= r2) ? 1 : 0;
        }
        for (std::size_t h = 0; h < nh; ++h) {
          const std::int32_t j = order_[hit[h]];
          const float d2 = hit_d2[h];
          if (j == self) continue;
          insert_nearest(d2s, out, count, max_count, d2, j);
        }
      }
    };
    // A grouped cell: one d² a position (the d² of each of its agents: the same operands).
    // Its agents ascend, so once one cannot enter a full list (d² above the worst's, or
    // equal with a larger index) neither can the rest: a group of 100,000 coincident
    // agents costs a query at most max_count + 2 of them.
    auto read_groups = [&](std::size_t c) {
      for (std::uint32_t g = group_start_[c]; g < group_start_[c + 1]; ++g) {
        const float dx = group_pos_[2 * g] - point.x;
        const float dy = group_pos_[2 * g + 1] - point.y;
        const float d2 = dx * dx + dy * dy;
        if (!(d2 <= r2)) continue;
        for (std::uint32_t k = member_start_[g]; k < member_start_[g + 1]; ++k) {
          const std::int32_t j = group_member_[k];
          if (j == self) continue;
          if (count == max_count &&
              (d2 > d2s[count - 1] || (d2 == d2s[count - 1] && j > out[count - 1])))
            break;
          insert_nearest(d2s, out, count, max_count, d2, j);
        }
      }
    };
    for (std::int64_t cy = y0; cy <= y1; ++cy) {
      const std::size_t row = static_cast<std::size_t>(cy * nx_);
      const std::size_t c0 = row + static_cast<std::size_t>(x0);
      const std::size_t c1 = row + static_cast<std::size_t>(x1) + 1;
      if (group_start_.empty()) {
        read_slots(cell_start_[c0], cell_start_[c1]);
        continue;
      }
      // Runs of ungrouped cells as one span, each grouped cell by its groups.
      for (std::size_t c = c0; c < c1;) {
        std::size_t e = c;
        while (e < c1 && group_start_[e + 1] == group_start_[e]) ++e;
        if (e > c) read_slots(cell_start_[c], cell_start_[e]);
        if (e < c1) read_groups(e++);
        c = e;
      }
    }
    return count;
  };
  // In a dense crowd most agents in reach are not among the nearest max_count, and each
  // may cost an insertion. So when the density of the point's own cell puts 1.5·max_count
  // agents within half the radius, half the radius is asked first: if that finds
  // max_count agents they are the answer (every agent it did not see has d² > (radius/2)²,
  // above all of theirs: no tie, no displacement), else the whole radius is asked. The
  // same result either way.
  if (dense_enough(point, 0.5f * radius, 1.5 * static_cast<double>(max_count))) {
    const std::size_t n = scan(0.5f * radius);
    if (n == max_count) return n;
  }
  return scan(radius);
}

bool NeighborGrid::dense_cell(Vec2 point, double share, double enough) const {
  if (order_.empty()) return false;
  std::int64_t cx0, cx1, cy0, cy1;
  if (!cell_range(point.x, 0.0, min_x_, nx_, cols_, cx0, cx1) ||
      !cell_range(point.y, 0.0, min_y_, ny_, rows_, cy0, cy1) || cx0 != cx1 || cy0 != cy1)
    return false;
  const std::size_t c = static_cast<std::size_t>(cy0 * nx_ + cx0);
  return static_cast<double>(cell_start_[c + 1] - cell_start_[c]) * share >= enough;
}

void find_neighbors_rows(const NeighborGrid& grid, const float* positions,
                         const std::uint8_t* alive, float radius, std::size_t max_neighbors,
                         std::int32_t* out_indices, std::int32_t* out_counts, std::size_t begin,
                         std::size_t end, std::size_t step) {
  for (std::size_t i = begin; i < end; i += step) {
    std::int32_t* row = out_indices + i * max_neighbors;
    std::size_t c = 0;
    if (!alive || alive[i]) {
      c = grid.query({positions[2 * i], positions[2 * i + 1]}, radius, static_cast<std::int32_t>(i),
                     max_neighbors, row);
    }
    for (std::size_t k = c; k < max_neighbors; ++k) row[k] = -1;
    out_counts[i] = static_cast<std::int32_t>(c);
  }
}

void find_neighbors(const NeighborGrid& grid, const float* positions, const std::uint8_t* alive,
                    std::size_t n, float radius, std::size_t max_neighbors,
                    std::int32_t* out_indices, std::int32_t* out_counts) {
  parallel_for(n, 256, [&](std::size_t b, std::size_t e) {
    find_neighbors_rows(grid, positions, alive, radius, max_neighbors, out_indices, out_counts, b,
                        e);
  });
}

void NeighborTable::build(const float* positions, const std::uint8_t* alive, std::size_t n,
                          float radius, std::size_t max_neighbors) {
  prepare(positions, alive, n, radius, max_neighbors);
  fill_rows(0, n);
}

void NeighborTable::prepare(const float* positions, const std::uint8_t* alive, std::size_t n,
                            float radius, std::size_t max_neighbors) {
  max_neighbors_ = max_neighbors;
  indices_.resize(n * max_neighbors);
  counts_.resize(n);
  positions_ = positions;
  alive_ = alive;
  radius_ = radius;
  grid_.rebuild(positions, alive, n, radius > 0.0f ? radius : 1.0f, max_neighbors);
}

void NeighborTable::fill_rows(std::size_t begin, std::size_t end) {
  parallel_for(end - begin, 256, [&](std::size_t b, std::size_t e) {
    find_neighbors_rows(grid_, positions_, alive_, radius_, max_neighbors_, indices_.data(),
                        counts_.data(), begin + b, begin + e);
  });
}

}  // namespace contextsteer
