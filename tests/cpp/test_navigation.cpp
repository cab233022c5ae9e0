// SPDX-License-Identifier: MIT
// The long navigation builds stop when asked (the bindings ask Python for Ctrl-C): the
// route graph's pair tests between blocks of rows, the NavField build about every 20 ms
// of its work (blocking the nodes round the walls, the sweeps, the marches).
// (That a stop that never fires changes nothing, the Python suite shows: the bindings
// always pass one, and the routes and fields there are checked against oracles.)
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
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

TEST(NavField, StopsWhenAsked) {
  World w;
  const float wall[4] = {0, 0, 100, 0};
  w.add_segments(wall, kAllLayers);
  w.build_index();
  NavGoals g;
  g.points = {50.0f, 50.0f};
  const std::vector<NavGoals> goals{g};
  int asked = 0;
  NavField f;
  // about 1,460 x 740 nodes (cell 0.07): asked at its first clock read
  EXPECT_THROW(f.build(w, goals, 0.07f, 0.0f, kAllLayers, 1.0f,
                       std::numeric_limits<double>::infinity(), [&] { return ++asked == 1; }),
               NavInterrupted);
  EXPECT_EQ(asked, 1);
}

TEST(NavField, AsksAgainThroughTheMarchesOfSeveralGoalSets) {
  // Eight goal sets on a grid of about 550,000 nodes: 4.4 million accepted nodes in all,
  // tenths of a second at least, far beyond the 20 ms between asks. The first ask (in the
  // blocking) says go on, the second stops the build. (No single march reached the 2^20
  // accepted nodes that the marches were once asked at, and then only the eight
  // together did.)
  World w;
  const float wall[4] = {0, 0, 60, 0};
  w.add_segments(wall, kAllLayers);
  w.build_index();
  std::vector<NavGoals> goals(8);
  for (std::size_t k = 0; k < goals.size(); ++k)
    goals[k].points = {5.0f + 6.0f * static_cast<float>(k), 20.0f};
  int asked = 0;
  NavField f;
  EXPECT_THROW(f.build(w, goals, 0.05f, 0.0f, kAllLayers, 1.0f,
                       std::numeric_limits<double>::infinity(), [&] { return ++asked == 2; }),
               NavInterrupted);
  EXPECT_EQ(asked, 2);
}

TEST(NavField, AsksWhileBlockingNodesRoundManyWalls) {
  // 400 walls across a 50 m square (a bow tie through its centre) on a 0.05 m grid, radius
  // 0.5: blocking them is 4·10^8 distance tests (seconds), and the march then accepts
  // about half of the 1.1 million nodes, fewer than the 2^20 it was once asked at. (A
  // build of 100,000 walls went 2.2 s without an ask, most of it blocking.)
  World w;
  std::vector<float> walls;
  for (int k = 0; k < 400; ++k) {
    const float y = 0.125f * static_cast<float>(k);
    walls.insert(walls.end(), {0.0f, y, 50.0f, 50.0f - y});
  }
  w.add_segments(walls, kAllLayers);
  w.build_index();
  NavGoals g;
  g.points = {25.0f, 25.0f};
  const std::vector<NavGoals> goals{g};
  int asked = 0;
  NavField f;
  EXPECT_THROW(f.build(w, goals, 0.05f, 0.5f, kAllLayers, 1.0f,
                       std::numeric_limits<double>::infinity(), [&] { return ++asked == 1; }),
               NavInterrupted);
  EXPECT_EQ(asked, 1);
}

