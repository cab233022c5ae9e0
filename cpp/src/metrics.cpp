// SPDX-License-Identifier: MIT
// Per-agent run metrics: collision episodes, clearances, goals, path length, progress.
#include "contextsteer/metrics.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <numeric>
#include <string>

#include "contextsteer/nearest.hpp"

namespace contextsteer {

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr double kInfD = std::numeric_limits<double>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr std::int32_t kUnset = std::numeric_limits<std::int32_t>::min();

/// Whether agent i, at p, is at its goal: within goal_radius (>= 0) of its target, and
/// that target its goal, not a waypoint on its way (AgentsView::waypoint, a detour's).
bool at_goal(const AgentsView& a, std::size_t i, Vec2 p, float goal_radius) {
  return goal_radius >= 0.0f && !(a.waypoint && a.waypoint[i]) &&
         length(p - load2(a.target, i)) <= goal_radius;
}

/// Angle difference wrapped into [−π, π].
double wrap_angle(double d) {
  // Already in range (the usual turn of one step): fmod would return d unchanged.
  if (d >= -std::numbers::pi && d <= std::numbers::pi) return d;
  constexpr double two_pi = 2.0 * std::numbers::pi;
  d = std::fmod(d, two_pi);
  if (d > std::numbers::pi) d -= two_pi;
  if (d < -std::numbers::pi) d += two_pi;
  return d;
}

double norm2d(double x, double y) { return std::sqrt(x * x + y * y); }

/// Segments a step's window may hold before the tracking gives way to the nearest point
/// (track_offset): a dense path and a fast agent would scan thousands a step.
constexpr std::size_t kTrackSegments = 4096;

/// Agent i's offset along the path this update: the point nearest to p on the agent's own
/// branch, or the nearest point of the whole path when that branch is lost. `prev` is the
/// last offset, `moved` the distance since, `body` the agent's width, `global` and
/// `global_d` the whole path's nearest offset and distance, and `anchor` the agent's
/// distance from its branch when that branch was last the nearest (updated here).
///
/// Where a path crosses or passes near itself the nearest point can jump to the other
/// branch, far along the path (a figure-eight's crossing: about L/2, whose sign was
/// arbitrary, so progress lost a lap there). The offset is therefore searched within
/// 2 × moved + 2 × body of the last one along the path; the whole path's nearest point is
/// taken instead only when it is nearer than that by more than the agent's distance from
/// its branch when it was last the nearest, plus a body width: a branch lost (a path cut
/// across, an agent placed elsewhere), not a crossing passed at the agent's usual
/// distance from the centre line, at any angle.
double track_offset(const Path& path, Vec2 p, double prev, double moved, double body, double global,
                    double global_d, double& anchor) {
  const double eps = 1e-6 * (1.0 + std::fabs(double(p.x)) + std::fabs(double(p.y)));
  double near_d2 = 0.0;
  const double near =
      path.closest_offset_near(p, prev, 2.0 * moved + 2.0 * body + eps, near_d2, kTrackSegments);
  double off = global, distance = global_d;
  if (!std::isnan(near)) {
    const double near_d = std::sqrt(near_d2);
    if (near_d <= global_d + anchor + body + eps) off = near, distance = near_d;
  }
  if (distance <= global_d + eps) anchor = distance;  // its branch is the nearest
  return off;
}

}  // namespace

