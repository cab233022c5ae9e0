// SPDX-License-Identifier: MIT
// Classic (Reynolds / gdx-ai) steering behaviours: each returns a linear acceleration per
// agent; Blended and Priority combine them. The baseline context steering is compared with.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <variant>
#include <vector>

#include "contextsteer/agents.hpp"
#include "contextsteer/neighbours.hpp"
#include "contextsteer/path.hpp"
#include "contextsteer/world.hpp"

namespace contextsteer::classic {

// Notation (agent i): p, v its position and velocity, a_max = max_accel_i, s_max =
// max_speed_i; unit(x) = x/|x| (0 for x = 0). Every behaviour returns a linear
// acceleration; "seek q" means unit(q − p)·a_max.

/// Where Seek, Flee, Arrive, Pursue, Evade, Hide and MatchVelocity find their target:
/// kOwnTarget — the agent's own `target`; kPoint — `point`, shared; kAgents — the nearest
/// alive agent of `ids` other than itself (its position, velocity); none alive: zero.
enum class Source : std::uint8_t { kOwnTarget, kPoint, kAgents };
struct Target {
  Source source = Source::kOwnTarget;
  Vec2 point{};
  std::span<const std::int32_t> ids;
};

/// Seek: unit(q − p)·a_max. Flee (away): unit(p − q)·a_max.
struct Seek {
  Target target;
  bool away = false;
};

/// Arrive: d = q − p; zero within `tolerance`; target speed s_max, scaled by
/// |d|/slowing_radius inside slowing_radius; a = (unit(d)·speed − v)/time_to_target,
/// |a| <= a_max.
struct Arrive {
  Target target;
  float tolerance = 0.0f;
  float slowing_radius = 1.0f;  ///< > 0
  float time_to_target = 0.1f;  ///< > 0
};

/// Pursue: seek the target's predicted position q + v_q·T, T = |q − p|/|v| capped at
/// max_prediction (max_prediction when the pursuer is still). Evade (away): flee it.
struct Pursue {
  Target target;
  float max_prediction = 1.0f;  ///< seconds, >= 0
  bool away = false;
};

/// MatchVelocity: a = (v_q − v)/time_to_target, |a| <= a_max (v_q: the target agent's
/// velocity, or `point` read as a velocity for kPoint, or the agent's target for kOwnTarget).
struct MatchVelocity {
  Target target;
  float time_to_target = 0.1f;  ///< > 0
};

/// Wander: seek a point on a circle of `radius` centred `offset` ahead along the heading,
/// at angle θ_i from the heading. Smooth (walk == nullptr): θ = π·noise(key_i, time·rate),
/// the coherent noise of the context Wander, stateless, seeded by the agent's rng and
/// `seed`. Random walk (gdx-ai): θ_i is the agent's wander orientation `walk[2i]`, which
/// each evaluation advances by (u1 − u2)·rate·(time − walk[2i+1]) when walk[2i+1] > 0 (u1,
/// u2 uniform in [0, 1), hashed from the agent's rng, `seed` and the time: gdx-ai's
/// randomTriangular(wanderRate·Δt)), then sets walk[2i+1] = time. `walk` is (N,2)
/// borrowed state, row i written only by agent i's evaluation: the orientation (a float32
/// value) and the time in double, so that Δt stays exact to the step after days of
/// simulated time (gdx-ai's float clock loses the step within a day at 60 Hz).
struct Wander {
  float offset = 1.0f;
  float radius = 0.5f;
  float rate = 1.0f;
  std::uint64_t seed = 0;
  double* walk = nullptr;
};

/// Which agents a group behaviour (and CollisionAvoidance) counts as neighbours of agent
/// i, j != i alive, d = |p_j − p_i| (gdx-ai's Proximity implementations):
/// kRadius — d < radius + r_j (gdx-ai RadiusProximity: the neighbour's bounding radius
/// widens the range); kFieldOfView — that and f·(p_j − p_i) > cos(angle/2), f the unit
/// heading (gdx-ai FieldOfViewProximity, which compares the *unnormalised* offset with the
/// cosine, so beyond d = 1 the cone widens towards a half-plane); kCone — d < radius + r_j
/// and the true angle between f and p_j − p_i below angle/2; kInfinite — every alive
/// agent (gdx-ai InfiniteProximity); kCenter — d <= radius (contextsteer's former rule).
/// kRadius, kFieldOfView, kCone, kCenter read the neighbour lists (the max_neighbors
/// nearest); kInfinite scans all agents.
enum class Proximity : std::uint8_t { kRadius, kFieldOfView, kCone, kInfinite, kCenter };
struct Neighbourhood {
  Proximity kind = Proximity::kRadius;
  float radius = 1.0f;           ///< > 0
  float cos_half_angle = -1.0f;  ///< kFieldOfView / kCone: cos(angle/2)
};

/// Group behaviours over the neighbourhood: Separation Σ unit(p − p_j)·min(a_max,
/// decay/d²) (d > 0); Alignment (mean v_j − v), |a| <= a_max; Cohesion seek mean p_j.
/// No neighbour: zero.
enum class GroupRule : std::uint8_t { kSeparation, kAlignment, kCohesion };
struct Group {
  GroupRule rule = GroupRule::kSeparation;
  Neighbourhood near;
  float decay = 1.0f;  ///< Separation's inverse-square coefficient, >= 0
};

/// CollisionAvoidance (gdx-ai, Reynolds' unaligned collision avoidance): among the
/// neighbours, those approaching (relative speed > 0 and time of closest approach
/// t = −(r·w)/|w|² > 0, r = p_j − p, w = v_j − v) whose estimated closest distance
/// |r| − |w|·t is within the sum of radii; the one with the least t (ties: the lowest
/// index, gdx-ai's first reported); steer −unit(r')·a_max away from r' = r when that
/// distance is <= 0 or |r| < r_i + r_j (already overlapping), else r' = r + w·t. None: zero.
/// `push_overlapping` (not gdx-ai): an overlapping neighbour counts even when not
/// approaching, with t = 0 (ties: the nearest, then the lowest index).
struct CollisionAvoidance {
  Neighbourhood near;
  bool push_overlapping = false;
};

/// RaycastObstacleAvoidance against the world's walls: rays along the velocity (none
/// when still) in one of gdx-ai's configurations — kSingle: one ray of `length`;
/// kParallel: two rays of `length` offset ±side_offset sideways; kWhiskers: a central ray
/// of `length` and two of `whisker_length` at ±whisker_angle (gdx-ai's ray order: central,
/// clockwise, counter-clockwise; parallel: clockwise side first). The hit q closest to the
/// agent's position (|q − p|, ties: the first ray) with normal n: seek
/// q + n·(r_i + distance_from_boundary) (gdx-ai adds the bounding radius; without
/// `include_radius`, q + n·distance_from_boundary). No hit: zero.
enum class RayConfig : std::uint8_t { kSingle, kParallel, kWhiskers };
struct RaycastAvoidance {
  RayConfig config = RayConfig::kWhiskers;
  float length = 2.0f;          ///< > 0
  float side_offset = 0.5f;     ///< kParallel, >= 0
  float whisker_length = 1.0f;  ///< kWhiskers, > 0
  float whisker_angle = 0.5f;   ///< kWhiskers, radians in [0, π]
  float distance_from_boundary = 1.0f;
  std::uint32_t layers = kAllLayers;
  bool include_radius = true;
};

/// FollowPath (gdx-ai): s = the closest path offset of p + v·prediction, plus path_offset
/// (arc length); q = the path point at s; seek q — or Arrive at q (`tolerance`,
/// `slowing_radius`, `time_to_target`) on an open path, by `arrive`: kNearEnd (gdx-ai,
/// arriveEnabled) when s > length − slowing_radius (path_offset >= 0) or
/// s < slowing_radius (path_offset < 0); kEnd only once s >= length; kOff never.
/// `path` borrowed.
enum class PathArrive : std::uint8_t { kNearEnd, kEnd, kOff };
struct FollowPath {
  const Path* path = nullptr;
  float path_offset = 1.0f;
  float prediction = 0.0f;      ///< seconds, >= 0
  float slowing_radius = 1.0f;  ///< > 0
  PathArrive arrive = PathArrive::kNearEnd;
  float tolerance = 0.0f;
  float time_to_target = 0.1f;  ///< > 0
};

/// Interpose: the point at `ratio` between agents a and b (0 at a), their positions
/// extrapolated by the time the owner needs to reach the current one at s_max; Arrive
/// there with Arrive's tolerance, slowing_radius and time_to_target. Either agent dead:
/// zero.
struct Interpose {
  std::int32_t a = 0, b = 0;
  float ratio = 0.5f;
  float slowing_radius = 1.0f;
  float tolerance = 0.0f;       ///< Arrive's, as gdx-ai's Interpose extends Arrive
  float time_to_target = 0.1f;  ///< > 0
};

/// Hide from the target (a hunter) behind the world's circles: for each circle c of
/// radius r, the spot c + unit(c − q)·(r + distance_from_boundary); Arrive at the
/// closest spot (slowing_radius). No circle within `max_distance` of p: zero.
struct Hide {
  Target target;
  float distance_from_boundary = 1.0f;
  float max_distance = std::numeric_limits<float>::infinity();
  float slowing_radius = 1.0f;
  float tolerance = 0.0f;       ///< Arrive's, as gdx-ai's Hide extends Arrive
  float time_to_target = 0.1f;  ///< > 0
};

/// FollowFlowField: the flow vector f at q = p + v·prediction, sampled bilinearly from a
/// grid of vectors (node (r, c) at origin + (c, r)·cell; q clamped to the grid's extent),
/// asks for the velocity f·s_max: a = (f·s_max − v), |a| <= a_max (gdx-ai); where f is
/// exactly zero (a goal or blocked region) it asks for nothing, as gdx-ai. `vectors`
/// (rows·cols·2 floats, row-major) is borrowed.
struct FlowField {
  const float* vectors = nullptr;
  int rows = 0, cols = 0;  ///< >= 1 each
  Vec2 origin{};
  float cell = 1.0f;  ///< > 0
  float prediction = 0.0f;
};

using Behaviour =
    std::variant<Seek, Arrive, Pursue, MatchVelocity, Wander, Group, CollisionAvoidance,
                 RaycastAvoidance, FollowPath, Interpose, Hide, FlowField>;

/// A weighted sum of behaviours, truncated to a_max (gdx-ai BlendedSteering). With
/// `truncate` false (a bare behaviour, as gdx-ai runs one on its own or as a
/// PrioritySteering item) the sum is returned as is: only Separation can exceed a_max.
struct Blended {
  std::vector<Behaviour> behaviours;
  std::vector<float> weights;
  bool truncate = true;
};

/// Blended groups in priority order: the first whose result is longer than `epsilon`
/// (else the last one's result) — gdx-ai PrioritySteering. One group = Blended.
struct Steering {
  std::vector<Blended> groups;
  float epsilon = 1e-3f;
};

/// Everything the behaviours read: state t of the agents, neighbour lists covering
/// neighbor_radius(steering) (or none), the world (or nullptr) and the time (Wander).
struct Inputs {
  AgentsView agents;
  NeighborLists neighbors;
  const World* world = nullptr;
  double time = 0.0;
};

/// The neighbour search radius (centre distance) the steering's behaviours need, given the
/// largest radius among the agents (the radius proximities reach radius + r_j); 0: none.
float neighbor_radius(const Steering& s, float max_agent_radius);

/// Linear acceleration of every agent of [begin, end) into out (N,2) rows; dead agents
/// get 0. |result| <= a_max_i, except a bare Separation (alone or a Priority item), which
/// sums past it as gdx-ai's. Serial, allocation-free, reentrant.
void accelerate_rows(const Steering& s, const Inputs& in, float* out, std::size_t begin,
                     std::size_t end);

/// One behaviour's raw acceleration for agent i (no weighting or truncation). Pure.
Vec2 evaluate(const Behaviour& b, const Inputs& in, std::size_t i);

}  // namespace contextsteer::classic
