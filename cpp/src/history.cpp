// SPDX-License-Identifier: MIT
// A recorder of agent states at chosen steps, with growable, view-safe storage.
#include "contextsteer/history.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace contextsteer {

HistoryFrames::HistoryFrames(std::size_t cap, std::size_t n_, std::size_t k_, bool maps_,
                             bool progress_)
    : capacity(cap), n(n_), k(k_), maps(maps_), progress(progress_) {
  // The largest array is cap × n × max(2, k) values: a product past size_t wrapped, and a
  // vector of the wrapped size was then written frame by frame past its end.
  const std::size_t widest = n * std::max<std::size_t>(2, maps ? k : 0);
  if (n != 0 && widest / n != std::max<std::size_t>(2, maps ? k : 0))
    throw std::length_error("History: a frame's size overflows");
  if (widest != 0 && cap > std::numeric_limits<std::size_t>::max() / 8 / widest)
    throw std::length_error("History: the frames' size overflows");
  step.resize(cap);
  time.resize(cap);
  position.resize(cap * n * 2);
  velocity.resize(cap * n * 2);
  heading.resize(cap * n);
  alive.resize(cap * n);
  group.resize(cap * n);
  generation.resize(cap * n);
  radius.resize(cap * n);
  if (maps) {
    interest.resize(cap * n * k);
    danger.resize(cap * n * k);
    perceived_position.resize(cap * n * 2);
    perceived_heading.resize(cap * n);
  }
  if (progress) along.resize(cap * n);
  series.resize(cap * static_cast<std::size_t>(Series::kCount));
}

History::History(std::size_t n, std::size_t k, std::size_t every, bool maps, bool progress,
                 std::uint64_t start, std::size_t reserve)
    : every_(std::max<std::size_t>(every, 1)),
      start_(start),
      buf_(std::make_shared<HistoryFrames>(std::max<std::size_t>(reserve, 1), n, k, maps,
                                           progress)) {}

std::size_t History::due_in(std::uint64_t after, std::size_t steps) const {
  if (steps == 0) return 0;
  const std::uint64_t last = after + steps;
  const std::uint64_t lo = std::max<std::uint64_t>(after + 1, start_);
  if (lo > last) return 0;
  const std::uint64_t first = start_ + (lo - start_ + every_ - 1) / every_ * every_;
  return first > last ? 0 : static_cast<std::size_t>((last - first) / every_ + 1);
}

long double HistoryFrames::bytes(std::size_t capacity, std::size_t n, std::size_t k, bool maps,
                                 bool progress, bool sensed) {
  using L = long double;
  const L nn = static_cast<L>(n), nk = nn * static_cast<L>(k);
  L frame = sizeof(std::int64_t) + sizeof(double) + static_cast<L>(Series::kCount) * sizeof(float) +
            nn * (4 * sizeof(float) + sizeof(float) + sizeof(std::uint8_t) + sizeof(std::int32_t) +
                  sizeof(std::uint32_t) + sizeof(float));
  if (maps) frame += 2 * nk * sizeof(float) + nn * 3 * sizeof(float);
  if (maps && sensed) frame += nk * sizeof(float);
  if (progress) frame += nn * sizeof(float);
  return static_cast<L>(capacity) * frame;
}

History::Room History::room_bytes(std::size_t more, bool sensed) const {
  const HistoryFrames* b = buf_.get();
  const bool grows = more > b->capacity - frames_;
  // The capacity as make_room computes it, in long double: `frames_ + more` may not fit
  // a size_t (make_room then fails in the allocation, named as out of memory).
  const long double cap =
      grows ? std::max(2.0L * static_cast<long double>(b->capacity),
                       static_cast<long double>(frames_) + static_cast<long double>(more))
            : static_cast<long double>(b->capacity);
  const bool new_rays = sensed && b->maps && b->sensed.empty();
  const bool rays = b->maps && (sensed || !b->sensed.empty());
  const long double frame = HistoryFrames::bytes(1, b->n, b->k, b->maps, b->progress, rays);
  const long double now =
      HistoryFrames::bytes(b->capacity, b->n, b->k, b->maps, b->progress, !b->sensed.empty());
  return {grows || new_rays, cap * frame, grows ? now : 0.0L};
}

