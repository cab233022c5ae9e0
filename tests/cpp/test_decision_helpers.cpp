// SPDX-License-Identifier: MIT
// The velocity decision's helpers: the slot searches (cpp/src/slot_search.hpp), whose
// AVX2 variants return the index the plain loops return, ties, signed zeros and NaN
// included; and the per-agent memo of time-to-collision answers.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "cpu.hpp"
#include "contextsteer/velocity_memo.hpp"
#include "slot_search.hpp"

namespace {

using contextsteer::Vec2;
namespace detail = contextsteer::detail;

// The reference: the first slot with the largest dot product above −2, written out.
std::size_t nearest_reference(const std::vector<float>& dir, Vec2 d) {
  std::size_t q = 0;
  float best = -2.0f;
  for (std::size_t j = 0; j < dir.size() / 2; ++j) {
    const float c = dir[2 * j] * d.x + dir[2 * j + 1] * d.y;
    if (c > best) {
      best = c;
      q = j;
    }
  }
  return q;
}

std::vector<float> ring(std::size_t k) {
  std::vector<float> dir(2 * k);
  for (std::size_t j = 0; j < k; ++j) {
    const double a = 2.0 * M_PI * static_cast<double>(j) / static_cast<double>(k);
    dir[2 * j] = static_cast<float>(std::cos(a));
    dir[2 * j + 1] = static_cast<float>(std::sin(a));
  }
  return dir;
}

TEST(SlotSearch, NearestSlotMatchesTheLoopOnRandomHeadingsTiesAndNaN) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> angle(-4.0f, 4.0f);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (std::size_t k : {8u, 16u, 24u, 32u, 64u}) {
    const std::vector<float> dir = ring(k);
    std::vector<Vec2> ds;
    for (int t = 0; t < 2000; ++t) {
      const float a = angle(rng);
      ds.push_back({std::cos(a), std::sin(a)});
    }
    // Exactly a slot, exactly between two slots (bisectors: ties), zero, huge, NaN.
    for (std::size_t j = 0; j < k; ++j) {
      ds.push_back({dir[2 * j], dir[2 * j + 1]});
      const std::size_t n = (j + 1) % k;
      ds.push_back({dir[2 * j] + dir[2 * n], dir[2 * j + 1] + dir[2 * n + 1]});
    }
    ds.push_back({0.0f, 0.0f});
    ds.push_back({-0.0f, -0.0f});
    ds.push_back({-1e30f, 3e29f});
    ds.push_back({nan, 1.0f});
    ds.push_back({nan, nan});
    for (const Vec2 d : ds) {
      const std::size_t want = nearest_reference(dir, d);
      EXPECT_EQ(detail::nearest_slot_scalar(dir.data(), k, d), want);
      EXPECT_EQ(detail::nearest_slot(dir.data(), k, d), want);
#if defined(CONTEXTSTEER_AVX2)
      if (contextsteer::detail::use_avx2())
        EXPECT_EQ(detail::nearest_slot_avx2(dir.data(), k, d), want);
#endif
    }
  }
}

TEST(SlotSearch, FirstMaxIsMaxElementWithTiesSignedZerosAndNaN) {
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> level(0, 4);  // few values: many ties
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (std::size_t k : {8u, 16u, 32u, 64u}) {
    for (int t = 0; t < 3000; ++t) {
      std::vector<float> v(k);
      for (float& x : v) x = 0.25f * static_cast<float>(level(rng));
      if (t % 7 == 0) v[static_cast<std::size_t>(t) % k] = nan;
      if (t % 11 == 0) std::fill(v.begin(), v.end(), (t % 2) ? -0.0f : 0.0f);
      if (t % 13 == 0) v[static_cast<std::size_t>(t) % k] = -0.0f;
      const auto want = static_cast<std::size_t>(std::max_element(v.begin(), v.end()) - v.begin());
      EXPECT_EQ(detail::first_max(v.data(), k), want);
#if defined(CONTEXTSTEER_AVX2)
      if (contextsteer::detail::use_avx2()) EXPECT_EQ(detail::first_max_avx2(v.data(), k), want);
#endif
    }
  }
}

}  // namespace

namespace {

// The velocity decision's memo of time-to-collision answers: keyed by both components'
// bits, four entries, the oldest replaced first.
TEST(VelocityMemo, FindsOnlyTheExactVelocityAndKeepsTheLastFour) {
  contextsteer::detail::VelocityMemo m;
  EXPECT_EQ(m.find({1.0f, 2.0f}), nullptr);
  m.put({1.0f, 2.0f}, 0.5f);
  m.put({1.0f, 3.0f}, 0.75f);  // same x, other y
  m.put({-0.0f, 0.0f}, 1.5f);
  ASSERT_NE(m.find({1.0f, 2.0f}), nullptr);
  EXPECT_EQ(*m.find({1.0f, 2.0f}), 0.5f);
  EXPECT_EQ(*m.find({1.0f, 3.0f}), 0.75f);
  EXPECT_EQ(m.find({2.0f, 2.0f}), nullptr);  // other x, same y
  EXPECT_EQ(*m.find({-0.0f, 0.0f}), 1.5f);
  EXPECT_EQ(m.find({0.0f, 0.0f}), nullptr);  // +0 is not −0: its answer may differ
  m.put({4.0f, 4.0f}, 2.0f);
  m.put({5.0f, 5.0f}, 3.0f);  // fifth: replaces the oldest, (1, 2)
  EXPECT_EQ(m.find({1.0f, 2.0f}), nullptr);
  EXPECT_EQ(*m.find({1.0f, 3.0f}), 0.75f);
  EXPECT_EQ(*m.find({5.0f, 5.0f}), 3.0f);
  m.clear();
  EXPECT_EQ(m.find({5.0f, 5.0f}), nullptr);
}

}  // namespace
