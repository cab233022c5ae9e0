// SPDX-License-Identifier: MIT
// The simulation step: perceive → combine → post-process → resolve → choose → move → collide.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <string_view>
#include <vector>

#include "contextsteer/agents.hpp"
#include "contextsteer/behaviours.hpp"
#include "contextsteer/choose.hpp"
#include "contextsteer/combine.hpp"
#include "contextsteer/history.hpp"
#include "contextsteer/metrics.hpp"
#include "contextsteer/motion.hpp"
#include "contextsteer/neighbours.hpp"
#include "contextsteer/postprocess.hpp"
#include "contextsteer/resolve.hpp"
#include "contextsteer/classic.hpp"
#include "contextsteer/slot_set.hpp"
#include "contextsteer/velocity_memo.hpp"
#include "contextsteer/world.hpp"

namespace contextsteer {

/// The steering pipeline of every agent: behaviours and the engine's operators by name.
/// Behaviours write their own (N,K) maps; interest behaviours are merged by `combine`,
/// danger behaviours by `danger_combine`; then the optional post-processing (spread with
/// `spread_kernel` over the maps selected, temporal blend of both maps with the previous
/// step: m ← m_prev + blend·(m − m_prev)); then resolve and choose.
struct SteeringConfig {
  std::vector<Behaviour> behaviours;
  CombineMode combine = CombineMode::kMax;         ///< interest (not kWeightedSum)
  CombineMode danger_combine = CombineMode::kMax;  ///< danger (not kWeightedSum)
  ResolveParams resolve;
  ChooseParams choose;
  std::vector<float> spread_kernel;  ///< odd length <= K, or empty for no spread
  SpreadMode spread_mode = SpreadMode::kMax;
  bool spread_interest = false;
  bool spread_danger = true;
  float blend = -1.0f;  ///< in [0, 1], or < 0 for no temporal blend
  /// >= 0, commitment to the previous decision (the memory is the chosen slot itself):
  /// that slot resolves with its danger lowered by `hysteresis` (clamped at 0), and its
  /// resolved value is multiplied by 1 + hysteresis before choose.
  float hysteresis = 0.0f;
  /// Slots turn with each agent's heading (Godot recipe); the chosen direction is turned
  /// back to the world frame.
  bool rotate = false;
  /// Keep every behaviour's own maps in (N,K) buffers (behaviour_map(b)).
  bool record = false;
  std::size_t max_neighbors = 16;  ///< <= kMaxNeighbors
  /// Decisions in phases (1..kMaxDecisionPhases; 1: every agent at once, from the same
  /// state). With P > 1, Simulation::step decides agent i in phase i % P, in order, and
  /// each phase perceives the agents of the phases before it moving at their new command
  /// (direction · strength · max_speed) instead of their velocity: a Gauss–Seidel sweep
  /// over the decisions, so that of two neighbours the later one sees the earlier one's
  /// dodge instead of both dodging and both swinging back (the reciprocal dance).
  /// Deterministic for any thread count (each phase reads only the phases before it).
  std::size_t decision_phases = 1;
  /// Classic steering instead of context maps (behaviours must then be empty): each
  /// deciding agent's acceleration a (classic::accelerate_rows) becomes the chosen
  /// velocity v + a·dt (direction and strength = its length / max_speed, clamped to 1),
  /// so Accel with time_to_target 0 integrates v' = limit(v + a·dt, max_speed) as gdx-ai
  /// does (Accel also caps |v' − v| at max_accel·dt, which differs only where the speed
  /// limit bends v + a·dt). The maps stay zero and the chosen slot −1.
  std::shared_ptr<const classic::Steering> classic;
};

/// The largest SteeringConfig::decision_phases.
inline constexpr std::size_t kMaxDecisionPhases = 64;

/// Everything about a simulation that is not steering.
struct SimulationParams {
  MotionModel motion = Lerp{};
  bool push_apart = true;
  float push_relax = 1.0f;  ///< fraction of each overlap a push-apart pass removes, (0, 1]
  /// Push-apart passes per step, >= 1: the Jacobi pass over every agent, repeated at the
  /// positions the pass before left until no pair overlaps or the passes run out. The
  /// later passes visit only the agents that overlap (the only ones a pass moves), listed
  /// in index order. One pass leaves half of an overlap whose other agent cannot move (a
  /// wall behind it, or pushes from both sides).
  int push_passes = 8;
  int slide_iterations = 4;  ///< 1..kMaxSlideIterations
  /// Wall response: slide along the wall (false), or stop at the contact keeping the
  /// velocity (true: the Godot recipe's move_and_collide).
  bool stop_at_contact = false;
  std::uint32_t layers = kAllLayers;
  /// Time slicing (Lewis): agent i re-steers on steps where (step + i) % interval == 0
  /// and moves on its last decision otherwise. >= 1.
  int decision_interval = 1;
  /// Lewis's time slicing (> 0; 0: off, decision_interval rules): after each decision
  /// every behaviour estimates how long its scores stay valid for the chosen velocity
  /// (Simulation::validity_of) and the agent keeps its decision until the shortest of
  /// those times has elapsed, at most decision_validity seconds (whole steps, at least
  /// one). Needs decision_interval == 1 and no classic steering.
  float decision_validity = 0.0f;
  /// Stuck detection: an agent that stays within stuck_distance of where it was
  /// stuck_time seconds ago is flagged (stuck_time <= 0 disables it).
  float stuck_distance = 0.0f;
  float stuck_time = 0.0f;
};

/// A simulation of the agents of one `Agents` object in one world. Owns every buffer of
/// the step (allocated once for the agents' capacity N and K slots); the step never
/// allocates in steady state (the neighbour grid grows to the largest N seen).
///
/// Determinism: every stage either is serial (grid rebuilds) or writes only rows of the
/// agents its chunk owns while reading state t or read-only buffers of the same stage
/// (double buffering), so results are bit-identical for any thread count.
class Simulation {
 public:
  /// Precondition: k >= kMinSlots, config.max_neighbors <= kMaxNeighbors, config valid.
  /// The slots are the regular ring of K (slot 0 along +x).
  Simulation(Agents& agents, std::size_t k, SteeringConfig config, SimulationParams params)
      : Simulation(agents, SlotSet::ring(k, 0.0), std::move(config), std::move(params)) {}
  /// The same with any slot set (SlotSet::from_directions: e.g. slots denser ahead, for
  /// steering that turns the slots with the heading).
  Simulation(Agents& agents, SlotSet slots, SteeringConfig config, SimulationParams params);

