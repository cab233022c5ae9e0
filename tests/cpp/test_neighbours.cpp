// SPDX-License-Identifier: MIT
// NeighborGrid on hostile values: non-finite positions and radii that overflow float32
// must neither hang nor read out of bounds (the rebuild once looped forever on them), and
// crowds of coincident agents must not make each query read all of them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "contextsteer/neighbours.hpp"

namespace cs = contextsteer;

namespace {
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
}  // namespace

TEST(NeighborGrid, NonFinitePositionsStayOutOfTheBoundsAndTheResults) {
  std::vector<float> p = {0, 0, 1, 0, kNaN, 2, kInf, -kInf, 0, 1};
  cs::NeighborGrid g;
  g.rebuild(p.data(), nullptr, 5, 1.5f);
  EXPECT_EQ(g.size(), 5u);
  std::int32_t out[8];
  const std::size_t m = g.query({0.0f, 0.0f}, 1.5f, 0, 8, out);
  ASSERT_EQ(m, 2u);  // agents 1 and 4, never the NaN or inf ones
  EXPECT_EQ(out[0], 1);
  EXPECT_EQ(out[1], 4);
}

TEST(NeighborGrid, CellSizesBeyondFloatRangeEnd) {
  std::vector<float> p = {-3e38f, -3e38f, 3e38f, 3e38f, 0, 0};
  cs::NeighborGrid g;
  for (float cell : {kInf, kNaN, 0.0f, -1.0f, 1e-30f, 3e38f}) {
    g.rebuild(p.data(), nullptr, 3, cell);  // must return
    std::int32_t out[4];
    EXPECT_EQ(g.query({0.0f, 0.0f}, 1.0f, 2, 4, out), 0u);
    EXPECT_EQ(g.query({0.0f, 0.0f}, kInf, -1, 4, out), 3u);
  }
}

namespace {

// Brute force: the contract of NeighborGrid::query (d² in float32, (d², index) order).
std::vector<std::int32_t> brute_force(const std::vector<float>& p, std::int32_t self, float radius,
                                      std::size_t max_count) {
  std::vector<std::pair<float, std::int32_t>> found;
  const float r2 = radius * radius;
  const float x = p[2 * static_cast<std::size_t>(self)],
              y = p[2 * static_cast<std::size_t>(self) + 1];
  for (std::size_t j = 0; j < p.size() / 2; ++j) {
    const float dx = p[2 * j] - x, dy = p[2 * j + 1] - y;
    const float d2 = dx * dx + dy * dy;
    if (static_cast<std::int32_t>(j) != self && d2 <= r2)
      found.emplace_back(d2, static_cast<std::int32_t>(j));
  }
  std::sort(found.begin(), found.end());
  std::vector<std::int32_t> out;
  for (std::size_t k = 0; k < std::min(max_count, found.size()); ++k)
    out.push_back(found[k].second);
  return out;
}

// The first `count` entries of `v` (all of them when it has fewer).
std::vector<std::int32_t> first(const std::vector<std::int32_t>& v, std::size_t count) {
  return {v.begin(), v.begin() + static_cast<std::ptrdiff_t>(std::min(count, v.size()))};
}

}  // namespace

