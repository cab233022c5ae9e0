// SPDX-License-Identifier: MIT
// Binding helpers of the agents area, shared with the behaviour, motion, simulation and
// classic bindings: Python behaviour / motion objects → C++ configs, and the Agents view.
#pragma once

#include <pybind11/pybind11.h>

#include "contextsteer/agents.hpp"
#include "contextsteer/behaviours.hpp"
#include "contextsteer/motion.hpp"
#include "contextsteer/neighbours.hpp"

namespace contextsteer::bindings {

namespace py = pybind11;

inline constexpr std::size_t kNoAgents = static_cast<std::size_t>(-1);

/// C++ behaviour from a Python behaviour object (contextsteer.behaviours): calls its
/// `_config()` → (kind, params dict). Spans in the result BORROW the NumPy arrays held by
/// that object: keep it alive as long as the Behaviour is used. ValueError on bad params.
/// Its per-agent weights (if any) are attached after checking they have n_agents entries
/// (ValueError); n_agents = kNoAgents leaves them out (for queries that evaluate no rows).
Behaviour to_behaviour(const py::handle& obj, std::size_t n_agents = kNoAgents);

/// C++ motion model from a Python motion object (contextsteer.motion) via `_config()`.
MotionModel to_motion(const py::handle& obj);

/// The C++ Agents inside a Python Agents object (TypeError if it is not one).
Agents& agents_of(const py::handle& obj);

/// Copies of the per-agent arrays of `Agents.STATE` by name (the caller holds the agents'
/// InUse guard, so the copies are of one state).
py::dict agents_snapshot(const py::object& self);

/// Fills every row of a prepared `table` (NeighborTable::prepare) in timed slices of about
/// 50 ms without the GIL, checking for Ctrl-C with it between them (KeyboardInterrupt as
/// py::error_already_set). Call with the GIL held. Rows are independent: slicing changes
/// no result.
void fill_rows_interruptibly(NeighborTable& table, std::size_t rows);

}  // namespace contextsteer::bindings
