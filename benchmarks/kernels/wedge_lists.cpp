// SPDX-License-Identifier: MIT
// Rotated slot rays read from per (origin cell, direction bin) lists of walls, measured
// against the library's walk (docs/performance.md, "Rays": the tenth design, not kept).
//
// On the racetrack scene "track-M-L" (benchmarks/scenes.py), the 16 slots of each of the
// 10,000 agents rotated by heading_i = (2.399963 i mod 2 pi) - pi, one thread. For every
// grid cell of side -c and every one of -b bins of directions, the list of every wall that
// a ray from a point of the cell, with a direction in the bin (widened by 1e-4 rad), meets
// within L: the walls that cross the wall's sum with the reversed sector (a hull of six
// points, the cell widened by 1 mm), found row by row. A list is kept as runs of
// consecutive wall indexes (the track's walls are two polylines, so a list is about one
// run). A ray reads its agent's cell and the bin of its direction, screens the listed
// walls eight at a time in AVX2 (the walk's float32 side screen) and solves the survivors
// exactly (geometry.hpp's ray_segment); no walk at all. The cast is `cast2`, the second
// form of docs/performance.md: bins of the diamond angle, a list of one run held in the
// cell's own 8-byte record, and the boxes of aligned blocks of eight walls screened first,
// eight blocks at a time, so that only the walls of the blocks the ray's line crosses are.
// (The first form, atan2 bins and every listed wall screened, read lists binned by angle;
// it went with that build.)
// The distances are compared with slot_raycast_rows (the walk) bit for bit. MODE=1 stops
// after finding the list (the cost of the normalisation and the lookup). Build and run:
//   g++ -std=c++20 -O3 -DNDEBUG -fno-math-errno -fno-trapping-math -Icpp/include -Icpp/src
//       -Ibenchmarks/kernels benchmarks/kernels/wedge_lists.cpp cpp/src/raycast.cpp
//       cpp/src/strip_index.cpp cpp/src/slot_gather.cpp cpp/src/sector_index.cpp
//       cpp/src/world.cpp cpp/src/parallel.cpp -lpthread -o build/wedge_lists
//   (this file compiles itself for AVX2; the library's files keep their own flags)
//   build/wedge_lists [-m 10000] [-L 50] [-r repeats] [-c cell_m] [-b bins]
#pragma GCC target("avx2")
#include "contextsteer/raycast.hpp"
#include "contextsteer/geometry.hpp"
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>
#include <time.h>
#include <immintrin.h>

#include "track_scene.hpp"
using namespace contextsteer;

struct Wedge {
  double x0, y0, s; int nx, ny, bins; double R;
  std::vector<uint32_t> off;            // (cell * bins + bin) -> first run
  std::vector<uint32_t> rs, rl;         // runs: start, length
  std::vector<float> ax, ay, bx, by;    // walls, index order, padded by 8
  struct Rec { uint32_t start, len; };   // len with bit 31: runs at rs/rl[start .. start + (len & ~bit))
  std::vector<Rec> rec;
  float inv_s, fx0, fy0;
  std::vector<float> kx0, ky0, kx1, ky1;  // boxes of aligned blocks of 8 walls, padded by 8 blocks
  size_t entries = 0;
};

