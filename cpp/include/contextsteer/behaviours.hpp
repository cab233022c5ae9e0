// SPDX-License-Identifier: MIT
// Context behaviours: small stateless kernels that write interest and/or danger rows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <limits>
#include <span>
#include <variant>

#include "contextsteer/agents.hpp"
#include "contextsteer/behaviour_params.hpp"
#include "contextsteer/dot_map.hpp"
#include "contextsteer/nav_field.hpp"
#include "contextsteer/nearest.hpp"
#include "contextsteer/neighbours.hpp"
#include "contextsteer/path.hpp"
#include "contextsteer/world.hpp"

namespace contextsteer {

/// How a behaviour merges the contributions of several targets into one slot value:
/// kMax; kSum of the clamped scores; kCenter (the Unity project's m_CenterBetweenTargets)
/// the sum of the raw, unclamped cosines, clamped at 0 once all are in (the Unity merger's
/// max with 0); a target on the agent (d = 0) empties the map, as its NaN does there.
enum class TargetCombine : std::uint8_t { kMax, kSum, kCenter };
/// How a contribution fades with distance d over a range R: none (1), linear (1 − d/R).
enum class Falloff : std::uint8_t { kNone, kLinear };
/// Which context map a target behaviour writes.
enum class MapKind : std::uint8_t { kInterest, kDanger };
/// Which neighbours a neighbour behaviour considers: all, same group id, other group ids.
enum class GroupFilter : std::uint8_t { kAll, kSame, kOther };

/// Forward (Godot default interest, Unity "Directional"): value_k = weight·max(0, s_k·f)
/// with f the unit heading. Writes interest.
struct Forward {
  float weight = 1.0f;
  const float* agent_weights = nullptr;  ///< (N,) per-agent factor, or nullptr (see below)
};

/// Momentum: bias towards the current direction of motion, value_k =
/// weight·(|v|/max_speed)·max(0, s_k·v̂) (nothing when stopped). Writes interest.
struct Momentum {
  float weight = 1.0f;
  const float* agent_weights = nullptr;  ///< (N,) per-agent factor, or nullptr (see below)
};

/// Seek / Chase / Flee / Avoid / Pursue / Evade over several targets (Unity chase and
/// avoid, Lewis "pursuing" and "flip the sign", gdx-ai Pursue/Evade). For every target
/// within max_distance (centre distance d > 0):
///   u = unit vector to the target (predicted target for Pursue/Evade), negated when `away`;
///   c_k = g(d)·max(0, s_k·u), g = 1 − d/max_distance (linear, finite range) or 1;
/// slot value = max or sum of c_k over targets, times weight, written to `output`.
/// Targets, by `source`: kOwnTarget — each agent's own `target`; kPoints — `positions`
/// (M,2) shared by all agents; kAgents — agents `target_ids`, whose positions and
/// velocities are read from the agents (dead ones and the agent itself are skipped) and,
/// when `max_prediction` > 0, aimed at p_j + v_j·T with T = min(max_prediction,
/// d/max_speed_i). An empty list writes zeros.
enum class TargetSource : std::uint8_t { kOwnTarget, kPoints, kAgents };
struct Targets {
  float weight = 1.0f;
  TargetSource source = TargetSource::kOwnTarget;
  std::span<const float> positions;          ///< (M,2) flat, or empty
  std::span<const std::int32_t> target_ids;  ///< agent indices, or empty
  float max_distance = std::numeric_limits<float>::infinity();
  float max_prediction = 0.0f;  ///< seconds; 0 → no prediction
  bool away = false;
  TargetCombine combine = TargetCombine::kMax;
  Falloff falloff = Falloff::kLinear;
  MapKind output = MapKind::kInterest;
  /// Slot score of a target direction: max(0, s_k·u) (kClampedCosine), (1 + s_k·u)/2
  /// (kHalfCosine, positive everywhere but straight away, so that a velocity-space danger
  /// can send the agent any way round, even backwards, and interest still ranks those
  /// slots) or 1 − sin(θ/2) (kChord: the same ends, but a small turn costs as much as
  /// the change of velocity it makes). No other DotShape.
  DotShape shape = DotShape::kClampedCosine;
  const float* agent_weights = nullptr;  ///< (N,) per-agent factor, or nullptr (see below)
};

/// Arrive (Lewis speed control, gdx-ai Arrive): interest towards the agent's target
/// (or the shared `point` when `use_point`) scaled by s = min(1, d/slowing_radius),
/// 0 within `tolerance`, so the chosen strength — and the speed — fall as it arrives.
struct Arrive {
  float weight = 1.0f;
  float slowing_radius = 1.0f;  ///< > 0
  float tolerance = 0.0f;       ///< >= 0
  bool use_point = false;
  Vec2 point{};
  DotShape shape = DotShape::kClampedCosine;  ///< slot score, as Targets::shape
  const float* agent_weights = nullptr;       ///< (N,) per-agent factor, or nullptr (see below)
};

/// Wander (seeded coherent noise, gdx-ai wander circle): a target on a circle of
/// `radius` whose centre is `offset` ahead along the heading, at angle
/// θ = π·noise(key_i, time·rate) from the heading, key_i = rng_i ^ splitmix64(seed).
/// value_k = weight·max(0, s_k·û), û the unit vector to the wander target. Interest.
struct Wander {
  float weight = 1.0f;
  float offset = 1.0f;  ///< >= 0
  float radius = 0.5f;  ///< >= 0
  float rate = 1.0f;    ///< >= 0, noise lattice points per second
  std::uint64_t seed = 0;
  const float* agent_weights = nullptr;  ///< (N,) per-agent factor, or nullptr (see below)
};

/// Tether: outside `radius` of the centre (shared `center`, or the agent's target when
/// !use_point), interest towards it with strength min(1, (d − radius)/softness)
/// (1 when softness == 0). Bounds: the same towards the rectangle [lo+margin, hi−margin]
/// with strength min(1, excess/margin) (1 when margin == 0).
struct Tether {
  float weight = 1.0f;
  float radius = 0.0f;
  float softness = 0.0f;
  bool use_point = true;
  Vec2 center{};
  const float* agent_weights = nullptr;  ///< (N,) per-agent factor, or nullptr (see below)
};
struct Bounds {
  float weight = 1.0f;
  Vec2 lo{}, hi{};
  float margin = 0.0f;
  const float* agent_weights = nullptr;  ///< (N,) per-agent factor, or nullptr (see below)
};

/// AgentDanger: danger towards every neighbour within `radius` of surface gap
/// (gap = d − r_i − r_j): c_k = (1 − max(gap,0)/radius)·max(0, s_k·û) (linear) or
/// max(0, s_k·û) (none), max over neighbours. When `predictive`, also towards the
/// relative position at the time of closest approach t* ∈ [0, horizon], graded the same
/// way and by (1 − t*/horizon). Needs NeighborLists covering `radius` + radii.
struct AgentDanger {
  float weight = 1.0f;
  float radius = 1.0f;  ///< > 0
  bool predictive = false;
  float horizon = 1.0f;  ///< seconds, > 0
  Falloff falloff = Falloff::kLinear;
  GroupFilter groups = GroupFilter::kAll;
  const float* agent_weights = nullptr;  ///< (N,) per-agent factor, or nullptr (see below)
};

inline constexpr std::array<ParamChoice<Falloff>, 2> kFalloffNames{
    {{"linear", Falloff::kLinear}, {"none", Falloff::kNone}}};
inline constexpr std::array<ParamChoice<GroupFilter>, 3> kGroupNames{
    {{"all", GroupFilter::kAll}, {"same", GroupFilter::kSame}, {"other", GroupFilter::kOther}}};

template <>
struct BehaviourSpec<AgentDanger> {
  static constexpr const char* kind = "agent_danger";
  static constexpr const char* python = "AgentDanger";
  static constexpr const char* doc =
      "Danger towards neighbouring agents closer than radius (surface gap).";
  static constexpr auto params = std::tuple{
      number("radius", &AgentDanger::radius, kPositiveLength,
             "reach of the danger (surface gap, m)"),
      flag("predictive", &AgentDanger::predictive,
           "also towards the relative position at closest approach"),
      number("horizon", &AgentDanger::horizon, kPositive, "prediction horizon (s)"),
      choice("falloff", &AgentDanger::falloff, kFalloffNames, "fading with the gap"),
      choice("groups", &AgentDanger::groups, kGroupNames, "which neighbours count"),
  };
};

/// Lewis flocking evaluators: a flocking vector w from the neighbours within `radius`
/// (centre distance), value_k = weight·s_k·w (clamped at 0 when `clamp`). Interest.
///   Separation: w = Σ (p_i − p_j)/d · (1 − d/radius), length clamped to 1;
///   Alignment:  w = mean(v_j)/max_speed_i, length clamped to 1 (0 if max_speed_i = 0);
///   Cohesion:   w = (mean(p_j) − p_i)/radius.
enum class FlockRule : std::uint8_t { kSeparation, kAlignment, kCohesion };
struct Flock {
  float weight = 1.0f;
  float radius = 1.0f;  ///< > 0
  FlockRule rule = FlockRule::kSeparation;
  bool clamp = true;
  GroupFilter groups = GroupFilter::kAll;
  const float* agent_weights = nullptr;  ///< (N,) per-agent factor, or nullptr (see below)
};

/// FollowPath (Godot recipe's track direction): u = path.direction(p_i, look_ahead, mode)
/// (the unit tangent at the closest offset + look_ahead, or the unit vector to that
/// point — see PathDirectionMode); value_k = weight·max(0, s_k·u). Interest. `path` is
/// borrowed (the caller keeps it alive); nullptr writes zeros.
/// Per-agent paths: with `paths` set (P borrowed pointers), agent i follows
/// paths[path_index[i]] (or paths[i] when path_index is nullptr); an index outside [0, P)
/// or a null entry writes zeros. `path` is then ignored.
struct FollowPath {
  float weight = 1.0f;
  const Path* path = nullptr;
  const Path* const* paths = nullptr;
  std::size_t path_count = 0;
  const std::int32_t* path_index = nullptr;  ///< (N,) or nullptr
  float look_ahead = 0.0f;                   ///< finite, arc length
  PathDirectionMode mode = PathDirectionMode::kTangent;
  const float* agent_weights = nullptr;  ///< (N,) per-agent factor, or nullptr (see below)
};

/// Which field of a NavField an agent follows: one shared field, its group id, or a
/// per-agent index array.
enum class FieldSelect : std::uint8_t { kShared, kGroup, kIndex };

/// FollowField (global guidance): u = the unit descent of the agent's navigation field at
/// its position (one bilinear lookup), or, with look_ahead > 0, the string-pulled
/// direction (NavField::pulled_direction_at: towards the farthest visible point of the
/// descent trail within look_ahead, so agents cut corners instead of hugging walls);
/// value_k = weight·s·score(s_k·u), score max(0, ·) or the half cosine (1 + ·)/2,
/// s = min(1, d/slowing_radius) when slowing_radius > 0 (d the field distance, a second
/// lookup), 0 within `tolerance` of the goal. An agent with no field (index outside
/// [0, G)), or where the field has no descent (at the goal, unreachable) gets zeros.
/// `field` is shared: a rebuilt field replaces it (copy-on-write), so the one a step
/// reads stays alive until the step is done; nullptr writes zeros. Interest.
struct FollowField {
  float weight = 1.0f;
  std::shared_ptr<const NavField> field;
  FieldSelect select = FieldSelect::kShared;
  std::int32_t shared = 0;                    ///< the field of every agent (kShared)
  const std::int32_t* field_index = nullptr;  ///< (N,) field per agent (kIndex)
  float look_ahead = 0.0f;                    ///< >= 0, string pulling distance (0: plain descent)
  float slowing_radius = 0.0f;                ///< >= 0 (0: no slowing)
  float tolerance = 0.0f;                     ///< >= 0
  DotShape shape = DotShape::kClampedCosine;  ///< slot score, as Targets::shape
  /// d counted from the field's floor (NavField::floor) when that is more than a cell:
  /// a goal no body can reach is arrived at where the field ends.
  bool reachable = false;
  const float* agent_weights = nullptr;  ///< (N,) per-agent factor, or nullptr (see below)
};

/// How WallDanger grades a slot whose ray hits a wall at distance h <= look_ahead L:
/// binary 1 (the Godot recipe), linear 1 − h/L, quadratic (1 − h/L)² (the recipe's
/// "levels of danger" suggestion).
enum class WallFalloff : std::uint8_t { kBinary, kLinear, kQuadratic };

/// WallDanger: each agent casts its K slot rays against BehaviourInputs::world up to
/// `look_ahead`, as circles of the agent's radius + `padding` (so a ray "hits" where the
/// agent's body would touch the wall), graded by `falloff`. `spread` > 0 also marks the
/// `spread` slots either side of every hit slot, scaled by (1 − m/(spread+1)) at m slots
/// away (binary: unscaled), so sparse slots do not miss thin walls; values merge by max.
/// Agents with no wall within look_ahead + radius + padding (a nearest-wall query) skip
/// the rays. Danger. No world (and no `agents`): zeros.
/// `ray_radius` >= 0 casts the rays as discs of that radius instead of the agent's
/// radius + padding (0: the Godot recipe's thin rays). With `agents`, the rays also hit
/// the other agents (alive, in the neighbour lists) as discs of their radius r_j: a ray of
/// radius ρ hits agent j at the first t >= 0 with |t·s − (p_j − p_i)| = r_j + ρ; when
/// the two already overlap, only the slots heading towards j (s·(p_j − p_i) > 0) report 0
/// (as for walls). Needs NeighborLists covering look_ahead + ρ + the largest radius.
struct WallDanger {
  float weight = 1.0f;
  float look_ahead = 1.0f;  ///< > 0
  WallFalloff falloff = WallFalloff::kBinary;
  std::uint32_t spread = 0;
  float padding = 0.0f;  ///< >= 0, added to the agent radius
  std::uint32_t layers = kAllLayers;
  float ray_radius = -1.0f;              ///< >= 0: the rays' radius; < 0: agent radius + padding
  bool agents = false;                   ///< the rays also hit other agents
  const float* agent_weights = nullptr;  ///< (N,) per-agent factor, or nullptr (see below)
};

inline constexpr std::array<ParamChoice<WallFalloff>, 3> kWallFalloffNames{
    {{"binary", WallFalloff::kBinary},
     {"linear", WallFalloff::kLinear},
     {"quadratic", WallFalloff::kQuadratic}}};

template <>
struct BehaviourSpec<WallDanger> {
  static constexpr const char* kind = "wall_danger";
  static constexpr const char* python = "WallDanger";
  static constexpr const char* doc =
      "Danger in the slots whose rays hit a wall within look_ahead (Godot recipe).";
  static constexpr auto params = std::tuple{
      number("look_ahead", &WallDanger::look_ahead, kPositiveLength, "ray length (m)"),
      choice("falloff", &WallDanger::falloff, kWallFalloffNames, "danger by hit distance"),
      count("spread", &WallDanger::spread, count_range(0, 4294967295.0),
            "slots marked either side of a hit"),
      number("padding", &WallDanger::padding, kLength, "added to the agent's radius (m)"),
      layer_mask("layers", &WallDanger::layers, "obstacle layers the rays see"),
      optional_number("ray_radius", &WallDanger::ray_radius, kLength, -1.0f, nullptr,
                      "radius of the rays; None: the agent's radius + padding"),
      flag("agents", &WallDanger::agents, "the rays also hit other agents"),
  };
};

/// CollisionDanger: danger in velocity space, a velocity obstacle sampled on the slot
/// ring. Candidate velocities are v = s_m·d_k for every slot direction d_k and speeds
/// s_m = max_speed_i·m/S, m = 0..S (m = 0: standing still); with F = fine_speeds > 0, F
/// more levels split the gap between the fastest two evenly (level_multiple below), so
/// that an agent can slow down a little instead of turning. Against neighbour j
/// (p = x_j − x_i, R = r_i + r_j + margin) the candidate's time to collision solves
/// |p − w·t| = R for the effective relative velocity w = (v − α·v_i)/(1 − α) − v_j
/// (α = reciprocity: 0, j keeps its velocity; 0.5, each agent takes half, as in RVO):
///   c = |p|² − R², b = p·w, a = |w|²;
///   c <= 0 (touching): t = 0 when b > 0 (the candidate deepens the overlap), else ∞;
///   otherwise t = c / (b + √(b² − a·c)) when b > 0 and b² > a·c, else ∞.
/// Against the walls (when `walls`): the slot ray cast as a disc of radius r_i + margin up
/// to L = max_speed_i·wall_horizon hits at h_k, and t = (h_k / s_m)·horizon/wall_horizon
/// (∞ for s_m = 0): a wall's time to collision on the agents' scale, so that walls can
/// have a shorter horizon than agents (RVO2's timeHorizonObst). TTC_k(s_m)
/// is the least over neighbours and walls. Per slot, the candidate kept is the fastest
/// safe one (TTC >= horizon): speed_k = m/S, danger_k = 0; when the slot has no safe
/// candidate, the one with the largest TTC (ties: the slowest), speed_k = m*/S and
/// danger_k = 1 − TTC/horizon (danger 1 at TTC 0, linear to 0 at the horizon). Writes
/// danger (scaled by the weights) and the speed map (not scaled). Side preference
/// (`side`, `side_bias`) is applied by the simulation's decision (see SteeringConfig).
/// With `wall_speed`, a slot whose ray hits a wall at h_k also offers the wall-limited
/// speed h_k / wall_horizon (rounded down by 2^-20, so its wall TTC is the horizon): taken
/// with danger 0 when below max speed, faster than the fastest safe level (0 when none is
/// safe) and safe against every neighbour, so agents can close on a wall slowly.
/// `wall_speed_alone` offers it only to an agent that no listed neighbour in sight could meet
/// within the horizon at any candidate (in sight: a line from the agent's centre to the
/// neighbour's centre or to one of its two sides across that line misses every wall), and
/// only below the slowest moving level (max_speed / speeds), where no level can approach
/// the wall: above it the levels decide (a lone agent at 3–4 m/s that closed on the wall
/// beside a door at the wall-limited speed paced along it and missed the door).
/// With `creep`, a slot where standing is safe also offers the fastest speed that is safe
/// all the way from standing (levels 0..mc safe, mc + 1 not: the boundary between them,
/// found by kCreepSteps bisection steps on the exact test against neighbours and walls),
/// taken with danger 0 when faster than the slot's fastest safe level (0 when none is
/// safe): continuous speeds below the first unsafe level, as ORCA has, so that agents in
/// a packed crowd edge into the gaps instead of all standing still.
/// With `unstick` (and not `creep`), creep's candidates for an agent that would otherwise
/// stand (standing safe, no slot can move), and for an agent alone (no neighbour in sight
/// could meet it, as for wall_speed_alone), walls near, moving at most half the slowest
/// level's speed and more than r_i from its target, when no slot within 90° of its way
/// can move: its slots that cannot move offer them (unstick_row). Its way: the direction
/// of the field it follows most (BehaviourInputs::ways) where that gives one, else the straight
/// line to its target. A lone agent at a bend it barely fits otherwise had only the
/// courses back along the corridor, and paced; at a 180° turn round a wall's end the
/// straight line points back along that corridor, hence the route's direction.
/// With `squeeze` < 1, an agent that still has no safe moving candidate after all of the
/// above (standing is safe, every slot's candidate is standing or unsafe) tries creep's
/// candidates from standing once more with its margin cut to squeeze·margin, against the
/// neighbours and against the walls (whose rays are then cast at r_i + squeeze·margin):
/// each slot where that gives a speed above 0 offers it with danger 0; when no slot gets
/// one there either, the same at margin 0 (a last resort: bodies and walls are still never
/// entered within the horizon). Two bodies side by side in an exit's mouth, each within its
/// margin of a door post and of the other, have no safe course at the full margin and stand
/// for good (an arch); with part of the margin, or none, each can edge through.
/// With `past_target`, a wall that a slot's ray meets only after the ray has passed within
/// r_i of the agent's target (the closest approach, at distance g·d_k along the ray, comes
/// at least r_i ahead and before the bare body would touch the wall:
/// r_i <= g·d_k <= h_k + margin; within r_i of the target, 0 < g·d_k <= h_k + margin and
/// a ray heading at it, |d × g| <= g·d / 4, so that the last radius is walked straight in
/// too, while an agent on its target reads every wall) reads as no wall for
/// that slot, and for the courses the simulation's refinements test (velocity_ttc): the
/// agent stops at its target, so the wall beyond does not limit the course's speed
/// (walls_past_target). Not for an agent whose target is a waypoint on its way
/// (AgentsView::waypoint: a detour leading it), which would meet that wall at speed.
/// The same holds for a body standing (a neighbour slower than kStandingSpeed, whose bare
/// body r_i + r_j is clear of the target): a course that passes within r_i of the target
/// no later than h + margin, h where the course meets the disc of radius r_i + r_j +
/// margin round that body, and at least r_i ahead (or, within r_i of the target, a course
/// heading at it, |d × g| <= g·d / 4, whose target is clear of that disc, so that the last
/// radius is walked straight in too), leaves the body out, in the rows (every
/// moving level of that slot) and in every TTC of a course the refinements, creep, unstick
/// and squeeze test (direction v/|v|). An agent whose goal lies just short of a body
/// standing at its own goal would otherwise find every course towards it unsafe at any
/// speed that reaches it within the horizon, and pace beside it.
inline constexpr int kCreepSteps = 14;
/// m/s: a neighbour at most this fast counts as standing for past_target (agents at rest
/// at their goals keep speeds of about 1e-5 m/s under Arrive).
inline constexpr float kStandingSpeed = 0.02f;
/// same_way_horizon: a neighbour walks the agent's way when it is at least this fraction of
/// its own max speed fast and its velocity lies within 45° of the direction to the agent's
/// target (cos² 45° = 1/2, tested without a square root).
inline constexpr float kSameWaySpeed = 0.25f;
struct CollisionDanger {
  float weight = 1.0f;
  float horizon = 2.0f;           ///< seconds, > 0
  float wall_horizon = 2.0f;      ///< seconds, > 0: the walls' horizon (see above)
  std::uint32_t speeds = 4;       ///< S >= 1
  std::uint32_t fine_speeds = 0;  ///< F >= 0: levels between the fastest two (see above)
  float margin = 0.0f;            ///< >= 0, extra clearance
  float reciprocity = 0.0f;       ///< α in [0, 1)
  bool walls = true;
  std::uint32_t layers = kAllLayers;
  float side = 1.0f;       ///< +1: pass on the right, −1: on the left, 0: no preference
  float side_bias = 0.1f;  ///< >= 0, relative bonus of the preferred side's slots
  float smoothness = 0.5f;  ///< >= 0, λ: turning cost exp(−λ·(|v| − d_k·v)), v in max-speed units
  float commit = 0.1f;  ///< in [0, 1): keep the last course while TTC >= (1 − commit)·horizon
  float speed_exponent = 1.0f;  ///< γ > 0: a candidate is worth interest·speed^γ (1: the rate)
  // Smoother decisions, all off by default (see the Python docstring): each trades a
  // little of the decision's immediacy for fewer and smaller heading changes.
  float commit_danger =
      0.0f;  ///< in [0, 1): no safe course: keep the last while TTC >= (1 − this)·new
  float return_margin =
      0.0f;  ///< >= 0: a better course replaces a safe one if free (1 + this)·horizon
  float return_step = 0.0f;  ///< >= 0: most radians per 1/30 s a return to a better course turns
  std::uint32_t turn_steps =
      0;                       ///< bisection steps of the least turn off an unsafe course (0: off)
  float turn_margin = 0.0f;    ///< >= 0: that turn's course is free for (1 + this)·horizon
  bool wall_speed = false;     ///< a slot may also approach a wall at h_k / wall_horizon
  float retreat_speed = 1.0f;  ///< in [0, 1]: speed cap of an unsafe course away from the goal
  float inertia = 0.0f;        ///< in [0, 1): share of the last command kept per 1/30 s, when safe
  bool creep = false;          ///< a slot also offers the fastest speed up to its first unsafe one
  bool settle = false;         ///< near the goal, speed capped by the progress a course makes
  bool unstick = false;        ///< creep's candidates for an agent with no moving candidate
  float squeeze = 1.0f;        ///< in [0, 1]: share of the margin kept by a stranded agent (1: off)
  bool past_target = false;    ///< a wall met only past the agent's target does not count
  float make_way = 0.0f;  ///< in [0, 1]: sidestep speed of a body at its goal in a walker's way
  float standoff = 0.0f;  ///< s >= 0: an arch of two walkers stood so long: one backs off
  bool arrivals = false;  ///< at its goal, a neighbour arriving at its own target is seen standing
  // A horizon that shortens with the local density (collision_horizon), off when 0.
  float dense_horizon = 0.0f;   ///< s, in (0, horizon]: the horizon at density_high and above
  float density_low = 1.0f;     ///< persons/m², >= 0: the full horizon up to this density
  float density_high = 2.0f;    ///< persons/m², > density_low: dense_horizon from this one
  float density_radius = 1.5f;  ///< m, > 0: the disc the density is counted in
  // A jammed agent facing an oncomer decides at a shorter horizon (collision_row), off when 0.
  float jam_horizon = 0.0f;        ///< s, > 0: the horizon of such an agent
  float jam_radius = 2.0f;         ///< m, > 0: how near the oncomer
  std::uint32_t jam_oncomers = 1;  ///< >= 1: oncomers within jam_radius it takes
  // Neighbours walking the agent's way count at a shorter horizon (same_way_of), off when 0.
  float same_way_horizon = 0.0f;  ///< s, in (0, horizon]: the horizon against them
  // Speed across the wanted way costs when that way is not free (weigh_by_speed), off when 0.
  float lateral_cost = 0.0f;      ///< c >= 0: each slot's worth × max(0, 1 − c·speed·|sin θ|)
  bool wall_speed_alone = false;  ///< wall_speed's candidate, alone (no neighbour in sight)
  bool brake_at_target = false;   ///< a course through the target is slowed to stop there
  bool reachable_target = false;  ///< steer to where the body can stand nearest its target
  const float* agent_weights = nullptr;  ///< (N,) per-agent factor, or nullptr (see below)
};

/// CollisionDanger's level m (0..level_count(b)) as a multiple of max_speed / speeds: m
/// below speeds − 1, then fine_speeds levels evenly between speeds − 1 and speeds (the
/// last level is speeds itself, exactly: max speed). Without fine speeds, m for every
/// level, so the levels are the same floats as m/S.
inline float level_multiple(const CollisionDanger& b, std::size_t m) {
  const std::size_t below = b.speeds - 1;
  if (b.fine_speeds == 0 || m <= below) return static_cast<float>(m);
  return static_cast<float>(below) +
         static_cast<float>(m - below) / static_cast<float>(b.fine_speeds + 1);
}
/// The number of moving levels: speeds + fine_speeds.
inline std::size_t level_count(const CollisionDanger& b) {
  return std::size_t{b.speeds} + b.fine_speeds;
}
/// The slowest moving level's speed as a fraction of max speed (1/speeds, unless speeds is
/// 1 and fine speeds split the whole way from standing).
inline float slowest_level(const CollisionDanger& b) {
  return level_multiple(b, 1) / static_cast<float>(b.speeds);
}

inline constexpr std::array<ParamChoice<float>, 3> kSideNames{
    {{"right", 1.0f}, {"left", -1.0f}, {"none", 0.0f}}};

template <>
struct BehaviourSpec<CollisionDanger> {
  static constexpr const char* kind = "collision_danger";
  static constexpr const char* python = "CollisionDanger";
  static constexpr const char* doc =
      "Danger in velocity space: a velocity obstacle sampled on the slot ring.";
  static constexpr auto params = std::tuple{
      number("horizon", &CollisionDanger::horizon, kPositive, "time horizon (s)"),
      count("speeds", &CollisionDanger::speeds, count_range(1, 64), "candidate speeds per slot"),
      count("fine_speeds", &CollisionDanger::fine_speeds, count_range(0, 16),
            "extra candidate speeds evenly between the fastest two levels"),
      number("margin", &CollisionDanger::margin, kLength, "extra clearance (m)"),
      number("reciprocity", &CollisionDanger::reciprocity, kUnitOpen,
             "share of the avoidance the agent takes on (0.5: RVO)"),
      flag("walls", &CollisionDanger::walls, "walls on the same time scale"),
      optional_number("wall_horizon", &CollisionDanger::wall_horizon, kPositive, 0.0f, "horizon",
                      "the walls' horizon (s); None: horizon"),
      layer_mask("layers", &CollisionDanger::layers, "obstacle layers seen"),
      choice("side", &CollisionDanger::side, kSideNames, "side to pass on when blocked"),
      number("side_bias", &CollisionDanger::side_bias, kNonNegative,
             "bonus of the preferred side's slots"),
      number("smoothness", &CollisionDanger::smoothness, kNonNegative, "turning cost"),
      number("commit", &CollisionDanger::commit, kUnitOpen, "commitment to the last course"),
      number("speed_exponent", &CollisionDanger::speed_exponent, kPositive,
             "power of a candidate's speed in its worth (1: the rate of progress)"),
      number("commit_danger", &CollisionDanger::commit_danger, kUnitOpen,
             "commitment to the last course when no course is safe"),
      number("return_margin", &CollisionDanger::return_margin, kNonNegative,
             "extra horizon a better course needs to replace a safe one"),
      number("return_step", &CollisionDanger::return_step, kNonNegative,
             "largest turn per 1/30 s of a return to a better course (rad)"),
      count("turn_steps", &CollisionDanger::turn_steps, count_range(0, 16),
            "bisection steps of the least turn away from an unsafe course"),
      number("turn_margin", &CollisionDanger::turn_margin, kNonNegative,
             "extra horizon of that turn's course"),
      flag("wall_speed", &CollisionDanger::wall_speed,
           "a slot may approach a wall at its wall-limited speed, between the levels"),
      number("retreat_speed", &CollisionDanger::retreat_speed, count_range(0, 1),
             "speed cap (fraction of max speed) of an unsafe course away from the goal"),
      number("inertia", &CollisionDanger::inertia, kUnitOpen,
             "share of the last command kept in the new velocity per 1/30 s, when safe"),
      flag("creep", &CollisionDanger::creep,
           "a slot offers the fastest speed safe all the way from standing, between the levels"),
      flag("unstick", &CollisionDanger::unstick,
           "creep's candidates for an agent whose every safe candidate is standing still, "
           "or slow and alone by walls with no way towards its target"),
      number("squeeze", &CollisionDanger::squeeze, count_range(0, 1),
             "share of the margin kept by an agent with no other safe way to move (1: off)"),
      flag("past_target", &CollisionDanger::past_target,
           "a wall a course meets only after passing the agent's target does not limit it"),
      flag("settle", &CollisionDanger::settle,
           "near the goal, a course's speed is capped by the progress it makes towards it"),
      number("make_way", &CollisionDanger::make_way, count_range(0, 1),
             "sidestep speed (fraction of max speed) of an agent at its goal that stands in "
             "the way of a walker making no headway (0: off)"),
      number("standoff", &CollisionDanger::standoff, kNonNegative,
             "seconds two walkers side by side in each other's way stand before the one "
             "farther from its target backs off (0: off)"),
      flag("arrivals", &CollisionDanger::arrivals,
           "an agent at its goal sees a neighbour arriving at its own target standing, where "
           "it is and where it stops"),
      optional_number("dense_horizon", &CollisionDanger::dense_horizon, kPositive, 0.0f, nullptr,
                      "the horizon in a dense crowd (s); None: the horizon everywhere"),
      number("density_low", &CollisionDanger::density_low, kNonNegative,
             "density (persons/m²) up to which the full horizon holds"),
      number("density_high", &CollisionDanger::density_high, kPositive,
             "density (persons/m²) from which dense_horizon holds"),
      number("density_radius", &CollisionDanger::density_radius, kPositiveLength,
             "radius (m) of the disc the density is counted in"),
      optional_number("jam_horizon", &CollisionDanger::jam_horizon, kPositive, 0.0f, nullptr,
                      "the horizon of an agent with no safe way to move and an oncomer near "
                      "(s); None: off"),
      number("jam_radius", &CollisionDanger::jam_radius, kPositiveLength,
             "how near an oncomer makes a jammed agent take jam_horizon (m)"),
      count("jam_oncomers", &CollisionDanger::jam_oncomers, count_range(1, 64),
            "how many oncomers within jam_radius make a jammed agent take jam_horizon"),
      optional_number("same_way_horizon", &CollisionDanger::same_way_horizon, kPositive, 0.0f,
                      nullptr,
                      "the horizon against a neighbour walking the agent's way (s); None: the "
                      "horizon"),
      number("lateral_cost", &CollisionDanger::lateral_cost, kNonNegative,
             "cost of speed across the wanted way when that way is not free (0: off)"),
      flag("wall_speed_alone", &CollisionDanger::wall_speed_alone,
           "wall_speed's candidate for an agent no neighbour in sight can meet within the "
           "horizon"),
      flag("brake_at_target", &CollisionDanger::brake_at_target,
           "a command along a course that passes through the agent's target is slowed so "
           "that the agent's motion model can stop there"),
      flag("reachable_target", &CollisionDanger::reachable_target,
           "the simulation steers each agent to where its body can stand nearest its "
           "target (out of a solid holding it, off the walls within its radius)"),
  };
};

/// Every behaviour's row for agent i is multiplied by its `weight` and, when
/// `agent_weights` is set (a borrowed (N,) array, N = agent capacity, values >= 0), by
/// agent_weights[i]: per-agent behaviour weights (one agent cautious, another reckless).

/// Any behaviour: a closed set, dispatched with std::visit (no virtual calls, no heap).
using Behaviour =
    std::variant<Forward, Momentum, Targets, Arrive, Wander, Tether, Bounds, AgentDanger, Flock,
                 FollowPath, WallDanger, CollisionDanger, FollowField>;

/// Whether a behaviour writes an interest / a danger map. Pure.
bool writes_interest(const Behaviour& b);
bool writes_danger(const Behaviour& b);
/// Whether a behaviour also writes a speed map (N,K): per slot, the fraction of the
/// agent's max speed it may safely go that way (CollisionDanger). Pure.
bool writes_speed(const Behaviour& b);
/// Neighbour search radius (centre distance) a behaviour needs given the largest agent
/// radius, speed |v| and max_speed among the agents (max_speed defaults to the speed);
/// 0 when it needs no neighbours. Pure.
float neighbor_radius(const Behaviour& b, float max_agent_radius, float max_agent_speed,
                      float max_agent_top_speed = -1.0f);
/// Whether a behaviour reads BehaviourInputs::neighbors. Pure.
bool needs_neighbors(const Behaviour& b);
/// The radius of the one neighbour query shared by `behaviours` (the largest
/// neighbor_radius, from the largest radius and speed among alive agents); 0 when none
/// needs neighbours. Serial, O(N).
/// With `commands`, every agent's speed counts as at least its max speed (times 1 + 1e-5,
/// for a unit direction's rounding): neighbours deciding in phases (SteeringConfig::
/// decision_phases) are perceived at their new commands, which may be faster than any
/// velocity now.
float shared_neighbor_radius(std::span<const Behaviour> behaviours, const AgentsView& agents,
                             bool commands = false);

/// Everything a behaviour reads. `slots` is (K,2) flat unit directions in the agent
/// frame when `rotate_with_heading` (slot s_k of agent i points along R(heading_i)·s_k,
/// the Godot recipe), in the world frame otherwise. `time` (seconds, >= 0) drives Wander.
struct BehaviourInputs {
  AgentsView agents;
  const float* slots = nullptr;
  std::size_t k = 0;
  bool rotate_with_heading = false;
  NeighborLists neighbors;
  double time = 0.0;
  const World* world = nullptr;  ///< indexed world (WallDanger), or nullptr
  /// Optional (N,) per-agent note from one CollisionDanger, `wall_clear_of`, to
  /// velocity_ttc of the same behaviour later in the step: its rows set wall_clear[i] = 1
  /// when no wall of its layers lies within its wall look-ahead + pad of agent i (the
  /// nearest-wall query velocity_ttc would repeat), 0 otherwise. nullptr: not kept.
  std::uint8_t* wall_clear = nullptr;
  const CollisionDanger* wall_clear_of = nullptr;
  /// Optional (N,K): the rows of the WallDanger `sensed_of` write there what its slot
  /// rays sensed (hit distance along each slot, walls and, with `agents`, other agents;
  /// +inf where clear within the look-ahead), so that a picture can show exactly what the
  /// agent saw. nullptr: not kept.
  float* sensed = nullptr;
  const WallDanger* sensed_of = nullptr;
  /// Optional: each agent's nearest wall at its current position, found ahead (the run
  /// metrics' wall query at the end of the previous step); the slot wall sensors take
  /// their nearest-wall answer from it where it is known (see NearestWalls). nullptr: ask.
  const NearestWalls* near = nullptr;
  /// Optional: the FollowFields (with a field) that give the agents their routes. Agent i's
  /// way is the direction, at its position, of the one it follows most (the largest
  /// weight · agent_weights[i] above 0; the first of equal ones), where that gives one;
  /// CollisionDanger's unstick asks it in place of the straight line to the target (a
  /// route may turn back round a wall's end, where that line points through the wall).
  /// Empty, or no field weighing above 0 for the agent: the straight line. Simulation
  /// passes its own FollowFields.
  std::span<const FollowField* const> ways;
};

/// Destination of map rows: agent i's K values go to data + (i − first_row)·K. A full
/// (N,K) array uses first_row = 0; a chunk-local scratch block of (end − begin, K) rows
/// (cache-resident, what the step uses when behaviour maps are not recorded) uses
/// first_row = begin.
struct MapOut {
  float* data = nullptr;
  std::size_t first_row = 0;
  /// Rows first_row, first_row + step, ... are stored one after the other (step > 1: the
  /// rows of every step-th agent, as when deciding in phases).
  std::size_t step = 1;
  float* row(std::size_t i, std::size_t k) const {
    const std::size_t r = step == 1 ? i - first_row : (i - first_row) / step;
    return data + r * k;
  }
};

/// Writes rows begin, begin + step, ... (< end) of the maps the behaviour produces — `interest` and/or
/// `danger`, and `speed` for behaviours that write_speed (see MapOut); a map the
/// behaviour does not produce is not touched (its data may be nullptr). Dead agents get
/// zero rows. Serial, allocation-free after the first call on a thread, reentrant; the
/// output of row i depends only on the inputs.
void evaluate_rows(const Behaviour& b, const BehaviourInputs& in, MapOut interest, MapOut danger,
                   std::size_t begin, std::size_t end, MapOut speed = {}, std::size_t step = 1);

/// evaluate_rows into full (N,K) arrays (first_row = 0).
inline void evaluate_rows(const Behaviour& b, const BehaviourInputs& in, float* interest,
                          float* danger, std::size_t begin, std::size_t end,
                          float* speed = nullptr) {
  evaluate_rows(b, in, MapOut{interest, 0}, MapOut{danger, 0}, begin, end, MapOut{speed, 0});
}

/// Time to collision of agent i moving at velocity v (world frame, any direction and
/// speed), by CollisionDanger's rules: the least over the neighbours in `in.neighbors` and,
/// when b.walls and v != 0, the wall along v (on the agents' scale). +inf when nothing is
/// hit. Pure, reentrant; allocation-free after the first call on a thread.
float velocity_ttc(const CollisionDanger& b, const BehaviourInputs& in, std::size_t i, Vec2 v);

/// The wall ahead of agent i along unit direction d (world frame), as velocity_ttc reads
/// it: `hit`, where a disc of radius r_i + b.margin moving along d from the agent's
/// position first touches a wall of b.layers within max_speed_i · b.wall_horizon (+inf
/// when none, or b.walls is off); `past`, whether b.past_target leaves that wall out (the
/// course passes the agent's target before it; velocity_ttc then reads no wall).
struct WallAlong {
  float hit = std::numeric_limits<float>::infinity();
  bool past = false;
  bool bare = false;  ///< the hit was read at the bare radius r_i (the agent in the margin band)
};
WallAlong wall_along(const CollisionDanger& b, const BehaviourInputs& in, std::size_t i, Vec2 d);

/// How far agent i may go along unit direction d (world frame) before it meets what
/// b.past_target leaves out of that course: the wall ahead (wall_along, when `past`), or
/// a body standing in the agent's neighbour list that the course meets only past the
/// target. The distance is where the padded body (r_i + b.margin; r_i + r_j + b.margin
/// round a body) first touches it; where the course passes the target beyond that (a goal
/// inside the margin band), the target's distance along d, at most where the bare body
/// (r_i; r_i + r_j) touches: the goal is walked to, not past. 0 already inside. +inf when past_target does not hold for the agent or leaves
/// nothing out along d. Simulation caps a command too fast to stop short of it. Pure,
/// reentrant.
float past_target_hit(const CollisionDanger& b, const BehaviourInputs& in, std::size_t i, Vec2 d);

/// Agent i's horizon under CollisionDanger b: b.horizon, or with dense_horizon > 0 the
/// horizon shortened with the local density ρ_i = n_i / (π·density_radius²), n_i the
/// neighbours in agent i's list (the max_neighbours nearest) whose centres lie within
/// density_radius of its own: h_i = horizon + f·(dense_horizon − horizon), f =
/// clamp((ρ_i − density_low) / (density_high − density_low), 0, 1). The walls' horizon
/// scales by the same factor h_i / horizon. In float, in that order (the tests' oracle
/// repeats it).
float collision_horizon(const CollisionDanger& b, const BehaviourInputs& in, std::size_t i);

/// velocity_ttc's agent part: the least over the neighbours in `in.neighbors`, no walls.
/// keep_course's return_margin asks it: a wall does not close in as a gap between agents
/// does. Pure, reentrant.
float velocity_agents_ttc(const CollisionDanger& b, const BehaviourInputs& in, std::size_t i,
                          Vec2 v);

/// velocity_ttc's agent part (no walls) over the neighbours not behind agent i along
/// `course`, (x_j − x_i)·course >= 0: settle's test of a slower command, which only a
/// follower could run into, and the follower is the one to give way. Pure, reentrant.
float velocity_ttc_ahead(const CollisionDanger& b, const BehaviourInputs& in, std::size_t i, Vec2 v,
                         Vec2 course);

/// velocity_ttc's agent part over the kinematic neighbours only (each taking no share of
/// the avoidance): how soon agent i at velocity v meets one of them. +inf when none is
/// in reach or no agent is kinematic. Pure, reentrant.
float kinematic_ttc(const CollisionDanger& b, const BehaviourInputs& in, std::size_t i, Vec2 v);

/// evaluate_rows over all agents through parallel_for.
void evaluate(const Behaviour& b, const BehaviourInputs& in, float* interest, float* danger,
              float* speed = nullptr);

/// The "dot-product rule" every writer uses: row[k] = max(0, s_k·u)·scale combined into
/// row by `combine` (max or sum); `u` in the slot frame. With `shape` kHalfCosine the
/// score is (1 + s_k·u)/2, with kChord 1 − |s_k − u|/2 (chord_value). Pure,
/// allocation-free.
void accumulate_dot_row(float* row, const float* slots, std::size_t k, Vec2 u, float scale,
                        TargetCombine combine, DotShape shape = DotShape::kClampedCosine);

}  // namespace contextsteer
