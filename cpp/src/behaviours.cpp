// SPDX-License-Identifier: MIT
// Context behaviour kernels. Every value is a "dot-product rule": a desired unit vector u
// (towards a target, away from a threat, along the heading ...) scores slot k by
// max(0, s_k·u), scaled by how much the behaviour cares (distance falloff, speed ...).
// Accumulation is in float: values are in [0, weight·M] and the oracle tolerance allows it.
#include "contextsteer/behaviours.hpp"
#include "batch.hpp"
#include "cpu.hpp"

#include <algorithm>
#include <limits>
#include <cmath>
#include <type_traits>
#include <vector>

#include "contextsteer/collide.hpp"
#include "contextsteer/geometry.hpp"
#include "contextsteer/nearest.hpp"
#include "parallel.hpp"
#include "random.hpp"
#include "contextsteer/raycast.hpp"
#include "thread_scratch.hpp"

namespace contextsteer {

namespace {

constexpr float kPi = 3.14159265358979323846f;
// Distances below this are "on top of each other": no direction, no contribution.
constexpr float kTiny = 1e-12f;

/// Rotates a world vector into the slot frame of agent i (identity unless the slots
/// turn with the heading): R(−heading)·v, so that s_k·R(−h)v = (R(h)s_k)·v.
struct Frame {
  float c = 1.0f, s = 0.0f;
  Vec2 operator()(Vec2 v) const { return {c * v.x + s * v.y, -s * v.x + c * v.y}; }
};

Frame frame_of(const BehaviourInputs& in, std::size_t i) {
  if (!in.rotate_with_heading) return {};
  const float h = in.agents.heading[i];
  return {std::cos(h), std::sin(h)};
}

bool group_ok(GroupFilter f, std::int32_t gi, std::int32_t gj) {
  return f == GroupFilter::kAll || ((gi == gj) == (f == GroupFilter::kSame));
}

void zero_row(float* row, std::size_t k) { std::fill(row, row + k, 0.0f); }
/// Scales a behaviour's row by its weight times the agent's, saturating at kSaturate:
/// the two weights, each below 2^60, and a row above 1 (a sum over targets) can multiply
/// past 2^60 or float32, a map the next stage (or the next step's blend) would refuse.
void scale_row(float* row, std::size_t k, double w) {
  const float ws = sat_weight(w);
  for (std::size_t j = 0; j < k; ++j) row[j] = sat(row[j] * ws);
}

float falloff(Falloff f, float d, float range) {
  if (f == Falloff::kNone || !std::isfinite(range)) return 1.0f;
  return range > 0.0f ? std::max(0.0f, 1.0f - d / range) : 0.0f;
}

// --- per-behaviour row writers: row points at K floats already zeroed -----------------

void row_of(const Forward&, const BehaviourInputs& in, std::size_t i, const Frame& f, float* row) {
  const float h = in.agents.heading[i];
  accumulate_dot_row(row, in.slots, in.k, f({std::cos(h), std::sin(h)}), 1.0f, TargetCombine::kMax);
}

void row_of(const Momentum&, const BehaviourInputs& in, std::size_t i, const Frame& f, float* row) {
  const Vec2 v = load2(in.agents.velocity, i);
  const float speed = length(v);
  const float vmax = in.agents.max_speed[i];
  if (speed <= kTiny || vmax <= 0.0f) return;
  const float scale = std::min(1.0f, speed / vmax);
  accumulate_dot_row(row, in.slots, in.k, f(v * (1.0f / speed)), scale, TargetCombine::kMax);
}

void row_of(const Targets& b, const BehaviourInputs& in, std::size_t i, const Frame& f,
            float* row) {
  const AgentsView& a = in.agents;
  const Vec2 p = load2(a.position, i);
  bool poisoned = false;  // kCenter: a target on the agent (Unity: NaN in every slot)
  auto contribute = [&](Vec2 goal) {
    Vec2 v = goal - p;
    const float d = length(v);
    if (d > b.max_distance) return;
    if (d <= kTiny) {
      poisoned = poisoned || b.combine == TargetCombine::kCenter;
      return;
    }
    v = unit_of(v) * (b.away ? -1.0f : 1.0f);  // d may be inf: a goal predicted far ahead
    accumulate_dot_row(row, in.slots, in.k, f(v), falloff(b.falloff, d, b.max_distance), b.combine,
                       b.shape);
  };
  if (b.source == TargetSource::kAgents) {
    for (std::int32_t j32 : b.target_ids) {
      const auto j = static_cast<std::size_t>(j32);
      if (j == i || j >= a.size || !a.alive[j]) continue;
      Vec2 goal = load2(a.position, j);
      if (b.max_prediction > 0.0f) {
        // gdx-ai Pursue: look ahead by the time to cover the distance at full speed,
        // capped by max_prediction.
        const float d = length(goal - p);
        const float vmax = a.max_speed[i];
        const float t = vmax > 0.0f ? std::min(b.max_prediction, d / vmax) : b.max_prediction;
        goal = goal + load2(a.velocity, j) * t;
      }
      contribute(goal);
    }
  } else if (b.source == TargetSource::kPoints) {
    const std::size_t m = b.positions.size() / 2;
    for (std::size_t j = 0; j < m; ++j) contribute(load2(b.positions.data(), j));
  } else {
    contribute(load2(a.target, i));
  }
  if (b.combine == TargetCombine::kCenter)
    for (std::size_t j = 0; j < in.k; ++j) row[j] = poisoned ? 0.0f : std::max(0.0f, row[j]);
}

void row_of(const Arrive& b, const BehaviourInputs& in, std::size_t i, const Frame& f, float* row) {
  const Vec2 p = load2(in.agents.position, i);
  const Vec2 goal = b.use_point ? b.point : load2(in.agents.target, i);
  const Vec2 v = goal - p;
  const float d = length(v);
  if (d <= kTiny || d <= b.tolerance) return;
  const float s = std::min(1.0f, d / b.slowing_radius);
  accumulate_dot_row(row, in.slots, in.k, f(v * (1.0f / d)), s, TargetCombine::kMax, b.shape);
}

void row_of(const Wander& b, const BehaviourInputs& in, std::size_t i, const Frame& f, float* row) {
  const float h = in.agents.heading[i];
  const std::uint64_t key = in.agents.rng[i] ^ splitmix64(b.seed);
  const float theta = kPi * value_noise(key, in.time * static_cast<double>(b.rate));
  const Vec2 fwd{std::cos(h), std::sin(h)};
  const Vec2 rim{std::cos(h + theta), std::sin(h + theta)};
  const Vec2 v = fwd * b.offset + rim * b.radius;
  const float d = length(v);
  if (d <= kTiny) return;
  accumulate_dot_row(row, in.slots, in.k, f(v * (1.0f / d)), 1.0f, TargetCombine::kMax);
}

void row_of(const Tether& b, const BehaviourInputs& in, std::size_t i, const Frame& f, float* row) {
  const Vec2 p = load2(in.agents.position, i);
  const Vec2 c = b.use_point ? b.center : load2(in.agents.target, i);
  const Vec2 v = c - p;
  const float d = length(v);
  const float excess = d - b.radius;
  if (excess <= 0.0f || d <= kTiny) return;
  const float s = b.softness > 0.0f ? std::min(1.0f, excess / b.softness) : 1.0f;
  accumulate_dot_row(row, in.slots, in.k, f(v * (1.0f / d)), s, TargetCombine::kMax);
}

void row_of(const Bounds& b, const BehaviourInputs& in, std::size_t i, const Frame& f, float* row) {
  const Vec2 p = load2(in.agents.position, i);
  // Inner rectangle; when the margins overlap it collapses to the centre line.
  const float cx = 0.5f * (b.lo.x + b.hi.x), cy = 0.5f * (b.lo.y + b.hi.y);
  const float x0 = std::min(b.lo.x + b.margin, cx), x1 = std::max(b.hi.x - b.margin, cx);
  const float y0 = std::min(b.lo.y + b.margin, cy), y1 = std::max(b.hi.y - b.margin, cy);
  const Vec2 q{std::clamp(p.x, x0, x1), std::clamp(p.y, y0, y1)};
  const Vec2 v = q - p;
  const float d = length(v);
  if (d <= kTiny) return;
  const float s = b.margin > 0.0f ? std::min(1.0f, d / b.margin) : 1.0f;
  accumulate_dot_row(row, in.slots, in.k, f(v * (1.0f / d)), s, TargetCombine::kMax);
}

void row_of(const AgentDanger& b, const BehaviourInputs& in, std::size_t i, const Frame& f,
            float* row) {
  const AgentsView& a = in.agents;
  if (in.neighbors.empty()) return;
  const Vec2 p = load2(a.position, i);
  const Vec2 vi = load2(a.velocity, i);
  const float ri = a.radius[i];
  const std::int32_t* nb = in.neighbors.indices + i * in.neighbors.max_neighbors;
  const std::int32_t count = in.neighbors.counts[i];
  auto danger_towards = [&](Vec2 rel, float rj, float time_scale) {
    const float d = length(rel);
    if (d <= kTiny) return;
    const float gap = std::max(0.0f, d - ri - rj);
    if (gap > b.radius) return;
    const float g = b.falloff == Falloff::kLinear ? 1.0f - gap / b.radius : 1.0f;
    accumulate_dot_row(row, in.slots, in.k, f(rel * (1.0f / d)), g * time_scale,
                       TargetCombine::kMax);
  };
  for (std::int32_t n = 0; n < count; ++n) {
    const auto j = static_cast<std::size_t>(nb[n]);
    if (!group_ok(b.groups, a.group[i], a.group[j])) continue;
    const Vec2 rel = load2(a.position, j) - p;
    const float rj = a.radius[j];
    danger_towards(rel, rj, 1.0f);
    if (b.predictive) {
      // Closest approach of the relative motion rel(t) = rel + w·t, t ∈ [0, horizon].
      const Vec2 w = load2(a.velocity, j) - vi;
      const float ww = dot(w, w);
      if (ww <= kTiny) continue;
      const float t = std::clamp(-dot(rel, w) / ww, 0.0f, b.horizon);
      if (t <= 0.0f) continue;
      danger_towards(rel + w * t, rj, 1.0f - t / b.horizon);
    }
  }
}

void row_of(const Flock& b, const BehaviourInputs& in, std::size_t i, const Frame& f, float* row) {
  const AgentsView& a = in.agents;
  if (in.neighbors.empty()) return;
  const Vec2 p = load2(a.position, i);
  const std::int32_t* nb = in.neighbors.indices + i * in.neighbors.max_neighbors;
  const std::int32_t count = in.neighbors.counts[i];
  Vec2 sum{};
  int used = 0;
  for (std::int32_t n = 0; n < count; ++n) {
    const auto j = static_cast<std::size_t>(nb[n]);
    if (!group_ok(b.groups, a.group[i], a.group[j])) continue;
    const Vec2 pj = load2(a.position, j);
    const Vec2 rel = p - pj;
    const float d = length(rel);
    if (d > b.radius) continue;
    switch (b.rule) {
      case FlockRule::kSeparation:
        if (d > kTiny) sum = sum + rel * ((1.0f - d / b.radius) / d);
        break;
      case FlockRule::kAlignment:
        sum = sum + load2(a.velocity, j);
        break;
      case FlockRule::kCohesion:
        sum = sum + pj;
        break;
    }
    ++used;
  }
  if (used == 0) return;
  Vec2 w{};
  switch (b.rule) {
    case FlockRule::kSeparation:
      w = sum;
      break;
    case FlockRule::kAlignment: {
      const float vmax = a.max_speed[i];
      w = vmax > 0.0f ? sum * (1.0f / (static_cast<float>(used) * vmax)) : Vec2{};
      break;
    }
    case FlockRule::kCohesion:
      w = (sum * (1.0f / static_cast<float>(used)) - p) * (1.0f / b.radius);
      break;
  }
  const float len = length(w);
  if (len > 1.0f) w = w * (1.0f / len);
  const Vec2 u = f(w);
  for (std::size_t k = 0; k < in.k; ++k) {
    const float v = in.slots[2 * k] * u.x + in.slots[2 * k + 1] * u.y;
    row[k] = b.clamp ? std::max(0.0f, v) : v;
  }
}

void row_of(const FollowPath& b, const BehaviourInputs& in, std::size_t i, const Frame& f,
            float* row) {
  const Path* path = b.path;
  if (b.paths) {
    const std::int64_t q = b.path_index ? b.path_index[i] : static_cast<std::int64_t>(i);
    path = q >= 0 && static_cast<std::size_t>(q) < b.path_count ? b.paths[q] : nullptr;
  }
  if (!path) return;
  const Vec2 u = path->direction(load2(in.agents.position, i), b.look_ahead, b.mode);
  accumulate_dot_row(row, in.slots, in.k, f(u), 1.0f, TargetCombine::kMax);
}

/// Agent i's field under b (its goal's index in b.field), or -1 when it has none.
std::int64_t field_of(const FollowField& b, const AgentsView& a, std::size_t i) {
  if (!b.field) return -1;
  const std::int32_t g = b.select == FieldSelect::kShared  ? b.shared
                         : b.select == FieldSelect::kGroup ? a.group[i]
                                                           : b.field_index[i];
  return g < 0 || static_cast<std::size_t>(g) >= b.field->count() ? -1 : g;
}

/// Agent i's way along its route (BehaviourInputs::ways): the direction at its position of
/// the field it follows most, or (0, 0) when none weighs above 0 for it or that field
/// gives no direction there.
Vec2 route_way(const BehaviourInputs& in, std::size_t i) {
  const FollowField* best = nullptr;
  float most = 0.0f;
  for (const FollowField* f : in.ways) {
    const float w = f->weight * (f->agent_weights ? f->agent_weights[i] : 1.0f);
    if (w > most) {
      most = w;
      best = f;
    }
  }
  const std::int64_t g = best ? field_of(*best, in.agents, i) : -1;
  if (g < 0) return {};
  return best->field->direction_at(static_cast<std::size_t>(g), load2(in.agents.position, i));
}

void row_of(const FollowField& b, const BehaviourInputs& in, std::size_t i, const Frame& f,
            float* row) {
  const std::int64_t g = field_of(b, in.agents, i);
  if (g < 0) return;
  const auto gs = static_cast<std::size_t>(g);
  const Vec2 p = load2(in.agents.position, i);
  float scale = 1.0f;
  if (b.slowing_radius > 0.0f || b.tolerance > 0.0f) {
    float d = b.field->distance_at(gs, p);
    if (b.reachable) {
      // A goal no body can reach (inside an obstacle): its field's least distance is where
      // the bodies end, so the slowing and the tolerance count from there (the field's
      // descent along the ring round a pillar holding the goal walked agents round it for
      // good). A reachable goal's floor is within a cell of 0: d as it is.
      const float f = b.field->floor(gs);
      if (f > b.field->grid().cell) d = std::max(0.0f, d - f);
    }
    if (!(d > b.tolerance)) return;
    if (b.slowing_radius > 0.0f) scale = std::min(1.0f, d / b.slowing_radius);
  }
  const Vec2 u = b.look_ahead > 0.0f ? b.field->pulled_direction_at(gs, p, b.look_ahead)
                                     : b.field->direction_at(gs, p);
  if (u.x == 0.0f && u.y == 0.0f) return;
  accumulate_dot_row(row, in.slots, in.k, f(u), scale, TargetCombine::kMax, b.shape);
}

/// Per-thread working memory of WallDanger (grows once per thread, then reused).
struct WallScratch {
  SlotScratch rays;
  std::vector<float> distance;
  std::vector<std::uint8_t> bare;  ///< per slot: read at the body's radius (slot_wall_distances)
  bool any_bare = false;           ///< whether the last call read any slot so
  void reserve(std::size_t k) {
    if (distance.size() < k) {
      rays.reserve(k);
      distance.resize(k);
      bare.resize(k);
    }
  }
  /// The slots read at the body's radius, or null when there are none.
  const std::uint8_t* bare_slots() const { return any_bare ? bare.data() : nullptr; }
};

/// Distances of agent i's K slot rays (discs of radius `pad`) to the walls of `layers`
/// up to `look`, into scratch.distance; ∞ (> look) where a ray is clear. When the agent is
/// within pad of a wall every ray reports 0 there; that 0 is kept only for slots heading
/// further into such a wall, so an agent sliding along a wall can still steer along it or
/// away from it. Those freed slots are cast again as discs of radius `body` (the agent's
/// own, below pad by the margin or padding) when the body itself is clear of every wall,
/// and read the first wall ahead at that radius (scratch.bare marks them); with the body
/// touching a wall, or body >= pad, they read ∞. False (distances untouched) when no wall
/// is within look + pad: the common case in open space, a nearest-wall query.
bool slot_wall_distances(const BehaviourInputs& in, std::size_t i, float look, float pad,
                         std::uint32_t layers, WallScratch& scratch, float body) {
  scratch.any_bare = false;
  if (!in.world || in.world->grid().empty()) return false;
  const AgentsView& a = in.agents;
  const std::span<const float> point(a.position + 2 * i, 2);
  float nd = 0.0f, np[2], nn[2];
  std::int32_t nobs = -1;
  const float reach = look + pad;
  const NearestWalls* known = in.near;
  if (known && known->layers == layers && reach <= known->reach[i] && known->distance[i] != reach) {
    // The answer nearest_rows would give, found ahead (NearestWalls).
    if (!(known->distance[i] < reach)) return false;
    nd = known->distance[i];
    nn[0] = known->normal[2 * i];
    nn[1] = known->normal[2 * i + 1];
    nobs = known->obstacle[i];
  } else {
    nearest_rows(*in.world, point, reach, layers, NearestOut{&nd, np, nn, &nobs}, 0, 1);
    if (nobs < 0) return false;
  }
  scratch.reserve(in.k);
  std::span<const float> headings;
  if (in.rotate_with_heading) headings = {a.heading + i, 1};
  slot_raycast_rows(*in.world, point, {in.slots, 2 * in.k}, {&look, 1}, headings, pad, layers,
                    {scratch.distance.data(), in.k}, 0, 1, scratch.rays);
  float* d = scratch.distance.data();
  if (nd <= pad) {
    // A ray that starts within pad of a wall reads 0 from it. A slot that goes further
    // into none of the walls it starts within reach of (the mover's test, moves_into) is
    // taken as free: the agent may leave them or slide along. Each wall counts: asking
    // only the nearest wall's normal let a body in a corner choose slots into the other
    // wall at full speed, and the agents deciding after it followed it in (a counterflow
    // jam, docs/crowd.md). A freed slot is read again at the body's own radius, below the
    // margin: within the margin band of one wall the agent still sees the next wall ahead
    // (it read none before, and took courses at full speed towards the far wall of a
    // narrow corridor; docs/crowd.md, "A second blind spot").
    const Frame f = frame_of(in, i);  // world to slot frame; its transpose turns back
    const Vec2 at{point[0], point[1]};
    const bool recast = body < pad && nd > body;
    if (recast) std::fill_n(scratch.bare.data(), in.k, std::uint8_t{0});
    for (std::size_t j = 0; j < in.k; ++j) {
      if (d[j] != 0.0f) continue;
      const float sx = in.slots[2 * j], sy = in.slots[2 * j + 1];
      // (Along a wall within 1e-6, the tolerance the slot frame's rounding needs.)
      if (!moves_into(*in.world, at, {f.c * sx - f.s * sy, f.s * sx + f.c * sy}, pad, layers,
                      1e-6)) {
        d[j] = std::numeric_limits<float>::infinity();
        if (recast) {
          float h = 0.0f;
          slot_raycast_rows(*in.world, point, {in.slots + 2 * j, 2}, {&look, 1}, headings, body,
                            layers, {&h, 1}, 0, 1, scratch.rays);
          if (h <= look) d[j] = h;
          scratch.bare[j] = 1;
          scratch.any_bare = true;
        }
      }
    }
  }
  return true;
}

void row_of(const WallDanger& b, const BehaviourInputs& in, std::size_t i, const Frame&,
            float* row) {
  // (The slot frame is handled by slot_raycast_rows through the heading.)
  struct WallDangerSite;
  WallScratch& scratch = detail::thread_scratch<WallScratch, WallDangerSite>();
  const float look = b.look_ahead;
  const AgentsView& a = in.agents;
  const float pad = std::max(0.0f, b.ray_radius >= 0.0f ? b.ray_radius : a.radius[i] + b.padding);
  bool any = slot_wall_distances(in, i, look, pad, b.layers, scratch, a.radius[i]);
  if (b.agents && !in.neighbors.empty() && in.neighbors.counts[i] > 0) {
    // The other agents as discs of radius r_j + pad in the slot frame (ray_circle).
    if (!any) {
      scratch.reserve(in.k);
      std::fill(scratch.distance.begin(),
                scratch.distance.begin() + static_cast<std::ptrdiff_t>(in.k),
                std::numeric_limits<float>::infinity());
    }
    const Frame f = frame_of(in, i);
    const Vec2 p = load2(a.position, i);
    const std::size_t m = in.neighbors.max_neighbors;
    const auto count = static_cast<std::size_t>(in.neighbors.counts[i]);
    float* dist = scratch.distance.data();
    for (std::size_t q = 0; q < count; ++q) {
      const auto j = static_cast<std::size_t>(in.neighbors.indices[i * m + q]);
      const Vec2 r = f(load2(a.position, j) - p);
      const double reach = static_cast<double>(a.radius[j]) + pad;
      if (length(r) > look + reach) continue;
      for (std::size_t s = 0; s < in.k; ++s) {
        const float sx = in.slots[2 * s], sy = in.slots[2 * s + 1];
        double t = ray_circle(r.x, r.y, reach, sx, sy);
        if (t == 0.0 && !(sx * r.x + sy * r.y > 0.0f)) continue;  // overlapping: may leave
        if (t < dist[s]) dist[s] = static_cast<float>(t);
      }
    }
    any = true;
  }
  if (in.sensed && in.sensed_of == &b) {
    float* out = in.sensed + i * in.k;
    if (any) std::copy_n(scratch.distance.data(), in.k, out);
    else std::fill_n(out, in.k, std::numeric_limits<float>::infinity());
  }
  if (!any) return;
  const float* d = scratch.distance.data();
  const auto k = static_cast<std::ptrdiff_t>(in.k);
  const auto s = static_cast<std::ptrdiff_t>(std::min<std::size_t>(b.spread, in.k / 2));
  for (std::ptrdiff_t j = 0; j < k; ++j) {
    if (!(d[j] <= look)) continue;
    const float x = look > 0.0f ? std::clamp(1.0f - d[j] / look, 0.0f, 1.0f) : 1.0f;
    const float v = b.falloff == WallFalloff::kBinary   ? 1.0f
                    : b.falloff == WallFalloff::kLinear ? x
                                                        : x * x;
    for (std::ptrdiff_t m = -s; m <= s; ++m) {
      const float g = b.falloff == WallFalloff::kBinary
                          ? 1.0f
                          : 1.0f - static_cast<float>(m < 0 ? -m : m) / static_cast<float>(s + 1);
      float& r = row[((j + m) % k + k) % k];
      r = std::max(r, v * g);
    }
  }
}

/// Per-thread working memory of CollisionDanger: slot directions in the world frame and
/// the TTC of every candidate, (S+1)·K, m-major.
struct CollisionScratch {
  std::vector<float> dx, dy, ttc, one;  // one: a neighbour's own TTC table (past_target)
  std::vector<float> mult;              // level_multiple of each level, for mult_of below
  std::uint64_t mult_key = 0;           // (speeds, fine_speeds) + 1 the table holds; 0: none
  std::vector<std::uint8_t> past;       // per slot: the neighbour is left out (past_target)
  std::vector<Vec2> threats;            // (p, ρ) of each threat disc, for the lone-agent rules
  WallScratch walls;
  void reserve(std::size_t k, std::size_t s) {
    if (dx.size() < k) {
      dx.resize(k);
      dy.resize(k);
      past.resize(k);
    }
    if (ttc.size() < (s + 1) * k) {
      ttc.resize((s + 1) * k);
      one.resize((s + 1) * k);
    }
  }
  /// The levels' multiples of max_speed / speeds (level_multiple), made once per setting.
  const float* mult_of(const CollisionDanger& b) {
    const std::uint64_t key = ((std::uint64_t{b.speeds} << 32) | b.fine_speeds) + 1;
    if (mult_key != key) {
      mult.resize(level_count(b) + 1);
      for (std::size_t m = 0; m < mult.size(); ++m) mult[m] = level_multiple(b, m);
      mult_key = key;
    }
    return mult.data();
  }
};

/// Whether some threat disc (relative position p, its own radius ρ, listed as pairs p, (ρ, 0)
/// in `threats`) is in sight of the agent at x: one of the rays from x to the disc's centre
/// and to its two points across the line of sight meets no wall of `layers` on the way.
/// (wall_speed_alone and unstick's lone-agent rule: a neighbour behind a wall, in the next
/// room or corridor, cannot come near on a straight course; one that walks round into
/// sight counts from then on.)
bool threat_in_sight(const World& w, Vec2 x, std::span<const Vec2> threats, std::uint32_t layers) {
  for (std::size_t t = 0; t + 1 < threats.size(); t += 2) {
    const Vec2 p = threats[t];
    const float rho = threats[t + 1].x, len = length(p);
    if (!(len > rho)) return true;  // over the agent (or a NaN): count it
    const Vec2 side = Vec2{-p.y, p.x} * (rho / len);
    const Vec2 ends[3] = {p, p + side, p - side};
    float origins[6], dirs[6], reach[3], dist[3], normal[6];
    bool hit[3];
    std::int32_t obstacle[3];
    for (int e = 0; e < 3; ++e) {
      origins[2 * e] = x.x;
      origins[2 * e + 1] = x.y;
      dirs[2 * e] = ends[e].x;
      dirs[2 * e + 1] = ends[e].y;
      reach[e] = length(ends[e]);
    }
    raycast_rows(w, {origins, 6}, {dirs, 6}, {reach, 3}, 0.0f, layers,
                 RayHitsOut{dist, hit, normal, obstacle}, 0, 3);
    if (!hit[0] || !hit[1] || !hit[2]) return true;
  }
  return false;
}

/// TTC of the candidates s_m·d_q (speeds s_m = ks·mult[m] for m0 <= m <= S, slots q < k;
/// mult: level_multiple) against one neighbour (relative position p, effective velocity u,
/// cc = |p|² − R² > 0), folded into ttc[m·k + q] by minimum.
__attribute__((always_inline)) inline void ttc_levels(const float* dx, const float* dy,
                                                      std::size_t k, float ks, const float* mult,
                                                      std::size_t m0, std::size_t S, Vec2 p, Vec2 u,
                                                      float cc, float* ttc) {
  const float inf = std::numeric_limits<float>::infinity();
  for (std::size_t m = m0; m <= S; ++m) {
    const float sv = ks * mult[m];
    float* t = ttc + m * k;
    for (std::size_t q = 0; q < k; ++q) {
      const float wx = sv * dx[q] - u.x, wy = sv * dy[q] - u.y;
      const float bb = p.x * wx + p.y * wy;
      const float disc = bb * bb - (wx * wx + wy * wy) * cc;
      // The nearer root of |p − w·t|² = R², in the cancellation-free form c/(b + √disc).
      const float hit = cc / (bb + std::sqrt(std::max(disc, 0.0f)));
      // Bitwise &: no branch, so the loop over slots vectorises.
      const float tt = ((bb > 0.0f) & (disc > 0.0f)) ? hit : inf;
      t[q] = std::min(t[q], tt);
    }
  }
}

// The same loops compiled for the baseline (SSE2: 4 slots a step) and for AVX2 (8 slots a
// step; no FMA, so every lane rounds as in the baseline and the results are the same bit
// for bit, tested with CONTEXTSTEER_NO_AVX2). On crowd-track-10k, velocity configuration,
// one thread, callgrind: CollisionDanger's rows 5,406 -> 4,483 instructions an agent a
// step with one call per speed, 4,100 with the speeds inside the call.
void ttc_levels_base(const float* dx, const float* dy, std::size_t k, float ks, const float* mult,
                     std::size_t m0, std::size_t S, Vec2 p, Vec2 u, float cc, float* ttc) {
  ttc_levels(dx, dy, k, ks, mult, m0, S, p, u, cc, ttc);
}
CS_AVX2 void ttc_levels_avx2(const float* dx, const float* dy, std::size_t k, float ks,
                             const float* mult, std::size_t m0, std::size_t S, Vec2 p, Vec2 u,
                             float cc, float* ttc) {
#if defined(CONTEXTSTEER_AVX2)
  if (k % 8 == 0) {
    // The same operations in the same order as ttc_levels, written with intrinsics: the
    // loop the compiler made of ttc_levels re-broadcast the neighbour's constants and
    // re-checked that ttc does not overlap dx, dy at every level (some 35 instructions a
    // level beside 31 a block of 8 slots). std::max(disc, 0) is max_ps(0, disc) and
    // std::min(t, tt) is min_ps(tt, t), operand order included (NaN and signed zeros).
    const __m256 px = _mm256_set1_ps(p.x), py = _mm256_set1_ps(p.y);
    const __m256 ux = _mm256_set1_ps(u.x), uy = _mm256_set1_ps(u.y);
    const __m256 vcc = _mm256_set1_ps(cc), zero = _mm256_setzero_ps();
    const __m256 inf = _mm256_set1_ps(std::numeric_limits<float>::infinity());
    for (std::size_t m = m0; m <= S; ++m) {
      const __m256 sv = _mm256_set1_ps(ks * mult[m]);
      float* t = ttc + m * k;
      for (std::size_t q = 0; q < k; q += 8) {
        const __m256 wx = _mm256_sub_ps(_mm256_mul_ps(sv, _mm256_loadu_ps(dx + q)), ux);
        const __m256 wy = _mm256_sub_ps(_mm256_mul_ps(sv, _mm256_loadu_ps(dy + q)), uy);
        const __m256 bb = _mm256_add_ps(_mm256_mul_ps(px, wx), _mm256_mul_ps(py, wy));
        const __m256 ww = _mm256_add_ps(_mm256_mul_ps(wx, wx), _mm256_mul_ps(wy, wy));
        const __m256 disc = _mm256_sub_ps(_mm256_mul_ps(bb, bb), _mm256_mul_ps(ww, vcc));
        const __m256 root = _mm256_sqrt_ps(_mm256_max_ps(zero, disc));
        const __m256 hit = _mm256_div_ps(vcc, _mm256_add_ps(bb, root));
        const __m256 ok = _mm256_and_ps(_mm256_cmp_ps(bb, zero, _CMP_GT_OQ),
                                        _mm256_cmp_ps(disc, zero, _CMP_GT_OQ));
        const __m256 tt = _mm256_blendv_ps(inf, hit, ok);
        _mm256_storeu_ps(t + q, _mm256_min_ps(tt, _mm256_loadu_ps(t + q)));
      }
    }
    return;
  }
#endif
  ttc_levels(dx, dy, k, ks, mult, m0, S, p, u, cc, ttc);
}

/// The speed and danger rows from the TTC table (collision_row's loop over slots without
/// the opt-in candidates), eight slots at a time: per slot the fastest level whose TTC
/// reaches the horizon, else the level with the largest TTC (ties: the slowest), danger 0
/// when safe, else clamp(1 − TTC/horizon, 0, 1). Levels are scanned from S down as in the
/// loop, a lane keeping its answer once it is safe, and the loop stops when every lane is;
/// the same float operations (max_ps(0, x) and min_ps(1, x) are std::clamp, NaN and −0
/// included), so the same rows bit for bit. False (nothing written) unless k % 8 == 0.
/// The loop's two unpredictable branches per level were a third of the rows' time on
/// crowd-track-10k (velocity configuration, perf).
CS_AVX2 bool levels_to_maps_avx2(const float* ttc, std::size_t k, const float* mult, std::size_t S,
                                 float horizon, float scale, float* speed, float* danger) {
#if defined(CONTEXTSTEER_AVX2)
  if (k % 8 != 0) return false;
  const __m256 h = _mm256_set1_ps(horizon), zero = _mm256_setzero_ps();
  const __m256 one = _mm256_set1_ps(1.0f);
  for (std::size_t q = 0; q < k; q += 8) {
    __m256 best = zero;  // the level's multiple (mult[m])
    __m256 best_t = _mm256_set1_ps(-1.0f);
    __m256 safe = zero;  // mask
    for (std::size_t m = S + 1; m-- > 0;) {
      const __m256 tt = _mm256_loadu_ps(ttc + m * k + q);
      const __m256 level = _mm256_set1_ps(mult[m]);
      const __m256 now = _mm256_andnot_ps(safe, _mm256_cmp_ps(tt, h, _CMP_GE_OQ));
      const __m256 better =
          _mm256_andnot_ps(_mm256_or_ps(safe, now), _mm256_cmp_ps(tt, best_t, _CMP_GE_OQ));
      best_t = _mm256_blendv_ps(best_t, tt, better);
      best = _mm256_blendv_ps(best, level, _mm256_or_ps(now, better));
      safe = _mm256_or_ps(safe, now);
      if (_mm256_movemask_ps(safe) == 0xff) break;
    }
    _mm256_storeu_ps(speed + q, _mm256_mul_ps(best, _mm256_set1_ps(scale)));
    const __m256 x = _mm256_sub_ps(one, _mm256_div_ps(best_t, h));
    const __m256 d = _mm256_min_ps(one, _mm256_max_ps(zero, x));
    _mm256_storeu_ps(danger + q, _mm256_blendv_ps(d, zero, safe));
  }
  return true;
#else
  (void)ttc, (void)k, (void)mult, (void)S, (void)horizon, (void)scale, (void)speed, (void)danger;
  return false;
#endif
}

float pair_ttc(Vec2 p, float R, Vec2 w);

/// CollisionDanger's past_target for bodies standing (see behaviours.hpp): whether it
/// holds for agent i (on, the behaviour's flag, a target that is a goal, not a waypoint)
/// and g, the target less the agent's position.
struct PastTarget {
  bool on = false;
  Vec2 g{};
  float ri = 0.0f;
};

PastTarget past_target_of(const CollisionDanger& b, const AgentsView& a, std::size_t i) {
  PastTarget pt;
  if (!b.past_target || !a.target || (a.waypoint && a.waypoint[i])) return pt;
  pt.on = true;
  pt.g = load2(a.target, i) - load2(a.position, i);
  pt.ri = a.radius[i];
  return pt;
}

/// Whether neighbour j (p = x_j − x_i) can be a body standing that some course of agent i
/// passes its target before meeting: slower than kStandingSpeed, its bare body clear of
/// the target (|g − p| >= r_i + r_j), and near enough along (a course meets the padded
/// disc at h <= √(|p|² − R²) <= |p| and passes the target at g·d >= √(|g|² − r_i²), so
/// |g|² − r_i² <= (|p| + margin)², loosened by 1 % and 1 mm so that rounding never
/// refuses a case body_past_target takes). A filter: body_past_target decides.
bool standing_past_target(const PastTarget& pt, const AgentsView& a, std::size_t j, Vec2 p,
                          float margin) {
  const Vec2 vj = load2(a.velocity, j);
  if (!(dot(vj, vj) <= kStandingSpeed * kStandingSpeed)) return false;
  const float bare = pt.ri + a.radius[j];
  const Vec2 e = pt.g - p;
  if (!(dot(e, e) >= bare * bare)) return false;
  const float far = 1.01f * (length(p) + margin) + 1e-3f;
  return dot(pt.g, pt.g) - pt.ri * pt.ri <= far * far;
}

/// CollisionDanger's arrivals (see behaviours.hpp): whether they hold for agent i, which
/// then stands at its goal: within its radius of a target that is not a waypoint.
bool at_goal(const CollisionDanger& b, const AgentsView& a, std::size_t i) {
  if (!b.arrivals || !a.target || (a.waypoint && a.waypoint[i])) return false;
  const Vec2 g = load2(a.target, i) - load2(a.position, i);
  return dot(g, g) <= a.radius[i] * a.radius[i];
}

/// arrivals (see behaviours.hpp), for agent i at its goal (at_goal): whether neighbour j
/// arrives beside it at its own target: j not kinematic, its target a goal, j heading
/// towards it (v_j·g_j > 0, g_j = t_j − x_j) and reaching it within the horizon at its
/// speed (|g_j| <= |v_j|·horizon), and its straight way there, the segment from x_j to
/// t_j, clear of i by R. Then `stop` is t_j − x_i, where j is seen standing besides where
/// it is.
bool arriving(const CollisionDanger& b, const AgentsView& a, std::size_t i, std::size_t j, float R,
              Vec2& stop) {
  if (is_kinematic(a, j) || (a.waypoint && a.waypoint[j])) return false;
  const Vec2 xj = load2(a.position, j), tj = load2(a.target, j), vj = load2(a.velocity, j);
  const Vec2 g = tj - xj;
  const float gg = dot(g, g);
  if (!(dot(g, vj) > 0.0f) || !(gg <= dot(vj, vj) * (b.horizon * b.horizon))) return false;
  const Vec2 q = load2(a.position, i) - xj;
  const float s = std::clamp(dot(q, g) / gg, 0.0f, 1.0f);  // gg > 0: g·v_j > 0
  const Vec2 e = q - g * s;
  if (!(dot(e, e) >= R * R)) return false;
  stop = g - q;
  return true;
}

/// Neighbour j of agent i as the pair TTC sees it: κ for the pair (1 for a kinematic
/// neighbour under reciprocity, which takes no share of the avoidance: α = 0), the
/// effective velocity u = κ·α·v_i + v_j (u = v_j for that kinematic one), and, with
/// arrivals for i at its goal (`home`), whether j arrives beside it: then v_j = 0 and
/// `stop`, where j stops, relative to x_i, is a second disc.
struct PairSeen {
  float kappa;
  Vec2 u;
  bool arrives;
  Vec2 stop;
};

[[gnu::always_inline]] inline PairSeen pair_seen(const CollisionDanger& b, const AgentsView& a,
                                                 std::size_t i, std::size_t j, Vec2 vi,
                                                 float kappa_all, float R, bool home) {
  PairSeen s{};
  const bool alone = b.reciprocity > 0.0f && is_kinematic(a, j);
  s.kappa = alone ? 1.0f : kappa_all;
  s.arrives = home && arriving(b, a, i, j, R, s.stop);
  const Vec2 vj = s.arrives ? Vec2{} : load2(a.velocity, j);
  s.u = alone ? vj : vi * (s.kappa * b.reciprocity) + vj;
  return s;
}

/// same_way_horizon as the factor on a same-way pair's relative velocity:
/// same_way_horizon / horizon (with_horizon keeps the ratio), or 1 when off.
float same_way_of(const CollisionDanger& b) {
  return b.same_way_horizon > 0.0f ? b.same_way_horizon / b.horizon : 1.0f;
}

/// same_way_horizon for agent i: `scale` (same_way_of) is the factor on the relative
/// velocity w of a pair whose neighbour j walks i's way, 1 for the others. j walks i's way
/// when i has a target more than its radius away (else `scale` is 1 here: nobody does), j
/// is not kinematic and moves at kSameWaySpeed of its own max speed or faster, within 45°
/// of the direction g to that target (g·v_j > 0 and (g·v_j)² >= |g|²|v_j|² / 2), and:
/// - j keeps walking for the same-way horizon h at least: its target is |v_j|·h away or
///   more (|target_j − x_j|² >= |v_j|²h²); a walker about to stop at its goal is not one
///   to follow closely;
/// - j's way does not cross i's: j and j's target do not lie on opposite sides of i's way
///   (the line through x_i along g), each more than r_i + r_j from it (s_p·s_t < 0, s_p²
///   and s_t² both > (r_i + r_j)²|g|², s_p = g × (x_j − x_i), s_t = g × (target_j − x_i)).
///   Walkers converging on one point (a circle's centre) are not walking alongside.
/// Every time to collision against j is 1/scale times as long: a candidate is unsafe
/// against j only when it meets j within h (the horizon × scale). Scaling w rather than
/// the time keeps the kernels as they are; with the rule off (scale 1) nothing changes,
/// bit for bit.
struct SameWay {
  float scale = 1.0f;
  Vec2 g{};
  float gg = 0.0f;
  Vec2 xi{};
  float ri = 0.0f;
  float hh = 0.0f;  ///< h²

