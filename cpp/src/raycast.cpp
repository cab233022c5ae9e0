// SPDX-License-Identifier: MIT
// Closest-hit raycasts and the per-agent slot raycast: which algorithm casts which rays
// (grid walk: grid_walk.hpp, strip index: strip_index.cpp, gather: slot_gather.cpp), and
// the hit normals.
#include "contextsteer/raycast.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "contextsteer/geometry.hpp"
#include "cpu.hpp"
#include "grid_walk.hpp"
#include "parallel.hpp"
#include "sector_index.hpp"
#include "slot_gather.hpp"
#include "strip_index.hpp"
#include "thread_scratch.hpp"

namespace contextsteer {
namespace {

using detail::Best;
using detail::kCircle;
using detail::kNone;
using detail::kPolygon;
using detail::kSeg;
using detail::WalkOrigin;

constexpr float kInf = std::numeric_limits<float>::infinity();

// Not inlined: inlined into raycast_rows, g++ 12 -O2/-O3 kept the double quotient x / n
// instead of the float32 it is assigned to (seen once the walk took its direction through
// WalkDir), which broke raycast == slot_raycast bit for bit.
__attribute__((noinline)) void unit(float x, float y, float& ux, float& uy) {
  const double n = std::sqrt(static_cast<double>(x) * x + static_cast<double>(y) * y);
  ux = static_cast<float>(x / n);
  uy = static_cast<float>(y / n);
}

#if defined(CONTEXTSTEER_AVX2)
// The rotated slot directions of unit() for slots [0, 4 floor(k / 4)), four at a time: the
// rotation in float32 lanes and the normalisation in double lanes, the same IEEE operations
// in the same order (no FMA), so the same bits. Returns how many it wrote.
CS_AVX2 std::size_t rotate_unit_avx2(float c, float sn, const float* slots, std::size_t k,
                                     double* dx, double* dy) {
  const __m128 vc = _mm_set1_ps(c), vs = _mm_set1_ps(sn);
  std::size_t j = 0;
  for (; j + 4 <= k; j += 4) {
    const __m128 a = _mm_loadu_ps(slots + 2 * j), b = _mm_loadu_ps(slots + 2 * j + 4);
    const __m128 ux = _mm_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));
    const __m128 uy = _mm_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1));
    const __m128 x = _mm_sub_ps(_mm_mul_ps(vc, ux), _mm_mul_ps(vs, uy));
    const __m128 y = _mm_add_ps(_mm_mul_ps(vs, ux), _mm_mul_ps(vc, uy));
    const __m256d xd = _mm256_cvtps_pd(x), yd = _mm256_cvtps_pd(y);
    const __m256d n = _mm256_sqrt_pd(_mm256_add_pd(_mm256_mul_pd(xd, xd), _mm256_mul_pd(yd, yd)));
    // float32 quotients, held in double (as the scalar path stores them)
    _mm256_storeu_pd(dx + j, _mm256_cvtps_pd(_mm256_cvtpd_ps(_mm256_div_pd(xd, n))));
    _mm256_storeu_pd(dy + j, _mm256_cvtps_pd(_mm256_cvtpd_ps(_mm256_div_pd(yd, n))));
  }
  return j;
}
#endif

// Normal of a hit, see RayHitsOut.
void hit_normal(const World& w, const Best& b, float ox, float oy, float dx, float dy, float r,
                float& nx, float& ny) {
  nx = -dx;
  ny = -dy;
  if (b.t == 0.0 || b.kind == kPolygon) return;
  const double px = ox + b.t * dx, py = oy + b.t * dy;
  double vx, vy;  // from the surface point toward the ray
  if (b.kind == kCircle) {
    const auto i = static_cast<std::size_t>(b.index);
    vx = px - w.circle_centers()[2 * i];
    vy = py - w.circle_centers()[2 * i + 1];
  } else {
    const float* s = &w.walls()[4 * static_cast<std::size_t>(b.index)];
    const double ex = static_cast<double>(s[2]) - s[0], ey = static_cast<double>(s[3]) - s[1];
    if (r > 0.0f) {
      const SegmentPoint q = closest_on_segment(s[0], s[1], s[2], s[3], px, py);
      vx = px - q.x;
      vy = py - q.y;
    } else {
      vx = -ey;
      vy = ex;
      const double side = vx * dx + vy * dy;
      if (side == 0.0) return;  // collinear: -direction
      if (side > 0.0) {
        vx = -vx;
        vy = -vy;
      }
    }
  }
  const double n = std::sqrt(vx * vx + vy * vy);
  if (n > 0.0) {
    nx = static_cast<float>(vx / n);
    ny = static_cast<float>(vy / n);
  }
}

