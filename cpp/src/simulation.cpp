// SPDX-License-Identifier: MIT
// The simulation step: stages over chunks of agents, double-buffered agent state.
#include "contextsteer/simulation.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <numbers>
#include <type_traits>
#include <variant>
#include <span>

#include "batch.hpp"
#include "contextsteer/collide.hpp"
#include "contextsteer/geometry.hpp"
#include "contextsteer/nearest.hpp"
#include "exp_float.hpp"
#include "parallel.hpp"
#include "slot_search.hpp"
#include "thread_scratch.hpp"

namespace contextsteer {

namespace {

// Rows handed to one pipeline call: small enough that a block's maps stay in L1/L2.
constexpr std::size_t kBlock = 64;
// Agents per parallel chunk (at least).
constexpr std::size_t kGrain = 128;
// Deciding agents of one phase per parallel chunk (at least): a phase holds 1/P of the
// agents, and kGrain · P indices (the grain before) kept every crowd under 2,049 agents
// (P = 16) on one thread. A decision in a dense crowd costs about 10 us (RiMEA 9's room
// of 1,000), so 16 of them outweigh a hand-out: the room's phases go out in four chunks,
// which the two threads share unevenly as the room's halves need (32 a chunk, two
// chunks, ran 8.6-9.6 ms a step there against 7.1-7.3; 8 a chunk was slower than one
// thread; bench_evacuation.py).
constexpr std::size_t kPhaseGrain = 16;
// CollisionDanger::standoff: an agent slower than this (m/s) stands (Simulation::stood_).
constexpr float kStandoffSpeed = 0.05f;
// lateral_cost's least factor on a slot's worth (weigh_by_speed): a safe side step keeps
// some worth, however large the cost.
constexpr float kLateralFloor = 1.0f / 64.0f;

// v turned counter-clockwise by h: from an agent's slot frame (heading h) to the world.
Vec2 turned(Vec2 v, float h) {
  const float c = std::cos(h), s = std::sin(h);
  return {c * v.x - s * v.y, s * v.x + c * v.y};
}

/// std::pow(x, g) for speed fractions x and one exponent g, bit for bit, remembering the
/// answers: a slot's speed is mostly one of CollisionDanger's few levels m/S, so most
/// answers come from the table (64 entries, direct-mapped by the value's bits) and the
/// rest from the call. pow(1, g) = 1 exactly, so the empty table holds 1 → 1. Take it
/// with speed_pow_for(g) once a pass (the per-thread table is reached through a call, and
/// the exponent is checked there, not per value).
class SpeedPow {
 public:
  float operator()(float x) {
    const auto bits = std::bit_cast<std::uint32_t>(x);
    const std::uint32_t slot = (bits * 0x9E3779B1u) >> 26;
    if (key_[slot] != bits) {
      key_[slot] = bits;
      value_[slot] = std::pow(x, g_);
    }
    return value_[slot];
  }
  void use(float g) {
    if (std::bit_cast<std::uint32_t>(g) == std::bit_cast<std::uint32_t>(g_)) return;
    g_ = g;
    key_.fill(std::bit_cast<std::uint32_t>(1.0f));
    value_.fill(1.0f);
  }

