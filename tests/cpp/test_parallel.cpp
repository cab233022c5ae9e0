// SPDX-License-Identifier: MIT
// The thread pool visits every index exactly once, whatever the thread count or nesting.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <new>
#include <thread>
#include <vector>

#include "parallel.hpp"

namespace cs = contextsteer;

namespace {
std::vector<int> visit_counts(std::size_t n, std::size_t grain) {
  std::vector<int> counts(n, 0);
  cs::parallel_for(n, grain, [&](std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i) counts[i] += 1;
  });
  return counts;
}
}  // namespace

TEST(ParallelFor, VisitsEveryIndexOnceForAnyThreadCount) {
  for (int threads : {1, 2, 3, 8}) {
    cs::set_num_threads(threads);
    EXPECT_EQ(cs::num_threads(), threads);
    for (std::size_t n : {0u, 1u, 7u, 64u, 1000u, 100003u}) {
      for (std::size_t grain : {1u, 16u, 4096u}) {
        auto counts = visit_counts(n, grain);
        for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(counts[i], 1) << "n=" << n << " i=" << i;
      }
    }
  }
}

TEST(ParallelFor, NestedLoopsRunInline) {
  cs::set_num_threads(4);
  std::vector<std::atomic<int>> counts(100 * 50);
  cs::parallel_for(100, 1, [&](std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i)
      cs::parallel_for(50, 1, [&](std::size_t b2, std::size_t e2) {
        for (std::size_t j = b2; j < e2; ++j) counts[i * 50 + j] += 1;
      });
  });
  for (auto& c : counts) ASSERT_EQ(c.load(), 1);
}

TEST(ParallelFor, ConcurrentCallersFromSeveralThreads) {
  cs::set_num_threads(2);
  std::vector<std::thread> callers;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t)
    callers.emplace_back([&] {
      for (int rep = 0; rep < 50; ++rep) {
        auto counts = visit_counts(5000, 8);
        for (int c : counts)
          if (c != 1) ++failures;
      }
    });
  for (auto& c : callers) c.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST(ParallelFor, ResizeBetweenJobs) {
  for (int rep = 0; rep < 20; ++rep) {
    cs::set_num_threads(1 + rep % 3);
    auto counts = visit_counts(10000, 4);
    for (int c : counts) ASSERT_EQ(c, 1);
  }
}

// Resizing the pool and posting a job right after: every chunk has finished when
// parallel_for returns, and each index runs once. (New workers once woke for the last,
// finished job and could then count twice against the next one: parallel_for returned
// with chunks still running, or never returned.)
TEST(ParallelFor, JobsRightAfterAResizeFinishBeforeReturning) {
  std::atomic<int> in_flight{0};
  for (int rep = 0; rep < 3000; ++rep) {
    cs::set_num_threads(1 + rep % 3);
    std::vector<int> counts(64, 0);
    cs::parallel_for(64, 1, [&](std::size_t b, std::size_t e) {
      in_flight.fetch_add(1);
      for (std::size_t i = b; i < e; ++i) counts[i] += 1;
      std::this_thread::yield();
      in_flight.fetch_sub(1);
    });
    ASSERT_EQ(in_flight.load(), 0) << "a chunk was still running at rep " << rep;
    for (int c : counts) ASSERT_EQ(c, 1) << "rep " << rep;
  }
  cs::set_num_threads(2);
}

// Workers spin for a moment after a job before they sleep, and the caller spins before it
// waits for them: a job posted while a worker spins is taken without the lock, one posted
// after it fell asleep wakes it through the condition variable. Both ways, and with more
// threads than cores (no spinning), every chunk has finished when parallel_for returns and
// each index runs once.
TEST(ParallelFor, JobsWhileWorkersSpinOrSleepFinishBeforeReturning) {
  std::atomic<int> in_flight{0};
  const auto job = [&](int rep) {
    std::vector<int> counts(96, 0);
    cs::parallel_for(96, 8, [&](std::size_t b, std::size_t e) {
      in_flight.fetch_add(1);
      for (std::size_t i = b; i < e; ++i) counts[i] += 1;
      in_flight.fetch_sub(1);
    });
    ASSERT_EQ(in_flight.load(), 0) << "a chunk was still running at rep " << rep;
    for (int c : counts) ASSERT_EQ(c, 1) << "rep " << rep;
  };
  for (int threads : {2, 3, 16}) {
    cs::set_num_threads(threads);
    for (int rep = 0; rep < 5000; ++rep) job(rep);  // back to back: the spinning path
    for (int rep = 0; rep < 200; ++rep) {
      // Gaps below, around and beyond the spin: the sleeping path too.
      std::this_thread::sleep_for(std::chrono::microseconds(rep % 4 * 60));
      job(rep);
    }
  }
  cs::set_num_threads(2);
}

// A cgroup quota in the files' own words, rounded up to whole cores.
TEST(UsableCores, QuotaInTheCgroupFilesWords) {
  EXPECT_EQ(cs::cores_from_quota("max", "100000"), 0u);  // v2 without a limit
  EXPECT_EQ(cs::cores_from_quota("-1", "100000"), 0u);   // v1 without a limit
  EXPECT_EQ(cs::cores_from_quota("200000", "100000"), 2u);
  EXPECT_EQ(cs::cores_from_quota("150000", "100000"), 2u);  // 1.5 cores: two threads
  EXPECT_EQ(cs::cores_from_quota("50000", "100000"), 1u);   // half a core: one
  EXPECT_EQ(cs::cores_from_quota("400000\n", "100000\n"), 4u);
  EXPECT_EQ(cs::cores_from_quota("", "100000"), 0u);
  EXPECT_EQ(cs::cores_from_quota("200000", "0"), 0u);
  EXPECT_EQ(cs::cores_from_quota("200000", "junk"), 0u);
  EXPECT_EQ(cs::cores_from_quota(nullptr, "100000"), 0u);
  EXPECT_EQ(cs::cores_from_quota("1e300", "1e-300"), 1000000u);  // capped, not overflowed
  const unsigned cores = cs::usable_cores();
  EXPECT_GE(cores, 1u);
  EXPECT_LE(cores, std::max(1u, std::thread::hardware_concurrency()));
}

// A chunk that throws (std::bad_alloc from scratch grown inside it) on a worker called
// std::terminate, and on the caller left parallel_for while the workers still ran chunks
// on its frame (a segfault). The first exception reaches the caller once every chunk has
// ended, whichever thread threw, and the pool runs the next job as before.
TEST(ParallelFor, AnExceptionInAChunkReachesTheCallerAfterEveryChunk) {
  for (int threads : {1, 2, 4}) {
    cs::set_num_threads(threads);
    for (std::size_t bad : {0u, 1u, 17u, 63u}) {
      std::atomic<int> in_flight{0};
      bool caught = false;
      try {
        cs::parallel_for(64, 1, [&](std::size_t b, std::size_t e) {
          in_flight.fetch_add(1);
          std::this_thread::sleep_for(std::chrono::microseconds(50));
          in_flight.fetch_sub(1);
          for (std::size_t i = b; i < e; ++i)
            if (i == bad) throw std::bad_alloc();
        });
      } catch (const std::bad_alloc&) {
        caught = true;
      }
      EXPECT_TRUE(caught) << "threads " << threads << " bad " << bad;
      EXPECT_EQ(in_flight.load(), 0) << "a chunk was still running";
      auto counts = visit_counts(1000, 3);
      for (int c : counts) ASSERT_EQ(c, 1);
    }
  }
  cs::set_num_threads(2);
}