  /// Sets the world (an indexed snapshot, or nullptr for none). Kept alive here.
  /// A world other than the one held (an edit makes a new snapshot) arms a push out of the
  /// walls at the next step or perceive() (push_out_of_walls).
  void set_world(std::shared_ptr<const World> world) {
    if (world_ && world && world.get() != world_.get()) world_edited_ = true;
    world_ = std::move(world);
  }
  /// Point FollowField behaviour `index` at `field` (a rebuilt field, swapped in by the
  /// bindings between steps; the one replaced stays alive while anyone holds it).
  void set_field(std::size_t index, std::shared_ptr<const NavField> field) {
    std::get<FollowField>(config_.behaviours.at(index)).field = std::move(field);
  }
  const World* world() const { return world_.get(); }

  /// Stage 1 for the agents deciding at this step: neighbours, behaviours, combine,
  /// post-process into interest() / danger(). Other agents' rows are left unchanged.
  void perceive();
  /// Stage 2: resolve and choose for the deciding agents (from interest() / danger() as
  /// they are now, possibly edited), then move every alive agent by dt > 0, collide,
  /// push apart, update counters and stuck flags; time += dt, step_count += 1. Without a
  /// perceive() since the last step (a restored simulation, or maps written by hand), the
  /// neighbours that perceive() would have found are found first.
  void decide_and_move(float dt);
  /// `steps` whole steps (perceive + decide_and_move fused per chunk; same results).
  void step(float dt, std::size_t steps);
  /// With a limit L > 0, a move that would carry an alive agent beyond ±L in x or y stops
  /// it at ±L (the edge of the coordinates every call accepts; beyond them every later
  /// call would refuse the agents). 0 (the default) keeps no limit.
  void set_coordinate_limit(float limit) { coordinate_limit_ = limit; }