 private:
  float g_ = 1.0f;
  std::array<std::uint32_t, 64> key_{};
  std::array<float, 64> value_{};
};

SpeedPow& speed_pow_for(float g) {
  SpeedPow& memo = detail::thread_scratch<SpeedPow, SpeedPow>();
  memo.use(g);
  return memo;
}

/// Whether unit headings a and b are the same up to rounding (within 1e-4 rad): a course
/// kept from the last step, turned to the world frame and back, is not bit for bit the
/// slot it was.
bool same_heading(Vec2 a, Vec2 b) {
  return a.x * b.x + a.y * b.y > 0.0f && std::fabs(a.x * b.y - a.y * b.x) <= 1e-4f;
}

/// Whether d is exactly slot q's direction (dir: (K,2) flat).
bool same(Vec2 d, const float* dir, std::size_t q) {
  return d.x == dir[2 * q] && d.y == dir[2 * q + 1];
}

/// Calls body(b, e) over the runs of consecutive deciding agents of [begin, end), at most
/// kBlock rows each.
template <class Decides, class Body>
void for_deciding(std::size_t begin, std::size_t end, Decides&& decides, Body&& body) {
  std::size_t i = begin;
  while (i < end) {
    while (i < end && !decides(i)) ++i;
    std::size_t e = i;
    while (e < end && e - i < kBlock && decides(e)) ++e;
    if (e > i) body(i, e);
    i = e;
  }
}

/// f(b, e) over rows b, b + step, ... (< e) for a kernel that takes consecutive rows only:
/// once for step 1, else once per row.
template <class F>
void consecutive_runs(std::size_t b, std::size_t e, std::size_t step, F&& f) {
  if (step == 1) {
    f(b, e);
    return;
  }
  for (std::size_t i = b; i < e; i += step) f(i, i + 1);
}

/// Asks for the cache lines of [p, p + bytes) into L2, ahead of a read or a write.
inline void prefetch_lines(const void* p, std::size_t bytes) {
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  for (std::uintptr_t l = at & ~std::uintptr_t{63}; l < at + bytes; l += 64)
    __builtin_prefetch(reinterpret_cast<const void*>(l), 1, 2);
}

}  // namespace

void Simulation::prefetch_phase_rows(std::size_t b, std::size_t e) const {
  const std::size_t k = k_, m = config_.max_neighbors, p = phases_;
  for (std::size_t i = b + (phase_ + p - b % p) % p; i < e; i += p) {
    if (!nb_indices_.empty()) prefetch_lines(nb_indices_.data() + i * m, m * sizeof(std::int32_t));
    for (const std::vector<float>* v : {&interest_, &danger_, &resolved_, &speed_})
      if (!v->empty()) prefetch_lines(v->data() + i * k, k * sizeof(float));
    if (!ttc_memo_.empty()) prefetch_lines(&ttc_memo_[i], sizeof(detail::VelocityMemo));
  }
}

template <class Body>
void Simulation::each_deciding(std::size_t begin, std::size_t end, Body&& body) const {
  const auto one_run = [&](std::size_t b, std::size_t e) { body(b, e, std::size_t{1}); };
  if (phases_ <= 1) {
    for_deciding(
        begin, end, [&](std::size_t i) { return decides(i); }, one_run);
    return;
  }
  // Deciding in phases: the phase's agents are every phases_-th index. Together in one
  // strided call, unless time slicing skips some of them or the recorded stacks (whose
  // rows the combine reads contiguously) are in use: then one call each.
  const std::size_t p = phases_;
  const std::size_t first = begin + (phase_ + p - begin % p) % p;
  const auto k = static_cast<std::uint64_t>(params_.decision_interval);
  if (k <= 1 && next_decision_.empty() && !config_.record && !kinematic_) {
    if (first < end) body(first, end, p);
    return;
  }
  for (std::size_t i = first; i < end; i += p)
    if (decides(i)) one_run(i, i + 1);
}

struct Simulation::Plan {
  BehaviourInputs in;
  float dt = 0.0f;  ///< the step's dt (classic steering turns accelerations into velocities)
};

namespace {
// The cell of the push-apart grids: the largest body's diameter (1 with no body).
float push_cell(float max_radius) { return max_radius > 0.0f ? 2.0f * max_radius : 1.0f; }

// CollisionDanger's return_step and inertia are given per 1/30 s of decisions (the rate
// they were tuned at): a decision covering dt seconds (Simulation::decision_time: the
// step, or decision_interval steps) counts as 30·dt of them. Exactly 1 within 1e-6, so
// that dt = 1/30 in float32 keeps its bits. Per decision, a step of 0.25 s turned
// back to the goal 7.5 times slower in time and averaged its commands over 7.5 times as
// long, and a lone agent orbited its goal at full speed for good.
float decisions_of(double dt) {
  const double s = 30.0 * dt;
  return std::fabs(s - 1.0) < 1e-6 || !(s > 0.0) ? 1.0f : static_cast<float>(s);
}

}  // namespace

Simulation::Simulation(Agents& agents, SlotSet slots, SteeringConfig config,
                       SimulationParams params)
    : agents_(&agents),
      n_(agents.capacity()),
      k_(slots.size()),  // (declared before slot_set_, so read before the move)
      config_(std::move(config)),
      params_(std::move(params)),
      slot_set_(std::move(slots)) {
  for (std::size_t b = 0; b < config_.behaviours.size(); ++b) {
    (writes_danger(config_.behaviours[b]) ? danger_b_ : interest_b_).push_back(b);
    needs_neighbors_ |= needs_neighbors(config_.behaviours[b]);
    if (!sensor_) sensor_ = std::get_if<WallDanger>(&config_.behaviours[b]);
    if (const auto* f = std::get_if<FollowField>(&config_.behaviours[b]); f && f->field)
      ways_.push_back(f);
    if (writes_speed(config_.behaviours[b])) {
      if (!velocity_) velocity_ = &std::get<CollisionDanger>(config_.behaviours[b]);
    }
  }
  if (config_.classic) needs_neighbors_ = classic::neighbor_radius(*config_.classic, 0.0f) > 0.0f;
  const std::size_t nk = n_ * k_;
  interest_.assign(nk, 0.0f);
  danger_.assign(nk, 0.0f);
  resolved_.assign(nk, 0.0f);
  direction_.assign(2 * n_, 0.0f);
  strength_.assign(n_, 0.0f);
  accel_.assign(2 * n_, 0.0f);
  braking_.assign(n_, 0);
  slot_.assign(n_, -1);
  contacts_.assign(n_, 0);
  overlaps_.assign(n_, 0);
  touched_.assign(n_, 0);
  stuck_.assign(n_, 0);
  has_memory_.assign(n_, 0);
  still_.assign(n_, 0.0);
  anchor_.assign(agents.position(), agents.position() + 2 * n_);
  if (config_.record) recorded_.assign(config_.behaviours.size() * nk, 0.0f);
  if (velocity_) speed_.assign(nk, 1.0f);
  if (velocity_) wall_clear_.assign(n_, 0);
  if (velocity_) ttc_memo_.assign(n_, detail::VelocityMemo{});
  if (velocity_) {
    peak_.assign(n_, 0);
    want_pow_.assign(n_, 1.0f);
  }
  if (velocity_ && config_.rotate) frame_.assign(4 * n_, 0.0f);
  if (velocity_ && velocity_->make_way > 0.0f) {
    yielded_to_.assign(n_, -1);
    yield_new_.assign(n_, -1);
  }
  if (velocity_ && velocity_->standoff > 0.0f) {
    stood_.assign(n_, 0.0);
    back_until_.assign(n_, 0.0);
  }
  // NaN: not cast yet (+inf is a ray that saw nothing within its look-ahead).
  if (sensor_) sensed_.assign(nk, std::numeric_limits<float>::quiet_NaN());
  perceived_pos_.assign(2 * n_, std::numeric_limits<float>::quiet_NaN());
  perceived_head_.assign(n_, std::numeric_limits<float>::quiet_NaN());
  if (params_.decision_interval > 1) fresh_.assign(n_, 1);
  if (config_.hysteresis > 0.0f) held_.assign(n_, 0.0f);
  if (config_.hysteresis > 0.0f && config_.rotate)
    decided_head_.assign(n_, std::numeric_limits<float>::quiet_NaN());
  if (velocity_ && (velocity_->commit > 0.0f || velocity_->inertia > 0.0f)) {
    prev_direction_.assign(2 * n_, 0.0f);
    prev_strength_.assign(n_, 0.0f);
  }
  next_pos_.assign(2 * n_, 0.0f);
  next_vel_.assign(2 * n_, 0.0f);
  next_head_.assign(n_, 0.0f);
  if (needs_neighbors_) {
    nb_indices_.assign(n_ * config_.max_neighbors, -1);
    nb_counts_.assign(n_, 0);
  }
  const AgentsView v = agents.view();
  if (v.kinematic) kin_seen_.assign(v.kinematic, v.kinematic + n_);
  if (v.generation) seen_generation_.assign(v.generation, v.generation + n_);
  else seen_generation_.assign(n_, 0);
  if (params_.decision_validity > 0.0f) {
    next_decision_.assign(n_, 0);
    validity_.assign(n_, std::numeric_limits<float>::infinity());
    next_time_.assign(n_, 0.0);
    decided_target_.assign(v.target, v.target + 2 * n_);
  }
  metrics_.configure(MetricsParams{}, agents.view(), nullptr, 0.0);
  // The agents it starts with leave the solids holding their centres at the first step,
  // as agents added later do (push_out_renewed).
  start_pending_ = true;
}

void Simulation::renew_slots() {
  const AgentsView a = agents_->view();
  // An agent made kinematic, or handed back to the steering: its decision is forgotten
  // (as a kinematic agent has none, and as a new agent starts), so that it neither keeps
  // a chosen slot while it is driven nor drives on a decision from before (under
  // decision_interval, for up to k − 1 steps; between perceive() and decide_and_move(),
  // from maps perceived while it was kinematic). Handed back, it decides at its next
  // step and stands until then, as a new agent does.
  const bool flips = a.kinematic && !kin_seen_.empty();
  for (std::size_t i = 0; i < n_; ++i) {
    if (flips && (a.kinematic[i] != 0) != (kin_seen_[i] != 0)) {
      kin_seen_[i] = a.kinematic[i] ? 1 : 0;
      forget_decision(i);
    }
    if (!a.generation || a.generation[i] == seen_generation_[i]) continue;
    seen_generation_[i] = a.generation[i];
    renewed_.push_back(static_cast<std::int32_t>(i));  // pushed out of walls (push_out_renewed)
    // A new agent in slot i: nothing of the slot's last occupant carries over (its
    // decision, which an agent not deciding this step would move on, its map memory,
    // stuck timer, hysteresis slot and counters). It stands until it first decides.
    forget_decision(i);
    stuck_[i] = 0;
    still_[i] = 0.0;
    store2(anchor_.data(), i, load2(a.position, i));
    if (!yielded_to_.empty()) yielded_to_[i] = yield_new_[i] = -1;
    if (!stood_.empty()) stood_[i] = 0.0;  // (back_until_: forget_decision)
    contacts_[i] = overlaps_[i] = 0;
    if (config_.classic)  // a random-walk Wander starts a fresh walk (orientation 0, no clock)
      for (const classic::Blended& g : config_.classic->groups)
        for (const classic::Behaviour& b : g.behaviours)
          if (const auto* w = std::get_if<classic::Wander>(&b); w && w->walk)
            w->walk[2 * i] = w->walk[2 * i + 1] = 0.0;
  }
  if (!yielded_to_.empty() && !renewed_.empty()) {
    // Nobody has stepped aside for a new agent yet (make_way's condition (6)). renewed_
    // lists the slots in increasing order.
    for (std::int32_t& y : yielded_to_)
      if (y >= 0 && std::binary_search(renewed_.begin(), renewed_.end(), y)) y = -1;
  }
}

namespace {

// The slot of `slots` nearest (largest cosine, the lowest index on a tie) to slot s's
// direction turned by -delta: where a direction chosen at heading h0 lies among the slots
// at heading h0 + delta.
std::int32_t nearest_turned_slot(const SlotSet& slots, std::size_t s, double delta) {
  const double c = std::cos(delta), sn = std::sin(delta);
  const double x = slots.x64()[s], y = slots.y64()[s];
  const double tx = c * x + sn * y, ty = -sn * x + c * y;
  std::int32_t best = 0;
  double top = -2.0;
  for (std::size_t j = 0; j < slots.size(); ++j) {
    const double d = slots.x64()[j] * tx + slots.y64()[j] * ty;
    if (d > top) {
      top = d;
      best = static_cast<std::int32_t>(j);
    }
  }
  return best;
}

}  // namespace

void Simulation::forget_decision(std::size_t i) {
  store2(direction_.data(), i, Vec2{});
  strength_[i] = 0.0f;
  store2(accel_.data(), i, Vec2{});
  slot_[i] = -1;
  has_memory_[i] = 0;
  if (!decided_head_.empty()) decided_head_[i] = std::numeric_limits<float>::quiet_NaN();
  braking_[i] = 0;
  if (!back_until_.empty()) back_until_[i] = 0.0;
  if (!next_decision_.empty()) {
    next_decision_[i] = 0;  // decides at once
    next_time_[i] = 0.0;
    validity_[i] = std::numeric_limits<float>::infinity();
  }
  if (!sensed_.empty())
    std::fill_n(sensed_.begin() + static_cast<std::ptrdiff_t>(i * k_), k_,
                std::numeric_limits<float>::quiet_NaN());
  // Its maps, as in a slot never used: added between perceive() and decide_and_move(),
  // it decided from the last occupant's maps (drove off towards that one's target).
  const auto row = static_cast<std::ptrdiff_t>(i * k_);
  std::fill_n(interest_.begin() + row, k_, 0.0f);
  std::fill_n(danger_.begin() + row, k_, 0.0f);
  std::fill_n(resolved_.begin() + row, k_, 0.0f);
  if (!speed_.empty()) std::fill_n(speed_.begin() + row, k_, 1.0f);
  for (std::size_t b = 0; config_.record && b < config_.behaviours.size(); ++b)
    std::fill_n(behaviour_map(b) + row, k_, 0.0f);
  perceived_pos_[2 * i] = perceived_pos_[2 * i + 1] = perceived_head_[i] =
      std::numeric_limits<float>::quiet_NaN();
  if (!fresh_.empty()) fresh_[i] = 1;  // decides at its first step, not at its turn
}

float* Simulation::behaviour_map(std::size_t b) {
  if (!config_.record || b >= config_.behaviours.size()) return nullptr;
  // Recorded stacks: interest behaviours first, then danger ones (each in given order).
  auto it = std::find(interest_b_.begin(), interest_b_.end(), b);
  std::size_t pos = 0;
  if (it != interest_b_.end()) {
    pos = static_cast<std::size_t>(it - interest_b_.begin());
  } else {
    pos = interest_b_.size() +
          static_cast<std::size_t>(std::find(danger_b_.begin(), danger_b_.end(), b) -
                                   danger_b_.begin());
  }
  return recorded_.data() + pos * n_ * k_;
}

Simulation::Plan Simulation::plan() {
  Plan p;
  p.in.agents = agents_->view();
  // Kinematic agents (moved by their own velocity, never steered or pushed): the column
  // is passed on only when one is set, so that the kernels' checks cost a null test.
  const std::uint8_t* kin = p.in.agents.kinematic;
  kinematic_ = kin && std::find_if(kin, kin + n_, [](std::uint8_t v) { return v != 0; }) != kin + n_
                   ? kin
                   : nullptr;
  p.in.agents.kinematic = kinematic_;
  p.in.slots = slot_set_.directions();
  p.in.k = k_;
  p.in.rotate_with_heading = config_.rotate;
  p.in.time = time_;
  p.in.world = world_ && !world_->grid().empty() ? world_.get() : nullptr;
  p.in.ways = ways_;
  p.in.agents.target = reachable_targets(p.in.agents, p.in.world);
  return p;
}

void Simulation::build_neighbors(Plan& p) {
  // Perception follows: the sensor's rays are kept for pictures (see sensed()).
  if (sensor_) {
    p.in.sensed = sensed_.data();
    p.in.sensed_of = sensor_;
  }
  const AgentsView& a = p.in.agents;
  // What observe() prepared is this step's when nothing it depends on has changed since:
  // the positions and alive flags (compared bit for bit: a view may have been written),
  // for the lists the radius (it follows the velocities and radii), for the walls the
  // world and its index.
  if (prepared_ && (std::memcmp(a.position, prepared_pos_.data(), 2 * n_ * sizeof(float)) != 0 ||
                    std::memcmp(a.alive, prepared_alive_.data(), n_) != 0))
    prepared_ = lists_ready_ = walls_ready_ = false;
  if (walls_ready_ && p.in.world == walls_world_ &&
      p.in.world->index_generation() == walls_generation_)
    p.in.near = &near_;
  use_lists_ = false;
  if (!needs_neighbors_) return;
  neighbor_radius_ = current_neighbor_radius(a);
  use_lists_ = lists_ready_ && std::bit_cast<std::uint32_t>(neighbor_radius_) ==
                                   std::bit_cast<std::uint32_t>(lists_radius_);
  if (!use_lists_) {
    lists_ready_ = false;
    grid_.rebuild(a.position, a.alive, n_, neighbor_radius_ > 0.0f ? neighbor_radius_ : 1.0f,
                  config_.max_neighbors);
  }
  p.in.neighbors = {nb_indices_.data(), nb_counts_.data(), config_.max_neighbors};
}

float Simulation::current_neighbor_radius(const AgentsView& a) const {
  if (!config_.classic)
    return shared_neighbor_radius(config_.behaviours, a, config_.decision_phases > 1);
  float rmax = 0.0f;
  for (std::size_t i = 0; i < n_; ++i)
    if (a.alive[i]) rmax = std::max(rmax, a.radius[i]);
  return classic::neighbor_radius(*config_.classic, rmax);
}

void Simulation::find_lists(const AgentsView& a, std::size_t b, std::size_t e, std::size_t step) {
  find_neighbors_rows(grid_, a.position, a.alive, neighbor_radius_, config_.max_neighbors,
                      nb_indices_.data(), nb_counts_.data(), b, e, step);
}

void Simulation::perceive_rows(const Plan& p, std::size_t begin, std::size_t end) {
  const std::size_t k = k_;
  const std::size_t bi = interest_b_.size(), bd = danger_b_.size();
  const bool post = !config_.spread_kernel.empty() || config_.blend >= 0.0f;
  // Per-thread scratch: behaviour maps of a block (unless recorded) + 2 temporaries.
  struct BlockMapsSite;
  std::vector<float>& scratch = detail::thread_scratch<std::vector<float>, BlockMapsSite>();
  const std::size_t need = ((config_.record ? 0 : bi + bd) + 2) * kBlock * k;
  if (scratch.size() < need) scratch.resize(need);
  const std::span<const float> kernel(config_.spread_kernel);
  // With slots that turn with the heading, the blend's memory is in the frame of the
  // heading it was perceived at: turned by the change of heading before blending, so that
  // a slot mixes the same world direction (a car turned 90° mixed last step's "goal
  // ahead" into the slot that now points sideways; fuzz round 13).
  const bool turn_memory = config_.rotate && config_.blend >= 0.0f;
  struct TurnsSite;
  struct TurnedSite;
  // Per row of the block: heading now - then.
  std::vector<double>& turns = detail::thread_scratch<std::vector<double>, TurnsSite>();
  // One memory row, turned.
  std::vector<float>& turned = detail::thread_scratch<std::vector<float>, TurnedSite>();

  each_deciding(begin, end, [&](std::size_t b, std::size_t e, std::size_t step) {
    // Rows b, b + step, ... (< e): len of them, stored one after another in the scratch
    // (step > 1 only when deciding in phases, never with recorded stacks).
    const std::size_t len = (e - b + step - 1) / step;
    if (turn_memory) {
      turns.assign(len, 0.0);
      turned.resize(k);
      for (std::size_t i = b, r = 0; i < e; i += step, ++r) {
        const float h0 = perceived_head_[i], h1 = p.in.agents.heading[i];
        if (has_memory_[i] && std::isfinite(h0) && h0 != h1) turns[r] = double(h1) - double(h0);
      }
    }
    for (std::size_t i = b; i < e; i += step) {  // the pose these maps belong to
      // (A dead slot keeps NaN, "never perceived": its rows describe no agent.)
      const bool alive = p.in.agents.alive[i] != 0;
      const float nan = std::numeric_limits<float>::quiet_NaN();
      perceived_pos_[2 * i] = alive ? p.in.agents.position[2 * i] : nan;
      perceived_pos_[2 * i + 1] = alive ? p.in.agents.position[2 * i + 1] : nan;
      perceived_head_[i] = alive ? p.in.agents.heading[i] : nan;
    }
    if (needs_neighbors_ && !use_lists_) find_lists(p.in.agents, b, e, step);
    // Behaviour maps: recorded (N,K) stacks, or block-local rows (first_row = b).
    const std::size_t rows = config_.record ? n_ : len;
    const std::size_t r0 = config_.record ? b : 0;
    float* stacks = config_.record ? recorded_.data() : scratch.data();
    float* tmp1 = scratch.data() + (config_.record ? 0 : bi + bd) * kBlock * k;
    float* tmp2 = tmp1 + kBlock * k;
    auto map_of = [&](std::size_t pos) {
      return config_.record ? MapOut{stacks + pos * rows * k, 0}
                            : MapOut{stacks + pos * rows * k, b, step};
    };
    for (std::size_t m = 0; m < bi; ++m)
      evaluate_rows(config_.behaviours[interest_b_[m]], p.in, map_of(m), map_of(m), b, e, {}, step);
    bool first_speed = true;
    for (std::size_t m = 0; m < bd; ++m) {
      const Behaviour& beh = config_.behaviours[danger_b_[m]];
      if (!writes_speed(beh)) {
        evaluate_rows(beh, p.in, map_of(bi + m), map_of(bi + m), b, e, {}, step);
        continue;
      }
      // Speed maps merge by min: the first writes the rows, later ones go through tmp1.
      const MapOut sp = first_speed ? MapOut{speed_.data(), 0} : MapOut{tmp1, b, step};
      evaluate_rows(beh, p.in, map_of(bi + m), map_of(bi + m), b, e, sp, step);
      if (!first_speed)
        for (std::size_t r = 0; r < len; ++r)
          for (std::size_t q = 0; q < k; ++q) {
            float& out = speed_[(b + r * step) * k + q];
            out = std::min(out, tmp1[r * k + q]);
          }
      first_speed = false;
    }

    // Without post-processing the combine writes the (N,K) rows in place when they are
    // consecutive (step 1); strided rows go through tmp1 and are copied out.
    const bool via_tmp = post || step > 1;
    auto merge = [&](std::size_t first, std::size_t count, CombineMode mode, bool spread_it,
                     float* dest) {
      // dest: the (N,K) map; the fresh rows go to tmp1 when via_tmp.
      float* fresh = via_tmp ? tmp1 : dest + b * k;
      if (count == 0) {
        std::fill(fresh, fresh + len * k, 0.0f);
      } else {
        // Map m of the stack, row r0 + i, at base + (m·rows + i)·k: the kernel's stack
        // layout with the same stride, starting at row r0.
        const float* base = stacks + first * rows * k + r0 * k;
        combine_rows({base, count * rows * k - r0 * k}, count, rows, k, mode, {}, {fresh, len * k},
                     0, len);
      }
      if (!via_tmp) return;
      if (post && spread_it && !kernel.empty()) {
        spread_rows({fresh, len * k}, k, kernel, config_.spread_mode, {tmp2, len * k}, 0, len);
        fresh = tmp2;
      }
      const float a = config_.blend;
      for (std::size_t r = 0; r < len; ++r) {
        float* row = dest + (b + r * step) * k;
        const float* f = fresh + r * k;
        if (a >= 0.0f && has_memory_[b + r * step]) {
          const float* old = row;
          if (turn_memory && turns[r] != 0.0) {
            turn_row(row, slot_set_, turns[r], turned.data());
            old = turned.data();
          }
          for (std::size_t j = 0; j < k; ++j) row[j] = old[j] + a * (f[j] - old[j]);
        } else {
          std::copy(f, f + k, row);
        }
      }
    };
    merge(0, bi, config_.combine, config_.spread_interest, interest_.data());
    merge(bi, bd, config_.danger_combine, config_.spread_danger, danger_.data());
    for (std::size_t i = b; i < e; i += step) has_memory_[i] = p.in.agents.alive[i];
  });
}

float Simulation::horizon_of(const Plan& p, std::size_t i) const {
  // Agent i's horizon (CollisionDanger's dense_horizon); the TTCs memo_ttc returns are
  // exact below the full horizon, so only the thresholds change with it.
  const CollisionDanger& vd = *velocity_;
  return vd.dense_horizon > 0.0f ? collision_horizon(vd, p.in, i) : vd.horizon;
}

float Simulation::memo_ttc(const Plan& p, std::size_t i, Vec2 v) {
  detail::VelocityMemo& m = ttc_memo_[i];
  if (const float* t = m.find(v)) return *t;
  const float t = velocity_ttc(*velocity_, p.in, i, v);
  m.put(v, t);
  return t;
}

void Simulation::decide_rows(const Plan& p, std::size_t begin, std::size_t end) {
  const std::size_t k = k_, nk = n_ * k_;
  if (config_.classic) {
    const classic::Inputs in{p.in.agents, p.in.neighbors, p.in.world, p.in.time};
    const AgentsView& a = p.in.agents;
    each_deciding(begin, end, [&](std::size_t b, std::size_t e, std::size_t step) {
      consecutive_runs(b, e, step, [&](std::size_t rb, std::size_t re) {
        classic::accelerate_rows(*config_.classic, in, accel_.data(), rb, re);
      });
      for (std::size_t i = b; i < e; i += step) {
        const Vec2 want = load2(a.velocity, i) + load2(accel_.data(), i) * p.dt;
        const float speed = length(want);
        const float top = a.max_speed[i];
        store2(direction_.data(), i, speed > 0.0f ? want * (1.0f / speed) : Vec2{});
        strength_[i] = top > 0.0f ? std::min(1.0f, speed / top) : 0.0f;
      }
    });
    return;
  }
  each_deciding(begin, end, [&](std::size_t b, std::size_t e, std::size_t step) {
    // Rows b, b + step, ... (< e); resolve_rows and choose_rows take consecutive rows.
    // Commitment, part 1: the slot of the previous decision resolves with a positive
    // danger lowered by h (not below 0), so a way that turned marginally dangerous is not
    // dropped for a step and taken again the next. A danger of 0 or less stays as it is
    // (raising a negative danger to 0 pushed an agent off its slot). The map itself is
    // restored after.
    const float h = config_.hysteresis;
    if (h > 0.0f && !decided_head_.empty()) {
      // Slots that turn with the heading: the previous decision's slot is the one nearest
      // its world direction now, not the same index (the same direction relative to an
      // agent that has turned since).
      for (std::size_t i = b; i < e; i += step) {
        const float h0 = decided_head_[i], h1 = p.in.agents.heading[i];
        if (slot_[i] >= 0 && std::isfinite(h0) && h0 != h1)
          slot_[i] = nearest_turned_slot(slot_set_, static_cast<std::size_t>(slot_[i]),
                                         double(h1) - double(h0));
      }
    }
    if (h > 0.0f) {
      for (std::size_t i = b; i < e; i += step) {
        if (slot_[i] < 0) continue;
        float& d = danger_[i * k + static_cast<std::size_t>(slot_[i])];
        held_[i] = d;
        if (d > 0.0f) d = std::max(0.0f, d - h);
      }
    }
    consecutive_runs(b, e, step, [&](std::size_t rb, std::size_t re) {
      resolve_rows({interest_.data(), nk}, {danger_.data(), nk}, k, config_.resolve, &slot_set_,
                   {resolved_.data(), nk}, rb, re);
    });
    if (h > 0.0f) {
      for (std::size_t i = b; i < e; i += step)
        if (slot_[i] >= 0) danger_[i * k + static_cast<std::size_t>(slot_[i])] = held_[i];
    }
    if (velocity_ && config_.rotate) {
      // The same std::cos / std::sin calls as turned(v, ±h).
      for (std::size_t i = b; i < e; i += step) {
        const float hd = p.in.agents.heading[i];
        float* f = frame_.data() + 4 * i;
        f[0] = std::cos(hd);
        f[1] = std::sin(hd);
        f[2] = std::cos(-hd);
        f[3] = std::sin(-hd);
      }
    }
    if (velocity_) weigh_by_speed(p.in.agents, b, e, step);
    if (h > 0.0f) {
      // Commitment, part 2: the previous decision (slot_ still holds it) counts 1 + h times.
      for (std::size_t i = b; i < e; i += step)
        if (slot_[i] >= 0) {
          float& r = resolved_[i * k + static_cast<std::size_t>(slot_[i])];
          r = sat(r * (1.0f + h));  // kSaturate: a large h must not make it inf
        }
    }
    const bool commit = velocity_ && velocity_->commit > 0.0f;
    const bool inertia = velocity_ && velocity_->inertia > 0.0f;
    if (commit || inertia) {
      for (std::size_t i = b; i < e; i += step) {
        store2(prev_direction_.data(), i, load2(direction_.data(), i));
        prev_strength_[i] = strength_[i];
      }
    }
    consecutive_runs(b, e, step, [&](std::size_t rb, std::size_t re) {
      choose_rows({resolved_.data(), nk}, k, slot_set_, config_.choose, {direction_.data(), 2 * n_},
                  {strength_.data(), n_}, {slot_.data(), n_}, rb, re);
    });
    if (velocity_)
      for (std::size_t i = b; i < e; i += step) ttc_memo_[i].clear();
    if (velocity_) strength_from_speed(p, b, e, step);
    if (commit) keep_course(p, b, e, step);
    if (velocity_ && velocity_->retreat_speed < 1.0f) cap_retreat(p, b, e, step);
    if (inertia) keep_inertia(p, b, e, step);
    if (velocity_ && velocity_->settle) settle_at_goal(p, b, e, step);
    if (velocity_ && velocity_->make_way > 0.0f) make_way(p, b, e, step);
    if (velocity_ && velocity_->standoff > 0.0f) break_standoff(p, b, e, step);
    if (velocity_ && kinematic_) evade_kinematic(p, b, e, step);
    if (velocity_ && (velocity_->past_target || velocity_->brake_at_target))
      stop_short_past_target(p, b, e, step);
    if (config_.rotate) {
      for (std::size_t i = b; i < e; i += step) {
        const Vec2 d = load2(direction_.data(), i);
        store2(direction_.data(), i,
               velocity_ ? to_world(d, i) : turned(d, p.in.agents.heading[i]));
      }
    }
    if (!validity_.empty())
      for (std::size_t i = b; i < e; i += step) validity_[i] = validity_of(p, i);
    if (!decided_head_.empty())
      for (std::size_t i = b; i < e; i += step) decided_head_[i] = p.in.agents.heading[i];
  });
}

float Simulation::validity_of(const Plan& p, std::size_t i) const {
  // Lewis: "have each evaluator score the candidate directions, and provide an estimate
  // for how long the character can move in that direction before the score becomes
  // invalid ... pick the lowest time". Each estimate is the time until what the
  // behaviour scored has changed by about half a slot: a bearing by π/K, a gap by half.
  const AgentsView& a = p.in.agents;
  constexpr float kInf = std::numeric_limits<float>::infinity();
  const Vec2 pos = load2(a.position, i), vel = load2(a.velocity, i);
  // The agent moves along its decision at the larger of its speed now and the speed it
  // chose (it accelerates towards the latter).
  const Vec2 dir = load2(direction_.data(), i);
  const float speed = std::max(length(vel), strength_[i] * a.max_speed[i]);
  const Vec2 w = dir * speed;
  constexpr float kPi = 3.14159265358979323846f;
  const float half = kPi / static_cast<float>(k_);
  // A target at distance d moving at u: its bearing turns by half a slot in
  // half·d/|w − u| at most.
  const auto bearing = [&](float d, Vec2 u) {
    const float rel = length(w - u);
    return rel > 0.0f ? half * d / rel : kInf;
  };
  const auto gap_time = [&](float gap) { return speed > 0.0f ? 0.5f * gap / speed : kInf; };
  // The neighbours the lists hold: a gap (between this body, of radius `own`, and theirs)
  // closes at most at |w − u_j|; with `bearings`, a bearing turns as for a target.
  const auto neighbours = [&](float own, bool bearings) {
    const NeighborLists& nb = p.in.neighbors;
    if (nb.empty()) return kInf;
    float m = kInf;
    const std::int32_t* idx = nb.indices + i * nb.max_neighbors;
    for (std::int32_t c = 0; c < nb.counts[i]; ++c) {
      const auto j = static_cast<std::size_t>(idx[c]);
      const Vec2 u = load2(a.velocity, j);
      const float d = length(load2(a.position, j) - pos);
      const float gap = d - own - a.radius[j];
      const float rel = length(w - u);
      const float close = gap > 0.0f ? (rel > 0.0f ? 0.5f * gap / rel : kInf) : 0.0f;
      m = std::min(m, close);
      if (bearings) m = std::min(m, bearing(d, u));
    }
    return m;
  };
  float best = kInf;
  for (const Behaviour& beh : config_.behaviours) {
    const float t = std::visit(
        [&](const auto& b) -> float {
          using T = std::decay_t<decltype(b)>;
          if constexpr (std::is_same_v<T, Forward> || std::is_same_v<T, Momentum>) {
            return kInf;  // the heading and the velocity move with the decision itself
          } else if constexpr (std::is_same_v<T, Targets>) {
            float m = kInf;
            if (b.source == TargetSource::kAgents) {
              for (std::int32_t j32 : b.target_ids) {
                const auto j = static_cast<std::size_t>(j32);
                if (j == i || j >= a.size || !a.alive[j]) continue;
                const float d = length(load2(a.position, j) - pos);
                if (d <= b.max_distance) m = std::min(m, bearing(d, load2(a.velocity, j)));
              }
            } else if (b.source == TargetSource::kPoints) {
              for (std::size_t j = 0; j < b.positions.size() / 2; ++j) {
                const float d = length(load2(b.positions.data(), j) - pos);
                if (d <= b.max_distance) m = std::min(m, bearing(d, Vec2{}));
              }
            } else {
              const float d = length(load2(a.target, i) - pos);
              if (d <= b.max_distance) m = bearing(d, Vec2{});
            }
            return m;
          } else if constexpr (std::is_same_v<T, Arrive>) {
            const Vec2 goal = b.use_point ? b.point : load2(a.target, i);
            return bearing(length(goal - pos), Vec2{});
          } else if constexpr (std::is_same_v<T, Tether>) {
            const Vec2 c = b.use_point ? b.center : load2(a.target, i);
            return bearing(length(c - pos), Vec2{});
          } else if constexpr (std::is_same_v<T, Bounds>) {
            // Inside the inner rectangle: until the agent can reach its edge.
            const float dx = std::min(pos.x - (b.lo.x + b.margin), (b.hi.x - b.margin) - pos.x);
            const float dy = std::min(pos.y - (b.lo.y + b.margin), (b.hi.y - b.margin) - pos.y);
            const float inside = std::min(dx, dy);
            return inside > 0.0f ? (speed > 0.0f ? inside / speed : kInf) : 0.0f;
          } else if constexpr (std::is_same_v<T, Wander>) {
            return b.rate > 0.0f ? 0.25f / b.rate : kInf;  // a quarter of the noise's period
          } else if constexpr (std::is_same_v<T, FollowPath>) {
            const Path* path = b.path;
            if (b.paths) {
              const std::int64_t q = b.path_index ? b.path_index[i] : static_cast<std::int64_t>(i);
              path = q >= 0 && static_cast<std::size_t>(q) < b.path_count ? b.paths[q] : nullptr;
            }
            if (!path) return kInf;
            // The point look_ahead along the path from the closest point: its bearing.
            const Vec2 q = path->point_at(path->closest_offset(pos) + b.look_ahead);
            return bearing(length(q - pos), Vec2{});
          } else if constexpr (std::is_same_v<T, FollowField>) {
            // The descent turns within a cell of the field.
            if (!b.field) return kInf;
            const float c = b.field->grid().cell;
            return speed > 0.0f ? std::max(c, half * b.look_ahead) / speed : kInf;
          } else if constexpr (std::is_same_v<T, WallDanger>) {
            // Half the way to the nearest wall of its layers in any direction (the gap its
            // rays' discs leave), or to the edge of the look-ahead; with `agents`, also
            // half the gap to the nearest neighbour its rays would hit.
            const float pad = b.ray_radius >= 0.0f ? b.ray_radius : a.radius[i] + b.padding;
            float h = b.look_ahead;
            if (p.in.world) {
              float nd = 0.0f, np[2], nn[2];
              std::int32_t obs = -1;
              nearest_rows(*p.in.world, {a.position + 2 * i, 2}, b.look_ahead + pad, b.layers,
                           NearestOut{&nd, np, nn, &obs}, 0, 1);
              if (obs >= 0) h = std::min(h, std::max(nd - pad, 0.0f));
            }
            float m = gap_time(h);
            if (b.agents) m = std::min(m, neighbours(pad, false));
            return m;
          } else {
            // AgentDanger, Flock, CollisionDanger: the neighbours the lists hold. A gap
            // closes at most at |w − u_j|; a bearing turns as for a target.
            if constexpr (std::is_same_v<T, CollisionDanger>) {
              // Held back below the speed it wants (the speed map capped the choice): it
              // waits for a way to open, which any neighbour's move may bring.
              if (!speed_.empty() && strength_[i] + 1e-6f < wanted_speed(i)) return 0.0f;
            }
            return neighbours(a.radius[i], true);
          }
        },
        beh);
    best = std::min(best, t);
  }
  return std::max(best, 0.0f);
}

void Simulation::weigh_by_speed(const AgentsView& a, std::size_t begin, std::size_t end,
                                std::size_t step) {
  // value_k ← resolved_k · speed_k^γ: at γ = 1 (speed_exponent, the default) the rate of
  // progress a candidate offers. When the way the agent wants to go (the interest peak) is
  // not free at full speed, slots on the preferred side also get 1 + bias·max(0,
  // side·sin θ_k), θ_k the clockwise angle from the peak: a deterministic head-on symmetry
  // breaker that never bends a free path; and, with lateral_cost c, every slot
  // max(0, 1 − c·s_k·|sin θ_k|).
  const std::size_t k = k_;
  const float* dir = slot_set_.directions();
  const float bias = velocity_->side_bias, side = velocity_->side;
  const float smooth = velocity_->smoothness;
  const float lateral = velocity_->lateral_cost;
  // speed_exponent γ: a candidate's speed counts as speed^γ (γ < 1: slowing down on course
  // loses less against a side step at speed). At 1 the loop below is skipped, not pow'd.
  const float gamma = velocity_->speed_exponent;
  struct WeightsSite;
  std::vector<float>& weights = detail::thread_scratch<std::vector<float>, WeightsSite>();
  struct ExponentsSite;
  std::vector<float>& exponents = detail::thread_scratch<std::vector<float>, ExponentsSite>();
  SpeedPow& pow_of = speed_pow_for(gamma);
  if (weights.size() < k) {
    weights.resize(k);
    exponents.resize(k);
  }
  // The scratch through raw pointers taken once (see collision_row_at).
  float* const w = weights.data();
  float* const x = exponents.data();
  for (std::size_t i = begin; i < end; i += step) {
    float* r = resolved_.data() + i * k;
    const float* in = interest_.data() + i * k;
    const float* sp = speed_.data() + i * k;
    const std::size_t peak = detail::first_max(in, k);
    peak_[i] = static_cast<std::uint32_t>(peak);  // for the decision passes after this one
    const bool blocked = sp[peak] < 1.0f && bias > 0.0f && side != 0.0f;
    const float px = dir[2 * peak], py = dir[2 * peak + 1];
    // The current velocity in max-speed units, in the slot frame.
    Vec2 v = load2(a.velocity, i) * (a.max_speed[i] > 0.0f ? 1.0f / a.max_speed[i] : 0.0f);
    if (config_.rotate) v = to_slots(v, i);
    // The speed the agent wants (the interest peak; Arrive lowers it near the goal): a
    // slot faster than that offers no more progress.
    const float want = std::clamp(in[peak], 0.0f, 1.0f);
    for (std::size_t q = 0; q < k; ++q) w[q] = std::min(sp[q], want);
    if (gamma != 1.0f) {
      // Most slots sit at the wanted speed (fast enough) and the rest mostly at one of a
      // few speed levels: pow once for the wanted speed, the levels from this thread's
      // table (SpeedPow), the same values as a pow per slot. 16 calls an agent had been
      // a tenth of the crowd-track-10k velocity step's instructions (callgrind).
      const float pw = pow_of(want);
      const auto want_bits = std::bit_cast<std::uint32_t>(want);
      for (std::size_t q = 0; q < k; ++q) {
        const float s = w[q];
        w[q] = std::bit_cast<std::uint32_t>(s) == want_bits ? pw : pow_of(s);
      }
      want_pow_[i] = pw;  // for keep_course
    }
    if (smooth > 0.0f) {
      // Smoothness: a turn away from the current velocity v (max-speed units) costs
      // exp(−λ·(|v| − s_k·v)): nothing at rest or straight on, most for a U-turn. The
      // exponents first, then the exps, then the products: the same float operations as
      // one loop, but the exps run eight at a time (exp_floats: glibc's table method in
      // AVX2 lanes, bit for bit its scalar version, which on glibc with FMA is std::exp's
      // own answer). With std::exp in the loop each call spilled the loop's registers;
      // separate, 16 std::exp calls still took 464 of weigh_by_speed's 997 instructions
      // an agent at K = 16 (crowd-track-10k velocity, callgrind).
      // |v| − s_k·v is ≥ 0 but for rounding (a slot along v): held at 0, so a large λ
      // cannot turn a rounding error into exp(+λ·ε) (inf at λ = 1e10). For λ up to about
      // 0.5 the term's exp rounds to 1 either way.
      const float len = length(v);
      for (std::size_t q = 0; q < k; ++q)
        x[q] = -smooth * std::max(len - (dir[2 * q] * v.x + dir[2 * q + 1] * v.y), 0.0f);
      detail::exp_floats(x, k);
      for (std::size_t q = 0; q < k; ++q) w[q] *= x[q];
    }
    if (lateral > 0.0f && sp[peak] < 1.0f) {
      // lateral_cost: the way not free at full speed, walking across it costs. Each slot's
      // worth × max(1/64, 1 − c·s_k·|sin θ_k|), s_k its speed (capped by the wanted one, max-
      // speed units) and θ_k its angle from the peak: a side step at speed is worth less
      // against slowing down on course, as in ORCA's objective |v − v_pref|².
      // Floored at kLateralFloor: above 1 the cost zeroed every safe side step, and an
      // agent with a collision-free candidate stood or pressed on where it was unsafe
      // (fuzz round 26). Up to lateral_cost 1 − kLateralFloor the floor never binds.
      for (std::size_t q = 0; q < k; ++q) {
        const float across = std::fabs(dir[2 * q] * py - dir[2 * q + 1] * px);
        w[q] *= std::max(kLateralFloor, 1.0f - lateral * std::min(sp[q], want) * across);
      }
    }
    if (blocked) {
      for (std::size_t q = 0; q < k; ++q) {
        const float right = dir[2 * q] * py - dir[2 * q + 1] * px;  // sin of the clockwise angle
        w[q] *= 1.0f + bias * std::max(0.0f, side * right);
      }
    }
    for (std::size_t q = 0; q < k; ++q) r[q] *= w[q];
  }
}

void Simulation::strength_from_speed(const Plan& p, std::size_t begin, std::size_t end,
                                     std::size_t step) {
  // The chosen velocity is a candidate of the speed map: its slot's speed (when choose
  // interpolated the heading — vector_sum, weighted_neighbours, subslot — the slot nearest
  // the heading caps it as well), capped by the speed the agent wants: the interest peak
  // (Lewis's speed control; Arrive lowers it near the goal).
  const std::size_t k = k_;
  const float* dir = slot_set_.directions();
  for (std::size_t i = begin; i < end; i += step) {
    const float* in = interest_.data() + i * k;
    const float want = wanted_speed(i);
    const std::int32_t s = slot_[i];
    if (s < 0) {
      strength_[i] = 0.0f;
      continue;
    }
    const float* sp = speed_.data() + i * k;
    const std::size_t bs = static_cast<std::size_t>(s);
    const std::size_t lo = (bs + k - 1) % k, hi = (bs + 1) % k;
    if (bs == peak_[i] && sp[bs] >= 1.0f && sp[lo] >= 1.0f && sp[hi] >= 1.0f) {
      // Free way: the chosen slot is the interest peak and it and both neighbours are safe
      // at full speed. Head for the peak itself (a parabola through the three interest
      // values, in angle, clamped to half a gap) instead of the slot, so that a goal
      // between two slots is not reached by zig-zagging between them.
      const float a = in[lo], c = in[bs], e = in[hi];
      const float gl = slot_set_.gaps()[lo], gr = slot_set_.gaps()[bs];
      bool fit = false;
      float x = 0.0f;
      if (slot_set_.regular()) {
        // Equal gaps g (a ring's stored gaps differ by an ulp; regular() allows 1e-5): the
        // vertex is at g·(a − e) / (2·(a − 2c + e)).
        const float curv = a - 2.0f * c + e;
        fit = curv < 0.0f;
        if (fit) x = std::clamp(0.5f * (a - e) / curv, -0.5f, 0.5f) * gr;
      } else {
        // Unequal gaps (slots denser ahead, crowd_slots): the fit of choose's subslot
        // mode through (−gl, a), (0, c), (gr, e), clamped to half of the gap on the side
        // it falls (fit_peak).
        const PeakFit f = fit_peak(a, c, e, gl, gr);
        fit = f.fit;
        x = static_cast<float>(f.x);
      }
      if (fit) {
        const Vec2 u{dir[2 * bs], dir[2 * bs + 1]};
        const float cx = std::cos(x), sx = std::sin(x);
        store2(direction_.data(), i, {cx * u.x - sx * u.y, sx * u.x + cx * u.y});
      }
    }
    const Vec2 d = load2(direction_.data(), i);
    const bool exact = same(d, dir, bs);  // the chosen slot's heading (argmax, not refined)
    const std::size_t near = exact ? bs : detail::nearest_slot(dir, k, d);
    const float candidate = std::min(sp[bs], sp[near]);
    strength_[i] = std::min(candidate, want);
    // Exactly a candidate the speed map tested: the chosen slot's own direction at its
    // speed. An interpolating choose (vector_sum, weighted_neighbours, subslot) heads
    // between slots, which no candidate tested, whatever the speed.
    if (exact && strength_[i] == candidate) continue;
    // A refined or interpolated heading, or a lowered speed, is not one of the candidates
    // the speed map tested: check it, and fall back to the chosen slot's direction if it
    // is not safe (below).
    const float top = p.in.agents.max_speed[i];
    Vec2 v = d * (strength_[i] * top);
    if (config_.rotate) v = to_world(v, i);
    const float h = horizon_of(p, i);
    if (memo_ttc(p, i, v) >= h) continue;
    store2(direction_.data(), i, {dir[2 * bs], dir[2 * bs + 1]});
    // The chosen slot's direction at no more than the speed the agent wants, when that is
    // not the velocity just refused and it is safe; else the slot's own candidate (its
    // direction at its speed). The candidate alone, at the slot's full speed, sent a
    // walker slowing for its goal by a wall into the wall at 0.85 m/s (a past_target
    // form not kept): the slot's ray read the wall as past the goal, the course refined
    // onto the goal a hair off did not (docs/crowd.md, "The last radius to a goal").
    const float slow = std::min(sp[bs], want);
    if (!exact && slow < sp[bs]) {
      Vec2 u = Vec2{dir[2 * bs], dir[2 * bs + 1]} * (slow * top);
      if (config_.rotate) u = to_world(u, i);
      if (memo_ttc(p, i, u) >= h) {
        strength_[i] = slow;
        continue;
      }
    }
    if (sp[bs] > want && velocity_->past_target && kinematic_ &&
        kinematic_ttc(*velocity_, p.in, i, Vec2{}) < h) {
      // A kinematic agent comes at this one, which cannot stand or go at the speed it
      // wants. past_target left out a wall or a body standing beyond the target because
      // the agent stops there, at that speed: faster, the slot's candidate must be safe
      // without it, else the agent stands and evade_kinematic steps it aside. (A
      // pedestrian at its goal 5 cm from a wall read the ray along the wall towards the
      // goal as free, went at full speed, passed the goal, turned back, and dithered at
      // +-0.2 m/s where it should have stepped out of a vehicle's way.)
      CollisionDanger plain = *velocity_;
      plain.past_target = false;
      Vec2 u = Vec2{dir[2 * bs], dir[2 * bs + 1]} * (sp[bs] * top);
      if (config_.rotate) u = to_world(u, i);
      if (velocity_ttc(plain, p.in, i, u) < h) {
        strength_[i] = 0.0f;
        continue;
      }
    }
    strength_[i] = sp[bs];
  }
}

void Simulation::cap_retreat(const Plan& p, std::size_t begin, std::size_t end, std::size_t step) {
  // No safe course and the least bad one leads more than 90° away from the goal (interest
  // below half the peak): go that way no faster than retreat_speed. Retreating at the
  // oncomers' speed is the largest time to collision, and a group can push an agent back
  // for metres that way; slowly, it gives way a little and lets them pass around it.
  const CollisionDanger& vd = *velocity_;
  for (std::size_t i = begin; i < end; i += step) {
    if (!(strength_[i] > vd.retreat_speed)) continue;
    const Vec2 d = load2(direction_.data(), i);
    // The time to collision first: keep_inertia asks the same velocity next (memo_ttc), and
    // most agents are safe, so the interest lookup is rarely needed.
    Vec2 v = d * (strength_[i] * p.in.agents.max_speed[i]);
    if (config_.rotate) v = to_world(v, i);
    // Safe enough: with commit > 0 a course kept at a time to collision of at least
    // (1 − commit)·horizon is the promised decision (keep_course), not a retreat with no
    // safe course; capping it would test nothing and could walk into a neighbour closing
    // from behind.
    const float t = memo_ttc(p, i, v);
    if (t >= (1.0f - vd.commit) * horizon_of(p, i)) continue;
    if (!(interest_towards(i, d) < 0.5f * wanted_speed(i))) continue;
    // Slower must not mean sooner: a neighbour closing from behind, or a wall's time
    // scale, can make the capped course meet a collision before the candidate would (its
    // time to collision, the largest of all candidates', is what the decision promised).
    const Vec2 slow = v * (vd.retreat_speed / strength_[i]);
    if (memo_ttc(p, i, slow) < t) continue;
    strength_[i] = vd.retreat_speed;
  }
}

void Simulation::keep_inertia(const Plan& p, std::size_t begin, std::size_t end, std::size_t step) {
  // Inertia g: the command becomes v = v₁ + g·(v₀ − v₁), the new decision v₁ pulled towards
  // the last command v₀ (world frame; from rest v₀ = 0), when v is as safe as the decision
  // allows: its time to collision at least (1 − commit)·horizon when v₁ is safe, at least
  // v₁'s when no course is. A decision that alternates A, B, A, ... between two candidates
  // (a sampled velocity obstacle flickering, or two agents each reacting to the other's
  // last dodge) then averages out instead of zig-zagging; the stored command is v, so the
  // commands are an exponential average of the decisions while that is safe.
  const CollisionDanger& vd = *velocity_;
  const float per = decisions_of(decision_time(p.dt));
  const float g = per == 1.0f ? vd.inertia : std::pow(vd.inertia, per);
  for (std::size_t i = begin; i < end; i += step) {
    const float top = p.in.agents.max_speed[i];
    if (!(top > 0.0f)) continue;
    const Vec2 w0 = load2(prev_direction_.data(), i);
    Vec2 d1 = load2(direction_.data(), i);
    if (config_.rotate) d1 = to_world(d1, i);
    // The last command at most as fast as the agent wants to go now (the interest peak).
    const float want = wanted_speed(i);
    const Vec2 v0 = w0 * (std::min(prev_strength_[i], want) * top);
    const Vec2 v1 = d1 * (strength_[i] * top);
    if (v0.x == v1.x && v0.y == v1.y) continue;
    const Vec2 v = v1 + (v0 - v1) * g;
    const float t1 = memo_ttc(p, i, v1);
    const float h = horizon_of(p, i);
    const float need = t1 >= h ? (1.0f - vd.commit) * h : t1;
    if (memo_ttc(p, i, v) < need) continue;
    const float len = length(v);
    if (!(len > 1e-6f * top)) {
      strength_[i] = 0.0f;
      continue;
    }
    Vec2 d = v * (1.0f / len);
    if (config_.rotate) d = to_slots(d, i);
    store2(direction_.data(), i, d);
    strength_[i] = std::min(1.0f, len / top);
  }
}

void Simulation::settle_at_goal(const Plan& p, std::size_t begin, std::size_t end,
                                std::size_t step) {
  // Near the goal (the interest's maximum below 0.98: within Arrive's slowing radius) the
  // command's speed is capped by the progress its course makes: wanted speed ×
  // max(0, cos θ), θ its angle from the interest peak, when the capped velocity is as
  // safe as the command. Without it an agent whose goal is taken (another agent standing
  // on it, a monster's player surrounded) walks round it for good at the speed it wants
  // there: the half-cosine interest scores a sideways course at half the peak, and the
  // sideways course is safe. The maximum is read from the parabola through the peak slot
  // and its neighbours (fit_peak, choose's subslot fit; the peak slot's own value is below
  // 1 wherever the goal lies between slots: 0.95 midway between slots 50° apart, at any
  // distance).
  const CollisionDanger& vd = *velocity_;
  const float* dir = slot_set_.directions();
  const float* gaps = slot_set_.gaps();
  const std::size_t k = k_;
  for (std::size_t i = begin; i < end; i += step) {
    const float want = wanted_speed(i);
    const float s = strength_[i];
    if (!(want < 1.0f) || !(s > 0.0f)) continue;
    const std::size_t pk = peak_[i];
    const float* in = interest_.data() + i * k;
    const std::size_t lo = (pk + k - 1) % k, hi = (pk + 1) % k;
    if (!(fit_peak(in[lo], in[pk], in[hi], gaps[lo], gaps[pk]).peak < 0.98)) continue;
    const Vec2 d = load2(direction_.data(), i);
    const float cap = want * std::max(0.0f, d.x * dir[2 * pk] + d.y * dir[2 * pk + 1]);
    if (!(s > cap)) continue;
    const float top = p.in.agents.max_speed[i];
    const Vec2 w = config_.rotate ? to_world(d, i) : d;
    const float t = memo_ttc(p, i, w * (s * top));
    const float h = horizon_of(p, i);
    const float need = t >= h ? (1.0f - vd.commit) * h : t;
    // Only the neighbours ahead (and beside) count: slowing down on the same course
    // meets a wall later, not sooner, and only a follower can run into it, which is the
    // follower's to avoid. Asked of every neighbour, the test refused the cap to a ring
    // of agents round a taken goal (each slowing would be run into by the one behind), and
    // 7 of 8 monsters round a player kept circling it at 1.1 m/s.
    if (velocity_ttc_ahead(vd, p.in, i, w * (cap * top), w) < need) continue;
    strength_[i] = cap;
  }
}

void Simulation::note_yields(const float* pos, std::size_t begin, std::size_t end) {
  // make_way's condition (6): whom each agent stepped aside for, until it is home again
  // (within its radius of its target; a detour's waypoint is not home).
  const AgentsView a = agents_->view();
  for (std::size_t i = begin; i < end; ++i) {
    if (yield_new_[i] >= 0) yielded_to_[i] = yield_new_[i];
    yield_new_[i] = -1;
    if (a.target == nullptr || (a.waypoint != nullptr && a.waypoint[i] != 0)) continue;
    if (length(load2(a.target, i) - load2(pos, i)) <= a.radius[i]) yielded_to_[i] = -1;
  }
}

namespace {

// make_way's condition (4): a body other than i and j, no faster than a quarter of its max
// speed, sits within r_k + r_j of j's target (j cannot stand there; i stepping aside
// gains it nothing). Only i's listed neighbours are asked.
// Also condition (5), with j = i and `clear` the margin: i's own goal is that close to a
// body standing, so that i could not come back to it once it had stepped aside.
bool target_taken(const AgentsView& a, const std::int32_t* list, std::int32_t count, std::size_t i,
                  std::size_t j, float clear = 0.0f) {
  const Vec2 tj = load2(a.target, j);
  const float rj = a.radius[j];
  for (std::int32_t n = 0; n < count; ++n) {
    const auto k = static_cast<std::size_t>(list[n]);
    if (k == i || k == j) continue;
    if (!(length(load2(a.velocity, k)) < 0.25f * a.max_speed[k])) continue;
    if (length(load2(a.position, k) - tj) < a.radius[k] + rj + clear) return true;
  }
  return false;
}

}  // namespace

void Simulation::make_way(const Plan& p, std::size_t begin, std::size_t end, std::size_t step) {
  // Agents at their goals do not make way by themselves: a late arrival whose straight way to its
  // goal runs through a body standing at its own goal (a lattice of goals 1.2 m apart; a pocket
  // behind pillars) has no safe course there, paces or stands for good, and only a route round
  // (Detour) got it home. Here agent i, within kMakeWayHome radii of its goal (not a waypoint),
  // yields to a neighbour j that (1) wants through it: i's centre lies ahead of j on the line to
  // j's target, with that target beyond both bodies (j gains nothing from i leaving a spot on its
  // target: a shared goal, monsters after i), within r_i + r_j + 2·margin of the line; (2) is near:
  // its body within kMakeWayReach of i's; and (3) makes no headway: its velocity towards its target
  // is below a quarter of its max speed; (4) can get home: no other body of i's list, slower than a
  // quarter of its max speed, sits within r_k + r_j of j's target (a goal taken: eight agents sent
  // to one point, those in the second shell stepped aside for the third, which then stood in their
  // place, and the ring churned at walking speed for good). Of several, the nearest along its line
  // counts. And (5) i could come back: no other body standing so (slower than a quarter of its max
  // speed) lies within r_i + r_k + margin of i's own goal (a ring of bodies 0.62 m apart: the one
  // that stepped out for a walker paced 0.6 m from its goal for good, the gap too narrow for its
  // body and margins). And (6) j has not stepped aside for i since j was last home
  // (Simulation::note_yields): in a packed pocket between pillars (bench_stranding.py, seed 188)
  // two bodies at goals 2 m apart made way for each other in turn for 45 s, each walking back
  // through the other's spot, and three such pairs were off their goals at the end of the run.
  // Inside that clearance i steps aside, perpendicular to j's line on the side i's centre lies
  // (left of the line or on it: to j's left, so that j passes on its right), on the slot nearest
  // that side within 60° whose speed, capped at make_way, is free for the horizon (none such: the
  // decision stands). Out of it but within kMakeWayHold more, i does not move back towards the line
  // (a decision with a component towards it becomes standing), so it does not swing in and out of
  // the way while j passes; once j has passed or found headway, i's own decision takes it back to
  // its goal.
  constexpr float kMakeWayHome = 4.0f;   // radii from its goal
  constexpr float kMakeWayReach = 0.6f;  // m between the bodies
  constexpr float kMakeWayHold = 0.3f;   // m beyond the clearance
  constexpr float kMakeWayCos = 0.5f;    // cos 60°
  const CollisionDanger& vd = *velocity_;
  const AgentsView& a = p.in.agents;
  const NeighborLists& nb = p.in.neighbors;
  if (nb.empty() || a.target == nullptr) return;
  for (std::size_t i = begin; i < end; i += step) {
    if (is_kinematic(a, i) || (a.waypoint != nullptr && a.waypoint[i] != 0)) continue;
    const Vec2 xi = load2(a.position, i);
    const float ri = a.radius[i];
    if (!(length(load2(a.target, i) - xi) <= kMakeWayHome * ri)) continue;
    // Standing or stepping aside, not arriving at walking speed.
    if (!(length(load2(a.velocity, i)) <= vd.make_way * a.max_speed[i] + kStandingSpeed)) continue;
    float nearest = std::numeric_limits<float>::infinity();
    Vec2 away{};
    std::size_t who = 0;
    bool inside = false;
    const std::int32_t* list = nb.indices + i * nb.max_neighbors;
    for (std::int32_t n = 0; n < nb.counts[i]; ++n) {
      const auto j = static_cast<std::size_t>(list[n]);
      if (is_kinematic(a, j)) continue;
      const Vec2 xj = load2(a.position, j);
      const Vec2 gap = load2(a.target, j) - xj;
      const float dj = length(gap), rj = a.radius[j];
      if (!(dj > ri + rj)) continue;  // j is at its target itself
      const Vec2 g = gap * (1.0f / dj);
      const Vec2 rel = xi - xj;
      const float along = dot(rel, g);
      if (!(along > 0.0f && along + ri + rj < dj && along - ri - rj <= kMakeWayReach)) continue;
      const float lateral = cross(g, rel);  // > 0: i lies left of j's line
      const float clear = ri + rj + 2.0f * vd.margin;
      if (!(std::fabs(lateral) < clear + kMakeWayHold)) continue;
      if (!(dot(load2(a.velocity, j), g) < 0.25f * a.max_speed[j])) continue;
      if (!(along < nearest)) continue;
      if (yielded_to_[j] == static_cast<std::int32_t>(i)) continue;  // (6)
      if (target_taken(a, list, nb.counts[i], i, j)) continue;
      nearest = along;
      who = j;
      away = lateral >= 0.0f ? Vec2{-g.y, g.x} : Vec2{g.y, -g.x};
      inside = std::fabs(lateral) < clear;
    }
    if (!(nearest < std::numeric_limits<float>::infinity())) continue;
    if (inside && target_taken(a, list, nb.counts[i], i, i, vd.margin)) continue;
    if (!inside) {
      // Not back towards the line: standing instead, when standing is safe for the
      // horizon (it was taken unchecked, and an agent stood in a walker's way with a safe
      // course to take; fuzz round 26).
      const Vec2 d = load2(direction_.data(), i);
      const Vec2 w = config_.rotate ? to_world(d, i) : d;
      if (strength_[i] > 0.0f && dot(w, away) < 0.0f && memo_ttc(p, i, Vec2{}) >= horizon_of(p, i))
        strength_[i] = 0.0f;
      continue;
    }
    if (take_slot_towards(p, i, away, kMakeWayCos, vd.make_way))
      yield_new_[i] = static_cast<std::int32_t>(who);
  }
}

bool Simulation::take_slot_towards(const Plan& p, std::size_t i, Vec2 way, float min_cos,
                                   float cap) {
  // make_way's and break_standoff's move: of the slots within acos(min_cos) of `way` (a
  // world direction), the one nearest it (ties: the first) whose speed, the slot's capped
  // at `cap` (max-speed units), is free for the horizon becomes agent i's decision.
  const Vec2 ws = config_.rotate ? to_slots(way, i) : way;
  const float* dir = slot_set_.directions();
  const float* sp = speed_.data() + i * k_;
  const float top = p.in.agents.max_speed[i];
  const float h = horizon_of(p, i);
  std::int32_t best = -1;
  float best_cos = min_cos, best_speed = 0.0f;
  for (std::size_t q = 0; q < k_; ++q) {
    const Vec2 dq{dir[2 * q], dir[2 * q + 1]};
    const float c = dot(dq, ws);
    if (!(c >= best_cos) || (best >= 0 && c == best_cos)) continue;
    const float s = std::min(sp[q], cap);
    if (!(s > 0.0f)) continue;
    const Vec2 w = config_.rotate ? to_world(dq, i) : dq;
    if (!(memo_ttc(p, i, w * (s * top)) >= h)) continue;
    best = static_cast<std::int32_t>(q);
    best_cos = c;
    best_speed = s;
  }
  if (best < 0) return false;
  const auto q = static_cast<std::size_t>(best);
  store2(direction_.data(), i, Vec2{dir[2 * q], dir[2 * q + 1]});
  strength_[i] = best_speed;
  slot_[i] = best;
  return true;
}

void Simulation::break_standoff(const Plan& p, std::size_t begin, std::size_t end,
                                std::size_t step) {
  // Two walkers that reach a narrow exit's mouth side by side can arch in it: in the
  // bottleneck's 1.2 m gap (benchmarks/standoff.py) two bodies stood at (−0.22, ±0.33) m,
  // 6 cm apart, for 10–27 s. Straight on each would brush a door post, towards the middle
  // each would walk into the other, so neither has a safe course with headway; squeeze,
  // unstick and make_way (for bodies at their goals) do not free them, and the crowd behind
  // paces along the wall. Here agent i, a walker (more than kStandoffHome radii from its
  // target), that has stood (slower than kStandoffSpeed) for `standoff` seconds, backs off
  // when a neighbour j (1) has stood as long and walks too (its target as far out); (2) is
  // at hand: the bodies within kStandoffReach of touching; (3) wants the same way: the
  // directions to their targets within 60°; (4) stands beside i, not ahead or behind: the
  // line between the centres at least 60° off each of those directions (a queue is no
  // standoff; its front is the one to move); (5) is nearer its target (the same distance:
  // the higher index backs off), so that one of the two and only one backs off whatever
  // the order the agents decide in; and (6) has nothing else in its way: no third body of
  // i's neighbour list within kStandoffAhead of j's body and within 60° of j's way (a
  // crowd round one point, or a queue two abreast, gains nothing from one of its bodies
  // stepping back). Backing off, for kBackTime, i walks away from its target on the slot
  // nearest straight back (within 90°) whose speed, capped at kBackSpeed, is free for the
  // horizon (none such: the decision stands); j, standing, takes the middle of the gap.
  constexpr float kStandoffHome = 2.0f;    // radii from its target
  constexpr float kStandoffReach = 0.15f;  // m between the bodies
  constexpr float kStandoffAhead = 0.6f;   // m between j's body and a third one ahead
  constexpr float kStandoffCos = 0.5f;     // cos 60°
  constexpr double kBackTime = 2.0 / 3.0;  // s
  constexpr float kBackSpeed = 0.5f;       // of max speed
  const CollisionDanger& vd = *velocity_;
  const AgentsView& a = p.in.agents;
  const NeighborLists& nb = p.in.neighbors;
  if (nb.empty() || a.target == nullptr) return;
  const double wait = vd.standoff;
  // The way to agent m's target (unit) and its length, when m walks (0 otherwise).
  const auto way = [&](std::size_t m, Vec2& unit) {
    const Vec2 g = load2(a.target, m) - load2(a.position, m);
    const float d = length(g);
    if (!(d > kStandoffHome * a.radius[m])) return 0.0f;
    unit = g * (1.0f / d);
    return d;
  };
  for (std::size_t i = begin; i < end; i += step) {
    if (is_kinematic(a, i)) continue;
    Vec2 gi{};
    const float di = way(i, gi);
    if (!(di > 0.0f)) {
      back_until_[i] = 0.0;
      continue;
    }
    if (!(time_ < back_until_[i]) && stood_[i] >= wait) {
      const Vec2 xi = load2(a.position, i);
      const float ri = a.radius[i];
      const std::int32_t* list = nb.indices + i * nb.max_neighbors;
      for (std::int32_t n = 0; n < nb.counts[i]; ++n) {
        const auto j = static_cast<std::size_t>(list[n]);
        if (is_kinematic(a, j) || !(stood_[j] >= wait)) continue;  // (1)
        Vec2 gj{};
        const float dj = way(j, gj);
        if (!(dj > 0.0f)) continue;  // (1)
        const Vec2 xj = load2(a.position, j);
        const float rj = a.radius[j];
        const Vec2 rel = xj - xi;
        const float dist = length(rel);
        if (!(dist - ri - rj <= kStandoffReach)) continue;  // (2)
        if (!(dot(gi, gj) >= kStandoffCos)) continue;       // (3)
        const float lim = kStandoffCos * dist;
        if (!(std::fabs(dot(rel, gi)) <= lim && std::fabs(dot(rel, gj)) <= lim)) continue;  // (4)
        if (!(di > dj || (di == dj && i > j))) continue;                                    // (5)
        bool blocked = false;                                                               // (6)
        for (std::int32_t m = 0; m < nb.counts[i] && !blocked; ++m) {
          const auto o = static_cast<std::size_t>(list[m]);
          if (o == j || o == i) continue;
          const Vec2 ro = load2(a.position, o) - xj;
          const float d = length(ro);
          blocked = d - rj - a.radius[o] <= kStandoffAhead && dot(ro, gj) >= kStandoffCos * d;
        }
        if (blocked) continue;
        back_until_[i] = time_ + kBackTime;
        break;
      }
    }
    if (time_ < back_until_[i]) take_slot_towards(p, i, gi * -1.0f, 0.0f, kBackSpeed);
  }
}

namespace {
/// How agent i's motion model brakes (Simulation::stop_short_past_target): from speed v
/// it runs alpha·v² + beta·v more before it stands, once its command is 0. `brakes`
/// false: the command does not set its speed (full_speed) or nothing can change its
/// velocity (max_accel 0 under Accel or Vehicle, steer_force 0 under Lerp).
struct Braking {
  bool brakes = false;
  float alpha = 0.0f, beta = 0.0f;
  /// What the agent runs braking from speed v once its command is 0.
  float of(float v) const { return (alpha * v + beta) * v; }
  /// What a command of speed v held for t, then braked, runs.
  float run(float v, float t) const { return v * t + of(v); }
};

Braking braking_of(const MotionModel& motion, const AgentsView& a, std::size_t i, float dt) {
  Braking r;
  if (const auto* m = std::get_if<Accel>(&motion)) {
    if (m->full_speed) return r;
    if (m->gdx_order) {
      // Uncapped: the velocity falls by dt/ttt of itself a step, the position moving
      // with the old one first: v·(ttt + dt) at most.
      r.beta = (m->time_to_target > 0.0f ? m->time_to_target : dt) + dt;
    } else {
      // At most max_accel, and (time_to_target T > 0) (desired − v)/T: at most
      // v²/(2·max_accel) + v·T.
      const float accel = a.max_accel[i];
      if (!(accel > 0.0f)) return r;
      r.alpha = 0.5f / accel;
      r.beta = std::max(m->time_to_target, 0.0f);
    }
  } else if (const auto* m = std::get_if<Vehicle>(&motion)) {
    const float accel = a.max_accel[i];
    if (m->full_speed || !(accel > 0.0f)) return r;
    r.alpha = 0.5f / accel;  // the speed moves by max_accel·dt a step
  } else if (const auto* m = std::get_if<Lerp>(&motion)) {
    const float force =
        std::clamp(m->steer_force >= 0.0f ? m->steer_force : a.steer_force[i], 0.0f, 1.0f);
    if (m->full_speed || !(force > 0.0f)) return r;
    r.beta = dt * (1.0f - force) / force;  // v·(1 − f) a step, then v·(1 − f)², ...
  }
  r.brakes = std::isfinite(r.alpha) && std::isfinite(r.beta);
  return r;
}
}  // namespace

void Simulation::stop_short_past_target(const Plan& p, std::size_t begin, std::size_t end,
                                        std::size_t step) {
  const AgentsView& a = p.in.agents;
  if (!a.target) return;
  // A command of speed c is held for the decision's time t (the step, or
  // decision_interval steps), then the agent brakes as its motion model does, from its
  // speed along the course v0 where that is faster than c (it has not slowed to c yet):
  // it runs c·t + B(max(c, v0)), B(v) = alpha·v² + beta·v (braking_of).
  const float t = static_cast<float>(decision_time(p.dt));
  const CollisionDanger& b = *velocity_;
  for (std::size_t i = begin; i < end; i += step) {
    const float top = a.max_speed[i];
    const float c = strength_[i] * top;
    if (!(c > 0.0f) || is_kinematic(a, i) || (a.waypoint && a.waypoint[i])) continue;
    const Braking br = braking_of(params_.motion, a, i, p.dt);
    if (!br.brakes) continue;
    Vec2 d = load2(direction_.data(), i);
    if (config_.rotate) d = to_world(d, i);
    const float n = length(d);
    if (!(n > 0.0f)) continue;
    d = Vec2{d.x / n, d.y / n};
    const float v0 = std::max(0.0f, dot(load2(a.velocity, i), d));
    const auto brake = [&](float v) { return br.of(v); };
    const float run = c * t + brake(std::max(c, v0));
    const Vec2 gv = load2(a.target, i) - load2(a.position, i);
    // The fastest command that stops within h (a hair below, for the float rounding): with
    // room for v0's braking and its hold, c·t + B(c) = h, solved in the form that holds
    // for alpha = 0 too; else what the hold leaves once v0 is braked from; else nothing
    // helps and the agent brakes now. As a strength.
    const auto fit_of = [&](float h) {
      float fit = 0.0f;
      const float room = h - brake(v0);
      if (room >= v0 * t) {
        const float tb = t + br.beta;
        fit = 2.0f * h / (tb + std::sqrt(tb * tb + 4.0f * br.alpha * h));
      } else if (room > 0.0f) {
        fit = room / t;
      }
      return fit / top * (1.0f - 0x1p-20f);
    };
    // A wall or body past_target leaves out lies no nearer than the target's closest
    // approach less the disc (r_i + margin): a command that stops short of that meets
    // none.
    if (b.past_target && run > length(gv) - a.radius[i] - b.margin) {
      const float h = past_target_hit(b, p.in, i, d);
      if (run > h) strength_[i] = std::min(strength_[i], fit_of(h));
    }
    // brake_at_target: a course heading at the target (within 45°, or passing within r_i
    // of it; a slot can miss a far target's line by more than r_i) stops at its closest
    // approach, g·d along it: an agent faster than its slowing can brake (Arrive's 1 m ramp
    // at 5 m/s and 6 m/s²) ran past its goal, turned at speed and circled it for good. Only
    // for a fast agent, whose run from max speed is more than its radius: a walker (1.3 m/s
    // at 6 m/s² stands within 0.18 m) is left to its interest's slowing, as slowing it on a
    // course decided at speed can meet a neighbour crossing it (in the crowd scenarios,
    // whose walkers stand at goals 1.4 m apart, agents touched where they had not); and
    // only where the slower command is as safe as the one decided.
    // Off the target's way, within its run of the target, the agent keeps to what it can
    // stop within: its distance from the target, or its radius (fuzz round 31: at 7 and
    // 9-12 m/s an agent stood on its goal, then a return to its course, turned part-way
    // (return_step), took it away at 3.5 m/s on a loop through the goal, for good).
    if (b.brake_at_target) {
      const bool fast = br.run(top, t) > a.radius[i];
      const float along = dot(gv, d);
      const float now = strength_[i] * top;
      const float stops = now * t + br.of(std::max(now, v0));
      const bool at = along > 0.0f && std::fabs(cross(d, gv)) <= std::max(a.radius[i], along);
      const float dist = length(gv);
      const float stop = at ? along : std::max(dist, a.radius[i]);
      if ((at || dist < stops) && stops > stop && fast) {
        const float cap = fit_of(stop);
        if (cap < strength_[i]) {
          const float safe = std::min(horizon_of(p, i), memo_ttc(p, i, d * now));
          if (memo_ttc(p, i, d * (cap * top)) >= safe) strength_[i] = cap;
        }
      }
    }
  }
}

void Simulation::evade_kinematic(const Plan& p, std::size_t begin, std::size_t end,
                                 std::size_t step) {
  // An agent that stands (nothing resolved positive: at its goal, Arrive's interest is 0
  // everywhere; or standing is its best) while a kinematic agent comes at it steps aside:
  // a kinematic agent does not avoid it, so standing, as agents do for each other (and
  // are passed), it was run into, and against a wall crushed, its centre inside a
  // vehicle for good (fuzz round 11). It takes the slot with the least danger that
  // offers a speed above 0 (ties: the faster, then the lower slot), at that speed.
  const CollisionDanger& vd = *velocity_;
  const std::size_t k = k_;
  const float* dir = slot_set_.directions();
  for (std::size_t i = begin; i < end; i += step) {
    // Stands: commanded no faster than a body standing (kStandingSpeed), so that the tail
    // of inertia's exponential average after a last step does not count as moving.
    if (strength_[i] * p.in.agents.max_speed[i] > kStandingSpeed ||
        !(kinematic_ttc(vd, p.in, i, Vec2{}) < horizon_of(p, i)))
      continue;
    const float* dg = danger_.data() + i * k;
    const float* sp = speed_.data() + i * k;
    std::int32_t best = -1;
    for (std::size_t q = 0; q < k; ++q) {
      if (!(sp[q] > 0.0f)) continue;
      if (best < 0 || dg[q] < dg[best] || (dg[q] == dg[best] && sp[q] > sp[best]))
        best = static_cast<std::int32_t>(q);
    }
    if (best < 0) continue;
    const auto q = static_cast<std::size_t>(best);
    store2(direction_.data(), i, Vec2{dir[2 * q], dir[2 * q + 1]});
    strength_[i] = sp[q];
    slot_[i] = best;
  }
}

float Simulation::interest_towards(std::size_t i, Vec2 d) const {
  // The interest map read at a heading between slots: linear in angle between the two
  // slots that bracket d.
  const std::size_t k = k_;
  const float* in = interest_.data() + i * k;
  const float* dir = slot_set_.directions();
  // Exactly the chosen slot (argmax, not refined): the loop below would find it and read
  // its value (the angle from it is +0).
  if (const std::int32_t s = slot_[i]; s >= 0 && same(d, dir, static_cast<std::size_t>(s)))
    return in[s];
  const std::size_t q = detail::nearest_slot(dir, k, d);
  const Vec2 u{dir[2 * q], dir[2 * q + 1]};
  const float off = std::atan2(u.x * d.y - u.y * d.x, u.x * d.x + u.y * d.y);  // ccw from q
  const std::size_t r = off >= 0.0f ? (q + 1) % k : (q + k - 1) % k;
  const float g = off >= 0.0f ? slot_set_.gaps()[q] : slot_set_.gaps()[r];
  const float f = std::min(1.0f, std::fabs(off) / g);
  return in[q] + f * (in[r] - in[q]);
}

bool Simulation::fast_by_target(const Plan& p, std::size_t i) const {
  // brake_at_target's agents: one whose speed runs more than its radius before it stands
  // (braking_of), within that run (and a radius) of the target it stops at.
  const AgentsView& a = p.in.agents;
  if (!a.target || is_kinematic(a, i) || (a.waypoint && a.waypoint[i])) return false;
  const Braking br = braking_of(params_.motion, a, i, p.dt);
  if (!br.brakes) return false;
  const float t = static_cast<float>(decision_time(p.dt));
  const float r = a.radius[i];
  return br.run(a.max_speed[i], t) > r && length(load2(a.target, i) - load2(a.position, i)) <
                                              br.run(length(load2(a.velocity, i)), t) + r;
}

void Simulation::keep_course(const Plan& p, std::size_t begin, std::size_t end, std::size_t step) {
  // Commitment: the previous decision (heading d₀, strength s₀, capped by the speed the
  // agent wants now) is kept when it still offers at least the rate of progress of the new
  // one (interest towards d₀ times s₀ against the same for the new decision) and its time
  // to collision is at least (1 − commit)·horizon. A course is then not dropped for a
  // threat that only grazes the horizon for a step — the flicker of a sampled velocity
  // obstacle — while any better new decision (a free way reopening, the goal moving) wins
  // at once. Optional refinements (CollisionDanger, all off by default):
  // - commit_danger c: when the new decision is itself unsafe (TTC t₁ < horizon: no course
  //   is safe, it is the one with the largest TTC), the previous course is kept while its
  //   TTC is at least (1 − c)·t₁, so an agent in a jam does not swing between two nearly
  //   equally bad ways every step;
  // - return_margin m: a better new course replaces a different, still safe previous one
  //   heading within 90° of the goal (interest >= half the peak) only when the new course
  //   is free for (1 + m)·horizon: no return to the goal heading for a gap that closes
  //   again before the turn back is done (a wall that cuts it short after it has passed
  //   within a body width of the agent's target does not count: it does not close in).
  //   Not for a previous course no faster than a body standing (kStandingSpeed): that
  //   holds the agent still, not on a course;
  // - return_step r: such a switch turns at most r radians per decision (when the course
  //   part-way is safe at the new speed and heads at least as much towards the goal as
  //   the course left), so a premature return is cut short;
  // - turn_steps n, turn_margin m: leaving an unsafe previous course, the agent turns from
  //   it towards the new decision only as far as needed: the least fraction of the angle
  //   (n bisection steps) whose course at the new speed is free for (1 + m)·horizon, so an
  //   avoidance need not be a whole slot gap (the new decision itself when none is).
  // And with Accel (time_to_target 0) and walls: a previous course that falls under the
  // floor but is safe for half a horizon is kept when the way to the new velocity under
  // the acceleration limit would bring the body within half the margin of a wall.
  const CollisionDanger& vd = *velocity_;
  SpeedPow& pow_of = speed_pow_for(vd.speed_exponent);
  static const std::vector<std::int32_t> kNoObstacles;
  const auto* accel = std::get_if<Accel>(&params_.motion);
  const bool blend_walls = accel && accel->time_to_target == 0.0f && vd.walls && p.in.world;
  for (std::size_t i = begin; i < end; i += step) {
    const float s0 = prev_strength_[i];
    if (!(s0 > 0.0f)) continue;
    const float want = wanted_speed(i);
    const float s0c = std::min(s0, want);
    if (s0c <= 0.0f) continue;
    // The previous heading in the world frame (stored after last step's rotation), and in
    // the slot frame the maps and the new decision use.
    const Vec2 w0 = load2(prev_direction_.data(), i);
    const Vec2 d0 = config_.rotate ? to_slots(w0, i) : w0;
    const Vec2 d1 = load2(direction_.data(), i);
    // The same decision again: keeping it would store the same heading and strength
    // (s0c = min(s0, want) = strength_[i] then), so there is nothing to test.
    if (d0.x == d1.x && d0.y == d1.y && s0 == strength_[i]) continue;
    const float top = p.in.agents.max_speed[i];
    const float horizon = horizon_of(p, i);
    const float floor_ttc = (1.0f - vd.commit) * horizon;
    const float i0 = interest_towards(i, d0), i1 = interest_towards(i, d1);
    const float s1 = strength_[i];
    // TTC of a slot-frame heading d at the new strength; of the previous course (asked by
    // several branches below, computed once).
    auto ttc_new = [&](Vec2 d) {
      return memo_ttc(p, i, (config_.rotate ? to_world(d, i) : d) * (s1 * top));
    };
    bool have_t0 = false;
    float t0 = 0.0f;
    auto ttc_kept = [&] {
      if (!have_t0) t0 = memo_ttc(p, i, w0 * (s0c * top));
      have_t0 = true;
      return t0;
    };
    auto keep = [&] {
      store2(direction_.data(), i, d0);
      strength_[i] = s0c;
    };
    // Whether the way from the agent's velocity to v1 under Accel's limit (constant
    // acceleration max_accel along v1 − v0 until v1 is reached) brings the body within
    // half the margin of a wall, tested at four points of that arc. The decision tests
    // velocities as if taken at once; at full speed a sharp turn takes a few tenths of a
    // second, during which the body carries on along its old velocity. (The station's
    // seeds 1 and 19: an agent at 1.6 m/s passing a gate's wall end at the margin was
    // turned 95° towards a course along the wall by a far wall's 0.05 danger on its
    // straight one, and grazed the wall end, 0.3 mm off it; docs/crowd.md.) A body already
    // nearer a wall than that is asked whether the arc brings it nearer still: else every
    // turn, away from the wall too, counted as touching (fuzz round 27: a kept course
    // along a wall ran at 1 s from a wall ahead while the turn away from both was safe).
    auto blend_touches = [&](Vec2 v1) {
      const Vec2 v0 = load2(p.in.agents.velocity, i);
      const float a = p.in.agents.max_accel[i];
      const Vec2 dv = v1 - v0;
      const float len = length(dv);
      if (!(a > 0.0f) || len <= 2.0f * a * p.dt) return false;  // reached within two steps
      const float t_end = len / a;
      const Vec2 u = dv * (1.0f / len);
      const Vec2 x = load2(p.in.agents.position, i);
      float r = p.in.agents.radius[i] + 0.5f * vd.margin;
      {
        float d = 0.0f, q[2], nrm[2];
        std::int32_t obstacle = -1;
        const float at[2] = {x.x, x.y};
        nearest_rows(*p.in.world, {at, 2}, r, vd.layers, {&d, q, nrm, &obstacle}, 0, 1);
        if (obstacle >= 0 && d < r) r = d * (1.0f - 1e-4f);
      }
      Vec2 from = x;
      for (int q = 1; q <= 4; ++q) {
        const float t = t_end * static_cast<float>(q) / 4.0f;
        const Vec2 at = x + v0 * t + u * (0.5f * a * t * t);
        if (blocked_way(*p.in.world, from, from, at, r, kNoObstacles, vd.layers)) return true;
        from = at;
      }
      return false;
    };
    // Signed angle from d0 to d1 (return_step, turn_steps).
    auto angle = [&] { return std::atan2(d0.x * d1.y - d0.y * d1.x, d0.x * d1.x + d0.y * d1.y); };
    if (vd.commit_danger > 0.0f) {
      const float t1 = ttc_new(d1);
      if (t1 < horizon) {
        if (ttc_kept() >= (1.0f - vd.commit_danger) * t1) keep();
        continue;
      }
    }
    // The worth of each course as weigh_by_speed has it: interest · speed^γ.
    const float gamma = vd.speed_exponent;
    // (pow(want, γ) is weigh_by_speed's; the bits compared, as pow keeps a zero's sign.)
    auto worth = [&](float s) {
      return std::bit_cast<std::uint32_t>(s) == std::bit_cast<std::uint32_t>(want) ? want_pow_[i]
                                                                                   : pow_of(s);
    };
    const bool better = gamma == 1.0f ? i0 * s0c < i1 * s1 : i0 * worth(s0c) < i1 * worth(s1);
    if (i0 < i1 || better) {
      // A better new course: return_margin and return_step (above) or switch.
      const float rm = vd.return_margin;
      const float rs = std::min(vd.return_step * decisions_of(decision_time(p.dt)), 3.14159265f);
      if (d0.x == d1.x && d0.y == d1.y) continue;
      if (!(rm > 0.0f) && !(rs > 0.0f)) continue;
      if (ttc_kept() < floor_ttc) continue;
      // (Held at 0.004 m/s, the tail of a slowing, an agent of bench_stranding's seed 24
      // stood 3 m from its waypoint on open floor for 100 s: the new course was never
      // free for 1.6 horizons.)
      if (rm > 0.0f && i0 >= 0.5f * want && s0c * top > kStandingSpeed) {
        const float need = (1.0f + rm) * horizon;
        const float t1 = ttc_new(d1);
        bool hold = t1 < need;
        if (hold && vd.walls && std::isfinite(t1) && s0c <= 0.5f * slowest_level(vd) &&
            same_heading(d0, d1)) {
          // A creep (a course kept at most half the slowest level's speed) is not held
          // back from the same heading at a higher speed when only walls cut that short:
          // they do not close in, and no turn is involved. (A lone agent creeping along a
          // corridor towards a U-turn at 4 m/s kept its first creep speed, 0.08 m/s, for
          // good, each faster creep held as a return; benchmarks/bends.py --uturn.)
          const Vec2 w1 = config_.rotate ? to_world(d1, i) : d1;
          if (velocity_agents_ttc(vd, p.in, i, w1 * (s1 * top)) >= need) hold = false;
        }
        if (hold && vd.walls && std::isfinite(t1)) {
          // A wall, unlike a gap between agents, does not close in: when only a wall cuts
          // the new course short of the longer horizon, and the course passes within a
          // body width of the agent's target before that wall, the course is taken.
          // (With the wall in the margin, every course towards a goal near a wall was
          // held back: an agent crept past such a goal along the wall and back for good,
          // the hallway's seed 10 with its goals spread; benchmarks/scenario_seeds.py.)
          const Vec2 w1 = config_.rotate ? to_world(d1, i) : d1;  // unit
          const float reach = t1 * (s1 * top) * (vd.wall_horizon / vd.horizon);
          const Vec2 g = load2(p.in.agents.target, i) - load2(p.in.agents.position, i);
          const float along = g.x * w1.x + g.y * w1.y;
          const float side = std::fabs(w1.x * g.y - w1.y * g.x);
          if (along >= 0.0f && along <= reach && side <= 2.0f * p.in.agents.radius[i] &&
              velocity_agents_ttc(vd, p.in, i, w1 * (s1 * top)) >= need)
            hold = false;
        }
        if (hold) {
          keep();
          continue;
        }
      }
      if (rs > 0.0f && !(vd.brake_at_target && fast_by_target(p, i))) {
        const float ang = angle();
        if (std::fabs(ang) > rs) {
          // Only a part-way course heading at least as much towards the goal as the one it
          // leaves; else the new course at once. Not for a fast agent by its target under
          // brake_at_target (fast_by_target): turned part-way past its goal at 7-12 m/s, it
          // looped through the goal for good (fuzz round 31). (Past a door it had run by at 2 m/s, an
          // agent turned back 10° a step the long way round, through courses leading away
          // from the goal, ran a loop, and missed the door again: monsters paced for good
          // in front of doors they fit through.)
          const Vec2 dm = turned(d0, std::copysign(rs, ang));
          if (interest_towards(i, dm) >= i0 && ttc_new(dm) >= horizon)
            store2(direction_.data(), i, dm);
        }
      }
      continue;
    }
    if (ttc_kept() < floor_ttc) {
      // A turn that the acceleration limit would carry into a wall is not taken while
      // the course kept is safe for half a horizon (blend_touches, above).
      if (blend_walls && ttc_kept() >= 0.5f * horizon) {
        const Vec2 w1 = config_.rotate ? to_world(d1, i) : d1;
        if (blend_touches(w1 * (s1 * top))) {
          keep();
          continue;
        }
      }
      // The previous course is no longer safe: switch, or with turn_steps the least turn.
      const std::uint32_t n = vd.turn_steps;
      if (n == 0 || !(s1 > 0.0f)) continue;
      const float ang = angle();
      const float need = (1.0f + vd.turn_margin) * horizon;
      float lo = 0.0f, hi = 1.0f;
      for (std::uint32_t it = 0; it < n; ++it) {
        const float mid = 0.5f * (lo + hi);
        if (ttc_new(turned(d0, mid * ang)) >= need) hi = mid;
        else lo = mid;
      }
      if (hi < 1.0f) store2(direction_.data(), i, turned(d0, hi * ang));
      continue;
    }
    keep();
  }
}

namespace {

// Moves a body of radius r whose centre p the solids `ids` hold out of them: candidate
// exits just outside their boundaries, the nearest first (the nearest point of each
// polygon edge, each vertex offset along both its edges' outward normals, so that a
// body clears the two sides of an inner corner, or each circle's boundary in 8
// directions from the radial one), each taken when it lies outside every solid, clear of
// every wall, and the way there is open (blocked_way). With `dense`, the exits of the
// fallback: points along the 64 edges nearest the body at most r/2 apart (256 an edge at
// most), 8 directions fanned between the two normals of their vertices, and 64 round
// every circle (the few exits of the first try could all be blocked by posts beside a
// box dropped on an agent while free room lay along its edge, and the agent stood inside
// for good; fuzz round 13). False when none is.
bool leave_solid(const World& w, Vec2 p, float r, const std::vector<std::int32_t>& ids,
                 std::uint32_t layers, Vec2& out, bool dense) {
  struct Exit {
    double d;
    Vec2 q, c;
  };
  std::vector<Exit> exits;
  // How far beyond the solid's boundary point (qx, qy) an exit lies: the radius, the skin
  // of the sweeps (1e-3 r), plus a few float32 spacings of the coordinates there, so that
  // rounding the exit to float32 cannot put it back within r. (With the spacings of the
  // agent's own coordinates, the exits round a circle of radius 1e4 round the origin came
  // back inside r of it, and an agent spawned inside stayed there.)
  auto out_from = [&](double qx, double qy) {
    const double m = std::max({std::fabs(qx), std::fabs(qy), double(std::fabs(p.x)),
                               double(std::fabs(p.y)), 1.0}) +
                     2.0 * r;
    return r + 1e-3 * r + 4.0 * std::ldexp(1.0, std::ilogb(m) - 23);
  };
  auto add = [&](double qx, double qy, double cx, double cy) {
    exits.push_back({std::hypot(qx - p.x, qy - p.y),
                     {static_cast<float>(qx), static_cast<float>(qy)},
                     {static_cast<float>(cx), static_cast<float>(cy)}});
  };
  const auto poly = w.polygon_obstacle();
  const auto ring = w.ring_points();
  const auto start = w.ring_start();
  auto edge_distance = [&](std::int32_t a, std::int32_t b) {
    const auto ua = static_cast<std::size_t>(a), ub = static_cast<std::size_t>(b);
    return segment_distance2(ring[2 * ua], ring[2 * ua + 1], ring[2 * ub], ring[2 * ub + 1], p.x,
                             p.y);
  };
  // The dense pass samples only the 64 edges nearest the body (the squared distance of the
  // 64th): all of a polygon of 10,000 edges hugged by a wall took seconds an agent, deaf to
  // Ctrl-C.
  constexpr std::size_t kDenseEdges = 64;
  double reach2 = std::numeric_limits<double>::infinity();
  if (dense) {
    std::vector<double> d2;
    for (std::size_t k = 0; k < poly.size(); ++k) {
      if (std::find(ids.begin(), ids.end(), poly[k]) == ids.end()) continue;
      for (std::int32_t i = start[k], j = start[k + 1] - 1; i < start[k + 1]; j = i++)
        d2.push_back(edge_distance(j, i));
    }
    if (d2.size() > kDenseEdges) {
      std::nth_element(d2.begin(), d2.begin() + (kDenseEdges - 1), d2.end());
      reach2 = d2[kDenseEdges - 1];
    }
  }
  for (std::size_t k = 0; k < poly.size(); ++k) {
    if (std::find(ids.begin(), ids.end(), poly[k]) == ids.end()) continue;
    const std::int32_t s = start[k], t = start[k + 1];
    double area = 0.0;
    for (std::int32_t i = s, j = t - 1; i < t; j = i++)
      area += ring[2 * static_cast<std::size_t>(j)] * ring[2 * static_cast<std::size_t>(i) + 1] -
              ring[2 * static_cast<std::size_t>(i)] * ring[2 * static_cast<std::size_t>(j) + 1];
    // Outward from the solid, the normal of edge (ex, ey) is sign*(ey, -ex); a hole (a ring
    // after the first of its polygon) is left into the ring.
    const bool hole = k > 0 && poly[k - 1] == poly[k];
    const double sign = (area >= 0.0) != hole ? 1.0 : -1.0;
    auto vx = [&](std::int32_t i) { return double(ring[2 * static_cast<std::size_t>(i)]); };
    auto vy = [&](std::int32_t i) { return double(ring[2 * static_cast<std::size_t>(i) + 1]); };
    auto normal = [&](std::int32_t a, std::int32_t b, double& nx, double& ny) {
      const double ex = vx(b) - vx(a), ey = vy(b) - vy(a), len = std::hypot(ex, ey);
      nx = len > 0.0 ? sign * ey / len : 0.0;
      ny = len > 0.0 ? -sign * ex / len : 0.0;
    };
    for (std::int32_t i = s, j = t - 1; i < t; j = i++) {
      double nx, ny;
      normal(j, i, nx, ny);
      if (nx == 0.0 && ny == 0.0) continue;
      if (dense && edge_distance(j, i) > reach2) continue;
      const double ex = vx(i) - vx(j), ey = vy(i) - vy(j), len2 = ex * ex + ey * ey;
      auto edge_exit = [&](double u) {
        const double qx = vx(j) + u * ex, qy = vy(j) + u * ey;
        const double out_by = out_from(qx, qy);
        add(qx, qy, qx + nx * out_by, qy + ny * out_by);
      };
      edge_exit(std::clamp(((p.x - vx(j)) * ex + (p.y - vy(j)) * ey) / len2, 0.0, 1.0));
      const std::int32_t next = i + 1 < t ? i + 1 : s;
      double mx, my;
      normal(i, next, mx, my);
      const double out_v = out_from(vx(i), vy(i));
      if (!dense) {
        // Vertex i, between edges j->i and i->next: both normals.
        add(vx(i), vy(i), vx(i) + (nx + mx) * out_v, vy(i) + (ny + my) * out_v);
        continue;
      }
      const double len = std::sqrt(len2);
      const int pieces = static_cast<int>(
          std::clamp(std::ceil(len / std::max(0.5 * double(r), len / 256.0)), 1.0, 256.0));
      for (int m = 0; m <= pieces; ++m) edge_exit(double(m) / pieces);
      for (int m = 0; m <= 8; ++m) {  // from edge j->i's normal to edge i->next's
        const double f = m / 8.0;
        double dx = (1.0 - f) * nx + f * mx, dy = (1.0 - f) * ny + f * my;
        const double dl = std::hypot(dx, dy);
        if (!(dl > 1e-9)) continue;  // opposite normals (a spike): the edges' own exits
        dx /= dl;
        dy /= dl;
        add(vx(i), vy(i), vx(i) + dx * out_v, vy(i) + dy * out_v);
      }
    }
  }
  const auto circ = w.circle_obstacle();
  for (std::size_t c = 0; c < circ.size(); ++c) {
    if (std::find(ids.begin(), ids.end(), circ[c]) == ids.end()) continue;
    const double cx = w.circle_centers()[2 * c], cy = w.circle_centers()[2 * c + 1];
    const double rr = w.circle_radii()[c];
    double a0 = std::atan2(p.y - cy, p.x - cx);
    if (p.x == cx && p.y == cy) a0 = 0.0;
    const int around = dense ? 64 : 8;
    for (int m = 0; m < around; ++m) {
      const double a = a0 + m * (2.0 * std::numbers::pi / around);
      const double nx = std::cos(a), ny = std::sin(a);
      const double out_by = out_from(cx + rr * nx, cy + rr * ny);
      add(cx + rr * nx, cy + rr * ny, cx + (rr + out_by) * nx, cy + (rr + out_by) * ny);
    }
  }
  std::stable_sort(exits.begin(), exits.end(),
                   [](const Exit& a, const Exit& b) { return a.d < b.d; });
  // The 16,384 nearest at most, so that a body enclosed with no way out costs a bounded
  // time (some 0.5 s beside a wall hugging a polygon of 10,000 edges: each test reads the
  // walls round the exit); 4,096 left a body inside beside a bottom edge of 20,000
  // vertices whose free room was through the top.
  if (exits.size() > 16384) exits.resize(16384);
  for (const Exit& e : exits) {
    const Vec2 c = e.c;
    // The walls in reach first (the grid's cells round the exit), then whether a solid
    // holds it: that test reads every edge of a polygon holding it, 10,000 for a polygon
    // of 10,000 edges, and was made for every refused exit (seconds an agent beside a
    // wall hugging such a polygon). Both must pass: the order changes no result.
    if (r > 0.0f) {
      float d = 0.0f, q[2], nrm[2];
      std::int32_t obstacle = -1;
      const float at[2] = {c.x, c.y};
      nearest_rows(w, {at, 2}, r, layers, {&d, q, nrm, &obstacle}, 0, 1);
      if (d < r * (1.0f - 1e-4f)) continue;
    }
    if (w.polygon_at(c, layers) >= 0 || w.circle_at(c, layers) >= 0) continue;
    if (blocked_way(w, p, e.q, c, r, ids, layers, /*away_ok=*/true)) continue;
    out = c;
    return true;
  }
  return false;
}

}  // namespace

void Simulation::push_out_of_walls() {
  world_edited_ = false;
  renewed_.clear();
  const World* w = world_ && !world_->grid().empty() ? world_.get() : nullptr;
  if (!w) return;
  parallel_for(n_, kGrain, [&](std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i) push_out_row(*w, i, true);
  });
}

