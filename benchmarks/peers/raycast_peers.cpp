// SPDX-License-Identifier: MIT
// Closest-hit raycasts on the racetrack scene "track-M-L" (benchmarks/scenes.py) with Box2D 2.4,
// Chipmunk 7 and brute force.
//
// Usage: raycast_peers [--walls M] [--length L] [--repeats R] [--brute-repeats B]
//                      [--peers box2d,chipmunk,chipmunk-opt,chipmunk-hash,brute]
// Prints one line a peer:  peer <name> <rays/s> <hits> <sum of hit fractions> <setup ms>
// Single thread; the time of a repeat is all N*D rays; the median over repeats is reported.
// Repeats are interleaved (round r runs every peer once) so that a change of machine
// load during the run hits all peers alike and the ratios stay meaningful.
// The scene is built exactly as benchmarks/scenes.py builds it (double with libm, then
// float32), so both see bit-identical rays and walls.

#include <box2d/box2d.h>
#include <chipmunk/chipmunk.h>
#include <chipmunk/chipmunk_structs.h>  // cpSpace::staticShapes, for cpBBTreeOptimize

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <limits>
#include <string>
#include <vector>

#include "../kernels/track_scene.hpp"

namespace {

struct Scene {
  std::vector<float> walls;    // M x 4: x0 y0 x1 y1
  std::vector<float> origins;  // R x 2
  std::vector<float> dirs;     // R x 2, unit
  double length = 0.0;
  std::size_t rays() const { return origins.size() / 2; }
};

// The scene of the measurement kernels too (../kernels/track_scene.hpp): D rays a
// origin, origin-major.
Scene build_scene(int m, double length, int n = 10000, int d = 16) {
  Scene s;
  s.length = length;
  s.walls = track::walls(m);
  const std::vector<float> ring = track::slots(d);
  for (int i = 0; i < n; ++i) {
    float ox, oy;
    track::origin(i, n, ox, oy);
    for (int j = 0; j < d; ++j) {
      s.origins.insert(s.origins.end(), {ox, oy});
      s.dirs.insert(s.dirs.end(), {ring[2 * j], ring[2 * j + 1]});
    }
  }
  return s;
}

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// End point of ray r, computed in double from the stored float32 origin and direction.
void ray_end(const Scene& s, std::size_t r, double& ex, double& ey) {
  ex = double(s.origins[2 * r]) + s.length * double(s.dirs[2 * r]);
  ey = double(s.origins[2 * r + 1]) + s.length * double(s.dirs[2 * r + 1]);
}

/// One implementation under test: cast(r, fraction) -> hit for ray r of the scene.
class Peer {
 public:
  virtual ~Peer() = default;
  virtual bool cast(std::size_t r, double& fraction) = 0;
};

// ------------------------------------------------------------------- Box2D ---

class Box2DPeer final : public Peer {
 public:
  explicit Box2DPeer(const Scene& s) : s_(s), world_(b2Vec2(0.0f, 0.0f)) {
    b2BodyDef bd;  // static
    b2Body* body = world_.CreateBody(&bd);
    for (std::size_t k = 0; k < s.walls.size() / 4; ++k) {
      b2EdgeShape e;
      e.SetTwoSided(b2Vec2(s.walls[4 * k], s.walls[4 * k + 1]),
                    b2Vec2(s.walls[4 * k + 2], s.walls[4 * k + 3]));
      body->CreateFixture(&e, 0.0f);
    }
  }
  bool cast(std::size_t r, double& f) override {
    double ex, ey;
    ray_end(s_, r, ex, ey);
    Closest cb;
    world_.RayCast(&cb, b2Vec2(s_.origins[2 * r], s_.origins[2 * r + 1]),
                   b2Vec2(float(ex), float(ey)));
    f = cb.fraction;
    return cb.hit;
  }

