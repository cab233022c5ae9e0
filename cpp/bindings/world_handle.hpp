// SPDX-License-Identifier: MIT
// The Python-side owner of a World: copy-on-write snapshots so arrays handed out never change.
#pragma once

#include <memory>

#include "contextsteer/world.hpp"

namespace contextsteer::bindings {

/// What `contextsteer._core.World` wraps. Every edit replaces `current` by an edited copy,
/// so views of the old geometry (which keep the old World alive) stay valid and unchanged,
/// and a query running with the GIL released keeps the snapshot it started with.
/// Other bindings (the simulation) get a ready-to-query snapshot with `snapshot()`.
struct WorldHandle {
  std::shared_ptr<World> current = std::make_shared<World>();

  /// The current geometry with its grid built (builds it lazily; call with the GIL held).
  std::shared_ptr<const World> snapshot() {
    if (!current->indexed()) current->build_index();
    return current;
  }
  /// A copy of the current geometry to edit; install it with `current = next`.
  std::shared_ptr<World> edit() const { return std::make_shared<World>(*current); }
};

}  // namespace contextsteer::bindings
