// SPDX-License-Identifier: MIT
#include "in_use.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <string>

namespace contextsteer::bindings {

namespace {
struct Busy {
  const void* object;
  std::uint64_t owner;  // this_thread_token() of the thread that holds it
  int depth;            // guards of the owner that hold it
};
std::mutex g_mutex;
std::vector<Busy> g_busy;  // few entries: one per object in use

// A token for the calling thread that no later thread is given. A std::thread::id may be
// handed to a new thread once its thread has ended, so a hold a thread left behind (a
// SimulationHold entered and kept alive past its thread) would have let that new thread in.
std::uint64_t this_thread_token() {
  static std::atomic<std::uint64_t> next{1};
  thread_local const std::uint64_t token = next.fetch_add(1, std::memory_order_relaxed);
  return token;
}

std::vector<Busy>::iterator find_busy(const void* p) {
  return std::find_if(g_busy.begin(), g_busy.end(), [p](const Busy& b) { return b.object == p; });
}
}  // namespace

InUse::InUse(std::initializer_list<const void*> objects, const char* what) {
  const std::uint64_t me = this_thread_token();
  std::lock_guard<std::mutex> lock(g_mutex);
  for (const void* p : objects) {
    if (!p) continue;
    const auto it = find_busy(p);
    if (it != g_busy.end() && it->owner != me)
      throw std::runtime_error(
          std::string(what) +
          ": this object is in use by another thread (a Simulation and "
          "its Agents may be used by one thread at a time; give each thread its own "
          "Simulation and Agents, which may share one World)");
  }
  for (const void* p : objects) {
    if (!p || std::find(held_.begin(), held_.end(), p) != held_.end()) continue;
    const auto it = find_busy(p);
    if (it == g_busy.end()) g_busy.push_back(Busy{p, me, 1});
    else ++it->depth;
    held_.push_back(p);
  }
}

InUse::~InUse() {
  std::lock_guard<std::mutex> lock(g_mutex);
  for (const void* p : held_) {
    const auto it = find_busy(p);
    if (it != g_busy.end() && --it->depth == 0) g_busy.erase(it);
  }
}

}  // namespace contextsteer::bindings
