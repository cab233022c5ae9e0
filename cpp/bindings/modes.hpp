// SPDX-License-Identifier: MIT
// The one parser of mode names (combine, resolve, choose, dot shape, spread): from the core's
// mode tables, with one error style.
#pragma once

#include <pybind11/pybind11.h>

#include <cstddef>
#include <string>
#include <string_view>

#include "contextsteer/modes.hpp"

namespace contextsteer::bindings {

namespace py = pybind11;

/// ValueError "<owner>: <argument> must be one of 'a', 'b', got <repr(value)>".
[[noreturn]] void throw_bad_mode(const std::string& owner, const std::string& argument,
                                 const std::string& listed, const py::handle& value);

/// The enum value named by `value` (a str) in `table`, limited to the entries `allowed`
/// accepts; otherwise throw_bad_mode listing those entries.
template <class E, std::size_t N, class Allowed>
E parse_mode(const ModeEntry<E> (&table)[N], const py::handle& value, const std::string& owner,
             const std::string& argument, Allowed allowed) {
  if (py::isinstance<py::str>(value)) {
    const auto name = value.cast<std::string>();
    const ModeEntry<E>* e = find_mode(table, name);
    if (e != nullptr && allowed(e->value)) return e->value;
  }
  std::string listed;
  for (const ModeEntry<E>& e : table) {
    if (!allowed(e.value)) continue;
    listed += (listed.empty() ? "'" : ", '") + std::string(e.name) + "'";
  }
  throw_bad_mode(owner, argument, listed, value);
}

template <class E, std::size_t N>
E parse_mode(const ModeEntry<E> (&table)[N], const py::handle& value, const std::string& owner,
             const std::string& argument) {
  return parse_mode(table, value, owner, argument, [](E) { return true; });
}

}  // namespace contextsteer::bindings
