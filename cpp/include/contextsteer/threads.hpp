// SPDX-License-Identifier: MIT
// The number of threads the core's parallel kernels use.
#pragma once

namespace contextsteer {

/// Number of threads the parallel kernels use (>= 1). Defaults to the hardware concurrency.
int num_threads();

/// Sets the number of threads the parallel kernels use; n >= 1 (the caller checks).
/// Results never depend on it: every kernel writes each index from exactly one thread
/// and reads only inputs that no thread writes.
void set_num_threads(int n);

}  // namespace contextsteer
