// SPDX-License-Identifier: MIT
// ContextMaps: the interest and danger maps of N agents with K slots, owned by C++.
#pragma once

#include <cstddef>
#include <vector>

namespace contextsteer {

/// Interest and danger, each N*K floats (row i = agent i, slot j at i*K + j), zeroed at
/// construction. Storage never reallocates, so views handed out stay valid.
class ContextMaps {
 public:
  /// Precondition: k >= 3.
  ContextMaps(std::size_t n, std::size_t k) : n_(n), k_(k), interest_(n * k), danger_(n * k) {}

  /// Number of agents N.
  std::size_t agents() const { return n_; }
  /// Number of slots K.
  std::size_t slots() const { return k_; }
  /// N*K interest values, row-major; stable for the object's lifetime.
  float* interest() { return interest_.data(); }
  /// N*K danger values, row-major; stable for the object's lifetime.
  float* danger() { return danger_.data(); }
  /// Sets both maps to zero.
  void clear();

 private:
  std::size_t n_, k_;
  std::vector<float> interest_, danger_;
};

}  // namespace contextsteer
