// SPDX-License-Identifier: MIT
// Motion models (Godot lerp, gdx-ai acceleration limits, car-like vehicle).
#include "contextsteer/motion.hpp"

#include <algorithm>
#include <cmath>

#include "parallel.hpp"

namespace contextsteer {

namespace {

constexpr float kPi = 3.14159265358979323846f;

/// v scaled down to length <= limit. Pure.
Vec2 clamp_length(Vec2 v, float limit) {
  const float l = length(v);
  if ((!std::isfinite(l) || l == 0.0f) && std::isfinite(v.x) && std::isfinite(v.y) &&
      (v.x != 0.0f || v.y != 0.0f)) {
    // x² + y² overflowed float32 (|v| beyond 1.8e19: a velocity change over a tiny
    // time_to_target) or underflowed to 0 (|v| below about 1e-19, where a limit of 0 or
    // 1e-30 was not enforced); the same scaling in double.
    const double ld = std::sqrt(double(v.x) * v.x + double(v.y) * v.y);
    if (!(ld > limit)) return v;
    const double s = limit / ld;
    return {static_cast<float>(v.x * s), static_cast<float>(v.y * s)};
  }
  return l > limit && l > 0.0f ? v * (limit / l) : v;
}

/// Heading turned from h towards angle `goal` by at most max_step (radians, >= 0).
// Angles differ from exact ones by the float rounding of absolute angles (atan2 of a
// direction turned by the heading, the heading itself): up to ~1e-6 rad. Rules at an exact
// angle (a goal straight behind, a slot exactly brake_angle off) allow this much.
constexpr float kAngleSlack = 1e-5f;

// The turn from h to a goal delta radians away, wrapped: a goal straight behind (within the
// slack of ±π) turns counter-clockwise whatever the heading. Rounding chose the side
// before, so a scene and its rotated copy made opposite U-turns.
float turn_delta(float delta) { return std::fabs(delta) > kPi - kAngleSlack ? kPi : delta; }

float turn_towards(float h, float goal, float max_step) {
  const float delta = turn_delta(wrap_angle(goal - h));
  return wrap_angle(h + std::clamp(delta, -max_step, max_step));
}

struct Step {
  Vec2 dir;        // unit or zero
  float strength;  // [0, 1]
};

Step step_input(const MotionInputs& in, std::size_t i, bool full_speed) {
  Vec2 d = load2(in.direction, i);
  const float l = length(d);
  if (l >= 1e-15f && std::isfinite(l)) {
    d = d * (1.0f / l);
  } else {
    // x² + y² underflows float32 below about 1e-19 (and 1/l overflows for subnormal l):
    // a tiny direction is still a direction, normalised in double.
    const double ld = std::sqrt(double(d.x) * d.x + double(d.y) * d.y);
    d = ld > 0.0 && std::isfinite(ld)
            ? Vec2{static_cast<float>(d.x / ld), static_cast<float>(d.y / ld)}
            : Vec2{};
  }
  if (full_speed) return {d, 1.0f};
  const float s = std::clamp(in.strength[i], 0.0f, 1.0f);
  return {d, std::isfinite(s) ? s : 0.0f};
}

void move_one(const Lerp& m, const MotionInputs& in, std::size_t i, Vec2& v, float& h, bool&) {
  const AgentsView& a = in.agents;
  const Step s = step_input(in, i, m.full_speed);
  const float force =
      std::clamp(m.steer_force >= 0.0f ? m.steer_force : a.steer_force[i], 0.0f, 1.0f);
  const Vec2 desired = s.dir * (a.max_speed[i] * s.strength);
  v = clamp_length(v + (desired - v) * force, a.max_speed[i]);
  if (has_direction(v, a.max_speed[i])) h = std::atan2(v.y, v.x);
}

void move_one(const Accel& m, const MotionInputs& in, std::size_t i, Vec2& v, float& h, bool&) {
  const AgentsView& a = in.agents;
  const Step s = step_input(in, i, m.full_speed);
  const float vmax = a.max_speed[i];
  const Vec2 desired = s.dir * (vmax * s.strength);
  const float ttt = m.time_to_target > 0.0f ? m.time_to_target : in.dt;
  // dt = 0 (and no time_to_target): no time passes, the velocity cannot change.
  Vec2 accel{};
  if (ttt > 0.0f) {
    accel = (desired - v) * (1.0f / ttt);
    if (!m.gdx_order) accel = clamp_length(accel, a.max_accel[i]);
  }
  const Vec2 next = v + accel * in.dt;
  if (std::isfinite(next.x) && std::isfinite(next.y)) {
    v = clamp_length(next, vmax);
  } else {
    // An uncapped acceleration (position_first) over a tiny time_to_target times a long
    // dt overflows float32: the same update in double, then limited to max_speed.
    const double k = double(in.dt) / ttt;
    const double nx = v.x + (double(desired.x) - v.x) * k, ny = v.y + (double(desired.y) - v.y) * k;
    const double nl = std::sqrt(nx * nx + ny * ny);
    const double f = nl > vmax && nl > 0.0 ? vmax / nl : 1.0;
    v = {static_cast<float>(nx * f), static_cast<float>(ny * f)};
  }
  if (has_direction(v, vmax)) {
    const float goal = std::atan2(v.y, v.x);
    h = m.independent_facing ? turn_towards(h, goal, a.max_turn_rate[i] * in.dt) : goal;
  }
}

void move_one(const Vehicle& m, const MotionInputs& in, std::size_t i, Vec2& v, float& h,
              bool& braking) {
  const AgentsView& a = in.agents;
  const Step s = step_input(in, i, m.full_speed);
  const float vmax = a.max_speed[i];
  // The speed along the heading. A velocity more than 90° off it (a shove, a bounce, one
  // the caller wrote) is the car rolling backwards: a negative speed that max_accel brings
  // back towards the target (it was taken at its length, forwards: from -30 to +30 m/s in
  // one step; fuzz round 13). Within 90°, the length as before.
  const Vec2 ahead{std::cos(h), std::sin(h)};
  const float along = v.x * ahead.x + v.y * ahead.y;
  const float speed = along < 0.0f ? std::max(along, -vmax) : std::min(length(v), vmax);
  const bool steering = s.dir.x != 0.0f || s.dir.y != 0.0f;
  float delta = 0.0f, target_speed = 0.0f;
  if (steering) {
    delta = turn_delta(wrap_angle(std::atan2(s.dir.y, s.dir.x) - h));
    // More than brake_angle off by more than rounding: a slot exactly brake_angle off the
    // heading (±90° on a ring of 4k slots turned with the heading, the default) braked on
    // 199 of 720 headings and not on the others.
    braking = std::fabs(delta) > m.brake_angle + kAngleSlack;
    target_speed = vmax * s.strength * (braking ? m.brake_speed : 1.0f);
  }
  const float dv =
      std::clamp(target_speed - speed, -a.max_accel[i] * in.dt, a.max_accel[i] * in.dt);
  const float next = std::clamp(speed + dv, std::min(speed, 0.0f), vmax);
  if (steering) {
    // The grip comes from the speed the car had, or the speed it rolls at this step when
    // that is more: a car stopped nose-first against a wall (the slide had zeroed its
    // speed) could not turn, drove or crawled into the wall and stayed there.
    const float grip_speed = std::max(std::fabs(speed), std::fabs(next));
    float grip = 1.0f;
    if (m.full_turn_speed > 0.0f) {
      // (full_turn_speed·max_speed may underflow to 0: then any speed at all grips fully,
      // and a stopped car still cannot turn; 0/0 was NaN, which min read as full grip.)
      const float full = m.full_turn_speed * vmax;
      grip = !(vmax > 0.0f)      ? 0.0f
             : full > 0.0f       ? std::min(1.0f, grip_speed / full)
             : grip_speed > 0.0f ? 1.0f
                                 : 0.0f;
    }
    const float max_step = a.max_turn_rate[i] * in.dt * grip;
    h = wrap_angle(h + std::clamp(delta, -max_step, max_step));
  }
  v = Vec2{std::cos(h), std::sin(h)} * next;
}

// gdx-ai's applySteering moves with the old velocity, then updates it.
bool position_first(const Accel& m) { return m.gdx_order; }
template <class M>
bool position_first(const M&) {
  return false;
}

}  // namespace

float wrap_angle(float a) {
  if (!std::isfinite(a)) return 0.0f;
  // remainder gives [−π, π]; map −π to π so the range is (−π, π].
  float r = std::remainder(a, 2.0f * kPi);
  if (r <= -kPi) r += 2.0f * kPi;
  if (r > kPi) r -= 2.0f * kPi;
  return r;
}

void move_rows(const MotionModel& model, const MotionInputs& in, const MotionOutputs& out,
               std::size_t begin, std::size_t end) {
  std::visit(
      [&](const auto& m) {
        const AgentsView& a = in.agents;
        for (std::size_t i = begin; i < end; ++i) {
          Vec2 p = load2(a.position, i);
          Vec2 v = load2(a.velocity, i);
          float h = a.heading[i];
          bool braking = false;
          if (a.alive[i] && is_kinematic(a, i)) {
            p = p + v * in.dt;  // moved by its own velocity; heading and velocity kept
          } else if (a.alive[i]) {
            const Vec2 v0 = v;
            move_one(m, in, i, v, h, braking);
            h = wrap_angle(h);
            p = p + (position_first(m) ? v0 : v) * in.dt;
          }
          store2(out.position, i, p);
          store2(out.velocity, i, v);
          out.heading[i] = h;
          if (out.braking) out.braking[i] = braking ? 1 : 0;
        }
      },
      model);
}

void move(const MotionModel& model, const MotionInputs& in, const MotionOutputs& out) {
  parallel_for(in.agents.size, 256,
               [&](std::size_t b, std::size_t e) { move_rows(model, in, out, b, e); });
}

}  // namespace contextsteer
