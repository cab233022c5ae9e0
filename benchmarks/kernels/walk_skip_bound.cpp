// SPDX-License-Identifier: MIT
// How fast could rotated slot rays be if they reached the wall band for free? A bound for
// every "skip empty space faster" design of the per-ray grid walk (README, "rotated rays").
//
// On the racetrack scene "track-M-L" (benchmarks/scenes.py), the 16 slots of each of the
// 10,000 agents rotated by heading_i = (2.399963 i mod 2 pi) - pi (ray_kernels.cpp's
// `slothead`), one thread, three ways to cast the same rays:
//   walk    the library's thin-ray walk from the agent (what slot_raycast does per ray);
//   oracle  the same walk started where the ray enters its first non-empty grid cell, that
//           entry found beforehand by a plain cell-by-cell walk and not timed; rays that
//           meet no non-empty cell within L cost nothing. No real design reaches the band
//           for less, so this is the ceiling of all of them;
//   sphere  sphere tracing (one of those designs): per cell a lower bound of the distance
//           from any point of the cell to any non-empty cell (the exact Euclidean distance
//           transform between cell centres, minus the cell's diagonal, in quarter cells);
//           each step reads it at the ray's point and advances by it, until it is below
//           -t cells; then the walk goes on from there. `sphere16` traces an agent's 16
//           rays side by side (independent chains for the out-of-order core);
//   first   one step of it shared by an agent's rays: each ray's walk starts the free
//           distance at the agent's cell away from the agent.
// The oracle and sphere walks start from a moved origin, so their distances are compared
// with the walk's to 1e-6 m, and the rays that differ are printed. (On track-10000-50 one
// ray in 160,000 does, for the oracle and for sphere tracing: it grazes a shared wall vertex
// within 1e-7 or 6e-7 m, and from the moved origin it slips between the two walls.) Build and run:
//   g++ -std=c++20 -O3 -DNDEBUG -fno-math-errno -fno-trapping-math -Icpp/include -Icpp/src
//       benchmarks/kernels/walk_skip_bound.cpp cpp/src/world.cpp cpp/src/parallel.cpp
//       -lpthread -o build/walk_skip_bound
//   build/walk_skip_bound [-m 10000] [-L 50] [-r repeats] [-t threshold_cells]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <time.h>

#include "grid_walk.hpp"

using namespace contextsteer;
using namespace contextsteer::detail;
constexpr double kPi = 3.14159265358979323846;

static void add_ellipse(std::vector<float>& w, double a, double b, int count) {
  for (int k = 0; k < count; ++k) {
    const double t0 = 2.0 * kPi * k / count, t1 = 2.0 * kPi * ((k + 1) % count) / count;
    w.insert(w.end(), {float(a * std::cos(t0)), float(b * std::sin(t0)), float(a * std::cos(t1)),
                       float(b * std::sin(t1))});
  }
}

static double cpu_now() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

// Squared distance transform along one line (Felzenszwalb & Huttenlocher), in place.
static void edt_line(double* a, int n, std::size_t stride, std::vector<double>& z,
                     std::vector<int>& v, std::vector<double>& out) {
  const double inf = 1e30;
  auto f = [&](int q) { return a[static_cast<std::size_t>(q) * stride]; };
  int k = 0;
  v[0] = 0;
  z[0] = -inf;
  z[1] = inf;
  for (int q = 1; q < n; ++q) {
    double s = 0.0;
    for (;;) {
      const int p = v[k];
      s = ((f(q) + double(q) * q) - (f(p) + double(p) * p)) / (2.0 * (q - p));
      if (s > z[k]) break;
      if (k == 0) {
        k = -1;
        break;
      }
      --k;
    }
    ++k;
    v[k] = q;
    z[k] = k == 0 ? -inf : s;
    z[k + 1] = inf;
  }
  k = 0;
  for (int q = 0; q < n; ++q) {
    while (z[k + 1] < q) ++k;
    const double d = q - v[k];
    out[q] = d * d + f(v[k]);
  }
  for (int q = 0; q < n; ++q) a[static_cast<std::size_t>(q) * stride] = out[q];
}

