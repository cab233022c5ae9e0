// SPDX-License-Identifier: MIT
#include "contextsteer/classic.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "random.hpp"
#include "contextsteer/raycast.hpp"

namespace contextsteer::classic {

namespace {

constexpr float kPi = 3.14159265358979323846f;

Vec2 limit(Vec2 x, float m) {
  const float n = length(x);
  if (!std::isfinite(n) && std::isfinite(x.x) && std::isfinite(x.y)) {
    // x² + y² overflowed float32 (beyond 1.8e19, where a blend of large weights and
    // accelerations, each below 2^60, can reach): the same scaling in double, not zero.
    const double s = m / std::sqrt(double(x.x) * x.x + double(x.y) * x.y);
    return {static_cast<float>(x.x * s), static_cast<float>(x.y * s)};
  }
  return n > m && n > 0.0f ? x * (m / n) : x;
}

Vec2 seek(const Inputs& in, std::size_t i, Vec2 q) {
  return unit_of(q - load2(in.agents.position, i)) * in.agents.max_accel[i];
}

// Arrive at q (see classic::Arrive).
Vec2 arrive(const Inputs& in, std::size_t i, Vec2 q, float tolerance, float slowing,
            float time_to_target) {
  const AgentsView& a = in.agents;
  const Vec2 d = q - load2(a.position, i);
  const float dist = length(d);
  if (dist <= tolerance || dist == 0.0f) return {};
  float speed = a.max_speed[i];
  if (dist <= slowing) speed *= dist / slowing;
  const Vec2 want = d * (speed / dist);
  return limit((want - load2(a.velocity, i)) * (1.0f / time_to_target), a.max_accel[i]);
}

struct Found {
  bool ok = false;
  Vec2 position{}, velocity{};
};

// The target of agent i (see classic::Target).
Found find(const Target& t, const Inputs& in, std::size_t i) {
  const AgentsView& a = in.agents;
  switch (t.source) {
    case Source::kOwnTarget:
      return {true, load2(a.target, i), {}};
    case Source::kPoint:
      return {true, t.point, {}};
    case Source::kAgents: {
      const Vec2 p = load2(a.position, i);
      Found best;
      float bd = 0.0f;
      for (std::int32_t j : t.ids) {
        const auto u = static_cast<std::size_t>(j);
        if (u == i || u >= a.size || !a.alive[u]) continue;
        const Vec2 q = load2(a.position, u);
        const float d = dot(q - p, q - p);
        if (!best.ok || d < bd) {  // nearest; the first listed on ties
          best = {true, q, load2(a.velocity, u)};
          bd = d;
        }
      }
      return best;
    }
  }
  return {};
}

Vec2 eval(const Seek& b, const Inputs& in, std::size_t i) {
  const Found f = find(b.target, in, i);
  if (!f.ok) return {};
  const Vec2 s = seek(in, i, f.position);
  return b.away ? s * -1.0f : s;
}

Vec2 eval(const Arrive& b, const Inputs& in, std::size_t i) {
  const Found f = find(b.target, in, i);
  if (!f.ok) return {};
  return arrive(in, i, f.position, b.tolerance, b.slowing_radius, b.time_to_target);
}

Vec2 eval(const Pursue& b, const Inputs& in, std::size_t i) {
  const Found f = find(b.target, in, i);
  if (!f.ok) return {};
  const Vec2 p = load2(in.agents.position, i), v = load2(in.agents.velocity, i);
  const Vec2 d = f.position - p;
  const float dist2 = dot(d, d), speed2 = dot(v, v);
  float t = b.max_prediction;
  if (speed2 > 0.0f && dist2 < t * t * speed2) t = std::sqrt(dist2 / speed2);
  const Vec2 s = seek(in, i, f.position + f.velocity * t);
  return b.away ? s * -1.0f : s;
}

Vec2 eval(const MatchVelocity& b, const Inputs& in, std::size_t i) {
  const Found f = find(b.target, in, i);
  if (!f.ok) return {};
  // kAgents: the target agent's velocity; kPoint / kOwnTarget: the point read as a velocity.
  const Vec2 want = b.target.source == Source::kAgents ? f.velocity : f.position;
  return limit((want - load2(in.agents.velocity, i)) * (1.0f / b.time_to_target),
               in.agents.max_accel[i]);
}

Vec2 eval(const Wander& b, const Inputs& in, std::size_t i) {
  const AgentsView& a = in.agents;
  const float h = a.heading[i];
  const std::uint64_t key = a.rng[i] ^ splitmix64(b.seed);
  float theta = 0.0f;
  if (b.walk == nullptr) {
    theta = kPi * value_noise(key, in.time * static_cast<double>(b.rate));
  } else {
    // gdx-ai: if (lastTime > 0) wanderOrientation += randomTriangular(wanderRate·Δt);
    // lastTime = now. The two uniforms are hashed from the agent, the seed and the time.
    auto orientation = static_cast<float>(b.walk[2 * i]);
    double& last = b.walk[2 * i + 1];
    if (last > 0.0) {
      std::uint64_t bits = 0;
      std::memcpy(&bits, &in.time, sizeof bits);
      const std::uint64_t r1 = splitmix64(key ^ splitmix64(bits));
      const std::uint64_t r2 = splitmix64(r1);
      const float u1 = static_cast<float>(r1 >> 40) * 0x1.0p-24f;  // [0, 1)
      const float u2 = static_cast<float>(r2 >> 40) * 0x1.0p-24f;
      orientation += (u1 - u2) * (b.rate * static_cast<float>(in.time - last));
      b.walk[2 * i] = orientation;
    }
    last = in.time;
    theta = orientation;
  }
  const Vec2 fwd{std::cos(h), std::sin(h)};
  const Vec2 rim{std::cos(h + theta), std::sin(h + theta)};
  return seek(in, i, load2(a.position, i) + fwd * b.offset + rim * b.radius);
}

// Calls fn(j, d) for the neighbours of i in the neighbourhood (centre distance d), see
// classic::Proximity.
template <class Fn>
void each_neighbor(const Inputs& in, std::size_t i, const Neighbourhood& nb, Fn&& fn) {
  const AgentsView& a = in.agents;
  const Vec2 p = load2(a.position, i);
  if (nb.kind == Proximity::kInfinite) {
    for (std::size_t j = 0; j < a.size; ++j)
      if (j != i && a.alive[j]) fn(j, length(load2(a.position, j) - p));
    return;
  }
  if (in.neighbors.empty()) return;
  const std::size_t m = in.neighbors.max_neighbors;
  const auto count = static_cast<std::size_t>(in.neighbors.counts[i]);
  const Vec2 f{std::cos(a.heading[i]), std::sin(a.heading[i])};
  for (std::size_t q = 0; q < count; ++q) {
    const auto j = static_cast<std::size_t>(in.neighbors.indices[i * m + q]);
    const Vec2 r = load2(a.position, j) - p;
    const float d2 = dot(r, r);
    const float d = std::sqrt(d2);
    if (nb.kind == Proximity::kCenter) {
      if (d <= nb.radius) fn(j, d);
      continue;
    }
    const float range = nb.radius + a.radius[j];
    if (!(d2 < range * range)) continue;
    if (nb.kind == Proximity::kFieldOfView && !(dot(f, r) > nb.cos_half_angle)) continue;
    if (nb.kind == Proximity::kCone && !(d > 0.0f && dot(f, r) > nb.cos_half_angle * d)) continue;
    fn(j, d);
  }
}

Vec2 eval(const Group& b, const Inputs& in, std::size_t i) {
  const AgentsView& a = in.agents;
  const Vec2 p = load2(a.position, i);
  const float amax = a.max_accel[i];
  Vec2 sum{};
  int n = 0;
  each_neighbor(in, i, b.near, [&](std::size_t j, float d) {
    const Vec2 pj = load2(a.position, j);
    switch (b.rule) {
      case GroupRule::kSeparation:
        if (d > 0.0f) sum = sum + (p - pj) * (std::min(amax, b.decay / (d * d)) / d);
        break;
      case GroupRule::kAlignment:
        sum = sum + load2(a.velocity, j);
        break;
      case GroupRule::kCohesion:
        sum = sum + pj;
        break;
    }
    ++n;
  });
  if (n == 0) return {};
  switch (b.rule) {
    case GroupRule::kSeparation:
      return sum;
    case GroupRule::kAlignment:
      return limit(sum * (1.0f / n) - load2(a.velocity, i), amax);
    case GroupRule::kCohesion:
      return seek(in, i, sum * (1.0f / n));
  }
  return {};
}

Vec2 eval(const CollisionAvoidance& b, const Inputs& in, std::size_t i) {
  const AgentsView& a = in.agents;
  const Vec2 p = load2(a.position, i), v = load2(a.velocity, i);
  float first_t = std::numeric_limits<float>::infinity();
  Vec2 first_rel{}, first_vel{};
  float first_sep = 0.0f, first_dist = 0.0f, first_sum = 0.0f;
  std::size_t first_j = 0;
  bool found = false;
  each_neighbor(in, i, b.near, [&](std::size_t j, float d) {
    const Vec2 rel = load2(a.position, j) - p;
    const Vec2 rv = load2(a.velocity, j) - v;
    const float sum_r = a.radius[i] + a.radius[j];
    const float speed2 = dot(rv, rv);
    float t = 0.0f;
    float sep = d;
    if (b.push_overlapping && d < sum_r) {
      // Not gdx-ai: an overlapping neighbour counts now (t = 0), approaching or not.
    } else {
      // gdx-ai: the same velocity (0/0) or moving apart (t <= 0): no collision ahead.
      if (speed2 == 0.0f) return;
      t = -dot(rel, rv) / speed2;
      if (t <= 0.0f) return;
      sep = d - std::sqrt(speed2) * t;  // gdx-ai's estimate of the closest distance
      if (sep > sum_r) return;
    }
    // The first approach; ties: the lowest index (gdx-ai's first reported neighbour in
    // agent order); with push_overlapping, ties at t = 0: the nearest, then the lowest index.
    bool better = !found || t < first_t;
    if (found && t == first_t)
      better = b.push_overlapping && t == 0.0f
                   ? (d < first_dist || (d == first_dist && j < first_j))
                   : j < first_j;
    if (better) {
      first_j = j;
      first_t = t;
      first_rel = rel;
      first_vel = rv;
      first_sep = sep;
      first_dist = d;
      first_sum = sum_r;
      found = true;
    }
  });
  if (!found) return {};
  // Overlapping now (or meeting head-on): away from where it is; else from where it will be.
  const Vec2 r =
      first_sep <= 0.0f || first_dist < first_sum ? first_rel : first_rel + first_vel * first_t;
  return unit_of(r) * (-a.max_accel[i]);
}

Vec2 eval(const RaycastAvoidance& b, const Inputs& in, std::size_t i) {
  if (in.world == nullptr) return {};
  const AgentsView& a = in.agents;
  const Vec2 p = load2(a.position, i);
  const Vec2 f = unit_of(load2(a.velocity, i));
  if (f.x == 0.0f && f.y == 0.0f) return {};
  // Up to three rays: origins, directions, lengths.
  float org[6], dir[6], len[3];
  std::size_t n = 0;
  auto add = [&](Vec2 o, Vec2 d, float l) {
    org[2 * n] = o.x;
    org[2 * n + 1] = o.y;
    dir[2 * n] = d.x;
    dir[2 * n + 1] = d.y;
    len[n] = l;
    ++n;
  };
  const Vec2 side{-f.y, f.x};
  switch (b.config) {
    case RayConfig::kSingle:
      add(p, f, b.length);
      break;
    case RayConfig::kParallel:  // gdx-ai's order: the clockwise side first
      add(p - side * b.side_offset, f, b.length);
      add(p + side * b.side_offset, f, b.length);
      break;
    case RayConfig::kWhiskers: {  // central, clockwise whisker, counter-clockwise whisker
      add(p, f, b.length);
      const float c = std::cos(b.whisker_angle), s = std::sin(b.whisker_angle);
      add(p, {c * f.x + s * f.y, -s * f.x + c * f.y}, b.whisker_length);
      add(p, {c * f.x - s * f.y, s * f.x + c * f.y}, b.whisker_length);
      break;
    }
  }
  float dist[3], normal[6];
  bool hit[3];
  std::int32_t obstacle[3];
  raycast_rows(*in.world, {org, 2 * n}, {dir, 2 * n}, {len, n}, 0.0f, b.layers,
               RayHitsOut{dist, hit, normal, obstacle}, 0, n);
  // gdx-ai: the hit point closest to the agent's position (not along its ray: the
  // parallel rays start to the side), the first ray on ties.
  std::size_t best = n;
  float best_d2 = std::numeric_limits<float>::infinity();
  Vec2 q{};
  for (std::size_t r = 0; r < n; ++r) {
    if (!hit[r]) continue;
    const Vec2 h = load2(org, r) + load2(dir, r) * dist[r];
    const float d2 = dot(h - p, h - p);
    if (d2 < best_d2) {
      best_d2 = d2;
      best = r;
      q = h;
    }
  }
  if (best == n) return {};
  const float away = (b.include_radius ? a.radius[i] : 0.0f) + b.distance_from_boundary;
  return seek(in, i, q + load2(normal, best) * away);
}

Vec2 eval(const FollowPath& b, const Inputs& in, std::size_t i) {
  if (b.path == nullptr) return {};
  const AgentsView& a = in.agents;
  const Vec2 future = load2(a.position, i) + load2(a.velocity, i) * b.prediction;
  const double s = b.path->closest_offset(future) + static_cast<double>(b.path_offset);
  const Vec2 q = b.path->point_at(s);
  if (!b.path->closed()) {
    const double len = b.path->length(), slow = b.slowing_radius;
    bool near_end = false;
    switch (b.arrive) {
      case PathArrive::kNearEnd:  // gdx-ai: towards the end, or the start for a negative offset
        near_end = b.path_offset >= 0.0f ? s > len - slow : s < slow;
        break;
      case PathArrive::kEnd:
        near_end = s >= len;
        break;
      case PathArrive::kOff:
        break;
    }
    if (near_end) return arrive(in, i, q, b.tolerance, b.slowing_radius, b.time_to_target);
  }
  return seek(in, i, q);
}

Vec2 eval(const Interpose& b, const Inputs& in, std::size_t i) {
  const AgentsView& a = in.agents;
  const auto ia = static_cast<std::size_t>(b.a), ib = static_cast<std::size_t>(b.b);
  if (ia >= a.size || ib >= a.size || !a.alive[ia] || !a.alive[ib]) return {};
  const Vec2 pa = load2(a.position, ia), pb = load2(a.position, ib);
  const Vec2 mid = pa + (pb - pa) * b.ratio;
  const float speed = a.max_speed[i];
  const float t = speed > 0.0f ? length(mid - load2(a.position, i)) / speed : 0.0f;
  const Vec2 fa = pa + load2(a.velocity, ia) * t, fb = pb + load2(a.velocity, ib) * t;
  Vec2 q = fa + (fb - fa) * b.ratio;
  const Vec2 p = load2(a.position, i);
  if (!(std::fabs(q.x - p.x) <= 1e9f && std::fabs(q.y - p.y) <= 1e9f)) {
    // A point far beyond the coordinates (a large ratio, a slow agent, distant targets)
    // overflowed float32 on the way (0 · inf, or the arrive's squared distance) and gave
    // NaN for every agent of the call. Recomputed in double, and past 1e9 m (or four
    // slowing radii) drawn in along its direction: beyond the slowing radius the arrive
    // depends on the direction alone.
    const double r = b.ratio, px = p.x, py = p.y;
    const double mx = pa.x + (double(pb.x) - pa.x) * r, my = pa.y + (double(pb.y) - pa.y) * r;
    const double tt = speed > 0.0f ? std::hypot(mx - px, my - py) / speed : 0.0;
    const double fax = pa.x + double(a.velocity[2 * ia]) * tt;
    const double fay = pa.y + double(a.velocity[2 * ia + 1]) * tt;
    const double fbx = pb.x + double(a.velocity[2 * ib]) * tt;
    const double fby = pb.y + double(a.velocity[2 * ib + 1]) * tt;
    const double dx = fax + (fbx - fax) * r - px, dy = fay + (fby - fay) * r - py;
    const double d = std::hypot(dx, dy);
    const double reach = std::max(1e9, 4.0 * double(b.slowing_radius));
    const double k = d > reach ? reach / d : 1.0;
    q = {static_cast<float>(px + dx * k), static_cast<float>(py + dy * k)};
  }
  return arrive(in, i, q, b.tolerance, b.slowing_radius, b.time_to_target);
}

Vec2 eval(const Hide& b, const Inputs& in, std::size_t i) {
  if (in.world == nullptr) return {};
  const Found f = find(b.target, in, i);
  if (!f.ok) return {};
  const Vec2 p = load2(in.agents.position, i);
  const auto centers = in.world->circle_centers();
  const auto radii = in.world->circle_radii();
  float best_d = std::numeric_limits<float>::infinity();
  Vec2 spot{};
  for (std::size_t c = 0; c < radii.size(); ++c) {
    const Vec2 cc{centers[2 * c], centers[2 * c + 1]};
    if (length(cc - p) > b.max_distance) continue;
    const Vec2 s = cc + unit_of(cc - f.position) * (radii[c] + b.distance_from_boundary);
    const float d = dot(s - p, s - p);
    if (d < best_d) {
      best_d = d;
      spot = s;
    }
  }
  if (!std::isfinite(best_d)) return {};
  return arrive(in, i, spot, b.tolerance, b.slowing_radius, b.time_to_target);
}

Vec2 eval(const FlowField& b, const Inputs& in, std::size_t i) {
  const AgentsView& a = in.agents;
  const Vec2 v = load2(a.velocity, i);
  const Vec2 q = load2(a.position, i) + v * b.prediction;
  // Grid coordinates, clamped to the nodes' extent.
  // (A NaN coordinate, which checked parameters cannot give, reads node 0, not memory
  // outside the field.)
  float gx = std::clamp((q.x - b.origin.x) / b.cell, 0.0f, static_cast<float>(b.cols - 1));
  float gy = std::clamp((q.y - b.origin.y) / b.cell, 0.0f, static_cast<float>(b.rows - 1));
  if (std::isnan(gx)) gx = 0.0f;
  if (std::isnan(gy)) gy = 0.0f;
  const int c0 = std::min(static_cast<int>(gx), std::max(b.cols - 2, 0));
  const int r0 = std::min(static_cast<int>(gy), std::max(b.rows - 2, 0));
  const int c1 = std::min(c0 + 1, b.cols - 1), r1 = std::min(r0 + 1, b.rows - 1);
  const float tx = gx - static_cast<float>(c0), ty = gy - static_cast<float>(r0);
  auto node = [&](int r, int c) {
    return load2(b.vectors, static_cast<std::size_t>(r) * b.cols + c);
  };
  const Vec2 f = (node(r0, c0) * (1.0f - tx) + node(r0, c1) * tx) * (1.0f - ty) +
                 (node(r1, c0) * (1.0f - tx) + node(r1, c1) * tx) * ty;
  // gdx-ai steers only where the flow is non-zero (a goal or blocked cell asks nothing).
  if (f.x == 0.0f && f.y == 0.0f) return {};
  return limit(f * a.max_speed[i] - v, a.max_accel[i]);
}

float reach(const Neighbourhood& nb, float max_agent_radius) {
  switch (nb.kind) {
    case Proximity::kInfinite:
      return 0.0f;  // scans all agents, no lists
    case Proximity::kCenter:
      return nb.radius;
    default:
      return nb.radius + max_agent_radius;
  }
}

float radius_of(const Behaviour& b, float max_agent_radius) {
  if (const auto* g = std::get_if<Group>(&b)) return reach(g->near, max_agent_radius);
  if (const auto* c = std::get_if<CollisionAvoidance>(&b)) return reach(c->near, max_agent_radius);
  return 0.0f;
}

}  // namespace

Vec2 evaluate(const Behaviour& b, const Inputs& in, std::size_t i) {
  return std::visit([&](const auto& x) { return eval(x, in, i); }, b);
}

float neighbor_radius(const Steering& s, float max_agent_radius) {
  float r = 0.0f;
  for (const Blended& g : s.groups)
    for (const Behaviour& b : g.behaviours) r = std::max(r, radius_of(b, max_agent_radius));
  return r;
}

void accelerate_rows(const Steering& s, const Inputs& in, float* out, std::size_t begin,
                     std::size_t end) {
  const AgentsView& a = in.agents;
  for (std::size_t i = begin; i < end; ++i) {
    Vec2 acc{};
    if (a.alive[i]) {
      const float amax = a.max_accel[i];
      for (const Blended& g : s.groups) {
        Vec2 sum{};
        for (std::size_t m = 0; m < g.behaviours.size(); ++m)
          sum = sum + evaluate(g.behaviours[m], in, i) * g.weights[m];
        acc = g.truncate ? limit(sum, amax) : sum;
        if (length(acc) > s.epsilon) break;  // Priority: the first group that asks for something
      }
    }
    store2(out, i, acc);
  }
}

}  // namespace contextsteer::classic