static void build(Wedge& w, const std::vector<float>& walls, double s, int bins, double R) {
  const int m = (int)walls.size() / 4;
  double xmin = 1e300, ymin = 1e300, xmax = -1e300, ymax = -1e300;
  for (int i = 0; i < m; ++i) for (int e = 0; e < 2; ++e) {
    xmin = std::min<double>(xmin, walls[4*i+2*e]); xmax = std::max<double>(xmax, walls[4*i+2*e]);
    ymin = std::min<double>(ymin, walls[4*i+2*e+1]); ymax = std::max<double>(ymax, walls[4*i+2*e+1]); }
  w.s = s; w.x0 = xmin - s; w.y0 = ymin - s; w.nx = int((xmax - xmin) / s) + 3; w.ny = int((ymax - ymin) / s) + 3;
  w.bins = bins; w.R = R;
  const double pad = 1e-3, eps = 1e-4, D = 2 * track::kPi / bins;
  const size_t cells = size_t(w.nx) * w.ny;
  std::vector<std::vector<uint32_t>> lists(cells);
  w.off.assign(cells * bins + 1, 0);
  std::vector<uint32_t> rs, rl;
  std::vector<std::vector<std::pair<uint32_t,uint32_t>>> runs(cells * bins);
  for (int b = 0; b < bins; ++b) {
    for (auto& l : lists) l.clear();
    auto dang = [](double p) {  // angle of diamond parameter p in [0, 4]
      const int q = std::min(3, int(p)); const double f = p - q;
      const double x[4] = {1 - f, -f, -(1 - f), f}, y[4] = {f, 1 - f, -f, -(1 - f)};
      double a = std::atan2(y[q], x[q]); if (a < 0) a += 2 * track::kPi; if (p >= 3.5 && a < 1) a += 2 * track::kPi;
      return a; };
    double lo = dang(4.0 * b / bins) - eps, hi = dang(4.0 * (b + 1) / bins) + eps;
    if (hi < lo) hi += 2 * track::kPi;
    (void)D;
    const double Rp = R / std::cos(0.5 * (hi - lo)) + pad;
    const double ex[2] = {-Rp * std::cos(lo), -Rp * std::cos(hi)}, ey[2] = {-Rp * std::sin(lo), -Rp * std::sin(hi)};
    for (int i = 0; i < m; ++i) {
      double px[6], py[6];
      for (int e = 0; e < 2; ++e) {
        const double ax = walls[4*i+2*e], ay = walls[4*i+2*e+1];
        px[3*e] = ax; py[3*e] = ay;
        px[3*e+1] = ax + ex[0]; py[3*e+1] = ay + ey[0];
        px[3*e+2] = ax + ex[1]; py[3*e+2] = ay + ey[1];
      }
      double ylo = 1e300, yhi = -1e300;
      for (int k = 0; k < 6; ++k) { ylo = std::min(ylo, py[k]); yhi = std::max(yhi, py[k]); }
      int j0 = std::max(0, int(std::floor((ylo - pad - w.y0) / s))), j1 = std::min(w.ny - 1, int(std::floor((yhi + pad - w.y0) / s)));
      for (int j = j0; j <= j1; ++j) {
        const double sy0 = w.y0 + j * s - pad, sy1 = w.y0 + (j + 1) * s + pad;
        double xl = 1e300, xh = -1e300;
        for (int p = 0; p < 6; ++p) for (int q = p; q < 6; ++q) {
          // segment p..q clipped to y in [sy0, sy1]
          double ya = py[p], yb = py[q], xa = px[p], xb = px[q];
          double t0 = 0, t1 = 1;
          if (ya == yb) { if (ya < sy0 || ya > sy1) continue; }
          else {
            double ta = (sy0 - ya) / (yb - ya), tb = (sy1 - ya) / (yb - ya);
            if (ta > tb) std::swap(ta, tb);
            t0 = std::max(0.0, ta); t1 = std::min(1.0, tb);
            if (t0 > t1) continue;
          }
          const double xa_ = xa + t0 * (xb - xa), xb_ = xa + t1 * (xb - xa);
          xl = std::min({xl, xa_, xb_}); xh = std::max({xh, xa_, xb_});
        }
        if (xl > xh) continue;
        int c0 = std::max(0, int(std::floor((xl - pad - w.x0) / s))), c1 = std::min(w.nx - 1, int(std::floor((xh + pad - w.x0) / s)));
        for (int c = c0; c <= c1; ++c) lists[size_t(j) * w.nx + c].push_back(i);
      }
    }
    for (size_t c = 0; c < cells; ++c) {
      auto& l = lists[c];
      w.entries += l.size();
      auto& r = runs[c * bins + b];
      for (size_t k = 0; k < l.size();) {
        size_t e = k + 1;
        while (e < l.size() && l[e] == l[e-1] + 1) ++e;
        r.push_back({l[k], uint32_t(e - k)});
        k = e;
      }
    }
  }
  for (size_t c = 0; c < cells * bins; ++c) {
    w.off[c] = (uint32_t)w.rs.size();
    for (auto [a, l] : runs[c]) { w.rs.push_back(a); w.rl.push_back(l); }
  }
  w.off[cells * bins] = (uint32_t)w.rs.size();
  w.rec.resize(cells * bins);
  for (size_t c = 0; c < cells * bins; ++c) {
    const uint32_t a = w.off[c], e = w.off[c + 1];
    if (e - a == 1) w.rec[c] = {w.rs[a], w.rl[a]};
    else w.rec[c] = {a, (e - a) | 0x80000000u};
  }
  w.inv_s = float(1.0 / s); w.fx0 = float(w.x0); w.fy0 = float(w.y0);
  for (int k = 0; k * 8 < m; ++k) {
    float a = 1e30f, b = 1e30f, c = -1e30f, d = -1e30f;
    for (int i = 8 * k; i < std::min(m, 8 * k + 8); ++i) {
      a = std::min({a, walls[4*i], walls[4*i+2]}); b = std::min({b, walls[4*i+1], walls[4*i+3]});
      c = std::max({c, walls[4*i], walls[4*i+2]}); d = std::max({d, walls[4*i+1], walls[4*i+3]}); }
    w.kx0.push_back(a); w.ky0.push_back(b); w.kx1.push_back(c); w.ky1.push_back(d);
  }
  for (int k = 0; k < 8; ++k) { w.kx0.push_back(0); w.ky0.push_back(0); w.kx1.push_back(0); w.ky1.push_back(0); }
  for (int i = 0; i < m; ++i) { w.ax.push_back(walls[4*i]); w.ay.push_back(walls[4*i+1]); w.bx.push_back(walls[4*i+2]); w.by.push_back(walls[4*i+3]); }
  for (int k = 0; k < 8; ++k) { w.ax.push_back(0); w.ay.push_back(0); w.bx.push_back(0); w.by.push_back(0); }
}