namespace {

// visible() as it was before the sight mask: the sixteen nodes round each sample's cell,
// read one by one. The oracle for the mask (which must give the same answer everywhere).
bool visible_by_window(const NavField& f, Vec2 a, Vec2 b) {
  const NavGrid& g = f.grid();
  const auto blocked = f.blocked();
  const Vec2 d = b - a;
  const float len = length(d);
  const int m = static_cast<int>(std::min(std::ceil(len / (0.5f * g.cell)), 0x1p30f));
  const float inv = 1.0f / g.cell;
  bool in_band = false;
  {
    const float ax = (a.x - g.x0) * inv, ay = (a.y - g.y0) * inv;
    if (ax >= 0.0f && ay >= 0.0f && ax <= g.nx - 1 && ay <= g.ny - 1) {
      const auto nx = static_cast<std::size_t>(g.nx), ny = static_cast<std::size_t>(g.ny);
      const auto i0 = static_cast<std::size_t>(ax), j0 = static_cast<std::size_t>(ay);
      const std::size_t i1 = std::min(i0 + 1, nx - 1), j1 = std::min(j0 + 1, ny - 1);
      in_band = blocked[j0 * nx + i0] || blocked[j0 * nx + i1] || blocked[j1 * nx + i0] ||
                blocked[j1 * nx + i1];
    }
  }
  const int first = std::min(m, in_band ? 2 : 1);
  for (int k = first; k <= m; ++k) {
    const Vec2 q = a + d * (m > 0 ? static_cast<float>(k) / static_cast<float>(m) : 0.0f);
    const float fx = (q.x - g.x0) * inv, fy = (q.y - g.y0) * inv;
    if (!(fx >= 0.0f && fy >= 0.0f && fx <= g.nx - 1 && fy <= g.ny - 1)) return false;
    const auto nx = static_cast<std::ptrdiff_t>(g.nx), ny = static_cast<std::ptrdiff_t>(g.ny);
    const auto ic = static_cast<std::ptrdiff_t>(fx), jc = static_cast<std::ptrdiff_t>(fy);
    for (std::ptrdiff_t j = std::max<std::ptrdiff_t>(jc - 1, 0); j <= std::min(jc + 2, ny - 1); ++j)
      for (std::ptrdiff_t i = std::max<std::ptrdiff_t>(ic - 1, 0); i <= std::min(ic + 2, nx - 1);
           ++i)
        if (blocked[static_cast<std::size_t>(j * nx + i)]) return false;
  }
  return true;
}

}  // namespace

TEST(NavField, SightMaskAgreesWithTheSixteenNodeWindow) {
  // Thin walls, discs and the grid's edges; segments of every length from inside and
  // outside the grid, from points in the inflated band, and of length 0. The mask and
  // the window must agree on every one (each answer occurs over a thousand times).
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  for (const float cell : {0.15f, 0.4f, 1.0f}) {
    World w;
    std::vector<float> segs, centres, radii;
    for (int k = 0; k < 30; ++k) {
      const float x = 40.0f * u(rng), y = 30.0f * u(rng);
      segs.insert(segs.end(), {x, y, x + 8.0f * (u(rng) - 0.5f), y + 8.0f * (u(rng) - 0.5f)});
    }
    for (int k = 0; k < 10; ++k) {
      centres.insert(centres.end(), {40.0f * u(rng), 30.0f * u(rng)});
      radii.push_back(0.1f + u(rng));
    }
    w.add_segments(segs, kAllLayers);
    w.add_circles(centres, radii, kAllLayers);
    w.build_index();
    NavGoals goal;
    goal.points = {20.0f, 15.0f};
    const std::vector<NavGoals> goals{goal};
    NavField f;
    f.build(w, goals, cell, 0.3f, kAllLayers, 0.5f, std::numeric_limits<double>::infinity(),
            [] { return false; });
    const NavGrid& g = f.grid();
    const float w_x = static_cast<float>(g.nx - 1) * g.cell,
                w_y = static_cast<float>(g.ny - 1) * g.cell;
    int seen = 0, hidden = 0;
    for (int t = 0; t < 20000; ++t) {
      // Points up to 10 % beyond the grid on each side; every fifth pair short.
      const Vec2 a{g.x0 + w_x * (1.2f * u(rng) - 0.1f), g.y0 + w_y * (1.2f * u(rng) - 0.1f)};
      Vec2 b{g.x0 + w_x * (1.2f * u(rng) - 0.1f), g.y0 + w_y * (1.2f * u(rng) - 0.1f)};
      if (t % 5 == 0) b = a + Vec2{3.0f * (u(rng) - 0.5f), 3.0f * (u(rng) - 0.5f)};
      if (t % 97 == 0) b = a;
      const bool want = visible_by_window(f, a, b);
      ASSERT_EQ(f.visible(a, b), want)
          << "cell " << cell << " a " << a.x << "," << a.y << " b " << b.x << "," << b.y;
      (want ? seen : hidden) += 1;
    }
    EXPECT_GT(seen, 1000);
    EXPECT_GT(hidden, 1000);
  }
}
