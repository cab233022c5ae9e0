// SPDX-License-Identifier: MIT
// Per-thread scratch reached through an opaque call.
#pragma once

namespace contextsteer::detail {

#if defined(__GNUC__) && !defined(__clang__)
#define CS_OPAQUE [[gnu::noipa]]
#else
#define CS_OPAQUE [[gnu::noinline]]
#endif

/// The calling thread's T for call site Tag (any type naming the site; two sites that may
/// be live at once, one calling the other, need different tags). Take it once at the top
/// of the function that uses it and pass the reference on.
///
/// Why not a function-local `thread_local T`: in a shared library (the Python module) a
/// thread_local's address comes from a call to __tls_get_addr, and GCC treats that address
/// as a constant that it may compute again at every use after a call, or propagate into a
/// specialised clone of a callee that takes the object by reference (`.constprop`), which
/// then calls __tls_get_addr at each use inside its loops. The thick sector rays ran a
/// quarter to a third slower in the module than in a static executable for that reason
/// (docs/performance.md, "Thread-local scratch in the shared library"). Behind this call,
/// which the optimiser may not look through (noipa), the reference is an ordinary pointer
/// kept in a register.
template <class T, class Tag>
CS_OPAQUE T& thread_scratch() {
  thread_local T scratch;
  return scratch;
}

}  // namespace contextsteer::detail
