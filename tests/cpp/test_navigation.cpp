// SPDX-License-Identifier: MIT
// The long navigation builds stop when asked (the bindings ask Python for Ctrl-C): the
// route graph's pair tests between blocks of rows, the NavField march every 2^20 nodes.
// (That a stop that never fires changes nothing, the Python suite shows: the bindings
// always pass one, and the routes and fields there are checked against oracles.)
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include "contextsteer/nav_field.hpp"
#include "contextsteer/route.hpp"
#include "contextsteer/world.hpp"

using namespace contextsteer;

namespace {

World circles(int n) {
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(0.0f, 1000.0f);
  std::vector<float> c, r;
  for (int i = 0; i < n; ++i) {
    c.insert(c.end(), {u(rng), u(rng)});
    r.push_back(0.05f);
  }
  World w;
  w.add_circles(c, r, kAllLayers);
  w.build_index();
  return w;
}

}  // namespace

// 190 circles of 2 * 4 corners: 1,520 corners, 1.15e6 pairs, two blocks of rows.
constexpr int kCircles = 190, kArc = 4;

TEST(Router, StopsBetweenBlocksWhenAsked) {
  const World w = circles(kCircles);
  int asked = 0;
  Router r;
  EXPECT_FALSE(r.build(w, 0.0f, kAllLayers, kArc, [&] { return ++asked == 1; }));
  EXPECT_EQ(asked, 1);
  EXPECT_TRUE(r.corners().empty());
}

TEST(Router, TheGraphHoldsBothDirectionsOfEveryEdgeInSortedRows) {
  // The CSR is filled without a second copy of the edges: row r gets the corners k < r
  // that see it, then its own j > r. (The Python suite checks the routes themselves.)
  const World w = circles(60);  // 480 corners, one block
  int asked = 0;
  Router r;
  ASSERT_TRUE(r.build(w, 0.3f, kAllLayers, kArc, [&] { return ++asked < 0; }));
  EXPECT_EQ(asked, 0);
  const auto es = r.edge_start(), e = r.edges();
  const std::size_t v = r.corners().size() / 2;
  ASSERT_EQ(es.size(), v + 1);
  EXPECT_GT(e.size(), v);
  for (std::size_t a = 0; a < v; ++a)
    for (auto k = es[a]; k < es[a + 1]; ++k) {
      if (k > es[a]) EXPECT_LT(e[k - 1], e[k]);
      EXPECT_NE(static_cast<std::size_t>(e[k]), a);
      const auto b = static_cast<std::size_t>(e[k]);
      EXPECT_TRUE(std::binary_search(e.begin() + es[b], e.begin() + es[b + 1],
                                     static_cast<std::int32_t>(a)))
          << a << " -> " << b;
    }
}

TEST(Router, RefusesMoreCornersThanItsBudget) {
  const World w = circles(700);  // 24 corners a circle: 16,800 > 16,384
  Router r;
  EXPECT_THROW(r.build(w, 0.0f, kAllLayers, 12), std::invalid_argument);
}

TEST(NavField, MarchStopsWhenAsked) {
  World w;
  const float wall[4] = {0, 0, 100, 0};
  w.add_segments(wall, kAllLayers);
  w.build_index();
  NavGoals g;
  g.points = {50.0f, 50.0f};
  const std::vector<NavGoals> goals{g};
  int asked = 0;
  NavField f;
  // about 1,460 x 740 nodes (cell 0.07): the march asks at 2^20 accepted nodes
  EXPECT_THROW(f.build(w, goals, 0.07f, 0.0f, kAllLayers, 1.0f,
                       std::numeric_limits<double>::infinity(), [&] { return ++asked == 1; }),
               NavInterrupted);
  EXPECT_EQ(asked, 1);
}

TEST(NavField, TheCountRunsOnAcrossGoalSets) {
  // Eight goal sets on a grid of about 136,000 nodes: no single march reaches 2^20
  // accepted nodes, but the eight together do (Ctrl-C waited for the whole build before).
  World w;
  const float wall[4] = {0, 0, 60, 0};
  w.add_segments(wall, kAllLayers);
  w.build_index();
  std::vector<NavGoals> goals(8);
  for (std::size_t k = 0; k < goals.size(); ++k)
    goals[k].points = {5.0f + 6.0f * static_cast<float>(k), 20.0f};
  int asked = 0;
  NavField f;
  EXPECT_THROW(f.build(w, goals, 0.1f, 0.0f, kAllLayers, 1.0f,
                       std::numeric_limits<double>::infinity(), [&] { return ++asked == 1; }),
               NavInterrupted);
  EXPECT_EQ(asked, 1);
}
