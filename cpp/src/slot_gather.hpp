// SPDX-License-Identifier: MIT
// Internal: the gather path of the slot raycast (walls of the look-ahead disc, all rays at once).
#pragma once

#include <cstddef>
#include <cstdint>

#include "contextsteer/raycast.hpp"
#include "contextsteer/world.hpp"

namespace contextsteer::detail {

/// Gathers the walls and circles (in `layers`) whose boxes meet the look-ahead disc of
/// radius L around (ox, oy), each once (owner-cell rule), and tests all K rays of
/// s.dx/s.dy against them: s.best[j] = min(s.best[j], hit distance of ray j). Same
/// distances as ray_segment / ray_circle on each entry. Allocation-free.
void gather_and_test(const WorldGrid& g, double ox, double oy, double L, std::uint32_t layers,
                     SlotScratch& s, std::size_t k);

}  // namespace contextsteer::detail
