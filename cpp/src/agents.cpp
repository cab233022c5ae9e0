// SPDX-License-Identifier: MIT
// Agents: allocation at construction, slot claiming and release.
#include "contextsteer/agents.hpp"

#include "random.hpp"

namespace contextsteer {

Agents::Agents(std::size_t capacity, std::uint64_t seed)
    : capacity_(capacity),
      seed_(seed),
      position_(2 * capacity, 0.0f),
      velocity_(2 * capacity, 0.0f),
      heading_(capacity, 0.0f),
      radius_(capacity, 0.0f),
      max_speed_(capacity, 0.0f),
      max_accel_(capacity, 0.0f),
      max_turn_rate_(capacity, 0.0f),
      steer_force_(capacity, 0.0f),
      target_(2 * capacity, 0.0f),
      group_(capacity, 0),
      alive_(capacity, 0),
      kinematic_(capacity, 0),
      waypoint_(capacity, 0),
      rng_(capacity, 0),
      generation_(capacity, 0) {
  for (std::size_t i = 0; i < capacity; ++i) rng_[i] = agent_seed(seed, i);
}

std::size_t Agents::count() const {
  std::size_t n = 0;
  for (std::uint8_t a : alive_) n += a != 0;
  return n;
}

bool Agents::add(const AgentInit& init, std::span<std::int32_t> ids) {
  CONTEXTSTEER_ASSERT(ids.size() == init.n);
  // The lowest free slots, found in one pass that reads each flag once: another thread
  // may be writing the alive view (a NumPy copy releases the GIL), and a scan for each
  // slot after a count of them ran past the arrays' end when it filled up in between.
  std::size_t found = 0;
  for (std::size_t i = 0; i < capacity_ && found < init.n; ++i)
    if (!alive_[i]) ids[found++] = static_cast<std::int32_t>(i);
  if (found < init.n) return false;
  for (std::size_t r = 0; r < init.n; ++r) {
    const auto i = static_cast<std::size_t>(ids[r]);
    store2(position_.data(), i, load2(init.position, r));
    store2(velocity_.data(), i, load2(init.velocity, r));
    store2(target_.data(), i, load2(init.target, r));
    heading_[i] = init.heading[r];
    radius_[i] = init.radius[r];
    max_speed_[i] = init.max_speed[r];
    max_accel_[i] = init.max_accel[r];
    max_turn_rate_[i] = init.max_turn_rate[r];
    steer_force_[i] = init.steer_force[r];
    group_[i] = init.group[r];
    kinematic_[i] = init.kinematic && init.kinematic[r] ? 1 : 0;
    waypoint_[i] = 0;
    rng_[i] = agent_seed(seed_, i);
    ++generation_[i];  // wraps after 2^32 claims of one slot: still a change
    alive_[i] = 1;
  }
  return true;
}

void Agents::remove(std::span<const std::int32_t> ids) {
  for (std::int32_t i : ids) {
    CONTEXTSTEER_ASSERT(i >= 0 && static_cast<std::size_t>(i) < capacity_);
    alive_[static_cast<std::size_t>(i)] = 0;
  }
}

AgentsView Agents::view() const {
  AgentsView v;
  v.size = capacity_;
  v.position = position_.data();
  v.velocity = velocity_.data();
  v.heading = heading_.data();
  v.radius = radius_.data();
  v.max_speed = max_speed_.data();
  v.max_accel = max_accel_.data();
  v.max_turn_rate = max_turn_rate_.data();
  v.steer_force = steer_force_.data();
  v.group = group_.data();
  v.alive = alive_.data();
  v.target = target_.data();
  v.rng = rng_.data();
  v.generation = generation_.data();
  v.kinematic = kinematic_.data();
  v.waypoint = waypoint_.data();
  return v;
}

}  // namespace contextsteer