void Metrics::configure(const MetricsParams& params, const AgentsView& a, const World* world,
                        double time) {
  params_ = params;
  n_ = a.size;
  path_ = params.path;
  steps_ = 0;
  start_time_ = time;
  rmax_ = 0.0f;
  for (std::size_t i = 0; i < n_; ++i)
    if (a.alive[i]) rmax_ = std::max(rmax_, a.radius[i]);
  range_ = params.clearance_range >= 0.0f ? params.clearance_range : 4.0f * rmax_;
  fresh_.assign(n_, 0);
  entered_.assign(n_, 0);
  entering_.assign(n_, 0);
  entries_ = false;
  if (a.generation) generation_.assign(a.generation, a.generation + n_);
  else generation_.assign(n_, 0);
  prev_pos_.assign(a.position, a.position + 2 * n_);
  prev_vel_.assign(a.velocity, a.velocity + 2 * n_);
  prev_head_.assign(a.heading, a.heading + n_);
  wall_lb_.assign(n_, -kInfD);
  moved_.assign(n_, 0.0);
  lb_world_ = world;
  lb_generation_ = world ? world->index_generation() : 0;
  touching_.assign(n_, 0);
  ever_stuck_.assign(n_, 0);
  was_alive_.assign(a.alive, a.alive + n_);
  partners_.assign(n_ * kMaxContacts, -1);
  n_partners_.assign(n_, 0);
  wall_episodes_.assign(n_, 0);
  agent_episodes_.assign(n_, 0);
  retired_agent_.assign(n_, 0);
  retired_wall_.assign(n_, 0);
  retired_agents_.assign(n_, 0);
  retired_arrivals_.assign(n_, 0);
  retired_ttg_.assign(n_, 0.0);
  retired_min_wall_.assign(n_, kInf);
  retired_min_agent_.assign(n_, kInf);
  retired_wall_steps_.assign(n_, 0);
  retired_stuck_.assign(n_, 0);
  kinematic_.assign(n_, 0);
  born_.assign(n_, 0.0);
  wall_steps_.assign(n_, 0);
  alive_steps_.assign(n_, 0);
  travel_steps_.assign(n_, 0);
  min_wall_.assign(n_, kInf);
  min_agent_.assign(n_, kInf);
  cur_wall_.assign(n_, kInf);
  cur_agent_.assign(n_, kInf);
  goal_time_.assign(n_, kNaN);
  path_length_.assign(n_, 0.0);
  effort_.assign(n_, 0.0);
  jitter_.assign(n_, 0.0);
  offset_.assign(n_, 0.0);
  anchor_.assign(n_, 0.0);
  progress_.assign(n_, 0.0);
  start_offset_.assign(n_, 0.0);
  laps_.assign(n_, 0);
  overtakes_.assign(n_, 0);
  lap_diff_.assign(params.overtakes && params.path ? n_ * n_ : 0, kUnset);
  last_lap_.assign(n_, kNaN);
  best_lap_.assign(n_, kNaN);
  lap_end_.assign(n_, 0.0);
  if (!params_.enabled || n_ == 0) return;
  // Baseline: the contacts of the initial state are not episodes; an agent
  // already at its goal arrives at time 0.
  prepare(a, world);
  for (std::size_t i = 0; i < n_; ++i) {
    if (!a.alive[i]) continue;
    float wall = kInf, agent = kInf;
    std::uint8_t count = 0;
    std::int32_t* const row = partners_.data() + i * kMaxContacts;
    bool touch = false;
    measure_row(a, world, i, wall, touch, agent, row, count, wall_lb_[i], 0.0);
    std::fill(row + count, row + kMaxContacts, -1);  // measure_row writes [0, count) only
    n_partners_[i] = count;
    touching_[i] = touch;
    min_wall_[i] = cur_wall_[i] = wall;
    min_agent_[i] = cur_agent_[i] = agent;
    if (at_goal(a, i, load2(a.position, i), params_.goal_radius)) goal_time_[i] = 0.0f;
    if (path_) {
      double d2 = 0.0;
      offset_[i] = start_offset_[i] = path_->closest_offset(load2(a.position, i), &d2);
      anchor_[i] = std::sqrt(d2);
    }
  }
  if (!lap_diff_.empty()) {
    const double l = path_->length();
    for (std::size_t i = 0; i < n_; ++i)
      for (std::size_t j = 0; j < n_; ++j)
        if (a.alive[i] && a.alive[j])
          lap_diff_[i * n_ + j] =
              static_cast<std::int32_t>(std::floor((start_offset_[i] - start_offset_[j]) / l));
  }
}

void Metrics::keep_agent_baseline(const Metrics& before) {
  if (before.n_ != n_ || before.partners_.size() != partners_.size()) return;
  for (std::size_t i = 0; i < n_; ++i) {
    // Only the agents `before` measured (alive then, the same agent): one added since
    // keeps this configure's reading (copied wholesale, two bodies added overlapping
    // after configure_metrics had no baseline contact, and counted an episode whenever
    // some other agent left a solid; fuzz round 22).
    if (!before.was_alive_[i] || !was_alive_[i] || before.generation_[i] != generation_[i])
      continue;
    min_agent_[i] = before.min_agent_[i];
    cur_agent_[i] = before.cur_agent_[i];
    n_partners_[i] = before.n_partners_[i];
    std::copy_n(before.partners_.begin() + static_cast<std::ptrdiff_t>(i * kMaxContacts),
                kMaxContacts, partners_.begin() + static_cast<std::ptrdiff_t>(i * kMaxContacts));
  }
}

void Metrics::note_entries(const AgentsView& a, double time) {
  if (!enabled()) return;
  entry_time_ = time - start_time_;
  entries_ = false;
  for (std::size_t i = 0; i < n_; ++i) {
    entering_[i] = 0;
    if (!a.alive[i] || (was_alive_[i] && !(a.generation && a.generation[i] != generation_[i])))
      continue;
    entered_[i] = entering_[i] = 1;
    entries_ = true;
    prev_pos_[2 * i] = a.position[2 * i], prev_pos_[2 * i + 1] = a.position[2 * i + 1];
    prev_vel_[2 * i] = a.velocity[2 * i], prev_vel_[2 * i + 1] = a.velocity[2 * i + 1];
    prev_head_[i] = a.heading[i];
    if (path_) {
      double d2 = 0.0;
      offset_[i] = path_->closest_offset(load2(a.position, i), &d2);
      anchor_[i] = std::sqrt(d2);
    }
  }
  if (entries_) entry_pos_.assign(a.position, a.position + 2 * n_);
}

