// SPDX-License-Identifier: MIT
// Bindings of the simulation's observers: run metrics (views) and History recorders.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>

#include "agents.hpp"
#include "arrays.hpp"
#include "contextsteer/history.hpp"
#include "contextsteer/metrics.hpp"
#include "in_use.hpp"
#include "simulation_handle.hpp"
#include "world_handle.hpp"

namespace contextsteer::bindings {

namespace {

/// What contextsteer._core.History wraps: the recorder and the simulation recording into
/// it. Dropping the object detaches the recorder.
struct PyHistory {
  py::object sim;
  std::shared_ptr<History> history;
  std::size_t n = 0, k = 0;
  bool attached = true;

  void detach() {
    if (attached && history) {
      Simulation& s = *sim.cast<PySimulation&>().sim;
      s.detach(history.get());
      // Free its frames now unless a step runs on another thread (that step drops it): a
      // simulation not stepped again held every detached history's frames for good.
      try {
        const InUse guard({&s}, "History.detach");
        s.prune_histories();
      } catch (const std::runtime_error&) {
      }
    }
    attached = false;
  }
  ~PyHistory() {
    if (attached && history && sim && Py_IsInitialized()) {
      try {
        detach();
      } catch (...) {  // never throw from a destructor
      }
    }
  }
};

int visit_held(PyHistory& h, visitproc visit, void* arg) {
  Py_VISIT(h.sim.ptr());
  return 0;
}

void refresh_world(PySimulation& self) {
  self.sim->set_world(self.world.is_none() ? nullptr : self.world.cast<WorldHandle&>().snapshot());
}

/// A view of one field of a history's storage generation; the capsule keeps it alive.
template <class T>
py::object frames_view(const std::shared_ptr<HistoryFrames>& buf, T* data,
                       std::vector<py::ssize_t> shape) {
  auto* keep = new std::shared_ptr<HistoryFrames>(buf);
  py::capsule owner(keep, [](void* p) { delete static_cast<std::shared_ptr<HistoryFrames>*>(p); });
  return view_of(data, std::move(shape), owner, false);
}

}  // namespace

namespace {

/// One view of a History's frames as `snap` (History::snapshot()) has them.
py::object history_view(const History& history,
                        const std::pair<std::shared_ptr<HistoryFrames>, std::size_t>& snap,
                        const std::string& name) {
  const auto& buf = snap.first;
  const auto t = static_cast<py::ssize_t>(snap.second);
  const auto n = static_cast<py::ssize_t>(buf->n), k = static_cast<py::ssize_t>(buf->k);
  if (name == "steps") return frames_view(buf, buf->step.data(), {t});
  if (name == "times") return frames_view(buf, buf->time.data(), {t});
  if (name == "positions") return frames_view(buf, buf->position.data(), {t, n, 2});
  if (name == "velocities") return frames_view(buf, buf->velocity.data(), {t, n, 2});
  if (name == "headings") return frames_view(buf, buf->heading.data(), {t, n});
  if (name == "groups") return frames_view(buf, buf->group.data(), {t, n});
  if (name == "generations") return frames_view(buf, buf->generation.data(), {t, n});
  if (name == "radii") return frames_view(buf, buf->radius.data(), {t, n});
  if (name == "alive") return frames_view(buf, reinterpret_cast<bool*>(buf->alive.data()), {t, n});
  if (name == "series")
    return frames_view(buf, buf->series.data(), {t, static_cast<py::ssize_t>(Series::kCount)});
  if (name == "interest" || name == "danger") {
    if (!buf->maps) return py::none();
    return frames_view(buf, (name == "interest" ? buf->interest : buf->danger).data(), {t, n, k});
  }
  if (name == "perceived_positions" || name == "perceived_headings") {
    if (!buf->maps) return py::none();
    if (name == "perceived_headings")
      return frames_view(buf, buf->perceived_heading.data(), {t, n});
    return frames_view(buf, buf->perceived_position.data(), {t, n, 2});
  }
  if (name == "sensed") {
    const float* sensed = history.sensed(*buf);
    if (!sensed) return py::none();
    return frames_view(buf, const_cast<float*>(sensed), {t, n, k});
  }
  if (name == "progress") {
    if (!buf->progress) return py::none();
    return frames_view(buf, buf->along.data(), {t, n});
  }
  throw py::value_error("unknown History view " + name);
}

}  // namespace

void bind_observers(py::module_& m, py::class_<PySimulation>& cls) {
  cls.def(
         "_configure_metrics",
         [](PySimulation& self, bool enabled, double goal_radius, py::object path, bool overtakes,
            double tolerance, double clearance_range, std::uint32_t layers) {
           for (double v : {goal_radius, tolerance, clearance_range})
             if (!std::isfinite(v)) throw py::value_error("metrics: parameters must be finite");
           if (tolerance < 0.0 || tolerance >= 1.0)
             throw py::value_error("metrics: contact_tolerance must be in [0, 1), got " +
                                   number_text(tolerance));
           MetricsParams p;
           p.enabled = enabled;
           p.goal_radius = static_cast<float>(goal_radius);
           p.path = path.is_none() ? nullptr : &path.cast<const Path&>();
           p.overtakes = overtakes;
           p.contact_tolerance = static_cast<float>(tolerance);
           p.clearance_range = static_cast<float>(clearance_range);
           p.layers = layers;
           const InUse guard({self.sim.get(), &agents_of(self.agents)},
                             "Simulation.configure_metrics");
           // The metrics measure the agents' starting state (path offsets, distances).
           check_agents(agents_of(self.agents));
           self.metrics_path = path;
           refresh_world(self);
           self.sim->configure_metrics(p);
         },
         py::arg("enabled"), py::arg("goal_radius"), py::arg("path"), py::arg("overtakes"),
         py::arg("contact_tolerance"), py::arg("clearance_range"), py::arg("layers"))
      .def("_metrics_info",
           [](PySimulation& self) {
             Metrics& mt = self.sim->metrics();
             py::dict d;
             d["enabled"] = mt.params().enabled;  // as configured (also with 0 agents)
             d["steps"] = mt.steps();
             d["start_time"] = mt.start_time();
             d["goal_radius"] = mt.params().goal_radius;
             d["contact_tolerance"] = mt.params().contact_tolerance;
             d["clearance_range"] = mt.clearance_range();
             d["path_length"] = mt.path_length_total();
             d["closed_path"] = mt.params().path != nullptr && mt.params().path->closed();
             d["overtakes"] = mt.params().overtakes;
             d["run_agent_episodes"] = mt.run_agent_episodes();
             d["run_wall_episodes"] = mt.run_wall_episodes();
             d["retired_agents"] = mt.retired_agents();
             d["retired_arrivals"] = mt.retired_arrivals();
             d["retired_time_to_goal"] = mt.retired_time_to_goal();
             d["retired_min_wall"] = mt.retired_min_wall();
             d["retired_min_agent"] = mt.retired_min_agent();
             d["retired_wall_steps"] = mt.retired_wall_steps();
             d["retired_stuck"] = mt.retired_stuck();
             return d;
           })
      .def("_metrics_snapshot",
           [](py::object self_obj, const py::list& names) {
             // Everything Simulation.metrics() summarises, copied under the guard: a step in
             // another thread raises "in use" instead of a dict of two steps.
             PySimulation& self = self_obj.cast<PySimulation&>();
             const InUse guard({self.sim.get(), &agents_of(self.agents)}, "Simulation.metrics");
             py::dict views;
             for (const auto& name : names)
               views[name] = self_obj.attr("_metric_view")(name).attr("copy")();
             // The agents' generations: a slot reused since the last update (metrics()
             // read between an add and the next step) still holds the last occupant's row.
             views["agent_generation"] = self.agents.attr("generation").attr("copy")();
             views["agent_kinematic"] = self.agents.attr("kinematic").attr("copy")();
             return py::make_tuple(self_obj.attr("_metrics_info")(), views,
                                   self.agents.attr("alive").attr("copy")(), self.sim->time(),
                                   self_obj.attr("_view")("stuck").attr("copy")());
           })
      .def("_metric_view",
           [](py::object self_obj, const std::string& name) -> py::object {
             Metrics& mt = self_obj.cast<PySimulation&>().sim->metrics();
             const auto n = static_cast<py::ssize_t>(mt.size());
             if (name == "wall_episodes") return view_of(mt.wall_episodes(), {n}, self_obj, false);
             if (name == "agent_episodes")
               return view_of(mt.agent_episodes(), {n}, self_obj, false);
             if (name == "wall_steps") return view_of(mt.wall_steps(), {n}, self_obj, false);
             if (name == "alive_steps") return view_of(mt.alive_steps(), {n}, self_obj, false);
             if (name == "generation") return view_of(mt.seen_generation(), {n}, self_obj, false);
             if (name == "born") return view_of(mt.born(), {n}, self_obj, false);
             if (name == "travel_steps") return view_of(mt.travel_steps(), {n}, self_obj, false);
             if (name == "min_wall_clearance")
               return view_of(mt.min_wall_clearance(), {n}, self_obj, false);
             if (name == "min_agent_clearance")
               return view_of(mt.min_agent_clearance(), {n}, self_obj, false);
             if (name == "wall_clearance")
               return view_of(mt.wall_clearance(), {n}, self_obj, false);
             if (name == "agent_clearance")
               return view_of(mt.agent_clearance(), {n}, self_obj, false);
             if (name == "time_to_goal") return view_of(mt.time_to_goal(), {n}, self_obj, false);
             if (name == "path_length") return view_of(mt.path_length(), {n}, self_obj, false);
             if (name == "effort") return view_of(mt.effort(), {n}, self_obj, false);
             if (name == "jitter") return view_of(mt.jitter(), {n}, self_obj, false);
             if (name == "progress") return view_of(mt.progress(), {n}, self_obj, false);
             if (name == "start_offset") return view_of(mt.start_offset(), {n}, self_obj, false);
             if (name == "laps") return view_of(mt.laps(), {n}, self_obj, false);
             if (name == "last_lap_time") return view_of(mt.last_lap_time(), {n}, self_obj, false);
             if (name == "best_lap_time") return view_of(mt.best_lap_time(), {n}, self_obj, false);
             if (name == "lap_end_time") return view_of(mt.lap_end_time(), {n}, self_obj, false);
             if (name == "overtakes") return view_of(mt.overtakes(), {n}, self_obj, false);
             if (name == "kinematic")
               return view_of(reinterpret_cast<bool*>(mt.measured_kinematic()), {n}, self_obj,
                              false);
             if (name == "ever_stuck")
               return view_of(reinterpret_cast<bool*>(mt.ever_stuck()), {n}, self_obj, false);
             throw py::value_error("unknown metric " + name);
           })
      .def(
          "_record",
          [](py::object self_obj, long every, bool maps, long reserve) {
            if (every < 1)
              throw py::value_error("every must be >= 1, got " + std::to_string(every));
            if (reserve < 1)
              throw py::value_error("reserve must be >= 1, got " + std::to_string(reserve));
            PySimulation& self = self_obj.cast<PySimulation&>();
            const InUse guard({self.sim.get(), &agents_of(self.agents)}, "Simulation.record");
            Simulation& s = *self.sim;
            auto h = std::make_shared<History>(s.size(), s.slots(), static_cast<std::size_t>(every),
                                               maps, s.metrics().params().path != nullptr,
                                               s.step_count(), static_cast<std::size_t>(reserve));
            // Frame 0: the state now.
            h->capture(s.step_count(), s.time(), agents_of(self.agents).view(), s.interest(),
                       s.danger(), s.sensed(), {s.perceived_position(), s.perceived_heading()},
                       s.metrics(), s.stuck());
            s.attach(h);
            auto out = std::make_unique<PyHistory>();
            out->sim = self_obj;
            out->history = h;
            out->n = s.size();
            out->k = s.slots();
            return out;
          },
          py::arg("every"), py::arg("maps"), py::arg("reserve"));

  py::class_<PyHistory>(m, "History", "Recorder of a simulation (use contextsteer.History).",
                        gc_visible<PyHistory>())
      .def_property_readonly("frames", [](const PyHistory& h) { return h.history->frames(); })
      .def_property_readonly("every", [](const PyHistory& h) { return h.history->every(); })
      .def_property_readonly("attached", [](const PyHistory& h) { return h.attached; })
      .def_property_readonly("has_maps",
                             [](const PyHistory& h) { return h.history->buffer()->maps; })
      .def_property_readonly("has_progress",
                             [](const PyHistory& h) { return h.history->buffer()->progress; })
      .def_property_readonly(
          "series_names",
          [](const PyHistory&) {
            return std::vector<std::string>{
                "agent_collisions", "wall_collisions", "min_clearance", "mean_speed",
                "arrived",          "stuck",           "mean_progress", "laps"};
          })
      .def("detach", &PyHistory::detach)
      .def("_view",
           [](const PyHistory& h, const std::string& name) {
             return history_view(*h.history, h.history->snapshot(), name);
           })
      .def("_views", [](const PyHistory& h, const py::list& names) {
        // Several views of one moment (the recording thread may add frames meanwhile).
        const auto snap = h.history->snapshot();
        py::dict out;
        for (const auto& name : names)
          out[name] = history_view(*h.history, snap, name.cast<std::string>());
        return out;
      });
}

}  // namespace contextsteer::bindings
