// SPDX-License-Identifier: MIT
// Per-agent run metrics accumulated at the end of every simulation step.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "contextsteer/agents.hpp"
#include "contextsteer/nearest.hpp"
#include "contextsteer/neighbours.hpp"
#include "contextsteer/path.hpp"
#include "contextsteer/world.hpp"

namespace contextsteer {

/// Most agents one agent is remembered to touch at a time (for collision episodes): the
/// kMaxContacts lowest indices among those touching it, whatever order they are found in.
inline constexpr std::size_t kMaxContacts = 8;

/// What the metrics measure. Every length is in world units.
struct MetricsParams {
  bool enabled = true;
  /// Time to goal: agent i arrives the first time |p_i − target_i| <= goal_radius while
  /// its target is a goal (not AgentsView::waypoint: a detour's waypoint is passed, not
  /// arrived at). < 0 disables it.
  float goal_radius = -1.0f;
  /// Progress along this path (borrowed; the caller keeps it alive), or nullptr.
  const Path* path = nullptr;
  /// Count overtakes along a closed `path` (O(N²) a step: for small fields).
  bool overtakes = false;
  /// Contact tolerance, relative: agent i touches a wall when its wall clearance
  /// (nearest wall distance − r_i) is < tol·r_i; agents i, j touch when their clearance
  /// |p_i − p_j| − r_i − r_j is < tol·(r_i + r_j). The swept collision stops a skin of
  /// 1e-3·r away from walls and push-apart separates overlapping agents to a hair beyond
  /// contact, so with tol = 0.01 contacts that the collision response resolved still
  /// count (a collision is a contact, resolved or not).
  float contact_tolerance = 0.01f;
  /// Clearances are measured up to this distance beyond contact (larger ones are +inf);
  /// < 0: 4 × the largest agent radius at configure time.
  float clearance_range = -1.0f;
  std::uint32_t layers = kAllLayers;  ///< wall layers measured
};

/// The neighbour table update_rows may fill besides (Simulation::observe): row i gets
/// what NeighborGrid::query(position i, radius, i, max_count, ...) over the committed
/// positions returns, padded with -1, and counts[i] its length (0 for a dead agent), so
/// that the next step, if nothing moved in between, need not query again. radius is
/// finite and >= 0; 1 <= max_count <= kMaxNeighbors.
struct NeighborRowsOut {
  float radius = 0.0f;
  std::size_t max_count = 0;
  std::int32_t* indices = nullptr;  ///< (N, max_count)
  std::int32_t* counts = nullptr;   ///< (N,)
};

/// Metrics accumulated at the end of every step from the committed agent state (not
/// per-step Python). Per-agent accumulators only, each written by the chunk that owns
/// the agent, so the results do not depend on the thread count.
///
/// Definitions (per agent i, over the steps since configure(); "step" = one update):
/// - collisions: wall episodes (the agent starts touching a wall: not touching at the
///   previous update, touching now) and agent episodes (a pair i, j starts touching;
///   counted for both agents, so the number of pair episodes is the sum over agents / 2).
/// - min clearance to walls (nearest wall distance − r_i; < 0 is a penetration) and to
///   agents (|p_i − p_j| − r_i − r_j), +inf when never within clearance_range.
/// - time to goal (seconds since configure, NaN until it arrives), path length
///   Σ|Δp| (double), effort Σ|Δv| (= ∫|a| dt, length per second; double), heading
///   jitter Σ|Δheading| wrapped into [−π, π] (double), each over the travel steps: the
///   steps alive until the agent arrives, the arriving step included (all steps alive
///   without a goal), as SteerSuite retires agents at their goal.
/// - progress: Σ of the change of the path's closest offset, each change wrapped into
///   [−L/2, L/2) on a closed path of length L (double); laps = ⌊progress / L⌋ once
///   positive, with the time of each completed lap.
/// - overtakes: with s = start offset + progress and the pair's confirmed lap difference
///   k_ij (initially ⌊(s_i − s_j)/L⌋), agent i overtakes j when s_i − s_j >= (k_ij + 1)·L
///   + m, and falls back when s_i − s_j < k_ij·L − m, m = r_i + r_j (a body width of
///   hysteresis, so cars side by side do not count); counted for the overtaker only.
///   O(N²) time and memory (for small fields such as a race).
/// - stuck: whether the simulation ever flagged the agent stuck before it arrived.
class Metrics {
 public:
  /// Resets every accumulator and takes the agents' current state as the baseline
  /// (current contacts are not episodes). Allocates. Serial.
  void configure(const MetricsParams& params, const AgentsView& agents, const World* world,
                 double time);
  const MetricsParams& params() const { return params_; }
  bool enabled() const { return params_.enabled; }

