// SPDX-License-Identifier: MIT
// World storage and the uniform-grid build.
#include "contextsteer/world.hpp"

#include "contextsteer/geometry.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>

namespace contextsteer {

std::int32_t World::new_obstacle(ObstacleKind kind, std::uint32_t layers) {
  obstacle_layers_.push_back(layers);
  obstacle_kind_.push_back(kind);
  indexed_ = false;
  return static_cast<std::int32_t>(obstacle_layers_.size() - 1);
}

void World::push_segment(float ax, float ay, float bx, float by, std::int32_t obstacle) {
  walls_.insert(walls_.end(), {ax, ay, bx, by});
  wall_obstacle_.push_back(obstacle);
}

std::int32_t World::add_segments(std::span<const float> xy, std::uint32_t layers) {
  const auto first = static_cast<std::int32_t>(obstacle_count());
  walls_.reserve(walls_.size() + xy.size());
  for (std::size_t i = 0; i + 3 < xy.size(); i += 4) {
    const std::int32_t id = new_obstacle(ObstacleKind::kSegment, layers);
    push_segment(xy[i], xy[i + 1], xy[i + 2], xy[i + 3], id);
  }
  indexed_ = false;
  return first;
}

std::int32_t World::add_polyline(std::span<const float> points, bool closed, std::uint32_t layers) {
  const std::int32_t id = new_obstacle(ObstacleKind::kPolyline, layers);
  const std::size_t p = points.size() / 2;
  for (std::size_t i = 0; i + 1 < p; ++i) {
    push_segment(points[2 * i], points[2 * i + 1], points[2 * i + 2], points[2 * i + 3], id);
  }
  if (closed && p >= 3) {
    push_segment(points[2 * p - 2], points[2 * p - 1], points[0], points[1], id);
  }
  return id;
}

void World::push_ring(std::span<const float> ring, std::int32_t obstacle) {
  const std::size_t p = ring.size() / 2;
  for (std::size_t i = 0; i < p; ++i) {
    const std::size_t j = (i + 1) % p;
    push_segment(ring[2 * i], ring[2 * i + 1], ring[2 * j], ring[2 * j + 1], obstacle);
  }
  if (ring_start_.empty()) ring_start_.push_back(0);
  float box[4] = {ring[0], ring[1], ring[0], ring[1]};
  for (std::size_t i = 0; i < p; ++i) {
    box[0] = std::min(box[0], ring[2 * i]);
    box[1] = std::min(box[1], ring[2 * i + 1]);
    box[2] = std::max(box[2], ring[2 * i]);
    box[3] = std::max(box[3], ring[2 * i + 1]);
  }
  ring_points_.insert(ring_points_.end(), ring.begin(), ring.end());
  ring_start_.push_back(static_cast<std::int32_t>(ring_points_.size() / 2));
  polygon_obstacle_.push_back(obstacle);
  polygon_box_.insert(polygon_box_.end(), box, box + 4);
}

std::int32_t World::add_polygon(std::span<const float> ring, std::uint32_t layers) {
  const std::int32_t id = new_obstacle(ObstacleKind::kPolygon, layers);
  push_ring(ring, id);
  return id;
}

std::int32_t World::add_polygon(std::span<const float> ring,
                                const std::vector<std::span<const float>>& holes,
                                std::uint32_t layers) {
  const std::int32_t id = new_obstacle(ObstacleKind::kPolygon, layers);
  push_ring(ring, id);
  for (const auto& h : holes) push_ring(h, id);
  return id;
}

std::int32_t World::add_box(Vec2 center, Vec2 he, float angle, std::uint32_t layers) {
  const std::int32_t id = new_obstacle(ObstacleKind::kBox, layers);
  // Corners counter-clockwise; rotation in double so the four corners are as exact as floats allow.
  const double c = std::cos(static_cast<double>(angle));
  const double s = std::sin(static_cast<double>(angle));
  const double lx[4] = {-he.x, he.x, he.x, -he.x};
  const double ly[4] = {-he.y, -he.y, he.y, he.y};
  float ring[8];
  for (int k = 0; k < 4; ++k) {
    ring[2 * k] = static_cast<float>(center.x + c * lx[k] - s * ly[k]);
    ring[2 * k + 1] = static_cast<float>(center.y + s * lx[k] + c * ly[k]);
  }
  push_ring(ring, id);
  return id;
}

std::int32_t World::add_rect(Vec2 lo, Vec2 hi, std::uint32_t layers) {
  const std::int32_t id = new_obstacle(ObstacleKind::kBox, layers);
  const float ring[8] = {lo.x, lo.y, hi.x, lo.y, hi.x, hi.y, lo.x, hi.y};  // counter-clockwise
  push_ring(ring, id);
  return id;
}

std::int32_t World::add_circles(std::span<const float> centers, std::span<const float> radii,
                                std::uint32_t layers) {
  const auto first = static_cast<std::int32_t>(obstacle_count());
  for (std::size_t i = 0; i < radii.size(); ++i) {
    const std::int32_t id = new_obstacle(ObstacleKind::kCircle, layers);
    circle_centers_.push_back(centers[2 * i]);
    circle_centers_.push_back(centers[2 * i + 1]);
    circle_radii_.push_back(radii[i]);
    circle_obstacle_.push_back(id);
  }
  indexed_ = false;
  return first;
}

bool World::bounds(float out[4]) const {
  // In double, then rounded outward to float: x - r and x + r rounded to float lose a
  // circle's radius when r < ulp(x) / 2 (e.g. r = 1.5 at x = 1e8), and the grid, clipped
  // to these bounds, would then not cover the circle.
  const double inf = std::numeric_limits<double>::infinity();
  double b[4] = {inf, inf, -inf, -inf};
  for (std::size_t i = 0; i < walls_.size(); i += 2) {
    b[0] = std::min<double>(b[0], walls_[i]);
    b[1] = std::min<double>(b[1], walls_[i + 1]);
    b[2] = std::max<double>(b[2], walls_[i]);
    b[3] = std::max<double>(b[3], walls_[i + 1]);
  }
  for (std::size_t i = 0; i < circle_radii_.size(); ++i) {
    const double x = circle_centers_[2 * i], y = circle_centers_[2 * i + 1], r = circle_radii_[i];
    b[0] = std::min(b[0], x - r);
    b[1] = std::min(b[1], y - r);
    b[2] = std::max(b[2], x + r);
    b[3] = std::max(b[3], y + r);
  }
  if (!(b[0] <= b[2])) return false;
  auto down = [](double v) {
    float f = static_cast<float>(v);
    return static_cast<double>(f) > v ? std::nextafter(f, -std::numeric_limits<float>::infinity())
                                      : f;
  };
  auto up = [](double v) {
    float f = static_cast<float>(v);
    return static_cast<double>(f) < v ? std::nextafter(f, std::numeric_limits<float>::infinity())
                                      : f;
  };
  out[0] = down(b[0]);
  out[1] = down(b[1]);
  out[2] = up(b[2]);
  out[3] = up(b[3]);
  return true;
}

void World::set_layers(std::span<const std::int32_t> ids, std::uint32_t layers) {
  for (const std::int32_t id : ids) obstacle_layers_[static_cast<std::size_t>(id)] = layers;
  indexed_ = false;
}

void World::set_cell_size(float cell) {
  cell_size_ = cell;
  indexed_ = false;
}

namespace {

// Number of cells per primitive the automatic cell size aims for (cell = sqrt(area / (20 n))).
// Chosen by measurement on the racetrack scenes (instructions and branch misses per ray
// under cachegrind, wall time in benchmarks/bench_world_index.py): the best cell was ~1.0
// for M = 1000 (segments ~0.9 long) and ~0.35-0.5 for M = 10000 (segments ~0.1 long), i.e.
// 20-25 cells per segment for both; with empty-space skipping, fine cells cost little in
// open space and cut the segments tested per ray (M = 10000, L = 50: 9.5 tests per ray at
// cell 0.5 against 19 at cell 1.1 and 34 at cell 2).
constexpr double kCellsPerPrimitive = 20.0;
constexpr std::size_t kMaxCells = std::size_t{1} << 22;
// Most entries (primitive, cell) the grid may list (about 56 bytes each with the blocks):
// every primitive is listed in every cell of its box, so long diagonal walls cost the
// square of their length in cells (5,000 random 100 m segments in a 200 m box asked for
// 3 GB at the automatic cell, 20,000 for more than 6 GB). The cell grows until it fits.
constexpr double kMaxEntries = static_cast<double>(std::size_t{1} << 23);

// Counting sort of items into the cells their boxes overlap.
template <class BoxOf, class Emit>
void fill_cells(const WorldGrid& g, std::size_t n, BoxOf box_of, std::vector<std::int32_t>& start,
                Emit emit) {
  const std::size_t cells = static_cast<std::size_t>(g.nx) * static_cast<std::size_t>(g.ny);
  start.assign(cells + 1, 0);
  for (std::size_t i = 0; i < n; ++i) {
    float b[4];
    box_of(i, b);
    const int c0 = g.col(b[0]), c1 = g.col(b[2]), r0 = g.row(b[1]), r1 = g.row(b[3]);
    for (int r = r0; r <= r1; ++r)
      for (int c = c0; c <= c1; ++c) ++start[static_cast<std::size_t>(r) * g.nx + c + 1];
  }
  for (std::size_t c = 0; c < cells; ++c) start[c + 1] += start[c];
  std::vector<std::int32_t> cursor(start.begin(), start.end() - 1);
  for (std::size_t i = 0; i < n; ++i) {
    float b[4];
    box_of(i, b);
    const int c0 = g.col(b[0]), c1 = g.col(b[2]), r0 = g.row(b[1]), r1 = g.row(b[3]);
    for (int r = r0; r <= r1; ++r)
      for (int c = c0; c <= c1; ++c) {
        emit(static_cast<std::size_t>(cursor[static_cast<std::size_t>(r) * g.nx + c]++), i, c0, r0);
      }
  }
}

}  // namespace

// The grid over the bounds grown by `inflate`, every primitive registered with its box grown
// by `inflate`; cell <= 0 picks the cell size from the geometry. No polygon lists.
WorldGrid World::build_grid(float inflate, double cell) const {
  WorldGrid g;
  float fb[4];
  if (!bounds(fb)) return g;
  // Grown in double: in float, b - inflate == b whenever inflate < ulp(b) / 2.
  const double b[4] = {static_cast<double>(fb[0]) - inflate, static_cast<double>(fb[1]) - inflate,
                       static_cast<double>(fb[2]) + inflate, static_cast<double>(fb[3]) + inflate};
  const double w = std::max(b[2] - b[0], 0.0);
  const double h = std::max(b[3] - b[1], 0.0);
  const double big = std::max({std::fabs(b[0]), std::fabs(b[1]), std::fabs(b[2]), std::fabs(b[3])});
  const double extent = std::max({w, h, 1e-6, 1e-6 * big});
  // Pad so that no primitive touches the outer boundary; keeps clamping exact. At least a
  // few float ulps of the coordinates, so that rounding x0 to float never cuts the box.
  const double pad = std::max(1e-3 * extent, 0x1p-21 * big);
  const double x0 = b[0] - pad, y0 = b[1] - pad;
  const double W = w + 2 * pad, H = h + 2 * pad;
  const std::size_t n = segment_count() + circle_count();
  if (!(cell > 0.0))
    cell =
        std::sqrt(W * H / (kCellsPerPrimitive * static_cast<double>(std::max<std::size_t>(n, 1))));
  cell = std::max(cell, extent * 1e-6);
  // Never more than kMaxCells cells (memory); grow the cell until it fits.
  while ((std::ceil(W / cell) * std::ceil(H / cell)) > static_cast<double>(kMaxCells)) cell *= 1.25;
  // Nor more than kMaxEntries entries: an upper bound of the cells each primitive's box
  // (grown as registered below, whose growth is at most 2e-3 cell + 8e-7 of the
  // coordinates + 2 inflate a side) covers. Worlds of short walls are far below it (the
  // racetrack's 10,000 walls: ~0.1 M entries); only many long walls grow the cell.
  const double slack_abs = 8e-7 * (big + extent) + 2.0 * static_cast<double>(inflate);
  auto entries_at = [&](double c) {
    double total = 0.0;
    for (std::size_t i = 0; i < segment_count(); ++i) {
      const float* s = &walls_[4 * i];
      const double sx = std::fabs(static_cast<double>(s[2]) - s[0]) + slack_abs + 2e-3 * c;
      const double sy = std::fabs(static_cast<double>(s[3]) - s[1]) + slack_abs + 2e-3 * c;
      total += (std::floor(sx / c) + 2.0) * (std::floor(sy / c) + 2.0);
    }
    for (std::size_t i = 0; i < circle_count(); ++i) {
      const double d = 2.0 * circle_radii_[i] + slack_abs + 2e-3 * c;
      total += (std::floor(d / c) + 2.0) * (std::floor(d / c) + 2.0);
    }
    return total;
  };
  // At least 4.5 entries a primitive: the bound counts 4 for the shortest (the 2 × 2 cells
  // a box may straddle), so above 2^21 primitives the budget could never be met and the
  // cell grew to the whole extent, one cell holding every obstacle (2,097,153 circles: 200
  // rays took 2.7 s, against 1.1 ms at 2,097,152).
  const double budget = std::max(kMaxEntries, 4.5 * static_cast<double>(n));
  while (entries_at(cell) > budget && cell < extent) cell *= 1.25;
  g.x0 = static_cast<float>(x0);
  g.y0 = static_cast<float>(y0);
  g.cell = static_cast<float>(cell);
  g.inv_cell = static_cast<float>(1.0 / cell);
  g.nx = std::max(1, static_cast<int>(std::ceil(W / cell)));
  g.ny = std::max(1, static_cast<int>(std::ceil(H / cell)));

  // Boxes are registered slightly grown (1e-3 cell + a few float ulps of the coordinates),
  // so that a point the walks place in a neighbouring cell through rounding (the walks
  // compute cell boundaries in double, registration in float) still finds the primitive.
  const float grow =
      inflate +
      static_cast<float>(1e-3 * cell + 4e-7 * std::max({std::fabs(x0), std::fabs(y0),
                                                        std::fabs(x0 + W), std::fabs(y0 + H)}));
  const std::size_t m = segment_count();
  auto seg_box = [&](std::size_t i, float* bb) {
    const float* s = &walls_[4 * i];
    bb[0] = std::min(s[0], s[2]) - grow;
    bb[1] = std::min(s[1], s[3]) - grow;
    bb[2] = std::max(s[0], s[2]) + grow;
    bb[3] = std::max(s[1], s[3]) + grow;
  };
  {
    std::size_t total = 0;
    fill_cells(g, m, seg_box, g.seg_start, [&](std::size_t, std::size_t, int, int) { ++total; });
    total = static_cast<std::size_t>(g.seg_start.back());
    g.ax.resize(total);
    g.ay.resize(total);
    g.bx.resize(total);
    g.by.resize(total);
    g.seg_index.resize(total);
    g.seg_layers.resize(total);
    g.seg_cx0.resize(total);
    g.seg_cy0.resize(total);
    fill_cells(g, m, seg_box, g.seg_start, [&](std::size_t e, std::size_t i, int c0, int r0) {
      const float* s = &walls_[4 * i];
      g.ax[e] = s[0];
      g.ay[e] = s[1];
      g.bx[e] = s[2];
      g.by[e] = s[3];
      g.seg_index[e] = static_cast<std::int32_t>(i);
      g.seg_layers[e] = obstacle_layers_[static_cast<std::size_t>(wall_obstacle_[i])];
      g.seg_cx0[e] = c0;
      g.seg_cy0[e] = r0;
    });
  }
  {
    const std::size_t cells = static_cast<std::size_t>(g.nx) * static_cast<std::size_t>(g.ny);
    g.block_start.assign(cells + 1, 0);
    for (std::size_t c = 0; c < cells; ++c) {
      g.block_start[c + 1] = g.block_start[c] + (g.seg_start[c + 1] - g.seg_start[c] + 3) / 4;
    }
    g.seg_blocks.assign(static_cast<std::size_t>(g.block_start.back()), WorldGrid::SegBlock{});
    for (std::size_t c = 0; c < cells; ++c) {
      for (std::int32_t q = 0; q < g.seg_start[c + 1] - g.seg_start[c]; ++q) {
        const auto e = static_cast<std::size_t>(g.seg_start[c] + q);
        WorldGrid::SegBlock& b = g.seg_blocks[static_cast<std::size_t>(g.block_start[c] + q / 4)];
        const int l = q % 4;
        b.ax[l] = g.ax[e];
        b.ay[l] = g.ay[e];
        b.bx[l] = g.bx[e];
        b.by[l] = g.by[e];
        b.layers[l] = g.seg_layers[e];
        b.index[l] = g.seg_index[e];
      }
    }
  }
  const std::size_t nc = circle_count();
  auto circ_box = [&](std::size_t i, float* bb) {
    const float x = circle_centers_[2 * i], y = circle_centers_[2 * i + 1],
                r = circle_radii_[i] + grow;
    bb[0] = x - r;
    bb[1] = y - r;
    bb[2] = x + r;
    bb[3] = y + r;
  };
  {
    fill_cells(g, nc, circ_box, g.circ_start, [](std::size_t, std::size_t, int, int) {});
    const auto total = static_cast<std::size_t>(g.circ_start.back());
    g.cx.resize(total);
    g.cy.resize(total);
    g.cr.resize(total);
    g.circ_index.resize(total);
    g.circ_layers.resize(total);
    g.circ_cx0.resize(total);
    g.circ_cy0.resize(total);
    fill_cells(g, nc, circ_box, g.circ_start, [&](std::size_t e, std::size_t i, int c0, int r0) {
      g.cx[e] = circle_centers_[2 * i];
      g.cy[e] = circle_centers_[2 * i + 1];
      g.cr[e] = circle_radii_[i];
      g.circ_index[e] = static_cast<std::int32_t>(i);
      g.circ_layers[e] = obstacle_layers_[static_cast<std::size_t>(circle_obstacle_[i])];
      g.circ_cx0[e] = c0;
      g.circ_cy0[e] = r0;
    });
  }
  {
    // Two-pass chamfer transform; with unit weights on all 8 neighbours it is exact for the
    // Chebyshev distance.
    const int nx = g.nx, ny = g.ny;
    g.clearance.assign(static_cast<std::size_t>(nx) * ny, 255);
    auto at = [&](int x, int y) -> std::uint8_t& {
      return g.clearance[static_cast<std::size_t>(y) * nx + x];
    };
    for (int y = 0; y < ny; ++y)
      for (int x = 0; x < nx; ++x) {
        const std::size_t c = static_cast<std::size_t>(y) * nx + x;
        if (g.seg_start[c + 1] > g.seg_start[c] || g.circ_start[c + 1] > g.circ_start[c])
          g.clearance[c] = 0;
      }
    auto relax = [&](int x, int y, int qx, int qy) {
      if (qx < 0 || qy < 0 || qx >= nx || qy >= ny) return;
      const int v = at(qx, qy) + 1;
      if (v < at(x, y)) at(x, y) = static_cast<std::uint8_t>(v);
    };
    for (int y = 0; y < ny; ++y)
      for (int x = 0; x < nx; ++x) {
        relax(x, y, x - 1, y);
        relax(x, y, x - 1, y - 1);
        relax(x, y, x, y - 1);
        relax(x, y, x + 1, y - 1);
      }
    for (int y = ny - 1; y >= 0; --y)
      for (int x = nx - 1; x >= 0; --x) {
        relax(x, y, x + 1, y);
        relax(x, y, x + 1, y + 1);
        relax(x, y, x, y + 1);
        relax(x, y, x - 1, y + 1);
      }
  }
  {
    // Largest empty square anchored at each cell, per quadrant: the classic dynamic
    // programme side(x, y) = 1 + min(side(x+sx, y), side(x, y+sy), side(x+sx, y+sy)),
    // run from the far corner of each quadrant (cells beyond the grid count as empty).
    const int nx = g.nx, ny = g.ny;
    g.quadrant.assign(static_cast<std::size_t>(nx) * ny * 4, 0);
    for (int q = 0; q < 4; ++q) {
      const int sx = (q & 1) ? 1 : -1, sy = (q & 2) ? 1 : -1;
      auto side = [&](int x, int y) -> int {
        if (x < 0 || y < 0 || x >= nx || y >= ny) return 255;
        return g.quadrant[(static_cast<std::size_t>(y) * nx + x) * 4 + q];
      };
      for (int j = 0; j < ny; ++j) {
        const int y = sy > 0 ? ny - 1 - j : j;
        for (int i = 0; i < nx; ++i) {
          const int x = sx > 0 ? nx - 1 - i : i;
          const std::size_t c = static_cast<std::size_t>(y) * nx + x;
          if (g.clearance[c] == 0) continue;  // non-empty: 0
          const int v = 1 + std::min({side(x + sx, y), side(x, y + sy), side(x + sx, y + sy)});
          g.quadrant[c * 4 + q] = static_cast<std::uint8_t>(std::min(v, 255));
        }
      }
    }
  }
  return g;
}

void World::build_index() {
  // Unique across worlds (a copy assigned over this world brings its own number).
  static std::atomic<std::uint64_t> builds{0};
  index_generation_ = ++builds;
  thick_.clear();
  strips_.clear();
  sectors_.clear();
  float b[4];
  if (!bounds(b)) {
    grid_ = WorldGrid{};
    indexed_ = true;
    return;
  }
  WorldGrid g = build_grid(0.0f, cell_size_);
  const float grow =
      static_cast<float>(1e-3 * g.cell + 4e-7 * std::max({std::fabs(g.x0), std::fabs(g.y0),
                                                          std::fabs(g.x0 + g.nx * g.cell),
                                                          std::fabs(g.y0 + g.ny * g.cell)}));
  {
    const std::size_t np = polygon_count();
    auto poly_box = [&](std::size_t i, float* bb) {
      const float* b = &polygon_box_[4 * i];
      bb[0] = b[0] - grow;
      bb[1] = b[1] - grow;
      bb[2] = b[2] + grow;
      bb[3] = b[3] + grow;
    };
    fill_cells(g, np, poly_box, g.poly_start, [](std::size_t, std::size_t, int, int) {});
    g.poly_index.resize(static_cast<std::size_t>(g.poly_start.back()));
    fill_cells(g, np, poly_box, g.poly_start, [&](std::size_t e, std::size_t i, int, int) {
      g.poly_index[e] = static_cast<std::int32_t>(i);
    });
  }
  grid_ = std::move(g);
  indexed_ = true;
}

const WorldGrid* World::thick_grid(float r) const {
  if (!(r > 0.0f && r < 1e30f)) return nullptr;  // grown bounds must stay finite
  return thick_.get(r, [&] { return build_grid(r, std::max<double>(grid_.cell, 0.5 * r)); });
}

std::int32_t World::polygon_at(Vec2 p, std::uint32_t layers, std::vector<std::int32_t>* all) const {
  const WorldGrid& g = grid_;
  if (g.empty() || g.poly_index.empty()) return -1;
  const float fx = (p.x - g.x0) * g.inv_cell, fy = (p.y - g.y0) * g.inv_cell;
  if (!(fx >= 0.0f && fy >= 0.0f && fx < static_cast<float>(g.nx) && fy < static_cast<float>(g.ny)))
    return -1;
  const std::size_t cell = static_cast<std::size_t>(g.row(p.y)) * g.nx + g.col(p.x);
  // Crossing number with the half-open rule (an edge counts when exactly one endpoint is
  // strictly above p), in double: products of float differences are exact, so the side
  // test never contradicts itself at shared vertices. Points on an edge count as inside.
  // 2: on ring k's boundary, 1: inside it, 0: outside.
  const double px = p.x, py = p.y;
  auto ring_test = [&](std::size_t k) {
    const float* box = &polygon_box_[4 * k];
    if (p.x < box[0] || p.x > box[2] || p.y < box[1] || p.y > box[3]) return 0;
    bool in = false;
    const std::int32_t s = ring_start_[k], t = ring_start_[k + 1];
    for (std::int32_t i = s, j = t - 1; i < t; j = i++) {
      const double xi = ring_points_[2 * static_cast<std::size_t>(i)],
                   yi = ring_points_[2 * static_cast<std::size_t>(i) + 1];
      const double xj = ring_points_[2 * static_cast<std::size_t>(j)],
                   yj = ring_points_[2 * static_cast<std::size_t>(j) + 1];
      const double side = (xj - xi) * (py - yi) - (yj - yi) * (px - xi);
      if (side == 0.0 && px >= std::min(xi, xj) && px <= std::max(xi, xj) &&
          py >= std::min(yi, yj) && py <= std::max(yi, yj))
        return 2;
      if ((yi > py) != (yj > py)) {
        // Edge crosses the horizontal line through p; it is right of p when p is on the
        // left of the upward-oriented edge.
        const bool upward = yj > yi;
        if (upward ? side > 0.0 : side < 0.0) in = !in;
      }
    }
    return in ? 1 : 0;
  };
  // A polygon with holes is several consecutive ring entries with one id: p is inside
  // where an odd number of its rings hold it (or it is on one), counted over all of them
  // once per polygon (up to 32 remembered; beyond, a polygon is counted again, alike).
  const std::size_t rings = polygon_obstacle_.size();
  std::int32_t seen[32];
  int seen_count = 0;
  // A holding polygon: the answer, or (all) one more of them.
  auto found = [&](std::int32_t id) {
    if (!all) return true;
    if (std::find(all->begin(), all->end(), id) == all->end()) all->push_back(id);
    return false;
  };
  const std::size_t before = all ? all->size() : 0;
  for (std::int32_t e = g.poly_start[cell]; e < g.poly_start[cell + 1]; ++e) {
    const auto k = static_cast<std::size_t>(g.poly_index[static_cast<std::size_t>(e)]);
    const std::int32_t id = polygon_obstacle_[k];
    if (!(obstacle_layers_[static_cast<std::size_t>(id)] & layers)) continue;
    const bool several = (k > 0 && polygon_obstacle_[k - 1] == id) ||
                         (k + 1 < rings && polygon_obstacle_[k + 1] == id);
    if (!several) {
      if (ring_test(k) != 0 && found(id)) return id;
      continue;
    }
    if (std::find(seen, seen + seen_count, id) != seen + seen_count) continue;
    if (seen_count < 32) seen[seen_count++] = id;
    std::size_t first = k;
    while (first > 0 && polygon_obstacle_[first - 1] == id) --first;
    bool holds = false;
    for (std::size_t r = first; r < rings && polygon_obstacle_[r] == id; ++r) {
      const int t = ring_test(r);
      if (t == 2) {
        holds = true;
        break;
      }
      holds ^= t == 1;
    }
    if (holds && found(id)) return id;
  }
  return all && all->size() > before ? (*all)[before] : -1;
}

std::int32_t World::circle_at(Vec2 p, std::uint32_t layers, std::vector<std::int32_t>* all) const {
  const WorldGrid& g = grid_;
  if (g.empty() || g.cx.empty()) return -1;
  const float fx = (p.x - g.x0) * g.inv_cell, fy = (p.y - g.y0) * g.inv_cell;
  if (!(fx >= 0.0f && fy >= 0.0f && fx < static_cast<float>(g.nx) && fy < static_cast<float>(g.ny)))
    return -1;
  const std::size_t cell = static_cast<std::size_t>(g.row(p.y)) * g.nx + g.col(p.x);
  std::int32_t best = -1;
  for (std::int32_t e = g.circ_start[cell]; e < g.circ_start[cell + 1]; ++e) {
    const auto u = static_cast<std::size_t>(e);
    if (!(g.circ_layers[u] & layers)) continue;
    const double dx = static_cast<double>(p.x) - g.cx[u], dy = static_cast<double>(p.y) - g.cy[u];
    const double r = g.cr[u];
    if (dx * dx + dy * dy <= r * r) {
      const std::int32_t id = circle_obstacle_[static_cast<std::size_t>(g.circ_index[u])];
      if (best < 0 || id < best) best = id;
      if (all && std::find(all->begin(), all->end(), id) == all->end()) all->push_back(id);
    }
  }
  return best;
}

namespace {

bool holds(const std::vector<std::int32_t>& ids, std::int32_t o) {
  return std::find(ids.begin(), ids.end(), o) != ids.end();
}

}  // namespace

// Whether the way out of the held solids `ids` from p to the exit c is blocked: the
// centre's path p->q (q on the solid's boundary) crossing or touching a wall or circle of
// another obstacle in `layers`, or the body (radius r) on q->c coming within r of one,
// or, with `away_ok`, where the body at q is already within r of another solid (a box,
// polygon or circle beside the one left), closer than at q: a body leaving a solid that
// moves away from a neighbouring solid's edge is not blocked by it (every way out of a box
// was refused beside an overlapping box; fuzz round 13). A plain wall blocks as before.
// Reads the walls of the grid cells round the paths (each obstacle is listed in every
// cell its box overlaps).
namespace {
// Calls seg(k, o) for each wall entry k (of obstacle o, in `layers`) of the grid cells
// [i0, i1] × [j0, j1], then circ(k, o) for their circle entries, cell by cell; stops at the
// first call that returns true, and returns whether one did. The walk that
// walls_through, obstacle_near and blocked_way share.
template <class Seg, class Circ>
bool any_in_cells(const World& w, int i0, int i1, int j0, int j1, std::uint32_t layers, Seg&& seg,
                  Circ&& circ) {
  const WorldGrid& g = w.grid();
  const auto lay = w.obstacle_layers();
  const auto wall_obs = w.wall_obstacle();
  const auto circ_obs = w.circle_obstacle();
  for (int j = j0; j <= j1; ++j)
    for (int i = i0; i <= i1; ++i) {
      const std::size_t cell = static_cast<std::size_t>(j) * g.nx + i;
      for (std::int32_t e = g.seg_start[cell]; e < g.seg_start[cell + 1]; ++e) {
        const auto k = static_cast<std::size_t>(e);
        const std::int32_t o = wall_obs[static_cast<std::size_t>(g.seg_index[k])];
        if ((lay[static_cast<std::size_t>(o)] & layers) && seg(k, o)) return true;
      }
      if (g.circ_start.empty()) continue;
      for (std::int32_t e = g.circ_start[cell]; e < g.circ_start[cell + 1]; ++e) {
        const auto k = static_cast<std::size_t>(e);
        const std::int32_t o = circ_obs[static_cast<std::size_t>(g.circ_index[k])];
        if ((lay[static_cast<std::size_t>(o)] & layers) && circ(k, o)) return true;
      }
    }
  return false;
}
}  // namespace

int walls_through(const World& w, Vec2 p, double tol, std::uint32_t layers, Vec2* normals,
                  int max_out) {
  const WorldGrid& g = w.grid();
  if (g.empty()) return 0;
  int count = 0;
  auto add = [&](double nx, double ny) {
    const double len = std::hypot(nx, ny);
    if (!(len > 0.0)) return false;
    const Vec2 n{static_cast<float>(nx / len), static_cast<float>(ny / len)};
    for (int c = 0; c < std::min(count, max_out); ++c)
      if (normals[c].x == n.x && normals[c].y == n.y) return false;  // (in several cells)
    if (count < max_out) normals[count] = n;
    ++count;
    return false;
  };
  any_in_cells(
      w, g.col(static_cast<float>(p.x - tol)), g.col(static_cast<float>(p.x + tol)),
      g.row(static_cast<float>(p.y - tol)), g.row(static_cast<float>(p.y + tol)), layers,
      [&](std::size_t k, std::int32_t) {
        return segment_distance2(g.ax[k], g.ay[k], g.bx[k], g.by[k], p.x, p.y) <= tol * tol &&
               add(-(double{g.by[k]} - g.ay[k]), double{g.bx[k]} - g.ax[k]);
      },
      [&](std::size_t k, std::int32_t) {
        const double dx = double{p.x} - g.cx[k], dy = double{p.y} - g.cy[k];
        return std::fabs(std::hypot(dx, dy) - g.cr[k]) <= tol && add(dx, dy);
      });
  return std::min(count, max_out);
}

double on_wall_tolerance(Vec2 p, double scale) {
  // Float32 coordinates put a point meant on a slanted wall up to half an ulp of its
  // largest coordinate off the wall's line: a few ulps, and a millionth of the scale.
  return 4.0 * std::ldexp(
                   1.0,
                   std::ilogb(std::max({1e-30, std::fabs(double{p.x}), std::fabs(double{p.y})})) -
                       23) +
         1e-6 * scale;
}

bool obstacle_near(const World& w, double x0, double y0, double x1, double y1,
                   std::uint32_t layers) {
  const WorldGrid& g = w.grid();
  if (g.empty()) return false;
  auto any = [](std::size_t, std::int32_t) { return true; };
  return any_in_cells(w, g.col(static_cast<float>(x0)), g.col(static_cast<float>(x1)),
                      g.row(static_cast<float>(y0)), g.row(static_cast<float>(y1)), layers, any,
                      any);
}

bool blocked_way(const World& w, Vec2 p, Vec2 q, Vec2 c, float r,
                 const std::vector<std::int32_t>& ids, std::uint32_t layers, bool away_ok) {
  const WorldGrid& g = w.grid();
  if (g.empty()) return false;  // no obstacle: no cells to read (a NavField in open space)
  const float reach = r + g.cell;
  const int i0 = g.col(std::min({p.x, q.x, c.x}) - reach),
            i1 = g.col(std::max({p.x, q.x, c.x}) + reach);
  const int j0 = g.row(std::min({p.y, q.y, c.y}) - reach),
            j1 = g.row(std::max({p.y, q.y, c.y}) + reach);
  const double need = static_cast<double>(r) * (1.0 - 1e-4);
  return any_in_cells(
      w, i0, i1, j0, j1, layers,
      [&](std::size_t k, std::int32_t o) {
        if (holds(ids, o)) return false;
        // Crossing or touching by exact turn signs: segment_gap's distances read a way
        // through a wall's end point as 1e-17 away from it, and a NavField goal in a room
        // of one cell was seen from outside along a diagonal through the room's corner
        // (fuzz round 25). With away_ok a way that only leaves a wall p lies on is free.
        if (away_ok ? path_meets_wall(p.x, p.y, q.x, q.y, g.ax[k], g.ay[k], g.bx[k], g.by[k])
                    : segments_meet(p.x, p.y, q.x, q.y, g.ax[k], g.ay[k], g.bx[k], g.by[k]))
          return true;
        const double gap = segment_gap(q.x, q.y, c.x, c.y, g.ax[k], g.ay[k], g.bx[k], g.by[k]);
        if (gap >= need) return false;
        // Only a solid's edge (a box or polygon) lets a body move away from it: the far
        // side of a plain wall is open, and a body straddling a crack in one would leave
        // through the crack (0: through it).
        const ObstacleKind kind = w.obstacle_kind()[static_cast<std::size_t>(o)];
        if (!away_ok || gap == 0.0 ||
            (kind != ObstacleKind::kBox && kind != ObstacleKind::kPolygon))
          return true;
        const double at_q =
            std::sqrt(segment_distance2(g.ax[k], g.ay[k], g.bx[k], g.by[k], q.x, q.y));
        return gap < at_q * (1.0 - 1e-7);
      },
      [&](std::size_t k, std::int32_t o) {
        if (holds(ids, o)) return false;
        const double rr = g.cr[k];
        if (std::sqrt(segment_distance2(p.x, p.y, q.x, q.y, g.cx[k], g.cy[k])) <= rr) return true;
        const double d = std::sqrt(segment_distance2(q.x, q.y, c.x, c.y, g.cx[k], g.cy[k]));
        if (d >= rr + need) return false;
        if (!away_ok) return true;
        const double at_q = std::hypot(double(q.x) - g.cx[k], double(q.y) - g.cy[k]);
        return d < at_q * (1.0 - 1e-7);
      });
}

}  // namespace contextsteer