std::string Simulation::check_state() const {
  if (!(time_ >= 0.0 && time_ <= std::numeric_limits<double>::max()))
    return "time holds " + std::to_string(time_) + " s";
  for (std::size_t i = 0; i < slot_.size(); ++i)
    if (slot_[i] < -1 || slot_[i] >= static_cast<std::int64_t>(k_))
      return "slot holds " + std::to_string(slot_[i]) + " at index " + std::to_string(i) + " for " +
             std::to_string(k_) + " slots";
  for (std::size_t i = 0; i < yielded_to_.size(); ++i)
    if (yielded_to_[i] < -1 || yielded_to_[i] >= static_cast<std::int64_t>(n_))
      return "yielded_to holds agent " + std::to_string(yielded_to_[i]) + " of " +
             std::to_string(n_);
  return metrics_.check_state();
}

void Simulation::push_out_renewed() {
  const World* w = world_ && !world_->grid().empty() ? world_.get() : nullptr;
  const bool start = start_pending_;
  if (start) {
    start_pending_ = false;
    renewed_.clear();
    const AgentsView a = agents_->view();
    for (std::size_t i = 0; i < n_; ++i)
      if (a.alive[i]) renewed_.push_back(static_cast<std::int32_t>(i));
  }
  if (w && !renewed_.empty()) {
    const std::int32_t* ids = renewed_.data();
    std::atomic<bool> moved{false};
    parallel_for(renewed_.size(), kGrain, [&](std::size_t b, std::size_t e) {
      for (std::size_t q = b; q < e; ++q)
        if (push_out_row(*w, static_cast<std::size_t>(ids[q]), false))
          moved.store(true, std::memory_order_relaxed);
    });
    // The start's exits are no walk: the metrics configured before the first step take
    // their baseline again, from where the agents now stand (the exit counted as path
    // length, and the clearance inside the solid as the run's least). The agents not
    // moved stand where they were, so their baselines are as at configure (a body placed
    // overlapping a wall keeps reporting that overlap). Agents added later are baselined
    // where they enter (Metrics::note_entries), after their exit.
    if (start && moved.load() && metrics_.params().enabled && metrics_.steps() == 0) {
      // (The agent-agent baseline stays where the agents were placed: keep_agent_baseline.)
      const Metrics placed = metrics_;
      configure_metrics(metrics_.params());
      metrics_.keep_agent_baseline(placed);
    }
  }
  renewed_.clear();
}