  /// After configure() again on agents that the start's exits moved out of solids: the
  /// agent–agent part of the baseline (least and current clearance, contact partners)
  /// as `before`, a configure of the same agents where they were placed (for the agents
  /// `before` measured; an agent added since keeps this configure's reading). An exit can
  /// set a body down overlapping another, which the step's push-apart then separates:
  /// taken as the baseline, that overlap was the run's least clearance (-0.7 where no
  /// committed step came below -0.003) and a contact no episode counted. Serial, O(N).
  void keep_agent_baseline(const Metrics& before);

  /// Called before a step moves the agents: each agent alive now that the last update
  /// did not see (a new agent, or one made alive again) is measured from where it is
  /// now, so that its first step counts in its travel, progress and lap time (the next
  /// update_rows). Without it that step would be its baseline. Serial, O(N),
  /// allocation-free; nothing when disabled.
  void note_entries(const AgentsView& agents, double time);

 private:
  /// During update(): whether agents i and j, touching now, one of them entered this
  /// step (note_entries), did not touch where it entered (a new contact episode). A
  /// partner made alive without entering (between the stages) is a baseline: false.
  bool new_at_entry(const AgentsView& a, std::size_t i, std::size_t j) const;

 public:
  /// Serial preparation of an update: rebuilds the agent grid over the committed
  /// positions, and forgets the wall distance bounds when `world` (the one update_rows
  /// will get) is another world or has been re-indexed since. Then update_rows over all
  /// rows (any chunking), then finish_update. `like`, if given, is a grid over the same
  /// alive agents at nearby positions (the simulation's push-apart grid): the agent grid
  /// is then made from it (NeighborGrid::rebuild_from) instead of sorted afresh; the
  /// results are the same. `exact`, if given, is a grid rebuilt over exactly the
  /// committed positions and alive agents (the simulation's neighbour grid): it is used
  /// as it is (borrowed until the update ends), with no grid of the metrics' own.
  void prepare(const AgentsView& agents, const World* world = nullptr,
               const NeighborGrid* like = nullptr, const NeighborGrid* exact = nullptr);
  /// Accumulates rows [begin, end) from the committed state `agents` at `time`; with
  /// `nb`, also writes rows [begin, end) of its neighbour table, from the same grid visit
  /// as the agent clearance, and with `walls` (whose layers must be params().layers) what
  /// the wall clearance learnt of each agent's nearest wall (reach -1 without a world or
  /// for a dead agent). Reentrant for disjoint row ranges; allocation-free.
  void update_rows(const AgentsView& agents, const World* world, const std::uint8_t* stuck,
                   double time, std::size_t begin, std::size_t end,
                   const NeighborRowsOut* nb = nullptr, const NearestWalls* walls = nullptr);
  /// Overtakes of rows [begin, end) (reads every agent's progress: after update_rows of
  /// all rows).
  void overtake_rows(const AgentsView& agents, std::size_t begin, std::size_t end);
  /// Counts the step. Serial.
  void finish_update() { ++steps_; }

  std::size_t size() const { return n_; }
  std::uint64_t steps() const { return steps_; }
  double start_time() const { return start_time_; }
  float clearance_range() const { return range_; }
  double path_length_total() const { return path_ ? path_->length() : 0.0; }

