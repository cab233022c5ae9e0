// SPDX-License-Identifier: MIT
// Slot raycasts in C++ (run under ASan/UBSan by tests/test_cpp.py): the strip index of a
// fixed slot set gives the per-ray walk's distances bit for bit (thin and thick, layers,
// origins far away, inside a polygon), concurrent first calls build it once, and an edit
// drops it.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "contextsteer/raycast.hpp"
#include "strip_index.hpp"  // SlotStrips complete: the cache test builds entries

using namespace contextsteer;

namespace {

World random_world(std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-10.0f, 10.0f);
  World w;
  for (std::uint32_t layer : {1u, 2u}) {
    std::vector<float> seg;
    for (int i = 0; i < 60; ++i) {
      const float ax = std::round(u(rng) * 4) / 4, ay = std::round(u(rng) * 4) / 4;
      float bx = ax + std::round(u(rng) * 2) / 8, by = ay + std::round(u(rng) * 2) / 8;
      if (bx == ax && by == ay) bx += 0.25f;
      seg.insert(seg.end(), {ax, ay, bx, by});
    }
    w.add_segments(seg, layer);
  }
  const float c[4] = {3, -2, -6, 5}, r[2] = {0.8f, 0.0f};
  w.add_circles(c, r, 2u);
  const float ring[6] = {1, 1, 4, 1.5f, 2, 4};
  w.add_polygon(ring, kAllLayers);
  w.build_index();
  return w;
}

std::vector<float> cast(const World& w, const std::vector<float>& pos,
                        const std::vector<float>& slots, const std::vector<float>& look,
                        float radius, std::uint32_t layers, SlotMode mode) {
  const std::size_t n = pos.size() / 2, k = slots.size() / 2;
  std::vector<float> out(n * k, -1.0f);
  slot_raycast(w, pos, slots, look, {}, radius, layers, out, mode);
  return out;
}

bool bit_equal(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

TEST(SlotStrips, EqualPerRayWalkBitForBit) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-11.0f, 11.0f);
  for (int scene = 0; scene < 6; ++scene) {
    World w = random_world(rng);
    const std::size_t k = 3 + 5 * static_cast<std::size_t>(scene % 3);
    std::vector<float> slots;
    for (std::size_t j = 0; j < k; ++j) {
      const double a =
          2.0 * 3.141592653589793 * static_cast<double>(j) / static_cast<double>(k) + 0.1 * scene;
      slots.push_back(static_cast<float>(std::cos(a)));
      slots.push_back(static_cast<float>(std::sin(a)));
    }
    std::vector<float> pos, look;
    for (int i = 0; i < 200; ++i) {
      pos.push_back(i % 4 == 0 ? std::round(u(rng) * 4) / 4 : u(rng));  // some on lattice walls
      pos.push_back(u(rng));
      look.push_back(i % 5 == 0 ? 0.0f : 25.0f);
    }
    pos.insert(pos.end(), {2.5f, 2.0f, 3e6f, 1.0f, -1e6f, -4e6f});  // inside the polygon; far away
    look.insert(look.end(), {25.0f, 1e7f, 1e7f});
    for (float radius : {0.0f, 0.35f}) {
      for (std::uint32_t layers : {kAllLayers, 2u}) {
        const auto strips = cast(w, pos, slots, look, radius, layers, SlotMode::kStrips);
        const auto walk = cast(w, pos, slots, look, radius, layers, SlotMode::kPerRay);
        EXPECT_TRUE(bit_equal(strips, walk))
            << "scene " << scene << " radius " << radius << " layers " << layers;
        std::size_t hits = 0;
        for (float d : strips) hits += std::isfinite(d) && d > 0.0f;
        EXPECT_GT(hits, strips.size() / 4);  // the scene is dense: most rays hit something
        for (std::size_t j = 0; j < k; ++j)
          EXPECT_EQ(strips[200 * k + j], 0.0f);  // inside the polygon
      }
    }
    const auto info = w.strips().info();
    ASSERT_EQ(info.size(), 2u);  // one index per radius, shared by both layer masks
    EXPECT_TRUE(info[0].built && info[1].built);
  }
}

