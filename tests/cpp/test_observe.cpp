// SPDX-License-Identifier: MIT
// Metrics and History in C++ (under ASan/UBSan): growth, thread-count independence.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "contextsteer/threads.hpp"
#include "contextsteer/simulation.hpp"

using namespace contextsteer;

namespace {

// Adds agents at `pos` ((n,2) flat) with radii `rad` and targets `tgt`, at rest, 3 m/s
// top speed, 6 m/s² acceleration: the agents of every test here.
bool add_agents(Agents& agents, const std::vector<float>& pos, const std::vector<float>& rad,
                const std::vector<float>& tgt) {
  const std::size_t n = rad.size();
  const std::vector<float> vel(2 * n, 0.0f), zero(n, 0.0f), vmax(n, 3.0f), amax(n, 6.0f),
      turn(n, 3.0f), steer(n, 0.3f);
  const std::vector<std::int32_t> grp(n, 0);
  std::vector<std::int32_t> ids(n);
  const AgentInit init{n,           pos.data(),  vel.data(),   zero.data(), rad.data(), vmax.data(),
                       amax.data(), turn.data(), steer.data(), grp.data(),  tgt.data()};
  return agents.add(init, ids);
}

// A 40 m square room, indexed (a mutable World: a test may re-index it in place).
std::shared_ptr<World> box_world() {
  auto world = std::make_shared<World>();
  const float box[8] = {-20, -20, 20, -20, 20, 20, -20, 20};
  world->add_polyline(box, true, kAllLayers);
  world->build_index();
  return world;
}

struct Outcome {
  std::vector<std::int32_t> episodes;
  std::vector<double> path_length;
  std::vector<float> frames;
  std::size_t count = 0;
};

Outcome run(int threads) {
  set_num_threads(threads);
  const std::shared_ptr<const World> world = box_world();
  const std::size_t n = 400;
  Agents agents(n, 3);
  std::vector<float> pos, rad(n, 0.4f), tgt;
  for (std::size_t i = 0; i < n; ++i) {
    pos.push_back(-18.0f + 1.8f * static_cast<float>(i % 20));
    pos.push_back(-18.0f + 1.8f * static_cast<float>(i / 20));
    tgt.push_back(-pos[2 * i]);
    tgt.push_back(-pos[2 * i + 1]);
  }
  EXPECT_TRUE(add_agents(agents, pos, rad, tgt));
  SteeringConfig c;
  c.behaviours = {Targets{}, AgentDanger{1.0f, 1.0f, true}};
  c.resolve.mode = ResolveMode::kSubtract;
  Simulation sim(agents, 12, c, SimulationParams{});
  sim.set_world(world);
  MetricsParams mp;
  mp.goal_radius = 0.5f;
  sim.configure_metrics(mp);
  auto h = std::make_shared<History>(n, 12, 3, true, false, sim.step_count(), 1);
  sim.attach(h);
  sim.step(0.05f, 40);
  Outcome r;
  Metrics& m = sim.metrics();
  for (std::size_t i = 0; i < n; ++i) {
    r.episodes.push_back(m.agent_episodes()[i] + 1000 * m.wall_episodes()[i]);
    r.path_length.push_back(m.path_length()[i]);
  }
  auto buf = h->buffer();
  r.count = h->frames();
  r.frames.assign(buf->position.begin(),
                  buf->position.begin() + static_cast<std::ptrdiff_t>(r.count * n * 2));
  r.frames.insert(r.frames.end(), buf->series.begin(),
                  buf->series.begin() + static_cast<std::ptrdiff_t>(
                                            r.count * static_cast<std::size_t>(Series::kCount)));
  sim.detach(h.get());
  sim.step(0.05f, 3);
  EXPECT_EQ(h->frames(), r.count);  // detached: no more frames
  set_num_threads(1);
  return r;
}

}  // namespace

TEST(Observe, MetricsAndHistoryIdenticalForAnyThreadCount) {
  const Outcome a = run(1), b = run(2), c = run(4);
  EXPECT_EQ(a.count, 13u);  // frames at steps 3, 6, ..., 39 (storage grew from 1)
  EXPECT_EQ(a.episodes, b.episodes);
  EXPECT_EQ(a.episodes, c.episodes);
  EXPECT_EQ(a.path_length, b.path_length);
  EXPECT_EQ(a.path_length, c.path_length);
  ASSERT_EQ(a.frames.size(), b.frames.size());
  EXPECT_EQ(0, std::memcmp(a.frames.data(), b.frames.data(), a.frames.size() * sizeof(float)));
  EXPECT_EQ(0, std::memcmp(a.frames.data(), c.frames.data(), a.frames.size() * sizeof(float)));
  double total = 0.0;
  for (double x : a.path_length) total += x;
  EXPECT_GT(total, 0.0);
}

