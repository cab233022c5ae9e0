// SPDX-License-Identifier: MIT
// Python-side owners of navigation objects (shared with the behaviour bindings).
#pragma once

#include <memory>
#include <vector>

#include "contextsteer/nav_field.hpp"
#include "contextsteer/path.hpp"
#include "contextsteer/world.hpp"

namespace contextsteer::bindings {

/// What `contextsteer._core.NavField` wraps: the fields, how to rebuild them, and the
/// world snapshot they were built from (rebuilt in place, so behaviours holding a
/// pointer to `field` see the new fields).
struct PyNavField {
  NavField field;
  std::vector<NavGoals> goals;
  float cell = 1.0f, radius = 0.0f, margin = 0.0f;
  std::uint32_t layers = kAllLayers;
  double build_seconds = 0.0;
  std::shared_ptr<const World> world;
};

/// What `contextsteer._core.PathSet` wraps: paths kept alive and their pointers.
struct PathSet {
  std::vector<std::shared_ptr<Path>> keep;
  std::vector<const Path*> ptrs;
};

}  // namespace contextsteer::bindings
