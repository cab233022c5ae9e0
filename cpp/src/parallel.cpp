// SPDX-License-Identifier: MIT
#include "parallel.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <pthread.h>
#if defined(__linux__)
#include <sched.h>
#endif

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace contextsteer {
namespace {

thread_local bool t_inside_parallel = false;

// A short spin before sleeping: a step runs a parallel loop every few hundred
// microseconds (16 decision phases a step, each a loop), and waking a sleeping worker
// through the condition variable takes tens of microseconds on a VM. Spinning this long
// costs a core at most that long each time the pool falls idle.
constexpr auto kSpin = std::chrono::microseconds(50);

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#endif
}

// Spins until done() or kSpin has passed; returns done(). Without `spin` (more threads
// than cores, where a spinning thread takes the core of one with work) only tests once.
template <class Done>
bool spin_until(bool spin, Done done) {
  if (!spin) return done();
  const auto until = std::chrono::steady_clock::now() + kSpin;
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (done()) return true;
      cpu_relax();
    }
    if (std::chrono::steady_clock::now() >= until) return done();
  }
}

// Workers sleep on a condition variable and wake for each job (generation counter).
// Chunks are handed out through an atomic counter, so a slow core does not stall the
// loop; results stay deterministic because kernels write per-index outputs only.
class Pool {
 public:
  explicit Pool(int threads) { resize(threads); }
  ~Pool() { stop_workers(); }

  // Read without a lock by parallel_for_impl (to size its chunks; try_run then finds out
  // whether the pool is free) while set_num_threads may resize: atomic.
  int threads() const { return threads_.load(std::memory_order_relaxed); }

  void resize(int threads) {
    std::lock_guard<std::mutex> busy(busy_);  // never while a job is in flight
    stop_workers();
    const int wanted = std::max(1, threads);
    unsigned long now = 0;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = false;
      now = generation_;
    }
    // A new worker must not take part in the jobs posted before it existed: starting from
    // the current generation, it wakes only for the next one. (Starting from 0, it woke at
    // once for the last, finished job; when a new job was posted during that stale pass,
    // it decremented the new job's pending count twice, so the caller could return while a
    // chunk still ran, or wait forever.)
    // Thread creation can fail (a memory or process limit): keep the workers that started
    // and run with those (the caller's thread always takes part), never abort or hang.
    spin_ = static_cast<unsigned>(wanted) <= usable_cores();
    for (int i = 1; i < wanted; ++i) {
      try {
        workers_.emplace_back([this, now] { worker_loop(now); });
      } catch (const std::exception&) {
        break;
      }
    }
    threads_.store(static_cast<int>(workers_.size()) + 1, std::memory_order_relaxed);
  }

  // Returns false when the pool is busy with another caller's job.
  bool try_run(std::size_t n, std::size_t chunk, RangeFn fn, void* ctx) {
    std::unique_lock<std::mutex> busy(busy_, std::try_to_lock);
    if (!busy.owns_lock()) return false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      fn_ = fn;
      ctx_ = ctx;
      n_ = n;
      chunk_ = chunk;
      next_.store(0, std::memory_order_relaxed);
      pending_.store(static_cast<int>(workers_.size()), std::memory_order_relaxed);
      generation_.fetch_add(1, std::memory_order_release);
    }
    wake_.notify_all();
    t_inside_parallel = true;
    work();
    t_inside_parallel = false;
    if (!spin_until(spin_, [this] { return pending_.load(std::memory_order_acquire) == 0; })) {
      std::unique_lock<std::mutex> lock(mutex_);
      done_.wait(lock, [this] { return pending_.load(std::memory_order_acquire) == 0; });
    }
    // Every chunk has ended, the workers' included: an exception of any of them (the
    // first) is the caller's, thrown on its thread with the job's frame still alive.
    // (The flag spares the common case, no exception, a lock per loop.)
    if (failed_.load(std::memory_order_acquire)) {
      std::exception_ptr error;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        error = std::exchange(error_, nullptr);
        failed_.store(false, std::memory_order_relaxed);
      }
      std::rethrow_exception(error);
    }
    return true;
  }

 private:
  // Runs chunks until none is left. An exception (std::bad_alloc from scratch that grows
  // inside a chunk) is kept, the first one, and ends the handing out of chunks: on a
  // worker it called std::terminate, and on the caller it left try_run before the workers
  // were done with its stack frame (a segfault or abort where one thread raised
  // MemoryError; fuzz round 13).
  void work() {
    for (;;) {
      std::size_t begin = next_.fetch_add(chunk_, std::memory_order_relaxed);
      if (begin >= n_) break;
      try {
        fn_(ctx_, begin, std::min(n_, begin + chunk_));
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!error_) error_ = std::current_exception();
        failed_.store(true, std::memory_order_release);
        next_.store(n_, std::memory_order_relaxed);
      }
    }
  }

  void worker_loop(unsigned long seen) {
    t_inside_parallel = true;
    for (;;) {
      // A job posted while spinning is taken without the lock: the job's fields were
      // written before the generation's release increment, which this acquire load
      // reads. (stop_workers posts no generation; it is seen under the lock.)
      if (!spin_until(spin_, [&] { return generation_.load(std::memory_order_acquire) != seen; })) {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(
            lock, [&] { return stopping_ || generation_.load(std::memory_order_acquire) != seen; });
        if (stopping_) return;
      }
      seen = generation_.load(std::memory_order_acquire);
      work();
      if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        // The caller may be asleep on done_: notify under the lock, so that it cannot
        // test the count and then miss this wake-up.
        std::lock_guard<std::mutex> lock(mutex_);
        done_.notify_one();
      }
    }
  }

  void stop_workers() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    for (auto& w : workers_) w.join();
    workers_.clear();
  }

  std::atomic<int> threads_{1};
  std::vector<std::thread> workers_;
  std::mutex busy_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  bool stopping_ = false;
  bool spin_ = true;  // written by resize() before any worker starts; read-only after
  std::atomic<unsigned long> generation_{0};
  std::atomic<int> pending_{0};
  RangeFn fn_ = nullptr;
  void* ctx_ = nullptr;
  std::exception_ptr error_;         // the job's first exception (under mutex_)
  std::atomic<bool> failed_{false};  // error_ is set
  std::size_t n_ = 0;
  std::size_t chunk_ = 1;
  std::atomic<std::size_t> next_{0};
};

