// SPDX-License-Identifier: MIT
// The simulation step in C++ (run under ASan/UBSan by tests/test_cpp.py): determinism
// across thread counts, walls never crossed, recorded maps and time slicing in bounds.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "contextsteer/collide.hpp"
#include "contextsteer/threads.hpp"
#include "contextsteer/path.hpp"
#include "contextsteer/simulation.hpp"

using namespace contextsteer;

namespace {

World ring_world() {
  World w;
  std::vector<float> outer, inner;
  for (int i = 0; i < 64; ++i) {
    const double t = 2.0 * 3.141592653589793 * i / 64;
    outer.push_back(static_cast<float>(40 * std::cos(t)));
    outer.push_back(static_cast<float>(30 * std::sin(t)));
    inner.push_back(static_cast<float>(20 * std::cos(t)));
    inner.push_back(static_cast<float>(12 * std::sin(t)));
  }
  w.add_polyline(outer, true, kAllLayers);
  w.add_polyline(inner, true, kAllLayers);
  const float c[2] = {30, 0}, r[1] = {2};
  w.add_circles(c, r, kAllLayers);
  w.build_index();
  return w;
}

void fill(Agents& a, std::size_t n) {
  std::vector<float> pos, vel, zero(n, 0.0f), rad(n, 0.5f), vmax(n, 4.0f), amax(n, 8.0f),
      turn(n, 3.0f), steer(n, 0.3f), tgt;
  std::vector<std::int32_t> grp(n, 0), ids(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double t = 2.0 * 3.141592653589793 * (i + 0.5) / n;
    const double s = 24.0 + 10.0 * ((i * 7) % 10) / 10.0;
    pos.push_back(static_cast<float>(s * std::cos(t)));
    pos.push_back(static_cast<float>(0.7 * s * std::sin(t)));
    vel.push_back(static_cast<float>(-std::sin(t)));
    vel.push_back(static_cast<float>(std::cos(t)));
    tgt.push_back(-pos[2 * i]);
    tgt.push_back(-pos[2 * i + 1]);
  }
  AgentInit init{n,           pos.data(),  vel.data(),   zero.data(), rad.data(), vmax.data(),
                 amax.data(), turn.data(), steer.data(), grp.data(),  tgt.data()};
  ASSERT_TRUE(a.add(init, ids));
}

std::vector<float> run(int threads, int interval, bool record) {
  set_num_threads(threads);
  const World world = ring_world();
  auto snapshot = std::make_shared<const World>(world);
  Agents agents(300, 7);
  fill(agents, 300);
  SteeringConfig c;
  c.behaviours = {Targets{}, Wander{0.3f}, WallDanger{1.0f, 3.0f, WallFalloff::kLinear, 1},
                  AgentDanger{1.0f, 1.5f, true}, Flock{0.5f, 2.0f}};
  c.resolve.mode = ResolveMode::kSubtract;
  c.spread_kernel = {0.5f, 1.0f, 0.5f};
  c.blend = 0.5f;
  c.record = record;
  SimulationParams p;
  p.motion = Vehicle{};
  p.decision_interval = interval;
  p.stuck_time = 1.0f;
  p.stuck_distance = 0.1f;
  Simulation sim(agents, 16, c, p);
  sim.set_world(snapshot);
  sim.step(0.05f, 30);
  sim.perceive();
  sim.decide_and_move(0.05f);
  std::vector<float> out(agents.position(), agents.position() + 600);
  out.insert(out.end(), sim.interest(), sim.interest() + 300 * 16);
  out.insert(out.end(), agents.heading(), agents.heading() + 300);
  set_num_threads(1);
  return out;
}

// Classic (gdx-ai) steering in the same step: every behaviour at once, in priority groups.
std::vector<float> run_classic(int threads) {
  set_num_threads(threads);
  auto snapshot = std::make_shared<const World>(ring_world());
  Agents agents(300, 7);
  fill(agents, 300);
  const float pts[4] = {0, 0, 30, 30};
  const Path path({pts, 4}, false);
  static const std::int32_t quarry[3] = {0, 1, 2};
  static const float flow[12] = {1, 0, 0, 1, -1, 0, 0, -1, 1, 1, -1, -1};  // 2 x 3 nodes
  auto steer = std::make_shared<classic::Steering>();
  namespace cl = classic;
  steer->groups.push_back(
      {{cl::RaycastAvoidance{}, cl::CollisionAvoidance{{cl::Proximity::kRadius, 3.0f}}},
       {1.0f, 1.0f}});
  steer->groups.push_back(
      {{cl::Group{cl::GroupRule::kSeparation, {cl::Proximity::kRadius, 1.5f}, 2.0f}}, {1.0f}});
  cl::Target own;
  cl::Target hunters;
  hunters.source = cl::Source::kAgents;
  hunters.ids = quarry;
  steer->groups.push_back(
      {{cl::Seek{own}, cl::Arrive{own}, cl::Pursue{hunters, 1.0f, true}, cl::MatchVelocity{hunters},
        cl::Wander{}, cl::Group{cl::GroupRule::kAlignment, {cl::Proximity::kRadius, 3.0f}},
        cl::Group{cl::GroupRule::kCohesion, {cl::Proximity::kRadius, 3.0f}}, cl::FollowPath{&path},
        cl::Interpose{1, 2}, cl::Hide{hunters},
        cl::FlowField{flow, 2, 3, {-40.0f, -30.0f}, 40.0f, 0.5f}},
       {1.0f, 0.5f, 0.3f, 0.2f, 0.2f, 0.1f, 0.1f, 0.3f, 0.1f, 0.2f, 0.3f}});
  SteeringConfig c;
  c.classic = steer;
  SimulationParams p;
  p.motion = Accel{};
  Simulation sim(agents, 8, c, p);
  sim.set_world(snapshot);
  sim.step(0.05f, 40);
  std::vector<float> out(agents.position(), agents.position() + 600);
  out.insert(out.end(), sim.acceleration(), sim.acceleration() + 600);
  set_num_threads(1);
  return out;
}

}  // namespace

TEST(Simulation, ClassicSteeringIsFiniteAndBitIdenticalForAnyThreadCount) {
  const auto a = run_classic(1), b = run_classic(2);
  ASSERT_EQ(a.size(), b.size());
  bool moved = false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i], b[i]) << i;
    ASSERT_TRUE(std::isfinite(a[i])) << i;
    moved |= i >= 600 && a[i] != 0.0f;
  }
  EXPECT_TRUE(moved);
}

TEST(Simulation, BitIdenticalForAnyThreadCount) {
  for (int interval : {1, 3}) {
    const auto a = run(1, interval, false), b = run(2, interval, false), c = run(4, interval, true);
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      ASSERT_EQ(a[i], b[i]) << i;
      ASSERT_EQ(a[i], c[i]) << i;
      ASSERT_TRUE(std::isfinite(a[i])) << i;
    }
  }
}

TEST(Collide, FastCirclesNeverCrossAThinWall) {
  World w;
  const float seg[4] = {10, -100, 10, 100};
  w.add_segments(seg, kAllLayers);
  w.build_index();
  for (int i = 0; i < 200; ++i) {
    const float angle = -1.4f + 2.8f * static_cast<float>(i) / 200.0f;
    const float r = 0.01f * static_cast<float>(i % 7);
    const Vec2 d{1e4f * std::cos(angle), 1e4f * std::sin(angle)};
    const Sweep s = sweep_circle(w, {0.0f, 0.0f}, d, r, 4, kAllLayers);
    EXPECT_LE(s.position.x, 10.0f - r) << i;
    EXPECT_GE(s.contacts, 1) << i;
  }
}