// With run metrics on, the end of a step makes the next step's neighbour lists in the
// metrics' grid visit (Metrics::update_rows with NeighborRowsOut). Every row must be what
// the step's own query would return: NeighborGrid::query over the committed positions
// (on a grid of cells one radius wide, where the step's are a third of it; the query is
// itself checked against brute force), here with radii and neighbour counts that put the
// list radius below, between and above the metrics' search radii (predictive: the radius
// follows the speeds), a dead agent and one brought back, and agents crossing so that
// lists shrink (the -1 padding). The dense block (1.2 agents a square metre) makes the
// metrics' visit answer from its first, smaller disc; a build that let that disc answer
// with one agent short of a full list fails here.
TEST(Observe, PreparedNeighbourListsEqualAFreshQuery) {
  for (const float danger_radius : {0.05f, 1.5f, 12.0f, -12.0f}) {
    // -12: radius 12 and no fringe, so that the crowd's mean density makes the step's
    // grid finer (cells of a third of the list radius; NeighborGrid::rebuild).
    const bool fringe = danger_radius > 0.0f;
    for (const std::size_t max_neighbors : {std::size_t{3}, std::size_t{16}}) {
      for (const bool predictive : {false, true}) {
        const std::size_t n = 300;
        Agents agents(n, 3);
        std::vector<float> pos, rad, tgt;
        for (std::size_t i = 0; i < n; ++i) {
          // A dense block and a sparse fringe, radii 0.2-0.6.
          const float s = i < 200 || !fringe ? 0.9f : 3.1f;
          pos.push_back(s * static_cast<float>(i % 15) + 0.01f * static_cast<float>(i % 7));
          pos.push_back(s * static_cast<float>(fringe ? i / 15 % 14 : i / 15));
          rad.push_back(0.2f + 0.1f * static_cast<float>(i % 5));
          tgt.push_back(40.0f - pos[2 * i]);  // through the centre: neighbours come and go
          tgt.push_back(40.0f - pos[2 * i + 1]);
        }
        ASSERT_TRUE(add_agents(agents, pos, rad, tgt));
        agents.alive()[17] = 0;
        SteeringConfig c;
        c.behaviours = {Targets{}, AgentDanger{1.0f, std::fabs(danger_radius), predictive}};
        c.resolve.mode = ResolveMode::kSubtract;
        c.max_neighbors = max_neighbors;
        Simulation sim(agents, 12, c, SimulationParams{});
        sim.configure_metrics(MetricsParams{});
        float radius = -1.0f;
        EXPECT_TRUE(sim.prepared_neighbors(&radius).empty());  // none before a step
        bool shrank = false;
        std::vector<std::int32_t> before(n, 0);
        for (int step = 0; step < 14; ++step) {
          if (step == 3) agents.alive()[40] = 0;  // its row must become empty
          if (step == 6) agents.alive()[17] = 1;  // back, where it was
          sim.step(0.25f, 1);
          const NeighborLists got = sim.prepared_neighbors(&radius);
          ASSERT_FALSE(got.empty());
          const AgentsView a = agents.view();
          ASSERT_EQ(radius, shared_neighbor_radius(c.behaviours, a));
          NeighborGrid grid;
          grid.rebuild(a.position, a.alive, n, radius);
          std::vector<std::int32_t> want(max_neighbors);
          std::size_t listed = 0;
          for (std::size_t i = 0; i < n; ++i) {
            std::size_t count = 0;
            std::fill(want.begin(), want.end(), -1);
            if (a.alive[i])
              count = grid.query({a.position[2 * i], a.position[2 * i + 1]}, radius,
                                 static_cast<std::int32_t>(i), max_neighbors, want.data());
            // The query against brute force: the max_neighbors nearest alive j != i within
            // the radius by (d², index), d² in float as the grid computes it.
            std::vector<std::pair<float, std::int32_t>> all;
            for (std::size_t j = 0; a.alive[i] && j < n; ++j) {
              if (j == i || !a.alive[j]) continue;
              const float dx = a.position[2 * j] - a.position[2 * i];
              const float dy = a.position[2 * j + 1] - a.position[2 * i + 1];
              const float d2 = dx * dx + dy * dy;
              if (d2 <= radius * radius) all.emplace_back(d2, static_cast<std::int32_t>(j));
            }
            std::sort(all.begin(), all.end());
            ASSERT_EQ(count, std::min(all.size(), max_neighbors)) << "agent " << i;
            for (std::size_t q = 0; q < count; ++q) ASSERT_EQ(want[q], all[q].second);
            ASSERT_EQ(got.counts[i], static_cast<std::int32_t>(count)) << "agent " << i;
            shrank |= got.counts[i] < before[i];  // rows that shrink test the -1 padding
            before[i] = got.counts[i];
            for (std::size_t q = 0; q < max_neighbors; ++q)
              ASSERT_EQ(got.indices[i * max_neighbors + q], want[q]) << "agent " << i << " " << q;
            listed += count;
          }
          EXPECT_GT(listed, 0u);
        }
        EXPECT_TRUE(shrank);
        sim.configure_metrics(MetricsParams{.enabled = false});
        sim.step(0.1f, 1);
        EXPECT_TRUE(sim.prepared_neighbors(&radius).empty());  // none with metrics off
      }
    }
  }
}