bool Metrics::new_at_entry(const AgentsView& a, std::size_t i, std::size_t j) const {
  if (!entries_ || !(entering_[i] || entering_[j])) return false;
  if ((fresh_[i] && !entering_[i]) || (fresh_[j] && !entering_[j])) return false;
  const float dx = entry_pos_[2 * i] - entry_pos_[2 * j];
  const float dy = entry_pos_[2 * i + 1] - entry_pos_[2 * j + 1];
  const float rr = a.radius[i] + a.radius[j];
  return !(std::sqrt(dx * dx + dy * dy) < (1.0f + params_.contact_tolerance) * rr);
}

void Metrics::prepare(const AgentsView& a, const World* world, const NeighborGrid* like,
                      const NeighborGrid* exact) {
  if (!enabled()) return;
  const std::uint64_t generation = world ? world->index_generation() : 0;
  if (world != lb_world_ || generation != lb_generation_) {
    std::fill(wall_lb_.begin(), wall_lb_.end(), -kInfD);
    lb_world_ = world;
    lb_generation_ = generation;
  }
  rmax_ = 0.0f;  // agents may have been added or resized since configure()
  double moved = 0.0, coords = 0.0;
  double* const moved_i = moved_.data();
  for (std::size_t i = 0; i < n_; ++i) {
    moved_i[i] = 0.0;
    fresh_[i] = 0;
    if (!a.alive[i]) continue;
    rmax_ = std::max(rmax_, a.radius[i]);
    const double x = a.position[2 * i], y = a.position[2 * i + 1];
    coords = std::max(coords, std::fabs(x) + std::fabs(y));
    // Removed and another agent added in the slot since the last update: a new agent
    // even though the slot was alive then and is now.
    if (a.generation && a.generation[i] != generation_[i]) fresh_[i] = 2;
    else if (!was_alive_[i]) fresh_[i] = 1;
    if (!fresh_[i]) {
      // Displacement since the previous update. √(dx² + dy²) in double: float differences
      // square exactly, so this is as accurate as std::hypot (which guards over/underflow
      // that float inputs cannot reach) at a fraction of its cost.
      moved_i[i] = norm2d(x - prev_pos_[2 * i], y - prev_pos_[2 * i + 1]);
      moved = std::max(moved, moved_i[i]);
    }
  }
  max_moved_ = static_cast<float>(moved * (1.0 + 0x1p-20));
  // The default clearance range follows the largest radius (agents added since configure,
  // perhaps into an empty simulation, are measured too).
  if (params_.clearance_range < 0.0f) range_ = 4.0f * rmax_;
  // The rounding margin of the wall distance bounds (measure_row), for every agent: at
  // least each one's own 2^-30 · (|x| + |y| + maxd + 1). Infinite when a coordinate is
  // (then every agent asks the world); a NaN position is left out by max.
  wall_eps_ = 0x1p-30 * (coords + double(rmax_) + double(range_) + 1.0);
  shared_ = exact;
  if (exact) return;
  if (like) {
    // The agents were sorted into cells a moment ago (the push-apart grid, over the
    // positions before push-apart): reuse the cells, not a second counting sort. On
    // crowd-track-10k that grid's cells are as large as this one's would be (both are
    // enlarged to keep the cell count within 2N).
    if (grid_.rebuild_from(*like, a.position)) return;
    // (Moved too far for the cells to be reused: a rebuild of its own, below.)
  }
  // Half the query radius: a query then visits 5×5 small cells, 30% less area than 3×3
  // cells of the full radius.
  const float cell = 0.5f * (2.0f * rmax_ + range_);
  grid_.rebuild(a.position, a.alive, n_, cell > 0.0f ? cell : 1.0f);
}

