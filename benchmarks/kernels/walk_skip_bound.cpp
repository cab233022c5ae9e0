// SPDX-License-Identifier: MIT
// How fast could rotated slot rays be if they reached the wall band for free? A bound for
// every "skip empty space faster" design of the per-ray grid walk (README, "rotated rays").
//
// On the racetrack scene "track-M-L" (benchmarks/scenes.py), the 16 slots of each of the
// 10,000 agents rotated by heading_i = (2.399963 i mod 2 pi) - pi (ray_kernels.cpp's
// `slothead`), one thread, several ways to cast the same rays:
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
//           distance at the agent's cell away from the agent;
//   table   one directional step: per cell and bin of directions (`-b` bins of the diamond
//           angle, no atan2 per ray), a length D such that no ray from any point of the
//           cell with a direction in the bin meets a non-empty cell before D (marched on
//           the same distance bound, with the cell's half diagonal and the bin's spread
//           added); each ray reads its agent's cell and its bin and starts the walk at D.
//           The kernel checks D against the entry point of every ray (UNSAFE lines).
// The oracle and sphere walks start from a moved origin, so their distances are compared
// with the walk's to 1e-6 m, and the rays that differ are printed. (On track-10000-50 one
// ray in 160,000 does, for the oracle and for sphere tracing: it grazes a shared wall vertex
// within 1e-7 or 6e-7 m, and from the moved origin it slips between the two walls.) Build and run:
//   g++ -std=c++20 -O3 -DNDEBUG -fno-math-errno -fno-trapping-math -Icpp/include -Icpp/src
//       benchmarks/kernels/walk_skip_bound.cpp cpp/src/world.cpp cpp/src/parallel.cpp
//       -lpthread -o build/walk_skip_bound
//   build/walk_skip_bound [-m 10000] [-L 50] [-r repeats] [-t threshold_cells] [-b bins]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <time.h>

#include "grid_walk.hpp"
#include "track_scene.hpp"

using namespace contextsteer;
using namespace contextsteer::detail;
using track::kPi;

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

// Diamond angle of (dx, dy) in [0, 4): monotone in the angle, no atan2.
static inline double diamond(double dx, double dy) {
  if (dy >= 0.0) return dx >= 0.0 ? dy / (dx + dy) : 1.0 - dx / (dy - dx);
  return dx < 0.0 ? 2.0 - dy / (-dx - dy) : 3.0 + dx / (dx - dy);
}
static inline double undiamond_angle(double d) {
  double vx, vy;
  if (d < 1.0) vx = 1.0 - d, vy = d;
  else if (d < 2.0) vx = 1.0 - d, vy = 2.0 - d;
  else if (d < 3.0) vx = d - 3.0, vy = 2.0 - d;
  else vx = d - 3.0, vy = d - 4.0;
  return std::atan2(vy, vx);
}