// The metrics' wall clearance leaves each agent's nearest-wall answer for the next step's
// slot wall sensors (NearestWalls). A world re-indexed in place between steps (same
// object, same address, new index generation: what a C++ caller holding the world may
// do) must not be answered from the old index: the agents must steer exactly as with
// metrics off, where every step asks the world.
TEST(Observe, NearestWallsAreNotReusedAfterTheWorldIsReindexedInPlace) {
  auto run = [](bool metrics) {
    const std::shared_ptr<World> world = box_world();
    const std::size_t n = 60;
    Agents agents(n, 3);
    std::vector<float> pos, rad(n, 0.4f), tgt;
    for (std::size_t i = 0; i < n; ++i) {
      pos.push_back(-15.0f + 3.0f * static_cast<float>(i % 10));
      pos.push_back(-12.0f + 1.5f * static_cast<float>(i / 10));
      tgt.push_back(pos[2 * i]);
      tgt.push_back(18.0f);
    }
    EXPECT_TRUE(add_agents(agents, pos, rad, tgt));
    SteeringConfig c;
    WallDanger sensor;
    sensor.look_ahead = 1.0f;
    c.behaviours = {Targets{}, sensor};
    c.resolve.mode = ResolveMode::kSubtract;
    Simulation sim(agents, 12, c, SimulationParams{});
    sim.set_world(world);
    MetricsParams mp;
    mp.enabled = metrics;
    sim.configure_metrics(mp);
    std::vector<float> frames;
    for (int step = 0; step < 40; ++step) {
      if (step == 10) {
        // A wall across the agents' way, 1 m ahead of the leader, indexed in place: within
        // the sensors' reach (1 m look-ahead + 0.4 m), where the metrics had found no wall
        // (within 2 m: r + 4 rmax).
        float lead = -1e9f;
        for (std::size_t i = 0; i < n; ++i) lead = std::max(lead, agents.position()[2 * i + 1]);
        const float wall[4] = {-25.0f, lead + 1.0f, 25.0f, lead + 1.0f};
        world->add_segments(wall, kAllLayers);
        world->build_index();
      }
      sim.step(0.1f, 1);
      frames.insert(frames.end(), agents.position(), agents.position() + 2 * n);
    }
    return frames;
  };
  const std::vector<float> on = run(true), off = run(false);
  ASSERT_EQ(on.size(), off.size());
  EXPECT_EQ(std::memcmp(on.data(), off.data(), on.size() * sizeof(float)), 0);
}

// due_in counts the due steps among after + 1 ... after + steps: a brute force over due().
TEST(Observe, HistoryDueInCountsTheDueStepsOfACall) {
  for (std::size_t every : {1u, 2u, 3u, 7u}) {
    for (std::uint64_t start : {0u, 1u, 5u, 12u}) {
      const History h(2, 4, every, false, false, start, 1);
      for (std::uint64_t after = 0; after < 30; ++after) {
        for (std::size_t steps = 0; steps < 25; ++steps) {
          std::size_t brute = 0;
          for (std::uint64_t s = after + 1; s <= after + steps; ++s) brute += h.due(s) ? 1 : 0;
          ASSERT_EQ(h.due_in(after, steps), brute) << "every " << every << " start " << start
                                                   << " after " << after << " steps " << steps;
        }
      }
    }
  }
}