void History::make_room(std::size_t more, bool sensed) try {
  const HistoryFrames* b = buf_.get();
  if (more > b->capacity - frames_) grow(std::max(2 * b->capacity, frames_ + more));
  HistoryFrames* f = buf_.get();
  if (sensed && f->maps && f->sensed.empty()) {
    std::vector<float> rays(f->capacity * f->n * f->k, std::numeric_limits<float>::quiet_NaN());
    const std::lock_guard<std::mutex> lock(mu_);  // readers may be looking at f
    f->sensed = std::move(rays);
  }
} catch (const std::bad_alloc&) {
  throw HistoryOutOfMemory(more);
} catch (const std::length_error&) {  // more frames than a vector can hold
  throw HistoryOutOfMemory(more);
}

void History::grow(std::size_t capacity) {
  const HistoryFrames* f = buf_.get();
  const std::size_t n = f->n, k = f->k;
  auto g = std::make_shared<HistoryFrames>(capacity, n, k, f->maps, f->progress);
  auto copy = [&](const auto& from, auto& to) { std::copy(from.begin(), from.end(), to.begin()); };
  copy(f->step, g->step);
  copy(f->time, g->time);
  copy(f->position, g->position);
  copy(f->velocity, g->velocity);
  copy(f->heading, g->heading);
  copy(f->alive, g->alive);
  copy(f->group, g->group);
  copy(f->generation, g->generation);
  copy(f->radius, g->radius);
  copy(f->interest, g->interest);
  copy(f->danger, g->danger);
  copy(f->perceived_position, g->perceived_position);
  copy(f->perceived_heading, g->perceived_heading);
  if (!f->sensed.empty()) {
    g->sensed.assign(g->capacity * n * k, std::numeric_limits<float>::quiet_NaN());
    copy(f->sensed, g->sensed);
  }
  copy(f->along, g->along);
  copy(f->series, g->series);
  const std::lock_guard<std::mutex> lock(mu_);
  buf_ = std::move(g);
}