namespace {
/// Where a body of radius r at p stands clear (push_out_row's rules, up to four passes):
/// out of the solids holding its centre by leave_solid's nearest exit, and, with
/// `overlaps`, out of a wall it overlaps along the wall's normal (a sweep, so that it
/// crosses nothing on the way). p itself when neither moves it.
Vec2 stand_clear(const World& w, Vec2 p, float r, std::uint32_t layers, int slide_iterations,
                 bool overlaps) {
  for (int pass = 0; pass < 4; ++pass) {
    std::vector<std::int32_t> solids;  // the polygons and circles holding p
    w.polygon_at(p, layers, &solids);
    w.circle_at(p, layers, &solids);
    if (!solids.empty()) {
      Vec2 c;
      if (!leave_solid(w, p, r, solids, layers, c, false) &&
          !leave_solid(w, p, r, solids, layers, c, true))
        break;
      p = c;
      continue;
    }
    if (!overlaps || !(r > 0.0f)) break;
    float d = 0.0f, q[2], nrm[2];
    std::int32_t obstacle = -1;
    const float at[2] = {p.x, p.y};
    nearest_rows(w, {at, 2}, r, layers, {&d, q, nrm, &obstacle}, 0, 1);
    // A body the sweeps left touching a wall sits a skin (1e-3 r) beyond r: only a
    // real overlap moves it.
    if (!(d < r * (1.0f - 1e-4f))) break;
    const float skin = 1e-3f * r + 1e-6f * std::max(std::fabs(p.x), std::fabs(p.y));
    const Sweep s =
        sweep_circle(w, p, Vec2{nrm[0], nrm[1]} * (r - d + skin), r, slide_iterations, layers);
    if (s.position.x == p.x && s.position.y == p.y) break;
    p = s.position;
  }
  return p;
}
}  // namespace