  /// The time one decision covers at steps of dt: dt, or decision_interval·dt with
  /// round-robin slicing. (With decision_validity a kept decision counts as dt: the
  /// steps it was kept for are not recorded.)
  double decision_time(float dt) const {
    return static_cast<double>(dt) * std::max(params_.decision_interval, 1);
  }

  /// True when agent i re-steers at the current step. Pure. A removed agent's row is
  /// always taken with time slicing too, so that its maps are cleared at once, as they are
  /// when every agent decides (they kept its last decision's maps until its turn).
  bool decides(std::size_t i) const {
    if (kinematic_ && kinematic_[i]) return false;  // moved by its own velocity
    if (!next_decision_.empty())
      return step_count_ >= next_decision_[i] || time_ >= next_time_[i] || !agents_->alive()[i];
    const auto k = static_cast<std::uint64_t>(params_.decision_interval);
    // A new agent decides at once, then waits for its turn: it has no decision of its own
    // to move on (it stood until its turn came, up to decision_interval − 1 steps).
    return k <= 1 || (step_count_ + i) % k == 0 || (!fresh_.empty() && fresh_[i]) ||
           !agents_->alive()[i];
  }

  /// With decision_validity: the step count at which agent i next decides (0 before its
  /// first decision, and for a new agent in a reused slot; earlier if the time it was
  /// kept for has elapsed at a larger dt); nullptr otherwise.
  const std::uint64_t* next_decision() const {
    return next_decision_.empty() ? nullptr : next_decision_.data();
  }
  /// With decision_validity: how long (s) agent i's last decision was estimated to stay
  /// valid, before the cap and the rounding to whole steps (+inf: no behaviour limits
  /// it); nullptr otherwise.
  const float* validity() const { return validity_.empty() ? nullptr : validity_.data(); }

  std::size_t size() const { return n_; }
  std::size_t slots() const { return k_; }
  const SlotSet& slot_set() const { return slot_set_; }
  const SteeringConfig& config() const { return config_; }
  const SimulationParams& params() const { return params_; }
  std::uint64_t step_count() const { return step_count_; }
  double time() const { return time_; }

  float* interest() { return interest_.data(); }  ///< (N,K) combined, post-processed
  float* danger() { return danger_.data(); }      ///< (N,K)
  /// (N,K) after resolve (and, with a speed map, weighted by it: see speed()).
  float* resolved() { return resolved_.data(); }
  /// (N,K) speed map (fractions of max_speed, min over the behaviours writing one), or
  /// nullptr when no behaviour writes one. With a speed map the decision works in
  /// velocity space: resolved values are weighted by speed (and the side preference of
  /// the first CollisionDanger) before choose, and the strength is the chosen slot's speed,
  /// capped by the interest peak (the speed the agent wants).
  float* speed() { return speed_.empty() ? nullptr : speed_.data(); }
  /// Whether a behaviour writes a speed map (speed() is nullptr for one of no agents too).
  bool has_speed_map() const { return velocity_ != nullptr; }
  /// (N,K) hit distance of each slot ray of the first WallDanger as it perceived them in
  /// the last step or perceive() (+inf: clear within its look-ahead; slot frame when
  /// slots turn with the agents), or nullptr without a WallDanger.
  float* sensed() { return sensed_.empty() ? nullptr : sensed_.data(); }
  /// Whether a WallDanger fills sensed() (nullptr for one of no agents too).
  bool has_sensed() const { return sensor_ != nullptr; }
  /// (N,2) position and (N,) heading of each agent when it last perceived (step,
  /// perceive()): the pose its maps and sensed rays belong to (the slot frame of that
  /// heading when slots turn); NaN until an agent first perceives. Pictures of a stepped
  /// simulation draw the maps there, not at the pose after the move.
  float* perceived_position() { return perceived_pos_.data(); }
  float* perceived_heading() { return perceived_head_.data(); }
  float* direction() { return direction_.data(); }            ///< (N,2) world frame, unit or 0
  float* acceleration() { return accel_.data(); }             ///< (N,2) classic steering's output
  float* strength() { return strength_.data(); }              ///< (N,) [0, 1]
  std::int32_t* slot() { return slot_.data(); }               ///< (N,) chosen slot or -1
  std::int32_t* wall_contacts() { return contacts_.data(); }  ///< (N,) steps touching a wall
  std::int32_t* overlaps() { return overlaps_.data(); }       ///< (N,) overlapping neighbours
  std::uint8_t* stuck() { return stuck_.data(); }             ///< (N,) 0/1
  std::uint8_t* braking() { return braking_.data(); }         ///< (N,) 0/1, see MotionOutputs
  double* still_time() { return still_.data(); }              ///< (N,) seconds without progress
  /// (N,K) map of behaviour b (its interest or danger map), or nullptr unless recording.
  float* behaviour_map(std::size_t b);
  /// The neighbour lists the last step's end made for the next step (with run metrics
  /// on, when the steering queries neighbours), for the positions and alive flags as they
  /// were then and the neighbour radius `*radius`; empty when there are none. The next
  /// step uses them if nothing they depend on has changed. For tests and tools.
  NeighborLists prepared_neighbors(float* radius) const {
    if (!lists_ready_) return {};
    if (radius) *radius = lists_radius_;
    return {nb_indices_.data(), nb_counts_.data(), config_.max_neighbors};
  }

