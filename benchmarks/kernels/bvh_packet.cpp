// SPDX-License-Identifier: MIT
// Rotated slot rays on a bounding volume hierarchy, measured against the library's walk
// (docs/performance.md, "Rays": the ninth design, not kept).
//
// On the racetrack scene "track-M-L" (benchmarks/scenes.py), the 16 slots of each of the
// 10,000 agents rotated by heading_i = (2.399963 i mod 2 pi) - pi (ray_kernels.cpp's
// `slothead`), one thread. A binary BVH over the walls (median split on the longer axis
// of the centroids, leaves of -l walls, float boxes padded by 1 mm), cast two ways:
//   packet  (default) the 16 rays of an agent together: they share the origin, so each
//           node tests both child boxes against all 16 rays in SSE2 (a mask of the rays
//           that enter the box before their best hit), visits the nearer child first,
//           and a leaf screens each wall against the masked rays (the walk's float32
//           side screen) before the exact double test (geometry.hpp's ray_segment);
//   -s      each ray alone down the same tree, nearer child first, popped nodes culled
//           by their entry distance.
// The distances are compared with slot_raycast_rows (the walk) bit for bit. Build and run:
//   g++ -std=c++20 -O3 -DNDEBUG -fno-math-errno -fno-trapping-math -Icpp/include -Icpp/src
//       benchmarks/kernels/bvh_packet.cpp cpp/src/raycast.cpp cpp/src/strip_index.cpp
//       cpp/src/slot_gather.cpp cpp/src/sector_index.cpp cpp/src/world.cpp
//       cpp/src/parallel.cpp -lpthread
//       -o build/bvh_packet
//   build/bvh_packet [-m 10000] [-L 50] [-r repeats] [-l leaf_size] [-s]
#include "contextsteer/raycast.hpp"
#include "contextsteer/geometry.hpp"
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>
#include <time.h>
#include <emmintrin.h>

#include "track_scene.hpp"
using namespace contextsteer;

struct Node {  // binary node: the boxes of both children
  float x0[2], y0[2], x1[2], y1[2];
  int32_t child[2];  // >= 0 inner node index; < 0: leaf, ~(start) with count in cnt
  int32_t cnt[2];
};
struct Bvh {
  std::vector<Node> nodes;
  std::vector<float> ax, ay, bx, by;  // segments in leaf order
  int leaf_size = 4;
};
struct Item { float x0, y0, x1, y1, cx, cy; int idx; };
static const float kPad = 1e-3f;
static void box_of(const std::vector<Item>& it, int b, int e, float* bb) {
  bb[0] = bb[1] = 1e30f; bb[2] = bb[3] = -1e30f;
  for (int i = b; i < e; ++i) { bb[0] = std::min(bb[0], it[i].x0); bb[1] = std::min(bb[1], it[i].y0); bb[2] = std::max(bb[2], it[i].x1); bb[3] = std::max(bb[3], it[i].y1); }
  bb[0] -= kPad; bb[1] -= kPad; bb[2] += kPad; bb[3] += kPad;
}
// returns child code for range [b, e)
static int32_t build(Bvh& h, std::vector<Item>& it, int b, int e, const std::vector<float>& w, int& cnt_out) {
  if (e - b <= h.leaf_size) {
    int start = (int)h.ax.size();
    for (int i = b; i < e; ++i) { int s = it[i].idx; h.ax.push_back(w[4*s]); h.ay.push_back(w[4*s+1]); h.bx.push_back(w[4*s+2]); h.by.push_back(w[4*s+3]); }
    cnt_out = e - b;
    return ~start;
  }
  float cx0 = 1e30f, cy0 = 1e30f, cx1 = -1e30f, cy1 = -1e30f;
  for (int i = b; i < e; ++i) { cx0 = std::min(cx0, it[i].cx); cx1 = std::max(cx1, it[i].cx); cy0 = std::min(cy0, it[i].cy); cy1 = std::max(cy1, it[i].cy); }
  int m = (b + e) / 2;
  if (cx1 - cx0 >= cy1 - cy0) std::nth_element(it.begin() + b, it.begin() + m, it.begin() + e, [](const Item& p, const Item& q) { return p.cx < q.cx; });
  else std::nth_element(it.begin() + b, it.begin() + m, it.begin() + e, [](const Item& p, const Item& q) { return p.cy < q.cy; });
  int id = (int)h.nodes.size();
  h.nodes.push_back({});
  float bb[4];
  int c0, c1;
  box_of(it, b, m, bb);
  Node nd{};
  nd.x0[0] = bb[0]; nd.y0[0] = bb[1]; nd.x1[0] = bb[2]; nd.y1[0] = bb[3];
  box_of(it, m, e, bb);
  nd.x0[1] = bb[0]; nd.y0[1] = bb[1]; nd.x1[1] = bb[2]; nd.y1[1] = bb[3];
  int32_t a = build(h, it, b, m, w, c0);
  int32_t bq = build(h, it, m, e, w, c1);
  nd.child[0] = a; nd.child[1] = bq; nd.cnt[0] = a < 0 ? c0 : 0; nd.cnt[1] = bq < 0 ? c1 : 0;
  h.nodes[id] = nd;
  cnt_out = 0;
  return id;
}