bool Simulation::push_out_row(const World& w, std::size_t i, bool overlaps) {
  const AgentsView a = agents_->view();
  float* pos = agents_->position();
  const float r = a.radius[i];
  if (!a.alive[i] || !(r >= 0.0f)) return false;
  const Vec2 p0 = load2(pos, i);
  const Vec2 p1 = stand_clear(w, p0, r, params_.layers, params_.slide_iterations, overlaps);
  store2(pos, i, p1);
  return p1.x != p0.x || p1.y != p0.y;
}

const float* Simulation::reachable_targets(const AgentsView& a, const World* w) {
  if (!velocity_ || !velocity_->reachable_target || !a.target || !w) return a.target;
  if (reach_target_.size() != 2 * n_) {
    reach_target_.assign(2 * n_, 0.0f);
    reach_of_.assign(4 * n_, std::numeric_limits<float>::quiet_NaN());
  }
  const std::uint64_t generation = w->index_generation();
  const bool all = generation != reach_generation_;
  reach_generation_ = generation;
  parallel_for(n_, kGrain, [&](std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i) {
      const float tx = a.target[2 * i], ty = a.target[2 * i + 1], r = a.radius[i];
      // Moved only for an agent alive and steered; the flags are part of the key (an agent
      // handed back from kinematic kept its target unmoved for good, and a pickled copy,
      // which finds them afresh, then went another way: fuzz round 31).
      const bool moved = a.alive[i] && !is_kinematic(a, i);
      const float flag = moved ? 1.0f : 0.0f;
      float* of = &reach_of_[4 * i];
      // (Compared by bits: a NaN target is found once, as itself.)
      if (!all && std::memcmp(of, &tx, 4) == 0 && std::memcmp(of + 1, &ty, 4) == 0 &&
          std::memcmp(of + 2, &r, 4) == 0 && of[3] == flag)
        continue;
      of[0] = tx, of[1] = ty, of[2] = r, of[3] = flag;
      Vec2 t{tx, ty};
      if (moved && std::isfinite(tx) && std::isfinite(ty) && r >= 0.0f)
        t = stand_clear(*w, t, r, params_.layers, params_.slide_iterations, true);
      store2(reach_target_.data(), i, t);
    }
  });
  return reach_target_.data();
}