TEST(NeighborGrid, CoincidentAgentsInACrowdedCellAreGroupedWithTheSameAnswers) {
  // 700 agents, 300 of them at one point and 100 at another, the rest scattered round
  // them and on a coarse lattice (more repeats, and distance ties), shuffled: the crowded
  // cells are read by position, and every query answers as the brute force does.
  std::vector<float> p;
  std::uint32_t s = 12345;
  auto uniform = [&] {  // in [-1, 1)
    s = s * 1664525u + 1013904223u;
    return static_cast<float>(s >> 8) / 8388608.0f - 1.0f;
  };
  for (int i = 0; i < 700; ++i) {
    if (i % 7 < 3) p.insert(p.end(), {0.0f, 0.0f});
    else if (i % 7 == 3) p.insert(p.end(), {0.25f, -0.5f});
    else if (i % 7 == 4)
      p.insert(p.end(), {std::round(4.0f * uniform()) / 4.0f, std::round(4.0f * uniform()) / 4.0f});
    else p.insert(p.end(), {uniform(), uniform()});
  }
  const auto n = p.size() / 2;
  cs::NeighborGrid g;
  std::vector<std::int32_t> out(256);
  for (const float radius : {0.0f, 0.3f, 1.0f, 3.0f}) {
    g.rebuild(p.data(), nullptr, n, radius > 0.0f ? radius : 1.0f, 16);
    EXPECT_GE(g.grouped_cells(), 1u) << radius;
    for (std::size_t i = 0; i < n; ++i) {
      const auto self = static_cast<std::int32_t>(i);
      const std::vector<std::int32_t> all = brute_force(p, self, radius, 256);
      for (const std::size_t max_count : {1u, 16u, 256u}) {
        const std::size_t m =
            g.query({p[2 * i], p[2 * i + 1]}, radius, self, max_count, out.data());
        // The brute force's first max_count: the (d², index) order is total.
        ASSERT_EQ(first(out, m), first(all, max_count))
            << "agent " << i << ", radius " << radius << ", max " << max_count;
      }
    }
  }
  // A grid made from this one for moved agents has no groups (theirs hold the old
  // positions) and still answers exactly.
  std::vector<float> moved = p;
  for (std::size_t k = 0; k < moved.size(); k += 2) moved[k] += 0.01f * static_cast<float>(k % 5);
  g.rebuild(p.data(), nullptr, n, 1.0f, 16);
  cs::NeighborGrid from;
  ASSERT_TRUE(from.rebuild_from(g, moved.data()));
  EXPECT_EQ(from.grouped_cells(), 0u);
  for (std::size_t i = 0; i < n; ++i) {
    const auto self = static_cast<std::int32_t>(i);
    const std::size_t m = from.query({moved[2 * i], moved[2 * i + 1]}, 1.0f, self, 16, out.data());
    ASSERT_EQ(first(out, m), brute_force(moved, self, 1.0f, 16)) << "agent " << i;
  }
}

TEST(NeighborGrid, AFewFarAgentsCompressTheGridWithTheSameAnswers) {
  // One agent a million metres from a crowd grew the cells to fit the bounding box in
  // max(64, 2n) of them: the whole crowd shared a cell and each query read all of it
  // (cs.neighbours on 200k points: 62 s against 0.12 s; fuzz round 19). Such a grid keeps
  // only the occupied columns and rows, and answers as the brute force does.
  std::uint32_t s = 777;
  auto uniform = [&] {  // in [0, 1)
    s = s * 1664525u + 1013904223u;
    return static_cast<float>(s >> 8) / 16777216.0f;
  };
  std::vector<float> crowd;
  for (int i = 0; i < 1500; ++i) crowd.insert(crowd.end(), {60.0f * uniform(), 60.0f * uniform()});
  cs::NeighborGrid g;
  g.rebuild(crowd.data(), nullptr, crowd.size() / 2, 2.0f, 16);
  EXPECT_FALSE(g.compressed());  // a crowd alone keeps its plain grid
  {
    // A sparse crowd that fills its grown cells, with a pile of 300 in one: compressing
    // it would give cells no finer, for two sorts a rebuild. Kept plain.
    std::vector<float> sparse;
    for (int i = 0; i < 3000; ++i)
      sparse.insert(sparse.end(), {1e5f * uniform(), 1e5f * uniform()});
    for (int i = 0; i < 300; ++i) sparse.insert(sparse.end(), {5e4f, 5e4f});
    g.rebuild(sparse.data(), nullptr, sparse.size() / 2, 2.0f, 16);
    EXPECT_FALSE(g.compressed());
    EXPECT_GE(g.most_in_a_cell(), 300u);
  }
  struct Case {
    const char* name;
    std::vector<float> extra;
  };
  std::vector<float> cluster;  // a second crowd far away, with a pile of coincident agents
  for (int i = 0; i < 700; ++i)
    cluster.insert(cluster.end(), {5e5f + 30.0f * uniform(), -5e5f + 30.0f * uniform()});
  for (int i = 0; i < 300; ++i) cluster.insert(cluster.end(), {5e5f + 10.0f, -5e5f + 10.0f});
  const std::vector<Case> cases = {
      {"one agent far up and right", {1e6f, 1e6f}},
      {"one far left, one far down, a NaN", {-1e6f, 3.0f, 20.0f, -2e6f, kNaN, 1.0f}},
      {"two agents together far away", {7e5f, 7e5f, 7e5f + 1.0f, 7e5f}},
      {"a second crowd far away", cluster},
  };
  std::vector<std::int32_t> out(256);
  for (const Case& c : cases) {
    std::vector<float> p = crowd;
    p.insert(p.end(), c.extra.begin(), c.extra.end());
    const std::size_t n = p.size() / 2;
    for (const float radius : {2.0f, 0.5f}) {
      g.rebuild(p.data(), nullptr, n, radius, 16);
      EXPECT_TRUE(g.compressed()) << c.name;
      EXPECT_LE(g.most_in_a_cell(), 300u + 40u) << c.name;  // the pile, and a few beside it
      for (std::size_t i = 0; i < n; ++i) {
        const auto self = static_cast<std::int32_t>(i);
        const std::vector<std::int32_t> all = brute_force(p, self, radius, 256);
        for (const std::size_t max_count : {16u, 256u}) {
          const std::size_t m =
              g.query({p[2 * i], p[2 * i + 1]}, radius, self, max_count, out.data());
          ASSERT_EQ(first(out, m), first(all, max_count))
              << c.name << ", agent " << i << ", radius " << radius;
        }
        // visit: every agent within the radius once, self included (when finite).
        std::vector<std::int32_t> seen;
        g.visit({p[2 * i], p[2 * i + 1]}, radius,
                [&](std::int32_t j, float) { seen.push_back(j); });
        std::sort(seen.begin(), seen.end());
        std::vector<std::int32_t> want = brute_force(p, self, radius, n);
        if (std::isfinite(p[2 * i]) && std::isfinite(p[2 * i + 1])) want.push_back(self);
        std::sort(want.begin(), want.end());
        ASSERT_EQ(seen, want) << c.name << ", agent " << i;
      }
      // Points between the crowds hold nobody.
      EXPECT_EQ(g.query({3e5f, 3e5f}, radius, -1, 16, out.data()), 0u);
      EXPECT_EQ(g.query({-5e5f, 30.0f}, radius, -1, 16, out.data()), 0u);
    }
    // A grid made from the compressed one for moved agents answers exactly too.
    g.rebuild(p.data(), nullptr, n, 2.0f, 16);
    std::vector<float> moved = p;
    for (std::size_t k = 0; k < moved.size(); k += 2) moved[k] += 0.3f * static_cast<float>(k % 3);
    cs::NeighborGrid from;
    ASSERT_TRUE(from.rebuild_from(g, moved.data()));
    for (std::size_t i = 0; i < n; ++i) {
      const auto self = static_cast<std::int32_t>(i);
      const std::size_t m =
          from.query({moved[2 * i], moved[2 * i + 1]}, 2.0f, self, 16, out.data());
      ASSERT_EQ(first(out, m), brute_force(moved, self, 2.0f, 16))
          << c.name << ", moved agent " << i;
    }
  }
}