void History::capture(std::uint64_t step, double time, const AgentsView& a, const float* interest,
                      const float* danger, const float* sensed,
                      std::pair<const float*, const float*> perceived, Metrics& m,
                      const std::uint8_t* stuck) {
  HistoryFrames* f = buf_.get();
  const std::size_t n = f->n, k = f->k;
  if (frames_ == f->capacity) {
    grow(2 * f->capacity);
    f = buf_.get();
  }
  const std::size_t t = frames_;
  f->step[t] = static_cast<std::int64_t>(step);
  f->time[t] = time;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  double speed = 0.0, along = 0.0;
  float clearance = std::numeric_limits<float>::infinity();
  std::int64_t alive = 0, agent_ep = 0, wall_ep = 0, arrived = 0, stuck_now = 0, laps = 0;
  const bool metrics = m.enabled();
  // No metrics path, no progress: NaN per agent as in the series below (it read 0 while
  // mean_progress and laps read NaN; fuzz round 13).
  const bool has_path = metrics && m.params().path != nullptr;
  for (std::size_t i = 0; i < n; ++i) {
    const bool on = a.alive[i] != 0;
    f->alive[t * n + i] = on;
    f->position[2 * (t * n + i)] = on ? a.position[2 * i] : nan;
    f->position[2 * (t * n + i) + 1] = on ? a.position[2 * i + 1] : nan;
    f->velocity[2 * (t * n + i)] = a.velocity[2 * i];
    f->velocity[2 * (t * n + i) + 1] = a.velocity[2 * i + 1];
    f->heading[t * n + i] = a.heading[i];
    f->group[t * n + i] = a.group[i];
    f->generation[t * n + i] = a.generation ? a.generation[i] : 0;
    f->radius[t * n + i] = a.radius[i];
    if (f->progress)
      f->along[t * n + i] = on && has_path ? static_cast<float>(m.progress()[i]) : nan;
    if (!on) continue;
    ++alive;
    speed += std::hypot(double(a.velocity[2 * i]), double(a.velocity[2 * i + 1]));
    // As Simulation.metrics() counts them: kinematic agents are not arrivals, and an
    // agent standing at its goal is not stuck (the series read the raw flags: 2 stuck
    // where metrics() said 0; fuzz round 21). Without metrics, the raw stuck flags.
    const bool kinematic = a.kinematic != nullptr && a.kinematic[i] != 0;
    const bool home = metrics && !std::isnan(m.time_to_goal()[i]);
    if (stuck && stuck[i] && !(metrics && (kinematic || home))) ++stuck_now;
    if (!metrics) continue;
    clearance = std::min({clearance, m.wall_clearance()[i], m.agent_clearance()[i]});
    if (home && !kinematic) ++arrived;
    along += m.progress()[i];
    laps += m.laps()[i];
  }
  if (metrics) {
    // The run's episodes, agents since removed included, as Simulation.metrics() counts.
    agent_ep = m.run_agent_episodes();
    wall_ep = m.run_wall_episodes();
  }
  if (f->maps) {
    std::copy(interest, interest + n * k,
              f->interest.begin() + static_cast<std::ptrdiff_t>(t * n * k));
    std::copy(danger, danger + n * k, f->danger.begin() + static_cast<std::ptrdiff_t>(t * n * k));
    std::copy(perceived.first, perceived.first + 2 * n,
              f->perceived_position.begin() + static_cast<std::ptrdiff_t>(t * n * 2));
    std::copy(perceived.second, perceived.second + n,
              f->perceived_heading.begin() + static_cast<std::ptrdiff_t>(t * n));
    if (sensed) {
      if (f->sensed.empty()) {
        const std::lock_guard<std::mutex> lock(mu_);  // readers may be looking at f
        f->sensed.assign(f->capacity * n * k, std::numeric_limits<float>::quiet_NaN());
      }
      std::copy(sensed, sensed + n * k, f->sensed.begin() + static_cast<std::ptrdiff_t>(t * n * k));
    }
  }
  float* s = f->series.data() + t * static_cast<std::size_t>(Series::kCount);
  const double na = alive > 0 ? static_cast<double>(alive) : 1.0;
  s[static_cast<std::size_t>(Series::kAgentCollisions)] =
      metrics ? static_cast<float>(agent_ep / 2) : nan;
  s[static_cast<std::size_t>(Series::kWallCollisions)] =
      metrics ? static_cast<float>(wall_ep) : nan;
  s[static_cast<std::size_t>(Series::kMinClearance)] = metrics ? clearance : nan;
  s[static_cast<std::size_t>(Series::kMeanSpeed)] = static_cast<float>(speed / na);
  // As Simulation.metrics(): no goal radius, no arrivals measured; no metrics path, no
  // progress or laps (NaN, where 0 read as "nobody arrived", "no progress").
  const bool goals = metrics && m.params().goal_radius >= 0.0f;
  const bool path = has_path;
  s[static_cast<std::size_t>(Series::kArrived)] = goals ? static_cast<float>(arrived) : nan;
  s[static_cast<std::size_t>(Series::kStuck)] = static_cast<float>(stuck_now);
  s[static_cast<std::size_t>(Series::kMeanProgress)] = path ? static_cast<float>(along / na) : nan;
  s[static_cast<std::size_t>(Series::kLaps)] = path ? static_cast<float>(laps) : nan;
  {
    // Published after the frame is written: a reader's snapshot() sees it whole.
    const std::lock_guard<std::mutex> lock(mu_);
    ++frames_;
  }
}

}  // namespace contextsteer