std::int32_t obstacle_of(const World& w, const Best& b) {
  switch (b.kind) {
    case kSeg:
      return w.wall_obstacle()[static_cast<std::size_t>(b.index)];
    case kCircle:
      return w.circle_obstacle()[static_cast<std::size_t>(b.index)];
    case kPolygon:
      return b.index;
    default:
      return -1;
  }
}

// Look-ahead discs covering at most this many cells use the gather path (kAuto). Measured
// on the racetrack with agents 0.8 from a wall (16 slots, one thread, M rays/s gather vs
// per-ray): M = 1000 (cell 1.1): disc of 8 cells 31 vs 28, 22 cells 36 vs 27, 69 cells 17
// vs 24; M = 10000 (cell 0.35): 46 cells 8 vs 22, 157 cells 4 vs 8. In open space gather
// wins up to ~100 cells; with dense walls per-ray wins above ~30, so the switch is at 36.
// For the benchmark look-aheads (10 and 50) the per-ray walk is 5-50x faster than gather.
constexpr double kGatherMaxCells = 36.0;

// kAuto uses the strips (fixed slot directions) when the longest look-ahead of the agents
// spans at least this many grid cells. Shorter rays mostly end in open space, where the
// per-ray walk leaves after a table lookup or two. Measured on the racetrack (M = 10000,
// cell 0.35, one thread, M rays/s strips vs per-ray walk): L = 2 (6 cells) 50 vs 102; L = 5
// 47 vs 51; L = 10 38 vs 25; L = 50 26 vs 8; radius 1.5: L = 2 12 vs 18, L = 5 6.4 vs 6.9,
// L = 10 4.8 vs 3.9.
constexpr double kStripMinCells = 8.0;

// The longest look-ahead of agents [begin, end) (one shared value, or one per agent).
float longest(std::span<const float> look_ahead, std::size_t begin, std::size_t end) {
  if (look_ahead.size() <= 1) return look_ahead.empty() ? 0.0f : look_ahead[0];
  return *std::max_element(look_ahead.begin() + begin, look_ahead.begin() + end);
}

// Whether agents [begin, end) cast on the strips (see SlotMode).
bool use_strips(const World& world, std::span<const float> headings,
                std::span<const float> look_ahead, std::size_t begin, std::size_t end,
                SlotMode mode) {
  if (!headings.empty() || begin >= end || world.grid().empty()) return false;
  if (mode == SlotMode::kStrips) return true;
  if (mode != SlotMode::kAuto) return false;
  return static_cast<double>(longest(look_ahead, begin, end)) * world.grid().inv_cell >=
         kStripMinCells;
}

// Whether rays cast with `mode` may use the sector index (SlotMode::kSectors): asked for,
// or with 'auto' rotated by headings; thin or thick (a finite radius).
bool use_sectors(bool headings, float radius, SlotMode mode) {
  return radius >= 0.0f && std::isfinite(radius) &&
         (mode == SlotMode::kSectors || (mode == SlotMode::kAuto && headings));
}

}  // namespace

void raycast_rows(const World& world, std::span<const float> origins,
                  std::span<const float> directions, std::span<const float> max_dist, float radius,
                  std::uint32_t layers, RayHitsOut out, std::size_t begin, std::size_t end) {
  CONTEXTSTEER_ASSERT(world.indexed());
  const bool shared = max_dist.size() == 1;
  const WorldGrid* thick = radius > 0.0f && begin < end ? world.thick_grid(radius) : nullptr;
  for (std::size_t i = begin; i < end; ++i) {
    const float ox = origins[2 * i], oy = origins[2 * i + 1];
    float dx, dy;
    unit(directions[2 * i], directions[2 * i + 1], dx, dy);
    const float maxd = shared ? max_dist[0] : max_dist[i];
    const Best b = detail::cast_one(world, thick, ox, oy, dx, dy, maxd, radius, layers);
    if (b.kind == kNone) {
      out.distance[i] = kInf;
      out.hit[i] = false;
      out.normal[2 * i] = 0.0f;
      out.normal[2 * i + 1] = 0.0f;
      out.obstacle[i] = -1;
    } else {
      out.distance[i] = static_cast<float>(b.t);
      out.hit[i] = true;
      hit_normal(world, b, ox, oy, dx, dy, radius, out.normal[2 * i], out.normal[2 * i + 1]);
      out.obstacle[i] = obstacle_of(world, b);
    }
  }
}