  SameWay(const CollisionDanger& b, const AgentsView& a, std::size_t i) {
    const float s = same_way_of(b);
    if (s == 1.0f || !a.target) return;
    hh = b.same_way_horizon * b.same_way_horizon;
    xi = load2(a.position, i);
    ri = a.radius[i];
    g = load2(a.target, i) - xi;
    gg = dot(g, g);
    if (gg > ri * ri) scale = s;
  }

  /// The factor of neighbour j.
  [[gnu::always_inline]] float of(const AgentsView& a, std::size_t j) const {
    if (scale == 1.0f || is_kinematic(a, j)) return 1.0f;
    const Vec2 vj = load2(a.velocity, j);
    const float vv = dot(vj, vj), gv = dot(g, vj);
    const float sj = kSameWaySpeed * a.max_speed[j];
    if (!(vv >= sj * sj && gv > 0.0f && gv * gv >= 0.5f * gg * vv)) return 1.0f;
    // j keeps walking for h: its target |v_j|·h away or more.
    const Vec2 xj = load2(a.position, j), tj = load2(a.target, j);
    const Vec2 e = tj - xj;
    if (!(dot(e, e) >= vv * hh)) return 1.0f;
    // j's way crossing i's: j and its target on opposite sides of i's way, both clear of it.
    const float sp = cross(g, xj - xi);
    const float st = cross(g, tj - xi);
    const float rr = ri + a.radius[j];
    const float lim = (rr * rr) * gg;
    return sp * st < 0.0f && sp * sp > lim && st * st > lim ? 1.0f : scale;
  }
};

/// past_target for a body standing (see behaviours.hpp): whether the course along the
/// unit direction d passes within r_i of the target (|d × g| <= r_i) no later than
/// h + margin, h the distance at which it meets the disc of radius R = r_i + r_j + margin
/// round p (0 when already inside it), at least r_i ahead (g·d >= r_i) or, nearer, heading
/// at the target (0 < g·d, |d × g| <= g·d / 4) with the target clear of that disc. A
/// course that misses the disc: false (nothing to leave out).
/// Where a course along the unit direction d from the origin first meets the disc of
/// radius R round p: 0 when it starts inside, +inf when it misses (or heads away).
float course_meets_disc(Vec2 p, float R, Vec2 d) {
  const float cc = dot(p, p) - R * R;
  if (!(cc > 0.0f)) return 0.0f;
  const float bb = p.x * d.x + p.y * d.y;
  const float disc = bb * bb - cc;
  if (!(bb > 0.0f) || !(disc > 0.0f)) return std::numeric_limits<float>::infinity();
  return cc / (bb + std::sqrt(disc));
}

/// body_past_target's part that depends on the course alone: how far along d the course
/// passes the target and how far to the side, and whether the course can leave any body
/// out (`open`: it passes within r_i of the target, and, nearer than r_i along, heads at
/// it). A caller testing one course against many bodies works it out once.
struct CoursePast {
  float along;
  float side;
  bool near;
  bool open;
};

CoursePast course_past(const PastTarget& pt, Vec2 d) {
  CoursePast c{};
  c.along = pt.g.x * d.x + pt.g.y * d.y;
  c.side = std::fabs(d.x * pt.g.y - d.y * pt.g.x);
  c.near = !(c.along >= pt.ri);
  // Nearer: only a course heading at the target (|d × g| <= g·d / 4, within 14°).
  c.open = c.side <= pt.ri && (!c.near || (c.along > 0.0f && c.side <= 0.25f * c.along));
  return c;
}

/// body_past_target for the course c along d (course_past(pt, d)).
bool body_past_target(const PastTarget& pt, const CoursePast& c, Vec2 p, float R, float margin,
                      Vec2 d) {
  if (!c.open) return false;
  if (c.near) {
    // Nearer: the target clear of the padded disc, so the agent stops before that disc.
    const Vec2 e = pt.g - p;
    if (!(dot(e, e) >= R * R)) return false;
  }
  const float h = course_meets_disc(p, R, d);
  return h != std::numeric_limits<float>::infinity() && c.along <= h + margin;
}

bool body_past_target(const PastTarget& pt, Vec2 p, float R, float margin, Vec2 d) {
  return body_past_target(pt, course_past(pt, d), p, R, margin, d);
}

#if defined(CONTEXTSTEER_AVX2)
/// pair_ttc's terms in four lanes, the same float operations in the same order (no FMA):
/// cc = |p|² − R², bb = p·w, disc = bb² − |w|²·cc and the hit cc / (bb + √disc).
struct PairTtcLanes {
  __m128 cc, bb, disc, hit;
};

[[gnu::always_inline]] CS_AVX2 inline PairTtcLanes pair_ttc_lanes(__m128 px, __m128 py, __m128 R,
                                                                  __m128 wx, __m128 wy) {
  PairTtcLanes t;
  t.cc = _mm_sub_ps(_mm_add_ps(_mm_mul_ps(px, px), _mm_mul_ps(py, py)), _mm_mul_ps(R, R));
  t.bb = _mm_add_ps(_mm_mul_ps(px, wx), _mm_mul_ps(py, wy));
  const __m128 ww = _mm_add_ps(_mm_mul_ps(wx, wx), _mm_mul_ps(wy, wy));
  t.disc = _mm_sub_ps(_mm_mul_ps(t.bb, t.bb), _mm_mul_ps(ww, t.cc));
  t.hit = _mm_div_ps(t.cc, _mm_add_ps(t.bb, _mm_sqrt_ps(t.disc)));
  return t;
}

/// velocity_pair_ttc over four neighbours at a time: per lane the same operations in the
/// same order as the scalar loop and pair_ttc, then the least TTC over the lanes (a
/// minimum, in any order). No FMA, so every lane rounds as the scalar code. Each
/// neighbour's position and velocity come in as one 64-bit load each: an eight-lane
/// version with AVX2 gathers took the same instructions but more time on an AMD EPYC,
/// where gathers are slow. The refinements of the velocity decision call it a few times
/// an agent a step; on crowd-track-10k (velocity configuration, callgrind) the scalar loop
/// took 245 instructions a call.
///
/// kSameWay: way.scale (agent i's SameWay) is not 1, and each lane's w is multiplied by its pair's
/// factor. A separate instance, so that the loop without the rule is the one before it:
/// with the rule's test inside the one loop, the step with the rule off took 2.0 % more
/// instructions (callgrind, crowd-track-10k, velocity configuration).
template <bool kSameWay>
CS_AVX2 float velocity_pair_ttc_avx2(const AgentsView& a, const std::int32_t* nb,
                                     std::int32_t count, std::size_t i, Vec2 v, float kappa,
                                     float alpha, float margin, const SameWay& way) {
  const float inf_s = std::numeric_limits<float>::infinity();
  if (count <= 0) return inf_s;
  const __m128 inf = _mm_set1_ps(inf_s), zero = _mm_setzero_ps();
  const __m128 xix = _mm_set1_ps(a.position[2 * i]), xiy = _mm_set1_ps(a.position[2 * i + 1]);
  const float ka = kappa * alpha;
  const __m128 vix = _mm_set1_ps(a.velocity[2 * i] * ka);
  const __m128 viy = _mm_set1_ps(a.velocity[2 * i + 1] * ka);
  const __m128 vkx = _mm_set1_ps(v.x * kappa), vky = _mm_set1_ps(v.y * kappa);
  const __m128 ri = _mm_set1_ps(a.radius[i]), mg = _mm_set1_ps(margin);
  // same_way_horizon (kSameWay): agent i's way and the rule's factor.
  [[maybe_unused]] const __m128 gx = _mm_set1_ps(way.g.x), gy = _mm_set1_ps(way.g.y);
  [[maybe_unused]] const __m128 half_gg = _mm_set1_ps(0.5f * way.gg);
  [[maybe_unused]] const __m128 scale = _mm_set1_ps(way.scale);
  [[maybe_unused]] const __m128 gg = _mm_set1_ps(way.gg);
  [[maybe_unused]] const __m128 hh = _mm_set1_ps(way.hh);
  // (x, y) of neighbour j as the low half of a vector (one 64-bit load).
  auto pair = [](const float* xy, std::int32_t j) {
    return _mm_castpd_ps(_mm_load_sd(reinterpret_cast<const double*>(xy + 2 * j)));
  };
  __m128 t = inf;
  for (std::int32_t n = 0; n < count; n += 4) {
    // Four neighbours (lanes past the list repeat the last one and are masked below).
    const std::int32_t last = count - 1;
    const std::int32_t j0 = nb[n], j1 = nb[std::min(n + 1, last)];
    const std::int32_t j2 = nb[std::min(n + 2, last)], j3 = nb[std::min(n + 3, last)];
    const __m128 p01 = _mm_movelh_ps(pair(a.position, j0), pair(a.position, j1));
    const __m128 p23 = _mm_movelh_ps(pair(a.position, j2), pair(a.position, j3));
    const __m128 v01 = _mm_movelh_ps(pair(a.velocity, j0), pair(a.velocity, j1));
    const __m128 v23 = _mm_movelh_ps(pair(a.velocity, j2), pair(a.velocity, j3));
    const __m128 pjx = _mm_shuffle_ps(p01, p23, _MM_SHUFFLE(2, 0, 2, 0));
    const __m128 pjy = _mm_shuffle_ps(p01, p23, _MM_SHUFFLE(3, 1, 3, 1));
    const __m128 vjx = _mm_shuffle_ps(v01, v23, _MM_SHUFFLE(2, 0, 2, 0));
    const __m128 vjy = _mm_shuffle_ps(v01, v23, _MM_SHUFFLE(3, 1, 3, 1));
    const __m128 rj = _mm_setr_ps(a.radius[j0], a.radius[j1], a.radius[j2], a.radius[j3]);
    const __m128 px = _mm_sub_ps(pjx, xix), py = _mm_sub_ps(pjy, xiy);
    const __m128 R = _mm_add_ps(_mm_add_ps(ri, rj), mg);
    const __m128 ux = _mm_add_ps(vix, vjx), uy = _mm_add_ps(viy, vjy);
    __m128 wx = _mm_sub_ps(vkx, ux), wy = _mm_sub_ps(vky, uy);
    if constexpr (kSameWay) {
      // same_way_horizon: each lane's w times its pair's factor, SameWay::of in lanes (the
      // same float operations in the same order).
      const __m128 sj = _mm_mul_ps(
          _mm_set1_ps(kSameWaySpeed),
          _mm_setr_ps(a.max_speed[j0], a.max_speed[j1], a.max_speed[j2], a.max_speed[j3]));
      const __m128 vv = _mm_add_ps(_mm_mul_ps(vjx, vjx), _mm_mul_ps(vjy, vjy));
      const __m128 gv = _mm_add_ps(_mm_mul_ps(gx, vjx), _mm_mul_ps(gy, vjy));
      __m128 walks = _mm_and_ps(_mm_cmpge_ps(vv, _mm_mul_ps(sj, sj)), _mm_cmpgt_ps(gv, zero));
      walks = _mm_and_ps(walks, _mm_cmpge_ps(_mm_mul_ps(gv, gv), _mm_mul_ps(half_gg, vv)));
      // j's way crossing i's (SameWay::of): j and its target on opposite sides of i's way.
      const __m128 tjx =
          _mm_setr_ps(a.target[2 * j0], a.target[2 * j1], a.target[2 * j2], a.target[2 * j3]);
      const __m128 tjy = _mm_setr_ps(a.target[2 * j0 + 1], a.target[2 * j1 + 1],
                                     a.target[2 * j2 + 1], a.target[2 * j3 + 1]);
      const __m128 sp = _mm_sub_ps(_mm_mul_ps(gx, py), _mm_mul_ps(gy, px));
      const __m128 st =
          _mm_sub_ps(_mm_mul_ps(gx, _mm_sub_ps(tjy, xiy)), _mm_mul_ps(gy, _mm_sub_ps(tjx, xix)));
      const __m128 rr = _mm_add_ps(ri, rj);
      const __m128 lim = _mm_mul_ps(_mm_mul_ps(rr, rr), gg);
      const __m128 crossing = _mm_and_ps(
          _mm_cmplt_ps(_mm_mul_ps(sp, st), zero),
          _mm_and_ps(_mm_cmpgt_ps(_mm_mul_ps(sp, sp), lim), _mm_cmpgt_ps(_mm_mul_ps(st, st), lim)));
      walks = _mm_andnot_ps(crossing, walks);
      // j keeps walking for h (SameWay::of): its target |v_j|·h away or more.
      const __m128 ex = _mm_sub_ps(tjx, pjx), ey = _mm_sub_ps(tjy, pjy);
      const __m128 ee = _mm_add_ps(_mm_mul_ps(ex, ex), _mm_mul_ps(ey, ey));
      walks = _mm_and_ps(walks, _mm_cmpge_ps(ee, _mm_mul_ps(vv, hh)));
      if (a.kinematic) {
        const __m128i kin =
            _mm_setr_epi32(a.kinematic[j0], a.kinematic[j1], a.kinematic[j2], a.kinematic[j3]);
        walks = _mm_andnot_ps(_mm_castsi128_ps(_mm_cmpgt_epi32(kin, _mm_setzero_si128())), walks);
      }
      const __m128 f = _mm_blendv_ps(_mm_set1_ps(1.0f), scale, walks);
      wx = _mm_mul_ps(wx, f);
      wy = _mm_mul_ps(wy, f);
    }
    const auto [cc, bb, disc, hit] = pair_ttc_lanes(px, py, R, wx, wy);
    const __m128 ahead = _mm_cmpgt_ps(bb, zero);
    const __m128 apart = _mm_cmpgt_ps(cc, zero);  // !(cc <= 0) for non-NaN
    // Touching (cc <= 0): 0 when deepening (bb > 0), else inf; apart: the hit when
    // bb > 0 and disc > 0, else inf.
    const __m128 far = _mm_blendv_ps(inf, hit, _mm_and_ps(ahead, _mm_cmpgt_ps(disc, zero)));
    const __m128 near = _mm_blendv_ps(inf, zero, ahead);
    __m128 tt = _mm_blendv_ps(near, far, apart);
    const __m128 live =
        _mm_castsi128_ps(_mm_cmpgt_epi32(_mm_set1_epi32(count - n), _mm_setr_epi32(0, 1, 2, 3)));
    tt = _mm_blendv_ps(inf, tt, live);
    t = _mm_min_ps(tt, t);
  }
  alignas(16) float l[4];
  _mm_store_ps(l, t);
  return std::min(std::min(l[0], l[1]), std::min(l[2], l[3]));
}
#endif

/// The least TTC of the candidate velocity v against agent i's neighbours j that
/// keep(j, x_j − x_i) accepts (no walls); one neighbour at a time.
template <class Keep>
float scalar_pair_ttc(const CollisionDanger& b, const BehaviourInputs& in, std::size_t i, Vec2 v,
                      Keep&& keep) {
  const AgentsView& a = in.agents;
  const float kappa = 1.0f / (1.0f - b.reciprocity);
  const Vec2 xi = load2(a.position, i), vi = load2(a.velocity, i);
  float t = std::numeric_limits<float>::infinity();
  if (in.neighbors.empty()) return t;
  // past_target: a body standing that the course meets only past the target is left out.
  const PastTarget pt = past_target_of(b, a, i);
  const float sp = length(v);
  const bool past = pt.on && sp > 0.0f;
  const Vec2 d = past ? v * (1.0f / sp) : Vec2{};
  const bool home = at_goal(b, a, i);
  const SameWay way(b, a, i);
  const std::int32_t* nb = in.neighbors.indices + i * in.neighbors.max_neighbors;
  for (std::int32_t n = 0; n < in.neighbors.counts[i]; ++n) {
    const auto j = static_cast<std::size_t>(nb[n]);
    const Vec2 rel = load2(a.position, j) - xi;
    if (!keep(j, rel)) continue;
    const float R = a.radius[i] + a.radius[j] + b.margin;
    if (past && standing_past_target(pt, a, j, rel, b.margin) &&
        body_past_target(pt, rel, R, b.margin, d))
      continue;
    const PairSeen s = pair_seen(b, a, i, j, vi, kappa, R, home);
    Vec2 w = v * s.kappa - s.u;
    if (s.arrives) {
      t = std::min(t, pair_ttc(s.stop, R, w));
    } else if (way.scale != 1.0f) {
      w = w * way.of(a, j);
    }
    t = std::min(t, pair_ttc(rel, R, w));
  }
  return t;
}

}  // namespace

float kinematic_ttc(const CollisionDanger& b, const BehaviourInputs& in, std::size_t i, Vec2 v) {
  // (A kinematic pair takes α = 0 in scalar_pair_ttc whatever b.reciprocity.)
  const std::uint8_t* kin = in.agents.kinematic;
  if (!kin) return std::numeric_limits<float>::infinity();
  return scalar_pair_ttc(b, in, i, v, [kin](std::size_t j, Vec2) { return kin[j] != 0; });
}

namespace {

/// Whether past_target holds for agent i and some neighbour passes standing_past_target.
bool any_standing_past_target(const CollisionDanger& b, const BehaviourInputs& in, std::size_t i) {
  const AgentsView& a = in.agents;
  const PastTarget pt = past_target_of(b, a, i);
  if (!pt.on) return false;
  const Vec2 xi = load2(a.position, i);
  const std::int32_t* nb = in.neighbors.indices + i * in.neighbors.max_neighbors;
  for (std::int32_t n = 0; n < in.neighbors.counts[i]; ++n) {
    const auto j = static_cast<std::size_t>(nb[n]);
    if (standing_past_target(pt, a, j, load2(a.position, j) - xi, b.margin)) return true;
  }
  return false;
}

/// Whether velocity_pair_ttc for agent i under b may take the four-lane loop: AVX2 in
/// use, neighbours to test, and none that the scalar loop treats apart: kinematic
/// neighbours under reciprocity (α differs per pair), when past_target holds for i,
/// a neighbour passing standing_past_target (some courses may leave it out), and, when
/// arrivals hold for i (at_goal), its arriving neighbours (seen standing). It depends on
/// the agents, not on the candidate velocity, so a caller testing many candidates of one
/// agent (creep's bisection over every slot) asks once and passes the answer on.
[[gnu::always_inline]] inline bool pairs_in_lanes(const CollisionDanger& b,
                                                  const BehaviourInputs& in, std::size_t i) {
#if defined(CONTEXTSTEER_AVX2)
  return !in.neighbors.empty() && detail::use_avx2() &&
         !(b.reciprocity > 0.0f && in.agents.kinematic) && !at_goal(b, in.agents, i) &&
         !any_standing_past_target(b, in, i);
#else
  (void)b, (void)in, (void)i;
  return false;
#endif
}

/// The least TTC of the candidate velocity v against agent i's neighbours (no walls);
/// lanes, pairs_in_lanes(b, in, i) (the two loops give the same value).
[[gnu::always_inline]] inline float velocity_pair_ttc(const CollisionDanger& b,
                                                      const BehaviourInputs& in, std::size_t i,
                                                      Vec2 v, bool lanes) {
#if defined(CONTEXTSTEER_AVX2)
  if (lanes) {
    // (An agent on its target has scale 1, so the instance without the rule gives the same
    // bits: x · 1 is x.)
    const SameWay way(b, in.agents, i);
    const std::int32_t* nb = in.neighbors.indices + i * in.neighbors.max_neighbors;
    const float kappa = 1.0f / (1.0f - b.reciprocity);
    if (way.scale != 1.0f)
      return velocity_pair_ttc_avx2<true>(in.agents, nb, in.neighbors.counts[i], i, v, kappa,
                                          b.reciprocity, b.margin, way);
    return velocity_pair_ttc_avx2<false>(in.agents, nb, in.neighbors.counts[i], i, v, kappa,
                                         b.reciprocity, b.margin, way);
  }
#else
  (void)lanes;
#endif
  return scalar_pair_ttc(b, in, i, v, [](std::size_t, Vec2) { return true; });
}

/// velocity_pair_ttc for a single candidate.
float velocity_pair_ttc(const CollisionDanger& b, const BehaviourInputs& in, std::size_t i,
                        Vec2 v) {
  return velocity_pair_ttc(b, in, i, v, pairs_in_lanes(b, in, i));
}

/// Agent i's neighbours as scalar_pair_ttc sees them under b (keeping every neighbour):
/// what depends on the pair and not on the candidate velocity, per neighbour j. The
/// neighbours that arrive beside agent i (PairSeen::arrives: two discs, no same-way
/// factor) are kept apart in `arriving`; the others are lanes of a structure of arrays:
/// first those no course leaves out, then those passing standing_past_target (some course
/// may leave them out), `lanes` of them in all, and three lanes of padding.
struct PairList {
  struct Arriving {
    Vec2 rel, u, stop;
    float R, kappa;
    bool standing;
  };
  std::vector<float> px, py, R, kappa, ux, uy, f;  ///< x_j − x_i, r_i + r_j + margin, PairSeen
  std::size_t kept = 0;                            ///< lanes [0, kept): no course leaves them out
  std::size_t lanes = 0;  ///< lanes [kept, lanes): standing_past_target holds
  std::vector<Arriving> arriving;