void Simulation::retarget() {
  if (next_decision_.empty()) return;
  const AgentsView a = agents_->view();
  for (std::size_t i = 0; i < n_; ++i) {
    if (!a.alive[i]) continue;
    if (std::memcmp(a.target + 2 * i, decided_target_.data() + 2 * i, 2 * sizeof(float)) != 0) {
      next_decision_[i] = std::min(next_decision_[i], step_count_);
      has_memory_[i] = 0;
    }
    // The target this step's decision is made for: the one perceived now (written at the
    // step's end, a target set between perceive() and decide_and_move() was taken as
    // decided for, from maps of the old one, and ignored for the whole validity).
    if (decides(i)) {
      decided_target_[2 * i] = a.target[2 * i];
      decided_target_[2 * i + 1] = a.target[2 * i + 1];
    }
  }
}

void Simulation::perceive() {
  if (world_edited_) push_out_of_walls();
  renew_slots();
  push_out_renewed();
  retarget();
  Plan p = plan();
  build_neighbors(p);
  parallel_for(n_, kGrain, [&](std::size_t b, std::size_t e) { perceive_rows(p, b, e); });
  perceived_ = true;
}

void Simulation::move_and_collide(const Plan& p, float dt, bool fused) {
  const MotionInputs in{p.in.agents, direction_.data(), strength_.data(), dt};
  const MotionOutputs out{next_pos_.data(), next_vel_.data(), next_head_.data(), braking_.data()};
  // Models whose heading follows the velocity keep doing so after a slide.
  const auto* accel = std::get_if<Accel>(&params_.motion);
  const bool faces_velocity =
      std::holds_alternative<Lerp>(params_.motion) || (accel && !accel->independent_facing);
  const bool phased = fused && config_.decision_phases > 1;
  if (phased) decide_in_phases(p);
  parallel_for(n_, kGrain, [&](std::size_t b, std::size_t e) {
    for (std::size_t s = b; s < e; s += kBlock) {
      const std::size_t t = std::min(e, s + kBlock);
      if (!phased) {
        if (fused) perceive_rows(p, s, t);
        decide_rows(p, s, t);
      }
      move_rows(params_.motion, in, out, s, t);
      if (p.in.world) {
        collide_rows(*p.in.world, p.in.agents.position, next_pos_.data(), next_vel_.data(),
                     p.in.agents.radius, p.in.agents.alive, params_.slide_iterations,
                     params_.layers, contacts_.data(), s, t,
                     faces_velocity ? next_head_.data() : nullptr, params_.stop_at_contact,
                     p.in.agents.max_speed);
      }
      if (kinematic_) {
        // A kinematic agent's heading is its user's: a slide along a wall does not turn it.
        for (std::size_t i = s; i < t; ++i)
          if (kinematic_[i]) next_head_[i] = p.in.agents.heading[i];
      }
    }
  });
}