void raycast(const World& world, std::span<const float> origins, std::span<const float> directions,
             std::span<const float> max_dist, float radius, std::uint32_t layers, RayHitsOut out) {
  const std::size_t n = origins.size() / 2;
  parallel_for(n, 256, [&](std::size_t b, std::size_t e) {
    raycast_rows(world, origins, directions, max_dist, radius, layers, out, b, e);
  });
}

void slot_raycast_rows(const World& world, std::span<const float> positions,
                       std::span<const float> slot_directions, std::span<const float> look_ahead,
                       std::span<const float> headings, float radius, std::uint32_t layers,
                       std::span<float> out, std::size_t begin, std::size_t end, SlotScratch& s,
                       SlotMode mode) {
  CONTEXTSTEER_ASSERT(world.indexed());
  const std::size_t k = slot_directions.size() / 2;
  CONTEXTSTEER_ASSERT(s.dx.size() >= k && s.dirs.size() >= k);
  if (begin >= end) return;
  const WorldGrid& g = world.grid();
  const bool shared = look_ahead.size() == 1;
  // Fixed slot directions: the strip index of the slot set (built on first use, cached).
  const SlotStrips* strips = nullptr;
  if (use_strips(world, headings, look_ahead, begin, end, mode)) {
    strips = world.strips().get(slot_directions, radius, [&] {
      return detail::build_strips(world, slot_directions, radius);
    });
  }
  if (strips != nullptr) {
    detail::strip_rows(world, *strips, positions, look_ahead, layers, out, begin, end);
    return;
  }
  // Thin rays in any direction: the sector index, when built (or to be built now).
  const SectorIndex* sectors = nullptr;
  if (use_sectors(!headings.empty(), radius, mode)) {
    sectors =
        detail::sectors_for(world, layers, longest(look_ahead, begin, end), radius,
                            s.sectors_counted ? 0 : (end - begin) * k, mode == SlotMode::kSectors);
  }
  const WorldGrid* thick = radius > 0.0f ? world.thick_grid(radius) : nullptr;
  const WorldGrid& wg = detail::walk_grid(world, thick, radius);
  constexpr std::size_t kNoAgent = ~std::size_t{0};
  std::size_t dirs_for = kNoAgent;  // kNoAgent: s.dirs does not hold s.dx / s.dy's constants
  for (std::size_t i = begin; i < end; ++i) {
    const float ox = positions[2 * i], oy = positions[2 * i + 1];
    const float L = shared ? look_ahead[0] : look_ahead[i];
    float* row = &out[i * k];
    if (!headings.empty() || i == begin) {
      float c = 1.0f, sn = 0.0f;
      if (!headings.empty()) {
        c = static_cast<float>(std::cos(static_cast<double>(headings[i])));
        sn = static_cast<float>(std::sin(static_cast<double>(headings[i])));
      }
      // Without headings the directions (and their walk constants) are the same for all
      // agents: computed once per call.
      std::size_t j0 = 0;
#if defined(CONTEXTSTEER_AVX2)
      if (!headings.empty() && detail::use_avx2())
        j0 = rotate_unit_avx2(c, sn, slot_directions.data(), k, s.dx.data(), s.dy.data());
#endif
      for (std::size_t j = j0; j < k; ++j) {
        const float ux = slot_directions[2 * j], uy = slot_directions[2 * j + 1];
        float dx = c * ux - sn * uy, dy = sn * ux + c * uy;
        // A rotated unit vector is not unit in float32: normalise it exactly as raycast
        // normalises the directions it is given, so that slot_raycast equals raycast on
        // the expanded rays (directions (c ux - s uy, s ux + c uy)) bit for bit.
        if (!headings.empty()) unit(dx, dy, dx, dy);
        s.dx[j] = dx;
        s.dy[j] = dy;
      }
      dirs_for = kNoAgent;
    }
    if (world.polygon_at({ox, oy}, layers) >= 0) {
      std::fill(row, row + k, 0.0f);
      continue;
    }
    if (sectors != nullptr && L <= sectors->reach && detail::sector_inside(*sectors, ox, oy)) {
      if (radius > 0.0f)
        detail::sector_agent_thick(*sectors, ox, oy, s.dx.data(), s.dy.data(), k, L, radius,
                                   s.best.data());
      else detail::sector_agent(*sectors, ox, oy, s.dx.data(), s.dy.data(), k, L, s.best.data());
      for (std::size_t j = 0; j < k; ++j)
        row[j] = s.best[j] <= L ? static_cast<float>(s.best[j]) : kInf;
      continue;
    }
    const double above = std::nextafter(static_cast<double>(L), static_cast<double>(kInf));
    bool gather = radius == 0.0f && mode != SlotMode::kPerRay;
    if (gather && mode != SlotMode::kGather && !g.empty()) {
      const double span = 2.0 * L * g.inv_cell + 1.0;
      gather = span * span <= kGatherMaxCells;
    }
    if (gather) {
      for (std::size_t j = 0; j < k; ++j) s.best[j] = above;
      detail::gather_and_test(g, ox, oy, L, layers, s, k);
      for (std::size_t j = 0; j < k; ++j)
        row[j] = s.best[j] <= L ? static_cast<float>(s.best[j]) : kInf;
    } else {
      // The walk constants of the directions, made for the agent that first walks them
      // (on the sectors most agents never do).
      if (dirs_for == kNoAgent) {
        for (std::size_t j = 0; j < k; ++j) s.dirs[j] = detail::make_dir(wg, s.dx[j], s.dy[j]);
        dirs_for = i;
      }
      const WalkOrigin org = detail::make_origin(wg, ox, oy);
      for (std::size_t j = 0; j < k; ++j) {
        Best b{L, kNone, -1};
        detail::walk_any(world, thick, org, s.dirs[j], radius, layers, b);
        row[j] = b.kind == kNone ? kInf : static_cast<float>(b.t);
      }
    }
  }
}