 private:
  struct Closest final : b2RayCastCallback {
    bool hit = false;
    float fraction = 1.0f;
    float ReportFixture(b2Fixture*, const b2Vec2&, const b2Vec2&, float f) override {
      hit = true;
      fraction = f;
      return f;  // clip the ray: later reports are closer
    }
  };
  const Scene& s_;
  b2World world_;
};

// ---------------------------------------------------------------- Chipmunk ---

enum class CpIndex { kBBTree, kBBTreeOptimized, kSpatialHash };

class ChipmunkPeer final : public Peer {
 public:
  ChipmunkPeer(const Scene& s, CpIndex index) : s_(s), space_(cpSpaceNew()) {
    if (index == CpIndex::kSpatialHash) {
      // Cells of the order of a short ray's reach; a few buckets a wall.
      cpSpaceUseSpatialHash(space_, 2.0, int(s.walls.size() + 1000));
    }
    cpBody* body = cpSpaceGetStaticBody(space_);
    for (std::size_t k = 0; k < s.walls.size() / 4; ++k) {
      cpShape* sh = cpSegmentShapeNew(body, cpv(s.walls[4 * k], s.walls[4 * k + 1]),
                                      cpv(s.walls[4 * k + 2], s.walls[4 * k + 3]), 0.0);
      cpSpaceAddShape(space_, sh);
      shapes_.push_back(sh);
    }
    if (index == CpIndex::kBBTreeOptimized) cpBBTreeOptimize(space_->staticShapes);
  }
  ~ChipmunkPeer() override {
    for (cpShape* sh : shapes_) {
      cpSpaceRemoveShape(space_, sh);
      cpShapeFree(sh);
    }
    cpSpaceFree(space_);
  }
  bool cast(std::size_t r, double& f) override {
    double ex, ey;
    ray_end(s_, r, ex, ey);
    cpSegmentQueryInfo info;
    const cpShape* hit =
        cpSpaceSegmentQueryFirst(space_, cpv(s_.origins[2 * r], s_.origins[2 * r + 1]), cpv(ex, ey),
                                 0.0, CP_SHAPE_FILTER_ALL, &info);
    f = info.alpha;
    return hit != nullptr;
  }

 private:
  const Scene& s_;
  cpSpace* space_;
  std::vector<cpShape*> shapes_;
};

// ------------------------------------------------------------- brute force ---

// Every ray against every wall, structure of arrays, float32. Ray p + t d (t in [0, 1],
// d = end - origin) meets wall a + u e (u in [0, 1]) where p + t d = a + u e; crossing
// both sides with e and d (w = a - p, den = d x e): t = (w x e) / den, u = (w x d) / den.
// den = 0 (parallel or a padding wall) never hits. Four lanes in explicit vectors (the
// compiler does not vectorise the min-reduction without -ffast-math), one division.
class BrutePeer final : public Peer {
  // GCC/Clang vector extensions: 4 lanes (SSE2, the x86-64 baseline) without intrinsics.
  typedef float V4 __attribute__((vector_size(16)));
  static constexpr std::size_t kLanes = 4;

 public:
  explicit BrutePeer(const Scene& s) : s_(s) {
    const std::size_t m = s.walls.size() / 4;
    const std::size_t mp = (m + kLanes - 1) / kLanes * kLanes;
    ax_.assign(mp, 0.0f), ay_.assign(mp, 0.0f), ex_.assign(mp, 0.0f), ey_.assign(mp, 0.0f);
    for (std::size_t k = 0; k < m; ++k) {
      ax_[k] = s.walls[4 * k];
      ay_[k] = s.walls[4 * k + 1];
      ex_[k] = s.walls[4 * k + 2] - s.walls[4 * k];
      ey_[k] = s.walls[4 * k + 3] - s.walls[4 * k + 1];
    }
  }
  bool cast(std::size_t r, double& f) override {
    constexpr float kInf = std::numeric_limits<float>::infinity();
    double endx, endy;
    ray_end(s_, r, endx, endy);
    const float px = s_.origins[2 * r], py = s_.origins[2 * r + 1];
    const float dx = float(endx - px), dy = float(endy - py);
    const V4 zero = {0, 0, 0, 0}, one = {1, 1, 1, 1}, inf = {kInf, kInf, kInf, kInf};
    V4 best = inf;
    for (std::size_t k = 0; k < ax_.size(); k += kLanes) {
      const V4 wx = load(&ax_[k]) - px, wy = load(&ay_[k]) - py;
      const V4 exk = load(&ex_[k]), eyk = load(&ey_[k]);
      V4 den = dx * eyk - dy * exk;
      V4 tn = wx * eyk - wy * exk;
      V4 un = wx * dy - wy * dx;
      // Flip signs so that den >= 0; then 0 <= t, u <= 1 is tested without dividing.
      const V4 sgn = den < zero ? -one : one;
      den *= sgn, tn *= sgn, un *= sgn;
      const auto ok = (den > zero) & (tn >= zero) & (tn <= den) & (un >= zero) & (un <= den);
      const V4 t = ok ? tn / (ok ? den : one) : inf;
      best = t < best ? t : best;
    }
    float b = kInf;
    for (std::size_t l = 0; l < kLanes; ++l) b = best[l] < b ? best[l] : b;
    f = b;
    return b <= 1.0f;
  }