// Directional free distance: per cell and diamond-angle bin, in `unit` steps (rounded down,
// capped at 65535), a length D such that every ray from any point of the cell with a direction
// in the bin meets no non-empty cell for t in [0, D]. Conservative marching on the EDT bound.
static std::vector<std::uint16_t> direction_table(const WorldGrid& g,
                                                  const std::vector<std::uint8_t>& fq, int bins,
                                                  double unit, double cap) {
  const int nx = g.nx, ny = g.ny;
  const double h = g.cell, ih = g.inv_cell, rc = 0.5 * std::sqrt(2.0) * h;
  std::vector<std::uint16_t> tab(static_cast<std::size_t>(nx) * ny * bins, 0);
  for (int b = 0; b < bins; ++b) {
    double a0 = undiamond_angle(4.0 * b / bins), a1 = undiamond_angle(4.0 * (b + 1) / bins);
    if (a1 < a0) a1 += 2 * kPi;
    const double am = 0.5 * (a0 + a1), half = 0.5 * (a1 - a0) + 1e-6;
    const double ux = std::cos(am), uy = std::sin(am), spread = 2.0 * std::sin(0.5 * half) + 1e-9;
    for (int cy = 0; cy < ny; ++cy)
      for (int cx = 0; cx < nx; ++cx) {
        const std::size_t c = static_cast<std::size_t>(cy) * nx + cx;
        if (fq[c] == 0) continue;
        const double px = g.x0 + (cx + 0.5) * h, py = g.y0 + (cy + 0.5) * h;
        double t = 0.0;
        for (;;) {
          const int qx = floor_int((px + t * ux - g.x0) * ih),
                    qy = floor_int((py + t * uy - g.y0) * ih);
          if (qx < 0 || qy < 0 || qx >= nx || qy >= ny) {
            t = cap;
            break;
          }
          const double f = fq[static_cast<std::size_t>(qy) * nx + qx] * 0.25 * h;
          const double s = (f - rc - t * spread) / (1.0 + spread);
          if (s < 0.25 * h) break;
          t += s;
          if (t >= cap) {
            t = cap;
            break;
          }
        }
        tab[c * bins + b] = static_cast<std::uint16_t>(std::min(65535.0, std::floor(t / unit)));
      }
  }
  return tab;
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
  int m = 10000, reps = 7, bins = 64;
  double L = 50.0, thr_cells = 1.0;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "-m") m = std::atoi(argv[i + 1]);
    else if (a == "-L") L = std::atof(argv[i + 1]);
    else if (a == "-r") reps = std::atoi(argv[i + 1]);
    else if (a == "-t") thr_cells = std::atof(argv[i + 1]);
    else if (a == "-b") bins = std::atoi(argv[i + 1]);
  }
  const std::vector<float> walls = track::walls(m);
  World w;
  w.add_segments(walls, kAllLayers);
  w.build_index();
  const WorldGrid& g = w.grid();
  const int n = 10000, k = 16;
  std::vector<double> ox(n), oy(n);
  std::vector<WalkDir> dirs(static_cast<std::size_t>(n) * k);
  for (int i = 0; i < n; ++i) {
    float fx, fy;
    track::origin(i, n, fx, fy);
    ox[i] = fx;
    oy[i] = fy;
    const double hd = track::heading(i);
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
      const double t0 = track::cpu_now();
      cast();
      ts.push_back(track::cpu_now() - t0);
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
  const double unit = 0.25 * g.cell;
  const double tb0 = track::cpu_now();
  const std::vector<std::uint16_t> tab = direction_table(g, fq, bins, unit, L);
  std::printf("table build %.0f ms, %.1f MB (%d bins)\n", (track::cpu_now() - tb0) * 1e3,
              tab.size() * 2 / 1e6, bins);
  std::vector<double> out_table(rays);
  double jumped = 0.0, gap = 0.0, whole = 0.0;
  long banded = 0;
  auto cast_table = [&] {
    for (int i = 0; i < n; ++i) {
      const int cx = floor_int((ox[i] - g.x0) * ih), cy = floor_int((oy[i] - g.y0) * ih);
      const std::uint16_t* row = tab.data() + (static_cast<std::size_t>(cy) * g.nx + cx) * bins;
      const WalkOrigin o = make_origin(g, ox[i], oy[i]);
      for (int j = 0; j < k; ++j) {
        const std::size_t r = static_cast<std::size_t>(i) * k + j;
        const WalkDir& d = dirs[r];
        const int b = std::min(bins - 1, static_cast<int>(diamond(d.dx, d.dy) * (bins * 0.25)));
        const double t0 = row[b] * unit;
        out_table[r] =
            t0 >= L ? L : (t0 > 0.0 ? walk_from(g, ox[i], oy[i], d, t0, L) : walk_ray(o, r));
      }
    }
  };
  const double tt = time_of(cast_table);
  std::printf("table     %6.2f M rays/s  %.2fx the walk\n", rays / tt / 1e6, tw / tt);
  for (std::size_t r = 0; r < rays; ++r) {
    const int i = static_cast<int>(r / k);
    const int cx = floor_int((ox[i] - g.x0) * ih), cy = floor_int((oy[i] - g.y0) * ih);
    const int b =
        std::min(bins - 1, static_cast<int>(diamond(dirs[r].dx, dirs[r].dy) * (bins * 0.25)));
    const double t0 = tab[(static_cast<std::size_t>(cy) * g.nx + cx) * bins + b] * unit;
    jumped += (entry[r] < 0 ? std::min(t0, L) / L : (entry[r] > 0 ? t0 / entry[r] : 1.0));
    if (entry[r] >= 0) gap += (entry[r] - t0) * ih, whole += entry[r] * ih, banded += 1;
    if (entry[r] >= 0 && t0 > entry[r] + 1e-9)
      std::printf("   UNSAFE ray %zu: %.4f > entry %.4f\n", r, t0, entry[r]);
  }
  std::printf(
      "   mean jump / distance to the band %.3f; cells from the landing point to the band %.2f "
      "(from the agent %.2f)\n",
      jumped / rays, gap / banded, whole / banded);
  agree(out_table);
  return 0;
}
