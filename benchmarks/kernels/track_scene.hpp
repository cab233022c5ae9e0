// SPDX-License-Identifier: MIT
// The racetrack scene "track-M-L" of SCENES.md (benchmarks/scenes.py) for the measurement
// kernels of this folder and the C++ peers (../peers/raycast_peers.cpp): the walls, the ray
// origins, the seeded headings and the slot ring, each computed in double as scenes.py
// does, then stored as float32; and the kernels' two helpers, a thread CPU clock and the
// library's normalisation of a rotated slot direction.
#pragma once

#include <time.h>

#include <cmath>
#include <utility>
#include <vector>

namespace track {

// This thread's CPU time, seconds.
inline double cpu_now() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

// A rotated slot direction normalised as slot_raycast does (raycast.cpp's unit: the float32
// quotients of a double norm; not inlined, as there, so the quotients are rounded).
__attribute__((noinline)) inline void unit(float x, float y, float& ux, float& uy) {
  const double n = std::sqrt(static_cast<double>(x) * x + static_cast<double>(y) * y);
  ux = static_cast<float>(x / n);
  uy = static_cast<float>(y / n);
}

constexpr double kPi = 3.14159265358979323846;

// Walls of the two closed ellipses (outer a = 100, b = 60; inner a = 80, b = 40), m / 2
// segments each, as x0, y0, x1, y1 rows.
inline std::vector<float> walls(int m) {
  std::vector<float> w;
  for (const auto [a, b] : {std::pair{100.0, 60.0}, std::pair{80.0, 40.0}}) {
    const int count = m / 2;
    std::vector<double> px(count), py(count);
    for (int k = 0; k < count; ++k) {
      const double t = 2.0 * kPi * k / count;
      px[k] = a * std::cos(t);
      py[k] = b * std::sin(t);
    }
    for (int k = 0; k < count; ++k) {
      const int j = (k + 1) % count;
      w.insert(w.end(), {float(px[k]), float(py[k]), float(px[j]), float(py[j])});
    }
  }
  return w;
}

// Origin i of n, strictly inside the track.
inline void origin(int i, int n, float& ox, float& oy) {
  const double th = 2 * kPi * (i + 0.5) / n, x = (i + 1) * 0.6180339887498949;
  const double s = 0.1 + 0.8 * (x - std::floor(x));
  ox = float((80 + 20 * s) * std::cos(th));
  oy = float((40 + 20 * s) * std::sin(th));
}

// The kernels' seeded heading of agent i: (2.399963 i mod 2 pi) - pi.
inline float heading(int i) { return float(std::fmod(i * 2.399963, 2 * kPi) - kPi); }

// The regular ring of d slot directions, as x, y pairs.
inline std::vector<float> slots(int d) {
  std::vector<float> sd;
  for (int j = 0; j < d; ++j) {
    sd.push_back(float(std::cos(2 * kPi * j / d)));
    sd.push_back(float(std::sin(2 * kPi * j / d)));
  }
  return sd;
}

}  // namespace track