static long g_tests = 0, g_exact = 0;

__attribute__((target("avx2"))) static inline void screen(const Wedge& w, uint32_t start, uint32_t len, float ox, float oy, double dx, double dy,
    __m256 vox, __m256 voy, __m256 vdx, __m256 vdy, double& best) {
  const __m256 tol = _mm256_set1_ps(0x1p-20f), absm = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  g_tests += len;
  for (uint32_t k = 0; k < len; k += 8) {
    const uint32_t s = start + k;
    const __m256 ax = _mm256_sub_ps(_mm256_loadu_ps(&w.ax[s]), vox), ay = _mm256_sub_ps(_mm256_loadu_ps(&w.ay[s]), voy);
    const __m256 bx = _mm256_sub_ps(_mm256_loadu_ps(&w.bx[s]), vox), by = _mm256_sub_ps(_mm256_loadu_ps(&w.by[s]), voy);
    const __m256 ta = _mm256_mul_ps(_mm256_add_ps(_mm256_and_ps(ax, absm), _mm256_and_ps(ay, absm)), tol);
    const __m256 tb = _mm256_mul_ps(_mm256_add_ps(_mm256_and_ps(bx, absm), _mm256_and_ps(by, absm)), tol);
    const __m256 sa = _mm256_sub_ps(_mm256_mul_ps(ax, vdy), _mm256_mul_ps(ay, vdx));
    const __m256 sb = _mm256_sub_ps(_mm256_mul_ps(bx, vdy), _mm256_mul_ps(by, vdx));
    // |sa| > ta and |sb| > tb with the same sign: both clearly on one side.
    const __m256 same = _mm256_xor_ps(sa, sb);  // sign bit set: opposite signs
    const __m256 clear = _mm256_and_ps(_mm256_cmp_ps(_mm256_and_ps(sa, absm), ta, _CMP_GT_OQ), _mm256_cmp_ps(_mm256_and_ps(sb, absm), tb, _CMP_GT_OQ));
    const __m256 live = _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(int(len - k)), lane));
    unsigned rej = (unsigned)_mm256_movemask_ps(_mm256_andnot_ps(same, clear));
    unsigned keep = (unsigned)_mm256_movemask_ps(live) & ~rej;
    while (keep) {
      const int q = __builtin_ctz(keep); keep &= keep - 1;
      const uint32_t i = s + q;
      ++g_exact;
      const double t = ray_segment(double(w.ax[i]) - ox, double(w.ay[i]) - oy, double(w.bx[i]) - ox, double(w.by[i]) - oy, dx, dy);
      if (t < best) best = t;
    }
  }
}


