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

#include "contextsteer/geometry.hpp"
#include "contextsteer/raycast.hpp"
#include "sector_index.hpp"
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

// The 16 slot rays of every agent cast by slot_raycast_rows on four threads at once, each
// with its own scratch (first calls racing to build the world's indexes): one output each.
std::vector<std::vector<float>> rows_on_four_threads(const World& w, const std::vector<float>& pos,
                                                     const std::vector<float>& slots,
                                                     const std::vector<float>& look,
                                                     const std::vector<float>& heads,
                                                     SlotMode mode) {
  const std::size_t n = pos.size() / 2;
  std::vector<std::vector<float>> outs(4, std::vector<float>(n * 16));
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      SlotScratch s;
      s.reserve(16);
      slot_raycast_rows(w, pos, slots, look, heads, 0.0f, kAllLayers, outs[t], 0, n, s, mode);
    });
  }
  for (auto& th : threads) th.join();
  return outs;
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
  const auto outs = rows_on_four_threads(w, pos, slots, look, {}, SlotMode::kStrips);
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

// ------------------------------------------------------------------ sectors ---

namespace {

// Walls that meet every kind of sector piece: an ellipse ring (long pieces), small rings
// about a cell wide (a cell inside sees more than a half turn), U shapes, a jagged line
// (loose walls), lattice segments in two layers (rays through shared vertices, along walls)
// and a polygon.
World sector_world(std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  World w;
  auto ring = [&](double cx, double cy, double a, double b, int n, std::uint32_t layers) {
    std::vector<float> pts;
    for (int i = 0; i < n; ++i) {
      const double t = 2.0 * 3.141592653589793 * i / n;
      pts.push_back(static_cast<float>(cx + a * std::cos(t)));
      pts.push_back(static_cast<float>(cy + b * std::sin(t)));
    }
    w.add_polyline(pts, true, layers);
  };
  ring(0, 0, 9 + 2 * u(rng), 7 + 2 * u(rng), 90, kAllLayers);
  for (int i = 0; i < 3; ++i) ring(5 * u(rng), 5 * u(rng), 1.2 + u(rng), 1.2 + u(rng), 12, 1u);
  for (int i = 0; i < 2; ++i) {
    const float x = static_cast<float>(5 * u(rng)), y = static_cast<float>(5 * u(rng));
    const float s = static_cast<float>(0.8 + 0.5 * u(rng));
    const float pts[8] = {x - s, y + s, x - s, y - s, x + s, y - s, x + s, y + s};
    w.add_polyline(pts, false, kAllLayers);
  }
  std::vector<float> jag{0.0f, 0.0f};
  for (int i = 0; i < 20; ++i) {
    jag.push_back(jag[jag.size() - 2] + static_cast<float>(u(rng)));
    jag.push_back(jag[jag.size() - 2] + static_cast<float>(u(rng)));
  }
  w.add_polyline(jag, false, 2u);
  std::vector<float> seg;
  for (int i = 0; i < 12; ++i) {
    const float ax = std::round(static_cast<float>(8 * u(rng)) * 4) / 4;
    const float ay = std::round(static_cast<float>(8 * u(rng)) * 4) / 4;
    seg.insert(seg.end(), {ax, ay, ax + 0.5f, ay + (i % 3 - 1) * 0.25f});
  }
  w.add_segments(seg, 2u);
  const float poly[6] = {1, 1, 3, 1.5f, 2, 3};
  w.add_polygon(poly, kAllLayers);
  w.build_index();
  return w;
}

// Positions (at random, on lattice points, on wall vertices, outside the walls' box) and
// headings (at random, 0 on the lattice: exact zero sides, and aimed at wall vertices).
void sector_rays(const World& w, std::mt19937& rng, std::vector<float>& pos,
                 std::vector<float>& heads) {
  std::uniform_real_distribution<float> u(-12.0f, 12.0f), a(-3.14159f, 3.14159f);
  const auto walls = w.walls();
  const std::size_t m = walls.size() / 4;
  for (int i = 0; i < 300; ++i) {
    float x = u(rng), y = u(rng), h = a(rng);
    if (i % 4 == 1) {
      x = std::round(x * 4) / 4;
      y = std::round(y * 4) / 4;
      h = 0.0f;
    } else if (i % 4 == 2) {
      const std::size_t k = rng() % m;
      x = walls[4 * k];
      y = walls[4 * k + 1];
    } else if (i % 4 == 3) {
      const std::size_t k = rng() % m;
      h = static_cast<float>(std::atan2(walls[4 * k + 1] - y, walls[4 * k] - x));
    }
    pos.insert(pos.end(), {x, y});
    heads.push_back(h);
  }
  pos.insert(pos.end(), {2.0f, 1.8f, 300.0f, 1.0f, -20.0f, -20.0f});  // in the polygon; outside
  heads.insert(heads.end(), {0.3f, 0.0f, 1.0f});
}

std::vector<float> ring_slots(std::size_t k) {
  std::vector<float> s;
  for (std::size_t j = 0; j < k; ++j) {
    const double t = 2.0 * 3.141592653589793 * static_cast<double>(j) / static_cast<double>(k);
    s.push_back(static_cast<float>(std::cos(t)));
    s.push_back(static_cast<float>(std::sin(t)));
  }
  return s;
}

// The slot directions turned by `heading` as slot_raycast_rows turns them (float32
// rotation, then normalised in double), as doubles.
void rotated_slots(float heading, const std::vector<float>& slots, std::vector<double>& dx,
                   std::vector<double>& dy) {
  const float c = static_cast<float>(std::cos(static_cast<double>(heading)));
  const float s = static_cast<float>(std::sin(static_cast<double>(heading)));
  for (std::size_t j = 0; j < slots.size() / 2; ++j) {
    const float x = c * slots[2 * j] - s * slots[2 * j + 1];
    const float y = s * slots[2 * j] + c * slots[2 * j + 1];
    const double nrm = std::sqrt(static_cast<double>(x) * x + static_cast<double>(y) * y);
    dx[j] = static_cast<float>(x / nrm);
    dy[j] = static_cast<float>(y / nrm);
  }
}

}  // namespace

