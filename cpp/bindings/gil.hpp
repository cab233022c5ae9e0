// SPDX-License-Identifier: MIT
// Releasing the GIL around long C++ work, in a way a daemon thread may be ended at exit.
#pragma once

#include <Python.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <chrono>
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

/// Runs f(begin, end) over [0, n) in slices without the GIL, checking for Ctrl-C (with
/// the GIL) between slices, so that a query over millions of items can be interrupted.
/// Items are independent: slicing changes no result. An item's cost can range from a few
/// operations to thousands of times that (a ray or a point among long walls that every
/// cell lists, or a sweep of 60 ms), so the slices are timed: the first holds one item,
/// each next is aimed at about 50 ms from the last one's pace, growing at most fourfold
/// (the items to come may be dearer) and never beyond `per`. Items that turn dear only
/// after thousands of cheap ones can still fill a slice of `per` before Ctrl-C is heard.
template <class F>
void in_slices(std::size_t n, std::size_t per, F&& f) {
  per = std::max<std::size_t>(per, 1);
  std::size_t next = 1;
  for (std::size_t b = 0; b < n;) {
    const std::size_t e = std::min(n, b + next);
    double sec = 0.0;
    {
      GilRelease release;
      const auto t0 = std::chrono::steady_clock::now();
      f(b, e);
      sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    const auto done = static_cast<double>(e - b);
    const double aim = sec > 0.0 ? done * 0.05 / sec : 4.0 * done;
    next = static_cast<std::size_t>(
        std::clamp(aim, 1.0, std::min(4.0 * done, static_cast<double>(per))));
    b = e;
    if (b < n && PyErr_CheckSignals() != 0) throw pybind11::error_already_set();
  }
}

}  // namespace contextsteer::bindings