void Metrics::measure_row(const AgentsView& a, const World* world, std::size_t i, float& wall,
                          bool& wall_touch, float& agent, std::int32_t* partners,
                          std::uint8_t& count, double& wall_lb, double moved, float guess,
                          const NeighborRowsOut* nb, const NearestWalls* walls) const {
  const Vec2 p = load2(a.position, i);
  const float r = a.radius[i];
  const double lb0 = wall_lb;  // the bound before this update
  wall = kInf;
  if (walls) walls->reach[i] = -1.0f;
  if (world) {
    // The wall clearance: the nearest wall within maxd = r + range, i.e. nearest_rows(maxd).
    // The distance to the nearest wall is 1-Lipschitz in the position, so the bound from
    // an earlier query, less the distance moved since, is a bound now; while it exceeds
    // maxd no wall is within reach and the query is skipped. wall_eps_ covers the rounding
    // of the distances (~2^-50 of the coordinates; prepare() takes the largest ones). A
    // query looks twice as far as needed, so an agent in open space re-queries only after
    // moving about maxd. On crowd-track-10k (K = 16, 100 steps, callgrind) the metrics'
    // wall queries went from 670 to 100 instructions an agent a step.
    // Far enough for a contact (wall < tol·r) too when the clearance range is shorter.
    const float maxd = r + std::max(range_, params_.contact_tolerance * r);
    const double lb = wall_lb - moved - wall_eps_;
    if (lb > maxd) {
      wall_lb = lb;
      if (walls) {  // no wall within maxd
        walls->distance[i] = kInf;
        walls->reach[i] = maxd;
      }
    } else {
      const float ask = 2.0f * maxd;
      float dist = kInf, pt[2], nrm[2];
      std::int32_t id = -1;
      nearest_rows(*world, {&p.x, 2}, ask, params_.layers, {&dist, pt, nrm, &id}, 0, 1);
      if (walls) {  // the answer for any max_dist <= ask
        walls->distance[i] = dist;
        walls->normal[2 * i] = nrm[0];
        walls->normal[2 * i + 1] = nrm[1];
        walls->obstacle[i] = id;
        walls->reach[i] = ask;
      }
      // nearest_rows(maxd) reports the double distance d when d <= maxd: float(d) < maxd
      // implies that, float(d) > maxd rules it out (rounding is monotone); a tie is asked
      // exactly.
      if (std::isfinite(dist) && dist == maxd) {
        nearest_rows(*world, {&p.x, 2}, maxd, params_.layers, {&dist, pt, nrm, &id}, 0, 1);
        if (std::isfinite(dist)) wall = dist - r;
      } else if (dist < maxd) {
        wall = dist - r;
      }
      // dist = float(d) is within 2^-24 of d; +inf means d > ask.
      wall_lb = std::isfinite(dist) ? double(dist) * (1.0 - 0x1p-20) : double(ask);
    }
    // A centre inside a solid (a position written there, or a body the push out could
    // not free): its clearance is -(d + r), d the distance to the nearest edge (the way
    // out unless solids overlap), and a contact; by the edges' distance alone it read as
    // clear of every wall, or as out of reach. Only an agent that moved at least its
    // distance to the walls can have entered one since it was last outside (the bound
    // above): the test is skipped for the rest, and one found inside is asked again
    // every step (wall_lb = -inf) until it is out.
    if (!(lb0 - moved - wall_eps_ > 0.0) &&
        (world->polygon_at(p, params_.layers) >= 0 || world->circle_at(p, params_.layers) >= 0)) {
      float depth = kInf, pt[2], nrm[2];
      std::int32_t id = -1;
      nearest_rows(*world, {&p.x, 2}, kInf, params_.layers, {&depth, pt, nrm, &id}, 0, 1);
      wall = -((std::isfinite(depth) ? depth : 0.0f) + r);
      wall_lb = -kInfD;
    }
  }
  // Agents: every alive j within r + rmax + range (centre distance). Only the least
  // clearance (a min: the same in any order) and the touching partners are kept, the
  // partners as the kMaxContacts lowest indices, in ascending order (partners[0, count);
  // the entries after them are left as they were): so the grid is
  // visited unsorted, and any grid (any visiting order) gives the same results. At most
  // 6 equal discs can touch one; more than kMaxContacts only with mixed radii.
  //
  // `guess` bounds the least clearance from above (the clearance at the previous update
  // plus both agents' displacements since). The query first looks only that far, at least
  // far enough for every touching partner (centre distance < keep·(r + rmax)): an agent
  // beyond centre distance R has clearance > R − r − rmax, so a least clearance found
  // below that (less a rounding margin) is the least of all; otherwise (the nearest agent
  // left, or a bad guess) the full radius is asked again. Same results, a smaller disc
  // to search in a crowd.
  //
  // With `nb` the same visit also collects agent i's neighbour list (query()'s answer for
  // nb->radius, from the candidates within it: visit() applies the same float test).
  const NeighborGrid& grid = shared_ ? *shared_ : grid_;
  const float keep = 1.0f + params_.contact_tolerance;
  const float range = range_;
  const float* radius = a.radius;
  const auto self = static_cast<std::int32_t>(i);
  // Far enough for every touching partner too when the clearance range is shorter.
  const float full = r + rmax_ + std::max(range_, params_.contact_tolerance * (r + rmax_));
  const float near = std::max(keep * (r + rmax_), r + rmax_ + guess) * (1.0f + 0x1p-16f) + 0x1p-16f;
  std::size_t n = 0;
  const auto add_partner = [&](std::int32_t j) {
    // Insert j into the ascending list, dropping the highest when it is full.
    if (n == kMaxContacts) {
      if (j > partners[n - 1]) return;
      --n;
    }
    std::size_t q = n++;
    for (; q > 0 && partners[q - 1] > j; --q) partners[q] = partners[q - 1];
    partners[q] = j;
  };
  // Candidate j != self at squared distance d2: its clearance and whether it touches.
  const auto consider = [&](std::int32_t j, float d2, float& least) {
    const float dist = std::sqrt(d2);
    const float rr = r + radius[static_cast<std::size_t>(j)];
    const float c = dist - rr;
    if (c <= range) least = std::min(least, c);
    if (dist < keep * rr) add_partner(j);
  };
  const auto search = [&](float reach) {
    float least = kInf;
    n = 0;
    grid.visit(p, reach, [&](std::int32_t j, float d2) {
      if (j != self) consider(j, d2, least);
    });
    return least;
  };
  const float first = near < full ? near : full;
  // Whether `least`, the least clearance of a search within `reach` (<= full), is the
  // least of all.
  const auto certain = [&](float least, float reach) {
    if (reach >= full) return true;
    const float sure = reach - r - rmax_;
    return least < sure - 0x1p-12f * (reach + 1.0f);
  };
  float least;
  if (!nb) {
    least = search(first);
    if (!certain(least, first)) least = search(full);
  } else {
    // One visit for the neighbour list and the first search, reaching at least as far as
    // both. Its least clearance within min(reach, full) is certain whenever the first
    // search's is (the bound grows with the radius), and is then the same value (the
    // least of all); otherwise the full search follows. Every partner lies within
    // `first`, so the visit's partner list is the searches'.
    const float nr = nb->radius, nr2 = nr * nr;
    const float reach = first > nr ? first : nr;  // nr when first is NaN
    const float seen = reach < full ? reach : full, seen2 = seen * seen;
    std::int32_t* out = nb->indices + i * nb->max_count;
    float d2s[kMaxNeighbors];
    std::size_t found = 0;
    // In a dense crowd most agents within the list's radius are not among its nearest
    // max_count (a room of 1.7 agents a square metre holds some 230 within 6.6 m, for a
    // list of 16). So on a grid made finer for a dense crowd (NeighborGrid::rebuild),
    // where the point's cell puts 1.5·max_count within a third of the radius, that disc
    // is visited first. When it fills the list, the list is the answer:
    // every agent it did not see has d² > (radius/3)², above all of the list's (no tie,
    // no displacement). Its clearances and partners are the whole visit's as long as it
    // reaches `seen`. Otherwise the whole reach is visited, as it always was. The same
    // results either way. (One visit call in a loop, not two: a second call site cost the
    // sparse crowd-track-10k 106-117 instructions a row, the loop 34.)
    const std::size_t m = nb->max_count;
    const float small = nr / 3.0f;
    float radius = reach;
    if (grid.fine() && m > 0 && small >= seen && small < reach &&
        grid.dense_enough(p, small, 1.5 * static_cast<double>(m)))
      radius = small;
    for (;;) {
      n = 0;
      found = 0;
      least = kInf;
      grid.visit(p, radius, [&](std::int32_t j, float d2) {
        if (j == self) return;
        if (d2 <= nr2) insert_nearest(d2s, out, found, m, d2, j);
        if (d2 <= seen2) consider(j, d2, least);
      });
      if (found == m || !(radius < reach)) break;  // the whole reach (or NaN): done
      radius = reach;
    }
    std::fill(out + found, out + nb->max_count, -1);
    nb->counts[i] = static_cast<std::int32_t>(found);
    if (!certain(least, seen)) least = search(full);
  }
  agent = least;
  count = static_cast<std::uint8_t>(n);
  wall_touch = wall < params_.contact_tolerance * r;
  // A wall found beyond a clearance range shorter than the contact band counted for the
  // touch only. (Within the range the value stands as the query gave it.)
  if (range_ < params_.contact_tolerance * r && wall > range_) wall = kInf;
}

