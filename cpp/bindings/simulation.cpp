// SPDX-License-Identifier: MIT
// Bindings of the Simulation: configuration from Python objects, checks, zero-copy views.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <iomanip>
#include <limits>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "gil.hpp"
#include "parallel.hpp"
#include "agents.hpp"
#include "modes.hpp"
#include "classic_spec.hpp"
#include "arrays.hpp"
#include "contextsteer/collide.hpp"
#include "contextsteer/simulation.hpp"
#include "in_use.hpp"
#include "nav.hpp"
#include "simulation_handle.hpp"
#include "world_handle.hpp"

namespace contextsteer::bindings {

void check_agents(Agents& a, const char* who) {
  const AgentsView v = a.view();
  auto bad = [who](const char* what, std::size_t i, float x) {
    throw py::value_error(std::string(who) + ": agents." + what + " must be finite and " +
                          "within ±1e8 (and >= 0 for sizes and limits; steer_force <= 1), got " +
                          number_text(x) + " for agent " + std::to_string(i));
  };
  auto in_range = [](float x) { return std::fabs(x) <= kMaxCoordinate; };  // as Agents.add
  for (std::size_t i = 0; i < v.size; ++i) {
    if (!v.alive[i]) continue;
    for (int c = 0; c < 2; ++c) {
      if (!in_range(v.position[2 * i + c])) bad("position", i, v.position[2 * i + c]);
      if (!in_range(v.velocity[2 * i + c])) bad("velocity", i, v.velocity[2 * i + c]);
      if (!in_range(v.target[2 * i + c])) bad("target", i, v.target[2 * i + c]);
    }
    if (!in_range(v.heading[i])) bad("heading", i, v.heading[i]);
    const std::pair<const char*, const float*> limits[] = {{"radius", v.radius},
                                                           {"max_speed", v.max_speed},
                                                           {"max_accel", v.max_accel},
                                                           {"max_turn_rate", v.max_turn_rate},
                                                           {"steer_force", v.steer_force}};
    for (const auto& [name, arr] : limits)
      if (!(arr[i] >= 0.0f) || !in_range(arr[i])) bad(name, i, arr[i]);
    if (!(v.steer_force[i] <= 1.0f)) bad("steer_force", i, v.steer_force[i]);
  }
}

namespace {

/// After a step: the committed state must be finite. It can only become non-finite when
/// something outside the step wrote into the agents' views while it ran (another thread).
void check_state(Agents& a) {
  const AgentsView v = a.view();
  for (std::size_t i = 0; i < v.size; ++i) {
    if (!v.alive[i]) continue;
    if (!std::isfinite(v.position[2 * i]) || !std::isfinite(v.position[2 * i + 1]) ||
        !std::isfinite(v.velocity[2 * i]) || !std::isfinite(v.velocity[2 * i + 1]))
      throw py::value_error("Simulation: agent " + std::to_string(i) +
                            " has a non-finite position or velocity after the step: were "
                            "the agents' arrays written while it ran (another thread)?");
  }
}

void check_maps(Simulation& s) {
  const std::size_t nk = s.size() * s.slots();
  auto where = [&](std::size_t x) {
    return " at (" + std::to_string(x / s.slots()) + ", " + std::to_string(x % s.slots()) + ")";
  };
  for (auto [name, p] :
       {std::pair<const char*, const float*>{"interest", s.interest()}, {"danger", s.danger()}}) {
    // Finite and below 2^60 in magnitude, the bound every map call holds values to (1e30
    // written between perceive() and decide_and_move() was taken).
    for (std::size_t x = 0; x < nk; ++x) {
      if (!(std::fabs(p[x]) < 0x1p60f))
        throw py::value_error("Simulation: " + std::string(name) +
                              " must be finite, below 2^60 (1.15e18) in magnitude, got " +
                              std::to_string(p[x]) + where(x));
    }
  }
  // The speed map (a speed-writing behaviour's): fractions of max speed the decision
  // multiplies and compares, so NaN or a negative value stopped an agent silently.
  if (const float* sp = s.speed()) {
    for (std::size_t x = 0; x < nk; ++x) {
      if (!(sp[x] >= 0.0f && sp[x] <= 1.0f))
        throw py::value_error("Simulation: speed must be in [0, 1] (fractions of max speed), got " +
                              std::to_string(sp[x]) + where(x));
    }
  }
}

/// The memory bound of a step call's history room (contextsteer.maps._physical_memory, a
/// few file reads), asked only when some History grows in it: asked at every call, it
/// took 0.19 ms of a 16-agent step (fuzz round 27).
long double history_memory(const Simulation& s, std::size_t steps) {
  if (!s.history_allocates(steps)) return std::numeric_limits<long double>::infinity();
  return static_cast<long double>(
      py::module_::import("contextsteer.maps").attr("_physical_memory")().cast<double>());
}

/// The decisions an agent that does not decide at a step moves on (decision_interval,
/// phases), and the maps the temporal blend reads: writable views, so checked before a
/// step reads them. (The blend's memory is the maps themselves.)
void check_carried(Simulation& s) {
  const float* d = s.direction();
  const float* g = s.strength();
  const double* still = s.still_time();
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (!std::isfinite(d[2 * i]) || !std::isfinite(d[2 * i + 1]) ||
        !(std::fabs(d[2 * i]) <= 1.0f + 1e-3f && std::fabs(d[2 * i + 1]) <= 1.0f + 1e-3f))
      throw py::value_error(
          "Simulation: chosen_direction must be a finite unit vector or 0, got (" +
          number_text(d[2 * i]) + ", " + number_text(d[2 * i + 1]) + ") for agent " +
          std::to_string(i));
    if (!(g[i] >= 0.0f && g[i] <= 1.0f))
      throw py::value_error("Simulation: strength must be in [0, 1], got " + number_text(g[i]) +
                            " for agent " + std::to_string(i));
    // The stuck timer: NaN never flagged the agent, a negative value delayed it.
    if (!(still[i] >= 0.0 && still[i] <= std::numeric_limits<double>::max()))
      throw py::value_error("Simulation: still_time must be finite and >= 0 seconds, got " +
                            number_text(still[i]) + " for agent " + std::to_string(i));
  }
  if (s.config().blend >= 0.0f) check_maps(s);
}

void refresh_world(PySimulation& self) {
  if (self.world.is_none()) {
    self.sim->set_world(nullptr);
  } else {
    self.sim->set_world(self.world.cast<WorldHandle&>().snapshot());
  }
  // Navigation fields: rebuilt here, under the caller's guard, if their world was edited
  // (a second thread calling step gets "in use", not a concurrent rebuild), and the step
  // holds the build it starts with while other threads may swap in a newer one.
  for (auto& u : self.fields) {
    sync_nav_field(*u.nav, u.world);
    self.sim->set_field(u.index, u.nav->field);
  }
}

/// dt as the core uses it: a float32 in (0, 1e6] seconds (1e300 would be inf, 1e-300 0).
double checked_dt(double dt) {
  // At least 1e-30 s: the motion divides velocity changes (< 2^28) by dt, which must stay
  // finite in float32 (a subnormal dt gave inf, then NaN).
  if (!(dt >= 1e-30) || !(dt <= 1e6)) {
    std::ostringstream text;
    text << "dt must be a number of seconds in [1e-30, 1e6], got " << std::setprecision(17) << dt;
    throw py::value_error(text.str());
  }
  return dt;
}

std::unique_ptr<PySimulation> make(py::object world, py::object agents_obj, py::list behaviours,
                                   py::dict cfg, py::object motion, py::dict prm,
                                   py::object slots) {
  Agents& agents = agents_of(agents_obj);
  // slots: K (the regular ring) or a SlotSet (its C++ object).
  std::optional<SlotSet> given;
  long k = 0;
  if (py::isinstance<SlotSet>(slots)) {
    given = slots.cast<const SlotSet&>();
    k = static_cast<long>(given->size());
  } else {
    k = slots.cast<long>();
  }
  if (k < static_cast<long>(kMinSlots))
    throw py::value_error("slots must be >= 3, got " + std::to_string(k));
  if (!world.is_none()) (void)world.cast<WorldHandle&>();
  SteeringConfig c;
  std::vector<FieldUse> fields;
  for (const auto& b : behaviours) {
    c.behaviours.push_back(to_behaviour(b, agents.capacity()));
    if (std::holds_alternative<FollowField>(c.behaviours.back())) {
      const py::object nav = b.attr("field");  // a contextsteer.NavField
      py::object w = nav.attr("world");
      if (py::hasattr(w, "_core")) w = w.attr("_core");
      fields.push_back(
          {c.behaviours.size() - 1, nav.attr("_core").cast<std::shared_ptr<PyNavField>>(), w});
    }
  }
  c.combine =
      parse_mode(kCombineModes, cfg["combine"], "Steering", "combine", steering_can_combine);
  c.danger_combine = parse_mode(kCombineModes, cfg["danger_combine"], "Steering", "danger_combine",
                                steering_can_combine);
  c.resolve.mode = parse_mode(kResolveModes, cfg["resolve"], "Steering", "resolve");
  c.resolve.threshold = cfg["threshold"].cast<float>();
  c.resolve.epsilon = cfg["epsilon"].cast<float>();
  c.choose.mode = parse_mode(kChooseModes, cfg["choose"], "Steering", "choose");
  c.choose.width = cfg["width"].cast<std::size_t>();
  c.choose.contiguous = cfg["contiguous"].cast<bool>();
  if (!cfg["spread"].is_none()) {
    auto kern = input_f32(cfg["spread"], "spread", {kAny}, {"L"});
    if (kern.size() % 2 == 0 || kern.size() > static_cast<std::size_t>(k))
      throw py::value_error("spread: expected an odd kernel length <= K = " + std::to_string(k) +
                            ", got " + std::to_string(kern.size()));
    c.spread_kernel.assign(kern.data, kern.data + kern.size());
    c.spread_mode = parse_mode(kSpreadModes, cfg["spread_mode"], "Steering", "spread_mode");
    const auto on = cfg["spread_maps"].cast<std::string>();
    c.spread_interest = on == "interest" || on == "both";
    c.spread_danger = on == "danger" || on == "both";
  }
  c.blend = cfg["blend"].is_none() ? -1.0f : cfg["blend"].cast<float>();
  c.hysteresis = cfg.contains("hysteresis") ? cfg["hysteresis"].cast<float>() : 0.0f;
  if (!(c.hysteresis >= 0.0f) || !std::isfinite(c.hysteresis))
    throw py::value_error("hysteresis must be a finite number >= 0");
  c.rotate = cfg["rotate"].cast<bool>();
  c.record = cfg["record"].cast<bool>();
  const long m = cfg["max_neighbours"].cast<long>();
  if (m < 1 || static_cast<std::size_t>(m) > kMaxNeighbors)
    throw py::value_error("max_neighbours must be in [1, " + std::to_string(kMaxNeighbors) +
                          "], got " + std::to_string(m));
  c.max_neighbors = static_cast<std::size_t>(m);
  if (cfg.contains("decision_phases")) {
    const long f = cfg["decision_phases"].cast<long>();
    if (f < 1 || static_cast<std::size_t>(f) > kMaxDecisionPhases)
      throw py::value_error("decision_phases must be in [1, " + std::to_string(kMaxDecisionPhases) +
                            "], got " + std::to_string(f));
    c.decision_phases = static_cast<std::size_t>(f);
  }
  if (cfg.contains("classic") && !cfg["classic"].is_none()) {
    if (!c.behaviours.empty())
      throw py::value_error("classic steering takes no context behaviours");
    c.classic = classic_steering(cfg["classic"], agents.capacity());
  }

  SimulationParams s;
  s.motion = to_motion(motion);
  s.push_apart = prm["push_apart"].cast<bool>();
  s.push_relax = prm["push_relax"].cast<float>();
  if (prm.contains("push_passes")) s.push_passes = prm["push_passes"].cast<int>();
  if (s.push_passes < 1 || s.push_passes > 64)
    throw py::value_error("push_passes must be in [1, 64], got " + std::to_string(s.push_passes));
  s.slide_iterations = prm["slide_iterations"].cast<int>();
  if (s.slide_iterations < 1 || s.slide_iterations > kMaxSlideIterations)
    throw py::value_error("slide_iterations must be in [1, " + std::to_string(kMaxSlideIterations) +
                          "], got " + std::to_string(s.slide_iterations));
  s.layers = prm["layers"].cast<std::uint32_t>();
  s.stop_at_contact = prm["collision"].cast<std::string>() == "stop";
  s.decision_interval = prm["decision_interval"].cast<int>();
  if (prm.contains("decision_validity") && !prm["decision_validity"].is_none())
    s.decision_validity = prm["decision_validity"].cast<float>();
  s.stuck_distance = prm["stuck_distance"].cast<float>();
  s.stuck_time = prm["stuck_time"].cast<float>();

  auto self = std::make_unique<PySimulation>();
  self->agents = agents_obj;
  self->world = world;
  self->behaviours = behaviours;
  self->fields = std::move(fields);
  self->sim =
      given ? std::make_unique<Simulation>(agents, std::move(*given), std::move(c), s)
            : std::make_unique<Simulation>(agents, static_cast<std::size_t>(k), std::move(c), s);
  // An agent a step would carry beyond the coordinates every call accepts stops at their
  // edge (max_speed 1e3 at dt 1e6 put an agent at 1e9, and every later step raised).
  self->sim->set_coordinate_limit(kMaxCoordinate);
  return self;
}

// A simulation and its agents held by this thread for a sequence of calls that another
// thread must not split (a Flow's step: admissions, the step, the exits; each call takes
// the guard again, which the holding thread may). A context manager.
struct Hold {
  py::object sim;
  std::string what;  // the caller, named in the "in use" error
  std::unique_ptr<InUse> guard;
};

int visit_held(Hold& h, visitproc visit, void* arg) {
  Py_VISIT(h.sim.ptr());
  return 0;
}

}  // namespace