constexpr int K = 16;
struct Packet {
  alignas(32) float dxf[K], dyf[K], idx[K], idy[K];
  alignas(32) float bestf[K];
  double dx[K], dy[K], best[K];
};
static long g_nodes = 0, g_leaves = 0, g_exact = 0;

// mask of rays hitting box (relative coords) before their best
static inline unsigned box_mask(const Packet& p, float x0, float y0, float x1, float y1) {
  const __m128 X0 = _mm_set1_ps(x0), X1 = _mm_set1_ps(x1), Y0 = _mm_set1_ps(y0), Y1 = _mm_set1_ps(y1);
  const __m128 zero = _mm_setzero_ps();
  unsigned m = 0;
  for (int q = 0; q < K / 4; ++q) {
    const __m128 ix = _mm_load_ps(p.idx + 4 * q), iy = _mm_load_ps(p.idy + 4 * q);
    const __m128 tx0 = _mm_mul_ps(X0, ix), tx1 = _mm_mul_ps(X1, ix), ty0 = _mm_mul_ps(Y0, iy), ty1 = _mm_mul_ps(Y1, iy);
    const __m128 tn = _mm_max_ps(_mm_min_ps(tx0, tx1), _mm_min_ps(ty0, ty1));
    const __m128 tf = _mm_min_ps(_mm_max_ps(tx0, tx1), _mm_max_ps(ty0, ty1));
    const __m128 h = _mm_and_ps(_mm_and_ps(_mm_cmple_ps(tn, tf), _mm_cmpge_ps(tf, zero)), _mm_cmple_ps(tn, _mm_load_ps(p.bestf + 4 * q)));
    m |= unsigned(_mm_movemask_ps(h)) << (4 * q);
  }
  return m;
}

static void leaf(const Bvh& h, Packet& p, int start, int cnt, float ox, float oy, unsigned mask) {
  ++g_leaves;
  for (int s = start; s < start + cnt; ++s) {
    const float ax = h.ax[s] - ox, ay = h.ay[s] - oy, bx = h.bx[s] - ox, by = h.by[s] - oy;
    const float ta = (std::fabs(ax) + std::fabs(ay)) * 0x1p-20f, tb = (std::fabs(bx) + std::fabs(by)) * 0x1p-20f;
    unsigned keep = 0;
    const __m128 AX = _mm_set1_ps(ax), AY = _mm_set1_ps(ay), BX = _mm_set1_ps(bx), BY = _mm_set1_ps(by);
    const __m128 TA = _mm_set1_ps(ta), TB = _mm_set1_ps(tb), NTA = _mm_set1_ps(-ta), NTB = _mm_set1_ps(-tb);
    for (int q = 0; q < K / 4; ++q) {
      const __m128 dx = _mm_load_ps(p.dxf + 4 * q), dy = _mm_load_ps(p.dyf + 4 * q);
      const __m128 sa = _mm_sub_ps(_mm_mul_ps(AX, dy), _mm_mul_ps(AY, dx));
      const __m128 sb = _mm_sub_ps(_mm_mul_ps(BX, dy), _mm_mul_ps(BY, dx));
      const __m128 same = _mm_or_ps(_mm_and_ps(_mm_cmpgt_ps(sa, TA), _mm_cmpgt_ps(sb, TB)),
                                    _mm_and_ps(_mm_cmplt_ps(sa, NTA), _mm_cmplt_ps(sb, NTB)));
      keep |= (~unsigned(_mm_movemask_ps(same)) & 0xFu) << (4 * q);
    }
    keep &= mask;
    while (keep) {
      int j = __builtin_ctz(keep); keep &= keep - 1;
      ++g_exact;
      double t = ray_segment(double(h.ax[s]) - ox, double(h.ay[s]) - oy, double(h.bx[s]) - ox, double(h.by[s]) - oy, p.dx[j], p.dy[j]);
      if (t < p.best[j]) { p.best[j] = t; p.bestf[j] = float(t) * (1.0f + 1e-5f) + 1e-5f; }
    }
  }
}

