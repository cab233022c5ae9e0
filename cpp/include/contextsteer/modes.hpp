// SPDX-License-Identifier: MIT
// Mode tables: every string option of the core (combine, resolve, choose, dot shape, spread)
// as one table of (name, enum value, one line of documentation) next to its enum.
#pragma once

#include <cstddef>
#include <string_view>

namespace contextsteer {

/// One entry of a mode table: the name the Python API uses, the enum value, one line of
/// documentation. The table of a mode kind is the only place its names are written: the
/// bindings parse with it, and the Python package validates and lists the names from it
/// (contextsteer._core.modes()).
template <class E>
struct ModeEntry {
  std::string_view name;
  E value;
  std::string_view doc;
};

/// The entry of `table` named `name`, or nullptr. Pure.
template <class E, std::size_t N>
constexpr const ModeEntry<E>* find_mode(const ModeEntry<E> (&table)[N], std::string_view name) {
  for (const ModeEntry<E>& e : table)
    if (e.name == name) return &e;
  return nullptr;
}

/// The name of `value` in `table` (empty when it is not listed). Pure.
template <class E, std::size_t N>
constexpr std::string_view mode_name(const ModeEntry<E> (&table)[N], E value) {
  for (const ModeEntry<E>& e : table)
    if (e.value == value) return e.name;
  return {};
}

}  // namespace contextsteer
