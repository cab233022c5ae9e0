// SPDX-License-Identifier: MIT
// Python-side owners of navigation objects (shared with the behaviour bindings).
#pragma once

#include <memory>

#include <pybind11/pybind11.h>
#include <vector>

#include "contextsteer/nav_field.hpp"
#include "contextsteer/path.hpp"
#include "contextsteer/world.hpp"

namespace contextsteer::bindings {

/// What `contextsteer._core.NavField` wraps: the fields, how to rebuild them, and the
/// world snapshot they were built from. Copy-on-write, as a world is: a rebuild builds a
/// new NavField and replaces `field` (with the GIL held), never editing the one a reader
/// (a query, a simulation step in another thread) may hold.
struct PyNavField {
  std::shared_ptr<const NavField> field;
  std::vector<NavGoals> goals;
  float cell = 1.0f, radius = 0.0f, margin = 0.0f;
  std::uint32_t layers = kAllLayers;
  double build_seconds = 0.0;
  std::shared_ptr<const World> world;
  /// Counts set_goals calls: a build for older goals (a world-edit rebuild that ran while
  /// set_goals built the new ones) is dropped instead of replacing the newer field.
  std::uint64_t goals_version = 0;
  /// The goal sets `goals` was parsed from, as Python gave them (a list of dicts): swapped
  /// with the field, so every NavField sharing this one reads the goals it is built for.
  pybind11::object goal_sets;
  /// The goals of the newest set_goals call (goals_version), parsed and as given, set when
  /// the call begins: a rebuild for a world edit builds for these, so one that starts
  /// while set_goals builds and ends after it cannot put the older goals back.
  std::vector<NavGoals> wanted_goals;
  pybind11::object wanted_sets;
};

/// Rebuild `self`'s fields over the current snapshot of `world` (a WorldHandle) unless
/// they were built from it; the GIL is held on entry (released while building).
void sync_nav_field(PyNavField& self, const pybind11::object& world);

/// What `contextsteer._core.PathSet` wraps: paths kept alive and their pointers.
struct PathSet {
  std::vector<std::shared_ptr<Path>> keep;
  std::vector<const Path*> ptrs;
};

}  // namespace contextsteer::bindings
