// SPDX-License-Identifier: MIT
// Thread-count control of the parallel kernels.
#include <pybind11/pybind11.h>

#include <string>

#include "gil.hpp"
#include "contextsteer/threads.hpp"

namespace py = pybind11;

namespace contextsteer::bindings {

void bind_runtime(py::module_& m) {
  m.def("get_num_threads", &contextsteer::num_threads,
        "Number of threads the parallel kernels use.");
  m.def(
      "set_num_threads",
      [](int n) {
        if (n < 1)
          throw py::value_error("set_num_threads: expected n >= 1, got " + std::to_string(n));
        GilRelease release;
        contextsteer::set_num_threads(n);
      },
      py::arg("n"), "Sets the number of threads the parallel kernels use (n >= 1).");
}

}  // namespace contextsteer::bindings