  void clear() {
    px.clear(), py.clear(), R.clear(), kappa.clear(), ux.clear(), uy.clear(), f.clear();
    arriving.clear();
    kept = lanes = 0;
  }
  void push(Vec2 p, float r, float k, Vec2 u, float fj) {
    px.push_back(p.x), py.push_back(p.y), R.push_back(r), kappa.push_back(k);
    ux.push_back(u.x), uy.push_back(u.y), f.push_back(fj);
  }
  void swap_lanes(std::size_t a, std::size_t b) {
    for (std::vector<float>* v : {&px, &py, &R, &kappa, &ux, &uy, &f}) std::swap((*v)[a], (*v)[b]);
  }
};

/// Whether the candidate w (already w = κ·v − u, times the same-way factor) meets the
/// disc of radius R at p within h: pair_ttc(p, R, w) < h, in pair_ttc's operations.
[[gnu::always_inline]] inline bool pair_meets(Vec2 p, float R, Vec2 w, float h) {
  return pair_ttc(p, R, w) < h;
}

#if defined(CONTEXTSTEER_AVX2)
/// PairTest's lanes [from, to) four at a time: the first lane whose candidate meets its
/// disc within h (pair_meets, the same float operations lane by lane: no FMA), or `to`
/// when none does.
CS_AVX2 std::size_t first_meeting_avx2(const PairList& l, std::size_t from, std::size_t to, Vec2 v,
                                       bool scaled, float h) {
  const __m128 vx = _mm_set1_ps(v.x), vy = _mm_set1_ps(v.y), hv = _mm_set1_ps(h);
  const __m128 zero = _mm_setzero_ps();
  for (std::size_t n = from; n < to; n += 4) {
    const __m128 k = _mm_loadu_ps(l.kappa.data() + n);
    __m128 wx = _mm_sub_ps(_mm_mul_ps(vx, k), _mm_loadu_ps(l.ux.data() + n));
    __m128 wy = _mm_sub_ps(_mm_mul_ps(vy, k), _mm_loadu_ps(l.uy.data() + n));
    if (scaled) {
      const __m128 f = _mm_loadu_ps(l.f.data() + n);
      wx = _mm_mul_ps(wx, f);
      wy = _mm_mul_ps(wy, f);
    }
    const __m128 px = _mm_loadu_ps(l.px.data() + n), py = _mm_loadu_ps(l.py.data() + n);
    const __m128 R = _mm_loadu_ps(l.R.data() + n);
    const auto [cc, bb, disc, hit] = pair_ttc_lanes(px, py, R, wx, wy);
    // pair_ttc < h: touching (cc <= 0) and deepening (bb > 0), TTC 0; apart, bb > 0,
    // disc > 0 and the hit before h.
    const __m128 near = _mm_cmple_ps(cc, zero);
    const __m128 far = _mm_and_ps(_mm_cmpgt_ps(disc, zero), _mm_cmplt_ps(hit, hv));
    const __m128 meets = _mm_and_ps(_mm_cmpgt_ps(bb, zero), _mm_or_ps(near, far));
    int mask = _mm_movemask_ps(meets);
    if (to - n < 4) mask &= (1 << (to - n)) - 1;
    if (mask != 0) return n + static_cast<std::size_t>(__builtin_ctz(static_cast<unsigned>(mask)));
  }
  return to;
}
#endif

/// Whether candidate velocities of agent i are safe against its neighbours under b
/// (velocity_pair_ttc(b, in, i, v) >= b.horizon), for a decision that tests many of them:
/// creep's bisection (14 candidates a slot, every slot of an agent that cannot move),
/// wall_speed, unstick and squeeze. It stands in for velocity_pair_ttc's two loops there.
/// Where the four-lane loop over the agents' arrays did not apply (pairs_in_lanes false:
/// an agent near or at its goal with bodies standing round it, kinematic neighbours under
/// reciprocity), the scalar loop worked out each pair's filter, arrival and same-way
/// factor again for every candidate; a packed crowd standing at its goals spent most of
/// its step there (docs/performance.md, "A dense crowd standing at its goals"). Here they
/// are worked out once, on the first test, into a PairList; each test then runs only the
/// candidate's part, in the same float operations as scalar_pair_ttc and pair_ttc, four
/// neighbours at a time with AVX2, and stops at the first neighbour it meets within the
/// horizon: a minimum reaches the horizon only if every term does (a NaN term counts as
/// neither, in both). That neighbour moves to the front of its part of the list, as the
/// next candidate of a bisection most often meets it too. The order of the terms changes
/// nothing: the answer is the same boolean. Stopping early pays more than the list costs
/// even where the four-lane loop applied (walking packed, callgrind: 1.6–2.4 times fewer
/// instructions a step), so the list serves every agent. And when a neighbour met a creep
/// bisection's candidate, the halvings after it that the same neighbour meets are settled
/// by that one pair (met_again): a crowd standing packed at touching distance tests 14
/// times fewer candidates in full.
class PairTest {
 public:
  PairTest(const CollisionDanger& b, const BehaviourInputs& in, std::size_t i, PairList& store)
      : b_(b), in_(in), i_(i), l_(store) {}

