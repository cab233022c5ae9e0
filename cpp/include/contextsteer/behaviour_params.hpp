// SPDX-License-Identifier: MIT
// Behaviour parameters declared once: a table next to each behaviour struct.
//
// A behaviour with a table (a BehaviourSpec specialisation right after its struct in
// behaviours.hpp) needs nothing else outside its struct and its kernel: the bindings read
// and check its parameters from the table (bindings/behaviours.cpp, generically), Python
// gets its class from the table when python/contextsteer/behaviours.py has none
// (`_core.behaviour_specs()`), and the defaults are the struct's own member initialisers.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <tuple>

namespace contextsteer {

/// What a parameter accepts: a float in a range (kNumber), an integer in a range
/// (kCount), true/false (kFlag), one of a few names (kChoice), a layer mask in [0, 2^32)
/// (kLayers).
enum class ParamKind : std::uint8_t { kNumber, kCount, kFlag, kChoice, kLayers };

/// A closed or open interval [lo, hi] / (lo, hi) for kNumber and kCount.
struct ParamRange {
  double lo = 0.0;
  bool lo_open = false;
  double hi = std::numeric_limits<double>::infinity();
  bool hi_open = true;
};

/// >= 0 (finite), > 0 (finite), [0, 1), and [lo, hi] for counts.
inline constexpr ParamRange kNonNegative{};
inline constexpr ParamRange kPositive{0.0, true};
inline constexpr ParamRange kUnitOpen{0.0, false, 1.0, true};
/// Lengths and radii: within the coordinate range, [0, 1e8] and (0, 1e8].
inline constexpr ParamRange kLength{0.0, false, 1e8, false};
inline constexpr ParamRange kPositiveLength{0.0, true, 1e8, false};
constexpr ParamRange count_range(double lo, double hi) { return {lo, false, hi, false}; }

/// One name of a kChoice parameter and the value it stores.
template <class T>
struct ParamChoice {
  const char* name;
  T value;
};

/// One parameter of behaviour B: its Python name, the member it sets, what it accepts and
/// a one-line description. `optional`: Python's None is allowed and stores `none_value`,
/// or, when `same_as` names another parameter, that parameter's value.
template <class B, class T, std::size_t N = 0>
struct Param {
  const char* name;
  T B::*member;
  ParamKind kind;
  ParamRange range{};
  std::array<ParamChoice<T>, N> choices{};
  bool optional = false;
  T none_value{};
  const char* same_as = nullptr;
  const char* doc = "";
};

template <class B>
constexpr Param<B, float> number(const char* name, float B::*m, ParamRange r, const char* doc) {
  return {name, m, ParamKind::kNumber, r, {}, false, 0.0f, nullptr, doc};
}
/// A number that may be None: stored as `none_value`, or as parameter `same_as`.
template <class B>
constexpr Param<B, float> optional_number(const char* name, float B::*m, ParamRange r,
                                          float none_value, const char* same_as, const char* doc) {
  return {name, m, ParamKind::kNumber, r, {}, true, none_value, same_as, doc};
}
template <class B>
constexpr Param<B, std::uint32_t> count(const char* name, std::uint32_t B::*m, ParamRange r,
                                        const char* doc) {
  return {name, m, ParamKind::kCount, r, {}, false, 0u, nullptr, doc};
}
template <class B>
constexpr Param<B, bool> flag(const char* name, bool B::*m, const char* doc) {
  return {name, m, ParamKind::kFlag, {}, {}, false, false, nullptr, doc};
}
template <class B>
constexpr Param<B, std::uint32_t> layer_mask(const char* name, std::uint32_t B::*m,
                                             const char* doc) {
  return {name, m, ParamKind::kLayers, {}, {}, false, 0u, nullptr, doc};
}
template <class B, class T, std::size_t N>
constexpr Param<B, T, N> choice(const char* name, T B::*m,
                                const std::array<ParamChoice<T>, N>& names, const char* doc) {
  return {name, m, ParamKind::kChoice, {}, names, false, T{}, nullptr, doc};
}

/// The table of behaviour B, specialised right after B's struct:
///   kind    — the name the bindings know it by (Python's `Behaviour.kind`);
///   python  — its Python class name;
///   doc     — a one-paragraph description (the generated class's docstring);
///   params  — a std::tuple of Param<B, ...> in Python's argument order (`weight` and
///             `agent_weights`, common to all behaviours, are not listed).
/// Whether it writes danger, needs neighbours or writes a speed map is asked of the
/// behaviour itself (writes_danger, needs_neighbors, writes_speed on B{}).
template <class B>
struct BehaviourSpec;

/// Whether behaviour B has a table.
template <class B>
concept HasSpec = requires {
  BehaviourSpec<B>::params;
};

}  // namespace contextsteer
