// SPDX-License-Identifier: MIT
#include "in_use.hpp"

#include <algorithm>
#include <mutex>
#include <stdexcept>
#include <string>

namespace contextsteer::bindings {

namespace {
std::mutex g_mutex;
std::vector<const void*> g_busy;  // few entries: one per call in flight
}  // namespace

InUse::InUse(std::initializer_list<const void*> objects, const char* what) {
  std::lock_guard<std::mutex> lock(g_mutex);
  for (const void* p : objects)
    if (p && std::find(g_busy.begin(), g_busy.end(), p) != g_busy.end())
      throw std::runtime_error(
          std::string(what) +
          ": this object is in use by another thread (a Simulation and "
          "its Agents may be used by one thread at a time; give each thread its own "
          "Simulation and Agents, which may share one World)");
  for (const void* p : objects)
    if (p) {
      g_busy.push_back(p);
      held_.push_back(p);
    }
}

InUse::~InUse() {
  std::lock_guard<std::mutex> lock(g_mutex);
  for (const void* p : held_) {
    auto it = std::find(g_busy.begin(), g_busy.end(), p);
    if (it != g_busy.end()) g_busy.erase(it);
  }
}

}  // namespace contextsteer::bindings
