// SPDX-License-Identifier: MIT
// Checks shared by every binding: arrays crossing the boundary are float32 (or int32 /
// bool where stated), C-contiguous, of the expected shape, and finite where asked.
// Nothing is converted here: the Python layer converts in plain sight, this layer
// refuses anything else with a TypeError/ValueError that names what was expected.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

#include "contextsteer/common.hpp"

namespace contextsteer::bindings {

namespace py = pybind11;

/// Shape pattern entry that accepts any extent.
inline constexpr py::ssize_t kAny = -1;

/// "(N, 2)"-style text of a shape pattern, with names for the wildcard dimensions.
std::string shape_text(const std::vector<py::ssize_t>& shape);
std::string pattern_text(std::initializer_list<py::ssize_t> pattern,
                         std::initializer_list<const char*> names);

/// A checked array: pointer plus shape, borrowed from a live numpy array.
template <class T>
struct Checked {
  T* data = nullptr;
  std::vector<py::ssize_t> shape;
  std::size_t size() const {
    std::size_t n = 1;
    for (auto s : shape) n *= static_cast<std::size_t>(s);
    return n;
  }
  py::ssize_t dim(int i) const { return shape[static_cast<std::size_t>(i)]; }
  std::span<T> span() const { return {data, size()}; }
};

/// Checks dtype (TypeError), C-contiguity (TypeError), ndim and shape (ValueError).
/// `pattern` uses kAny for free extents and `names` labels every dimension in messages,
/// e.g. check_array<float>(a, "positions", {kAny, 2}, {"N", "2"}).
/// With writable=true the array must also be writeable (TypeError otherwise).
template <class T>
Checked<T> check_array(const py::handle& obj, const char* what,
                       std::initializer_list<py::ssize_t> pattern,
                       std::initializer_list<const char*> names, bool writable = false);

/// Raises ValueError naming the first non-finite element (flat index turned into an
/// (i, j) index for 2-D arrays) if any element of a float32 array is NaN or inf.
void check_finite(const Checked<float>& a, const char* what);
void check_finite(const Checked<const float>& a, const char* what);

/// Convenience for the common case: float32, C-contiguous, shape, finite.
inline Checked<const float> input_f32(const py::handle& obj, const char* what,
                                      std::initializer_list<py::ssize_t> pattern,
                                      std::initializer_list<const char*> names) {
  auto a = check_array<const float>(obj, what, pattern, names, false);
  check_finite(a, what);
  return a;
}

/// An `out=` array: float32, C-contiguous, writeable, exact shape; never converted.
inline Checked<float> output_f32(const py::handle& obj, const char* what,
                                 std::initializer_list<py::ssize_t> pattern,
                                 std::initializer_list<const char*> names) {
  return check_array<float>(obj, what, pattern, names, true);
}

/// A new uninitialised C-contiguous numpy array owned by Python.
template <class T>
py::array_t<T> new_array(std::initializer_list<py::ssize_t> shape) {
  return py::array_t<T>(std::vector<py::ssize_t>(shape));
}

/// A view of C++-owned memory that keeps `owner` alive (its `base`); never a copy.
template <class T>
py::array_t<T> view_of(T* data, std::vector<py::ssize_t> shape, py::handle owner,
                       bool writable = true) {
  std::vector<py::ssize_t> strides(shape.size());
  py::ssize_t stride = sizeof(T);
  for (std::size_t i = shape.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= shape[i];
  }
  py::array_t<T> a(shape, strides, data, owner);
  if (!writable) py::detail::array_proxy(a.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
  return a;
}

/// Rejects a float that is NaN/inf (ValueError "<what> must be finite, got ...").
void require_finite(double value, const char* what);
/// Rejects a value < 0 or non-finite (ValueError "<what> must be >= 0, got ...").
void require_non_negative(double value, const char* what);

}  // namespace contextsteer::bindings