TEST(SlotSectors, EqualPerRayWalkBitForBit) {
  std::mt19937 rng(21);
  struct Case {
    std::size_t k;
    std::uint32_t layers;
    float L;
  };
  const Case cases[] = {{16, kAllLayers, 40.0f}, {3, 1u, 6.0f},          {21, 2u, 1.5f},
                        {16, 2u, 40.0f},         {21, kAllLayers, 6.0f}, {3, kAllLayers, 1.5f}};
  for (int scene = 0; scene < 6; ++scene) {
    const World w = sector_world(rng);
    std::vector<float> pos, heads;
    sector_rays(w, rng, pos, heads);
    const std::size_t n = pos.size() / 2;
    for (int c = 0; c < 2; ++c) {
      const Case& cs = cases[(2 * scene + c) % 6];
      const auto slots = ring_slots(cs.k);
      std::vector<float> look(n, cs.L);
      look[5] = 0.0f;
      look[7] = 0.5f * cs.L;
      std::vector<float> sect(n * cs.k), walk(n * cs.k);
      slot_raycast(w, pos, slots, look, heads, 0.0f, cs.layers, sect, SlotMode::kSectors);
      slot_raycast(w, pos, slots, look, heads, 0.0f, cs.layers, walk, SlotMode::kPerRay);
      EXPECT_TRUE(bit_equal(sect, walk))
          << "scene " << scene << " k " << cs.k << " layers " << cs.layers << " L " << cs.L;
      for (std::size_t j = 0; j < cs.k; ++j) EXPECT_EQ(sect[(n - 3) * cs.k + j], 0.0f);
    }
    const auto info = w.sectors().info();  // one per layer mask (a longer reach covers)
    ASSERT_FALSE(info.empty());
    for (const auto& e : info) EXPECT_TRUE(e.built && e.pieces > 0 && e.bytes > 0);
  }
}