  /// velocity_pair_ttc(b, in, i, v) >= b.horizon. When false, hit_ is the lane that met
  /// (at the front of its part now; with hit_course_ the candidate's course when that
  /// part is the bodies some course may leave out), or kNone when an arriving neighbour
  /// did. (Set on the way out, only when false: met_again asks after a false.)
  bool safe(Vec2 v) {
    if (!built_) build();
    const float h = b_.horizon;
    // First the lanes no course leaves out: an unsafe candidate most often stops there,
    // before the course is worked out.
    if (meets_in(0, l_.kept, v, h)) return false;
    if (l_.kept == l_.lanes && l_.arriving.empty()) return true;
    // scalar_pair_ttc's candidate part: the course, for past_target ((0, 0) when it
    // counts no course, else a unit vector).
    const Vec2 d = course_of(v);
    const bool past = d.x != 0.0f || d.y != 0.0f;
    // (The course's part of body_past_target, once; most courses leave no body out.)
    const CoursePast course = past ? course_past(pt_, d) : CoursePast{};
    const bool may_leave = past && course.open;
    const auto left_out = [&](Vec2 p, float R) {
      return may_leave && body_past_target(pt_, course, p, R, b_.margin, d);
    };
    for (std::size_t n = 0; n < l_.arriving.size(); ++n) {
      const PairList::Arriving& e = l_.arriving[n];
      if (e.standing && left_out(e.rel, e.R)) continue;
      const Vec2 w = v * e.kappa - e.u;
      if (pair_meets(e.stop, e.R, w, h) || pair_meets(e.rel, e.R, w, h)) {
        if (n > 0) std::swap(l_.arriving[0], l_.arriving[n]);
        hit_ = kNone;
        return false;
      }
    }
    // The bodies some course may leave out: as they are when this one leaves none out,
    // else one by one.
    if (!may_leave) {
      if (!meets_in(l_.kept, l_.lanes, v, h)) return true;
      hit_course_ = d;
      return false;
    }
    for (std::size_t n = l_.kept; n < l_.lanes; ++n) {
      if (left_out(Vec2{l_.px[n], l_.py[n]}, l_.R[n])) continue;
      if (meets_one(n, v, h)) {
        if (n > l_.kept) l_.swap_lanes(l_.kept, n);
        hit_ = l_.kept;
        hit_course_ = d;
        return false;
      }
    }
    return true;
  }

