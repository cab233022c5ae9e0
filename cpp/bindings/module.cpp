// SPDX-License-Identifier: MIT
// contextsteer._core: one bind_<area>() per binding file.
#include <pybind11/pybind11.h>

namespace py = pybind11;

namespace contextsteer::bindings {
void bind_runtime(py::module_& m);
void bind_maps(py::module_& m);
void bind_world(py::module_& m);
void bind_path(py::module_& m);
void bind_agents(py::module_& m);
void bind_nav(py::module_& m);
}  // namespace contextsteer::bindings

PYBIND11_MODULE(_core, m) {
  m.doc() = "contextsteer C++ core (use the public API in the contextsteer package)";
  using namespace contextsteer::bindings;
  bind_runtime(m);
  bind_maps(m);
  bind_world(m);
  bind_path(m);
  bind_agents(m);
  bind_nav(m);
}
