// SPDX-License-Identifier: MIT
#include "arrays.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <sstream>
#include <string_view>
#include <vector>
#include <type_traits>

namespace contextsteer::bindings {

std::string shape_text(const std::vector<py::ssize_t>& shape) {
  std::ostringstream s;
  s << '(';
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s << ", ";
    s << shape[i];
  }
  if (shape.size() == 1) s << ',';
  s << ')';
  return s.str();
}

namespace {
template <class T>
std::string shortest(T v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}
}  // namespace

std::string number_text(float v) { return shortest(v); }
std::string number_text(double v) { return shortest(v); }

std::string pattern_text(std::initializer_list<py::ssize_t> pattern,
                         std::initializer_list<const char*> names) {
  std::ostringstream s;
  s << '(';
  auto name = names.begin();
  std::size_t i = 0;
  for (auto p : pattern) {
    if (i++) s << ", ";
    // A symbol (R, K, rows) that another argument fixes shows its value: "(R=3, 2)",
    // where "(R, 2)" read as met by a (2, 2) array (fuzz round of 2026-12-07). A name
    // that is not a symbol ("2", "N = capacity 4") already says it.
    if (name != names.end() && *name) {
      s << *name;
      const std::string_view n = *name;
      const bool symbol = !n.empty() && std::isalpha(static_cast<unsigned char>(n.front())) &&
                          std::all_of(n.begin(), n.end(), [](char c) {
                            return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
                          });
      if (p != kAny && symbol) s << '=' << p;
    } else {
      s << p;
    }
    if (name != names.end()) ++name;
  }
  if (pattern.size() == 1) s << ',';
  s << ')';
  return s.str();
}

namespace {
template <class T>
const char* dtype_name() {
  using U = std::remove_const_t<T>;
  if constexpr (std::is_same_v<U, float>) return "float32";
  else if constexpr (std::is_same_v<U, double>) return "float64";
  else if constexpr (std::is_same_v<U, std::int32_t>) return "int32";
  else if constexpr (std::is_same_v<U, std::int64_t>) return "int64";
  else if constexpr (std::is_same_v<U, std::uint32_t>) return "uint32";
  else if constexpr (std::is_same_v<U, std::uint8_t>) return "uint8";
  else if constexpr (std::is_same_v<U, bool>) return "bool";
  else return "?";
}
}  // namespace

template <class T>
Checked<T> check_array(const py::handle& obj, const char* what,
                       std::initializer_list<py::ssize_t> pattern,
                       std::initializer_list<const char*> names, bool writable) {
  using U = std::remove_const_t<T>;
  const std::string expected = pattern_text(pattern, names);
  if (!py::isinstance<py::array>(obj)) {
    throw py::type_error(std::string(what) + ": expected a numpy " + dtype_name<T>() +
                         " array of shape " + expected + ", got " +
                         std::string(py::str(py::type::of(obj).attr("__name__"))));
  }
  auto a = py::reinterpret_borrow<py::array>(obj);
  // equal(), not is(): an unpickled array carries an equal but distinct dtype object.
  if (!a.dtype().equal(py::dtype::of<U>())) {  // equivalent: same kind, size, byte order
    throw py::type_error(std::string(what) + ": expected dtype " + dtype_name<T>() + ", got " +
                         std::string(py::str(a.dtype())));
  }
  if (!(a.flags() & py::array::c_style)) {
    throw py::type_error(std::string(what) +
                         ": expected a C-contiguous array (use np.ascontiguousarray)");
  }
  if (writable && !a.writeable()) {
    throw py::type_error(std::string(what) + ": expected a writeable array");
  }
  std::vector<py::ssize_t> shape(a.shape(), a.shape() + a.ndim());
  bool ok = static_cast<std::size_t>(a.ndim()) == pattern.size();
  if (ok) {
    std::size_t i = 0;
    for (auto p : pattern) {
      if (p != kAny && shape[i] != p) ok = false;
      ++i;
    }
  }
  if (!ok) {
    throw py::value_error(std::string(what) + ": expected shape " + expected + ", got " +
                          shape_text(shape));
  }
  T* data =
      writable ? static_cast<T*>(a.mutable_data()) : static_cast<T*>(const_cast<void*>(a.data()));
  return Checked<T>{data, std::move(shape)};
}

template Checked<float> check_array<float>(const py::handle&, const char*,
                                           std::initializer_list<py::ssize_t>,
                                           std::initializer_list<const char*>, bool);
template Checked<const float> check_array<const float>(const py::handle&, const char*,
                                                       std::initializer_list<py::ssize_t>,
                                                       std::initializer_list<const char*>, bool);
template Checked<std::int32_t> check_array<std::int32_t>(const py::handle&, const char*,
                                                         std::initializer_list<py::ssize_t>,
                                                         std::initializer_list<const char*>, bool);
template Checked<const std::int32_t> check_array<const std::int32_t>(
    const py::handle&, const char*, std::initializer_list<py::ssize_t>,
    std::initializer_list<const char*>, bool);
