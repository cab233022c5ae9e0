// SPDX-License-Identifier: MIT
// Internal: the strip index of a fixed slot set (World::strips()) and the slot rays cast on it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "contextsteer/world.hpp"

namespace contextsteer::detail {

/// The strips (DirectionStrips) of the K unit directions sd (2K floats) for casts of
/// `radius` (0: thin rays); nullptr when they would take more than the index's memory
/// budget (64 MB), then the slot rays walk the grid. Allocates; runs over the thread pool.
std::unique_ptr<const SlotStrips> build_strips(const World& w, std::span<const float> sd, float radius);

/// The K slot rays of agents [begin, end) on `strips` (built by build_strips for the slot
/// set and radius the caller casts): out[i * K + j] the closest hit distance up to
/// look_ahead (1 shared or N values, inclusive), or +inf; 0 for an agent inside a polygon.
/// Same hits as the grid walk bit for bit (same exact tests). Pure, allocation-free.
void strip_rows(const World& world, const SlotStrips& strips, std::span<const float> positions,
                std::span<const float> look_ahead, std::uint32_t layers, std::span<float> out,
                std::size_t begin, std::size_t end);

}  // namespace contextsteer::detail
