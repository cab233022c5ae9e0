// SPDX-License-Identifier: MIT
// contextsteer._core: one bind_<area>() per binding file, in registration order (a type is
// registered before the areas whose signatures name it). The table of contents of the
// bindings; helpers shared by several areas live in arrays.*, in_use.*, agents.hpp.
#include <pybind11/pybind11.h>

namespace py = pybind11;

namespace contextsteer::bindings {
void bind_runtime(py::module_& m);
void bind_modes(py::module_& m);
void bind_maps(py::module_& m);
void bind_world(py::module_& m);
void bind_path(py::module_& m);
void bind_agents(py::module_& m);
void bind_behaviours(py::module_& m);
void bind_motion(py::module_& m);
void bind_simulation(
    py::module_& m);  // with bind_observers (observe.cpp) for its history and metrics methods
void bind_classic(py::module_& m);
void bind_nav(py::module_& m);
}  // namespace contextsteer::bindings

PYBIND11_MODULE(_core, m) {
  m.doc() = "contextsteer C++ core (use the public API in the contextsteer package)";
  using namespace contextsteer::bindings;
  bind_runtime(m);
  bind_modes(m);
  bind_maps(m);
  bind_world(m);
  bind_path(m);
  bind_agents(m);
  bind_behaviours(m);
  bind_motion(m);
  bind_simulation(m);
  bind_classic(m);
  bind_nav(m);
}
