// SPDX-License-Identifier: MIT
// Bindings of navigation: NavField (fields over a world snapshot), Router (routes) and
// PathSet (per-agent paths for FollowPath).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#if defined(__GLIBCXX__)
#include <cxxabi.h>  // abi::__forced_unwind
#endif
#include <memory>
#include <string>
#include <vector>

#include "gil.hpp"
#include "arrays.hpp"
#include "contextsteer/nav_field.hpp"
#include "parallel.hpp"
#include "contextsteer/path.hpp"
#include "contextsteer/route.hpp"
#include "nav.hpp"
#include "world_handle.hpp"

namespace py = pybind11;

namespace contextsteer::bindings {

namespace {

/// One goal set from a dict {"points": (P,2), "segments": (S,4), "polygons": [(V,2), ...]}.
NavGoals goals_of(const py::handle& obj, std::size_t k) {
  const auto d = obj.cast<py::dict>();
  NavGoals g;
  const std::string at = "goals[" + std::to_string(k) + "]";
  if (d.contains("points") && !d["points"].is_none()) {
    auto a = input_coords(d["points"], (at + ".points").c_str(), {kAny, 2}, {"P", "2"});
    g.points.assign(a.data, a.data + a.size());
  }
  if (d.contains("segments") && !d["segments"].is_none()) {
    auto a = input_coords(d["segments"], (at + ".segments").c_str(), {kAny, 4}, {"S", "4"});
    g.segments.assign(a.data, a.data + a.size());
  }
  if (d.contains("polygons") && !d["polygons"].is_none()) {
    for (const auto& ring : d["polygons"].cast<py::list>()) {
      auto a = input_coords(ring, (at + ".polygons").c_str(), {kAny, 2}, {"V", "2"});
      if (a.dim(0) < 3)
        throw py::value_error(at + ".polygons: expected at least 3 points, got " +
                              std::to_string(a.dim(0)));
      g.rings.insert(g.rings.end(), a.data, a.data + a.size());
      g.ring_start.push_back(static_cast<std::int32_t>(g.rings.size() / 2));
    }
  }
  if (g.empty()) throw py::value_error(at + ": expected at least one point, segment or polygon");
  return g;
}

/// Builds `self`'s fields over the current snapshot of `world` for `goals` (parsed from the
/// Python goal sets `sets`) and swaps all three in, unless newer goals were set while it
/// built (`version`): then false, and the field is left as it is.
bool build_fields(PyNavField& self, const py::object& world, std::vector<NavGoals> goals,
                  std::uint64_t version, const py::object& sets) {
  auto snap = world.cast<WorldHandle&>().snapshot();
  // Refused before allocating when the fields would not fit in the memory this process
  // may use (many goal sets on a fine grid), as the other large allocations are.
  const double memory =
      py::module_::import("contextsteer.maps").attr("_physical_memory")().cast<double>();
  auto t0 = std::chrono::steady_clock::now();
  auto next = std::make_shared<NavField>();
  const auto poll = interrupt_poll();  // (asked with the GIL held)
  {
    // A new field no reader can see yet: queries and steps in other threads keep
    // reading the one they hold.
    GilRelease release;
    try {
      // Ctrl-C about every 20 ms of the build (NavField::StopPoll).
      // Its own copy of the goals: another thread may set new ones meanwhile.
      next->build(*snap, goals, self.cell, self.radius, self.layers, self.margin, memory, poll);
    } catch (const std::invalid_argument& e) {
      py::gil_scoped_acquire acquire;
      throw py::value_error(e.what());
    } catch (const NavInterrupted&) {
      py::gil_scoped_acquire acquire;
      throw py::error_already_set();  // the KeyboardInterrupt PyErr_CheckSignals set
    }
  }
  // The GIL is held again: the swap is atomic for every other Python thread. Goals set
  // since this build began win: its field is dropped (the next sync rebuilds for them if
  // the world moved on).
  if (version != self.goals_version) return false;
  self.build_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  self.field = std::move(next);
  self.world = snap;
  self.goals = std::move(goals);
  self.goal_sets = sets;
  return true;
}

void rebuild(PyNavField& self, const py::object& world) {
  // The newest goals asked for, not the ones of the field now (those are older while a
  // set_goals in another thread builds), with the version they were asked at.
  const py::object sets = self.wanted_sets;
  build_fields(self, world, self.wanted_goals, self.goals_version, sets);
}

Checked<const std::int32_t> which_of(const py::handle& which, py::ssize_t n) {
  Checked<const std::int32_t> w;
  if (which.is_none()) return w;
  w = check_array<const std::int32_t>(which, "which", {kAny}, {"N"});
  if (w.dim(0) != n)
    throw py::value_error("which: expected shape (" + std::to_string(n) + ",), got (" +
                          std::to_string(w.dim(0)) + ",)");
  return w;
}

}  // namespace

void sync_nav_field(PyNavField& self, const py::object& world) {
  if (world.cast<WorldHandle&>().current != self.world) rebuild(self, world);
}

void bind_nav(py::module_& m) {
  py::class_<PyNavField, std::shared_ptr<PyNavField>>(
      m, "NavField", "C++ navigation fields (use contextsteer.NavField).")
      .def(py::init([](const py::object& world, const py::list& goals, double cell, double radius,
                       std::uint32_t layers, double margin) {
             require_non_negative(radius, "radius");
             require_non_negative(margin, "margin");
             if (!(cell > 0.0) || !std::isfinite(cell))
               throw py::value_error("cell must be a finite number > 0, got " + number_text(cell));
             if (goals.empty())
               throw py::value_error("goals: expected at least one goal set, got 0");
             auto self = std::make_shared<PyNavField>();
             for (std::size_t k = 0; k < goals.size(); ++k)
               self->goals.push_back(goals_of(goals[k], k));
             self->cell = static_cast<float>(cell);
             self->radius = static_cast<float>(radius);
             self->layers = layers;
             self->margin = static_cast<float>(margin);
             self->goal_sets = goals;
             self->wanted_goals = self->goals;
             self->wanted_sets = goals;
             rebuild(*self, world);
             return self;
           }),
           py::arg("world"), py::arg("goals"), py::arg("cell"), py::arg("radius"),
           py::arg("layers"), py::arg("margin"))
      .def("rebuild", &rebuild, py::arg("world"))
      .def(
          "set_goals",
          [](PyNavField& self, const py::list& goals, const py::object& world) {
            if (goals.size() != self.goals.size())
              throw py::value_error("set_goals: expected " + std::to_string(self.goals.size()) +
                                    " goal set(s), as the field was built with, got " +
                                    std::to_string(goals.size()));
            std::vector<NavGoals> next;
            for (std::size_t k = 0; k < goals.size(); ++k) next.push_back(goals_of(goals[k], k));
            const std::uint64_t version = ++self.goals_version;
            self.wanted_goals = next;  // (with the version, before the GIL is released)
            self.wanted_sets = goals;
            try {
              return build_fields(self, world, std::move(next), version, goals);
#if defined(__GLIBCXX__)
            } catch (abi::__forced_unwind&) {
              // A daemon thread ended at exit (GilRelease could not take the GIL back): it
              // holds no GIL, so no Python object may be touched on the way out.
              throw;
#endif
            } catch (...) {
              // Refused (a grid too large, Ctrl-C): the field keeps its goals, and so do
              // the rebuilds after world edits, unless newer goals were asked for since.
              if (self.goals_version == version) {
                self.wanted_goals = self.goals;
                self.wanted_sets = self.goal_sets;
              }
              throw;
            }
          },
          py::arg("goals"), py::arg("world"),
          "Rebuilds for new goal sets; False when newer goals were set meanwhile (in another "
          "thread): their field stands.")
      .def_property_readonly("goal_sets", [](const PyNavField& s) { return s.goal_sets; })
      .def(
          "built_from",
          [](const PyNavField& self, const py::object& world) {
            return world.cast<WorldHandle&>().current == self.world;
          },
          py::arg("world"))
      .def_property_readonly("count", [](const PyNavField& s) { return s.field->count(); })
      .def_property_readonly("build_seconds", [](const PyNavField& s) { return s.build_seconds; })
      .def_property_readonly("blocking_radius",
                             [](const PyNavField& s) { return s.field->blocking_radius(); })
      .def_property_readonly("grid",
                             [](const PyNavField& s) {
                               const NavGrid& g = s.field->grid();
                               return py::make_tuple(g.x0, g.y0, g.cell, g.nx, g.ny);
                             })
      .def(
          "distance_grid",
          [](py::object self, long g) {
            const auto f = self.cast<const PyNavField&>().field;
            if (g < 0 || static_cast<std::size_t>(g) >= f->count())
              throw py::index_error("field index " + std::to_string(g) + " out of range");
            const NavGrid& gr = f->grid();
            // A copy: a rebuild (after a world edit) replaces the field.
            const auto d = f->distance(static_cast<std::size_t>(g));
            auto out = new_array<float>({gr.ny, gr.nx});
            std::copy(d.begin(), d.end(), out.mutable_data());
            return out;
          },
          py::arg("g"))
      .def(
          "descent_grid",
          [](py::object self, long g) {
            const auto f = self.cast<const PyNavField&>().field;
            if (g < 0 || static_cast<std::size_t>(g) >= f->count())
              throw py::index_error("field index " + std::to_string(g) + " out of range");
            const NavGrid& gr = f->grid();
            const auto d = f->descent(static_cast<std::size_t>(g));
            auto out = new_array<float>({gr.ny, gr.nx, 2});
            std::copy(d.begin(), d.end(), out.mutable_data());
            return out;
          },
          py::arg("g"))
      .def_property_readonly("blocked",
                             [](py::object self) {
                               const auto f = self.cast<const PyNavField&>().field;
                               const NavGrid& gr = f->grid();
                               auto out = new_array<bool>({gr.ny, gr.nx});
                               const auto b = f->blocked();
                               std::copy(b.begin(), b.end(), out.mutable_data());
                               return out;
                             })
      .def(
          "query",
          [](const PyNavField& self, const py::handle& points, const py::handle& which,
             double look_ahead) {
            auto p = input_coords(points, "points", {kAny, 2}, {"N", "2"});
            const py::ssize_t n = p.dim(0);
            auto w = which_of(which, n);
            require_non_negative(look_ahead, "look_ahead");
            auto dist = new_array<float>({n});
            auto dir = new_array<float>({n, 2});
            std::span<float> ds(dist.mutable_data(), static_cast<std::size_t>(n));
            std::span<float> vs(dir.mutable_data(), static_cast<std::size_t>(2 * n));
            std::span<const std::int32_t> ws = w.data ? w.span() : std::span<const std::int32_t>{};
            const auto f = self.field;  // held: a rebuild in another thread replaces it
            {
              GilRelease release;
              nav_query(*f, p.span(), ws, ds, vs);
              if (look_ahead > 0.0) {
                const auto count = static_cast<std::int32_t>(f->count());
                parallel_for(static_cast<std::size_t>(n), 256, [&](std::size_t s, std::size_t e) {
                  for (std::size_t i = s; i < e; ++i) {
                    const std::int32_t g = ws.empty() ? 0 : ws[i];
                    if (g < 0 || g >= count) continue;
                    const Vec2 d = f->pulled_direction_at(static_cast<std::size_t>(g),
                                                          {p.data[2 * i], p.data[2 * i + 1]},
                                                          static_cast<float>(look_ahead));
                    vs[2 * i] = d.x;
                    vs[2 * i + 1] = d.y;
                  }
                });
              }
            }
            return py::make_tuple(dist, dir);
          },
          py::arg("points"), py::arg("which") = py::none(), py::arg("look_ahead") = 0.0)
      .def(
          "visible",
          [](const PyNavField& self, const py::handle& a, const py::handle& b) {
            auto pa = input_coords(a, "a", {kAny, 2}, {"N", "2"});
            auto pb = input_coords(b, "b", {pa.dim(0), 2}, {"N", "2"});
            auto out = new_array<bool>({pa.dim(0)});
            bool* o = out.mutable_data();
            for (py::ssize_t i = 0; i < pa.dim(0); ++i)
              o[i] = self.field->visible({pa.data[2 * i], pa.data[2 * i + 1]},
                                         {pb.data[2 * i], pb.data[2 * i + 1]});
            return out;
          },
          py::arg("a"), py::arg("b"));

  m.def(
      "route",
      [](const py::object& world, const py::handle& starts, const py::handle& goals, double radius,
         std::uint32_t layers, int arc_points) {
        require_non_negative(radius, "radius");
        // Above 256 the bound 1/cos(π/m) gains under 1e-4 while the graph's edges grow as
        // m² per pair of wall ends.
        if (arc_points < 4 || arc_points > 256)
          throw py::value_error("arc_points must be in [4, 256], got " +
                                std::to_string(arc_points));
        auto s = input_coords(starts, "starts", {kAny, 2}, {"N", "2"});
        auto g = input_coords(goals, "goals", {s.dim(0), 2}, {"N", "2"});
        auto snap = world.cast<WorldHandle&>().snapshot();
        std::vector<float> pts;
        std::vector<std::int64_t> offsets;
        std::size_t corners = 0;
        bool stopped = false;
        const auto poll = interrupt_poll();  // (asked with the GIL held)
        {
          GilRelease release;
          Router r;
          // Ctrl-C between blocks of the graph's pair tests.
          stopped = !r.build(*snap, static_cast<float>(radius), layers, arc_points, poll);
          if (!stopped) {
            corners = r.corners().size() / 2;
            route_all(r, s.span(), g.span(), pts, offsets);
          }
        }
        if (stopped) throw py::error_already_set();
        auto p = new_array<float>({static_cast<py::ssize_t>(pts.size() / 2), 2});
        std::copy(pts.begin(), pts.end(), p.mutable_data());
        auto o = new_array<std::int64_t>({static_cast<py::ssize_t>(offsets.size())});
        std::copy(offsets.begin(), offsets.end(), o.mutable_data());
        return py::make_tuple(p, o, corners);
      },
      py::arg("world"), py::arg("starts"), py::arg("goals"), py::arg("radius"), py::arg("layers"),
      py::arg("arc_points") = 12);

  py::class_<PathSet, std::shared_ptr<PathSet>>(
      m, "PathSet", "Paths followed per agent (use contextsteer.FollowPath).")
      .def(py::init([](const py::list& paths) {
             auto self = std::make_shared<PathSet>();
             for (const auto& p : paths) {
               if (p.is_none()) {
                 self->keep.push_back(nullptr);
                 self->ptrs.push_back(nullptr);
                 continue;
               }
               auto sp = p.cast<std::shared_ptr<Path>>();
               self->keep.push_back(sp);
               self->ptrs.push_back(sp.get());
             }
             return self;
           }),
           py::arg("paths"))
      .def("__len__", [](const PathSet& s) { return s.ptrs.size(); });
}

}  // namespace contextsteer::bindings
