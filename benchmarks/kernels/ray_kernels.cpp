// SPDX-License-Identifier: MIT
// Single-thread driver of the raycast row kernels on the racetrack scene "track-M-L"
// (benchmarks/scenes.py), for callgrind.
//
// Calls raycast_rows / slot_raycast_rows directly (no Python, no thread pool), times the
// best CPU time of R repeats, prints the hit checksum, and optionally dumps the distances
// (and for -k ray the normals and obstacles) to compare builds bit for bit. Build and run:
//   g++ -std=c++20 -O3 -DNDEBUG -fno-math-errno -DTHICK -Icpp/include -Icpp/src benchmarks/kernels/ray_kernels.cpp
//       cpp/src/raycast.cpp cpp/src/strip_index.cpp cpp/src/slot_gather.cpp
//       cpp/src/sector_index.cpp cpp/src/world.cpp cpp/src/parallel.cpp -lpthread
//       -o build/ray_kernels
//   build/ray_kernels -k slot|slothead|ray [-m 10000] [-L 50] [-R radius] [-c cell] [-r repeats] [-o dump]
//       [-M auto|gather|per_ray|strips|sectors]
//   valgrind --tool=callgrind --branch-sim=yes --toggle-collect='*timed_call*' build/ray_kernels -k slot -r 1
// -DTHICK builds the inflated grid of radius R before timing (omit it for builds that
// predate World::thick_grid). slothead rotates the slots by heading_i = (2.399963 i mod 2 pi) - pi.
#include "contextsteer/raycast.hpp"
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>
#include <algorithm>
using namespace contextsteer;
#include "track_scene.hpp"
#include <time.h>
template <class F> __attribute__((noinline)) void timed_call(F&& f) { f(); }
int main(int argc, char** argv) {
  int m = 10000; double L = 50; std::string mode = "slot"; int reps = 5; float radius = 0; float cellsz = 0; const char* dump = nullptr; SlotMode method = SlotMode::kAuto;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-m") m = atoi(argv[++i]); else if (a == "-L") L = atof(argv[++i]);
    else if (a == "-k") mode = argv[++i]; else if (a == "-r") reps = atoi(argv[++i]);
    else if (a == "-R") radius = atof(argv[++i]); else if (a == "-c") cellsz = atof(argv[++i]); else if (a == "-o") dump = argv[++i];
    else if (a == "-M") { std::string v = argv[++i]; method = v == "gather" ? SlotMode::kGather : v == "per_ray" ? SlotMode::kPerRay : v == "strips" ? SlotMode::kStrips : v == "sectors" ? SlotMode::kSectors : SlotMode::kAuto; }
  }
  const std::vector<float> walls = track::walls(m);
  const int n = 10000, d = 16;
  const std::vector<float> sd = track::slots(d);
  std::vector<float> pos, orig, dirs, heads;
  for (int i = 0; i < n; ++i) {
    float ox, oy;
    track::origin(i, n, ox, oy);
    pos.push_back(ox); pos.push_back(oy);
    heads.push_back(track::heading(i));
    for (int j = 0; j < d; ++j) { orig.push_back(ox); orig.push_back(oy); dirs.push_back(sd[2 * j]); dirs.push_back(sd[2 * j + 1]); }
  }
  World w; w.add_segments(walls, kAllLayers); if (cellsz > 0) w.set_cell_size(cellsz); w.build_index(); fprintf(stderr, "cell %g\n", w.grid().cell);
#ifdef THICK
  if (radius > 0) w.thick_grid(radius);
#endif
  const std::size_t R = size_t(n) * d;
  std::vector<float> out(R), nrm(2 * R); std::vector<bool> dummy; std::vector<char> hit(R); std::vector<int> ob(R);
  float Lf = float(L);
  SlotScratch sc; sc.reserve(d);
  std::vector<double> times;
  // Warm-up outside the timed (and callgrind-collected) calls: builds the slot set's
  // strip index, so `--toggle-collect='*timed_call*'` counts the rays alone.
  if (mode == "slot") slot_raycast_rows(w, pos, sd, {&Lf, 1}, {}, radius, kAllLayers, out, 0, 1, sc, method);
  for (int rep = 0; rep < reps; ++rep) {
    double t0 = track::cpu_now();
    timed_call([&] {
      if (mode == "slot") slot_raycast_rows(w, pos, sd, {&Lf, 1}, {}, radius, kAllLayers, out, 0, n, sc, method);
      else if (mode == "slothead") slot_raycast_rows(w, pos, sd, {&Lf, 1}, heads, radius, kAllLayers, out, 0, n, sc, method);
      else if (mode == "ray") {
        RayHitsOut o{out.data(), reinterpret_cast<bool*>(hit.data()), nrm.data(), ob.data()};
        raycast_rows(w, orig, dirs, {&Lf, 1}, radius, kAllLayers, o, 0, R);
      }
    });
    times.push_back(track::cpu_now() - t0);
  }
  std::sort(times.begin(), times.end());
  long hits = 0; double fs = 0;
  for (float v : out) if (std::isfinite(v) && v <= Lf) { ++hits; fs += double(v) / L; }
  printf("%s m=%d L=%g R=%g: %.3f Mrays/s (best cpu of %d)  hits %ld  sum %.3f\n", mode.c_str(), m, L, radius,
         R / times[0] / 1e6, reps, hits, fs);
  if (dump) { FILE* f = fopen(dump, "wb"); fwrite(out.data(), 4, R, f); if (mode == "ray") { fwrite(nrm.data(), 4, 2 * R, f); fwrite(ob.data(), 4, R, f);} fclose(f); }
}
