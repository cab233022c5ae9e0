// SPDX-License-Identifier: MIT
// Bindings of the world and its queries: World (copy-on-write), raycast, slot_raycast, nearest, inside.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "gil.hpp"
#include "arrays.hpp"
#include "contextsteer/nearest.hpp"
#include "contextsteer/raycast.hpp"
#include "contextsteer/world.hpp"
#include "world_handle.hpp"

namespace py = pybind11;

namespace contextsteer::bindings {
namespace {

[[noreturn]] void fail(const std::string& text) { throw py::value_error(text); }

std::string num(float v) { return number_text(v); }

// A capsule that keeps one geometry snapshot alive: the base of every view we hand out.
py::capsule owner_of(const std::shared_ptr<World>& w) {
  auto* keep = new std::shared_ptr<World>(w);
  return py::capsule(keep, [](void* p) { delete static_cast<std::shared_ptr<World>*>(p); });
}

// Checks a point list (P, 2) for polylines and polygons: finite, no zero-length edges, enough
// points after dropping a repeated closing point. Returns the points to use.
std::vector<float> ring_points(const py::handle& obj, const char* what, bool closed,
                               std::size_t min_points) {
  auto a = input_coords(obj, what, {kAny, 2}, {"P", "2"});
  std::vector<float> pts(a.data, a.data + a.size());
  std::size_t p = pts.size() / 2;
  if (closed && p >= 2 && pts[0] == pts[2 * p - 2] && pts[1] == pts[2 * p - 1]) {
    pts.resize(pts.size() - 2);  // a ring given with its first point repeated at the end
    --p;
  }
  // Distinct points, not points: [[0, 0], [1, 0], [0, 0], [1, 0]] is a ring of two (and a
  // ring that float32 collapses reads as what it is, not as a repeated closing point).
  std::vector<std::pair<float, float>> distinct(p);
  for (std::size_t i = 0; i < p; ++i) distinct[i] = {pts[2 * i], pts[2 * i + 1]};
  std::sort(distinct.begin(), distinct.end());
  const auto d =
      static_cast<std::size_t>(std::unique(distinct.begin(), distinct.end()) - distinct.begin());
  if (d < min_points) {
    fail(std::string(what) + ": expected at least " + std::to_string(min_points) +
         " distinct points, got " + std::to_string(d));
  }
  if (closed && p >= 3 && pts[0] == pts[2 * p - 2] && pts[1] == pts[2 * p - 1]) {
    fail(std::string(what) +
         ": the last point repeats the first one twice (zero-length closing segment; points "
         "within float32 rounding of each other are equal once stored)");
  }
  for (std::size_t i = 0; i + 1 < p; ++i) {
    if (pts[2 * i] == pts[2 * i + 2] && pts[2 * i + 1] == pts[2 * i + 3]) {
      fail(std::string(what) + ": points " + std::to_string(i) + " and " + std::to_string(i + 1) +
           " are equal as float32 (zero-length segment " + std::to_string(i) + ")");
    }
  }
  return pts;
}

py::array_t<std::int32_t> id_range(std::int32_t first, std::size_t n) {
  auto ids = new_array<std::int32_t>({static_cast<py::ssize_t>(n)});
  auto* p = ids.mutable_data();
  for (std::size_t i = 0; i < n; ++i) p[i] = first + static_cast<std::int32_t>(i);
  return ids;
}

SlotMode slot_mode(const std::string& mode) {
  if (mode == "auto") return SlotMode::kAuto;
  if (mode == "gather") return SlotMode::kGather;
  if (mode == "per_ray") return SlotMode::kPerRay;
  if (mode == "strips") return SlotMode::kStrips;
  if (mode == "sectors") return SlotMode::kSectors;
  fail("method: expected 'auto', 'gather', 'per_ray', 'strips' or 'sectors', got '" + mode + "'");
}

void check_max_dist(const Checked<const float>& m, std::size_t n, const char* what) {
  if (m.size() != 1 && m.size() != n) {
    fail(std::string(what) + ": expected shape (1,) or (" + std::to_string(n) + ",), got " +
         shape_text(m.shape));
  }
  for (std::size_t i = 0; i < m.size(); ++i) {
    if (m.data[i] < 0.0f)
      fail(std::string(what) + ": expected values >= 0, got " + num(m.data[i]) + " at index " +
           std::to_string(i));
  }
}

// Rays per slice at most (in_slices times them: a ray among long walls that every cell
// lists can cost a thousand times a plain one).
constexpr std::size_t kRaysPerSlice = std::size_t{1} << 18;

}  // namespace

void bind_world(py::module_& m) {
  py::class_<WorldHandle>(m, "World",
                          "Static obstacles with a uniform-grid index (see contextsteer.World).")
      .def(py::init<>())
      .def(
          "add_segments",
          [](WorldHandle& self, const py::handle& segments, std::uint32_t layers) {
            auto a = input_coords(segments, "segments", {kAny, 4}, {"M", "4"});
            const std::size_t n = static_cast<std::size_t>(a.dim(0));
            for (std::size_t i = 0; i < n; ++i) {
              const float* s = a.data + 4 * i;
              if (s[0] == s[2] && s[1] == s[3])
                fail("segments: segment " + std::to_string(i) +
                     " has zero length (its ends are equal as float32)");
            }
            auto next = self.edit();
            const std::int32_t first = next->add_segments(a.span(), layers);
            self.current = next;
            return id_range(first, n);
          },
          py::arg("segments"), py::arg("layers"))
      .def(
          "set_layers",
          [](WorldHandle& self, const py::array_t<std::int32_t, py::array::c_style>& ids,
             std::uint32_t layers) {
            if (ids.ndim() != 1) fail("set_layers: ids must be one-dimensional");
            const std::int32_t* p = ids.data();
            const auto count = static_cast<std::int64_t>(self.current->obstacle_count());
            for (py::ssize_t i = 0; i < ids.shape(0); ++i)
              if (p[i] < 0 || p[i] >= count)
                fail("set_layers: obstacle id " + std::to_string(p[i]) + " is not in [0, " +
                     std::to_string(count) + ")");
            auto next = self.edit();
            next->set_layers({p, static_cast<std::size_t>(ids.shape(0))}, layers);
            self.current = next;
          },
          py::arg("ids"), py::arg("layers"))
      .def(
          "add_polyline",
          [](WorldHandle& self, const py::handle& points, bool closed, std::uint32_t layers) {
            auto pts = ring_points(points, "points", closed, 2);
            auto next = self.edit();
            const std::int32_t id = next->add_polyline(pts, closed, layers);
            self.current = next;
            return id;
          },
          py::arg("points"), py::arg("closed"), py::arg("layers"))
      .def(
          "add_polygon",
          [](WorldHandle& self, const py::handle& ring, std::uint32_t layers,
             const py::list& holes) {
            auto pts = ring_points(ring, "ring", true, 3);
            std::vector<std::vector<float>> hole_pts;
            for (std::size_t h = 0; h < holes.size(); ++h) {
              const std::string what = "holes[" + std::to_string(h) + "]";
              hole_pts.push_back(ring_points(holes[h], what.c_str(), true, 3));
            }
            std::vector<std::span<const float>> spans(hole_pts.begin(), hole_pts.end());
            auto next = self.edit();
            const std::int32_t id = spans.empty() ? next->add_polygon(pts, layers)
                                                  : next->add_polygon(pts, spans, layers);
            self.current = next;
            return id;
          },
          py::arg("ring"), py::arg("layers"), py::arg("holes") = py::list())
      .def(
          "add_boxes",
          [](WorldHandle& self, const py::handle& centers, const py::handle& half_extents,
             const py::handle& angles, std::uint32_t layers) {
            auto c = input_coords(centers, "centers", {kAny, 2}, {"B", "2"});
            auto h = input_f32(half_extents, "half_extents", {c.dim(0), 2}, {"B", "2"});
            auto a = input_f32(angles, "angles", {c.dim(0)}, {"B"});
            const auto n = static_cast<std::size_t>(c.dim(0));
            for (std::size_t i = 0; i < n; ++i) {
              const float hx = h.data[2 * i], hy = h.data[2 * i + 1];
              const std::string row = " (box " + std::to_string(i) + ")";
              if (!(hx > 0.0f && hx <= kMaxCoordinate && hy > 0.0f && hy <= kMaxCoordinate))
                fail("half_extents must be numbers in (0, 1e8], got (" + num(hx) + ", " + num(hy) +
                     ")" + row);
              if (!std::isfinite(a.data[i]))
                fail("angles must be finite, got " + num(a.data[i]) + row);
              const double reach = std::hypot(static_cast<double>(hx), static_cast<double>(hy));
              if (!(std::fabs(c.data[2 * i]) + reach <= kMaxCoordinate &&
                    std::fabs(c.data[2 * i + 1]) + reach <= kMaxCoordinate))
                fail("add_boxes: a box's corners must lie within ±1e+08" + row);
            }
            // One edit for all (one add_box call copies the world: 66 µs a box at 16k).
            auto next = self.edit();
            std::int32_t first = static_cast<std::int32_t>(next->obstacle_count());
            for (std::size_t i = 0; i < n; ++i)
              next->add_box({c.data[2 * i], c.data[2 * i + 1]}, {h.data[2 * i], h.data[2 * i + 1]},
                            a.data[i], layers);
            self.current = next;
            return id_range(first, n);
          },
          py::arg("centers"), py::arg("half_extents"), py::arg("angles"), py::arg("layers"))
      .def(
          "add_rects",
          [](WorldHandle& self, const py::handle& lo, const py::handle& hi, std::uint32_t layers) {
            auto a = input_coords(lo, "lo", {kAny, 2}, {"B", "2"});
            auto b = input_coords(hi, "hi", {a.dim(0), 2}, {"B", "2"});
            const auto n = static_cast<std::size_t>(a.dim(0));
            for (std::size_t i = 0; i < n; ++i)
              if (!(a.data[2 * i] < b.data[2 * i] && a.data[2 * i + 1] < b.data[2 * i + 1]))
                fail("add_rects: expected lo < hi, got (" + num(a.data[2 * i]) + ", " +
                     num(a.data[2 * i + 1]) + ") and (" + num(b.data[2 * i]) + ", " +
                     num(b.data[2 * i + 1]) + ") (box " + std::to_string(i) + ")");
            auto next = self.edit();  // one edit for all, as add_boxes
            std::int32_t first = static_cast<std::int32_t>(next->obstacle_count());
            for (std::size_t i = 0; i < n; ++i)
              next->add_rect({a.data[2 * i], a.data[2 * i + 1]}, {b.data[2 * i], b.data[2 * i + 1]},
                             layers);
            self.current = next;
            return id_range(first, n);
          },
          py::arg("lo"), py::arg("hi"), py::arg("layers"))
      .def(
          "add_box",
          [](WorldHandle& self, float cx, float cy, float hx, float hy, float angle,
             std::uint32_t layers) {
            // Same range as every other coordinate (kMaxCoordinate), corners included.
            auto coord = [](float v, const char* what) {
              if (!(std::fabs(v) <= kMaxCoordinate))
                fail(std::string(what) + ": expected a finite value within ±1e+08, got " + num(v));
            };
            coord(cx, "center[0]");
            coord(cy, "center[1]");
            require_finite(angle, "angle");
            if (!(hx > 0.0f) || !(hx <= kMaxCoordinate))
              fail("half_extents[0] must be a number in (0, 1e8], got " + num(hx));
            if (!(hy > 0.0f) || !(hy <= kMaxCoordinate))
              fail("half_extents[1] must be a number in (0, 1e8], got " + num(hy));
            const double reach = std::hypot(static_cast<double>(hx), static_cast<double>(hy));
            if (!(std::fabs(cx) + reach <= kMaxCoordinate &&
                  std::fabs(cy) + reach <= kMaxCoordinate))
              fail("add_box: the box's corners must lie within ±1e+08");
            auto next = self.edit();
            const std::int32_t id = next->add_box({cx, cy}, {hx, hy}, angle, layers);
            self.current = next;
            return id;
          },
          py::arg("cx"), py::arg("cy"), py::arg("hx"), py::arg("hy"), py::arg("angle"),
          py::arg("layers"))
      .def(
          "add_circles",
          [](WorldHandle& self, const py::handle& centers, const py::handle& radii,
             std::uint32_t layers) {
            auto c = input_coords(centers, "centers", {kAny, 2}, {"C", "2"});
            auto r = input_coords(radii, "radii", {c.dim(0)}, {"C"});
            for (std::size_t i = 0; i < r.size(); ++i) {
              if (r.data[i] < 0.0f)
                fail("radii: circle " + std::to_string(i) + " has negative radius " +
                     num(r.data[i]));
            }
            auto next = self.edit();
            const std::int32_t first = next->add_circles(c.span(), r.span(), layers);
            self.current = next;
            return id_range(first, r.size());
          },
          py::arg("centers"), py::arg("radii"), py::arg("layers"))
      .def_property_readonly("walls",
                             [](const WorldHandle& self) {
                               const auto& w = self.current;
                               return view_of(const_cast<float*>(w->walls().data()),
                                              {static_cast<py::ssize_t>(w->segment_count()), 4},
                                              owner_of(w), false);
                             })
      .def_property_readonly("wall_obstacles",
                             [](const WorldHandle& self) {
                               const auto& w = self.current;
                               return view_of(const_cast<std::int32_t*>(w->wall_obstacle().data()),
                                              {static_cast<py::ssize_t>(w->segment_count())},
                                              owner_of(w), false);
                             })
      .def_property_readonly("circle_centers",
                             [](const WorldHandle& self) {
                               const auto& w = self.current;
                               return view_of(const_cast<float*>(w->circle_centers().data()),
                                              {static_cast<py::ssize_t>(w->circle_count()), 2},
                                              owner_of(w), false);
                             })
      .def_property_readonly("circle_radii",
                             [](const WorldHandle& self) {
                               const auto& w = self.current;
                               return view_of(const_cast<float*>(w->circle_radii().data()),
                                              {static_cast<py::ssize_t>(w->circle_count())},
                                              owner_of(w), false);
                             })
      .def_property_readonly(
          "circle_obstacles",
          [](const WorldHandle& self) {
            const auto& w = self.current;
            return view_of(const_cast<std::int32_t*>(w->circle_obstacle().data()),
                           {static_cast<py::ssize_t>(w->circle_count())}, owner_of(w), false);
          })
      .def_property_readonly(
          "obstacle_layers",
          [](const WorldHandle& self) {
            const auto& w = self.current;
            return view_of(const_cast<std::uint32_t*>(w->obstacle_layers().data()),
                           {static_cast<py::ssize_t>(w->obstacle_count())}, owner_of(w), false);
          })
      .def_property_readonly("obstacle_count",
                             [](const WorldHandle& self) { return self.current->obstacle_count(); })
      .def_property_readonly("segment_count",
                             [](const WorldHandle& self) { return self.current->segment_count(); })
      .def_property_readonly("circle_count",
                             [](const WorldHandle& self) { return self.current->circle_count(); })
      .def_property_readonly("bounds",
                             [](const WorldHandle& self) -> py::object {
                               float b[4];
                               if (!self.current->bounds(b)) return py::none();
                               return py::make_tuple(b[0], b[1], b[2], b[3]);
                             })
      .def_property(
          "cell_size", [](const WorldHandle& self) { return self.current->cell_size(); },
          [](WorldHandle& self, float cell) {
            if (!(cell >= 0.0f) || !std::isfinite(cell))
              fail("cell_size must be a finite number >= 0, got " + num(cell));
            auto next = self.edit();
            next->set_cell_size(cell);
            self.current = next;
          })
      .def_property_readonly("grid_shape",
                             [](WorldHandle& self) {
                               auto w = self.snapshot();
                               return py::make_tuple(w->grid().nx, w->grid().ny, w->grid().cell);
                             })
      .def_property_readonly("index_info", [](WorldHandle& self) {
        auto w = self.snapshot();
        py::dict d;
        d["grid"] = py::make_tuple(w->grid().nx, w->grid().ny, w->grid().cell);
        py::list thick;
        for (float r : w->thick_radii()) thick.append(r);
        d["thick_grids"] = thick;
        py::list strips;
        for (const auto& e : w->strips().info()) {
          py::dict s;
          s["slots"] = e.slots;
          s["radius"] = e.radius;
          s["built"] = e.built;
          s["strip_width"] = e.width;
          s["bytes"] = e.bytes;
          strips.append(s);
        }
        d["strips"] = strips;
        py::list sectors;
        for (const auto& e : w->sectors().info()) {
          py::dict s;
          s["layers"] = e.layers;
          s["reach"] = e.reach;
          s["radius"] = e.radius;
          s["built"] = e.built;
          s["cell"] = e.cell;
          s["bins"] = e.bins;
          s["walls"] = e.walls;
          s["pieces"] = e.pieces;
          s["loose"] = e.loose;
          s["bytes"] = e.bytes;
          sectors.append(s);
        }
        d["sectors"] = sectors;
        d["sector_builds"] = w->sectors().builds();
        return d;
      });

  m.def(
      "raycast",
      [](WorldHandle& world, const py::handle& origins, const py::handle& directions,
         const py::handle& max_dist, float radius, std::uint32_t layers) {
        auto o = input_coords(origins, "origins", {kAny, 2}, {"R", "2"});
        const auto n = static_cast<std::size_t>(o.dim(0));
        auto d = input_f32(directions, "directions", {o.dim(0), 2}, {"R", "2"});
        auto md = input_coords(max_dist, "max_dist", {kAny}, {"R"});
        check_max_dist(md, n, "max_dist");
        require_length(radius, "radius");
        for (std::size_t i = 0; i < n; ++i) {
          if (d.data[2 * i] == 0.0f && d.data[2 * i + 1] == 0.0f)
            fail("directions: ray " + std::to_string(i) + " has a zero-length direction");
        }
        auto snap = world.snapshot();
        const auto r = static_cast<py::ssize_t>(n);
        auto dist = new_array<float>({r});
        auto hit = new_array<bool>({r});
        auto normal = new_array<float>({r, 2});
        auto obstacle = new_array<std::int32_t>({r});
        RayHitsOut out{dist.mutable_data(), hit.mutable_data(), normal.mutable_data(),
                       obstacle.mutable_data()};
        in_slices(n, kRaysPerSlice, [&](std::size_t b, std::size_t e) {
          const RayHitsOut part{out.distance + b, out.hit + b, out.normal + 2 * b,
                                out.obstacle + b};
          contextsteer::raycast(
              *snap, o.span().subspan(2 * b, 2 * (e - b)), d.span().subspan(2 * b, 2 * (e - b)),
              md.size() == 1 ? md.span() : md.span().subspan(b, e - b), radius, layers, part);
        });
        return py::make_tuple(dist, hit, normal, obstacle);
      },
      py::arg("world"), py::arg("origins"), py::arg("directions"), py::arg("max_dist"),
      py::arg("radius"), py::arg("layers"));

  m.def(
      "slot_raycast",
      [](WorldHandle& world, const py::handle& positions, const py::handle& slot_directions,
         const py::handle& look_ahead, const py::handle& headings, float radius,
         std::uint32_t layers, const py::handle& out, const std::string& method) {
        auto p = input_coords(positions, "positions", {kAny, 2}, {"N", "2"});
        const auto n = static_cast<std::size_t>(p.dim(0));
        auto s = input_f32(slot_directions, "slot_directions", {kAny, 2}, {"K", "2"});
        const auto k = static_cast<std::size_t>(s.dim(0));
        auto la = input_coords(look_ahead, "look_ahead", {kAny}, {"N"});
        check_max_dist(la, n, "look_ahead");
        require_length(radius, "radius");
        const SlotMode mode = slot_mode(method);
        std::vector<float> unit(2 * k);
        for (std::size_t j = 0; j < k; ++j) {
          const double x = s.data[2 * j], y = s.data[2 * j + 1];
          const double len = std::sqrt(x * x + y * y);
          if (len == 0.0)
            fail("slot_directions: slot " + std::to_string(j) + " has a zero-length direction");
          unit[2 * j] = static_cast<float>(x / len);
          unit[2 * j + 1] = static_cast<float>(y / len);
        }
        std::span<const float> head;
        if (!headings.is_none()) {
          if (mode == SlotMode::kStrips) {
            fail(
                "method: 'strips' needs fixed slot directions (headings=None); use 'auto' or "
                "'per_ray' with headings");
          }
          auto hd = input_f32(headings, "headings", {p.dim(0)}, {"N"});
          head = hd.span();
        }
        py::array_t<float> result;
        if (out.is_none()) {
          result = new_array<float>({static_cast<py::ssize_t>(n), static_cast<py::ssize_t>(k)});
        } else {
          // contextsteer.slot_raycast refuses an out overlapping the caller's inputs and
          // passes private copies of them, which nothing here can overlap.
          // Any mismatch of out= is a TypeError, shape included, as for the map kernels
          // (an out= array is never converted), naming the expected extents.
          const std::string rows = std::to_string(p.dim(0)), cols = std::to_string(s.dim(0));
          try {
            (void)output_f32(out, "out", {p.dim(0), s.dim(0)}, {rows.c_str(), cols.c_str()});
          } catch (py::value_error& e) {
            throw py::type_error(e.what());
          }
          result = py::reinterpret_borrow<py::array_t<float>>(out);
        }
        auto snap = world.snapshot();
        std::span<float> dst(result.mutable_data(), n * k);
        // The sector index for the whole call (its longest look-ahead), then the slices.
        {
          GilRelease release;
          contextsteer::slot_raycast_prepare(*snap, la.span(), !head.empty(), radius, layers, n * k,
                                             mode);
        }
        in_slices(
            n, kRaysPerSlice / std::max<std::size_t>(k, 1), [&](std::size_t b, std::size_t e) {
              contextsteer::slot_raycast(*snap, p.span().subspan(2 * b, 2 * (e - b)), unit,
                                         la.size() == 1 ? la.span() : la.span().subspan(b, e - b),
                                         head.empty() ? head : head.subspan(b, e - b), radius,
                                         layers, dst.subspan(b * k, (e - b) * k), mode, true);
            });
        return result;
      },
      py::arg("world"), py::arg("positions"), py::arg("slot_directions"), py::arg("look_ahead"),
      py::arg("headings"), py::arg("radius"), py::arg("layers"),
      py::arg("out").noconvert() = py::none(), py::arg("method") = "auto");

  m.def(
      "nearest",
      [](WorldHandle& world, const py::handle& points, float max_dist, std::uint32_t layers) {
        auto p = input_coords(points, "points", {kAny, 2}, {"N", "2"});
        require_length(max_dist, "max_dist");
        const auto n = p.dim(0);
        auto snap = world.snapshot();
        auto dist = new_array<float>({n});
        auto point = new_array<float>({n, 2});
        auto normal = new_array<float>({n, 2});
        auto obstacle = new_array<std::int32_t>({n});
        // In timed slices of at most 2^16 points, checking for Ctrl-C between them (20 M
        // points with a long max_dist took 14 s to stop; among long walls through one
        // place, 10 k points took 52 s).
        in_slices(static_cast<std::size_t>(n), std::size_t{1} << 16,
                  [&](std::size_t b, std::size_t e) {
                    NearestOut out{dist.mutable_data() + b, point.mutable_data() + 2 * b,
                                   normal.mutable_data() + 2 * b, obstacle.mutable_data() + b};
                    contextsteer::nearest(*snap, p.span().subspan(2 * b, 2 * (e - b)), max_dist,
                                          layers, out);
                  });
        return py::make_tuple(dist, point, normal, obstacle);
      },
      py::arg("world"), py::arg("points"), py::arg("max_dist"), py::arg("layers"));

  m.def(
      "inside",
      [](WorldHandle& world, const py::handle& points, std::uint32_t layers) {
        auto p = input_coords(points, "points", {kAny, 2}, {"N", "2"});
        auto snap = world.snapshot();
        auto result = new_array<bool>({p.dim(0)});
        // A point's test walks a polygon's whole ring: timed slices of at most about 2^24
        // vertex visits, so that Ctrl-C is heard between them over huge polygons.
        const std::size_t n = static_cast<std::size_t>(p.dim(0));
        const std::size_t vertices = snap->ring_points().size() / 2;
        bool* out = result.mutable_data();
        in_slices(n, std::max<std::size_t>(1, (std::size_t{1} << 24) / (vertices + 1)),
                  [&](std::size_t b, std::size_t e) {
                    contextsteer::inside(*snap, p.span().subspan(2 * b, 2 * (e - b)), layers,
                                         out + b);
                  });
        return result;
      },
      py::arg("world"), py::arg("points"), py::arg("layers"));
}

}  // namespace contextsteer::bindings