// Per cell, in quarter cells (rounded down, capped at 255): a lower bound of the distance
// from any point of the cell to any point of a non-empty cell. Any wall point lies in a
// non-empty cell, so it is also a lower bound of the distance to the walls.
static std::vector<std::uint8_t> free_quarters(const WorldGrid& g) {
  const int nx = g.nx, ny = g.ny;
  std::vector<double> f(static_cast<std::size_t>(nx) * ny);
  for (std::size_t c = 0; c < f.size(); ++c) f[c] = g.clearance[c] == 0 ? 0.0 : 1e30;
  const int m = std::max(nx, ny);
  std::vector<double> z(m + 1), out(m);
  std::vector<int> v(m);
  for (int y = 0; y < ny; ++y) edt_line(&f[static_cast<std::size_t>(y) * nx], nx, 1, z, v, out);
  for (int x = 0; x < nx; ++x) edt_line(&f[x], ny, nx, z, v, out);
  std::vector<std::uint8_t> q(f.size());
  for (std::size_t c = 0; c < f.size(); ++c) {
    const double s = std::sqrt(f[c]) - std::sqrt(2.0) - 1e-6;  // both cells' half diagonals
    q[c] = s <= 0.0 ? 0 : static_cast<std::uint8_t>(std::min(255.0, std::floor(4.0 * s)));
  }
  return q;
}

// t where the ray enters its first non-empty cell (a plain walk, cell by cell), or -1.
static double first_band(const WorldGrid& g, const WalkOrigin& o, const WalkDir& d, double tmax) {
  const double h = g.cell, inf = std::numeric_limits<double>::infinity();
  int ix = o.ix, iy = o.iy;
  const double bx0 = d.stepx ? (o.gx + d.offx * h) * d.idx : inf;
  const double by0 = d.stepy ? (o.gy + d.offy * h) * d.idy : inf;
  double tmx = bx0 + ix * d.bxh, tmy = by0 + iy * d.byh, tin = 0.0;
  for (;;) {
    if (g.clearance[static_cast<std::size_t>(iy) * g.nx + ix] == 0) return tin;
    if (tmx < tmy) {
      tin = tmx;
      ix += d.stepx;
      tmx += d.tdx;
      if (ix < 0 || ix >= g.nx) return -1.0;
    } else {
      tin = tmy;
      iy += d.stepy;
      tmy += d.tdy;
      if (iy < 0 || iy >= g.ny) return -1.0;
    }
    if (tin > tmax) return -1.0;
  }
}

// The library's walk from the point at distance t0 along the ray; distances from the agent.
static double walk_from(const WorldGrid& g, double ox, double oy, const WalkDir& d, double t0,
                        double maxd) {
  Best b{maxd - t0, kNone, -1};
  walk<kThin>(g, make_origin(g, ox + t0 * d.dx, oy + t0 * d.dy), d, 0.0, kAllLayers, b);
  return b.kind == kNone ? maxd : b.t + t0;
}