  std::int32_t* wall_episodes() { return wall_episodes_.data(); }    ///< (N,)
  std::int32_t* agent_episodes() { return agent_episodes_.data(); }  ///< (N,)
  /// Contact episodes of the whole run since configure(), agents since removed included:
  /// each agent's own count (a dead agent keeps its row until its slot is reused, when
  /// restart_row adds it to the slot's retired count) summed over every slot. Every
  /// agent-agent episode is counted by both partners, so the pairs are half the first.
  std::int64_t run_agent_episodes() const;
  std::int64_t run_wall_episodes() const;
  /// The agents whose slots were reused since configure() (restart_row): how many had
  /// been measured (a step or more), how many of them had arrived, and the sum of their
  /// times to goal. A removed agent whose slot is not reused keeps its own row.
  std::int64_t retired_agents() const;
  std::int64_t retired_arrivals() const;
  double retired_time_to_goal() const;
  /// And what a run-wide summary keeps of them: their least wall and agent clearances
  /// (inf: none measured), their steps touching a wall, and how many were ever stuck.
  float retired_min_wall() const;
  float retired_min_agent() const;
  std::int64_t retired_wall_steps() const;
  std::int64_t retired_stuck() const;
  /// Empty when the state's counts and indices are a run's (a restored state is checked:
  /// a crafted one wrote past the partner rows); else what is wrong.
  std::string check_state() const;
  std::int32_t* wall_steps() { return wall_steps_.data(); }   ///< (N,) steps touching
  float* min_wall_clearance() { return min_wall_.data(); }    ///< (N,)
  float* min_agent_clearance() { return min_agent_.data(); }  ///< (N,)
  float* wall_clearance() { return cur_wall_.data(); }        ///< (N,) at the last update
  float* agent_clearance() { return cur_agent_.data(); }      ///< (N,) at the last update
  float* time_to_goal() { return goal_time_.data(); }         ///< (N,) NaN until arrival
  /// (N,) each slot's Agents generation at the last update: a slot whose agents' value
  /// differs holds a new agent whose row still describes the last occupant.
  std::uint32_t* seen_generation() { return generation_.data(); }
  /// (N,) 1 where the slot's agent was kinematic when last measured.
  std::uint8_t* measured_kinematic() { return kinematic_.data(); }
  /// (N,) run time (s since configure()) at which each slot's agent appeared.
  double* born() { return born_.data(); }
  double* path_length() { return path_length_.data(); }          ///< (N,)
  double* effort() { return effort_.data(); }                    ///< (N,)
  double* jitter() { return jitter_.data(); }                    ///< (N,) Σ|Δheading|
  std::int32_t* alive_steps() { return alive_steps_.data(); }    ///< (N,)
  std::int32_t* travel_steps() { return travel_steps_.data(); }  ///< (N,) steps until arrival
  double* progress() { return progress_.data(); }                ///< (N,)
  /// (N,) the path offset each agent's progress counts from (where it was measured first).
  double* start_offset() { return start_offset_.data(); }
  std::int32_t* laps() { return laps_.data(); }        ///< (N,)
  float* last_lap_time() { return last_lap_.data(); }  ///< (N,) NaN before a lap
  float* best_lap_time() { return best_lap_.data(); }  ///< (N,) NaN before a lap
  double* lap_end_time() { return lap_end_.data(); }   ///< (N,) run time (s) of the last lap end
  std::int32_t* overtakes() { return overtakes_.data(); }    ///< (N,)
  std::uint8_t* ever_stuck() { return ever_stuck_.data(); }  ///< (N,) stuck before arrival

  /// Calls fn(name, data, bytes) for every accumulator that carries over from one update
  /// to the next (save/load: a restored object continues bit-identically). Sizes are
  /// fixed by configure(). The parameters and the path are not included: configure with
  /// the same ones first.
  template <class Fn>
  void for_each_state(Fn&& fn) {
    auto v = [&](const char* name, auto& vec) {
      fn(name, static_cast<void*>(vec.data()), vec.size() * sizeof(vec[0]));
    };
    fn("metrics.range", &range_, sizeof range_);
    fn("metrics.rmax", &rmax_, sizeof rmax_);
    fn("metrics.steps", &steps_, sizeof steps_);
    fn("metrics.start_time", &start_time_, sizeof start_time_);
    v("metrics.prev_pos", prev_pos_), v("metrics.prev_vel", prev_vel_);
    v("metrics.prev_head", prev_head_), v("metrics.touching", touching_);
    v("metrics.ever_stuck", ever_stuck_), v("metrics.was_alive", was_alive_);
    v("metrics.partners", partners_), v("metrics.n_partners", n_partners_);
    v("metrics.wall_episodes", wall_episodes_), v("metrics.agent_episodes", agent_episodes_);
    v("metrics.wall_steps", wall_steps_), v("metrics.alive_steps", alive_steps_);
    v("metrics.travel_steps", travel_steps_), v("metrics.min_wall", min_wall_);
    v("metrics.min_agent", min_agent_), v("metrics.cur_wall", cur_wall_);
    v("metrics.cur_agent", cur_agent_), v("metrics.goal_time", goal_time_);
    v("metrics.path_length", path_length_), v("metrics.effort", effort_);
    v("metrics.jitter", jitter_), v("metrics.offset", offset_);
    v("metrics.progress", progress_), v("metrics.start_offset", start_offset_);
    v("metrics.laps", laps_), v("metrics.overtakes", overtakes_);
    v("metrics.lap_diff", lap_diff_), v("metrics.last_lap", last_lap_);
    v("metrics.best_lap", best_lap_), v("metrics.lap_end", lap_end_);
    v("metrics.generation", generation_);
    v("metrics.retired_agent_episodes", retired_agent_);
    v("metrics.retired_wall_episodes", retired_wall_);
    v("metrics.retired_agents", retired_agents_);
    v("metrics.retired_arrivals", retired_arrivals_);
    v("metrics.retired_time_to_goal", retired_ttg_);
    v("metrics.retired_min_wall", retired_min_wall_);
    v("metrics.retired_min_agent", retired_min_agent_);
    v("metrics.retired_wall_steps", retired_wall_steps_);
    v("metrics.retired_stuck", retired_stuck_);
    v("metrics.kinematic", kinematic_);
    v("metrics.born", born_);
    v("metrics.anchor", anchor_);
  }

