// SPDX-License-Identifier: MIT
// Bindings of contextsteer::Path: input checks, GIL release, zero-copy view of the polyline.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <memory>
#include <span>
#include <string>

#include "gil.hpp"
#include "arrays.hpp"
#include "contextsteer/path.hpp"

namespace py = pybind11;

namespace contextsteer::bindings {

namespace {

PathDirectionMode direction_mode(const std::string& mode) {
  if (mode == "tangent") return PathDirectionMode::kTangent;
  if (mode == "seek") return PathDirectionMode::kSeek;
  throw py::value_error("Path.direction: mode must be 'tangent' or 'seek', got '" + mode + "'");
}

}  // namespace

namespace {
// (N,) offsets -> (N, 2) points or tangents through a batched Path query.
using OffsetQuery = void (*)(const Path&, std::span<const float>, std::span<float>);
py::array_t<float> points_at_offsets(const Path& path, const py::handle& offsets,
                                     OffsetQuery query) {
  auto s = input_f32(offsets, "offsets", {kAny}, {"N"});
  const py::ssize_t n = s.dim(0);
  auto out = new_array<float>({n, 2});
  std::span<float> o(out.mutable_data(), static_cast<std::size_t>(2 * n));
  {
    GilRelease release;
    query(path, s.span(), o);
  }
  return out;
}
}  // namespace

void bind_path(py::module_& m) {
  py::class_<Path, std::shared_ptr<Path>>(m, "Path")
      .def(py::init([](const py::handle& points, bool closed, bool smooth, int samples) {
             auto p = input_coords(points, "points", {kAny, 2}, {"P", "2"});
             if (samples < 1 || samples > 4096) {
               throw py::value_error("samples_per_segment: expected an int in [1, 4096], got " +
                                     std::to_string(samples));
             }
             // std::invalid_argument (fewer than 2 distinct points) becomes ValueError.
             return std::make_shared<Path>(p.span(), closed, smooth, samples);
           }),
           py::arg("points"), py::arg("closed") = false, py::arg("smooth") = false,
           py::arg("samples_per_segment") = Path::kDefaultSamplesPerSegment)
      .def_property_readonly("length", &Path::length)
      .def_property_readonly("closed", &Path::closed)
      .def_property_readonly("points",
                             [](py::object self) {
                               const Path& p = self.cast<const Path&>();
                               return view_of(const_cast<float*>(p.points().data()),
                                              {static_cast<py::ssize_t>(p.num_points()), 2}, self,
                                              /*writable=*/false);
                             })
      .def(
          "closest_offset",
          [](const Path& self, const py::handle& points) {
            auto p = input_coords(points, "points", {kAny, 2}, {"N", "2"});
            const py::ssize_t n = p.dim(0);
            auto out = new_array<float>({n});
            std::span<float> o(out.mutable_data(), static_cast<std::size_t>(n));
            // In slices of 2^14 points with a Ctrl-C check between them (20 M points on a
            // path of 100,000 points took 94 s to stop).
            in_slices(static_cast<std::size_t>(n), std::size_t{1} << 14,
                      [&](std::size_t b, std::size_t e) {
                        closest_offset(self, p.span().subspan(2 * b, 2 * (e - b)),
                                       o.subspan(b, e - b));
                      });
            return out;
          },
          py::arg("points"))
      .def(
          "point_at",
          [](const Path& self, const py::handle& offsets) {
            return points_at_offsets(self, offsets, &point_at);
          },
          py::arg("offsets"))
      .def(
          "tangent_at",
          [](const Path& self, const py::handle& offsets) {
            return points_at_offsets(self, offsets, &tangent_at);
          },
          py::arg("offsets"))
      .def(
          "direction",
          [](const Path& self, const py::handle& points, double look_ahead,
             const std::string& mode) {
            require_finite(look_ahead, "look_ahead");
            const PathDirectionMode m = direction_mode(mode);
            auto p = input_coords(points, "points", {kAny, 2}, {"N", "2"});
            const py::ssize_t n = p.dim(0);
            auto out = new_array<float>({n, 2});
            std::span<float> o(out.mutable_data(), static_cast<std::size_t>(2 * n));
            {
              GilRelease release;
              direction(self, p.span(), look_ahead, m, o);
            }
            return out;
          },
          py::arg("points"), py::arg("look_ahead") = 0.0, py::arg("mode") = "tangent");
}

}  // namespace contextsteer::bindings