TEST(SlotSectors, BothPathsGiveTheWalksDoubleDistances) {
  // sector_agent takes the AVX2 path where the CPU has it; the scalar path is what runs
  // elsewhere (and with CONTEXTSTEER_NO_AVX2=1). Both, agent by agent, in double (before
  // the float32 rounding that would hide a last-bit difference), against the walk's own
  // rule: the least ray_segment distance over every wall, up to L. Rays through a vertex
  // exactly (heading 0, slot 0 along +x, the origin level with a polyline vertex of
  // arbitrary coordinates) meet two walls whose distances round differently.
  std::mt19937 rng(5);
  World w = sector_world(rng);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<float> zig;
  for (int i = 0; i < 30; ++i) {
    zig.push_back(static_cast<float>(-6.0 + 0.4 * i + 0.1 * u(rng)));
    zig.push_back(static_cast<float>((i % 2 ? 1.3 : -1.1) + 0.3 * u(rng)));
  }
  w.add_polyline(zig, false, kAllLayers);
  w.build_index();
  std::vector<float> pos, heads;
  sector_rays(w, rng, pos, heads);
  for (std::size_t v = 1; v + 1 < zig.size() / 2; ++v) {
    pos.insert(pos.end(),
               {zig[2 * v] - static_cast<float>(1.0 + 3.0 * (u(rng) + 1.0)), zig[2 * v + 1]});
    heads.push_back(0.0f);
  }
  const float L = 20.0f;
  const auto idx = detail::build_sectors(w, kAllLayers, L);
  ASSERT_TRUE(idx);
  const auto slots = ring_slots(16);
  const auto walls = w.walls();
  std::vector<double> dx(16), dy(16), a(16), b(16);
  std::size_t agents = 0, through_vertex = 0;
  for (std::size_t i = 0; i < pos.size() / 2; ++i) {
    const float ox = pos[2 * i], oy = pos[2 * i + 1];
    if (!detail::sector_inside(*idx, ox, oy) || w.polygon_at({ox, oy}, kAllLayers) >= 0) continue;
    rotated_slots(heads[i], slots, dx, dy);
    detail::sector_agent(*idx, ox, oy, dx.data(), dy.data(), 16, L, a.data());
    detail::sector_agent_scalar(*idx, ox, oy, dx.data(), dy.data(), 16, L, b.data());
    for (int j = 0; j < 16; ++j) {
      double want = std::nextafter(static_cast<double>(L), 1e300);
      int hits = 0;
      for (std::size_t q = 0; q < walls.size() / 4; ++q) {
        const double t = ray_segment(walls[4 * q] - static_cast<double>(ox),
                                     walls[4 * q + 1] - static_cast<double>(oy),
                                     walls[4 * q + 2] - static_cast<double>(ox),
                                     walls[4 * q + 3] - static_cast<double>(oy), dx[j], dy[j]);
        if (t <= L) ++hits;
        if (t <= L && t < want) want = t;
      }
      if (want <= L) {
        EXPECT_EQ(a[j], want) << "agent " << i << " slot " << j << " (AVX2 path)";
        EXPECT_EQ(b[j], want) << "agent " << i << " slot " << j << " (scalar path)";
      } else {
        EXPECT_GT(a[j], L);
        EXPECT_GT(b[j], L);
      }
      if (j == 0 && heads[i] == 0.0f && hits >= 2) ++through_vertex;
    }
    ++agents;
  }
  EXPECT_GT(agents, 150u);
  EXPECT_GT(through_vertex, 10u);
}