 private:
  /// Starts row i's accumulators afresh for a new agent in the slot at time t.
  void restart_row(std::size_t i, double t);
  /// Agent i's wall and agent clearances (inf beyond the clearance range), whether it
  /// touches a wall (found whatever the range), and its touching partners.
  void measure_row(const AgentsView& a, const World* world, std::size_t i, float& wall,
                   bool& wall_touch, float& agent, std::int32_t* partners, std::uint8_t& count,
                   double& wall_lb, double moved,
                   float guess = std::numeric_limits<float>::infinity(),
                   const NeighborRowsOut* nb = nullptr, const NearestWalls* walls = nullptr) const;

  MetricsParams params_;
  const Path* path_ = nullptr;
  std::size_t n_ = 0;
  float range_ = 0.0f, rmax_ = 0.0f;
  // prepare(): the largest displacement of an agent since the previous update (float,
  // rounded up), so that an agent's clearance then, plus both displacements, bounds its
  // clearance now (measure_row's guess).
  float max_moved_ = 0.0f;
  double wall_eps_ = 0.0;      // prepare(): the wall bounds' rounding margin (measure_row)
  std::vector<double> moved_;  // prepare(): each agent's displacement since (0: fresh)
  // prepare(): 0, or an agent alive now and not at the last update: 1 made alive again
  // (writing `alive`: a new baseline, its accumulators kept), 2 a new agent in the slot
  // (its generation changed: accumulators started afresh).
  std::vector<std::uint8_t> fresh_;
  std::vector<std::uint32_t> generation_;  // each slot's AgentsView::generation last seen
  // note_entries(): 1 for an agent entered since the last update, measured from its state
  // then (in prev_pos_, prev_vel_, prev_head_, offset_), at run time entry_time_. Set and
  // used up within one step, so never saved.
  std::vector<std::uint8_t> entered_;
  double entry_time_ = 0.0;
  // note_entries(): entering_[i] 1 for the agents it entered (read-only during update(),
  // unlike entered_), and when any entered (entries_) every agent's position then, so
  // that a contact a new agent makes in its first step counts unless the pair touched
  // where it entered. Set and used up within one step, so never saved.
  std::vector<std::uint8_t> entering_;
  std::vector<float> entry_pos_;
  bool entries_ = false;
  std::uint64_t steps_ = 0;
  double start_time_ = 0.0;
  NeighborGrid grid_;
  const NeighborGrid* shared_ = nullptr;  // prepare(exact): the grid of this update
  std::vector<float> prev_pos_, prev_vel_, prev_head_;
  /// Per agent, a lower bound of the distance from prev_pos_ to the nearest wall (−inf:
  /// unknown), valid for the world lb_world_ at index generation lb_generation_.
  std::vector<double> wall_lb_;
  const World* lb_world_ = nullptr;
  std::uint64_t lb_generation_ = 0;
  std::vector<std::uint8_t> touching_, ever_stuck_, was_alive_;
  std::vector<std::int32_t> partners_;    // (N, kMaxContacts) ascending, -1 padded
  std::vector<std::uint8_t> n_partners_;  // (N,)
  // Per slot: the episode counts of the agents that held it before (run_*_episodes).
  std::vector<std::int64_t> retired_agent_, retired_wall_;
  std::vector<std::int64_t> retired_agents_, retired_arrivals_;   // restart_row
  std::vector<double> retired_ttg_;                               // restart_row
  std::vector<float> retired_min_wall_, retired_min_agent_;       // restart_row
  std::vector<std::int64_t> retired_wall_steps_, retired_stuck_;  // restart_row
  // Per slot: whether its agent was kinematic when last measured (restart_row and the
  // summary leave a removed kinematic agent out of the steering's statistics).
  std::vector<std::uint8_t> kinematic_;
  // Run time at which each slot's agent appeared (0 for those at configure(); an agent
  // added later, its entry): times to goal count from it.
  std::vector<double> born_;
  std::vector<std::int32_t> wall_episodes_, agent_episodes_, wall_steps_, alive_steps_,
      travel_steps_;
  std::vector<float> min_wall_, min_agent_, cur_wall_, cur_agent_, goal_time_;
  std::vector<double> path_length_, effort_, jitter_;
  std::vector<double> offset_, progress_, start_offset_;
  // Each agent's distance from its own branch of the path when that branch was last the
  // nearest (metrics.cpp, track_offset).
  std::vector<double> anchor_;
  std::vector<std::int32_t> laps_, overtakes_;
  std::vector<std::int32_t> lap_diff_;  // (N, N) confirmed k_ij, row i owned by agent i
  std::vector<float> last_lap_, best_lap_;
  std::vector<double> lap_end_;
};

}  // namespace contextsteer