template Checked<std::uint32_t> check_array<std::uint32_t>(const py::handle&, const char*,
                                                           std::initializer_list<py::ssize_t>,
                                                           std::initializer_list<const char*>,
                                                           bool);
template Checked<const std::uint32_t> check_array<const std::uint32_t>(
    const py::handle&, const char*, std::initializer_list<py::ssize_t>,
    std::initializer_list<const char*>, bool);
template Checked<bool> check_array<bool>(const py::handle&, const char*,
                                         std::initializer_list<py::ssize_t>,
                                         std::initializer_list<const char*>, bool);
template Checked<const bool> check_array<const bool>(const py::handle&, const char*,
                                                     std::initializer_list<py::ssize_t>,
                                                     std::initializer_list<const char*>, bool);

namespace {
template <class T>
void check_finite_impl(const Checked<T>& a, const char* what, float limit) {
  const float* p = a.data;
  const std::size_t n = a.size();
  // The coordinate range ±limit includes its ends (as require_non_negative's does); 2^60
  // is an exclusive bound. Branch-free scan first (vectorises); locate the culprit only
  // when one exists.
  const bool closed = limit != kMaxMagnitude;
  bool bad = false;
  if (closed)
    for (std::size_t i = 0; i < n; ++i) bad |= !(std::fabs(p[i]) <= limit);
  else
    for (std::size_t i = 0; i < n; ++i) bad |= !(std::fabs(p[i]) < limit);
  if (!bad) return;
  std::size_t i = 0;
  float v = 0.0f;
  // Each value read once: another thread may be writing the array (a NumPy copy releases
  // the GIL). When the culprit is gone by this second pass, i reached n, and reading p[n]
  // went one element past the array (a wrong index, or a fault at a page's end).
  for (; i < n; ++i) {
    v = p[i];
    if (!(closed ? std::fabs(v) <= limit : std::fabs(v) < limit)) break;
  }
  std::ostringstream s;
  s << what << ": expected finite values";
  if (limit == kMaxMagnitude) s << " below 2^60 (1.15e18) in magnitude";
  else s << " within ±" << limit;
  if (i == n) {
    s << "; one was not, and it changed while being checked (is another thread writing "
         "the array?)";
    throw py::value_error(s.str());
  }
  s << ", got " << number_text(v) << " at index ";
  if (a.shape.size() >= 2) {
    // The full multi-index, last axis fastest (C order).
    std::vector<std::size_t> idx(a.shape.size());
    std::size_t rest = i;
    for (std::size_t d = a.shape.size(); d-- > 0;) {
      const auto ext = static_cast<std::size_t>(a.shape[d] ? a.shape[d] : 1);
      idx[d] = rest % ext;
      rest /= ext;
    }
    s << '(';
    for (std::size_t d = 0; d < idx.size(); ++d) s << (d ? ", " : "") << idx[d];
    s << ')';
  } else {
    s << i;
  }
  throw py::value_error(s.str());
}
}  // namespace

void unlocated_bad(const char* function) {
  throw py::value_error(std::string(function) +
                        ": an input holds a value that is not finite or not below 2^60 "
                        "(1.15e18) in magnitude");
}

void check_finite(const Checked<float>& a, const char* what) {
  check_finite_impl(a, what, kMaxMagnitude);
}
void check_finite(const Checked<const float>& a, const char* what) {
  check_finite_impl(a, what, kMaxMagnitude);
}
void check_coordinates(const Checked<const float>& a, const char* what) {
  check_finite_impl(a, what, kMaxCoordinate);
}

Checked<const float> input_coords(const py::handle& obj, const char* what,
                                  std::initializer_list<py::ssize_t> pattern,
                                  std::initializer_list<const char*> names) {
  auto a = check_array<const float>(obj, what, pattern, names, false);
  check_coordinates(a, what);
  return a;
}

void require_finite(double value, const char* what) {
  if (!(std::fabs(value) < kMaxMagnitude)) {
    std::ostringstream s;
    s << what << " must be finite and below 2^60 (1.15e18) in magnitude, got "
      << number_text(value);
    throw py::value_error(s.str());
  }
}

void require_non_negative(double value, const char* what, double limit) {
  if (!(value >= 0.0) || !(value < limit)) {
    std::ostringstream s;
    s << what << " must be a finite number >= 0";
    s << " and below " << (limit == kMaxMagnitude ? "2^60 (1.15e18)" : number_text(limit));
    s << ", got " << number_text(value);
    throw py::value_error(s.str());
  }
}

void require_length(double value, const char* what) {
  if (!(value >= 0.0) || !(value <= kMaxCoordinate)) {
    std::ostringstream s;
    s << what << " must be a finite number >= 0 and at most 1e8, got " << number_text(value);
    throw py::value_error(s.str());
  }
}

}  // namespace contextsteer::bindings