void Metrics::update_rows(const AgentsView& view, const World* world, const std::uint8_t* stuck,
                          double time, std::size_t begin, std::size_t end,
                          const NeighborRowsOut* nb, const NearestWalls* walls) {
  if (!enabled()) return;
  const AgentsView a = view;  // a local copy: byte stores below cannot change its pointers
  const float goal_radius = params_.goal_radius;
  // The run's clock: lap ends in double, so that a lap time (a difference of two of
  // them) stays exact to the step after days of simulated time; the reported times float32.
  const double run_time = time - start_time_;
  const double length_l = path_ ? path_->length() : 0.0;
  // The accumulators as local pointers: the stores through them would otherwise make the
  // compiler reload every vector's data pointer after each one.
  auto* const was_alive = was_alive_.data();
  auto* const wall_lb = wall_lb_.data();
  auto* const prev_pos = prev_pos_.data();
  const double* const moved_i = moved_.data();
  auto* const prev_vel = prev_vel_.data();
  auto* const prev_head = prev_head_.data();
  auto* const goal_time = goal_time_.data();
  auto* const path_length = path_length_.data();
  auto* const effort = effort_.data();
  auto* const jitter = jitter_.data();
  auto* const travel_steps = travel_steps_.data();
  auto* const alive_steps = alive_steps_.data();
  auto* const wall_steps = wall_steps_.data();
  auto* const wall_episodes = wall_episodes_.data();
  auto* const touching = touching_.data();
  auto* const agent_episodes = agent_episodes_.data();
  auto* const min_wall = min_wall_.data();
  auto* const min_agent = min_agent_.data();
  auto* const ever_stuck = ever_stuck_.data();
  auto* const n_partners = n_partners_.data();
  auto* const cur_wall = cur_wall_.data();
  auto* const cur_agent = cur_agent_.data();
  auto* const start_offset = start_offset_.data();
  auto* const offset = offset_.data();
  auto* const anchor = anchor_.data();
  auto* const progress = progress_.data();
  auto* const laps = laps_.data();
  auto* const last_lap = last_lap_.data();
  auto* const best_lap = best_lap_.data();
  auto* const lap_end = lap_end_.data();
  std::int32_t* const partners = partners_.data();
  for (std::size_t i = begin; i < end; ++i) {
    if (!a.alive[i]) {
      was_alive[i] = 0;
      if (nb) {
        std::fill_n(nb->indices + i * nb->max_count, nb->max_count, -1);
        nb->counts[i] = 0;
      }
      if (walls) walls->reach[i] = -1.0f;
      continue;
    }
    const Vec2 p = load2(a.position, i), v = load2(a.velocity, i);
    std::int32_t now[kMaxContacts];
    std::uint8_t count = 0;
    float wall = kInf, agent = kInf;
    const std::uint8_t fresh_kind = fresh_[i];
    const bool fresh = fresh_kind != 0;  // alive since the last update: a new baseline
    if (fresh) wall_lb[i] = -kInfD;      // prev_pos_ is stale
    // Entered before this step (note_entries): measured from there, its first step counted.
    const bool entered = fresh && entered_[i];
    entered_[i] = 0;
    if (fresh_kind == 2) restart_row(i, entered ? entry_time_ : run_time);
    const double moved = moved_i[i];  // since the previous update (prepare); 0 when fresh
    // The previous least clearance, plus this agent's and any agent's displacement since,
    // bounds the least clearance now (inf: no agent was within range).
    const float guess = fresh ? kInf : cur_agent[i] + static_cast<float>(moved) + max_moved_;
    bool touch = false;
    measure_row(a, world, i, wall, touch, agent, now, count, wall_lb[i], moved, guess, nb, walls);
    if (!fresh) {
      // Displacement, velocity change and turn since the previous update, until the agent
      // arrives (the arriving step included): what it does at its goal is not travel.
      if (std::isnan(goal_time[i])) {
        path_length[i] += moved;
        effort[i] += norm2d(double(v.x) - prev_vel[2 * i], double(v.y) - prev_vel[2 * i + 1]);
        jitter[i] += std::fabs(wrap_angle(double(a.heading[i]) - prev_head[i]));
        count_up(travel_steps[i]);
      }
      count_up(alive_steps[i]);
      if (touch) count_up(wall_steps[i]);
      if (touch && !touching[i]) count_up(wall_episodes[i]);
      touching[i] = touch;
      // New partners: in `now` but not in the previous (sorted) set. A partner that has
      // just appeared is a baseline for both, as contacts are at configure().
      const std::int32_t* before = partners + i * kMaxContacts;
      const std::uint8_t nb = n_partners[i];
      for (std::uint8_t q = 0; q < count; ++q) {
        const auto j = static_cast<std::size_t>(now[q]);
        if (fresh_[j] ? new_at_entry(a, i, j) : !std::binary_search(before, before + nb, now[q]))
          count_up(agent_episodes[i]);
      }
      min_wall[i] = std::min(min_wall[i], wall);
      min_agent[i] = std::min(min_agent[i], agent);
      if (std::isnan(goal_time[i]) && at_goal(a, i, p, goal_radius))
        goal_time[i] = static_cast<float>(run_time - born_[i]);              // since it appeared
      if (stuck && stuck[i] && std::isnan(goal_time[i])) ever_stuck[i] = 1;  // not arrived
    } else {
      if (entered) {
        // Its first step, from where it entered; its contacts start as a baseline.
        if (std::isnan(goal_time[i])) {
          path_length[i] +=
              norm2d(double(p.x) - prev_pos[2 * i], double(p.y) - prev_pos[2 * i + 1]);
          effort[i] += norm2d(double(v.x) - prev_vel[2 * i], double(v.y) - prev_vel[2 * i + 1]);
          jitter[i] += std::fabs(wrap_angle(double(a.heading[i]) - prev_head[i]));
          count_up(travel_steps[i]);
        }
        count_up(alive_steps[i]);
        if (touch) count_up(wall_steps[i]);
        // A partner it did not touch where it entered is a contact of its first step.
        for (std::uint8_t q = 0; q < count; ++q)
          if (new_at_entry(a, i, static_cast<std::size_t>(now[q]))) count_up(agent_episodes[i]);
      }
      touching[i] = touch;
      min_wall[i] = std::min(min_wall[i], wall);
      min_agent[i] = std::min(min_agent[i], agent);
      // Appearing at its goal is arriving.
      if (std::isnan(goal_time[i]) && at_goal(a, i, p, goal_radius))
        goal_time[i] = static_cast<float>(run_time - born_[i]);  // since it appeared
    }
    // A partner row holds -1 beyond its count (configure): only the entries that may
    // have changed are written, nothing when the agent touches no one, as usual.
    std::int32_t* const row = partners + i * kMaxContacts;
    for (std::uint8_t q = 0; q < count; ++q) row[q] = now[q];
    for (std::uint8_t q = count; q < n_partners[i]; ++q) row[q] = -1;
    n_partners[i] = count;
    cur_wall[i] = wall;
    cur_agent[i] = agent;
    if (path_) {
      double global_d2 = 0.0;
      double off = path_->closest_offset(p, &global_d2);
      if (fresh && !lap_diff_.empty()) std::fill_n(lap_diff_.data() + i * n_, n_, kUnset);
      // A fresh agent's start: here, or where it entered (offset_ then, note_entries).
      if (fresh) start_offset[i] = (entered ? offset[i] : off) - progress[i];
      if (fresh) anchor[i] = std::sqrt(global_d2);
      if (!fresh || entered) {
        const Vec2 from = load2(prev_pos, i);
        const double moved = norm2d(double(p.x) - double(from.x), double(p.y) - double(from.y));
        off = track_offset(*path_, p, offset[i], moved, 2.0 * double(a.radius[i]), off,
                           std::sqrt(global_d2), anchor[i]);
        double d = off - offset[i];
        if (path_->closed()) d -= length_l * std::floor(d / length_l + 0.5);  // [−L/2, L/2)
        progress[i] += d;
      }
      offset[i] = off;
      const auto lap = static_cast<std::int32_t>(std::floor(progress[i] / length_l));
      if (path_->closed() && lap > laps[i]) {
        // One or more laps completed this step (more only at absurd speeds).
        const auto lap_time =
            static_cast<float>((run_time - lap_end[i]) / static_cast<double>(lap - laps[i]));
        last_lap[i] = lap_time;
        best_lap[i] = std::isnan(best_lap[i]) ? lap_time : std::min(best_lap[i], lap_time);
        lap_end[i] = run_time;
        laps[i] = lap;
      }
    }
    store2(prev_pos, i, p);
    store2(prev_vel, i, v);
    prev_head[i] = a.heading[i];
    was_alive[i] = 1;
    kinematic_[i] = is_kinematic(a, i) ? 1 : 0;
    if (a.generation) generation_[i] = a.generation[i];
  }
}

