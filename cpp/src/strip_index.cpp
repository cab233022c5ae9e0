// SPDX-License-Identifier: MIT
// The strip index of a fixed slot set: build, and the slot rays cast on it.
#include "strip_index.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "contextsteer/geometry.hpp"
#include "grid_walk.hpp"
#include "parallel.hpp"

namespace contextsteer::detail {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// ------------------------------------------------------------------ strips ---
//
// Fixed slot directions (no headings): per direction, the obstacles sorted into strips
// parallel to it (DirectionStrips in strip_index.hpp). A ray from o along d stays at v = v(o), so
// it can only meet the entries of that strip with umax >= u(o); it meets them in order of
// u, so a scan of the strip (sorted by umax) from there may stop once the smallest umin of
// the rest lies beyond the best hit. Every candidate takes the same exact test as the grid
// walk (ray_segment / ray_capsule / ray_circle on the same float coordinates), so the hits
// are those of raycast bit for bit; the intervals only decide what is tested.
//
// Slack. Interval ends are computed in double and grown by kStripSlack * scale (scale =
// largest |coordinate| of the geometry plus the radius), then rounded outward to float; a
// query widens its v and u by kStripSlack * (scale + |o|). That covers, with many orders of
// magnitude to spare, the double rounding of u and v, and the error of the hit tests'
// side values (a few ulps of |a - o|): a segment the exact test reports as hit has v(o)
// within that error of its v range, and the hit point's u within it of the u interval.
// Hit distances are compared to u with the factor 1 + 2^-20, which covers |d|^2 != 1 for
// a float32 unit direction (|d|^2 - 1 is ~2^-23).
//
// Cost. Measured on the racetrack (M = 10000, L = 50, 16 slots of 10,000 agents, one
// thread, benchmarks/kernels/ray_kernels.cpp): see kStripWidth.
constexpr double kStripSlack = 0x1p-30;
constexpr double kStripGrow = 1.0 + 0x1p-20;
// Strip width as a multiple of the median obstacle extent (segment length, circle
// diameter). Narrower strips list fewer entries near a ray's hit but list each obstacle in
// more strips.
constexpr double kStripWidth = 0.25;
// Largest strip index of one slot set (bytes); a larger one is not built (the slot rays
// walk the grid instead). The width doubles (up to kStripWiden times) until it fits.
constexpr std::size_t kStripBudget = std::size_t{64} << 20;
constexpr int kStripWiden = 8;

// Rounds x down (dir < 0) or up (dir > 0) to a float.
inline float round_out(double x, int dir) {
  float f = static_cast<float>(x);
  if (dir < 0 && static_cast<double>(f) > x) f = std::nextafter(f, -kInf);
  if (dir > 0 && static_cast<double>(f) < x) f = std::nextafter(f, kInf);
  return f;
}

// One obstacle of the strip build, in double: a segment (a, b) or a circle (centre a, radius rr).
struct StripPrim {
  double ax, ay, bx, by, rr;
  std::int32_t prim;  // segment row, or -1 - circle row
};

// Strip of v, clamped to [0, count - 1]. Monotone in v; the build and the queries both map
// values through it, so a value lies in the same strip for both.
inline int strip_of(const DirectionStrips& S, double v) {
  const double f = std::min(std::max((v - S.v0) * S.inv_h, -1.0), static_cast<double>(S.count));
  return std::min(std::max(floor_int(f), 0), S.count - 1);
}

// Lowest u of the capsule of radius R around the segment (ua, va)-(ub, vb) (in u, v
// coordinates) on the line v = c; +inf when it misses the line. Over the segment's points
// q(s) within R of the line, f(s) = u(s) - sqrt(R^2 - (v(s) - c)^2) is convex; its
// stationary point has v(s) - c = -R g sign(m) / hypot(g, m) (g, m: the segment's u, v
// extents). The minimum is taken with both ends of the feasible interval too.
inline double capsule_line_umin(double ua, double va, double ub, double vb, double R, double c) {
  const double g = ub - ua, m = vb - va, x0 = va - c;
  double s0 = 0.0, s1 = 1.0;
  if (m != 0.0) {
    const double p = (-R - x0) / m, q = (R - x0) / m;
    s0 = std::max(0.0, std::min(p, q));
    s1 = std::min(1.0, std::max(p, q));
    if (!(s0 <= s1)) return kInf;
  } else if (std::fabs(x0) > R) {
    return kInf;
  }
  auto f = [&](double s) {
    const double x = x0 + m * s;
    return ua + g * s - std::sqrt(std::max(0.0, R * R - x * x));
  };
  double best = std::min(f(s0), f(s1));
  if (m != 0.0) {
    const double xs = -R * g * (m > 0.0 ? 1.0 : -1.0) / std::hypot(g, m);
    best = std::min(best, f(std::clamp((xs - x0) / m, s0, s1)));
  }
  return best;
}

// Lowest u of the capsule of radius R around (ua, va)-(ub, vb) within the band v in
// [lo, hi]; +inf when they do not meet. A lowest point inside the band is a lowest point of
// the whole (convex) capsule, the disc at the segment's lowest end; otherwise it lies on
// one of the band's edge lines.
inline double capsule_band_umin(double ua, double va, double ub, double vb, double R, double lo,
                                double hi) {
  double best = kInf;
  if (ua < ub) {
    if (va >= lo && va <= hi) best = ua - R;
  } else if (ub < ua) {
    if (vb >= lo && vb <= hi) best = ub - R;
  } else if (std::max(va, vb) >= lo && std::min(va, vb) <= hi) {
    best = ua - R;
  }
  return std::min(
      {best, capsule_line_umin(ua, va, ub, vb, R, lo), capsule_line_umin(ua, va, ub, vb, R, hi)});
}

// v interval of a primitive (grown by the cast radius r and the slack).
inline void prim_v(const StripPrim& p, double dx, double dy, double r, double slack, double& lo,
                   double& hi) {
  const double va = dx * p.ay - dy * p.ax;
  if (p.prim >= 0) {
    const double vb = dx * p.by - dy * p.bx;
    lo = std::min(va, vb) - r - slack;
    hi = std::max(va, vb) + r + slack;
  } else {
    lo = va - p.rr - slack;
    hi = va + p.rr + slack;
  }
}

// The v range all primitives cover along (dx, dy), and the sum of their v extents.
struct VSpan {
  double vmin = kInf, vmax = -kInf, extent_sum = 0.0;
};
VSpan v_span(std::span<const StripPrim> prims, double dx, double dy, double r, double slack) {
  VSpan out;
  for (const StripPrim& p : prims) {
    double lo, hi;
    prim_v(p, dx, dy, r, slack, lo, hi);
    out.vmin = std::min(out.vmin, lo);
    out.vmax = std::max(out.vmax, hi);
    out.extent_sum += hi - lo;
  }
  return out;
}

void build_direction(std::span<const StripPrim> prims, double dx, double dy, double r, double h,
                     double slack, DirectionStrips& S) {
  S.dx = dx;
  S.dy = dy;
  S.inv_h = 1.0 / h;
  if (prims.empty()) return;
  const VSpan span = v_span(prims, dx, dy, r, slack);
  const double vmin = span.vmin, vmax = span.vmax;
  S.v0 = vmin;
  S.count = static_cast<int>(std::floor((vmax - vmin) * S.inv_h)) + 1;
  S.v1 = vmax;
  S.start.assign(static_cast<std::size_t>(S.count) + 1, 0);
  for (const StripPrim& p : prims) {
    double lo, hi;
    prim_v(p, dx, dy, r, slack, lo, hi);
    for (int k = strip_of(S, lo), k1 = strip_of(S, hi); k <= k1; ++k)
      ++S.start[static_cast<std::size_t>(k) + 1];
  }
  for (int k = 0; k < S.count; ++k) S.start[k + 1] += S.start[k];
  S.entries.resize(static_cast<std::size_t>(S.start[S.count]));
  std::vector<std::int32_t> cursor(S.start.begin(), S.start.end() - 1);
  for (const StripPrim& p : prims) {
    double lo, hi;
    prim_v(p, dx, dy, r, slack, lo, hi);
    const double ua = dx * p.ax + dy * p.ay;
    for (int k = strip_of(S, lo), k1 = strip_of(S, hi); k <= k1; ++k) {
      double umin, umax;
      // Strip k's band, widened by the slack (the cast radius is in the capsules below).
      const double band_lo = S.v0 + k * h - slack, band_hi = S.v0 + (k + 1) * h + slack;
      if (p.prim < 0) {
        // The disc's extent within the band: its full width when the band holds its centre.
        const double vc = dx * p.ay - dy * p.ax;
        const double gap = std::max({band_lo - vc, vc - band_hi, 0.0});
        const double R = p.rr + slack;
        const double half = std::sqrt(std::max(0.0, R * R - gap * gap));
        umin = ua - half - 2.0 * slack;
        umax = ua + half + 2.0 * slack;
      } else if (r > 0.0) {
        // A thick ray meets the capsule of radius r around the segment: its exact extent
        // within the band (radius grown by the slack, which also absorbs the rounding of
        // the square roots), instead of the segment's part near the band grown by r.
        const double ub = dx * p.bx + dy * p.by;
        const double va = dx * p.ay - dy * p.ax, vb = dx * p.by - dy * p.bx;
        const double R = r + slack;
        umin = capsule_band_umin(ua, va, ub, vb, R, band_lo, band_hi);
        umax = -capsule_band_umin(-ua, va, -ub, vb, R, band_lo, band_hi);
        if (!(umin <= umax)) {  // (rounding at the band's reach) the box bound
          umin = std::min(ua, ub) - R;
          umax = std::max(ua, ub) + R;
        }
        umin -= 3.0 * slack;
        umax += 3.0 * slack;
      } else {
        // The part of the segment within r (+ slack) of strip k's band, by its parameter s.
        const double ub = dx * p.bx + dy * p.by;
        const double va = dx * p.ay - dy * p.ax, vb = dx * p.by - dy * p.bx;
        double s0 = 0.0, s1 = 1.0;
        if (va != vb) {
          const double band_lo = S.v0 + k * h - r - slack, band_hi = S.v0 + (k + 1) * h + r + slack;
          const double q0 = (band_lo - va) / (vb - va), q1 = (band_hi - va) / (vb - va);
          s0 = std::clamp(std::min(q0, q1), 0.0, 1.0);
          s1 = std::clamp(std::max(q0, q1), 0.0, 1.0);
        }
        const double u0 = ua + s0 * (ub - ua), u1 = ua + s1 * (ub - ua);
        const double grow = r + 3.0 * slack;
        umin = std::min(u0, u1) - grow;
        umax = std::max(u0, u1) + grow;
      }
      S.entries[static_cast<std::size_t>(cursor[k]++)] = {round_out(umax, 1), 0.0f,
                                                          round_out(umin, -1), p.prim};
    }
  }
  for (int k = 0; k < S.count; ++k) {
    auto* b = S.entries.data() + S.start[k];
    auto* e = S.entries.data() + S.start[k + 1];
    std::sort(b, e, [](const DirectionStrips::Entry& x, const DirectionStrips::Entry& y) {
      return x.umax < y.umax || (x.umax == y.umax && x.prim < y.prim);
    });
    float m = kInf;
    for (auto* q = e; q != b;) {
      --q;
      m = std::min(m, q->umin);
      q->rest_umin = m;
    }
  }
}

// The strips of the K unit directions sd for casts of radius r; nullptr when they would
// take more than kStripBudget bytes.
std::unique_ptr<const SlotStrips> build_strips_impl(const World& w, std::span<const float> sd,
                                                    float radius) {
  const std::size_t k = sd.size() / 2;
  const auto walls = w.walls();
  const auto centers = w.circle_centers();
  const auto radii = w.circle_radii();
  const auto lay = w.obstacle_layers();
  const double r = radius;
  // Obstacles no query can see (layer mask 0) are left out.
  std::vector<StripPrim> prims;
  std::vector<double> extent;
  double scale = 0.0;
  for (std::size_t i = 0; i < w.segment_count(); ++i) {
    if (lay[static_cast<std::size_t>(w.wall_obstacle()[i])] == 0) continue;
    const float* s = &walls[4 * i];
    prims.push_back({s[0], s[1], s[2], s[3], 0.0, static_cast<std::int32_t>(i)});
    extent.push_back(
        std::hypot(static_cast<double>(s[2]) - s[0], static_cast<double>(s[3]) - s[1]));
    scale =
        std::max({scale, std::fabs(static_cast<double>(s[0])), std::fabs(static_cast<double>(s[1])),
                  std::fabs(static_cast<double>(s[2])), std::fabs(static_cast<double>(s[3]))});
  }
  for (std::size_t i = 0; i < w.circle_count(); ++i) {
    if (lay[static_cast<std::size_t>(w.circle_obstacle()[i])] == 0) continue;
    const double cx = centers[2 * i], cy = centers[2 * i + 1];
    const double rr = static_cast<double>(radii[i]) + r;  // as the hit test grows it
    prims.push_back({cx, cy, 0.0, 0.0, rr, -1 - static_cast<std::int32_t>(i)});
    extent.push_back(2.0 * radii[i]);
    scale = std::max(scale, std::max(std::fabs(cx), std::fabs(cy)) + radii[i]);
  }
  scale += r;
  auto out = std::make_unique<SlotStrips>();
  out->radius = radius;
  out->scale = scale;
  out->dirs.resize(k);
  const double slack = kStripSlack * scale;
  double h = 0.0;
  if (!extent.empty()) {
    std::nth_element(extent.begin(), extent.begin() + extent.size() / 2, extent.end());
    h = kStripWidth * extent[extent.size() / 2];
  }
  // At least a 2^-20 of the scene (points and zero-radius circles have no extent).
  h = std::max(h, std::max(scale, 1e-30) * 0x1p-20);
  // Size estimate (an upper bound of the entries and strips actually built): per direction
  // sum(hi - lo) / h + 2 entries a primitive and (vmax - vmin) / h + 3 strip starts. Widen
  // until it fits the budget.
  std::vector<double> extent_sum(k, 0.0), v_range(k, 0.0);
  for (std::size_t j = 0; j < k && !prims.empty(); ++j) {
    const VSpan span = v_span(prims, sd[2 * j], sd[2 * j + 1], r, slack);
    extent_sum[j] = span.extent_sum;
    v_range[j] = span.vmax - span.vmin;
  }
  for (int attempt = 0;; ++attempt) {
    double bytes = 0.0;
    for (std::size_t j = 0; j < k && !prims.empty(); ++j) {
      const double entries = extent_sum[j] / h + 2.0 * static_cast<double>(prims.size());
      bytes += entries * sizeof(DirectionStrips::Entry) + (v_range[j] / h + 3.0) * 4.0;
    }
    if (bytes <= static_cast<double>(kStripBudget)) break;
    if (attempt == kStripWiden) return nullptr;
    h *= 2.0;
  }
  out->width = h;
  parallel_for(k, 1, [&](std::size_t b, std::size_t e) {
    for (std::size_t j = b; j < e; ++j)
      build_direction(prims, sd[2 * j], sd[2 * j + 1], r, h, slack, out->dirs[j]);
  });
  return out;
}

// Origins farther than this (in units of SlotStrips::scale, as |ox| + |oy|) from the
// coordinate origin scan every strip within sq of v(o) (strip_cast's kFar); nearer ones only
// the strip of v(o): the registration slack kStripSlack * scale then exceeds the rounding of
// v(o) and the side-test error (~2^-50 (scale + |o|)) together.
constexpr double kStripNear = 0x1p16;

// Closest hit before `best` (an exclusive bound) of the ray from (ox, oy) along S's
// direction, radius r (0: thin): the new bound, or `best` when nothing is closer.
// sq = kStripSlack * (scale + |ox| + |oy|).
template <bool kThick, bool kFar>
inline double strip_cast(const World& w, const DirectionStrips& S, double ox, double oy, double sq,
                         double r, std::uint32_t layers, double best) {
  const double dx = S.dx, dy = S.dy;
  const double ou = ox * dx + oy * dy, ov = dx * oy - dy * ox;
  int k0, k1;
  if constexpr (kFar) {
    // Beyond the outer strips (or no strips at all): nothing to meet.
    if (!(ov + sq >= S.v0) || ov - sq > S.v1) return best;
    k0 = strip_of(S, ov - sq);
    k1 = strip_of(S, ov + sq);
  } else {
    // Same value as strip_of(S, ov) inside [0, count) (truncation is floor there).
    const double f = (ov - S.v0) * S.inv_h;
    if (!(f >= 0.0 && f < static_cast<double>(S.count))) return best;
    k0 = k1 = static_cast<int>(f);
  }
  const float* walls = w.walls().data();
  const double key = ou - sq;
  for (int k = k0; k <= k1; ++k) {
    const DirectionStrips::Entry* e = S.entries.data() + S.start[k];
    const DirectionStrips::Entry* const end = S.entries.data() + S.start[k + 1];
    // First entry with umax >= u(o) - sq: those before it lie behind the origin.
    // (Branch-free lower bound: the answer stays in [e, e + n].)
    std::size_t n = static_cast<std::size_t>(end - e);
    if (n == 0) continue;
    while (n > 1) {
      const std::size_t half = n / 2;
      e += static_cast<double>(e[half].umax) < key ? half : 0;
      n -= half;
    }
    e += static_cast<double>(e->umax) < key;
    double lim = ou + best * kStripGrow + sq;
    // The hit of one entry, tightening best and lim.
    auto test = [&](const DirectionStrips::Entry* q) {
      const std::int32_t p = q->prim;
      if (layers != kAllLayers) {
        const std::int32_t obs = p >= 0 ? w.wall_obstacle()[static_cast<std::size_t>(p)]
                                        : w.circle_obstacle()[static_cast<std::size_t>(-1 - p)];
        if (!(w.obstacle_layers()[static_cast<std::size_t>(obs)] & layers)) return;
      }
      double t;
      if (p >= 0) {
        const float* s = walls + 4 * static_cast<std::size_t>(p);
        if constexpr (kThick)
          t = ray_capsule(s[0] - ox, s[1] - oy, s[2] - ox, s[3] - oy, r, dx, dy, best);
        else t = ray_segment(s[0] - ox, s[1] - oy, s[2] - ox, s[3] - oy, dx, dy);
      } else {
        const auto c = static_cast<std::size_t>(-1 - p);
        t = ray_circle(w.circle_centers()[2 * c] - ox, w.circle_centers()[2 * c + 1] - oy,
                       w.circle_radii()[c] + r, dx, dy);
      }
      if (t < best) {
        best = t;
        lim = ou + best * kStripGrow + sq;
      }
    };
    // Thick rays: the capsules of a wall's neighbouring segments overlap, and the one a ray
    // meets first (the nearest to its line) has the largest umax of them, so in umax order
    // it would come last, after every other one had been tested against a loose bound. Test
    // first the entry ahead with the lowest umin (the first whose umin equals the suffix
    // minimum), which usually gives the final bound at once.
    const DirectionStrips::Entry* first = nullptr;
    if constexpr (kThick) {
      if (e != end && static_cast<double>(e->rest_umin) <= lim) {
        first = e;
        while (first->umin != e->rest_umin) ++first;
        test(first);
      }
    }
    for (; e != end && static_cast<double>(e->rest_umin) <= lim; ++e) {
      if (static_cast<double>(e->umin) > lim || e == first) continue;
      test(e);
    }
  }
  return best;
}

// The K slot rays of agents [begin, end) on the strips (see slot_raycast_rows).
template <bool kThick>
void strip_rows_t(const World& world, const SlotStrips& strips, std::span<const float> positions,
                  std::span<const float> look_ahead, std::uint32_t layers, std::span<float> out,
                  std::size_t begin, std::size_t end) {
  const std::size_t k = strips.dirs.size();
  const bool shared = look_ahead.size() == 1;
  const double r = strips.radius;
  // Hits need t <= L: minima start just above L and are mapped back.
  auto above = [](float L) {
    return std::nextafter(static_cast<double>(L), static_cast<double>(kInf));
  };
  const double above_shared = shared ? above(look_ahead[0]) : 0.0;
  // The strip of agent q's ray j, or -1 outside the strips (for the prefetches).
  auto strip_at = [&](std::size_t q, const DirectionStrips& S) {
    const double f = (S.dx * positions[2 * q + 1] - S.dy * positions[2 * q] - S.v0) * S.inv_h;
    return f >= 0.0 && f < static_cast<double>(S.count) ? static_cast<int>(f) : -1;
  };
  for (std::size_t i = begin; i < end; ++i) {
    const float ox = positions[2 * i], oy = positions[2 * i + 1];
    const float L = shared ? look_ahead[0] : look_ahead[i];
    float* row = &out[i * k];
    // The chain of a ray (strip start -> entries -> segment) is a few dependent loads that
    // miss L1 (the index outgrows it): prefetch two agents ahead the strip starts, one
    // agent ahead the first entries the lower-bound search reads.
    if (i + 2 < end) {
      for (std::size_t j = 0; j < k; ++j) {
        const int q = strip_at(i + 2, strips.dirs[j]);
        if (q >= 0) __builtin_prefetch(strips.dirs[j].start.data() + q);
      }
    }
    if (i + 1 < end) {
      for (std::size_t j = 0; j < k; ++j) {
        const DirectionStrips& S = strips.dirs[j];
        const int q = strip_at(i + 1, S);
        if (q < 0) continue;
        const std::int32_t a = S.start[q], b = S.start[q + 1];
        __builtin_prefetch(S.entries.data() + a);
        __builtin_prefetch(S.entries.data() + (a + b) / 2);
      }
    }
    if (world.polygon_at({ox, oy}, layers) >= 0) {
      std::fill(row, row + k, 0.0f);
      continue;
    }
    const double lim = shared ? above_shared : above(L);
    const double reach = std::fabs(static_cast<double>(ox)) + std::fabs(static_cast<double>(oy));
    const double sq = kStripSlack * (strips.scale + reach);
    if (reach <= kStripNear * strips.scale) {
      for (std::size_t j = 0; j < k; ++j) {
        const double t =
            strip_cast<kThick, false>(world, strips.dirs[j], ox, oy, sq, r, layers, lim);
        row[j] = t <= L ? static_cast<float>(t) : kInf;
      }
    } else {
      for (std::size_t j = 0; j < k; ++j) {
        const double t =
            strip_cast<kThick, true>(world, strips.dirs[j], ox, oy, sq, r, layers, lim);
        row[j] = t <= L ? static_cast<float>(t) : kInf;
      }
    }
  }
}

// Not inlined: inlined into raycast_rows, g++ 12 -O2/-O3 kept the double quotient x / n
// instead of the float32 it is assigned to (seen once the walk took its direction through

// Thick rays (radius 1.5) on the racetrack, M rays/s strips vs per-ray walk: M = 1000,
// L = 5: 27.6 vs 18.0, L = 50: 11.1 vs 5.1 (7.6 with box bounds and umax order instead of
// the exact capsule extents and lowest-umin-first); M = 10000 (tiny walls, each listed in
// ~25 strips, the index at its 64 MB budget, memory-bound): L = 10: 3.7 vs 3.2.

}  // namespace

std::unique_ptr<const SlotStrips> build_strips(const World& w, std::span<const float> sd,
                                               float radius) {
  return build_strips_impl(w, sd, radius);
}

void strip_rows(const World& world, const SlotStrips& strips, std::span<const float> positions,
                std::span<const float> look_ahead, std::uint32_t layers, std::span<float> out,
                std::size_t begin, std::size_t end) {
  if (strips.radius > 0.0f)
    strip_rows_t<true>(world, strips, positions, look_ahead, layers, out, begin, end);
  else strip_rows_t<false>(world, strips, positions, look_ahead, layers, out, begin, end);
}

}  // namespace contextsteer::detail

namespace contextsteer {

std::vector<StripCache::Info> StripCache::info() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<Info> out;
  for (const auto& e : sets_) {
    const bool b = e.strips != nullptr;
    out.push_back(
        {e.dirs.size() / 2, e.radius, b, b ? e.strips->width : 0.0, b ? e.strips->bytes() : 0});
  }
  return out;
}

}  // namespace contextsteer
