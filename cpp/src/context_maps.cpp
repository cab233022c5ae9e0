// SPDX-License-Identifier: MIT
#include "contextsteer/context_maps.hpp"

#include <algorithm>

namespace contextsteer {

void ContextMaps::clear() {
  std::fill(interest_.begin(), interest_.end(), 0.0f);
  std::fill(danger_.begin(), danger_.end(), 0.0f);
}

}  // namespace contextsteer
