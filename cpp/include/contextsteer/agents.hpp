// SPDX-License-Identifier: MIT
// Agents: fixed-capacity structure-of-arrays state of every agent, and its read-only view.
#pragma once

/// # The simulation step (implemented in simulation.hpp / simulation.cpp)
///
/// One step advances every alive agent from state t to state t+1. State t lives in an
/// `Agents` object; the step writes t+1 into separate buffers and commits them only in
/// its last stage (double buffering), so any agent's result depends only on state t,
/// never on the order or the thread in which other agents were processed. Per step:
///
/// 1. `NeighborGrid::rebuild` over alive agents (serial, O(N), buffers reused) with the
///    largest radius among the behaviours that need neighbours (shared_neighbor_radius).
/// 2. `parallel_for` over agents in chunks; for each block [begin, end) of agents that
///    decide at this step (time slicing):
///    a. `find_neighbors_rows`, then every behaviour b: `evaluate_rows(b, inputs, maps_b,
///       begin, end)` into its own rows — recorded (N,K) buffers, or block-local scratch;
///    b. combine interest / danger (engine), spread, temporal blend → interest, danger;
///    c. resolve, choose (engine) → direction (N,2), strength (N,), slot (N,);
///    then for every agent of the chunk: `move_rows` (motion.hpp) into the t+1 buffers
///    and `collide_rows` (collide.hpp): the swept circle from p_t to p_t+1 against the
///    walls, sliding.
/// 3. A grid over the t+1 positions (serial); `parallel_for`: `push_apart_rows` reads the
///    t+1 positions of any agent and writes agent i's own committed state (position,
///    velocity, heading) and counters; then, only where that pass found overlaps, the
///    later push-apart passes (`SimulationParams::push_passes`: `parallel_for` over lists
///    built serially in index order); `parallel_for`: stuck flags.
///
/// Every function called inside the chunk loops is a serial row-range kernel that reads
/// only read-only inputs of its stage and writes only rows [begin, end): reentrant,
/// allocation-free (per-thread scratch grows once), exception-free. Randomness is
/// counter-based (cpp/src/random.hpp: per-agent seed × time), never a shared generator.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "contextsteer/common.hpp"

namespace contextsteer {

/// Position (or any 2-vector) i of a flat (N,2) float array. Pure.
inline Vec2 load2(const float* a, std::size_t i) { return {a[2 * i], a[2 * i + 1]}; }
/// Writes v into row i of a flat (N,2) float array.
inline void store2(float* a, std::size_t i, Vec2 v) {
  a[2 * i] = v.x;
  a[2 * i + 1] = v.y;
}

/// Read-only view of the state of `size` agent slots (dead slots included; check
/// `alive`). All arrays have `size` rows; (N,2) arrays are flat x,y pairs. Units: world
/// length, seconds, radians (heading measured counter-clockwise from +x).
struct AgentsView {
  std::size_t size = 0;
  const float* position = nullptr;       ///< (N,2)
  const float* velocity = nullptr;       ///< (N,2) world length per second
  const float* heading = nullptr;        ///< (N,) radians
  const float* radius = nullptr;         ///< (N,) >= 0
  const float* max_speed = nullptr;      ///< (N,) >= 0, length per second
  const float* max_accel = nullptr;      ///< (N,) >= 0, length per second²
  const float* max_turn_rate = nullptr;  ///< (N,) >= 0, radians per second
  const float* steer_force = nullptr;    ///< (N,) in [0, 1]: Godot lerp factor per step
  const std::int32_t* group = nullptr;   ///< (N,) team / group id
  const std::uint8_t* alive = nullptr;   ///< (N,) 1 alive, 0 free slot
  const float* target = nullptr;         ///< (N,2) per-agent goal position
  const std::uint64_t* rng = nullptr;    ///< (N,) per-agent random state / noise key
  /// (N,) how many times add() claimed each slot: a change tells a new agent in a reused
  /// slot (the metrics start its accumulators afresh). Null: not tracked.
  const std::uint32_t* generation = nullptr;
  /// (N,) 1 where the agent is kinematic: moved by its own velocity, never steered or
  /// pushed (see Agents). Null: none is.
  const std::uint8_t* kinematic = nullptr;
  /// (N,) 1 where the agent's target is a waypoint, a point on its way (a detour's
  /// corner, a place to stand aside), not its goal: CollisionDanger's past_target does
  /// not hold for it (it does not stop there), nor do the metrics count arriving there.
  /// Null: every target is a goal.
  const std::uint8_t* waypoint = nullptr;
};

/// True when agent i of `a` is kinematic. Pure.
inline bool is_kinematic(const AgentsView& a, std::size_t i) {
  return a.kinematic != nullptr && a.kinematic[i] != 0;
}

/// Initial values of agents being added: `n` rows each, (N,2) arrays flat.
struct AgentInit {
  std::size_t n = 0;
  const float* position = nullptr;
  const float* velocity = nullptr;
  const float* heading = nullptr;
  const float* radius = nullptr;
  const float* max_speed = nullptr;
  const float* max_accel = nullptr;
  const float* max_turn_rate = nullptr;
  const float* steer_force = nullptr;
  const std::int32_t* group = nullptr;
  const float* target = nullptr;
  const std::uint8_t* kinematic = nullptr;  ///< null: none of them is kinematic
};

/// Structure-of-arrays state of up to `capacity` agents. Storage is allocated once in
/// the constructor and never reallocated, so pointers (and NumPy views) stay valid for
/// the object's lifetime. A slot is in use when `alive[i] != 0`.
class Agents {
 public:
  /// Allocates every array for `capacity` slots, all dead; `seed` keys the per-agent
  /// RNG states (see agent_seed).
  Agents(std::size_t capacity, std::uint64_t seed);