  /// Empty when a restored state's indices are a run's (the time, the chosen slots, the
  /// agents yielded to, the metrics' partners); else what is wrong. _set_state refuses the
  /// others.
  std::string check_state() const;
  /// Whether check_state reads the state buffer `name` (a restore copies those first).
  static bool state_checked(std::string_view name) {
    return name == "time" || name == "slot" || name == "yielded_to" ||
           name == "metrics.n_partners" || name == "metrics.partners";
  }

  /// Calls fn(name, data, bytes) for every buffer and scalar that carries state from one
  /// step to the next, the metrics' accumulators included (save/load: a simulation built
  /// with the same configuration, its metrics configured alike, and these bytes copied in
  /// continues bit-identically). Scratch buffers and histories are not included. (Up to 8
  /// random-walk classic Wanders are covered; more is an unheard-of configuration.)
  template <class Fn>
  void for_each_state(Fn&& fn) {
    auto v = [&](const char* name, auto& vec) {
      fn(name, static_cast<void*>(vec.data()), vec.size() * sizeof(vec[0]));
    };
    fn("time", &time_, sizeof time_);
    fn("step_count", &step_count_, sizeof step_count_);
    v("interest", interest_), v("danger", danger_), v("resolved", resolved_);
    v("direction", direction_), v("strength", strength_), v("acceleration", accel_);
    v("speed", speed_), v("slot", slot_), v("contacts", contacts_), v("overlaps", overlaps_);
    v("stuck", stuck_), v("has_memory", has_memory_), v("braking", braking_);
    v("still", still_), v("anchor", anchor_), v("recorded", recorded_);
    v("yielded_to", yielded_to_);                      // make_way only
    v("stood", stood_), v("back_until", back_until_);  // standoff only
    v("sensed", sensed_);  // the sensor's last rays (pictures; with decision_interval > 1 kept)
    v("perceived_position", perceived_pos_), v("perceived_heading", perceived_head_);  // pictures
    v("fresh", fresh_);                   // decision_interval > 1 only
    v("decided_heading", decided_head_);  // hysteresis with rotate only
    v("seen_generation", seen_generation_);
    v("kinematic_seen", kin_seen_);                                // flips not yet seen by a step
    v("next_decision", next_decision_), v("validity", validity_);  // decision_validity only
    v("decided_target", decided_target_);                          // decision_validity only
    v("next_time", next_time_);
    fn("world_edited", &world_edited_, sizeof world_edited_);     // a push out of walls pending
    fn("start_pending", &start_pending_, sizeof start_pending_);  // not stepped yet
    metrics_.for_each_state(fn);
    if (config_.classic) {
      // The random-walk Wanders' orientations (N,2 each), owned with the classic steering.
      static const char* const kWalk[] = {"classic.walk.0", "classic.walk.1", "classic.walk.2",
                                          "classic.walk.3", "classic.walk.4", "classic.walk.5",
                                          "classic.walk.6", "classic.walk.7"};
      std::size_t w = 0;
      for (const classic::Blended& g : config_.classic->groups)
        for (const classic::Behaviour& b : g.behaviours)
          if (const auto* x = std::get_if<classic::Wander>(&b); x && x->walk && w < 8)
            fn(kWalk[w++], static_cast<void*>(x->walk), 2 * n_ * sizeof(double));
    }
  }

