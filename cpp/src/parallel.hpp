// SPDX-License-Identifier: MIT
// Internal: a small persistent thread pool that splits loops over agents (or rays) into chunks
// (the thread count itself is public: contextsteer/threads.hpp).
#pragma once

#include <cstddef>
#include <type_traits>

#include "contextsteer/threads.hpp"

namespace contextsteer {

/// Type-erased body of a parallel loop: called with a half-open index range.
using RangeFn = void (*)(void* ctx, std::size_t begin, std::size_t end);

/// Runs fn(ctx, begin, end) over [0, n) in contiguous chunks of at least `grain` indices
/// on the pool and the calling thread; returns when all are done. Allocation-free.
/// Runs inline when n is small, when there is one thread, when called from inside a
/// parallel loop, or when another thread is already using the pool.
void parallel_for_impl(std::size_t n, std::size_t grain, RangeFn fn, void* ctx);

/// parallel_for(n, grain, [&](size_t begin, size_t end) { ... }) without std::function.
template <class F>
void parallel_for(std::size_t n, std::size_t grain, F&& body) {
  using Body = std::remove_reference_t<F>;
  parallel_for_impl(
      n, grain, [](void* ctx, std::size_t b, std::size_t e) { (*static_cast<Body*>(ctx))(b, e); },
      const_cast<void*>(static_cast<const void*>(&body)));
}

/// The cores this process may use: the CPUs of its affinity mask (taskset, a container's
/// cpuset), capped by its cgroup's CPU quota rounded up (cgroup v2 `cpu.max`, v1
/// `cpu.cfs_quota_us` / `cpu.cfs_period_us`: Docker's --cpus, Kubernetes' CPU limits);
/// at least 1. The pool's default thread count, and the most threads at which it spins.
unsigned usable_cores();

/// The cores a cgroup CPU quota allows, rounded up (at least 1), or 0 for no quota:
/// `quota` and `period` as the files give them ("max" or a negative quota: none).
/// Exposed for the tests.
unsigned cores_from_quota(const char* quota, const char* period);

}  // namespace contextsteer