  std::size_t capacity() const { return capacity_; }
  std::uint64_t seed() const { return seed_; }
  /// Number of alive slots (a scan: `alive` is writable from Python). Pure.
  std::size_t count() const;

  /// Claims the `init.n` lowest free slots, writes their indices to `ids` (size n) in
  /// ascending order, fills them from `init`, marks them alive, resets their RNG
  /// state to agent_seed(seed, id), counts the claim in `generation` and marks their
  /// targets goals (waypoint 0). Returns false and changes nothing when fewer than n
  /// slots are free. Values must already be validated (finite, non-negative sizes).
  bool add(const AgentInit& init, std::span<std::int32_t> ids);

  /// Marks the given slots dead (indices must be < capacity; the caller checks).
  void remove(std::span<const std::int32_t> ids);

  /// Read-only view for kernels.
  AgentsView view() const;

  float* position() { return position_.data(); }
  float* velocity() { return velocity_.data(); }
  float* heading() { return heading_.data(); }
  float* radius() { return radius_.data(); }
  float* max_speed() { return max_speed_.data(); }
  float* max_accel() { return max_accel_.data(); }
  float* max_turn_rate() { return max_turn_rate_.data(); }
  float* steer_force() { return steer_force_.data(); }
  std::int32_t* group() { return group_.data(); }
  std::uint8_t* alive() { return alive_.data(); }
  float* target() { return target_.data(); }
  std::uint64_t* rng() { return rng_.data(); }
  std::uint32_t* generation() { return generation_.data(); }
  /// (N,) 1 where the agent is kinematic: the simulation moves it by its own velocity
  /// (swept against the walls), never steers it, and push-apart never moves it (its
  /// partner takes the whole overlap); others see it as any neighbour.
  std::uint8_t* kinematic() { return kinematic_.data(); }
  /// (N,) 1 where the agent's target is a waypoint, not its goal (AgentsView::waypoint);
  /// add() clears it.
  std::uint8_t* waypoint() { return waypoint_.data(); }

 private:
  std::size_t capacity_;
  std::uint64_t seed_;
  std::vector<float> position_, velocity_, heading_, radius_, max_speed_, max_accel_,
      max_turn_rate_, steer_force_, target_;
  std::vector<std::int32_t> group_;
  std::vector<std::uint8_t> alive_, kinematic_, waypoint_;
  std::vector<std::uint64_t> rng_;
  std::vector<std::uint32_t> generation_;
};

}  // namespace contextsteer
