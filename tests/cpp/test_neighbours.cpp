// SPDX-License-Identifier: MIT
// NeighborGrid on hostile values: non-finite positions and radii that overflow float32
// must neither hang nor read out of bounds (the rebuild once looped forever on them).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
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
