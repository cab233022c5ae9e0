// SPDX-License-Identifier: MIT
#include <pybind11/pybind11.h>

namespace py = pybind11;

namespace contextsteer::bindings {

void bind_world(py::module_& m) { (void)m; }

}  // namespace contextsteer::bindings
