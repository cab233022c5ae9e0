// SPDX-License-Identifier: MIT
// The classic steering spec of contextsteer.classic → classic::Steering (classic.cpp).
#pragma once

#include <pybind11/pybind11.h>

#include <memory>

#include "contextsteer/classic.hpp"

namespace contextsteer::bindings {

namespace py = pybind11;

/// classic::Steering from the dict built by contextsteer.classic (`_spec()`): {"epsilon",
/// "groups": [[(kind, params, weight), ...], ...]}. The result owns copies of agent id
/// lists and keeps the Python paths it points into alive (destroy it with the GIL held).
/// Parameters are validated in Python; ids are checked against n_agents (IndexError).
std::shared_ptr<const classic::Steering> classic_steering(const py::handle& spec,
                                                          std::size_t n_agents);

}  // namespace contextsteer::bindings
