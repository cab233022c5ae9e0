// SPDX-License-Identifier: MIT
// Motion models: turn a chosen direction and strength into the next position, velocity
// and heading of every agent (state t in, state t+1 out: double buffering).
#pragma once

#include <cstddef>
#include <cstdint>
#include <variant>

#include "contextsteer/agents.hpp"

namespace contextsteer {

/// Godot recipe: desired = d̂·max_speed·σ with σ = strength (`full_speed` false) or 1
/// (`full_speed`: the recipe's `chosen_dir * max_speed`, whatever the interest);
/// v' = v + (desired − v)·steer_force (per step, frame-rate dependent as in the recipe);
/// |v'| clamped to max_speed; heading' = angle(v') (kept when |v'| = 0); p' = p + v'·dt.
/// `steer_force` < 0 uses each agent's own steer_force.
struct Lerp {
  float steer_force = -1.0f;
  bool full_speed = false;
};

/// gdx-ai style: acceleration a = (desired − v)/time_to_target, |a| <= max_accel;
/// v' = v + a·dt, |v'| <= max_speed; p' = p + v'·dt. time_to_target <= 0 means dt
/// (reach the desired velocity in one step when the acceleration allows). Facing: the
/// heading snaps to the velocity direction, or with `independent_facing` turns towards
/// it at most max_turn_rate·dt (gdx-ai LookWhereYouAreGoing); kept when stopped.
/// `full_speed`: desired = d̂·max_speed (strength ignored). `gdx_order` (gdx-ai's
/// applySteering): p' = p + v·dt with the *old* velocity, then v' = v + a·dt, |v'| <=
/// max_speed, with a not capped at max_accel (gdx-ai leaves that to the behaviours).
struct Accel {
  float time_to_target = 0.0f;
  bool independent_facing = false;
  bool full_speed = false;
  bool gdx_order = false;
};

/// Car-like vehicle: velocity always along the heading (no reverse, no side slip).
/// Heading turns towards the chosen direction by at most max_turn_rate·dt·g, where
/// g = min(1, speed/(full_turn_speed·max_speed)) — no turning while stopped
/// (full_turn_speed <= 0 disables the scaling). Fray's brake rule: when the chosen
/// direction is more than `brake_angle` off the heading, the target speed drops to
/// brake_speed·max_speed·strength (a crawl that still lets a stopped car turn round;
/// brake_speed = 0 stops dead); otherwise it is max_speed·strength, and 0 when no
/// direction was chosen. Speed moves towards the target by at most max_accel·dt.
/// `full_speed`: strength is taken as 1.
struct Vehicle {
  float brake_angle = 1.5707963267948966f;  ///< radians in [0, π]
  float full_turn_speed = 0.25f;            ///< fraction of max_speed, >= 0
  float brake_speed = 0.1f;                 ///< fraction of max_speed in [0, 1]
  bool full_speed = false;
};

/// Any motion model.
using MotionModel = std::variant<Lerp, Accel, Vehicle>;

/// Inputs of a move: state t of the agents, the chosen direction (N,2) (normalised here
/// when non-zero; zero means "no direction": stop steering, slow down) and strength
/// (N,) (clamped to [0, 1]), and the time step dt > 0 in seconds.
struct MotionInputs {
  AgentsView agents;
  const float* direction = nullptr;
  const float* strength = nullptr;
  float dt = 0.0f;
};

/// State t+1, (N,2) / (N,) buffers distinct from the agents' own arrays, and optionally
/// the brake flag (N,): 1 where Fray's brake rule slowed the agent (Vehicle, the chosen
/// direction more than brake_angle off the heading), 0 elsewhere (always 0 for Lerp and
/// Accel, and for dead agents).
struct MotionOutputs {
  float* position = nullptr;
  float* velocity = nullptr;
  float* heading = nullptr;
  std::uint8_t* braking = nullptr;  ///< optional
};

/// Writes rows [begin, end) of the next state; dead agents are copied unchanged.
/// Guarantees for alive agents with finite inputs: finite outputs, |v'| <= max_speed,
/// and (Vehicle, Accel with independent facing) |Δheading| <= max_turn_rate·dt.
/// Headings are wrapped to (−π, π]. Serial, allocation-free, reentrant.
void move_rows(const MotionModel& model, const MotionInputs& in, const MotionOutputs& out,
               std::size_t begin, std::size_t end);

/// move_rows over all agents through parallel_for.
void move(const MotionModel& model, const MotionInputs& in, const MotionOutputs& out);

/// Angle wrapped to (−π, π]. Pure.
float wrap_angle(float a);

}  // namespace contextsteer
