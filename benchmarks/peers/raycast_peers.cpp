// SPDX-License-Identifier: MIT
// Closest-hit raycasts on SCENES.md "track-M-L" with Box2D 2.4, Chipmunk 7 and brute force.
//
// Usage: raycast_peers [--walls M] [--length L] [--repeats R] [--brute-repeats B]
//                      [--peers box2d,chipmunk,chipmunk-opt,chipmunk-hash,brute]
// Prints one line a peer:  peer <name> <rays/s> <hits> <sum of hit fractions> <setup ms>
// Single thread; the time of a repeat is all N*D rays; the median over repeats is reported.
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
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kGolden = 0.6180339887498949;

struct Scene {
  std::vector<float> walls;    // M x 4: x0 y0 x1 y1
  std::vector<float> origins;  // R x 2
  std::vector<float> dirs;     // R x 2, unit
  double length = 0.0;
  std::size_t rays() const { return origins.size() / 2; }
};

void add_ellipse(std::vector<float>& walls, double a, double b, int count) {
  std::vector<double> px(count), py(count);
  for (int k = 0; k < count; ++k) {
    const double t = 2.0 * kPi * k / count;
    px[k] = a * std::cos(t);
    py[k] = b * std::sin(t);
  }
  for (int k = 0; k < count; ++k) {
    const int j = (k + 1) % count;
    walls.insert(walls.end(), {float(px[k]), float(py[k]), float(px[j]), float(py[j])});
  }
}

Scene build_scene(int m, double length, int n = 10000, int d = 16) {
  Scene s;
  s.length = length;
  add_ellipse(s.walls, 100.0, 60.0, m / 2);
  add_ellipse(s.walls, 80.0, 40.0, m / 2);
  std::vector<float> dx(d), dy(d);
  for (int j = 0; j < d; ++j) {
    dx[j] = float(std::cos(2.0 * kPi * j / d));
    dy[j] = float(std::sin(2.0 * kPi * j / d));
  }
  for (int i = 0; i < n; ++i) {
    const double theta = 2.0 * kPi * (i + 0.5) / n;
    const double x = (i + 1) * kGolden;
    const double sf = 0.1 + 0.8 * (x - std::floor(x));
    const float ox = float((80.0 + 20.0 * sf) * std::cos(theta));
    const float oy = float((40.0 + 20.0 * sf) * std::sin(theta));
    for (int j = 0; j < d; ++j) {
      s.origins.insert(s.origins.end(), {ox, oy});
      s.dirs.insert(s.dirs.end(), {dx[j], dy[j]});
    }
  }
  return s;
}

struct Result {
  double rays_per_s = 0.0;
  long hits = 0;
  double frac_sum = 0.0;
  double setup_ms = 0.0;
};

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Runs `cast(r, fraction&) -> bool` over all rays `repeats` times; median rays/s.
template <class Cast>
Result run(const Scene& s, int repeats, Cast&& cast) {
  Result res;
  std::vector<double> times;
  for (int rep = 0; rep < std::max(1, repeats); ++rep) {
    long hits = 0;
    double sum = 0.0;
    const double t0 = now_s();
    for (std::size_t r = 0; r < s.rays(); ++r) {
      double f;
      if (cast(r, f)) {
        ++hits;
        sum += f;
      }
    }
    times.push_back(now_s() - t0);
    res.hits = hits;
    res.frac_sum = sum;
  }
  std::sort(times.begin(), times.end());
  res.rays_per_s = double(s.rays()) / times[times.size() / 2];
  return res;
}

// End point of ray r, computed in double from the stored float32 origin and direction.
void ray_end(const Scene& s, std::size_t r, double& ex, double& ey) {
  ex = double(s.origins[2 * r]) + s.length * double(s.dirs[2 * r]);
  ey = double(s.origins[2 * r + 1]) + s.length * double(s.dirs[2 * r + 1]);
}

// ------------------------------------------------------------------- Box2D ---

struct ClosestCallback final : b2RayCastCallback {
  bool hit = false;
  float fraction = 1.0f;
  float ReportFixture(b2Fixture*, const b2Vec2&, const b2Vec2&, float f) override {
    hit = true;
    fraction = f;
    return f;  // clip the ray: later reports are closer
  }
};

Result bench_box2d(const Scene& s, int repeats) {
  const double t0 = now_s();
  b2World world(b2Vec2(0.0f, 0.0f));
  b2BodyDef bd;  // static
  b2Body* body = world.CreateBody(&bd);
  const std::size_t m = s.walls.size() / 4;
  for (std::size_t k = 0; k < m; ++k) {
    b2EdgeShape e;
    e.SetTwoSided(b2Vec2(s.walls[4 * k], s.walls[4 * k + 1]),
                  b2Vec2(s.walls[4 * k + 2], s.walls[4 * k + 3]));
    body->CreateFixture(&e, 0.0f);
  }
  const double setup = (now_s() - t0) * 1e3;
  Result res = run(s, repeats, [&](std::size_t r, double& f) {
    double ex, ey;
    ray_end(s, r, ex, ey);
    ClosestCallback cb;
    world.RayCast(&cb, b2Vec2(s.origins[2 * r], s.origins[2 * r + 1]),
                  b2Vec2(float(ex), float(ey)));
    f = cb.fraction;
    return cb.hit;
  });
  res.setup_ms = setup;
  return res;
}

// ---------------------------------------------------------------- Chipmunk ---

enum class CpIndex { kBBTree, kBBTreeOptimized, kSpatialHash };