std::int64_t Metrics::run_agent_episodes() const {
  std::int64_t sum = 0;
  for (std::size_t i = 0; i < agent_episodes_.size(); ++i)
    sum += agent_episodes_[i] + retired_agent_[i];
  return sum;
}

std::int64_t Metrics::retired_agents() const {
  return std::accumulate(retired_agents_.begin(), retired_agents_.end(), std::int64_t{0});
}

std::int64_t Metrics::retired_arrivals() const {
  return std::accumulate(retired_arrivals_.begin(), retired_arrivals_.end(), std::int64_t{0});
}

double Metrics::retired_time_to_goal() const {
  // Slot order: the same sum whatever the thread count.
  return std::accumulate(retired_ttg_.begin(), retired_ttg_.end(), 0.0);
}

float Metrics::retired_min_wall() const {
  return std::accumulate(retired_min_wall_.begin(), retired_min_wall_.end(), kInf,
                         [](float x, float y) { return std::min(x, y); });
}

float Metrics::retired_min_agent() const {
  return std::accumulate(retired_min_agent_.begin(), retired_min_agent_.end(), kInf,
                         [](float x, float y) { return std::min(x, y); });
}

std::int64_t Metrics::retired_wall_steps() const {
  return std::accumulate(retired_wall_steps_.begin(), retired_wall_steps_.end(), std::int64_t{0});
}