  /// After safe(d·mid) returned false for mid = (lo + hi) / 2 (and hi set to it): the
  /// next steps of creep_speed's bisection that would find safe() false again, because the
  /// neighbour that met this candidate meets theirs too, are taken here without the whole
  /// test: each halving of [lo, hi) whose candidate d·mid that lane meets within the
  /// horizon, in meets_one's operations, sets hi = mid. A lane some course may leave out
  /// (past_target) counts only while the candidate's course is the one it met on, bit for
  /// bit (the same course leaves out the same bodies). So the answers are safe()'s own and
  /// the bisection ends where it would. Returns how many steps it took, at most `left`. A
  /// packed crowd standing at its goals has a body within reach on nearly every slot, and
  /// its creep searches spent most of their tests finding that body again, halving after
  /// halving. (Asking only when that body already touches the agent, which meets every
  /// candidate closing in on it, saved 1 % of a step 0.2 m apart and nothing touching:
  /// not worth its state.)
  int met_again(Vec2 d, float lo, float& hi, int left) {
    if (hit_ == kNone) return 0;
    const std::size_t n = hit_;
    const bool course_counts = n >= l_.kept && pt_.on;
    int taken = 0;
    for (; taken < left; ++taken) {
      const float mid = 0.5f * (lo + hi);
      const Vec2 v = d * mid;
      if (course_counts && !same_bits(course_of(v), hit_course_)) break;
      if (!meets_one(n, v, b_.horizon)) break;
      hi = mid;
    }
    return taken;
  }

 private:
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);

  /// scalar_pair_ttc's course of candidate v for past_target: its direction, or (0, 0)
  /// when past_target is off or v is 0 (safe()'s operations).
  Vec2 course_of(Vec2 v) const {
    const float sp = length(v);
    return pt_.on && sp > 0.0f ? v * (1.0f / sp) : Vec2{};
  }

  static bool same_bits(Vec2 a, Vec2 b) {
    return std::bit_cast<std::uint32_t>(a.x) == std::bit_cast<std::uint32_t>(b.x) &&
           std::bit_cast<std::uint32_t>(a.y) == std::bit_cast<std::uint32_t>(b.y);
  }

  /// Whether lane n's candidate meets its disc within h.
  bool meets_one(std::size_t n, Vec2 v, float h) const {
    Vec2 w = v * l_.kappa[n] - Vec2{l_.ux[n], l_.uy[n]};
    if (scaled_) w = w * l_.f[n];
    return pair_meets(Vec2{l_.px[n], l_.py[n]}, l_.R[n], w, h);
  }