void slot_raycast_prepare(const World& world, std::span<const float> look_ahead, bool headings,
                          float radius, std::uint32_t layers, std::size_t rays, SlotMode mode) {
  if (rays == 0 || look_ahead.empty() || !use_sectors(headings, radius, mode)) return;
  detail::sectors_for(world, layers, longest(look_ahead, 0, look_ahead.size()), radius, rays,
                      mode == SlotMode::kSectors);
}

void slot_raycast(const World& world, std::span<const float> positions,
                  std::span<const float> slot_directions, std::span<const float> look_ahead,
                  std::span<const float> headings, float radius, std::uint32_t layers,
                  std::span<float> out, SlotMode mode, bool prepared) {
  const std::size_t n = positions.size() / 2;
  const std::size_t k = slot_directions.size() / 2;
  if (k == 0) return;
  // Build the strip index here, over the thread pool (inside a chunk the build would run on
  // one thread while the others wait for it).
  if (use_strips(world, headings, look_ahead, 0, n, mode)) {
    world.strips().get(slot_directions, radius,
                       [&] { return detail::build_strips(world, slot_directions, radius); });
  }
  // Build (or count towards building) the sector index here, over the thread pool, for
  // the same reason; the rows then find it cached.
  if (!prepared)
    slot_raycast_prepare(world, look_ahead, !headings.empty(), radius, layers, n * k, mode);
  parallel_for(n, 64, [&](std::size_t b, std::size_t e) {
    struct SlotRaycastSite;
    SlotScratch& scratch = detail::thread_scratch<SlotScratch, SlotRaycastSite>();
    if (scratch.dx.size() < k) scratch.reserve(k);
    scratch.sectors_counted = true;  // this scratch serves slot_raycast only: counted above
    slot_raycast_rows(world, positions, slot_directions, look_ahead, headings, radius, layers, out,
                      b, e, scratch, mode);
  });
}

}  // namespace contextsteer