TEST(SlotSectors, ThickRaysGiveTheWalksDoubleDistancesOnBothPaths) {
  // sector_agent_thick (band searches, bounds, solves in AVX2 lanes or one by one), agent
  // by agent in double, against the walk's rule: the least ray_capsule over every wall up
  // to L. Radii below the index's own (a rung serves the radii under it), origins beside
  // walls at about the radius heading along them, and rays tangent to a vertex's disc.
  std::mt19937 rng(7);
  World w = sector_world(rng);
  w.build_index();
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const float L = 12.0f, built = 0.8f;
  const auto idx = detail::build_sectors(w, kAllLayers, L, built);
  ASSERT_TRUE(idx);
  EXPECT_EQ(idx->radius, built);
  std::vector<float> pos, heads;
  sector_rays(w, rng, pos, heads);
  const auto walls = w.walls();
  const std::size_t m = walls.size() / 4;
  for (int g = 0; g < 120; ++g) {  // grazing starts
    const std::size_t q = rng() % m;
    const double ax = walls[4 * q], ay = walls[4 * q + 1], bx = walls[4 * q + 2],
                 by = walls[4 * q + 3];
    const double len = std::hypot(bx - ax, by - ay);
    if (len == 0.0) continue;
    const double ux = (bx - ax) / len, uy = (by - ay) / len, side = g % 2 ? 1.0 : -1.0;
    const double off = (g % 3 == 0 ? 0.8 : 0.5) + (g % 4 == 0 ? 1e-7 : 0.0);
    pos.insert(pos.end(), {static_cast<float>(ax - ux * 0.7 - side * uy * off),
                           static_cast<float>(ay - uy * 0.7 + side * ux * off)});
    heads.push_back(static_cast<float>(std::atan2(uy, ux)));
  }
  const auto slots = ring_slots(16);
  std::vector<double> dx(16), dy(16), a(16), b(16);
  std::size_t agents = 0, hits = 0;
  for (const float r : {0.8f, 0.5f, 0.05f}) {
    for (std::size_t i = 0; i < pos.size() / 2; ++i) {
      const float ox = pos[2 * i], oy = pos[2 * i + 1];
      if (!detail::sector_inside(*idx, ox, oy) || w.polygon_at({ox, oy}, kAllLayers) >= 0) continue;
      rotated_slots(heads[i], slots, dx, dy);
      detail::sector_agent_thick(*idx, ox, oy, dx.data(), dy.data(), 16, L, r, a.data());
      detail::sector_agent_thick(*idx, ox, oy, dx.data(), dy.data(), 16, L, r, b.data(), true);
      const double above = std::nextafter(static_cast<double>(L), 1e300);
      for (int j = 0; j < 16; ++j) {
        double want = above;
        for (std::size_t q = 0; q < m; ++q) {
          want = std::min(want, ray_capsule(walls[4 * q] - static_cast<double>(ox),
                                            walls[4 * q + 1] - static_cast<double>(oy),
                                            walls[4 * q + 2] - static_cast<double>(ox),
                                            walls[4 * q + 3] - static_cast<double>(oy), r, dx[j],
                                            dy[j], above));
        }
        if (want <= L) {
          ++hits;
          EXPECT_EQ(a[j], want) << "r " << r << " agent " << i << " slot " << j << " (AVX2)";
          EXPECT_EQ(b[j], want) << "r " << r << " agent " << i << " slot " << j << " (scalar)";
        } else {
          EXPECT_GT(a[j], L);
          EXPECT_GT(b[j], L);
        }
      }
      ++agents;
    }
  }
  EXPECT_GT(agents, 500u);
  EXPECT_GT(hits, 3000u);
}

