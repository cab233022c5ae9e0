// SPDX-License-Identifier: MIT
#include "in_use.hpp"

#include <algorithm>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

namespace contextsteer::bindings {

namespace {
struct Busy {
  const void* object;
  std::thread::id owner;
  int depth;  // guards of the owner that hold it
};
std::mutex g_mutex;
std::vector<Busy> g_busy;  // few entries: one per object in use

std::vector<Busy>::iterator find_busy(const void* p) {
  return std::find_if(g_busy.begin(), g_busy.end(), [p](const Busy& b) { return b.object == p; });
}
}  // namespace

InUse::InUse(std::initializer_list<const void*> objects, const char* what) {
  const std::thread::id me = std::this_thread::get_id();
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
