// SPDX-License-Identifier: MIT
// Releasing the GIL around long C++ work, in a way a daemon thread may be ended at exit.
#pragma once

#include <Python.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <cstddef>

namespace contextsteer::bindings {

/// Releases the GIL for its scope, as pybind11's gil_scoped_release does, but takes it
/// back in a destructor that may throw. When the interpreter is finalizing, CPython ends
/// a daemon thread that asks for the GIL with pthread_exit, whose forced unwind must pass
/// through this frame; from pybind11's noexcept destructor it called std::terminate
/// ("terminate called without an active exception", exit status 134) in a program that
/// exited while a daemon thread was inside Simulation.step. pybind11's dispatcher passes
/// the forced unwind on (abi::__forced_unwind), so the thread now just ends.
class GilRelease {
 public:
  GilRelease() : state_(PyEval_SaveThread()) {}
  ~GilRelease() noexcept(false) { PyEval_RestoreThread(state_); }
  GilRelease(const GilRelease&) = delete;
  GilRelease& operator=(const GilRelease&) = delete;

 private:
  PyThreadState* state_;
};

/// Runs f(begin, end) over [0, n) in slices of `per` items without the GIL, checking for
/// Ctrl-C (with the GIL) between slices, so that a query over millions of items can be
/// interrupted. Items are independent: slicing changes no result.
template <class F>
void in_slices(std::size_t n, std::size_t per, F&& f) {
  per = std::max<std::size_t>(per, 1);
  for (std::size_t b = 0; b < n; b += per) {
    const std::size_t e = std::min(n, b + per);
    {
      GilRelease release;
      f(b, e);
    }
    if (e < n && PyErr_CheckSignals() != 0) throw pybind11::error_already_set();
  }
}

}  // namespace contextsteer::bindings