static long g_blocks = 0; static int g_mode = 0;
__attribute__((target("avx2"))) static inline void screen_blocks(const Wedge& w, uint32_t start, uint32_t len, float ox, float oy, double dx, double dy,
    __m256 vox, __m256 voy, __m256 vdx, __m256 vdy, double& best) {
  const __m256 tol = _mm256_set1_ps(0x1p-20f), absm = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const uint32_t b0 = start >> 3, b1 = (start + len - 1) >> 3;
  for (uint32_t kb = b0; kb <= b1; kb += 8) {
    const __m256 x0 = _mm256_sub_ps(_mm256_loadu_ps(&w.kx0[kb]), vox), y0 = _mm256_sub_ps(_mm256_loadu_ps(&w.ky0[kb]), voy);
    const __m256 x1 = _mm256_sub_ps(_mm256_loadu_ps(&w.kx1[kb]), vox), y1 = _mm256_sub_ps(_mm256_loadu_ps(&w.ky1[kb]), voy);
    auto side = [&](__m256 x, __m256 y, __m256& pos, __m256& neg) {
      const __m256 t = _mm256_mul_ps(_mm256_add_ps(_mm256_and_ps(x, absm), _mm256_and_ps(y, absm)), tol);
      const __m256 sd = _mm256_sub_ps(_mm256_mul_ps(x, vdy), _mm256_mul_ps(y, vdx));
      pos = _mm256_and_ps(pos, _mm256_cmp_ps(sd, t, _CMP_GT_OQ));
      neg = _mm256_and_ps(neg, _mm256_cmp_ps(sd, _mm256_sub_ps(_mm256_setzero_ps(), t), _CMP_LT_OQ));
    };
    __m256 pos = _mm256_castsi256_ps(_mm256_set1_epi32(-1)), neg = pos;
    side(x0, y0, pos, neg); side(x1, y0, pos, neg); side(x0, y1, pos, neg); side(x1, y1, pos, neg);
    const __m256 live = _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(int(b1 - kb + 1)), lane));
    unsigned keep = (unsigned)_mm256_movemask_ps(live) & ~(unsigned)_mm256_movemask_ps(_mm256_or_ps(pos, neg));
    while (keep) {
      const int q = __builtin_ctz(keep); keep &= keep - 1;
      ++g_blocks;
      const uint32_t ws = std::max(start, (kb + q) * 8), we = std::min(start + len, (kb + q) * 8 + 8);
      screen(w, ws, we - ws, ox, oy, dx, dy, vox, voy, vdx, vdy, best);
    }
  }
}

__attribute__((target("avx2"))) static double cast2(const Wedge& w, float ox, float oy, float dxf, float dyf, double L) {
  double best = std::nextafter(L, 1e300);
  const int cx = int((ox - w.fx0) * w.inv_s), cy = int((oy - w.fy0) * w.inv_s);
  const float adx = std::fabs(dxf), ady = std::fabs(dyf);
  float p = ady / (adx + ady);
  if (dxf < 0) p = 2.0f - p;
  if (dyf < 0) p = 4.0f - p;
  int b = int(p * (w.bins * 0.25f)); if (b >= w.bins) b = w.bins - 1;
  const Wedge::Rec rc = w.rec[(size_t(cy) * w.nx + cx) * w.bins + b];
  if (g_mode == 1) return double(rc.start + rc.len) * 1e-30 + L * 2;
  const __m256 vox = _mm256_set1_ps(ox), voy = _mm256_set1_ps(oy), vdx = _mm256_set1_ps(dxf), vdy = _mm256_set1_ps(dyf);
  if (!(rc.len & 0x80000000u)) screen_blocks(w, rc.start, rc.len, ox, oy, dxf, dyf, vox, voy, vdx, vdy, best);
  else for (uint32_t r = rc.start; r < rc.start + (rc.len & 0x7fffffffu); ++r) screen_blocks(w, w.rs[r], w.rl[r], ox, oy, dxf, dyf, vox, voy, vdx, vdy, best);
  return best;
}