TEST(SlotStrips, TheCacheIsNotLockedWhileAnIndexIsBuilt) {
  // A build uses the thread pool; with the cache locked around it, a thread waiting for
  // the pool's setup (held by set_num_threads, itself waiting for a job in flight whose
  // chunk waits for this cache) closed a cycle (ThreadSanitizer: lock-order inversion).
  // Here the build asks the same cache for another entry: that deadlocked.
  World w;
  const float a[6] = {1, 0, -0.5f, 0.8660254f, -0.5f, -0.8660254f};
  const float b[6] = {0, 1, -0.8660254f, -0.5f, 0.8660254f, -0.5f};
  int builds = 0;
  const SlotStrips* outer = w.strips().get(a, 0.0f, [&]() -> SlotStrips* {
    ++builds;
    EXPECT_EQ(w.strips().get(b, 0.0f,
                             [&]() -> SlotStrips* {
                               ++builds;
                               return nullptr;
                             }),
              nullptr);
    return nullptr;  // declined: cached as such
  });
  EXPECT_EQ(outer, nullptr);
  EXPECT_EQ(builds, 2);
  EXPECT_EQ(w.strips().info().size(), 2u);
  // Both entries are cached: asking again builds nothing.
  w.strips().get(a, 0.0f, [&]() -> SlotStrips* {
    ++builds;
    return nullptr;
  });
  EXPECT_EQ(builds, 2);
}

TEST(SlotStrips, ConcurrentFirstCallsBuildOnceAndAgree) {
  std::mt19937 rng(11);
  World w = random_world(rng);
  std::vector<float> slots, pos, look{20.0f};
  for (int j = 0; j < 16; ++j) {
    slots.push_back(static_cast<float>(std::cos(j * 3.141592653589793 / 8)));
    slots.push_back(static_cast<float>(std::sin(j * 3.141592653589793 / 8)));
  }
  std::uniform_real_distribution<float> u(-10.0f, 10.0f);
  for (int i = 0; i < 64; ++i) pos.push_back(u(rng));
  const std::size_t n = pos.size() / 2;
  std::vector<std::vector<float>> outs(4, std::vector<float>(n * 16));
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      SlotScratch s;
      s.reserve(16);
      slot_raycast_rows(w, pos, slots, look, {}, 0.0f, kAllLayers, outs[t], 0, n, s,
                        SlotMode::kStrips);
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(w.strips().info().size(), 1u);
  for (int t = 1; t < 4; ++t) EXPECT_TRUE(bit_equal(outs[t], outs[0]));
  EXPECT_TRUE(bit_equal(outs[0], cast(w, pos, slots, look, 0.0f, kAllLayers, SlotMode::kPerRay)));
  const float wall[4] = {-20, 0.1f, 20, 0.2f};
  w.add_segments(wall, kAllLayers);
  w.build_index();
  EXPECT_TRUE(w.strips().info().empty());
}

// A NaN origin (another thread writing a position mid-step: the step checks positions
// only before it perceives) returned from no walk: along an axis its loop compared only
// NaNs and never left the grid (fuzz round 15). It is now no ray: a miss, at once.
TEST(GridWalk, ANanOriginIsAMissNotAnEndlessWalk) {
  std::mt19937 rng(7);
  const World w = random_world(rng);
  const float nan = std::nanf("");
  const std::vector<float> pos = {nan, 0.5f, 0.5f, nan, nan, nan};
  const std::vector<float> slots = {1, 0, 0, 1, -1, 0, 0, -1};
  const std::vector<float> look = {30.0f};
  for (SlotMode mode : {SlotMode::kPerRay, SlotMode::kGather}) {
    for (float radius : {0.0f, 0.3f}) {
      const std::vector<float> out = cast(w, pos, slots, look, radius, kAllLayers, mode);
      for (float d : out) EXPECT_FALSE(d < 30.0f) << "a hit from a NaN origin";
    }
  }
}