static void cast_agent(const Bvh& h, Packet& p, float ox, float oy, double L) {
  const double above = std::nextafter(L, 1e300);
  for (int j = 0; j < K; ++j) { p.best[j] = above; p.bestf[j] = float(L) * (1.0f + 1e-5f) + 1e-5f; }
  struct E { int32_t node; unsigned mask; };
  E stack[64]; int sp = 0;
  int32_t node = 0; unsigned mask = (1u << K) - 1;
  for (;;) {
    ++g_nodes;
    const Node& nd = h.nodes[node];
    unsigned m[2]; float d2[2];
    for (int c = 0; c < 2; ++c) {
      float x0 = nd.x0[c] - ox, y0 = nd.y0[c] - oy, x1 = nd.x1[c] - ox, y1 = nd.y1[c] - oy;
      m[c] = box_mask(p, x0, y0, x1, y1) & mask;
      float ex = std::max(std::max(x0, -x1), 0.0f), ey = std::max(std::max(y0, -y1), 0.0f);
      d2[c] = ex * ex + ey * ey;
    }
    int first = d2[1] < d2[0] ? 1 : 0;
    int32_t next = -1; unsigned nmask = 0; bool have = false;
    for (int o = 0; o < 2; ++o) {
      int c = o == 0 ? first : 1 - first;
      if (!m[c]) continue;
      if (nd.child[c] < 0) { leaf(h, p, ~nd.child[c], nd.cnt[c], ox, oy, m[c]); continue; }
      if (!have) { next = nd.child[c]; nmask = m[c]; have = true; }
      else stack[sp++] = {nd.child[c], m[c]};
    }
    if (have) { node = next; mask = nmask; continue; }
    // pop, re-culling rays whose best improved
    for (;;) {
      if (sp == 0) return;
      E e = stack[--sp];
      node = e.node; mask = e.mask;
      break;
    }
  }
}


static void cast_single(const Bvh& h, Packet& p, int j, float ox, float oy, double L) {
  const double above = std::nextafter(L, 1e300);
  double best = above;
  float bestf = float(L) * (1.0f + 1e-5f) + 1e-5f;
  const float ix = p.idx[j], iy = p.idy[j];
  const float dxf = p.dxf[j], dyf = p.dyf[j];
  const double dx = p.dx[j], dy = p.dy[j];
  struct E { int32_t node; float tn; };
  E stack[64]; int sp = 0;
  int32_t node = 0;
  for (;;) {
    ++g_nodes;
    const Node& nd = h.nodes[node];
    float tn[2]; bool hit[2];
    for (int c = 0; c < 2; ++c) {
      float tx0 = (nd.x0[c] - ox) * ix, tx1 = (nd.x1[c] - ox) * ix, ty0 = (nd.y0[c] - oy) * iy, ty1 = (nd.y1[c] - oy) * iy;
      float a = std::max(std::min(tx0, tx1), std::min(ty0, ty1));
      float b = std::min(std::max(tx0, tx1), std::max(ty0, ty1));
      tn[c] = a; hit[c] = a <= b && b >= 0.0f && a <= bestf;
    }
    int first = tn[1] < tn[0] ? 1 : 0;
    int32_t next = -1;
    for (int o = 0; o < 2; ++o) {
      int c = o == 0 ? first : 1 - first;
      if (!hit[c]) continue;
      if (nd.child[c] < 0) {
        ++g_leaves;
        int start = ~nd.child[c];
        for (int s = start; s < start + nd.cnt[c]; ++s) {
          const float ax = h.ax[s] - ox, ay = h.ay[s] - oy, bx = h.bx[s] - ox, by = h.by[s] - oy;
          const float ta = (std::fabs(ax) + std::fabs(ay)) * 0x1p-20f, tb = (std::fabs(bx) + std::fabs(by)) * 0x1p-20f;
          float sa = ax * dyf - ay * dxf, sb = bx * dyf - by * dxf;
          if ((sa > ta && sb > tb) || (sa < -ta && sb < -tb)) continue;
          ++g_exact;
          double t = ray_segment(double(h.ax[s]) - ox, double(h.ay[s]) - oy, double(h.bx[s]) - ox, double(h.by[s]) - oy, dx, dy);
          if (t < best) { best = t; bestf = float(t) * (1.0f + 1e-5f) + 1e-5f; }
        }
        continue;
      }
      if (next < 0) next = nd.child[c];
      else stack[sp++] = {nd.child[c], tn[c]};
    }
    if (next >= 0) { node = next; continue; }
    for (;;) {
      if (sp == 0) { p.best[j] = best; return; }
      E e = stack[--sp];
      if (e.tn > bestf) continue;
      node = e.node; break;
    }
  }
}

