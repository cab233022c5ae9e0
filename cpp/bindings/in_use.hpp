// SPDX-License-Identifier: MIT
// One thread at a time per simulation and per agents object.
#pragma once

#include <initializer_list>
#include <vector>

namespace contextsteer::bindings {

/// Marks C++ objects (by address) as in use by the calling thread for the lifetime of
/// the guard. Long calls release the GIL, so without this two Python threads could run
/// the same Simulation (or write the same Agents) at once and corrupt memory; with it, the
/// second thread gets a RuntimeError naming `what` instead. Construct it while holding
/// the GIL, before releasing it. Objects that are not in use by anyone are free for any
/// thread: different simulations (sharing a World, which is read-only in a step) may run
/// concurrently.
///
/// The thread that holds an object may take it again (the guards nest): a sequence of
/// calls that must not be split by another thread (a Flow's step: admissions, the step,
/// the exits) holds the objects for the whole sequence, and its calls pass.
class InUse {
 public:
  InUse(std::initializer_list<const void*> objects, const char* what);
  ~InUse();
  InUse(const InUse&) = delete;
  InUse& operator=(const InUse&) = delete;

 private:
  std::vector<const void*> held_;
};

}  // namespace contextsteer::bindings
