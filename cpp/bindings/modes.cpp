// SPDX-License-Identifier: MIT
// Bindings of the mode tables: _core.modes() (kind -> [(name, doc)]) and _core.check_mode,
// from which the Python package builds its *_MODES constants, validation and messages.
#include "modes.hpp"

#include <pybind11/stl.h>

#include <string>
#include <utility>
#include <vector>

#include "contextsteer/choose.hpp"
#include "contextsteer/combine.hpp"
#include "contextsteer/dot_map.hpp"
#include "contextsteer/postprocess.hpp"
#include "contextsteer/resolve.hpp"

namespace contextsteer::bindings {

void throw_bad_mode(const std::string& owner, const std::string& argument,
                    const std::string& listed, const py::handle& value) {
  throw py::value_error(owner + ": " + argument + " must be one of " + listed + ", got " +
                        py::repr(value).cast<std::string>());
}

namespace {

using Listing = std::vector<std::pair<std::string, std::string>>;

template <class E, std::size_t N, class Allowed>
Listing listing(const ModeEntry<E> (&table)[N], Allowed allowed) {
  Listing out;
  for (const ModeEntry<E>& e : table)
    if (allowed(e.value)) out.emplace_back(std::string(e.name), std::string(e.doc));
  return out;
}

template <class E, std::size_t N>
Listing listing(const ModeEntry<E> (&table)[N]) {
  return listing(table, [](E) { return true; });
}

// Every kind the Python API names, in one place: kind -> (names and docs, a checker).
py::dict mode_tables() {
  py::dict d;
  d["combine"] = listing(kCombineModes);
  d["steering_combine"] = listing(kCombineModes, steering_can_combine);
  d["resolve"] = listing(kResolveModes);
  d["choose"] = listing(kChooseModes);
  d["dot_shape"] = listing(kDotShapes);
  d["spread"] = listing(kSpreadModes);
  return d;
}

std::string check_mode(const std::string& kind, const py::handle& value, const std::string& owner,
                       const std::string& argument) {
  if (kind == "combine")
    return std::string(mode_name(kCombineModes, parse_mode(kCombineModes, value, owner, argument)));
  if (kind == "steering_combine")
    return std::string(mode_name(
        kCombineModes, parse_mode(kCombineModes, value, owner, argument, steering_can_combine)));
  if (kind == "resolve")
    return std::string(mode_name(kResolveModes, parse_mode(kResolveModes, value, owner, argument)));
  if (kind == "choose")
    return std::string(mode_name(kChooseModes, parse_mode(kChooseModes, value, owner, argument)));
  if (kind == "dot_shape")
    return std::string(mode_name(kDotShapes, parse_mode(kDotShapes, value, owner, argument)));
  if (kind == "spread")
    return std::string(mode_name(kSpreadModes, parse_mode(kSpreadModes, value, owner, argument)));
  throw py::value_error(
      "check_mode: kind must be one of 'combine', 'steering_combine', 'resolve', 'choose', "
      "'dot_shape', 'spread', got '" +
      kind + "'");
}

}  // namespace

void bind_modes(py::module_& m) {
  m.def("modes", &mode_tables,
        "The mode tables of the core: {kind: [(name, one-line doc), ...]} for the kinds "
        "combine, steering_combine, resolve, choose, dot_shape and spread.");
  m.def("check_mode", &check_mode, py::arg("kind"), py::arg("value"), py::arg("owner"),
        py::arg("argument"),
        "`value` if it names a mode of `kind`, else ValueError '<owner>: <argument> must be one of "
        "...'.");
}

}  // namespace contextsteer::bindings