int main(int argc, char** argv) {
  int m = 10000, reps = 7;
  double L = 50.0, thr_cells = 1.0;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "-m") m = std::atoi(argv[i + 1]);
    else if (a == "-L") L = std::atof(argv[i + 1]);
    else if (a == "-r") reps = std::atoi(argv[i + 1]);
    else if (a == "-t") thr_cells = std::atof(argv[i + 1]);
  }
  std::vector<float> walls;
  add_ellipse(walls, 100, 60, m / 2);
  add_ellipse(walls, 80, 40, m / 2);
  World w;
  w.add_segments(walls, kAllLayers);
  w.build_index();
  const WorldGrid& g = w.grid();
  const int n = 10000, k = 16;
  std::vector<double> ox(n), oy(n);
  std::vector<WalkDir> dirs(static_cast<std::size_t>(n) * k);
  for (int i = 0; i < n; ++i) {
    const double th = 2 * kPi * (i + 0.5) / n, x = (i + 1) * 0.6180339887498949;
    const double s = 0.1 + 0.8 * (x - std::floor(x));
    ox[i] = float((80 + 20 * s) * std::cos(th));
    oy[i] = float((40 + 20 * s) * std::sin(th));
    const double hd = float(std::fmod(i * 2.399963, 2 * kPi) - kPi);
    const float c = float(std::cos(hd)), sn = float(std::sin(hd));
    for (int j = 0; j < k; ++j) {
      const float sx = float(std::cos(2 * kPi * j / k)), sy = float(std::sin(2 * kPi * j / k));
      dirs[static_cast<std::size_t>(i) * k + j] = make_dir(g, c * sx - sn * sy, sn * sx + c * sy);
    }
  }
  const std::size_t rays = dirs.size();
  std::vector<double> entry(rays);
  for (int i = 0; i < n; ++i) {
    const WalkOrigin o = make_origin(g, ox[i], oy[i]);
    for (int j = 0; j < k; ++j)
      entry[static_cast<std::size_t>(i) * k + j] =
          first_band(g, o, dirs[static_cast<std::size_t>(i) * k + j], L);
  }
  const std::vector<std::uint8_t> fq = free_quarters(g);
  const int thr_q = static_cast<int>(std::lround(4.0 * thr_cells));
  const double qh = 0.25 * g.cell, ih = g.inv_cell;
  long steps = 0;

  std::vector<double> out_walk(rays), out_oracle(rays), out_sphere(rays), out_sphere16(rays);
  // The library's walk of ray r from its agent (origin o): the hit distance, or L.
  auto walk_ray = [&](const WalkOrigin& o, std::size_t r) {
    Best b{L, kNone, -1};
    walk<kThin>(g, o, dirs[r], 0.0, kAllLayers, b);
    return b.kind == kNone ? L : b.t;
  };
  auto cast_walk = [&] {
    for (int i = 0; i < n; ++i) {
      const WalkOrigin o = make_origin(g, ox[i], oy[i]);
      for (int j = 0; j < k; ++j) {
        const std::size_t r = static_cast<std::size_t>(i) * k + j;
        out_walk[r] = walk_ray(o, r);
      }
    }
  };
  auto cast_oracle = [&] {
    for (std::size_t r = 0; r < rays; ++r) {
      const int i = static_cast<int>(r / k);
      out_oracle[r] = entry[r] < 0.0 ? L : walk_from(g, ox[i], oy[i], dirs[r], entry[r], L);
    }
  };
  // Advances t along (dx, dy) from the agent by the free distance until it is below the
  // threshold; false when the ray leaves the grid or reaches L (no hit).
  auto trace = [&](double x, double y, const WalkDir& d, double& t) {
    for (;;) {
      const int cx = floor_int((x + t * d.dx - g.x0) * ih);
      const int cy = floor_int((y + t * d.dy - g.y0) * ih);
      if (cx < 0 || cy < 0 || cx >= g.nx || cy >= g.ny) return false;
      const int q = fq[static_cast<std::size_t>(cy) * g.nx + cx];
      if (q < thr_q) return true;
      t += q * qh;
      ++steps;
      if (t >= L) return false;
    }
  };
  std::vector<double> out_first(rays);
  auto cast_first = [&] {
    for (int i = 0; i < n; ++i) {
      const int cx = floor_int((ox[i] - g.x0) * ih), cy = floor_int((oy[i] - g.y0) * ih);
      const double t0 = fq[static_cast<std::size_t>(cy) * g.nx + cx] * qh;
      const WalkOrigin o = make_origin(g, ox[i], oy[i]);
      for (int j = 0; j < k; ++j) {
        const std::size_t r = static_cast<std::size_t>(i) * k + j;
        out_first[r] = t0 > 0.0 ? walk_from(g, ox[i], oy[i], dirs[r], t0, L) : walk_ray(o, r);
      }
    }
  };
  auto cast_sphere = [&] {
    for (std::size_t r = 0; r < rays; ++r) {
      const int i = static_cast<int>(r / k);
      double t = 0.0;
      out_sphere[r] =
          trace(ox[i], oy[i], dirs[r], t) ? walk_from(g, ox[i], oy[i], dirs[r], t, L) : L;
    }
  };
  auto cast_sphere16 = [&] {
    double t[64];
    bool live[64];
    for (int i = 0; i < n; ++i) {
      const WalkDir* d = &dirs[static_cast<std::size_t>(i) * k];
      for (int j = 0; j < k; ++j) t[j] = 0.0, live[j] = true;
      for (bool moved = true; moved;) {
        moved = false;
        for (int j = 0; j < k; ++j) {
          const int cx = floor_int((ox[i] + t[j] * d[j].dx - g.x0) * ih);
          const int cy = floor_int((oy[i] + t[j] * d[j].dy - g.y0) * ih);
          const bool in = cx >= 0 && cy >= 0 && cx < g.nx && cy < g.ny;
          const int q = fq[in ? static_cast<std::size_t>(cy) * g.nx + cx : 0];
          live[j] = live[j] && in && t[j] < L;
          const double step = live[j] && q >= thr_q ? q * qh : 0.0;
          t[j] += step;
          moved = moved || step > 0.0;
        }
      }
      for (int j = 0; j < k; ++j) {
        const std::size_t r = static_cast<std::size_t>(i) * k + j;
        out_sphere16[r] = live[j] && t[j] < L ? walk_from(g, ox[i], oy[i], d[j], t[j], L) : L;
      }
    }
  };
  auto time_of = [&](auto&& cast) {
    std::vector<double> ts;
    for (int rep = 0; rep < reps; ++rep) {
      const double t0 = cpu_now();
      cast();
      ts.push_back(cpu_now() - t0);
    }
    std::sort(ts.begin(), ts.end());
    return ts[ts.size() / 2];
  };
  auto agree = [&](const std::vector<double>& a) {
    long hits = 0, hits_a = 0, off = 0;
    for (std::size_t r = 0; r < rays; ++r) {
      hits += out_walk[r] < L;
      hits_a += a[r] < L;
      if (std::fabs(a[r] - out_walk[r]) > 1e-6) {
        ++off;
        if (off <= 3)
          std::printf("   ray %zu: %.9f against the walk's %.9f\n", r, a[r], out_walk[r]);
      }
    }
    std::printf("   hits %ld (walk %ld), distances off by > 1e-6 m: %ld\n", hits_a, hits, off);
  };
  std::printf(
      "track-%d-%g, cell %.3f m, %zu rotated slot rays, median CPU time of %d, one thread\n", m, L,
      g.cell, rays, reps);
  const double tw = time_of(cast_walk);
  std::printf("walk      %6.2f M rays/s\n", rays / tw / 1e6);
  const double to = time_of(cast_oracle);
  std::printf("oracle    %6.2f M rays/s  %.2fx the walk\n", rays / to / 1e6, tw / to);
  agree(out_oracle);
  const double ts = time_of(cast_sphere);
  steps = 0;
  cast_sphere();
  std::printf(
      "sphere    %6.2f M rays/s  %.2fx the walk  (%.2f steps a ray, threshold %.2f cells)\n",
      rays / ts / 1e6, tw / ts, double(steps) / rays, thr_q / 4.0);
  agree(out_sphere);
  const double tf = time_of(cast_first);
  std::printf("first     %6.2f M rays/s  %.2fx the walk\n", rays / tf / 1e6, tw / tf);
  agree(out_first);
  const double t16 = time_of(cast_sphere16);
  std::printf("sphere16  %6.2f M rays/s  %.2fx the walk\n", rays / t16 / 1e6, tw / t16);
  agree(out_sphere16);
  return 0;
}
