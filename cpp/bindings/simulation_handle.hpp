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

/// Calls `visit` on every Python object a PySimulation holds, for the cycle collector.
inline int visit_held(PySimulation& s, visitproc visit, void* arg) {
  Py_VISIT(s.agents.ptr());
  Py_VISIT(s.world.ptr());
  Py_VISIT(s.behaviours.ptr());
  Py_VISIT(s.metrics_path.ptr());
  for (FieldUse& f : s.fields) Py_VISIT(f.world.ptr());
  return 0;
}

/// Type setup that shows Python's cycle collector the Python objects a bound `T` holds
/// (through `visit_held(T&, visit, arg)`): without it, a cycle through them (agents that
/// keep their simulation, say) was never freed. No tp_clear: the Python objects of such a
/// cycle (an instance's dict or slots) clear themselves, and the C++ object then goes with
/// its last reference, its simulation before the memory it borrows, never half cleared.
template <class T>
py::custom_type_setup gc_visible() {
  return py::custom_type_setup([](PyHeapTypeObject* heap) {
    PyTypeObject* type = &heap->ht_type;
    type->tp_flags |= Py_TPFLAGS_HAVE_GC;
    type->tp_traverse = [](PyObject* self, visitproc visit, void* arg) -> int {
      Py_VISIT(Py_TYPE(self));  // a heap type's instances visit their type
      // Read the instance's one value directly: a pybind11 cast may allocate (its type
      // cache), which a traversal must not, and the object may be tracked before its
      // value is built.
      auto* inst = reinterpret_cast<py::detail::instance*>(self);
      if (!inst->simple_layout || !inst->simple_holder_constructed) return 0;
      return visit_held(*static_cast<T*>(inst->simple_value_holder[0]), visit, arg);
    };
  });
}

/// ValueError naming the first alive agent whose state is not finite, beyond ±1e8, or
/// negative where a size or limit must not be (simulation.cpp).
void check_agents(Agents& a, const char* who = "Simulation");

/// Adds the metrics and history methods to the Simulation class and binds
/// contextsteer._core.History (observe.cpp).
void bind_observers(py::module_& m, py::class_<PySimulation>& cls);

}  // namespace contextsteer::bindings
