// SPDX-License-Identifier: MIT
// Paths: construction (dedup, Catmull-Rom resampling, BVH) and offset queries.
#include "contextsteer/path.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "contextsteer/geometry.hpp"
#include "parallel.hpp"

namespace contextsteer {
namespace {

struct P2 {
  double x, y;
};

constexpr std::uint32_t kLeafSize = 8;  // best of 4, 8, 16 measured on ellipses of 100-10k segments
constexpr std::size_t kGrain = 256;
constexpr int kStackSize = 64;  // median split: depth <= log2(S) + 1, far below 64

double dist(P2 a, P2 b) { return std::hypot(b.x - a.x, b.y - a.y); }

// Centripetal Catmull-Rom (Barry-Goldman pyramid) through p1 -> p2 with neighbours p0,
// p3, knots spaced by |P_{i+1} - P_i|^(1/2). Evaluated at u in [0, 1) of the span.
// Consecutive control points are distinct, but a spacing can still vanish in the sums
// (a 1e-30 step next to a 100 m one): then the pyramid would divide 0 by 0, and the span
// is drawn straight.
P2 catmull_rom(P2 p0, P2 p1, P2 p2, P2 p3, double u) {
  const double t0 = 0.0;
  const double t1 = t0 + std::sqrt(dist(p0, p1));
  const double t2 = t1 + std::sqrt(dist(p1, p2));
  const double t3 = t2 + std::sqrt(dist(p2, p3));
  if (!(t0 < t1 && t1 < t2 && t2 < t3))
    return P2{p1.x + u * (p2.x - p1.x), p1.y + u * (p2.y - p1.y)};
  const double t = t1 + (t2 - t1) * u;
  auto lerp = [t](P2 a, P2 b, double ta, double tb) {
    const double wa = (tb - t) / (tb - ta), wb = (t - ta) / (tb - ta);
    return P2{wa * a.x + wb * b.x, wa * a.y + wb * b.y};
  };
  const P2 a1 = lerp(p0, p1, t0, t1);
  const P2 a2 = lerp(p1, p2, t1, t2);
  const P2 a3 = lerp(p2, p3, t2, t3);
  const P2 b1 = lerp(a1, a2, t0, t2);
  const P2 b2 = lerp(a2, a3, t1, t3);
  return lerp(b1, b2, t1, t2);
}

std::vector<P2> smooth_points(const std::vector<P2>& c, bool closed, int samples) {
  const std::size_t n = c.size();
  auto at = [&](std::ptrdiff_t i) -> P2 {
    if (closed) return c[static_cast<std::size_t>((i % static_cast<std::ptrdiff_t>(n) + n) % n)];
    if (i < 0) return {2 * c[0].x - c[1].x, 2 * c[0].y - c[1].y};  // mirrored end points
    if (i >= static_cast<std::ptrdiff_t>(n)) {
      return {2 * c[n - 1].x - c[n - 2].x, 2 * c[n - 1].y - c[n - 2].y};
    }
    return c[static_cast<std::size_t>(i)];
  };
  const std::size_t spans = closed ? n : n - 1;
  std::vector<P2> out;
  out.reserve(spans * static_cast<std::size_t>(samples) + 1);
  for (std::size_t i = 0; i < spans; ++i) {
    const auto k = static_cast<std::ptrdiff_t>(i);
    out.push_back(c[i]);  // u = 0 exactly: the spline interpolates the control points
    for (int j = 1; j < samples; ++j) {
      out.push_back(
          catmull_rom(at(k - 1), at(k), at(k + 1), at(k + 2), static_cast<double>(j) / samples));
    }
  }
  if (!closed) out.push_back(c[n - 1]);
  return out;
}

}  // namespace

Path::Path(std::span<const float> xy, bool closed, bool smooth, int samples_per_segment)
    : closed_(closed) {
  if (xy.size() % 2 != 0) throw std::invalid_argument("Path: expected (P, 2) points");
  if (samples_per_segment < 1) {
    throw std::invalid_argument("Path: samples_per_segment must be >= 1, got " +
                                std::to_string(samples_per_segment));
  }
  std::vector<P2> control;
  for (std::size_t i = 0; i < xy.size() / 2; ++i) {
    const float x = xy[2 * i], y = xy[2 * i + 1];
    if (!std::isfinite(x) || !std::isfinite(y)) {
      throw std::invalid_argument("Path: point " + std::to_string(i) + " is not finite");
    }
    if (!control.empty() && control.back().x == x && control.back().y == y) continue;
    control.push_back({x, y});
  }
  if (closed && control.size() >= 2 && control.back().x == control.front().x &&
      control.back().y == control.front().y) {
    control.pop_back();
  }
  if (control.size() < 2) {
    throw std::invalid_argument("Path: expected at least 2 distinct points, got " +
                                std::to_string(control.size()));
  }
  const std::vector<P2> dense =
      smooth ? smooth_points(control, closed, samples_per_segment) : control;
  // Store float32 vertices, dropping any that rounding made equal to their predecessor.
  xy_.reserve(dense.size() * 2);
  for (const P2& p : dense) {
    const auto x = static_cast<float>(p.x), y = static_cast<float>(p.y);
    const std::size_t v = xy_.size() / 2;
    if (v > 0 && xy_[2 * v - 2] == x && xy_[2 * v - 1] == y) continue;
    xy_.push_back(x);
    xy_.push_back(y);
  }
  if (closed && xy_.size() >= 4 && xy_[xy_.size() - 2] == xy_[0] && xy_.back() == xy_[1]) {
    xy_.resize(xy_.size() - 2);
  }
  const std::size_t v = xy_.size() / 2;
  if (v < 2) throw std::invalid_argument("Path: expected at least 2 distinct points");
  const std::size_t s = closed ? v : v - 1;
  seg_len_.resize(s);
  dir_.resize(2 * s);
  cum_.resize(s + 1);
  cum_[0] = 0.0;
  for (std::size_t i = 0; i < s; ++i) {
    const std::size_t j = (i + 1) % v;
    const double dx = double(xy_[2 * j]) - xy_[2 * i], dy = double(xy_[2 * j + 1]) - xy_[2 * i + 1];
    const double len = std::hypot(dx, dy);
    seg_len_[i] = len;
    dir_[2 * i] = static_cast<float>(dx / len);
    dir_[2 * i + 1] = static_cast<float>(dy / len);
    cum_[i + 1] = cum_[i] + len;
  }
  length_ = cum_[s];
  build_bvh();
}

void Path::build_bvh() {
  const auto s = static_cast<std::uint32_t>(seg_len_.size());
  order_.resize(s);
  std::vector<float> centres(2 * s);
  const std::size_t v = num_points();
  for (std::uint32_t i = 0; i < s; ++i) {
    order_[i] = i;
    const std::size_t j = (i + 1) % v;
    centres[2 * i] = 0.5f * (xy_[2 * i] + xy_[2 * j]);
    centres[2 * i + 1] = 0.5f * (xy_[2 * i + 1] + xy_[2 * j + 1]);
  }
  nodes_.clear();
  nodes_.reserve(2 * (s / kLeafSize + 1));
  nodes_.push_back({});
  build_node(0, 0, s, centres);
  // Segment end points in leaf order: a leaf reads one contiguous block.
  leaf_xy_.resize(4 * std::size_t(s));
  for (std::uint32_t k = 0; k < s; ++k) {
    const std::size_t i = order_[k], j = (i + 1) % v;
    leaf_xy_[4 * k] = xy_[2 * i];
    leaf_xy_[4 * k + 1] = xy_[2 * i + 1];
    leaf_xy_[4 * k + 2] = xy_[2 * j];
    leaf_xy_[4 * k + 3] = xy_[2 * j + 1];
  }
}

// Fills nodes_[index] with the subtree over leaf slots [begin, end) of order_.
// Children are allocated as a pair, so right = left + 1. Recursion depth is
// log2(S / kLeafSize) thanks to the median split.
void Path::build_node(std::uint32_t index, std::uint32_t begin, std::uint32_t end,
                      const std::vector<float>& centres) {
  const std::size_t v = num_points();
  Node n{std::numeric_limits<float>::infinity(),
         std::numeric_limits<float>::infinity(),
         -std::numeric_limits<float>::infinity(),
         -std::numeric_limits<float>::infinity(),
         0,
         0};
  float cmin_x = n.min_x, cmin_y = n.min_y, cmax_x = n.max_x, cmax_y = n.max_y;
  for (std::uint32_t k = begin; k < end; ++k) {
    const std::uint32_t i = order_[k];
    const std::size_t j = (i + 1) % v;
    n.min_x = std::min({n.min_x, xy_[2 * i], xy_[2 * j]});
    n.max_x = std::max({n.max_x, xy_[2 * i], xy_[2 * j]});
    n.min_y = std::min({n.min_y, xy_[2 * i + 1], xy_[2 * j + 1]});
    n.max_y = std::max({n.max_y, xy_[2 * i + 1], xy_[2 * j + 1]});
    cmin_x = std::min(cmin_x, centres[2 * i]);
    cmax_x = std::max(cmax_x, centres[2 * i]);
    cmin_y = std::min(cmin_y, centres[2 * i + 1]);
    cmax_y = std::max(cmax_y, centres[2 * i + 1]);
  }
  if (end - begin <= kLeafSize) {
    n.first = begin;
    n.count = end - begin;
    nodes_[index] = n;
    return;
  }
  // Median split along the longer extent of the segment centres.
  const int axis = (cmax_x - cmin_x) >= (cmax_y - cmin_y) ? 0 : 1;
  const std::uint32_t mid = begin + (end - begin) / 2;
  std::nth_element(order_.begin() + begin, order_.begin() + mid, order_.begin() + end,
                   [&](std::uint32_t a, std::uint32_t b) {
                     const float ca = centres[2 * a + axis], cb = centres[2 * b + axis];
                     return ca < cb || (ca == cb && a < b);
                   });
  const auto left = static_cast<std::uint32_t>(nodes_.size());
  nodes_.push_back({});
  nodes_.push_back({});
  n.first = left;
  n.count = 0;
  nodes_[index] = n;
  build_node(left, begin, mid, centres);
  build_node(left + 1, mid, end, centres);
}

double Path::normalize_offset(double s) const {
  if (closed_) {
    double r = std::fmod(s, length_);
    if (r < 0.0) r += length_;
    if (r >= length_) r = 0.0;  // r + length_ may round up to length_
    return r;
  }
  return std::clamp(s, 0.0, length_);
}

std::size_t Path::segment_at(double s) const {
  const auto it = std::upper_bound(cum_.begin(), cum_.end(), s);
  const std::ptrdiff_t i = (it - cum_.begin()) - 1;
  return static_cast<std::size_t>(
      std::clamp<std::ptrdiff_t>(i, 0, static_cast<std::ptrdiff_t>(seg_len_.size()) - 1));
}

// Squared distance from (px, py) to the segment in leaf slot `slot`, and the clamped
// parameter t of the nearest point. Double precision: near-ties between segments must
// resolve like the oracle's, and the result feeds an offset of up to the full length.
double Path::segment_distance2(std::uint32_t slot, double px, double py, double& t) const {
  const float* e = &leaf_xy_[4 * std::size_t(slot)];
  const SegmentPoint q = closest_on_segment(e[0], e[1], e[2], e[3], px, py);
  t = q.u;
  return (px - q.x) * (px - q.x) + (py - q.y) * (py - q.y);
}

double Path::closest_offset_near(Vec2 p, double s, double w, double& distance2,
                                 std::size_t max_segments) const {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (!(w >= 0.0) || (closed_ && 2.0 * w >= length_)) return nan;
  const std::size_t n = seg_len_.size();
  const double lo = closed_ ? normalize_offset(s - w) : std::clamp(s - w, 0.0, length_);
  // The window's length still to cover, from the start of segment i on.
  std::size_t i = segment_at(lo);
  double left = (closed_ ? 2.0 * w : std::clamp(s + w, 0.0, length_) - lo) + (lo - cum_[i]);
  double best_d2 = std::numeric_limits<double>::infinity(), best_t = 0.0;
  std::size_t best = n;
  for (std::size_t visited = 0;; ++visited) {
    if (visited >= max_segments) return nan;
    const std::size_t j = (i + 1) % num_points();
    const SegmentPoint q = closest_on_segment(xy_[2 * i], xy_[2 * i + 1], xy_[2 * j],
                                              xy_[2 * j + 1], double(p.x), double(p.y));
    const double dx = double(p.x) - q.x, dy = double(p.y) - q.y;
    const double d2 = dx * dx + dy * dy;
    if (d2 < best_d2) best_d2 = d2, best_t = q.u, best = i;
    left -= seg_len_[i];
    if (left <= 0.0 || visited + 1 >= n || (!closed_ && i + 1 >= n)) break;
    i = (i + 1) % n;
  }
  distance2 = best_d2;
  const double off = best_t >= 1.0 ? cum_[best + 1] : cum_[best] + best_t * seg_len_[best];
  if (closed_ && off >= length_) return 0.0;
  return off;
}

double Path::closest_offset(Vec2 p, double* distance2) const {
  const double px = p.x, py = p.y;
  double best_d2 = std::numeric_limits<double>::infinity();
  double best_t = 0.0;
  std::uint32_t best_seg = std::numeric_limits<std::uint32_t>::max();
  // Lexicographic (distance, segment) minimum: unique, whatever the visiting order.
  auto consider = [&](std::uint32_t slot) {
    double t;
    const double d2 = segment_distance2(slot, px, py, t);
    const std::uint32_t seg = order_[slot];
    if (d2 < best_d2 || (d2 == best_d2 && seg < best_seg)) {
      best_d2 = d2, best_t = t, best_seg = seg;
    }
  };
  auto box_d2 = [px, py](const Node& n) {
    const double lx = double(n.min_x) - px, hx = px - double(n.max_x);
    const double ly = double(n.min_y) - py, hy = py - double(n.max_y);
    const double dx = lx > 0.0 ? lx : (hx > 0.0 ? hx : 0.0);
    const double dy = ly > 0.0 ? ly : (hy > 0.0 ? hy : 0.0);
    return dx * dx + dy * dy;
  };
  // Stack of (node, box distance): a popped node is skipped when best_d2 shrank below
  // the distance it was pushed with, without recomputing its box distance.
  std::uint32_t stack[kStackSize];
  double stack_d2[kStackSize];
  int top = 0;
  stack[top] = 0;
  stack_d2[top++] = box_d2(nodes_[0]);
  while (top > 0) {
    --top;
    // Strict '>': a node at exactly the best distance may still hold a lower index.
    if (stack_d2[top] > best_d2) continue;
    const Node& n = nodes_[stack[top]];
    if (n.count > 0) {
      for (std::uint32_t k = n.first; k < n.first + n.count; ++k) consider(k);
      continue;
    }
    const std::uint32_t l = n.first, r = n.first + 1;
    const double dl = box_d2(nodes_[l]), dr = box_d2(nodes_[r]);
    // Push the farther child first so the nearer one is opened next (tightens best_d2).
    const bool left_first = dl <= dr;
    const std::uint32_t far = left_first ? r : l, near = left_first ? l : r;
    const double far_d2 = left_first ? dr : dl, near_d2 = left_first ? dl : dr;
    if (far_d2 <= best_d2) stack[top] = far, stack_d2[top++] = far_d2;
    if (near_d2 <= best_d2) stack[top] = near, stack_d2[top++] = near_d2;
    CONTEXTSTEER_ASSERT(top <= kStackSize);
  }
  // A NaN point is nearer than no segment: no offset (callers check their inputs first).
  if (distance2) *distance2 = best_d2;
  if (best_seg == std::numeric_limits<std::uint32_t>::max())
    return std::numeric_limits<double>::quiet_NaN();
  // t == 1 reads the next cumulative length exactly, so a vertex has one offset.
  const double off =
      best_t >= 1.0 ? cum_[best_seg + 1] : cum_[best_seg] + best_t * seg_len_[best_seg];
  if (closed_ && off >= length_) return 0.0;
  return off;
}

Vec2 Path::point_at(double s) const {
  s = normalize_offset(s);
  const std::size_t i = segment_at(s);
  const std::size_t j = (i + 1) % num_points();
  const double t = std::clamp((s - cum_[i]) / seg_len_[i], 0.0, 1.0);
  const double ax = xy_[2 * i], ay = xy_[2 * i + 1];
  return {static_cast<float>(ax + t * (double(xy_[2 * j]) - ax)),
          static_cast<float>(ay + t * (double(xy_[2 * j + 1]) - ay))};
}

Vec2 Path::tangent_at(double s) const {
  const std::size_t i = segment_at(normalize_offset(s));
  return {dir_[2 * i], dir_[2 * i + 1]};
}

Vec2 Path::direction(Vec2 p, double look_ahead, PathDirectionMode mode) const {
  const double s = closest_offset(p) + look_ahead;
  if (mode == PathDirectionMode::kSeek) {
    const Vec2 q = point_at(s);
    const double dx = double(q.x) - p.x, dy = double(q.y) - p.y;
    const double len = std::hypot(dx, dy);
    // Below float resolution of the coordinates the difference is rounding noise.
    const double tiny = 1e-5 * std::max({1.0, std::fabs(double(q.x)), std::fabs(double(q.y))});
    if (len > tiny) return {static_cast<float>(dx / len), static_cast<float>(dy / len)};
  }
  return tangent_at(s);
}

// ------------------------------------------------------------------ batched ---

void closest_offset_rows(const Path& path, std::span<const float> points, std::span<float> out,
                         std::size_t begin, std::size_t end) {
  const auto len_f = static_cast<float>(path.length());
  for (std::size_t i = begin; i < end; ++i) {
    auto o = static_cast<float>(path.closest_offset({points[2 * i], points[2 * i + 1]}));
    if (path.closed() && o >= len_f) o = 0.0f;  // keep [0, length) after rounding to float
    out[i] = o;
  }
}

void closest_offset(const Path& path, std::span<const float> points, std::span<float> out) {
  parallel_for(out.size(), kGrain,
               [&](std::size_t b, std::size_t e) { closest_offset_rows(path, points, out, b, e); });
}

void point_at_rows(const Path& path, std::span<const float> offsets, std::span<float> out,
                   std::size_t begin, std::size_t end) {
  for (std::size_t i = begin; i < end; ++i) {
    const Vec2 q = path.point_at(offsets[i]);
    out[2 * i] = q.x;
    out[2 * i + 1] = q.y;
  }
}

void point_at(const Path& path, std::span<const float> offsets, std::span<float> out) {
  parallel_for(offsets.size(), kGrain,
               [&](std::size_t b, std::size_t e) { point_at_rows(path, offsets, out, b, e); });
}

void tangent_at_rows(const Path& path, std::span<const float> offsets, std::span<float> out,
                     std::size_t begin, std::size_t end) {
  for (std::size_t i = begin; i < end; ++i) {
    const Vec2 q = path.tangent_at(offsets[i]);
    out[2 * i] = q.x;
    out[2 * i + 1] = q.y;
  }
}

void tangent_at(const Path& path, std::span<const float> offsets, std::span<float> out) {
  parallel_for(offsets.size(), kGrain,
               [&](std::size_t b, std::size_t e) { tangent_at_rows(path, offsets, out, b, e); });
}

void direction_rows(const Path& path, std::span<const float> points, double look_ahead,
                    PathDirectionMode mode, std::span<float> out, std::size_t begin,
                    std::size_t end) {
  for (std::size_t i = begin; i < end; ++i) {
    const Vec2 d = path.direction({points[2 * i], points[2 * i + 1]}, look_ahead, mode);
    out[2 * i] = d.x;
    out[2 * i + 1] = d.y;
  }
}

void direction(const Path& path, std::span<const float> points, double look_ahead,
               PathDirectionMode mode, std::span<float> out) {
  parallel_for(points.size() / 2, kGrain, [&](std::size_t b, std::size_t e) {
    direction_rows(path, points, look_ahead, mode, out, b, e);
  });
}

}  // namespace contextsteer