void bind_simulation(py::module_& m) {
  py::class_<Hold>(m, "SimulationHold", gc_visible<Hold>())
      .def("__enter__",
           [](Hold& h) {
             if (h.guard) throw std::runtime_error(h.what + ": this hold is entered already");
             PySimulation& s = h.sim.cast<PySimulation&>();
             h.guard.reset(new InUse({s.sim.get(), &agents_of(s.agents)}, h.what.c_str()));
           })
      .def("__exit__", [](Hold& h, const py::args&) { h.guard.reset(); });
  py::class_<PySimulation> cls(m, "Simulation",
                               "C++ simulation step (use contextsteer.Simulation).",
                               gc_visible<PySimulation>());
  bind_observers(m, cls);  // metrics and histories (observe.cpp)
  cls.def(py::init(&make), py::arg("world"), py::arg("agents"), py::arg("behaviours"),
          py::arg("config"), py::arg("motion"), py::arg("params"), py::arg("slots"))
      .def("_perceive",
           [](PySimulation& self) {
             const InUse guard({self.sim.get(), &agents_of(self.agents)}, "Simulation.perceive");
             check_agents(agents_of(self.agents));
             check_carried(*self.sim);
             refresh_world(self);
             GilRelease release;
             self.sim->perceive();
           })
      .def(
          "_decide_and_move",
          [](PySimulation& self, double dt) {
            checked_dt(dt);
            const InUse guard({self.sim.get(), &agents_of(self.agents)},
                              "Simulation.decide_and_move");
            check_agents(agents_of(self.agents));
            check_carried(*self.sim);
            check_maps(*self.sim);
            refresh_world(self);
            // The frame this move records, checked against the memory bound as a step
            // call's are (decide_and_move's own make_history_room then has room; it had
            // no bound, and staged steps grew a History past it: fuzz round 26).
            const long double memory = history_memory(*self.sim, 1);
            {
              GilRelease release;
              self.sim->make_history_room(1, memory);
              self.sim->decide_and_move(static_cast<float>(dt));
            }
            check_state(agents_of(self.agents));
          },
          py::arg("dt"))
      .def(
          "_step",
          [](PySimulation& self, double dt, std::int64_t steps) {
            checked_dt(dt);
            if (steps < 0)
              throw py::value_error("steps must be >= 0, got " + std::to_string(steps));
            const InUse guard({self.sim.get(), &agents_of(self.agents)}, "Simulation.step");
            check_agents(agents_of(self.agents));
            check_carried(*self.sim);
            refresh_world(self);
            // Room in the histories for every frame of the call, before its first step: each
            // slice made room for its own frames only, so a MemoryError came after thousands
            // of steps had run and said none had (fuzz round 24).
            // Checked against the memory this process may use before anything is
            // allocated (zero-filled, a buffer too large got the process killed).
            const long double memory = history_memory(*self.sim, static_cast<std::size_t>(steps));
            {
              GilRelease release;
              self.sim->make_history_room(static_cast<std::size_t>(steps), memory);
            }
            // Whole steps in slices of about 0.1 s of work, checking for Ctrl-C between
            // them (with the GIL): an interrupt leaves the state of the last whole step.
            std::size_t done = 0;
            while (done < static_cast<std::size_t>(steps)) {
              const std::size_t todo =
                  std::min<std::size_t>(self.slice, static_cast<std::size_t>(steps) - done);
              double sec = 0.0;
              {
                GilRelease release;
                // Timed without the GIL wait: a thread holding the GIL must not shrink the
                // slices (each would then wait for the GIL again).
                const auto t0 = std::chrono::steady_clock::now();
                self.sim->step(static_cast<float>(dt), todo);
                sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
              }
              done += todo;
              // Aim the next slice at ~50 ms of work (at least one step).
              self.slice = std::max<std::size_t>(
                  1, sec > 0.0 ? static_cast<std::size_t>(todo * 0.05 / sec) : todo * 2);
              if (PyErr_CheckSignals() != 0) throw py::error_already_set();
            }
            check_state(agents_of(self.agents));
          },
          py::arg("dt"), py::arg("steps") = 1)
      .def("_view",
           [](py::object self_obj, const std::string& name) -> py::object {
             PySimulation& self = self_obj.cast<PySimulation&>();
             Simulation& s = *self.sim;
             const auto n = static_cast<py::ssize_t>(s.size());
             const auto k = static_cast<py::ssize_t>(s.slots());
             if (name == "interest") return view_of(s.interest(), {n, k}, self_obj);
             if (name == "danger") return view_of(s.danger(), {n, k}, self_obj);
             if (name == "resolved") return view_of(s.resolved(), {n, k}, self_obj, false);
             if (name == "speed")  // (0, K) for no agents, as the other maps
               return s.has_speed_map() ? py::object(view_of(s.speed(), {n, k}, self_obj))
                                        : py::object(py::none());
             if (name == "sensed")
               return s.has_sensed() ? py::object(view_of(s.sensed(), {n, k}, self_obj, false))
                                     : py::object(py::none());
             if (name == "perceived_position")
               return view_of(s.perceived_position(), {n, 2}, self_obj, false);
             if (name == "perceived_heading")
               return view_of(s.perceived_heading(), {n}, self_obj, false);
             if (name == "chosen_direction") return view_of(s.direction(), {n, 2}, self_obj);
             if (name == "acceleration") return view_of(s.acceleration(), {n, 2}, self_obj, false);
             if (name == "strength") return view_of(s.strength(), {n}, self_obj);
             // Read-only: the core indexes the maps with it (hysteresis, commit).
             if (name == "chosen_slot") return view_of(s.slot(), {n}, self_obj, false);
             if (name == "wall_contacts") return view_of(s.wall_contacts(), {n}, self_obj);
             if (name == "overlaps") return view_of(s.overlaps(), {n}, self_obj);
             if (name == "still_time") return view_of(s.still_time(), {n}, self_obj);
             if (name == "stuck")
               return view_of(reinterpret_cast<bool*>(s.stuck()), {n}, self_obj, false);
             if (name == "braking")
               return view_of(reinterpret_cast<bool*>(s.braking()), {n}, self_obj, false);
             // Lewis's time slicing (decision_validity): read-only, the core schedules by them.
             if (name == "next_decision")
               return s.next_decision()
                          ? py::object(view_of(const_cast<std::uint64_t*>(s.next_decision()), {n},
                                               self_obj, false))
                          : py::object(py::none());
             if (name == "validity")
               return s.validity() ? py::object(view_of(const_cast<float*>(s.validity()), {n},
                                                        self_obj, false))
                                   : py::object(py::none());
             throw py::value_error("unknown Simulation view " + name);
           })
      .def("_behaviour_map",
           [](py::object self_obj, long b) -> py::object {
             Simulation& s = *self_obj.cast<PySimulation&>().sim;
             if (!s.config().record || b < 0 ||
                 static_cast<std::size_t>(b) >= s.config().behaviours.size())
               return py::none();
             // (No agents: an empty (0, K) map, as the other maps; its pointer is null.)
             float* p = s.behaviour_map(static_cast<std::size_t>(b));
             return view_of(
                 p, {static_cast<py::ssize_t>(s.size()), static_cast<py::ssize_t>(s.slots())},
                 self_obj);
           })
      .def("_state",
           [](PySimulation& self) {
             // The simulation's and its agents' state under one guard: a step in another
             // thread cannot fall between them (a copy with the step count of one step
             // and the positions of the next).
             const InUse guard({self.sim.get(), &agents_of(self.agents)},
                               "Simulation.save / pickle");
             // The world as it is now: an edit since the last step arms the push out of
             // walls (world_edited) that the copy must carry.
             if (!self.world.is_none())
               self.sim->set_world(self.world.cast<WorldHandle&>().snapshot());
             py::dict out;
             self.sim->for_each_state([&](const char* name, void* data, std::size_t bytes) {
               out[name] = py::bytes(static_cast<const char*>(data), bytes);
             });
             out["agents"] = agents_snapshot(self.agents);
             return out;
           })
      .def("_check_agents", [](PySimulation& self) { check_agents(agents_of(self.agents)); })
      .def(
          "_hold",
          [](py::object self, std::string what) {
            return Hold{std::move(self), std::move(what), nullptr};
          },
          py::arg("what") = "Flow step")
      .def("_set_state",
           [](PySimulation& self, const py::dict& state) {
             const InUse guard({self.sim.get()}, "Simulation.load");
             // Check everything first, then copy: a bad state never half-loads.
             std::vector<std::pair<void*, std::string>> plan;
             std::vector<bool> checked;  // by Simulation::check_state
             self.sim->for_each_state([&](const char* name, void* data, std::size_t bytes) {
               checked.push_back(Simulation::state_checked(name));
               if (!state.contains(name) && (std::string_view(name) == "fresh" ||
                                             std::string_view(name) == "start_pending")) {
                 // (start_pending: saved before the first step's exit from solids, which
                 // a restored run must not take again.)
                 // Saved before new agents decided at once under decision_interval: they
                 // had all decided (or waited for their turn), so none is new.
                 plan.emplace_back(data, std::string(bytes, '\0'));
                 return;
               }
               const std::string_view name_v(name);
               if (!state.contains(name)) {
                 // Files saved before the sensor's rays and the slots' generations were
                 // state load without them (their agents' generations are all 0 too).
                 if (std::string_view(name) == "sensed" ||
                     std::string_view(name) == "perceived_position" ||
                     std::string_view(name) == "perceived_heading" ||
                     std::string_view(name) == "metrics.generation" ||
                     std::string_view(name) == "seen_generation" ||
                     std::string_view(name) == "kinematic_seen" ||
                     std::string_view(name) == "next_decision" ||
                     std::string_view(name) == "next_time" ||
                     std::string_view(name) == "world_edited" ||
                     std::string_view(name) == "metrics.retired_agent_episodes" ||
                     std::string_view(name) == "metrics.retired_wall_episodes" ||
                     std::string_view(name) == "metrics.retired_agents" ||
                     std::string_view(name) == "metrics.born" ||
                     std::string_view(name) == "metrics.retired_arrivals" ||
                     std::string_view(name) == "metrics.retired_time_to_goal" ||
                     name_v.starts_with("metrics.retired_min_") ||  // (saved before them:
                     name_v == "metrics.retired_wall_steps" ||      // the run's removed
                     name_v == "metrics.retired_stuck" ||           // agents kept none)
                     name_v == "metrics.kinematic" ||  // (saved before it: none measured)
                     name_v == "metrics.anchor" ||     // (saved before it: on the line)
                     std::string_view(name) == "validity" ||
                     name_v == "decided_heading" ||  // (saved before it: NaN, the slot kept)
                     name_v == "decided_target" ||   // (saved before it: the targets then)
                     std::string_view(name) == "yielded_to" ||  // -1: nobody stepped aside for
                     // Saved before standoff: nobody has stood yet, nor backs off.
                     std::string_view(name) == "stood" || std::string_view(name) == "back_until")
                   return;
                 throw py::value_error(std::string("Simulation state: missing '") + name + "'");
               }
               auto b = state[name].cast<std::string>();
               // Files saved before these were kept in double hold them as float32: widened.
               const std::string_view nm(name);
               if (!b.empty() && b.size() * 2 == bytes && b.size() % sizeof(float) == 0 &&
                   (nm == "still" || nm == "metrics.lap_end" || nm.starts_with("classic.walk."))) {
                 std::vector<float> narrow(b.size() / sizeof(float));
                 std::memcpy(narrow.data(), b.data(), b.size());
                 std::string wide(bytes, '\0');
                 for (std::size_t q = 0; q < narrow.size(); ++q) {
                   const auto x = static_cast<double>(narrow[q]);
                   std::memcpy(wide.data() + q * sizeof x, &x, sizeof x);
                 }
                 b = std::move(wide);
               }
               if (b.size() != bytes)
                 throw py::value_error(std::string("Simulation state: '") + name + "' has " +
                                       std::to_string(b.size()) + " bytes, expected " +
                                       std::to_string(bytes) + " (a different configuration?)");
               plan.emplace_back(data, std::move(b));
             });
             // The indices and counts a step reads through (a crafted file's could write
             // past its buffers) are copied first and checked; if they are not a run's, their
             // old bytes go back and nothing else was copied. Only those few small buffers
             // are kept aside, not the whole state.
             std::vector<std::string> old(plan.size());
             for (std::size_t q = 0; q < plan.size(); ++q) {
               auto& [data, b] = plan[q];
               if (!checked[q] || b.empty()) continue;  // an empty buffer's data may be nullptr
               old[q].assign(static_cast<const char*>(data), b.size());
               std::memcpy(data, b.data(), b.size());
             }
             if (const std::string bad = self.sim->check_state(); !bad.empty()) {
               for (std::size_t q = 0; q < plan.size(); ++q)
                 if (!old[q].empty()) std::memcpy(plan[q].first, old[q].data(), old[q].size());
               throw py::value_error("Simulation state: " + bad + " (not a saved run's state)");
             }
             for (std::size_t q = 0; q < plan.size(); ++q)
               if (!checked[q] && !plan[q].second.empty())
                 std::memcpy(plan[q].first, plan[q].second.data(), plan[q].second.size());
           })
      // A step in another thread writes these: read them under the same guard as
      // metrics(), so such a read is a RuntimeError, not a data race.
      .def_property_readonly("time",
                             [](const PySimulation& s) {
                               const InUse guard({s.sim.get()}, "Simulation.time");
                               return s.sim->time();
                             })
      .def_property_readonly("step_count",
                             [](const PySimulation& s) {
                               const InUse guard({s.sim.get()}, "Simulation.step_count");
                               return s.sim->step_count();
                             })
      .def_property_readonly("slots", [](const PySimulation& s) { return s.sim->slots(); })
      .def_property_readonly("neighbor_radius", [](const PySimulation& s) {
        const InUse guard({s.sim.get(), &agents_of(s.agents)}, "Simulation.neighbor_radius");
        return shared_neighbor_radius(s.sim->config().behaviours, agents_of(s.agents).view(),
                                      s.sim->config().decision_phases > 1);
      });
  m.def(
      "sweep_circle",
      [](py::object world, const py::handle& start, const py::handle& displacement, double radius,
         int iterations, std::uint32_t layers) {
        // Coordinates and lengths within ±1e8, as everywhere (a start at 2e9 stopped at x =
        // 2482 against a wall spanning [0, 5]).
        auto p = input_coords(start, "start", {kAny, 2}, {"N", "2"});
        const py::ssize_t n = p.dim(0);
        auto d = input_coords(displacement, "displacement", {n, 2}, {"N", "2"});
        require_non_negative(radius, "radius");  // (within ±1e8: checked by the caller)
        if (iterations < 1 || iterations > kMaxSlideIterations)
          throw py::value_error("iterations must be in [1, " + std::to_string(kMaxSlideIterations) +
                                "]");
        auto snap = world.cast<WorldHandle&>().snapshot();
        auto out = new_array<float>({n, 2});
        auto contacts = new_array<std::int32_t>({n});
        // On the thread pool, in slices of 2^14 sweeps with a Ctrl-C check between them
        // (3 M sweeps ran one after another for 24 s, deaf to Ctrl-C). Each sweep is
        // independent: the results are those of one loop.
        float* o = out.mutable_data();
        std::int32_t* c = contacts.mutable_data();
        in_slices(
            static_cast<std::size_t>(n), std::size_t{1} << 14, [&](std::size_t b0, std::size_t e0) {
              parallel_for(e0 - b0, 64, [&](std::size_t b, std::size_t e) {
                for (std::size_t i = b0 + b; i < b0 + e; ++i) {
                  const Sweep s = sweep_circle(*snap, load2(p.data, i), load2(d.data, i),
                                               static_cast<float>(radius), iterations, layers);
                  store2(o, i, s.position);
                  c[i] = s.contacts;
                }
              });
            });
        return py::make_tuple(out, contacts);
      },
      py::arg("world"), py::arg("start"), py::arg("displacement"), py::arg("radius"),
      py::arg("iterations") = 4, py::arg("layers") = kAllLayers);
}

}  // namespace contextsteer::bindings