void Simulation::decide_in_phases(const Plan& p) {
  // Phase f perceives and decides agents i with i % P == f, seeing the agents of phases
  // before f at their new commands (seen_velocity_) and the rest at their velocities.
  // Only rows of the phase are written in a phase, and only the phase's own rows of
  // seen_velocity_ after it, so chunks never race and any thread count gives the same
  // bits. An agent's own velocity is still its velocity when it decides (its row is
  // replaced after its phase).
  const std::size_t phases = config_.decision_phases;
  const AgentsView& a = p.in.agents;
  seen_velocity_.assign(a.velocity, a.velocity + 2 * n_);
  Plan q = p;
  q.in.agents.velocity = seen_velocity_.data();
  phases_ = phases;
  // A range of kBlock · phases agents holds at most kBlock of a phase: one strided call
  // (each_deciding), within the per-thread scratch of kBlock rows.
  const std::size_t span = kBlock * phases;
  for (std::size_t f = 0; f < phases; ++f) {
    phase_ = f;
    parallel_for(n_, kPhaseGrain * phases, [&](std::size_t b, std::size_t e) {
      // A phase's rows are phases_ apart: 1 KB in each (N, K) map at K = 16, four to a
      // page, a stride the hardware prefetchers do not follow. Each of them missed the
      // caches, most at the first read of the agent's neighbour list. With the lines asked
      // for a span ahead, crowd-track-10k's velocity step went from 19.6 to 17.1 ms
      // (medians of six runs each, one thread; docs/performance.md, "Deciding in phases").
      prefetch_phase_rows(b, std::min(e, b + span));
      for (std::size_t s = b; s < e; s += span) {
        const std::size_t t = std::min(e, s + span);
        if (t < e) prefetch_phase_rows(t, std::min(e, t + span));
        perceive_rows(q, s, t);
        decide_rows(q, s, t);
      }
    });
    for (std::size_t i = f; i < n_; i += phases) {
      if (!a.alive[i] || !decides(i)) continue;
      store2(seen_velocity_.data(), i,
             load2(direction_.data(), i) * (strength_[i] * a.max_speed[i]));
    }
  }
  phase_ = 0;
  phases_ = 1;
}

