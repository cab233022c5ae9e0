// SPDX-License-Identifier: MIT
// Checks shared by every binding: arrays crossing the boundary are float32 (or int32 /
// bool where stated), C-contiguous, of the expected shape, and finite where asked.
// Nothing is converted here: the Python layer converts in plain sight, this layer
// refuses anything else with a TypeError/ValueError that names what was expected.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

#include "batch.hpp"
#include "contextsteer/common.hpp"

namespace contextsteer::bindings {

namespace py = pybind11;

/// Largest magnitude (exclusive) of any float input — maps, weights, scalars: 2^60 ≈
/// 1.15e18, the map kernels' bound (kMaxMapMagnitude): sums and products of a few such
/// values stay far below float32's 3.4e38, so finite inputs never give inf or NaN.
inline constexpr float kMaxMagnitude = kMaxMapMagnitude;
/// Largest magnitude of a coordinate, length or radius (world geometry, agent state, ray
/// origins and lengths). Float32 resolution there is 8 units; keep scenes within about
/// ±1e5 for centimetre precision. Beyond it geometry would silently degrade.
inline constexpr float kMaxCoordinate = 1e8f;

/// Shape pattern entry that accepts any extent.
inline constexpr py::ssize_t kAny = -1;

/// A Ctrl-C poll for a stretch of C++ work that is about to release the GIL (NavField and
/// route builds), made while the calling thread holds the GIL. The poll takes the GIL to
/// ask whether Ctrl-C (or another signal whose Python handler raised) arrived; when true,
/// the error is set, and the caller stops and throws py::error_already_set once it holds
/// the GIL. Off the thread where Python runs its signal handlers (_PyOS_IsMainThread: the
/// interpreter's main thread, or a forked child's only thread) the poll is empty:
/// PyErr_CheckSignals returns 0 there at once, and a daemon thread that asked for the GIL
/// while the interpreter finalized was ended with pthread_exit, whose unwind from the poll
/// reached GilRelease's destructor, which asked again during the unwind: std::terminate
/// at exit. (A check of Py_IsFinalizing before the ask left a window between check and
/// ask, 1 abort in 60 runs under load; threading.main_thread() names the wrong thread
/// when threading was first imported from another thread.) Off the main thread the build
/// runs on to its end, where GilRelease ends a daemon thread outside any unwind.
inline std::function<bool()> interrupt_poll() {
  if (!_PyOS_IsMainThread()) return {};
  return [] {
    const py::gil_scoped_acquire gil;
    return PyErr_CheckSignals() != 0;
  };
}

/// "(N, 2)"-style text of a shape pattern, with names for the wildcard dimensions.
std::string shape_text(const std::vector<py::ssize_t>& shape);
/// The shortest text that reads back as v: 1.0000001e+08 for the float32 above 1e8, where
/// a stream's 6 digits said 1e+08, and 1e+300 where std::to_string wrote 301 digits.
std::string number_text(float v);
std::string number_text(double v);
/// The expected shape in messages: each dimension's name, or its extent when unnamed; a
/// dimension named by a symbol that the pattern fixes shows its extent too, "(R=3, 2)".
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

/// Raises ValueError naming the first element (its full index) that is NaN, inf or not
/// below kMaxMagnitude in magnitude.
void check_finite(const Checked<float>& a, const char* what);
void check_finite(const Checked<const float>& a, const char* what);
/// The same with the tighter ±kMaxCoordinate, for coordinates and lengths.
void check_coordinates(const Checked<const float>& a, const char* what);

/// An input array of coordinates or lengths: input_f32 plus check_coordinates.
Checked<const float> input_coords(const py::handle& obj, const char* what,
                                  std::initializer_list<py::ssize_t> pattern,
                                  std::initializer_list<const char*> names);

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
  if (!writable)
    py::detail::array_proxy(a.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
  return a;
}

/// Whether two checked arrays share any byte.
template <class A, class B>
bool overlaps(const Checked<A>& a, const Checked<B>& b) {
  const auto* a0 = reinterpret_cast<const char*>(a.data);
  const auto* b0 = reinterpret_cast<const char*>(b.data);
  const auto* a1 = a0 + a.size() * sizeof(A);
  const auto* b1 = b0 + b.size() * sizeof(B);
  return a.size() && b.size() && a0 < b1 && b0 < a1;
}

/// Refuses (ValueError) an out= array that overlaps an input, except (when allowed) being
/// exactly it: a kernel writing into its own input would read half-written values.
template <class A, class B>
void refuse_overlap(const Checked<A>& out, const char* out_name, const Checked<B>& in,
                    const char* in_name, bool allow_same) {
  if (!overlaps(out, in)) return;
  if (allow_same && static_cast<const void*>(out.data) == static_cast<const void*>(in.data) &&
      out.size() * sizeof(A) == in.size() * sizeof(B)) {
    return;
  }
  throw py::value_error(std::string(out_name) + " must not overlap " + in_name +
                        (allow_same ? " (except by being the very same array)" : ""));
}

/// Whether out is exactly the array in (the in-place case refuse_overlap may allow).
template <class A, class B>
bool same_array(const Checked<A>& out, const Checked<B>& in) {
  return out.size() && static_cast<const void*>(out.data) == static_cast<const void*>(in.data) &&
         out.size() * sizeof(A) == in.size() * sizeof(B);
}

/// After a kernel's fused finite check flagged a value that check_finite could not locate
/// in the inputs: raises (ValueError) rather than return a result built from it.
[[noreturn]] void unlocated_bad(const char* function);

/// Rejects a value that is NaN/inf or not below kMaxMagnitude in magnitude (ValueError).
void require_finite(double value, const char* what);
/// Rejects a value < 0, > limit or non-finite (ValueError naming the range). The default
/// limit is kMaxMagnitude: checked in double, so the value also fits float32.
void require_non_negative(double value, const char* what, double limit = kMaxMagnitude);
/// require_non_negative with the coordinate limit, for lengths and radii.
// A length up to the coordinate limit, inclusive like the coordinates themselves (a
// raycast's max_dist of 1e8 is taken, so a nearest query's is too).
void require_length(double value, const char* what);

}  // namespace contextsteer::bindings
