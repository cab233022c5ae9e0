// SPDX-License-Identifier: MIT
// Bindings of Agents (zero-copy views of C++-owned state) and the neighbour search.
#include "gil.hpp"
#include "agents.hpp"
#include "in_use.hpp"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "arrays.hpp"
#include "contextsteer/neighbours.hpp"

namespace contextsteer::bindings {

Agents& agents_of(const py::handle& obj) {
  if (!py::isinstance<Agents>(obj))
    throw py::type_error("expected a contextsteer.Agents, got " +
                         std::string(py::str(py::type::of(obj).attr("__name__"))));
  // An instance whose __init__ never built the C++ part (refused, or a subclass's
  // __init__ that raised before calling it, or a bare __new__) holds no Agents: its
  // storage is uninitialised, and a read of it crashed the process (fuzz round 25: the
  // repr of a half-built subclass, shown by pytest -l).
  auto* inst = reinterpret_cast<py::detail::instance*>(obj.ptr());
  const auto v_h = inst->get_value_and_holder(py::detail::get_type_info(typeid(Agents)));
  if (!v_h.holder_constructed())
    throw py::type_error(std::string(py::str(py::type::of(obj).attr("__name__"))) +
                         " (not built): its __init__ did not run, or was refused");
  return *v_h.value_ptr<Agents>();
}

namespace {

py::object agents_view(py::object self, const std::string& name) {
  Agents& a = agents_of(self);
  const auto n = static_cast<py::ssize_t>(a.capacity());
  if (name == "position") return view_of(a.position(), {n, 2}, self);
  if (name == "velocity") return view_of(a.velocity(), {n, 2}, self);
  if (name == "heading") return view_of(a.heading(), {n}, self);
  if (name == "radius") return view_of(a.radius(), {n}, self);
  if (name == "max_speed") return view_of(a.max_speed(), {n}, self);
  if (name == "max_accel") return view_of(a.max_accel(), {n}, self);
  if (name == "max_turn_rate") return view_of(a.max_turn_rate(), {n}, self);
  if (name == "steer_force") return view_of(a.steer_force(), {n}, self);
  if (name == "target") return view_of(a.target(), {n, 2}, self);
  if (name == "group") return view_of(a.group(), {n}, self);
  if (name == "rng") return view_of(a.rng(), {n}, self);
  if (name == "generation") return view_of(a.generation(), {n}, self, false);     // add() owns it
  if (name == "generation (restore)") return view_of(a.generation(), {n}, self);  // unpickling
  if (name == "alive") {
    // uint8 storage seen as NumPy bool (one byte, 0/1): writes through the view stay 0/1.
    static_assert(sizeof(bool) == sizeof(std::uint8_t));
    return view_of(reinterpret_cast<bool*>(a.alive()), {n}, self);
  }
  if (name == "kinematic") return view_of(reinterpret_cast<bool*>(a.kinematic()), {n}, self);
  if (name == "waypoint") return view_of(reinterpret_cast<bool*>(a.waypoint()), {n}, self);
  throw py::value_error("unknown Agents attribute " + name);
}

}  // namespace

py::dict agents_snapshot(const py::object& self) {
  // The per-agent arrays the Python class lists in Agents.STATE, copied (with the GIL held;
  // the caller holds the agents' InUse guard, so no step writes them meanwhile).
  py::dict out;
  for (const auto& name : self.attr("STATE"))
    out[name] = agents_view(self, name.cast<std::string>()).attr("copy")();
  return out;
}

namespace {

py::array_t<std::int32_t> agents_add(py::object self, const py::handle& position,
                                     const py::handle& velocity, const py::handle& heading,
                                     const py::handle& radius, const py::handle& max_speed,
                                     const py::handle& max_accel, const py::handle& max_turn_rate,
                                     const py::handle& steer_force, const py::handle& group,
                                     const py::handle& target, const py::handle& kinematic) {
  Agents& a = agents_of(self);
  const InUse guard({&a}, "Agents.add");
  auto pos = input_coords(position, "Agents.add: position", {kAny, 2}, {"n", "2"});
  const py::ssize_t n = pos.dim(0);
  auto vel = input_coords(velocity, "Agents.add: velocity", {n, 2}, {"n", "2"});
  auto head = input_coords(heading, "Agents.add: heading", {n}, {"n"});
  auto rad = input_coords(radius, "Agents.add: radius", {n}, {"n"});
  auto vmax = input_coords(max_speed, "Agents.add: max_speed", {n}, {"n"});
  auto amax = input_coords(max_accel, "Agents.add: max_accel", {n}, {"n"});
  auto turn = input_coords(max_turn_rate, "Agents.add: max_turn_rate", {n}, {"n"});
  auto steer = input_coords(steer_force, "Agents.add: steer_force", {n}, {"n"});
  auto grp = check_array<const std::int32_t>(group, "Agents.add: group", {n}, {"n"});
  auto tgt = input_coords(target, "Agents.add: target", {n, 2}, {"n", "2"});
  auto kin = check_array<const bool>(kinematic, "Agents.add: kinematic", {n}, {"n"});
  for (const auto* c : {&rad, &vmax, &amax, &turn, &steer}) {
    for (std::size_t i = 0; i < c->size(); ++i) {
      if (c->data[i] < 0.0f)
        throw py::value_error("Agents.add: agent values must be >= 0, got " +
                              std::to_string(c->data[i]) + " at index " + std::to_string(i));
    }
  }
  AgentInit init;
  init.n = static_cast<std::size_t>(n);
  init.position = pos.data;
  init.velocity = vel.data;
  init.heading = head.data;
  init.radius = rad.data;
  init.max_speed = vmax.data;
  init.max_accel = amax.data;
  init.max_turn_rate = turn.data;
  init.steer_force = steer.data;
  init.group = grp.data;
  init.target = tgt.data;
  init.kinematic = reinterpret_cast<const std::uint8_t*>(kin.data);
  auto ids = new_array<std::int32_t>({n});
  // The slots are counted only when too few are free: counting first read every flag,
  // and adding one agent at a time cost time in proportion to the capacity (1.2 ms an
  // agent at a million; fuzz round 19). add() reads the flags up to the last slot it
  // takes, once (another thread may be writing the alive view), and adds nothing when
  // there are too few.
  if (!a.add(init, {ids.mutable_data(), static_cast<std::size_t>(n)}))
    throw py::value_error("Agents.add: capacity exceeded: adding " + std::to_string(n) +
                          " agents, " + std::to_string(a.capacity() - a.count()) +
                          " free slots of " + std::to_string(a.capacity()));
  return ids;
}

void agents_remove(Agents& a, const py::handle& ids_obj) {
  const InUse guard({&a}, "Agents.remove");
  auto ids = check_array<const std::int32_t>(ids_obj, "ids", {kAny}, {"m"});
  for (std::size_t r = 0; r < ids.size(); ++r) {
    const std::int32_t i = ids.data[r];
    if (i < 0 || static_cast<std::size_t>(i) >= a.capacity())
      throw py::index_error("Agents.remove: id " + std::to_string(i) + " at index " +
                            std::to_string(r) + " is out of range [0, " +
                            std::to_string(a.capacity()) + ")");
  }
  a.remove(ids.span());
}

}  // namespace

void fill_rows_interruptibly(NeighborTable& table, std::size_t rows) {
  // The rows in slices of about 50 ms of work without the GIL, checking for Ctrl-C (with
  // it) between them: rows are independent, so slicing changes no result. A row's cost
  // ranges from a few distance tests to every agent (a crowd packed in one cell at
  // distinct positions), so the slices are timed: the first of about 2^22 distance tests
  // (a query reads about nine cells of at most most_in_a_cell() agents; a call that
  // small runs in one slice), each next aimed at 50 ms from the last one's pace, growing
  // at most fourfold (the rows to come may be dearer than those just done).
  const double row_cost = 9.0 * static_cast<double>(table.grid().most_in_a_cell()) + 1.0;
  auto per = static_cast<std::size_t>(std::max(16.0, 0x1p22 / row_cost));
  for (std::size_t b = 0; b < rows;) {
    const std::size_t e = std::min(rows, b + per);
    double sec = 0.0;
    {
      GilRelease release;
      const auto t0 = std::chrono::steady_clock::now();
      table.fill_rows(b, e);
      sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    const double aim = sec > 0.0 ? static_cast<double>(e - b) * 0.05 / sec : 4.0 * (e - b);
    per = static_cast<std::size_t>(
        std::clamp(aim, 16.0, std::max(16.0, 4.0 * static_cast<double>(e - b))));
    b = e;
    if (b < rows && PyErr_CheckSignals() != 0) throw py::error_already_set();
  }
}

namespace {

py::tuple neighbours_py(const py::handle& positions, double radius, long max_neighbors,
                        const py::handle& alive) {
  // With `alive`, only the alive rows must be coordinates: dead rows are never read (an
  // agent marked dead by NaN, as Simulation.step, metrics and pickling accept).
  auto pos = alive.is_none()
                 ? input_coords(positions, "positions", {kAny, 2}, {"N", "2"})
                 : check_array<const float>(positions, "positions", {kAny, 2}, {"N", "2"});
  require_length(radius, "radius");
  if (max_neighbors < 0 || static_cast<std::size_t>(max_neighbors) > kMaxNeighbors)
    throw py::value_error("max_neighbours must be in [0, " + std::to_string(kMaxNeighbors) +
                          "], got " + std::to_string(max_neighbors));
  const py::ssize_t n = pos.dim(0);
  const std::uint8_t* alive_ptr = nullptr;
  if (!alive.is_none()) {
    auto al = check_array<const bool>(alive, "alive", {n}, {"N"});
    alive_ptr = reinterpret_cast<const std::uint8_t*>(al.data);
    for (py::ssize_t i = 0; i < n; ++i) {
      if (!alive_ptr[i]) continue;
      for (int c = 0; c < 2; ++c) {
        const float v = pos.data[2 * i + c];
        if (!(std::fabs(v) <= kMaxCoordinate))
          throw py::value_error("positions must be finite and within ±1e8 where alive, got " +
                                number_text(v) + " at index (" + std::to_string(i) + ", " +
                                std::to_string(c) + ")");
      }
    }
  }
  const auto m = static_cast<py::ssize_t>(max_neighbors);
  auto indices = new_array<std::int32_t>({n, m});
  auto counts = new_array<std::int32_t>({n});
  NeighborTable table;
  {
    GilRelease release;
    table.prepare(pos.data, alive_ptr, static_cast<std::size_t>(n), static_cast<float>(radius),
                  static_cast<std::size_t>(m));
  }
  fill_rows_interruptibly(table, static_cast<std::size_t>(n));
  const NeighborLists l = table.lists();
  std::copy_n(l.indices, n * m, indices.mutable_data());
  std::copy_n(l.counts, n, counts.mutable_data());
  return py::make_tuple(indices, counts);
}

}  // namespace

void bind_agents(py::module_& m) {
  py::class_<Agents>(m, "Agents",
                     "C++ state of a fixed number of agent slots (use contextsteer.Agents).")
      .def(py::init([](long capacity, std::uint64_t seed) {
             if (capacity < 0)
               throw py::value_error("capacity must be >= 0, got " + std::to_string(capacity));
             return new Agents(static_cast<std::size_t>(capacity), seed);
           }),
           py::arg("capacity"), py::arg("seed") = 0)
      // Every entry point reads the state through agents_of, which refuses an instance
      // whose C++ part was never built.
      .def_property_readonly("capacity",
                             [](const py::handle& self) { return agents_of(self).capacity(); })
      .def_property_readonly("count",
                             [](const py::handle& self) { return agents_of(self).count(); })
      .def_property_readonly("seed", [](const py::handle& self) { return agents_of(self).seed(); })
      .def("_view", &agents_view, py::arg("name"))
      .def("_snapshot",
           [](py::object self) {
             const InUse guard({&agents_of(self)}, "Agents (pickle)");
             return agents_snapshot(self);
           })
      .def("_add", &agents_add)
      .def(
          "_remove",
          [](const py::handle& self, const py::handle& ids) {
            agents_remove(agents_of(self), ids);
          },
          py::arg("ids"));
  m.def("neighbours", &neighbours_py, py::arg("positions"), py::arg("radius"),
        py::arg("max_neighbours"), py::arg("alive") = py::none());
}

}  // namespace contextsteer::bindings
