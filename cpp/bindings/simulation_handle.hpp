// SPDX-License-Identifier: MIT
// The Python-side owner of a Simulation, shared by the simulation and observer bindings.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <vector>

#include "contextsteer/simulation.hpp"

namespace contextsteer::bindings {

namespace py = pybind11;

/// What contextsteer._core.Simulation wraps: the C++ simulation plus the Python objects
/// whose memory it borrows (agents, behaviours with their arrays and paths, world, and the
/// path the metrics measure progress along).
struct PyNavField;

/// A FollowField behaviour's navigation field: synced with its world and swapped into
/// the simulation at the start of every guarded call (copy-on-write, see PyNavField).
struct FieldUse {
  std::size_t index = 0;            ///< the behaviour's index in the steering
  std::shared_ptr<PyNavField> nav;  ///< the field's Python-side owner
  py::object world;                 ///< the compiled world it is built over
};

struct PySimulation {
  py::object agents, world, behaviours;
  std::vector<FieldUse> fields;
  py::object metrics_path = py::none();
  std::unique_ptr<Simulation> sim;
  std::size_t slice = 1;  ///< steps a GIL-released slice of step() runs (adapted, ~50 ms)
};

/// ValueError naming the first alive agent whose state is not finite, beyond ±1e8, or
/// negative where a size or limit must not be (simulation.cpp).
void check_agents(Agents& a, const char* who = "Simulation");

/// Adds the metrics and history methods to the Simulation class and binds
/// contextsteer._core.History (observe.cpp).
void bind_observers(py::module_& m, py::class_<PySimulation>& cls);

}  // namespace contextsteer::bindings