  /// Whether some lane of [from, to) meets its disc within h; the first that does moves to
  /// the front of its part of the list (0 or kept).
  bool meets_in(std::size_t from, std::size_t to, Vec2 v, float h) {
    std::size_t hit = to;
#if defined(CONTEXTSTEER_AVX2)
    if (detail::use_avx2()) {
      hit = first_meeting_avx2(l_, from, to, v, scaled_, h);
    } else
#endif
    {
      for (std::size_t n = from; n < to && hit == to; ++n)
        if (meets_one(n, v, h)) hit = n;
    }
    if (hit == to) return false;
    const std::size_t front = hit < l_.kept ? 0 : l_.kept;
    if (hit > front) l_.swap_lanes(front, hit);
    hit_ = front;
    return true;
  }

  void build() {
    built_ = true;
    l_.clear();
    if (in_.neighbors.empty()) return;
    const AgentsView& a = in_.agents;
    const float kappa = 1.0f / (1.0f - b_.reciprocity);
    const Vec2 xi = load2(a.position, i_), vi = load2(a.velocity, i_);
    pt_ = past_target_of(b_, a, i_);
    const bool home = at_goal(b_, a, i_);
    const SameWay way(b_, a, i_);
    scaled_ = way.scale != 1.0f;
    const std::int32_t* nb = in_.neighbors.indices + i_ * in_.neighbors.max_neighbors;
    const std::int32_t count = in_.neighbors.counts[i_];
    // Two passes over the neighbours: the lanes no course leaves out, then the others.
    for (int pass = 0; pass < 2; ++pass) {
      for (std::int32_t n = 0; n < count; ++n) {
        const auto j = static_cast<std::size_t>(nb[n]);
        const Vec2 p = load2(a.position, j) - xi;
        const float R = a.radius[i_] + a.radius[j] + b_.margin;
        const bool standing = pt_.on && standing_past_target(pt_, a, j, p, b_.margin);
        if (standing != (pass == 1)) continue;
        const PairSeen s = pair_seen(b_, a, i_, j, vi, kappa, R, home);
        if (s.arrives) {
          l_.arriving.push_back({p, s.u, s.stop, R, s.kappa, standing});
          continue;
        }
        l_.push(p, R, s.kappa, s.u, scaled_ ? way.of(a, j) : 1.0f);
      }
      (pass == 0 ? l_.kept : l_.lanes) = l_.px.size();
    }
    // Three lanes past the list, so that four lanes loaded from any of its lanes stay in
    // the arrays (the four-lane loop masks those past its end).
    for (int pad = 0; pad < 3; ++pad) l_.push(Vec2{}, 1.0f, 0.0f, Vec2{}, 1.0f);
  }