Result bench_chipmunk(const Scene& s, int repeats, CpIndex index) {
  const double t0 = now_s();
  cpSpace* space = cpSpaceNew();
  if (index == CpIndex::kSpatialHash) {
    // Cell size of the order of a short ray's reach; buckets ~ a few per wall.
    cpSpaceUseSpatialHash(space, 2.0, int(4 * s.walls.size() / 4 + 1000));
  }
  cpBody* body = cpSpaceGetStaticBody(space);
  std::vector<cpShape*> shapes;
  const std::size_t m = s.walls.size() / 4;
  for (std::size_t k = 0; k < m; ++k) {
    cpShape* sh = cpSegmentShapeNew(body, cpv(s.walls[4 * k], s.walls[4 * k + 1]),
                                    cpv(s.walls[4 * k + 2], s.walls[4 * k + 3]), 0.0);
    cpSpaceAddShape(space, sh);
    shapes.push_back(sh);
  }
  if (index == CpIndex::kBBTreeOptimized) cpBBTreeOptimize(space->staticShapes);
  const double setup = (now_s() - t0) * 1e3;
  Result res = run(s, repeats, [&](std::size_t r, double& f) {
    double ex, ey;
    ray_end(s, r, ex, ey);
    cpSegmentQueryInfo info;
    cpShape* hit = cpSpaceSegmentQueryFirst(space, cpv(s.origins[2 * r], s.origins[2 * r + 1]),
                                            cpv(ex, ey), 0.0, CP_SHAPE_FILTER_ALL, &info);
    f = info.alpha;
    return hit != nullptr;
  });
  res.setup_ms = setup;
  for (cpShape* sh : shapes) {
    cpSpaceRemoveShape(space, sh);
    cpShapeFree(sh);
  }
  cpSpaceFree(space);
  return res;
}

// ------------------------------------------------------------- brute force ---

// Every ray against every wall, structure of arrays, float32. Ray p + t d (t in [0, 1],
// d = end - origin) meets wall a + u e (u in [0, 1]) where p + t d = a + u e; crossing
// both sides with e and d (w = a - p, den = d x e): t = (w x e) / den, u = (w x d) / den.
// den = 0 (parallel or a padding wall) never hits. Four lanes in explicit vectors (the
// compiler does not vectorise the min-reduction without -ffast-math), one division.
Result bench_brute(const Scene& s, int repeats) {
  // GCC/Clang vector extensions: 4 lanes (SSE2, the x86-64 baseline) without intrinsics.
  typedef float V4 __attribute__((vector_size(16)));
  constexpr std::size_t kLanes = 4;
  const std::size_t m = s.walls.size() / 4;
  const std::size_t mp = (m + kLanes - 1) / kLanes * kLanes;
  std::vector<float> ax(mp, 0.0f), ay(mp, 0.0f), ex(mp, 0.0f), ey(mp, 0.0f);
  for (std::size_t k = 0; k < m; ++k) {
    ax[k] = s.walls[4 * k];
    ay[k] = s.walls[4 * k + 1];
    ex[k] = s.walls[4 * k + 2] - s.walls[4 * k];
    ey[k] = s.walls[4 * k + 3] - s.walls[4 * k + 1];
  }
  constexpr float kInf = std::numeric_limits<float>::infinity();
  auto load = [](const float* p) {
    V4 v;
    std::memcpy(&v, p, sizeof v);
    return v;
  };
  return run(s, repeats, [&](std::size_t r, double& f) {
    double endx, endy;
    ray_end(s, r, endx, endy);
    const float px = s.origins[2 * r], py = s.origins[2 * r + 1];
    const float dx = float(endx - px), dy = float(endy - py);
    const V4 zero = {0, 0, 0, 0}, one = {1, 1, 1, 1}, inf = {kInf, kInf, kInf, kInf};
    V4 best = inf;
    for (std::size_t k = 0; k < mp; k += kLanes) {
      const V4 wx = load(&ax[k]) - px, wy = load(&ay[k]) - py;
      const V4 exk = load(&ex[k]), eyk = load(&ey[k]);
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
  });
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
  if (m <= 0 || m % 2 || !(length > 0.0)) {
    std::fprintf(stderr, "--walls must be even and > 0, --length > 0\n");
    return 2;
  }
  const Scene s = build_scene(m, length);
  std::printf("scene track-%d-%g rays %zu walls %d\n", m, length, s.rays(), m);
  std::string list = peers + ",";
  for (std::size_t pos; (pos = list.find(',')) != std::string::npos; list.erase(0, pos + 1)) {
    const std::string p = list.substr(0, pos);
    if (p.empty()) continue;
    Result r;
    if (p == "box2d") r = bench_box2d(s, repeats);
    else if (p == "chipmunk") r = bench_chipmunk(s, repeats, CpIndex::kBBTree);
    else if (p == "chipmunk-opt") r = bench_chipmunk(s, repeats, CpIndex::kBBTreeOptimized);
    else if (p == "chipmunk-hash") r = bench_chipmunk(s, repeats, CpIndex::kSpatialHash);
    else if (p == "brute") r = bench_brute(s, brute_repeats);
    else {
      std::fprintf(stderr, "unknown peer %s\n", p.c_str());
      return 2;
    }
    std::printf("peer %s %.6g %ld %.6f %.3f\n", p.c_str(), r.rays_per_s, r.hits, r.frac_sum,
                r.setup_ms);
    std::fflush(stdout);
  }
  return 0;
}