std::mutex g_config_mutex;
Pool* g_pool = nullptr;  // never destroyed: workers must not be joined during static teardown
int g_wanted = 0;

// After fork() only the forking thread exists in the child: the old pool's workers are
// gone, so drop it without touching it (leaked on purpose) and start a new one lazily.
void after_fork_in_child() {
  new (&g_config_mutex) std::mutex();
  g_pool = nullptr;
}

// Registered when the library loads, before any thread can hold g_config_mutex: it was
// registered after the first pool was built, under that lock, so a fork while another
// thread built the first pool left the child a held mutex no handler reset (its first
// thread-count call waited for good; fuzz round 13).
const bool g_fork_handler = (pthread_atfork(nullptr, nullptr, after_fork_in_child), true);

Pool& pool() {
  std::lock_guard<std::mutex> lock(g_config_mutex);
  if (!g_pool) {
    if (g_wanted == 0) g_wanted = static_cast<int>(usable_cores());
    g_pool = new Pool(g_wanted);
  }
  return *g_pool;
}

}  // namespace

int num_threads() {
  std::lock_guard<std::mutex> lock(g_config_mutex);
  if (g_pool) return g_pool->threads();
  return g_wanted ? g_wanted : static_cast<int>(usable_cores());
}

unsigned cores_from_quota(const char* quota, const char* period) {
  if (quota == nullptr || period == nullptr) return 0;
  char* end = nullptr;
  const double q = std::strtod(quota, &end);
  if (end == quota) return 0;  // "max", or nothing readable: no quota
  const double p = std::strtod(period, &end);
  if (end == period || !(q > 0.0) || !(p > 0.0)) return 0;
  const double c = q / p;  // may be inf: capped below
  return static_cast<unsigned>(c < 1e6 ? std::max(1.0, std::ceil(c)) : 1e6);
}

namespace {
// The first line of a file, or "" when it cannot be read.
std::string first_line(const char* path) {
  std::ifstream f(path);
  std::string line;
  if (!f || !std::getline(f, line)) return {};
  return line;
}

unsigned cgroup_cores() {
  // cgroup v2: "<quota> <period>" or "max <period>".
  const std::string v2 = first_line("/sys/fs/cgroup/cpu.max");
  if (!v2.empty()) {
    const std::size_t space = v2.find(' ');
    if (space != std::string::npos)
      return cores_from_quota(v2.substr(0, space).c_str(), v2.substr(space + 1).c_str());
  }
  // cgroup v1: the quota is -1 without a limit.
  const std::string quota = first_line("/sys/fs/cgroup/cpu/cpu.cfs_quota_us");
  const std::string period = first_line("/sys/fs/cgroup/cpu/cpu.cfs_period_us");
  if (!quota.empty() && !period.empty()) return cores_from_quota(quota.c_str(), period.c_str());
  return 0;
}
}  // namespace

unsigned usable_cores() {
  // Read once: neither changes under a running process in practice, and set_num_threads
  // and the pool's start ask often.
  static const unsigned cores = [] {
    unsigned n = std::max(1u, std::thread::hardware_concurrency());
#if defined(__linux__)
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
      n = static_cast<unsigned>(CPU_COUNT(&set));
#endif
    const unsigned quota = cgroup_cores();
    if (quota > 0) n = std::min(n, quota);  // both are at least 1
    return n;
  }();
  return cores;
}

void set_num_threads(int n) {
  std::lock_guard<std::mutex> lock(g_config_mutex);
  g_wanted = std::max(1, n);
  if (g_pool && g_pool->threads() != g_wanted) g_pool->resize(g_wanted);
}

void parallel_for_impl(std::size_t n, std::size_t grain, RangeFn fn, void* ctx) {
  if (n == 0) return;
  grain = std::max<std::size_t>(grain, 1);
  if (t_inside_parallel || n <= grain) {
    fn(ctx, 0, n);
    return;
  }
  Pool& p = pool();
  const std::size_t threads = static_cast<std::size_t>(p.threads());
  if (threads <= 1) {
    fn(ctx, 0, n);
    return;
  }
  // About four chunks a thread balances load without much hand-out traffic.
  const std::size_t chunk = std::max(grain, (n + 4 * threads - 1) / (4 * threads));
  if (!p.try_run(n, chunk, fn, ctx)) fn(ctx, 0, n);
}

}  // namespace contextsteer