  const CollisionDanger& b_;
  const BehaviourInputs& in_;
  std::size_t i_;
  PairList& l_;
  PastTarget pt_{};
  bool scaled_ = false;
  bool built_ = false;
  std::size_t hit_ = kNone;  // the lane that met safe()'s last unsafe candidate (see safe)
  Vec2 hit_course_{};        // that candidate's course, where it counts
};

/// CollisionDanger's creep candidate along the unit direction d of agent i: bisection
/// between a safe speed lo and an unsafe speed hi (kCreepSteps halvings, so within
/// (hi − lo)·2^−kCreepSteps of the boundary) on the exact test: every neighbour's TTC
/// and the wall's (h, or ∞ when the slot's ray is clear) reach the horizon. Returns the
/// last safe speed (lo itself when no midpoint is safe). pairs: agent i's PairTest under b.
float creep_speed(const CollisionDanger& b, PairTest& pairs, Vec2 d, float h, float lo, float hi) {
  const float scale = b.horizon / b.wall_horizon;  // wall TTC on the agents' scale
  for (int it = 0; it < kCreepSteps; ++it) {
    const float mid = 0.5f * (lo + hi);
    const bool wall_ok = h / mid * scale >= b.horizon;
    const bool ok = wall_ok && pairs.safe(d * mid);
    (ok ? lo : hi) = mid;
    // The neighbour that met this candidate most often meets the next ones down too.
    if (wall_ok && !ok) it += pairs.met_again(d, lo, hi, kCreepSteps - 1 - it);
  }
  return lo;
}

/// Whether some slot offers a safe moving candidate: speed above 0 at danger 0 (the
/// danger is unscaled here, 0 exactly when safe).
bool can_move(const float* speed, const float* danger, std::size_t k) {
  for (std::size_t q = 0; q < k; ++q)
    if (speed[q] > 0.0f && danger[q] == 0.0f) return true;
  return false;
}

/// Each slot that cannot move (no speed above 0 with danger 0) offers creep's candidate
/// from standing, the fastest speed below `step` (a level's speed, m/s) that is safe all
/// the way from standing under b, taken with danger 0 where it is above 0 (a slot that
/// can move keeps its level, at least `step`). `wall` is the slots' wall distances at b's
/// margin when a wall is near, else null; pairs: agent i's PairTest under b. Returns
/// whether any slot took one.
bool creep_from_standing(const CollisionDanger& b, PairTest& pairs, const float* dx,
                         const float* dy, std::size_t k, float step, const float* wall, float top,
                         float* speed, float* danger) {
  constexpr float inf = std::numeric_limits<float>::infinity();
  bool moved = false;
  for (std::size_t q = 0; q < k; ++q) {
    if (speed[q] > 0.0f && danger[q] == 0.0f) continue;
    const float s = creep_speed(b, pairs, Vec2{dx[q], dy[q]}, wall ? wall[q] : inf, 0.0f, step);
    if (s > 0.0f) {
      speed[q] = s / top;
      danger[q] = 0.0f;
      moved = true;
    }
  }
  return moved;
}

/// CollisionDanger's past_target (see behaviours.hpp): h[q], the hit along world direction
/// (dx[q], dy[q]) of a disc of radius r_i + margin (∞ when none), becomes ∞ where the ray
/// passes within r_i of agent i's target, at least r_i ahead, before the bare body would
/// touch that wall (closest approach at r_i <= g·d <= h[q] + margin). Within r_i of its
/// target every ray passes that near it, so an agent standing at its goal would read no
/// wall at all. No target (the array call without one), or a target that is a waypoint
/// on the agent's way, not its goal (AgentsView::waypoint, a detour's): as is. Slots that
/// bare marks (null: none) were cast at r_i itself, and touch the wall at h[q].
void walls_past_target(const BehaviourInputs& in, std::size_t i, const float* dx, const float* dy,
                       std::size_t k, float margin, float* h, const std::uint8_t* bare) {
  const AgentsView& a = in.agents;
  if (!a.target || (a.waypoint && a.waypoint[i])) return;
  const Vec2 g = load2(a.target, i) - load2(a.position, i);
  const float reach = a.radius[i];
  for (std::size_t q = 0; q < k; ++q) {
    const float along = g.x * dx[q] + g.y * dy[q];
    const float side = std::fabs(dx[q] * g.y - dy[q] * g.x);
    // Passes within r_i of the target at least r_i ahead, or, within r_i of it, heads at
    // it (within 14°, the bodies' test), before the bare body would touch the wall.
    const bool passes = along >= reach ? side <= reach : along > 0.0f && side <= 0.25f * along;
    // (A slot read at the body's radius, bare, touches the wall at h itself.)
    const float touch = h[q] + (bare && bare[q] ? 0.0f : margin);
    if (passes && along <= touch) h[q] = std::numeric_limits<float>::infinity();
  }
}

/// Whether agent i is alone for CollisionDanger's lone-agent rules: no listed neighbour
/// some candidate could meet within the horizon (`threat`, from the fold), or none of
/// them in sight (threat_in_sight; asked only when needed: it casts rays).
struct Alone {
  bool threat = false;
  const World* world = nullptr;  // the walls, when near
  Vec2 x{};
  std::span<const Vec2> threats;  // as threat_in_sight reads them
  std::uint32_t layers = 0;
  bool operator()() const {
    return !threat || (world && !threat_in_sight(*world, x, threats, layers));
  }
};

/// Whether agent i may need unstick's lone-agent rule (see unstick_row), asked once before
/// the fold so that only such agents keep their threats for the sight test.
bool may_unstick_alone(const CollisionDanger& b, const AgentsView& a, std::size_t i, float step) {
  return b.unstick && !b.creep && b.walls && a.target &&
         length(load2(a.velocity, i)) <= 0.5f * step &&
         length(load2(a.target, i) - load2(a.position, i)) > a.radius[i];
}

/// CollisionDanger's unstick (see behaviours.hpp): when standing is safe (ttc[0..k), the
/// standing row, reaches the horizon) and no slot can move, creep's candidates from
/// standing (creep_from_standing). An agent alone (no neighbour in sight could meet it),
/// walls near, moving at most half the slowest level's speed and more than a radius
/// from its target takes them as well when no slot can move towards its way (within 90°
/// of it; the route's direction where in.ways gives one, else the straight line to the
/// target): the levels keep it a level's horizon from the wall ahead, and at a bend
/// or a door it barely fits the only courses left lead back; taking them, it paced for
/// good in front of a bend (docs/crowd.md, "Bends"). The slots that can move keep their
/// levels (capping them below the slowest level too turned one more bend of 216, but
/// held an agent crawling round a room at a quarter of its speed for seconds).
void unstick_row(const CollisionDanger& b, const BehaviourInputs& in, std::size_t i,
                 PairTest& pairs, const float* dx, const float* dy, std::size_t k, const float* ttc,
                 float step, const float* wall, float top, float* speed, float* danger,
                 bool lone_rule, const Alone& alone) {
  if (!b.unstick || b.creep || !(ttc[0] >= b.horizon)) return;
  if (can_move(speed, danger, k)) {
    // lone_rule: may_unstick_alone(b, a, i, step), asked before the fold.
    if (!wall || !lone_rule) return;
    const AgentsView& a = in.agents;
    Vec2 g = load2(a.target, i) - load2(a.position, i);
    // The route's way where the agent follows a field (BehaviourInputs::ways): round a
    // wall's end the straight line points back through the wall, where a course can move.
    const Vec2 u = route_way(in, i);
    if (u.x != 0.0f || u.y != 0.0f) g = u;
    for (std::size_t q = 0; q < k; ++q)
      if (speed[q] > 0.0f && danger[q] == 0.0f && dx[q] * g.x + dy[q] * g.y > 0.0f) return;
    if (!alone()) return;
  }
  creep_from_standing(b, pairs, dx, dy, k, step, wall, top, speed, danger);
}

/// CollisionDanger's squeeze (see behaviours.hpp): when standing is safe and, after creep
/// and unstick, no slot can move, creep's candidates from standing with the margin cut to
/// b.squeeze·b.margin, the walls read at that margin too (a second cast of the slot rays;
/// it runs only for such agents); when no slot gets one there either, the same at margin 0.
void squeeze_row(const CollisionDanger& b, const BehaviourInputs& in, std::size_t i,
                 const float* dx, const float* dy, std::size_t k, const float* ttc, float step,
                 float top, float* speed, float* danger) {
  if (!(b.squeeze < 1.0f) || !(b.margin > 0.0f) || !(ttc[0] >= b.horizon) ||
      can_move(speed, danger, k))
    return;
  struct SqueezeSite;
  WallScratch& walls = detail::thread_scratch<WallScratch, SqueezeSite>();
  PairList& store = detail::thread_scratch<PairList, SqueezeSite>();
  CollisionDanger cut = b;
  for (const float margin : {b.margin * b.squeeze, 0.0f}) {
    cut.margin = margin;
    const bool near =
        b.walls && slot_wall_distances(in, i, top * b.wall_horizon, in.agents.radius[i] + margin,
                                       b.layers, walls, in.agents.radius[i]);
    if (near && b.past_target)
      walls_past_target(in, i, dx, dy, k, margin, walls.distance.data(), walls.bare_slots());
    PairTest pairs(cut, in, i, store);
    if (creep_from_standing(cut, pairs, dx, dy, k, step, near ? walls.distance.data() : nullptr,
                            top, speed, danger) ||
        margin == 0.0f)
      return;
  }
}

/// collision_row with agent i's own horizon in b (with_horizon), b0 the behaviour itself.
void collision_row_at(const CollisionDanger& b, const CollisionDanger& b0,
                      const BehaviourInputs& in, std::size_t i, float* danger, float* speed) {
  const AgentsView& a = in.agents;
  // S: the moving levels, fine speeds included; level m is mult[m]·step fast.
  const std::size_t k = in.k, S = level_count(b);
  struct CollisionSite;
  CollisionScratch& sc = detail::thread_scratch<CollisionScratch, CollisionSite>();
  sc.reserve(k, S);
  const float* const mult = sc.mult_of(b);
  const float inf = std::numeric_limits<float>::infinity();
  // Raw pointers into the scratch, taken once: after every call out of this function the
  // compiler would otherwise reload the vectors' data pointers, once per neighbour and slot.
  float* const ttc = sc.ttc.data();
  std::fill(ttc, ttc + (S + 1) * k, inf);
  // Slot directions in the world frame (R(heading)·s_k when the slots turn).
  float c = 1.0f, sn = 0.0f;
  if (in.rotate_with_heading) {
    c = std::cos(a.heading[i]);
    sn = std::sin(a.heading[i]);
  }
  float* dx = sc.dx.data();
  float* dy = sc.dy.data();
  for (std::size_t j = 0; j < k; ++j) {
    dx[j] = c * in.slots[2 * j] - sn * in.slots[2 * j + 1];
    dy[j] = sn * in.slots[2 * j] + c * in.slots[2 * j + 1];
  }
  const Vec2 xi = load2(a.position, i), vi = load2(a.velocity, i);
  const float ri = a.radius[i], top = a.max_speed[i];
  const float kappa_all = 1.0f / (1.0f - b.reciprocity);
  const float step = top / static_cast<float>(b.speeds);
  // The slowest moving level's speed (step itself unless fine speeds split the only gap).
  const float slowest = step * mult[1];
  // w = κ·v − u with u = κ·α·v_i + v_j: the candidate enters linearly.
  //
  // Two savings that leave the outputs unchanged. (1) Speed 0 (m = 0) gives w = −u for
  // every slot (0·d_q − u: the same value, up to the sign of a zero, which neither the
  // sign tests nor the squares see), so its TTC is computed once per neighbour and
  // spread over the row at the end (a minimum, in any order). (2) The decision below
  // only asks whether a candidate's TTC reaches the horizon, and compares the ones that
  // do not; so a neighbour whose TTC exceeds the horizon for every slot at speed s_m
  // changes nothing there (the row's minimum either stays or both values reach the
  // horizon) and is skipped. |w| <= κ·s_m + |u| (|d_q| = 1), so TTC >= gap / |w| > horizon
  // when gap > (κ·s_m + |u|)·horizon; a 1% margin keeps the float TTC above the horizon
  // too. The speeds grow with m, so the pruned levels are m < m0. On crowd-track-10k,
  // velocity configuration (callgrind, one thread, 100 steps) the rows went from 7,388 to
  // 5,406 instructions an agent a step.
  float still = inf;    // TTC at speed 0, over all neighbours
  bool threat = false;  // a listed neighbour some candidate could meet within the horizon
  const bool lone_rule = may_unstick_alone(b, a, i, slowest);
  const bool keep_threats = (b.wall_speed_alone && !b.wall_speed) || lone_rule;
  sc.threats.clear();
  const bool avx2 = detail::use_avx2();
  const PastTarget pt = past_target_of(b, a, i);
  float* const one = sc.one.data();
  std::uint8_t* const past = sc.past.data();
  if (!in.neighbors.empty()) {
    const std::int32_t* nb = in.neighbors.indices + i * in.neighbors.max_neighbors;
    const std::int32_t count = in.neighbors.counts[i];
    const bool home = at_goal(b, a, i);
    // One disc of radius R at p moving at u (κ for the pair) folded into the table; `body`:
    // the neighbour itself, which past_target may leave out (false: where an arriving
    // neighbour stops, see arrivals). Inlined: compiled out of line, the loop over
    // neighbours took 4 % more instructions a step (callgrind, crowd-track-10k, velocity
    // configuration).
    const auto fold = [&](std::size_t j, Vec2 p, float R, Vec2 u, float kappa, bool body)
        __attribute__((always_inline)) {
      const float cc = dot(p, p) - R * R;
      std::size_t m0 = 0;
      if (cc > 0.0f) {
        // No candidate closes the gap |p| − R within the horizon at |w| <= κ·top + |u|.
        const float lu = length(u);
        const float reach = (kappa * top + lu) * b.horizon;
        const float gap = std::sqrt(dot(p, p)) - R;
        if (gap > reach) return;
        while (m0 <= S && gap > 1.01f * (kappa * step * mult[m0] + lu) * b.horizon) ++m0;
      }
      threat = true;  // not skipped above: some candidate may meet it within the horizon
      if (keep_threats) {
        sc.threats.push_back(p);
        sc.threats.push_back({R - ri - b.margin, 0.0f});
      }
      if (m0 == 0) {
        // Speed 0: w = −u for every slot.
        const float wx = 0.0f * dx[0] - u.x, wy = 0.0f * dy[0] - u.y;
        const float bb = p.x * wx + p.y * wy;
        if (cc <= 0.0f) {
          if (bb > 0.0f) still = 0.0f;
        } else {
          const float disc = bb * bb - (wx * wx + wy * wy) * cc;
          const float hit = cc / (bb + std::sqrt(std::max(disc, 0.0f)));
          const float tt = ((bb > 0.0f) & (disc > 0.0f)) ? hit : inf;
          still = std::min(still, tt);
        }
        m0 = 1;
      }
      // past_target: the slots whose course meets this body standing only past the
      // target leave it out (every moving level; standing, above, does not pass the target).
      bool left_out = false;
      if (body && pt.on && standing_past_target(pt, a, j, p, b.margin)) {
        for (std::size_t q = 0; q < k; ++q) {
          past[q] = body_past_target(pt, p, R, b.margin, Vec2{dx[q], dy[q]});
          left_out = left_out || past[q];
        }
      }
      if (cc > 0.0f) {
        // With slots left out, the neighbour's table is made alone and folded into the
        // others' (a minimum, so the kept slots are what the direct fold gives).
        float* const into = left_out ? one : ttc;
        if (left_out) std::fill(one + m0 * k, one + (S + 1) * k, inf);
        if (avx2) ttc_levels_avx2(dx, dy, k, kappa * step, mult, m0, S, p, u, cc, into);
        else ttc_levels_base(dx, dy, k, kappa * step, mult, m0, S, p, u, cc, into);
        if (left_out)
          for (std::size_t m = m0; m <= S; ++m)
            for (std::size_t q = 0; q < k; ++q)
              if (!past[q]) ttc[m * k + q] = std::min(ttc[m * k + q], one[m * k + q]);
        return;
      }
      for (std::size_t m = m0; m <= S; ++m) {
        const float sv = kappa * step * mult[m];
        float* t = ttc + m * k;
        // Touching: only candidates that deepen the overlap (p·w > 0) collide, now.
        for (std::size_t q = 0; q < k; ++q) {
          const float bb = p.x * (sv * dx[q] - u.x) + p.y * (sv * dy[q] - u.y);
          t[q] = bb > 0.0f && !(left_out && past[q]) ? 0.0f : t[q];
        }
      }
    };
    // Two loops, so that the one every agent away from its goal takes has no second disc
    // to test (with arrivals off, one loop took 1.5 % more instructions a step).
    // same_way_horizon scales a same-way pair's w = κ·s·d − u, that is κ and u alike (the
    // reach test above then prunes at the shorter horizon too).
    // (x · 1 is x in float, so a factor of 1 changes nothing; the loop every agent away
    // from its goal takes without the rule stays as it was.)
    const SameWay way(b, a, i);
    if (!home && way.scale == 1.0f) {
      for (std::int32_t n = 0; n < count; ++n) {
        const auto j = static_cast<std::size_t>(nb[n]);
        const float R = ri + a.radius[j] + b.margin;
        const PairSeen seen = pair_seen(b, a, i, j, vi, kappa_all, R, false);
        fold(j, load2(a.position, j) - xi, R, seen.u, seen.kappa, true);
      }
    } else {
      for (std::int32_t n = 0; n < count; ++n) {
        const auto j = static_cast<std::size_t>(nb[n]);
        const float R = ri + a.radius[j] + b.margin;
        const PairSeen seen = pair_seen(b, a, i, j, vi, kappa_all, R, home);
        const float f = seen.arrives ? 1.0f : way.of(a, j);
        fold(j, load2(a.position, j) - xi, R, seen.u * f, seen.kappa * f, true);
        if (seen.arrives) fold(j, seen.stop, R, seen.u, seen.kappa, false);
      }
    }
  }
  std::fill(ttc, ttc + k, still);
  const bool walls_near =
      b.walls && S > 0 &&
      slot_wall_distances(in, i, top * b.wall_horizon, ri + b.margin, b.layers, sc.walls, ri);
  // (The note is the behaviour's, b0; a shorter horizon only shortens the look-ahead, and
  // velocity_ttc's walls beyond it are at least that horizon away in time.)
  if (in.wall_clear && in.wall_clear_of == &b0) in.wall_clear[i] = b.walls && S > 0 && !walls_near;
  if (walls_near && b.past_target)
    walls_past_target(in, i, dx, dy, k, b.margin, sc.walls.distance.data(), sc.walls.bare_slots());
  if (walls_near) {
    const float* h = sc.walls.distance.data();
    const float scale = b.horizon / b.wall_horizon;  // wall TTC on the agents' scale
    for (std::size_t m = 1; m <= S; ++m) {
      const float sv = step * mult[m];
      float* t = ttc + m * k;
      for (std::size_t q = 0; q < k; ++q) t[q] = std::min(t[q], h[q] / sv * scale);
    }
  }
  const float scale = 1.0f / static_cast<float>(b.speeds);
  const float* wall = sc.walls.distance.data();  // (see ttc above)
  // wall_speed_alone: the wall-limited speed for an agent no listed neighbour can meet
  // within the horizon at any candidate (the list's own reach is shared with every
  // behaviour and the fastest agent: one fast agent anywhere took every agent's).
  // A threat every line of sight to which crosses a wall does not count (threat_in_sight).
  const Alone alone{threat, walls_near ? in.world : nullptr, xi, sc.threats, b.layers};
  const bool extras = b.creep || (b.wall_speed && walls_near);  // the opt-in candidates below
  // The candidates' tests against the neighbours (wall_speed, creep, unstick), set up on
  // the first one.
  PairTest pairs(b, in, i, detail::thread_scratch<PairList, CollisionSite>());
  // wall_speed_alone (without wall_speed): wall_speed's candidate below the slowest moving
  // level, for an agent alone, after the levels (and creep): taken where it is faster than
  // the slot's safe speed (0 where no speed is safe, danger > 0) and safe against every
  // neighbour, as the loop below takes wall_speed's. Whether the agent is alone (rays to
  // its threats) is asked only when a slot would take it.
  const auto wall_speed_alone = [&] {
    if (!b.wall_speed_alone || b.wall_speed || !walls_near) return;
    // A slot whose wall lies beyond this cannot give a speed below `slowest` (the bound
    // allows for the rounding of sw below): most slots are skipped on one compare.
    const float reach = slowest * b.wall_horizon * 1.00001f;
    int is_alone = -1;
    for (std::size_t q = 0; q < k; ++q) {
      if (!(wall[q] < reach)) continue;
      const float sw = wall[q] / b.wall_horizon * (1.0f - 0x1p-20f);
      if (!(sw < slowest)) continue;
      const float frac = sw / top;
      if (!(frac > (danger[q] == 0.0f ? speed[q] : 0.0f)) || !pairs.safe(Vec2{dx[q], dy[q]} * sw))
        continue;
      if (is_alone < 0) is_alone = alone() ? 1 : 0;
      if (is_alone == 0) return;
      speed[q] = frac;
      danger[q] = 0.0f;
    }
  };
  if (!extras && avx2 && levels_to_maps_avx2(ttc, k, mult, S, b.horizon, scale, speed, danger)) {
    wall_speed_alone();
    unstick_row(b, in, i, pairs, dx, dy, k, ttc, slowest, walls_near ? wall : nullptr, top, speed,
                danger, lone_rule, alone);
    squeeze_row(b, in, i, dx, dy, k, ttc, slowest, top, speed, danger);
    return;
  }
  for (std::size_t q = 0; q < k; ++q) {
    // Fastest safe candidate; else the one with the largest TTC (ties: the slowest).
    std::size_t best = 0;
    float best_t = -1.0f;
    bool safe = false;
    for (std::size_t m = S + 1; m-- > 0;) {
      const float tt = ttc[m * k + q];
      if (tt >= b.horizon) {
        best = m;
        safe = true;
        break;
      }
      if (tt >= best_t) {
        best_t = tt;
        best = m;
      }
    }
    speed[q] = mult[best] * scale;
    danger[q] = safe ? 0.0f : std::clamp(1.0f - best_t / b.horizon, 0.0f, 1.0f);
    if (!extras) continue;
    if (b.creep && ttc[q] >= b.horizon) {
      // Standing is safe: the fastest speed safe all the way from standing. Levels 0..mc
      // are safe, mc + 1 is not (mc = S: the whole ray is, nothing to add); the boundary
      // between them is found by bisection on the exact test (every neighbour's TTC and
      // the wall's, as in the table above), so the candidate is safe by construction.
      std::size_t mc = 0;
      while (mc < S && ttc[(mc + 1) * k + q] >= b.horizon) ++mc;
      if (mc < S) {
        const float s = creep_speed(b, pairs, Vec2{dx[q], dy[q]}, walls_near ? wall[q] : inf,
                                    step * mult[mc], step * mult[mc + 1]);
        if (s / top > (safe ? speed[q] : 0.0f)) {
          speed[q] = s / top;
          danger[q] = 0.0f;
          safe = true;
        }
      }
    }
    if (b.wall_speed && walls_near) {
      // The wall-limited speed h_q / wall_horizon (rounded down a hair, so that its wall
      // TTC is the horizon or more in float too): the fastest the slot may approach the
      // wall, between the levels. Taken when it is faster than the fastest safe level
      // and safe against every neighbour.
      const float sw = wall[q] / b.wall_horizon * (1.0f - 0x1p-20f);
      const float frac = sw / top;
      if (frac < 1.0f && frac > (safe ? speed[q] : 0.0f) && pairs.safe(Vec2{dx[q], dy[q]} * sw)) {
        speed[q] = frac;
        danger[q] = 0.0f;
      }
    }
  }
  wall_speed_alone();
  unstick_row(b, in, i, pairs, dx, dy, k, ttc, slowest, walls_near ? wall : nullptr, top, speed,
              danger, lone_rule, alone);
  squeeze_row(b, in, i, dx, dy, k, ttc, slowest, top, speed, danger);
}

/// b at horizon h, the walls' horizon and same_way_horizon scaled by the same factor
/// h / b.horizon (same_way_of keeps its ratio, up to a rounding).
CollisionDanger with_horizon(const CollisionDanger& b, float h) {
  CollisionDanger c = b;
  c.horizon = h;
  c.wall_horizon = b.wall_horizon * (h / b.horizon);
  c.same_way_horizon = h * (b.same_way_horizon / b.horizon);
  return c;
}

/// Whether agent i, whose rows under b are `danger` (unscaled) and `speed`, is jammed
/// facing oncomers: no slot offers a safe moving candidate (speed > 0 at danger 0) and
/// b.jam_oncomers listed neighbours j within b.jam_radius want to go the other way
/// through it (at most the list's length are seen): their
/// desired directions g = target − position more than 120° apart (g_i·g_j < −0.5 |g_i||g_j|),
/// j ahead of i (p·g_i > 0) and i ahead of j (p·g_j < 0), p = x_j − x_i. An agent on its
/// target has no desired direction and faces nobody. (Headings in place of the desired
/// directions also took the agents that had stepped aside in a one-way bottleneck, whose
/// headings point anywhere: docs/crowd.md.)
bool collision_jammed(const CollisionDanger& b, const BehaviourInputs& in, std::size_t i,
                      const float* danger, const float* speed) {
  if (can_move(speed, danger, in.k) || in.neighbors.empty()) return false;
  const AgentsView& a = in.agents;
  const Vec2 xi = load2(a.position, i);
  const Vec2 gi = load2(a.target, i) - xi;
  const float li = std::sqrt(dot(gi, gi));
  if (!(li > 0.0f)) return false;
  const float r2 = b.jam_radius * b.jam_radius;
  const std::int32_t* nb = in.neighbors.indices + i * in.neighbors.max_neighbors;
  std::uint32_t found = 0;
  for (std::int32_t n = 0; n < in.neighbors.counts[i]; ++n) {
    const auto j = static_cast<std::size_t>(nb[n]);
    const Vec2 xj = load2(a.position, j);
    const Vec2 p = xj - xi;
    if (!(dot(p, p) <= r2) || !(dot(p, gi) > 0.0f)) continue;
    const Vec2 gj = load2(a.target, j) - xj;
    const float lj = std::sqrt(dot(gj, gj));
    if (dot(p, gj) < 0.0f && dot(gi, gj) < -0.5f * li * lj && ++found >= b.jam_oncomers)
      return true;
  }
  return false;
}

/// CollisionDanger rows of agent i: danger (unscaled) and speed, see behaviours.hpp. With
/// dense_horizon, at the agent's own horizon (collision_horizon); with jam_horizon, again
/// at that horizon when the agent is jammed facing an oncomer.
void collision_row(const CollisionDanger& b, const BehaviourInputs& in, std::size_t i,
                   float* danger, float* speed) {
  float horizon = b.horizon;
  if (b.dense_horizon > 0.0f) {
    horizon = collision_horizon(b, in, i);
    collision_row_at(with_horizon(b, horizon), b, in, i, danger, speed);
  } else {
    collision_row_at(b, b, in, i, danger, speed);
  }
  if (b.jam_horizon > 0.0f && b.jam_horizon < horizon &&
      collision_jammed(b, in, i, danger, speed)) {
    // Only the candidates change: the simulation's refinements keep the agent's own
    // horizon, so a jammed agent keeps or blends towards an earlier course only when that
    // is safe for it, and otherwise follows the new decision (with them at the jam
    // horizon, fewer got through a counterflow, with contacts: docs/crowd.md).
    collision_row_at(with_horizon(b, b.jam_horizon), b, in, i, danger, speed);
  }
}

/// Pair TTC of CollisionDanger (see behaviours.hpp): p from i to j, R the summed radii,
/// w the effective relative velocity.
float pair_ttc(Vec2 p, float R, Vec2 w) {
  const float cc = dot(p, p) - R * R;
  const float bb = dot(p, w);
  if (cc <= 0.0f) return bb > 0.0f ? 0.0f : std::numeric_limits<float>::infinity();
  const float disc = bb * bb - dot(w, w) * cc;
  if (!(bb > 0.0f) || !(disc > 0.0f)) return std::numeric_limits<float>::infinity();
  return cc / (bb + std::sqrt(disc));
}

template <class B>
constexpr bool kWritesDanger = std::is_same_v<B, AgentDanger> || std::is_same_v<B, WallDanger> ||
                               std::is_same_v<B, CollisionDanger>;

}  // namespace