 private:
  static V4 load(const float* p) {
    V4 v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  const Scene& s_;
  std::vector<float> ax_, ay_, ex_, ey_;
};

struct Entry {
  std::string name;
  std::unique_ptr<Peer> peer;
  int repeats = 1;
  double setup_ms = 0.0;
  std::vector<double> times;
  long hits = 0;
  double frac_sum = 0.0;
};

// One pass over every ray: time, hit count and sum of hit fractions.
void time_pass(const Scene& s, Entry& e) {
  long hits = 0;
  double sum = 0.0;
  const double t0 = now_s();
  for (std::size_t r = 0; r < s.rays(); ++r) {
    double f;
    if (e.peer->cast(r, f)) {
      ++hits;
      sum += f;
    }
  }
  e.times.push_back(now_s() - t0);
  e.hits = hits;
  e.frac_sum = sum;
}

}  // namespace

int main(int argc, char** argv) {
  int m = 10000, repeats = 5, brute_repeats = 1;
  double length = 50.0;
  std::string peers = "box2d,chipmunk,chipmunk-opt,chipmunk-hash,brute";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--walls") m = std::atoi(next());
    else if (a == "--length") length = std::atof(next());
    else if (a == "--repeats") repeats = std::atoi(next());
    else if (a == "--brute-repeats") brute_repeats = std::atoi(next());
    else if (a == "--peers") peers = next();
    else {
      std::fprintf(stderr, "unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  if (m <= 0 || m % 2 || !(length > 0.0) || repeats < 1 || brute_repeats < 1) {
    std::fprintf(stderr, "--walls must be even and > 0, --length > 0, repeats >= 1\n");
    return 2;
  }
  const Scene s = build_scene(m, length);
  std::printf("scene track-%d-%g rays %zu walls %d\n", m, length, s.rays(), m);
  std::vector<Entry> entries;
  std::string list = peers + ",";
  for (std::size_t pos; (pos = list.find(',')) != std::string::npos; list.erase(0, pos + 1)) {
    const std::string p = list.substr(0, pos);
    if (p.empty()) continue;
    Entry e;
    e.name = p;
    e.repeats = repeats;
    const double t0 = now_s();
    using CP = ChipmunkPeer;
    if (p == "box2d") e.peer = std::make_unique<Box2DPeer>(s);
    else if (p == "chipmunk") e.peer = std::make_unique<CP>(s, CpIndex::kBBTree);
    else if (p == "chipmunk-opt") e.peer = std::make_unique<CP>(s, CpIndex::kBBTreeOptimized);
    else if (p == "chipmunk-hash") e.peer = std::make_unique<CP>(s, CpIndex::kSpatialHash);
    else if (p == "brute") e.peer = std::make_unique<BrutePeer>(s), e.repeats = brute_repeats;
    else {
      std::fprintf(stderr, "unknown peer %s\n", p.c_str());
      return 2;
    }
    e.setup_ms = (now_s() - t0) * 1e3;
    entries.push_back(std::move(e));
  }
  const int rounds = std::max(repeats, brute_repeats);
  for (int round = 0; round < rounds; ++round) {
    for (Entry& e : entries) {
      if (round < e.repeats) time_pass(s, e);
    }
  }
  for (Entry& e : entries) {
    std::sort(e.times.begin(), e.times.end());
    const double rays_per_s = double(s.rays()) / e.times[e.times.size() / 2];
    std::printf("peer %s %.6g %ld %.6f %.3f\n", e.name.c_str(), rays_per_s, e.hits, e.frac_sum,
                e.setup_ms);
  }
  return 0;
}