std::int64_t Metrics::retired_stuck() const {
  return std::accumulate(retired_stuck_.begin(), retired_stuck_.end(), std::int64_t{0});
}

std::string Metrics::check_state() const {
  // What indexes or bounds a loop: a restored state must hold a run's values there.
  for (std::size_t i = 0; i < n_partners_.size(); ++i)
    if (n_partners_[i] > kMaxContacts)
      return "metrics.n_partners holds " + std::to_string(n_partners_[i]) + " at index " +
             std::to_string(i) + ", more than " + std::to_string(kMaxContacts);
  for (std::size_t q = 0; q < partners_.size(); ++q)
    if (partners_[q] < -1 || partners_[q] >= static_cast<std::int64_t>(n_))
      return "metrics.partners holds agent " + std::to_string(partners_[q]) + " of " +
             std::to_string(n_);
  return {};
}

std::int64_t Metrics::run_wall_episodes() const {
  std::int64_t sum = 0;
  for (std::size_t i = 0; i < wall_episodes_.size(); ++i)
    sum += wall_episodes_[i] + retired_wall_[i];
  return sum;
}

void Metrics::restart_row(std::size_t i, double t) {
  // Everything a configure() gives a slot, for the new agent in it; the baseline itself
  // (contacts, clearances, offsets) is taken by the caller as for any fresh agent.
  // The run's counts keep the slot's previous agent's episodes.
  retired_agent_[i] += agent_episodes_[i];
  retired_wall_[i] += wall_episodes_[i];
  // And its arrival: the run's removed agents (Simulation.metrics()["time_to_goal"]), if
  // it was measured (not just added) and steered (not kinematic).
  const bool steered = alive_steps_[i] > 0 && !kinematic_[i];
  if (steered) ++retired_agents_[i];
  if (steered && !std::isnan(goal_time_[i])) {
    ++retired_arrivals_[i];
    retired_ttg_[i] += goal_time_[i];
  }
  // Its least clearances (those at configure or entry included) and wall contact stay
  // the run's too (a counterflow's deepest overlap must not leave with the walkers at
  // the exit), and its being stuck if it was steered.
  retired_min_wall_[i] = std::min(retired_min_wall_[i], min_wall_[i]);
  retired_min_agent_[i] = std::min(retired_min_agent_[i], min_agent_[i]);
  retired_wall_steps_[i] += wall_steps_[i];
  if (!kinematic_[i]) retired_stuck_[i] += ever_stuck_[i];
  touching_[i] = 0, ever_stuck_[i] = 0;
  wall_episodes_[i] = agent_episodes_[i] = wall_steps_[i] = 0;
  alive_steps_[i] = travel_steps_[i] = 0;
  min_wall_[i] = min_agent_[i] = kInf;
  goal_time_[i] = kNaN;
  path_length_[i] = effort_[i] = jitter_[i] = 0.0;
  progress_[i] = 0.0;
  laps_[i] = 0, overtakes_[i] = 0;
  last_lap_[i] = best_lap_[i] = kNaN;
  lap_end_[i] = t;
  born_[i] = t;
}