void accumulate_dot_row(float* row, const float* slots, std::size_t k, Vec2 u, float scale,
                        TargetCombine combine, DotShape shape) {
  if (shape != DotShape::kClampedCosine) {
    for (std::size_t j = 0; j < k; ++j) {
      const float sx = slots[2 * j], sy = slots[2 * j + 1];
      // The half cosine sums (1 + sx·ux) + sy·uy, in this order, as it always has.
      const float v = (shape == DotShape::kChord ? chord_value(sx, sy, u.x, u.y)
                                                 : 0.5f * (1.0f + sx * u.x + sy * u.y)) *
                      scale;
      row[j] = combine == TargetCombine::kMax ? std::max(row[j], v) : row[j] + v;
    }
    return;
  }
  if (combine == TargetCombine::kMax) {
    for (std::size_t j = 0; j < k; ++j) {
      const float v = std::max(0.0f, slots[2 * j] * u.x + slots[2 * j + 1] * u.y) * scale;
      row[j] = std::max(row[j], v);
    }
  } else if (combine == TargetCombine::kCenter) {  // raw cosines; clamped by the caller
    for (std::size_t j = 0; j < k; ++j)
      row[j] += (slots[2 * j] * u.x + slots[2 * j + 1] * u.y) * scale;
  } else {
    for (std::size_t j = 0; j < k; ++j)
      row[j] += std::max(0.0f, slots[2 * j] * u.x + slots[2 * j + 1] * u.y) * scale;
  }
}

bool writes_danger(const Behaviour& b) {
  return std::visit(
      [](const auto& x) {
        using B = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<B, Targets>) return x.output == MapKind::kDanger;
        else return kWritesDanger<B>;
      },
      b);
}

bool writes_interest(const Behaviour& b) { return !writes_danger(b); }

bool writes_speed(const Behaviour& b) { return std::holds_alternative<CollisionDanger>(b); }

bool needs_neighbors(const Behaviour& b) {
  if (const auto* w = std::get_if<WallDanger>(&b)) return w->agents;
  return std::holds_alternative<AgentDanger>(b) || std::holds_alternative<Flock>(b) ||
         std::holds_alternative<CollisionDanger>(b);
}

float neighbor_radius(const Behaviour& b, float max_agent_radius, float max_agent_speed,
                      float max_agent_top_speed) {
  if (const auto* d = std::get_if<CollisionDanger>(&b)) {
    // Farthest pair that can still meet within the horizon: |w| <= κ·top + κ·α·|v_i| + |v_j|.
    const float top = max_agent_top_speed >= 0.0f ? max_agent_top_speed : max_agent_speed;
    const float kappa = 1.0f / (1.0f - d->reciprocity);
    const float w = kappa * top + (kappa * d->reciprocity + 1.0f) * max_agent_speed;
    const float reach = w * d->horizon + 2.0f * max_agent_radius + d->margin;
    // The density disc (centre distances) is counted in the same lists.
    const float dense = d->dense_horizon > 0.0f ? std::max(reach, d->density_radius) : reach;
    return d->jam_horizon > 0.0f ? std::max(dense, d->jam_radius) : dense;
  }
  if (const auto* d = std::get_if<AgentDanger>(&b)) {
    float r = d->radius + 2.0f * max_agent_radius;
    if (d->predictive) r += 2.0f * max_agent_speed * d->horizon;
    return r;
  }
  if (const auto* f = std::get_if<Flock>(&b)) return f->radius;
  if (const auto* w = std::get_if<WallDanger>(&b)) {
    if (!w->agents) return 0.0f;
    const float pad = w->ray_radius >= 0.0f ? w->ray_radius : max_agent_radius + w->padding;
    return w->look_ahead + pad + max_agent_radius;
  }
  return 0.0f;
}

float shared_neighbor_radius(std::span<const Behaviour> behaviours, const AgentsView& agents,
                             bool commands) {
  bool any = false;
  for (const Behaviour& b : behaviours) any |= needs_neighbors(b);
  if (!any) return 0.0f;
  float rmax = 0.0f, vmax = 0.0f, top = 0.0f;
  for (std::size_t i = 0; i < agents.size; ++i) {
    if (!agents.alive[i]) continue;
    rmax = std::max(rmax, agents.radius[i]);
    vmax = std::max(vmax, length(load2(agents.velocity, i)));
    top = std::max(top, agents.max_speed[i]);
  }
  if (commands) vmax = std::max(vmax, top * 1.00001f);
  float r = 0.0f;
  for (const Behaviour& b : behaviours) r = std::max(r, neighbor_radius(b, rmax, vmax, top));
  return r;
}

void evaluate_rows(const Behaviour& b, const BehaviourInputs& in, MapOut interest, MapOut danger,
                   std::size_t begin, std::size_t end, MapOut speed, std::size_t step) {
  std::visit(
      [&](const auto& x) {
        using B = std::decay_t<decltype(x)>;
        const MapOut out = writes_danger(b) ? danger : interest;
        if (!out.data) return;
        for (std::size_t i = begin; i < end; i += step) {
          float* row = out.row(i, in.k);
          zero_row(row, in.k);
          if constexpr (std::is_same_v<B, CollisionDanger>) {
            if (in.wall_clear && in.wall_clear_of == &x) in.wall_clear[i] = 0;
            // The speed map is not weighted: it says how fast, not how much to care.
            float* srow = speed.data ? speed.row(i, in.k) : nullptr;
            if (srow) zero_row(srow, in.k);
            if (!in.agents.alive[i]) continue;
            struct SpareSpeedSite;
            std::vector<float>& spare =
                detail::thread_scratch<std::vector<float>, SpareSpeedSite>();
            if (!srow) {
              if (spare.size() < in.k) spare.resize(in.k);
              srow = spare.data();
            }
            collision_row(x, in, i, row, srow);
          } else {
            if (!in.agents.alive[i]) {
              if constexpr (std::is_same_v<B, WallDanger>) {
                if (in.sensed && in.sensed_of == &x)  // a dead agent casts no rays
                  std::fill_n(in.sensed + i * in.k, in.k, std::numeric_limits<float>::quiet_NaN());
              }
              continue;
            }
            row_of(x, in, i, frame_of(in, i), row);
          }
          scale_row(row, in.k, x.agent_weights ? double{x.weight} * x.agent_weights[i] : x.weight);
        }
      },
      b);
}

float collision_horizon(const CollisionDanger& b, const BehaviourInputs& in, std::size_t i) {
  if (!(b.dense_horizon > 0.0f) || in.neighbors.empty()) return b.horizon;
  const AgentsView& a = in.agents;
  const Vec2 xi = load2(a.position, i);
  const float r2 = b.density_radius * b.density_radius;
  const std::int32_t* nb = in.neighbors.indices + i * in.neighbors.max_neighbors;
  std::int32_t n = 0;
  for (std::int32_t q = 0; q < in.neighbors.counts[i]; ++q) {
    const Vec2 p = load2(a.position, static_cast<std::size_t>(nb[q])) - xi;
    n += dot(p, p) <= r2 ? 1 : 0;
  }
  const float area = 3.14159265f * b.density_radius * b.density_radius;
  // A radius whose disc's area underflows float32 (below about 1e-23 m) holds only
  // coincident neighbours, at an unbounded density (n/0 would be NaN for n = 0).
  const float rho = area > 0.0f ? static_cast<float>(n) / area
                    : n > 0     ? std::numeric_limits<float>::infinity()
                                : 0.0f;
  const float f = std::clamp((rho - b.density_low) / (b.density_high - b.density_low), 0.0f, 1.0f);
  return b.horizon + f * (b.dense_horizon - b.horizon);
}

float velocity_agents_ttc(const CollisionDanger& b, const BehaviourInputs& in, std::size_t i,
                          Vec2 v) {
  return velocity_pair_ttc(b, in, i, v);
}

float velocity_ttc_ahead(const CollisionDanger& b, const BehaviourInputs& in, std::size_t i, Vec2 v,
                         Vec2 course) {
  // Behind (against the course): a follower's to avoid.
  return scalar_pair_ttc(b, in, i, v,
                         [course](std::size_t, Vec2 rel) { return dot(rel, course) >= 0.0f; });
}

WallAlong wall_along(const CollisionDanger& b, const BehaviourInputs& in, std::size_t i, Vec2 d) {
  const AgentsView& a = in.agents;
  WallAlong w;
  // The rows of this behaviour found no wall within the same reach of agent i this step:
  // slot_wall_distances below would return false.
  const bool clear = in.wall_clear && in.wall_clear_of == &b && in.wall_clear[i];
  if (!b.walls || clear) return w;
  // One "slot" along d in the world frame.
  const float dd[2] = {d.x, d.y};
  BehaviourInputs one = in;
  one.slots = dd;
  one.k = 1;
  one.rotate_with_heading = false;
  struct WallAlongSite;
  WallScratch& scratch = detail::thread_scratch<WallScratch, WallAlongSite>();
  if (slot_wall_distances(one, i, a.max_speed[i] * b.wall_horizon, a.radius[i] + b.margin, b.layers,
                          scratch, a.radius[i])) {
    w.hit = scratch.distance[0];
    w.bare = scratch.bare_slots() != nullptr && scratch.bare[0] != 0;
    if (b.past_target) {
      walls_past_target(one, i, dd, dd + 1, 1, b.margin, scratch.distance.data(),
                        scratch.bare_slots());
      w.past = scratch.distance[0] != w.hit;
    }
  }
  return w;
}

float velocity_ttc(const CollisionDanger& b, const BehaviourInputs& in, std::size_t i, Vec2 v) {
  float t = velocity_pair_ttc(b, in, i, v);
  const float speed = length(v);
  if (b.walls && speed > 0.0f) {
    const WallAlong w = wall_along(b, in, i, Vec2{v.x / speed, v.y / speed});
    if (!w.past) t = std::min(t, w.hit / speed * (b.horizon / b.wall_horizon));
  }
  return t;
}

float past_target_hit(const CollisionDanger& b, const BehaviourInputs& in, std::size_t i, Vec2 d) {
  const AgentsView& a = in.agents;
  constexpr float inf = std::numeric_limits<float>::infinity();
  float room = inf;
  const PastTarget pt = past_target_of(b, a, i);
  if (!pt.on) return room;
  // How far along d the course passes the target: a target beyond the padded contact (in
  // the margin band) may be walked to, and no further than the bare contact.
  const float along = pt.g.x * d.x + pt.g.y * d.y;
  const WallAlong w = wall_along(b, in, i, d);
  if (w.past) room = along > w.hit && !w.bare ? std::min(along, w.hit + b.margin) : w.hit;
  if (in.neighbors.empty()) return room;
  const Vec2 xi = load2(a.position, i);
  const std::int32_t* nb = in.neighbors.indices + i * in.neighbors.max_neighbors;
  for (std::int32_t n = 0; n < in.neighbors.counts[i]; ++n) {
    const auto j = static_cast<std::size_t>(nb[n]);
    const Vec2 p = load2(a.position, j) - xi;
    const float R = pt.ri + a.radius[j] + b.margin;
    if (!standing_past_target(pt, a, j, p, b.margin) || !body_past_target(pt, p, R, b.margin, d))
      continue;
    const float h = course_meets_disc(p, R, d);
    room = std::min(room, along > h ? std::min(along, course_meets_disc(p, R - b.margin, d)) : h);
  }
  return room;
}

void evaluate(const Behaviour& b, const BehaviourInputs& in, float* interest, float* danger,
              float* speed) {
  parallel_for(in.agents.size, 128, [&](std::size_t s, std::size_t e) {
    evaluate_rows(b, in, interest, danger, s, e, speed);
  });
}

}  // namespace contextsteer