  // --- Observation (simulation_observe.cpp): metrics and histories, updated at the end
  // of every step from the committed state.
  /// The run metrics (configured with the defaults at construction).
  Metrics& metrics() { return metrics_; }
  /// Resets the metrics with `params`, taking the current state as the baseline.
  void configure_metrics(const MetricsParams& params);
  /// Records into `history` at its due steps (kept alive here until detached).
  void attach(std::shared_ptr<History> history);
  /// Stops recording into `history` (History::mark_detached; safe from another thread
  /// while a step runs: the step drops it from the list).
  void detach(History* history);
  /// Drops the detached histories from the list (and so their frames, unless someone
  /// else holds them). Not while a step runs: the stepping thread owns the list.
  void prune_histories();
  /// Makes room in every attached history for the frames of the next `steps` steps
  /// (History::make_room); the step calls run it before they change any state. A history
  /// whose buffer would take more than `memory` bytes is refused before any allocation.
  void make_history_room(std::size_t steps,
                         long double memory = std::numeric_limits<long double>::infinity());
  /// Whether make_history_room(steps) would allocate (some attached history grows): the
  /// bindings ask the memory bound, a few file reads, only then.
  bool history_allocates(std::size_t steps) const;

 private:
  void observe();
  struct Plan;  // per-call constants of the stages
  /// The step's inputs; also refreshes kinematic_ (the agents' column when any is set).
  Plan plan();
  void perceive_rows(const Plan& p, std::size_t begin, std::size_t end);
  /// Lewis's validity of agent i's decision just made (direction_, strength_ final,
  /// world frame): the shortest of its behaviours' estimates, seconds, >= 0.
  float validity_of(const Plan& p, std::size_t i) const;
  void decide_rows(const Plan& p, std::size_t begin, std::size_t end);
  void weigh_by_speed(const AgentsView& a, std::size_t begin, std::size_t end,
                      std::size_t step = 1);
  float interest_towards(std::size_t i, Vec2 d) const;
  /// The speed agent i wants, in max-speed units: its interest peak clamped to [0, 1]
  /// (Lewis's speed control; Arrive lowers it near the goal). Inline: four decision
  /// passes ask it per agent. Valid after weigh_by_speed (which finds the peak, peak_).
  float wanted_speed(std::size_t i) const {
    return std::clamp(interest_[i * k_ + peak_[i]], 0.0f, 1.0f);
  }
  void keep_course(const Plan& p, std::size_t begin, std::size_t end, std::size_t step = 1);
  void strength_from_speed(const Plan& p, std::size_t begin, std::size_t end, std::size_t step = 1);
  void cap_retreat(const Plan& p, std::size_t begin, std::size_t end, std::size_t step = 1);
  void keep_inertia(const Plan& p, std::size_t begin, std::size_t end, std::size_t step = 1);
  void settle_at_goal(const Plan& p, std::size_t begin, std::size_t end, std::size_t step = 1);
  /// An agent near its goal that stands in the straight way of a neighbour making no
  /// headway towards its own target steps aside (CollisionDanger::make_way).
  void make_way(const Plan& p, std::size_t begin, std::size_t end, std::size_t step);
  void note_yields(const float* pos, std::size_t begin, std::size_t end);
  /// Of two walkers that have stood side by side in each other's way, the one farther
  /// from its target backs off (CollisionDanger::standoff).
  void break_standoff(const Plan& p, std::size_t begin, std::size_t end, std::size_t step);
  /// Agent i's decision becomes the slot nearest `way` (world frame), within acos(min_cos)
  /// of it, whose speed capped at `cap` is free for the horizon; false (the decision
  /// stands) when none is.
  bool take_slot_towards(const Plan& p, std::size_t i, Vec2 way, float min_cos, float cap);
  /// A standing agent a kinematic agent comes at (standing's time to collision with it
  /// below the horizon) takes the least dangerous moving candidate instead.
  void evade_kinematic(const Plan& p, std::size_t begin, std::size_t end, std::size_t step);
  /// CollisionDanger::past_target leaves a wall or a body standing beyond the target out
  /// because the agent stops at its target; a command too fast to stop short of it
  /// (past_target_hit) when held for the decision's time t and then braked as the motion
  /// model brakes (Accel and Vehicle at max_accel, Lerp by steer_force; from the agent's
  /// speed along the course where that is faster) is slowed to the speed that can
  /// (an interest that does not slow at the target, such as a FollowField without a
  /// slowing radius, or Arrive at 4 m/s, ran agents into it). With
  /// CollisionDanger::brake_at_target the same holds for the target itself: a command
  /// along a course that passes within r_i of it is slowed to stop at its closest
  /// approach.
  /// Whether agent i runs more than its radius at its speed before it stands and is
  /// within that run (and a radius) of its target: keep_course then turns it straight to
  /// a better course (no return_step), for brake_at_target to stop it there.
  bool fast_by_target(const Plan& p, std::size_t i) const;
  void stop_short_past_target(const Plan& p, std::size_t begin, std::size_t end, std::size_t step);
  /// The neighbour radius every behaviour's query shares, for the agents as they are.
  float current_neighbor_radius(const AgentsView& a) const;
  void build_neighbors(Plan& p);
  void move_and_collide(const Plan& p, float dt, bool fused);
  /// step()'s perceive and decide in config_.decision_phases phases (see SteeringConfig).
  void decide_in_phases(const Plan& p);
  /// body(b, e, step) over the agents of [begin, end) that decide now (decides()): rows
  /// b, b + step, ... (< e). At once, runs of consecutive deciding agents (step 1), at most
  /// a block each; in a phase, every phases_-th agent of the range in one call (step
  /// phases_), or each alone (step 1) with time slicing or recorded maps.
  template <class Body>
  void each_deciding(std::size_t begin, std::size_t end, Body&& body) const;
  /// Asks for the lines of the per-agent rows (the maps, neighbour lists and TTC memos) of
  /// the current phase's agents in [b, e) (decide_in_phases).
  void prefetch_phase_rows(std::size_t b, std::size_t e) const;
  // The phase being decided and the number of phases (1: no phases; each_deciding reads them).
  std::size_t phase_ = 0, phases_ = 1;
  /// The agents' kinematic column when any agent is kinematic, else null (plan()).
  const std::uint8_t* kinematic_ = nullptr;
  // (N,2) the velocities the phases perceive: an agent's velocity until its phase has
  // decided, then its new command.
  std::vector<float> seen_velocity_;
  // The steering's FollowFields with a field (BehaviourInputs::ways), found on construction.
  std::vector<const FollowField*> ways_;
  void finish(float dt);
  // After a world edit: every agent a wall (in the simulation's layers) now cuts through is
  // moved out of it along the nearest wall's normal, to its centre's side, by swept moves
  // that slide along other walls (up to 4, for corners); an agent whose centre a polygon or
  // circle now holds leaves it by the nearest of its exits whose way out crosses no other
  // wall and which ends clear of every wall and solid (else it stays). Without it an agent
  // a door closed on stood inside the door for good: every way out read as danger, and the
  // field beside the wall pointed into it.
  void push_out_of_walls();
  bool world_edited_ = false;
  /// The same for agent i alone (push_out_of_walls is it over every agent); without
  /// `overlaps` only a centre inside a solid moves (the exit), not a body overlapping a wall.
  /// Returns whether it moved the agent.
  bool push_out_row(const World& w, std::size_t i, bool overlaps);
  /// CollisionDanger::reachable_target: the targets the steering sees, each where a body of
  /// the agent's radius can stand nearest its target (stand_clear: out of a solid holding
  /// it, then out of the walls it overlaps, by push_out_row's rules); the agents' own
  /// targets are left as they are (the metrics read those). Kept per agent with the target
  /// and radius it was found for and the world's index generation, and found again when
  /// one of them changes. Returns the (N, 2) array, or the agents' targets when off.
  const float* reachable_targets(const AgentsView& a, const World* w);
  // (N,2) the targets seen; (N,4) the x, y, r and steered flag (1 alive and not kinematic)
  // each was found for.
  std::vector<float> reach_target_, reach_of_;
  std::uint64_t reach_generation_ = 0;
  /// The agents renew_slots() found new since the last step (a new generation), and
  /// those the simulation started with, leave the solids holding their centres: one
  /// added inside a pillar stood there for good (every slot's ray read a wall at 0). A
  /// body merely overlapping a wall is left to walk out (the sources' behaviour).
  void push_out_renewed();
  std::vector<std::int32_t> renewed_;
  /// Each agent's kinematic flag at the last renew_slots(): a change forgets its decision.
  std::vector<std::uint8_t> kin_seen_;
  /// Clears agent i's decision, maps, perceived pose and schedule (it decides at its
  /// next step and stands until then): a new agent in the slot, or a kinematic flip.
  void forget_decision(std::size_t i);
  /// With decision_validity, at the start of a step's perception: an agent whose target
  /// (Agents.target) differs, bit for bit, from the one it last decided for (a caller's
  /// or a Detour's write) decides at this step, its blend memory dropped (the estimates
  /// assumed the target stayed: a new goal behind an agent was ignored until the old
  /// decision ran out, and with blend its re-decision was built from the old memory;
  /// fuzz round 13). Fixed here for the whole step, so that perceive() and
  /// decide_and_move() agree on who decides.
  void retarget();
  bool start_pending_ = false;  ///< the first step's push_out_renewed() takes every agent
  // push_passes > 1: the passes after the first (see SimulationParams).
  void settle(float max_radius, const World* world);