TEST(NeighborGrid, AGridIsNotReusedForAgentsMovedBeyondFourCells) {
  // Positions rewritten wholesale (another thread writing them during a step) made the
  // slack the whole crowd's extent, and every query read every agent: refused, so the
  // caller rebuilds. Up to kReuseCells cells of slack the grid is reused.
  const std::size_t n = 200;
  std::vector<float> p(2 * n);
  for (std::size_t i = 0; i < n; ++i) {
    p[2 * i] = static_cast<float>(i % 20);
    p[2 * i + 1] = static_cast<float>(i / 20);
  }
  cs::NeighborGrid g;
  g.rebuild(p.data(), nullptr, n, 1.0f);
  cs::NeighborGrid from;
  std::vector<float> moved = p;
  moved[0] += 3.0f;  // |dx| + |dy| = 3 cells of 1 m
  EXPECT_TRUE(from.rebuild_from(g, moved.data()));
  moved[0] += 2.0f;  // 5 cells
  EXPECT_FALSE(from.rebuild_from(g, moved.data()));
}

TEST(NeighborGrid, AHundredThousandCoincidentAgentsGetTheLowestOtherIndices) {
  // One cell of 100,000 agents at one point: every query reads one position and at most
  // max_count + 2 of its agents (it read all 100,000: 17 s for the whole table).
  const std::size_t n = 100000;
  std::vector<float> p(2 * n, 3.5f);
  cs::NeighborGrid g;
  g.rebuild(p.data(), nullptr, n, 1.0f, 16);
  EXPECT_EQ(g.grouped_cells(), 1u);
  std::int32_t out[16];
  for (std::size_t i = 0; i < n; ++i) {
    const auto self = static_cast<std::int32_t>(i);
    ASSERT_EQ(g.query({3.5f, 3.5f}, 1.0f, self, 16, out), 16u);
    for (std::int32_t k = 0; k < 16; ++k) ASSERT_EQ(out[k], k < self ? k : k + 1) << i;
  }
}