int main(int argc, char** argv) {
  int m = 10000; double L = 50; int reps = 5; double cell = 2.0; int bins = 128;
  if (getenv("MODE")) g_mode = atoi(getenv("MODE"));
  for (int i = 1; i < argc; ++i) { std::string a = argv[i];
    if (a == "-m") m = atoi(argv[++i]); else if (a == "-L") L = atof(argv[++i]); else if (a == "-r") reps = atoi(argv[++i]);
    else if (a == "-c") cell = atof(argv[++i]); else if (a == "-b") bins = atoi(argv[++i]); }
  const std::vector<float> walls = track::walls(m);
  const int n = 10000, d = 16;
  const std::vector<float> sd = track::slots(d);
  std::vector<float> pos(2 * n), heads(n);
  for (int i = 0; i < n; ++i) { track::origin(i, n, pos[2 * i], pos[2 * i + 1]); heads[i] = track::heading(i); }
  World wd; wd.add_segments(walls, kAllLayers); wd.build_index();
  std::vector<float> ref(size_t(n) * d), out(size_t(n) * d);
  SlotScratch sc; sc.reserve(d);
  float Lf = float(L);
  std::vector<double> tw, tb;
  for (int r = 0; r < reps; ++r) { double t0 = track::cpu_now(); slot_raycast_rows(wd, pos, sd, {&Lf, 1}, heads, 0.0f, kAllLayers, ref, 0, n, sc, SlotMode::kAuto); tw.push_back(track::cpu_now() - t0); }
  double tb0 = track::cpu_now();
  Wedge w; build(w, walls, cell, bins, L);
  double tbuild = track::cpu_now() - tb0;
  for (int r = 0; r < reps; ++r) {
    if (r == 1) g_tests = g_exact = 0;
    double t0 = track::cpu_now();
    for (int i = 0; i < n; ++i) {
      float c = float(std::cos(double(heads[i]))), sn = float(std::sin(double(heads[i])));
      for (int j = 0; j < d; ++j) {
        float ux = sd[2*j], uy = sd[2*j+1]; float dx = c * ux - sn * uy, dy = sn * ux + c * uy;
        track::unit(dx, dy, dx, dy);
        const double t = cast2(w, pos[2*i], pos[2*i+1], dx, dy, double(Lf));
        out[size_t(i)*d + j] = t <= double(Lf) ? float(t) : INFINITY;
      }
    }
    tb.push_back(track::cpu_now() - t0);
  }
  std::sort(tw.begin(), tw.end()); std::sort(tb.begin(), tb.end());
  long diff = 0, hits = 0;
  for (size_t r = 0; r < out.size(); ++r) { if (std::memcmp(&out[r], &ref[r], 4)) { if (diff < 5) fprintf(stderr, "ray %zu: %.9g vs %.9g\n", r, out[r], ref[r]); ++diff; } hits += std::isfinite(ref[r]); }
  double Rr = double(n) * d;
  printf("m=%d L=%g cell=%g bins=%d build %.0f ms, %zu entries, %zu runs (%.1f MB) | walk %.2f Mrays/s, wedge %.2f Mrays/s (%.2fx) | diff %ld hits %ld | per ray: tests %.1f exact %.2f\n",
    m, L, cell, bins, tbuild*1e3, w.entries, w.rs.size(), (w.rs.size() * 8.0 + w.off.size() * 4.0) / 1e6, Rr / tw[0] / 1e6, Rr / tb[0] / 1e6, tw[0] / tb[0], diff, hits,
    double(g_tests) / Rr / (reps - 1), double(g_exact) / Rr / (reps - 1));
}