  Agents* agents_;
  std::size_t n_, k_;
  SteeringConfig config_;
  SimulationParams params_;
  SlotSet slot_set_;
  std::shared_ptr<const World> world_;
  std::vector<std::size_t> interest_b_, danger_b_;  // behaviour indices by map
  bool needs_neighbors_ = false;

  std::vector<float> interest_, danger_, resolved_, direction_, strength_, accel_, speed_;
  const CollisionDanger* velocity_ = nullptr;  // the first behaviour writing a speed map
  // velocity_'s rows tell its velocity_ttc which agents have no wall in reach
  // (BehaviourInputs::wall_clear); written in perceive, read in decide, within step().
  std::vector<std::uint8_t> wall_clear_;
  // The velocity decision's refinements (strength_from_speed, keep_course, cap_retreat,
  // keep_inertia) ask velocity_ttc of an agent's candidate velocities, often the same one
  // twice (the decision checked, then damped; the kept course, then kept again). Within a
  // decide_rows chunk nothing the answer depends on changes (positions, velocities,
  // neighbour lists, walls), so each agent keeps its last four answers (memo_ttc),
  // cleared at the start of each chunk.
  std::vector<detail::VelocityMemo> ttc_memo_;
  std::vector<std::uint32_t> peak_;  // (N,) each agent's interest peak (first largest slot)
  // (N,) pow(wanted speed, speed_exponent) of each deciding agent, from weigh_by_speed
  // (only when speed_exponent != 1).
  std::vector<float> want_pow_;
  /// Agent i's CollisionDanger horizon this step (collision_horizon: shorter in a dense
  /// crowd with dense_horizon); the refinements' thresholds.
  float horizon_of(const Plan& p, std::size_t i) const;
  float memo_ttc(const Plan& p, std::size_t i, Vec2 v);
  const WallDanger* sensor_ = nullptr;  // the first WallDanger: its rays fill sensed_
  std::vector<float> sensed_;
  bool perceived_ = false;  // perceive() ran since the last step: its neighbour lists hold
  // Each slot's Agents generation when last seen: a change is a new agent in the slot
  // (renew_slots() then clears what the slot's last occupant left).
  std::vector<std::uint32_t> seen_generation_;
  // Lewis's time slicing (decision_validity > 0), else empty: the step count of each
  // agent's next decision, and the validity (s) its last decision was given.
  std::vector<std::uint64_t> next_decision_;
  std::vector<float> validity_;
  // ... and the time by which it decides at the latest (half a step before the step
  // count's, so that with a steady dt the step count rules; a larger dt later cannot
  // stretch a decision beyond its validity by more than one step).
  std::vector<double> next_time_;
  void renew_slots();
  // Neighbour lists of rows b, b + step, ... (< e) from grid_ (perceive, and
  // decide_and_move without a perceive since the last step).
  void find_lists(const AgentsView& a, std::size_t b, std::size_t e, std::size_t step);
  std::vector<float> prev_direction_, prev_strength_;  // (N,2), (N,) commitment scratch
  // (N,4) cos h, sin h, cos(−h), sin(−h) of each deciding agent's heading h, filled at the
  // start of its decision when the slots turn with the heading (velocity decision only):
  // the decision's passes turn vectors between the slot frame and the world several times
  // an agent, each a sin and a cos of the same angle before.
  std::vector<float> frame_;
  Vec2 to_world(Vec2 v, std::size_t i) const {  // turned(v, h), bit for bit
    const float* f = frame_.data() + 4 * i;
    return {f[0] * v.x - f[1] * v.y, f[1] * v.x + f[0] * v.y};
  }
  Vec2 to_slots(Vec2 v, std::size_t i) const {  // turned(v, −h), bit for bit
    const float* f = frame_.data() + 4 * i;
    return {f[2] * v.x - f[3] * v.y, f[3] * v.x + f[2] * v.y};
  }
  std::vector<float> held_;  // (N,) a danger value set aside during resolve (hysteresis)
  // (N,) the heading of each agent's last decision, NaN before it (hysteresis with slots
  // that turn with the heading only).
  std::vector<float> decided_head_;
  // (N,2) the target of each agent's last decision (decision_validity only; the targets
  // when the simulation was built before it).
  std::vector<float> decided_target_;
  std::vector<std::int32_t> slot_, contacts_, overlaps_;
  std::vector<std::uint8_t> stuck_, has_memory_, braking_;
  std::vector<double> still_;  // summed in double: a float32 sum of dt falls behind
  std::vector<float> anchor_;
  // make_way: the neighbour each agent last stepped aside for, until it is home again
  // (-1: none), committed at the end of the step from yield_new_ (written by the decision
  // phases; -1: no step aside this step).
  std::vector<std::int32_t> yielded_to_, yield_new_;
  // standoff: seconds each agent has stood (slower than kStandoffSpeed, summed in double as
  // still_), updated at the end of the step; and the time until which it backs off (its
  // own row, written by the decision phases; 0: not backing off).
  std::vector<double> stood_, back_until_;
  std::vector<float> recorded_;  // (B, N, K) when recording
  std::vector<float> next_pos_, next_vel_, next_head_;
  std::vector<float> perceived_pos_, perceived_head_;  // pose at the last perception (N,2), (N,)
  float coordinate_limit_ = 0.0f;                      // see set_coordinate_limit
  // decision_interval > 1: 1 for an agent that has not decided yet (decides at once).
  std::vector<std::uint8_t> fresh_;
  NeighborGrid grid_, push_grid_, settle_grid_;
  // settle(): which agents overlapped in the first push-apart pass (then the later passes'
  // marks), the positions a later pass reads, the agents that overlapped at the start of
  // the last pass, and a pass's agents.
  std::vector<std::uint8_t> touched_;
  std::vector<float> settle_pos_;
  std::vector<std::int32_t> settle_list_, settle_next_;
  std::vector<std::int32_t> nb_indices_, nb_counts_;
  float neighbor_radius_ = 0.0f;
  // With run metrics on, observe() prepares answers for the next step from the metrics'
  // queries: the neighbour lists (one grid visit for both) and each agent's nearest wall
  // (NearestWalls, for the slot wall sensors). They are used while the agents' positions
  // and alive flags are these copies, bit for bit (and, for the lists, the neighbour
  // radius is lists_radius_; for the walls, the world and its index are the same): they
  // are then exactly what the step's own queries would return.
  bool prepared_ = false;     // prepared_pos_ / prepared_alive_ hold that state
  bool lists_ready_ = false;  // the lists hold every row for it
  bool use_lists_ = false;    // this step's build_neighbors found them valid
  bool walls_ready_ = false;  // near_ holds every alive agent's nearest wall for it
  float lists_radius_ = 0.0f;
  const World* walls_world_ = nullptr;
  std::uint64_t walls_generation_ = 0;
  std::vector<float> prepared_pos_;
  std::vector<std::uint8_t> prepared_alive_;
  std::vector<float> near_distance_, near_normal_, near_reach_;
  std::vector<std::int32_t> near_obstacle_;
  NearestWalls near_;
  Metrics metrics_;
  std::vector<std::shared_ptr<History>> histories_;
  std::uint64_t step_count_ = 0;
  double time_ = 0.0;
};

}  // namespace contextsteer