void Simulation::finish(float dt) {
  const AgentsView a = agents_->view();
  float rmax = 0.0f;
  for (std::size_t i = 0; i < n_; ++i)
    if (a.alive[i]) rmax = std::max(rmax, a.radius[i]);
  push_grid_.rebuild(next_pos_.data(), a.alive, n_, push_cell(rmax));
  const World* world = world_ && !world_->grid().empty() ? world_.get() : nullptr;
  float* pos = agents_->position();
  float* vel = agents_->velocity();
  float* head = agents_->heading();
  const bool stuck_on = params_.stuck_time > 0.0f;
  const bool settling = params_.push_apart && params_.push_passes > 1;
  parallel_for(n_, kGrain, [&](std::size_t b, std::size_t e) {
    // Reads next_pos_ of any agent (read-only in this stage), writes rows [b, e) of the
    // agents' own state: the commit of the double buffer.
    push_apart_rows(push_grid_, next_pos_.data(), a.radius, a.alive, kinematic_, rmax,
                    params_.push_apart, params_.push_relax, world, params_.slide_iterations,
                    params_.layers, overlaps_.data(), pos, b, e,
                    settling ? touched_.data() : nullptr);
    std::copy(next_vel_.begin() + 2 * b, next_vel_.begin() + 2 * e, vel + 2 * b);
    std::copy(next_head_.begin() + b, next_head_.begin() + e, head + b);
    if (!yielded_to_.empty()) note_yields(pos, b, e);
    if (!stood_.empty())  // standoff: how long each agent has stood, after this step
      for (std::size_t i = b; i < e; ++i)
        stood_[i] = a.alive[i] && length(load2(vel, i)) < kStandoffSpeed ? stood_[i] + dt : 0.0;
    for (std::size_t i = b; i < e; ++i) {
      if (a.alive[i]) continue;
      has_memory_[i] = 0;
      // A dead slot's rows describe no agent: no perceived pose (under decision_interval
      // a removed agent's stayed until its slot's turn to decide came).
      perceived_pos_[2 * i] = perceived_pos_[2 * i + 1] = perceived_head_[i] =
          std::numeric_limits<float>::quiet_NaN();
    }
  });
  if (settling) settle(rmax, world);
  if (stuck_on) {
    parallel_for(n_, kGrain, [&](std::size_t b, std::size_t e) {
      for (std::size_t i = b; i < e; ++i) {
        if (!a.alive[i]) continue;
        const Vec2 q = load2(pos, i);
        if (length(q - load2(anchor_.data(), i)) > params_.stuck_distance) {
          store2(anchor_.data(), i, q);
          still_[i] = 0.0;
        } else {
          still_[i] += dt;
        }
        stuck_[i] = still_[i] >= params_.stuck_time ? 1 : 0;
      }
    });
  }
  if (!next_decision_.empty()) {
    // Lewis: keep each decision made this step for its validity, in whole steps (at
    // least one, at most decision_validity). Counted with a relative 1e-6 of slack, so
    // that 0.4 s at dt 1/30 (float32 values a hair under 12 steps apart) is 12 steps.
    const auto whole = [dt](double t) { return std::floor(t / dt * (1.0 + 1e-6)); };
    // (At most 2^52 steps: a tiny dt must not overflow the count.)
    const double cap = std::clamp(whole(params_.decision_validity), 1.0, 0x1p52);
    for (std::size_t i = 0; i < n_; ++i) {
      if (!a.alive[i] || !decides(i)) continue;
      // Added (or handed back from kinematic) after this step's perception: it has not
      // decided, and decides at its next step (its validity, +inf, held it the whole
      // decision_validity).
      if (std::isnan(perceived_head_[i])) continue;
      const double t = whole(validity_[i]);
      const double steps = t >= 1.0 ? std::min(t, cap) : 1.0;  // (NaN: one step)
      next_decision_[i] = step_count_ + static_cast<std::uint64_t>(steps);
      next_time_[i] = time_ + (steps - 0.5) * double{dt};
    }
  }
  // Every alive agent that had not decided did so this step (decides() was true for it),
  // unless it was added after this step's perception (between perceive() and
  // decide_and_move(): renewed, it has no perceived pose): it decides at its next step.
  for (std::size_t i = 0; i < fresh_.size(); ++i)
    if (a.alive[i] && !std::isnan(perceived_head_[i])) fresh_[i] = 0;
  if (coordinate_limit_ > 0.0f) {
    // The edge of the accepted coordinates: max_speed 1e3 at dt 1e6 (each accepted) put an
    // agent at 1e9, and every later step refused it, so the simulation was lost.
    // It stops there: the velocity's component out of the range goes too.
    const float lim = coordinate_limit_;
    float* vel = agents_->velocity();
    for (std::size_t i = 0; i < n_; ++i) {
      if (!a.alive[i]) continue;
      for (std::size_t c = 2 * i; c < 2 * i + 2; ++c) {
        if (!(std::fabs(pos[c]) > lim)) continue;
        pos[c] = std::copysign(lim, pos[c]);
        if (vel[c] * pos[c] > 0.0f) vel[c] = 0.0f;
      }
    }
  }
  time_ += dt;
  ++step_count_;
  observe();  // metrics and histories (simulation_observe.cpp)
}

void Simulation::settle(float max_radius, const World* world) {
  // Each later pass is the first pass again, over every agent, but only the agents that
  // overlap someone move in a pass, so it visits only those: a pair that overlaps at the
  // start of a pass has a member that moved in the pass before (or overlapped then, and
  // so was listed), and settle_list_ holds every agent that overlapped at the start of
  // the pass before, the movers among them. Each pass marks their partners as they are
  // now and runs the Jacobi pass over the lot (every agent of it reads settle_pos_, the
  // positions at the start of the pass, and writes only its own row), so the result
  // does not depend on the order or the thread count. The lists are built serially in
  // index order. Nothing to do when the first pass found no overlap.
  // touched_ becomes the passes' marks, all zero between passes (pass 1 of the next step
  // overwrites every row).
  std::uint8_t* mark = touched_.data();
  settle_list_.clear();
  for (std::size_t i = 0; i < n_; ++i) {
    if (!mark[i]) continue;
    settle_list_.push_back(static_cast<std::int32_t>(i));
    mark[i] = 0;
  }
  if (settle_list_.empty()) return;
  const AgentsView a = agents_->view();
  float* pos = agents_->position();
  settle_pos_.assign(pos, pos + 2 * n_);
  for (int pass = 1; pass < params_.push_passes && !settle_list_.empty(); ++pass) {
    // The agents as they are now, in push_grid_'s cells (exact queries, no re-sort).
    if (!settle_grid_.rebuild_from(push_grid_, settle_pos_.data()))  // moved far: afresh
      settle_grid_.rebuild(settle_pos_.data(), a.alive, n_, push_cell(max_radius));
    // The pass's agents: the listed ones and whoever they overlap now. Partners are
    // marked by any thread (the same value, through atomic_ref), then gathered in index
    // order.
    const std::int32_t* list = settle_list_.data();
    parallel_for(settle_list_.size(), kGrain, [&](std::size_t b, std::size_t e) {
      for (std::size_t k = b; k < e; ++k) {
        const auto i = static_cast<std::size_t>(list[k]);
        std::atomic_ref<std::uint8_t>(mark[i]).store(1, std::memory_order_relaxed);
        for_each_overlap(settle_grid_, settle_pos_.data(), a.radius, max_radius, i,
                         [&](std::size_t j, double, double, double, double) {
                           std::atomic_ref<std::uint8_t>(mark[j]).store(1,
                                                                        std::memory_order_relaxed);
                         });
      }
    });
    settle_next_.clear();
    for (std::size_t i = 0; i < n_; ++i)
      if (mark[i]) settle_next_.push_back(static_cast<std::int32_t>(i));
    // The Jacobi pass over them; mark[i] becomes 1 where agent i overlapped someone.
    const std::int32_t* work = settle_next_.data();
    parallel_for(settle_next_.size(), kGrain, [&](std::size_t b, std::size_t e) {
      for (std::size_t k = b; k < e; ++k) {
        const auto i = static_cast<std::size_t>(work[k]);
        const std::int32_t count = push_apart_row(
            settle_grid_, settle_pos_.data(), a.radius, kinematic_, max_radius, true,
            params_.push_relax, world, params_.slide_iterations, params_.layers, i, pos);
        // (A kinematic agent never moves: its partners are listed through their own rows.)
        mark[i] = count > 0 && !(kinematic_ && kinematic_[i]) ? 1 : 0;
      }
    });
    settle_list_.clear();
    for (const std::int32_t i32 : settle_next_) {
      const auto i = static_cast<std::size_t>(i32);
      if (mark[i]) settle_list_.push_back(i32);
      mark[i] = 0;
      settle_pos_[2 * i] = pos[2 * i];
      settle_pos_[2 * i + 1] = pos[2 * i + 1];
    }
  }
}

void Simulation::decide_and_move(float dt) {
  make_history_room(1);
  renew_slots();
  push_out_renewed();
  Plan p = plan();
  p.dt = dt;
  if (needs_neighbors_) {
    if (!perceived_) {
      // The lists perceive() would have made for the deciding agents (a simulation
      // restored between the stages does not carry them), without the behaviours.
      Plan q = plan();
      build_neighbors(q);
      if (!use_lists_) {
        parallel_for(n_, kGrain, [&](std::size_t b0, std::size_t e0) {
          each_deciding(b0, e0, [&](std::size_t b, std::size_t e, std::size_t step) {
            find_lists(q.in.agents, b, e, step);
          });
        });
      }
    }
    p.in.neighbors = {nb_indices_.data(), nb_counts_.data(), config_.max_neighbors};
  }
  // A world edited since perceive() (a crate dropped on agents between the stages) pushes
  // them out before this move, as a step would (it waited for the next call: fuzz round
  // 14); after the lists, which a restored copy rebuilds from the perceived positions.
  if (world_edited_) push_out_of_walls();
  metrics_.note_entries(agents_->view(), time_);
  move_and_collide(p, dt, false);
  finish(dt);
  perceived_ = false;
}

void Simulation::step(float dt, std::size_t steps) {
  make_history_room(steps);  // before any state changes: std::bad_alloc leaves it as it was
  if (world_edited_) push_out_of_walls();
  renew_slots();  // agents are added between calls, never within one
  push_out_renewed();
  for (std::size_t s = 0; s < steps; ++s) {
    retarget();
    Plan p = plan();
    p.dt = dt;
    // Perceive and decide run back to back here (nothing can move an agent or edit the
    // world in between), so velocity_'s rows may tell its velocity_ttc where no wall is
    // in reach. Not in the separate perceive() / decide_and_move() calls.
    if (velocity_) {
      p.in.wall_clear = wall_clear_.data();
      p.in.wall_clear_of = velocity_;
    }
    build_neighbors(p);
    metrics_.note_entries(p.in.agents, time_);
    move_and_collide(p, dt, true);
    finish(dt);
  }
  perceived_ = false;
}

}  // namespace contextsteer