void Metrics::overtake_rows(const AgentsView& a, std::size_t begin, std::size_t end) {
  if (!enabled() || !path_ || !path_->closed() || !params_.overtakes) return;
  const double l = path_->length();
  for (std::size_t i = begin; i < end; ++i) {
    if (!a.alive[i]) continue;
    const double si = start_offset_[i] + progress_[i];
    std::int32_t* k = lap_diff_.data() + i * n_;
    for (std::size_t j = 0; j < n_; ++j) {
      if (j == i) continue;
      // A pair is followed from when both are alive: forget it while j is gone, and
      // start it again when j has just appeared (a new agent, or the same one back).
      if (!a.alive[j] || fresh_[j]) k[j] = kUnset;
      if (!a.alive[j]) continue;
      const double x = si - (start_offset_[j] + progress_[j]);
      const double m = double(a.radius[i]) + a.radius[j];
      // A step moves x by far less than a lap, so k stays within a lap or two (and the
      // hysteresis) of x / l. Farther (a state that is not a run's: the loops below would
      // run for billions of laps, or for ever, with k overflowing), k starts afresh.
      const double laps = x / l;
      if (!(std::fabs(laps) < 1e9)) {
        k[j] = kUnset;
        continue;
      }
      if (k[j] != kUnset && !(std::fabs(laps - k[j]) <= 4.0 + 2.0 * m / l)) k[j] = kUnset;
      if (k[j] == kUnset) {
        k[j] = static_cast<std::int32_t>(std::floor(laps));
        continue;
      }
      while (x >= (k[j] + 1) * l + m) {
        ++k[j];
        ++overtakes_[i];
      }
      while (x < k[j] * l - m) --k[j];
    }
  }
}

}  // namespace contextsteer