TEST(SlotSectors, EveryPieceTurnsOneWayThroughLessThanAHalfTurn) {
  // cut_sector_run's pieces against a brute-force check from 81 points of the padded cell:
  // every wall of a piece turns the same way, clearly, and the piece turns through less
  // than a half turn; pieces and loose walls cover the run once, in order. U shapes and
  // rings around the cell need the chord test; lines through the cell make loose walls.
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::size_t pieces_seen = 0, loose_seen = 0, cut_by_chord = 0;
  for (int trial = 0; trial < 400; ++trial) {
    std::vector<detail::SectorWall> walls;
    double x = 3 * u(rng), y = 3 * u(rng), turn = u(rng), dir = 3.14159 * u(rng);
    const int shape = trial % 3;
    const int n = 3 + static_cast<int>(rng() % 40);
    for (int i = 0; i < n; ++i) {
      // a ring about the cell, a spiral, or a wandering line
      double step = shape == 2 ? 0.3 + 0.3 * u(rng) : 6.28318 * 1.8 / n;
      if (shape == 0) dir += 6.28318 / n;
      if (shape == 1) dir += step * (1.0 + 0.3 * turn);
      if (shape == 2) dir += 0.8 * u(rng);
      const double len = shape == 2 ? step : 0.6 + 0.1 * i / n;
      const double nx = x + len * std::cos(dir), ny = y + len * std::sin(dir);
      walls.push_back({static_cast<float>(x) + 0.0, static_cast<float>(y) + 0.0,
                       static_cast<float>(nx) + 0.0, static_cast<float>(ny) + 0.0});
      x = static_cast<float>(nx);
      y = static_cast<float>(ny);
    }
    const double cx = 0.5 * u(rng), cy = 0.5 * u(rng), half = 0.1 + 0.4 * (u(rng) + 1);
    const double qx[4] = {cx - half, cx + half, cx - half, cx + half};
    const double qy[4] = {cy - half, cy - half, cy + half, cy + half};
    std::vector<std::uint32_t> ps, pl;
    std::size_t pieces = 0, loose = 0;
    detail::cut_sector_run(walls, 0, static_cast<std::uint32_t>(walls.size()), qx, qy, ps, pl, 0,
                           pieces, loose);
    std::uint32_t next = 0;
    for (std::size_t q = 0; q < ps.size(); ++q) {
      const bool is_loose = (pl[q] & SectorIndex::kLoose) != 0;
      const std::uint32_t len = pl[q] & ~SectorIndex::kLoose;
      ASSERT_EQ(ps[q], next);
      ASSERT_GT(len, 0u);
      next += len;
      if (is_loose) {
        loose_seen += len;
        continue;
      }
      ++pieces_seen;
      if (q + 1 < ps.size() && !(pl[q + 1] & SectorIndex::kLoose)) ++cut_by_chord;
      for (int gx = 0; gx <= 8; ++gx)
        for (int gy = 0; gy <= 8; ++gy) {
          const double px = cx - half + 2 * half * gx / 8.0, py = cy - half + 2 * half * gy / 8.0;
          double total = 0.0;
          int sign = 0;
          for (std::uint32_t i = ps[q]; i < ps[q] + len; ++i) {
            const auto& s = walls[i];
            const double cr = (s.ax - px) * (s.by - py) - (s.ay - py) * (s.bx - px);
            const int sg = cr > 0 ? 1 : -1;
            ASSERT_NE(cr, 0.0);
            if (sign == 0) sign = sg;
            ASSERT_EQ(sg, sign) << "trial " << trial << " piece " << q << " wall " << i;
            total += std::atan2(cr, (s.ax - px) * (s.bx - px) + (s.ay - py) * (s.by - py));
            if (i > ps[q]) ASSERT_TRUE(walls[i - 1].bx == s.ax && walls[i - 1].by == s.ay);
          }
          ASSERT_LT(std::fabs(total), 3.141592653589793) << "trial " << trial << " piece " << q;
        }
    }
    ASSERT_EQ(next, walls.size());
    std::size_t mono = 0, free_walls = 0;
    for (std::size_t q = 0; q < ps.size(); ++q) {
      if (pl[q] & SectorIndex::kLoose) free_walls += pl[q] & ~SectorIndex::kLoose;
      else ++mono;
    }
    EXPECT_EQ(pieces, mono);
    EXPECT_EQ(loose, free_walls);
  }
  EXPECT_GT(pieces_seen, 400u);
  EXPECT_GT(loose_seen, 50u);
  EXPECT_GT(cut_by_chord, 50u);  // a piece followed by another: cut at a half turn (or a flip)
}

TEST(SlotSectors, ConcurrentFirstCallsBuildOnceAndAnEditDropsIt) {
  std::mt19937 rng(8);
  World w = sector_world(rng);
  std::vector<float> pos, heads;
  sector_rays(w, rng, pos, heads);
  const std::size_t n = pos.size() / 2;
  const auto slots = ring_slots(16);
  const std::vector<float> look{12.0f};
  const auto outs = rows_on_four_threads(w, pos, slots, look, heads, SlotMode::kSectors);
  EXPECT_EQ(w.sectors().info().size(), 1u);
  std::vector<float> walk(n * 16);
  slot_raycast(w, pos, slots, look, heads, 0.0f, kAllLayers, walk, SlotMode::kPerRay);
  for (int t = 0; t < 4; ++t) EXPECT_TRUE(bit_equal(outs[t], walk));
  const float wall[4] = {-20, 0.1f, 20, 0.2f};
  w.add_segments(wall, kAllLayers);
  w.build_index();
  EXPECT_TRUE(w.sectors().info().empty());
}
