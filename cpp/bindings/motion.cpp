// SPDX-License-Identifier: MIT
// Bindings of the motion models: Python config objects → C++ variants, and one move.
#include <pybind11/numpy.h>

#include <cmath>
#include <string>

#include "gil.hpp"
#include "agents.hpp"
#include "simulation_handle.hpp"  // check_agents
#include "in_use.hpp"
#include "arrays.hpp"

namespace contextsteer::bindings {

MotionModel to_motion(const py::handle& obj) {
  if (!py::hasattr(obj, "_config"))
    throw py::type_error("expected a contextsteer motion model, got " +
                         std::string(py::str(py::type::of(obj).attr("__name__"))));
  auto cfg = obj.attr("_config")().cast<py::tuple>();
  const auto kind = cfg[0].cast<std::string>();
  const auto p = cfg[1].cast<py::dict>();
  auto number = [&](const char* key) {
    const double v = p[key].cast<double>();
    require_finite(v, key);
    return static_cast<float>(v);
  };
  if (kind == "lerp") {
    Lerp l;
    if (!p["steer_force"].is_none()) {
      l.steer_force = number("steer_force");
      if (!(l.steer_force >= 0.0f && l.steer_force <= 1.0f))
        throw py::value_error("steer_force must be in [0, 1]");
    }
    l.full_speed = p["speed"].cast<std::string>() == "max";
    return l;
  }
  if (kind == "accel") {
    Accel a;
    a.time_to_target = p["time_to_target"].is_none() ? 0.0f : number("time_to_target");
    a.independent_facing = p["independent_facing"].cast<bool>();
    a.full_speed = p["speed"].cast<std::string>() == "max";
    a.gdx_order = p["order"].cast<std::string>() == "position_first";
    return a;
  }
  if (kind == "vehicle") {
    Vehicle v;
    v.brake_angle = number("brake_angle");
    v.full_turn_speed = number("full_turn_speed");
    v.brake_speed = number("brake_speed");
    v.full_speed = p["speed"].cast<std::string>() == "max";
    return v;
  }
  throw py::value_error("unknown motion model '" + kind + "'");
}

namespace {

py::tuple apply_py(const py::handle& agents_obj, const py::handle& model_obj,
                   const py::handle& direction, const py::handle& strength, double dt) {
  Agents& agents = agents_of(agents_obj);
  const InUse guard({&agents}, "motion");
  check_agents(agents, "motion");  // the state Simulation.step would refuse (writable views)
  const MotionModel model = to_motion(model_obj);
  const auto n = static_cast<py::ssize_t>(agents.capacity());
  // (Shapes named with the agents' capacity: "expected shape (8, 2)", not "(N, 2)".)
  const std::string cap = "N = capacity " + std::to_string(n);
  auto dir = input_f32(direction, "direction", {n, 2}, {cap.c_str(), "2"});
  auto str = input_f32(strength, "strength", {n}, {cap.c_str()});
  require_non_negative(dt, "dt");
  auto pos = new_array<float>({n, 2});
  auto vel = new_array<float>({n, 2});
  auto head = new_array<float>({n});
  {
    GilRelease release;
    MotionInputs in{agents.view(), dir.data, str.data, static_cast<float>(dt)};
    MotionOutputs out{pos.mutable_data(), vel.mutable_data(), head.mutable_data()};
    move(model, in, out);
  }
  return py::make_tuple(pos, vel, head);
}

}  // namespace

void bind_motion(py::module_& m) {
  m.def("apply_motion", &apply_py, py::arg("agents"), py::arg("model"), py::arg("direction"),
        py::arg("strength"), py::arg("dt"));
}

}  // namespace contextsteer::bindings