int main(int argc, char** argv) {
  int m = 10000; double L = 50; int reps = 5; int leafsz = 4; int single_ray = 0;
  for (int i = 1; i < argc; ++i) { std::string a = argv[i];
    if (a == "-m") m = atoi(argv[++i]); else if (a == "-L") L = atof(argv[++i]); else if (a == "-r") reps = atoi(argv[++i]); else if (a == "-l") leafsz = atoi(argv[++i]); else if (a == "-s") single_ray = 1; }
  const std::vector<float> walls = track::walls(m);
  const int n = 10000, d = 16;
  const std::vector<float> sd = track::slots(d);
  std::vector<float> pos(2 * n), heads(n);
  for (int i = 0; i < n; ++i) {
    track::origin(i, n, pos[2 * i], pos[2 * i + 1]);
    heads[i] = track::heading(i);
  }
  World w; w.add_segments(walls, kAllLayers); w.build_index();
  std::vector<float> ref(size_t(n) * d), out(size_t(n) * d);
  SlotScratch sc; sc.reserve(d);
  float Lf = float(L);
  std::vector<double> tw, tb;
  for (int r = 0; r < reps; ++r) { double t0 = track::cpu_now(); slot_raycast_rows(w, pos, sd, {&Lf, 1}, heads, 0.0f, kAllLayers, ref, 0, n, sc, SlotMode::kAuto); tw.push_back(track::cpu_now() - t0); }
  // BVH
  double tb0 = track::cpu_now();
  Bvh h; h.leaf_size = leafsz;
  std::vector<Item> it;
  for (int s = 0; s < (int)walls.size() / 4; ++s) { float ax = walls[4*s], ay = walls[4*s+1], bx = walls[4*s+2], by = walls[4*s+3];
    it.push_back({std::min(ax, bx), std::min(ay, by), std::max(ax, bx), std::max(ay, by), 0.5f*(ax+bx), 0.5f*(ay+by), s}); }
  int dummy; build(h, it, 0, (int)it.size(), walls, dummy);
  double tbuild = track::cpu_now() - tb0;
  Packet p;
  for (int r = 0; r < reps; ++r) {
    if (r == 1) g_nodes = g_leaves = g_exact = 0;
    double t0 = track::cpu_now();
    for (int i = 0; i < n; ++i) {
      float c = float(std::cos(double(heads[i]))), sn = float(std::sin(double(heads[i])));
      for (int j = 0; j < K; ++j) {
        float ux = sd[2*j], uy = sd[2*j+1]; float dx = c * ux - sn * uy, dy = sn * ux + c * uy;
        track::unit(dx, dy, dx, dy);
        p.dx[j] = dx; p.dy[j] = dy; p.dxf[j] = dx; p.dyf[j] = dy;
        p.idx[j] = dx != 0.0f ? 1.0f / dx : std::copysign(1e30f, dx);
        p.idy[j] = dy != 0.0f ? 1.0f / dy : std::copysign(1e30f, dy);
      }
      if (single_ray) for (int j = 0; j < K; ++j) cast_single(h, p, j, pos[2*i], pos[2*i+1], double(Lf));
      else cast_agent(h, p, pos[2*i], pos[2*i+1], double(Lf));
      for (int j = 0; j < K; ++j) out[size_t(i)*K + j] = p.best[j] <= double(Lf) ? float(p.best[j]) : INFINITY;
    }
    tb.push_back(track::cpu_now() - t0);
  }
  std::sort(tw.begin(), tw.end()); std::sort(tb.begin(), tb.end());
  long diff = 0, hits = 0;
  for (size_t r = 0; r < out.size(); ++r) { if (std::memcmp(&out[r], &ref[r], 4)) { if (diff < 5) fprintf(stderr, "ray %zu: %g vs %g\n", r, out[r], ref[r]); ++diff; } hits += std::isfinite(ref[r]); }
  double R = double(n) * d;
  printf("m=%d L=%g leaf=%d nodes=%zu build %.1f ms | walk %.2f Mrays/s, bvh %.2f Mrays/s (%.2fx) | diff %ld hits %ld | per agent: nodes %.1f leaves %.1f exact %.1f\n",
    m, L, leafsz, h.nodes.size(), tbuild*1e3, R / tw[0] / 1e6, R / tb[0] / 1e6, tw[0] / tb[0], diff, hits,
    double(g_nodes) / n / (reps - 1), double(g_leaves) / n / (reps - 1), double(g_exact) / n / (reps - 1));
}
