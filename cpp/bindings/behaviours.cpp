// SPDX-License-Identifier: MIT
// Bindings of the behaviour kernels: Python config objects → C++ variants, and a
// one-behaviour evaluation used by tests and notebooks.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "gil.hpp"
#include "agents.hpp"
#include "simulation_handle.hpp"  // check_agents
#include "in_use.hpp"
#include "arrays.hpp"
#include "contextsteer/neighbours.hpp"
#include "contextsteer/path.hpp"
#include "nav.hpp"
#include "world_handle.hpp"

namespace contextsteer::bindings {

namespace {

/// v as a T, or a TypeError naming the parameter and what it takes (pybind11's own cast
/// error names neither).
template <class T>
T cast_param(const py::object& v, const char* name, const char* expected) {
  try {
    return v.cast<T>();
  } catch (const py::cast_error&) {
    throw py::type_error(std::string(name) + " must be " + expected + ", got " +
                         std::string(py::str(py::repr(v))));
  }
}

float get_float(const py::dict& p, const char* key) {
  const auto v = cast_param<double>(p[key], key, "a number");
  if (std::isnan(v)) throw py::value_error(std::string(key) + " must not be NaN");
  if (std::isfinite(v) && !(std::fabs(v) < kMaxMagnitude))
    throw py::value_error(std::string(key) + " must be below 2^60 (1.15e18) in magnitude, got " +
                          number_text(v));
  return static_cast<float>(v);
}

/// A scalar >= 0 as the core uses it: finite and < kMaxMagnitude (so that it stays finite
/// as a float32 and in the sums and products of a step), or +inf where allowed.
float get_non_negative(const py::dict& p, const char* key, bool allow_inf = false) {
  const auto v = cast_param<double>(p[key], key, "a number");
  if (allow_inf && v == std::numeric_limits<double>::infinity())
    return std::numeric_limits<float>::infinity();
  if (!(v >= 0.0) || !(v < kMaxMagnitude))
    throw py::value_error(std::string(key) +
                          " must be a finite number >= 0 and below 2^60 (1.15e18), got " +
                          number_text(v));
  return static_cast<float>(v);
}

float get_positive(const py::dict& p, const char* key) {
  const float v = get_non_negative(p, key);
  if (!(v > 0.0f)) throw py::value_error(std::string(key) + " must be > 0, got 0");
  return v;
}

Vec2 get_point(const py::dict& p, const char* key) {
  auto a = input_f32(p[key], key, {2}, {"2"});
  return {a.data[0], a.data[1]};
}

GroupFilter get_groups(const py::dict& p) {
  const auto s = p["groups"].cast<std::string>();
  if (s == "all") return GroupFilter::kAll;
  if (s == "same") return GroupFilter::kSame;
  if (s == "other") return GroupFilter::kOther;
  throw py::value_error("groups must be 'all', 'same' or 'other', got '" + s + "'");
}

/// The optional "shape" of target behaviours: clamped_cosine (the default), half_cosine
/// or chord.
DotShape get_target_shape(const py::dict& p) {
  if (!p.contains("shape")) return DotShape::kClampedCosine;
  const auto shape = p["shape"].cast<std::string>();
  if (shape == "clamped_cosine") return DotShape::kClampedCosine;
  if (shape == "half_cosine") return DotShape::kHalfCosine;
  if (shape == "chord") return DotShape::kChord;
  throw py::value_error("shape must be 'clamped_cosine', 'half_cosine' or 'chord', got '" + shape +
                        "'");
}

Falloff get_falloff(const py::dict& p) {
  const auto s = p["falloff"].cast<std::string>();
  if (s == "linear") return Falloff::kLinear;
  if (s == "none") return Falloff::kNone;
  throw py::value_error("falloff must be 'linear' or 'none', got '" + s + "'");
}

// ---- Behaviours with a parameter table (BehaviourSpec, behaviour_params.hpp) ----

std::string range_words(const ParamRange& r) {
  const auto num = [](double v) { return number_text(v); };
  if (r.hi == std::numeric_limits<double>::infinity())
    return std::string(r.lo_open ? "> " : ">= ") + num(r.lo);
  return "in " + std::string(r.lo_open ? "(" : "[") + num(r.lo) + ", " + num(r.hi) +
         (r.hi_open ? ")" : "]");
}

bool in_range(double v, const ParamRange& r) {
  return (r.lo_open ? v > r.lo : v >= r.lo) && (r.hi_open ? v < r.hi : v <= r.hi);
}

template <class B, class T, std::size_t N>
void read_param(B& b, const Param<B, T, N>& f, const py::dict& p) {
  const py::object v = p[f.name];
  if (f.optional && v.is_none()) {
    if (!f.same_as) b.*f.member = f.none_value;  // same_as: set after all the others
    return;
  }
  if constexpr (std::is_same_v<T, bool>) {
    b.*f.member = cast_param<bool>(v, f.name, "True or False");
  } else if constexpr (N > 0) {
    const auto name = cast_param<std::string>(v, f.name, "a string");
    std::string names;
    for (std::size_t i = 0; i < N; ++i) {
      if (name == f.choices[i].name) {
        b.*f.member = f.choices[i].value;
        return;
      }
      names += std::string(i == 0 ? "'" : i + 1 == N ? " or '" : ", '") + f.choices[i].name + "'";
    }
    throw py::value_error(std::string(f.name) + " must be " + names + ", got '" + name + "'");
  } else if (f.kind == ParamKind::kLayers) {
    const auto x = cast_param<long long>(v, f.name, "an int in [0, 2**32)");
    if (x < 0 || x > 0xFFFFFFFFLL)
      throw py::value_error(std::string(f.name) + " must be in [0, 2**32), got " +
                            std::to_string(x));
    b.*f.member = static_cast<T>(x);
  } else if (f.kind == ParamKind::kCount) {
    const auto x = cast_param<long long>(v, f.name, "an int");
    if (!in_range(static_cast<double>(x), f.range))
      throw py::value_error(std::string(f.name) + " must be " + range_words(f.range) + ", got " +
                            std::to_string(x));
    b.*f.member = static_cast<T>(x);
  } else {
    const auto x = cast_param<double>(v, f.name, "a number");
    if (!(std::fabs(x) < kMaxMagnitude) || !in_range(x, f.range))
      throw py::value_error(std::string(f.name) + " must be a finite number " +
                            range_words(f.range) + " and below 2^60 (1.15e18), got " +
                            number_text(x));
    b.*f.member = static_cast<T>(x);
  }
}

/// An optional parameter given as None that stands for another one (`same_as`).
template <class B, class T, std::size_t N, class Params>
void resolve_same_as(B& b, const Param<B, T, N>& f, const Params& all, const py::dict& p) {
  if (!f.optional || !f.same_as || !p[f.name].is_none()) return;
  std::apply(
      [&](const auto&... g) {
        (
            [&] {
              using G = std::decay_t<decltype(g)>;
              if constexpr (std::is_same_v<decltype(g.member), T B::*>)
                if (std::string_view(g.name) == f.same_as) b.*f.member = b.*g.member;
              (void)sizeof(G);
            }(),
            ...);
      },
      all);
}

template <class B>
B from_spec(const py::dict& p) {
  B b;
  b.weight = get_non_negative(p, "weight");
  const auto& params = BehaviourSpec<B>::params;
  std::apply([&](const auto&... f) { (read_param(b, f, p), ...); }, params);
  std::apply([&](const auto&... f) { (resolve_same_as(b, f, params, p), ...); }, params);
  return b;
}

/// The behaviour of `kind` built from its table, or nothing when no table has that kind.
template <std::size_t I = 0>
std::optional<Behaviour> from_any_spec(const std::string& kind, const py::dict& p) {
  if constexpr (I == std::variant_size_v<Behaviour>) {
    return std::nullopt;
  } else {
    using B = std::variant_alternative_t<I, Behaviour>;
    if constexpr (HasSpec<B>)
      if (kind == BehaviourSpec<B>::kind) return Behaviour{from_spec<B>(p)};
    return from_any_spec<I + 1>(kind, p);
  }
}

/// The Python default of a parameter: the member's value in B{} (its name for a choice;
/// None for an optional parameter left at its "None" value).
template <class B, class T, std::size_t N, class Params>
py::object default_of(const Param<B, T, N>& f, const Params& all) {
  const B b{};
  const T v = b.*f.member;
  if (f.optional) {
    if (!f.same_as && v == f.none_value) return py::none();
    bool same = false;
    std::apply(
        [&](const auto&... g) {
          ((same |=
            [&] {
              if constexpr (std::is_same_v<decltype(g.member), T B::*>)
                return f.same_as && std::string_view(g.name) == f.same_as && b.*g.member == v;
              return false;
            }()),
           ...);
        },
        all);
    if (same) return py::none();
  }
  if constexpr (N > 0) {
    for (const auto& c : f.choices)
      if (c.value == v) return py::str(c.name);
    return py::none();
  } else if constexpr (std::is_same_v<T, bool>) {
    return py::bool_(v);
  } else if constexpr (std::is_integral_v<T>) {
    return py::int_(static_cast<long long>(v));
  } else {
    return py::float_(static_cast<double>(v));
  }
}

const char* kind_word(ParamKind k) {
  switch (k) {
    case ParamKind::kNumber:
      return "number";
    case ParamKind::kCount:
      return "count";
    case ParamKind::kFlag:
      return "flag";
    case ParamKind::kChoice:
      return "choice";
    case ParamKind::kLayers:
      return "layers";
  }
  return "";
}

template <class B>
py::dict spec_dict() {
  using S = BehaviourSpec<B>;
  py::list params;
  std::apply(
      [&](const auto&... f) {
        (
            [&] {
              py::dict d;
              d["name"] = f.name;
              d["kind"] = kind_word(f.kind);
              d["default"] = default_of(f, S::params);
              d["optional"] = f.optional;
              d["lo"] = f.range.lo;
              d["lo_open"] = f.range.lo_open;
              d["hi"] = f.range.hi;
              d["hi_open"] = f.range.hi_open;
              py::list names;
              for (const auto& c : f.choices) names.append(c.name);
              d["choices"] = names;
              d["doc"] = f.doc;
              params.append(d);
            }(),
            ...);
      },
      S::params);
  const Behaviour b{B{}};
  py::dict out;
  out["kind"] = S::kind;
  out["name"] = S::python;
  out["doc"] = S::doc;
  out["writes"] = writes_danger(b) ? "danger" : "interest";
  out["speed_map"] = writes_speed(b);
  out["needs_neighbours"] = needs_neighbors(b);
  out["params"] = params;
  return out;
}

template <std::size_t I = 0>
void append_specs(py::list& out) {
  if constexpr (I < std::variant_size_v<Behaviour>) {
    using B = std::variant_alternative_t<I, Behaviour>;
    if constexpr (HasSpec<B>) out.append(spec_dict<B>());
    append_specs<I + 1>(out);
  }
}

}  // namespace

namespace {
Behaviour behaviour_of(const std::string& kind, const py::dict& p);
}  // namespace

Behaviour to_behaviour(const py::handle& obj, std::size_t n_agents) {
  if (!py::hasattr(obj, "_config"))
    throw py::type_error("expected a contextsteer behaviour, got " +
                         std::string(py::str(py::type::of(obj).attr("__name__"))));
  const auto cfg = obj.attr("_config")().cast<py::tuple>();
  const auto p = cfg[1].cast<py::dict>();
  Behaviour b = behaviour_of(cfg[0].cast<std::string>(), p);
  if (n_agents != kNoAgents && p.contains("agent_weights") && !p["agent_weights"].is_none()) {
    // Borrowed: the behaviour object keeps the float32 array (validated in Python).
    auto w = check_array<const float>(p["agent_weights"], "agent_weights", {kAny}, {"N"});
    if (w.size() != n_agents)
      throw py::value_error(std::string(py::str(py::type::of(obj).attr("__name__"))) +
                            ": agent_weights: expected one weight per agent slot, shape (" +
                            std::to_string(n_agents) + ",) (the agents' capacity), got (" +
                            std::to_string(w.size()) + ",)");
    std::visit([&](auto& x) { x.agent_weights = w.data; }, b);
  }
  // Per-agent index arrays (FollowField by index, FollowPath over a PathSet): borrowed
  // int32 (N,) arrays held by the behaviour object.
  auto index_of = [&](const char* what) -> const std::int32_t* {
    if (!p.contains("index") || p["index"].is_none()) return nullptr;
    auto w = check_array<const std::int32_t>(p["index"], what, {kAny}, {"N"});
    if (n_agents != kNoAgents && w.size() != n_agents)
      throw py::value_error(std::string(what) + ": expected one index per agent slot, shape (" +
                            std::to_string(n_agents) + ",), got (" + std::to_string(w.size()) +
                            ",)");
    if (n_agents == kNoAgents) return nullptr;
    return w.data;
  };
  if (auto* f = std::get_if<FollowField>(&b)) {
    if (f->select == FieldSelect::kIndex) {
      f->field_index = index_of("index");
      if (!f->field_index) f->select = FieldSelect::kShared;
    }
  } else if (auto* f = std::get_if<FollowPath>(&b)) {
    if (f->paths) f->path_index = index_of("index");
  } else if (const auto* t = std::get_if<Targets>(&b); t && n_agents != kNoAgents) {
    // Pursue / Evade: agent ids of the same Agents, named with the behaviour.
    for (std::int32_t j : t->target_ids)
      if (j < 0 || static_cast<std::size_t>(j) >= n_agents)
        throw py::index_error(std::string(py::str(py::type::of(obj).attr("__name__"))) +
                              ": targets: agent id " + std::to_string(j) + " out of range [0, " +
                              std::to_string(n_agents) + ")");
  }
  return b;
}

namespace {
Behaviour behaviour_of(const std::string& kind, const py::dict& p) {
  if (auto b = from_any_spec(kind, p)) return *b;
  const float weight = get_non_negative(p, "weight");
  if (kind == "forward") return Forward{weight};
  if (kind == "momentum") return Momentum{weight};
  if (kind == "targets") {
    Targets t;
    t.weight = weight;
    if (!p["target_ids"].is_none()) {
      t.source = TargetSource::kAgents;
      t.target_ids =
          check_array<const std::int32_t>(p["target_ids"], "targets", {kAny}, {"M"}).span();
    } else if (!p["positions"].is_none()) {
      t.source = TargetSource::kPoints;
      t.positions = input_f32(p["positions"], "targets", {kAny, 2}, {"M", "2"}).span();
    }
    t.max_distance = get_non_negative(p, "max_distance", true);
    t.max_prediction = get_non_negative(p, "max_prediction");
    t.away = p["away"].cast<bool>();
    const auto combine = p["combine"].cast<std::string>();
    if (combine != "max" && combine != "sum" && combine != "center")
      throw py::value_error("combine must be 'max', 'sum' or 'center', got '" + combine + "'");
    t.combine = combine == "max"   ? TargetCombine::kMax
                : combine == "sum" ? TargetCombine::kSum
                                   : TargetCombine::kCenter;
    t.falloff = get_falloff(p);
    const auto output = p["output"].cast<std::string>();
    if (output != "interest" && output != "danger")
      throw py::value_error("output must be 'interest' or 'danger', got '" + output + "'");
    t.output = output == "interest" ? MapKind::kInterest : MapKind::kDanger;
    t.shape = get_target_shape(p);
    return t;
  }
  if (kind == "arrive") {
    Arrive a;
    a.weight = weight;
    a.slowing_radius = get_positive(p, "slowing_radius");
    a.tolerance = get_non_negative(p, "tolerance");
    a.shape = get_target_shape(p);
    a.use_point = !p["target"].is_none();
    if (a.use_point) a.point = get_point(p, "target");
    return a;
  }
  if (kind == "wander") {
    Wander w;
    w.weight = weight;
    w.offset = get_non_negative(p, "offset");
    w.radius = get_non_negative(p, "radius");
    w.rate = get_non_negative(p, "rate");
    w.seed = p["seed"].cast<std::uint64_t>();
    return w;
  }
  if (kind == "tether") {
    Tether t;
    t.weight = weight;
    t.radius = get_non_negative(p, "radius");
    t.softness = get_non_negative(p, "softness");
    t.use_point = !p["center"].is_none();
    if (t.use_point) t.center = get_point(p, "center");
    return t;
  }
  if (kind == "bounds") {
    Bounds b;
    b.weight = weight;
    b.lo = get_point(p, "lo");
    b.hi = get_point(p, "hi");
    b.margin = get_non_negative(p, "margin");
    if (!(b.lo.x <= b.hi.x && b.lo.y <= b.hi.y)) throw py::value_error("bounds: expected lo <= hi");
    return b;
  }
  if (kind == "separation" || kind == "alignment" || kind == "cohesion") {
    Flock f;
    f.weight = weight;
    f.radius = get_positive(p, "radius");
    f.clamp = p["clamp"].cast<bool>();
    f.groups = get_groups(p);
    f.rule = kind == "separation"  ? FlockRule::kSeparation
             : kind == "alignment" ? FlockRule::kAlignment
                                   : FlockRule::kCohesion;
    return f;
  }
  if (kind == "follow_field") {
    FollowField f;
    f.weight = weight;
    f.field = p["field"].cast<const PyNavField&>().field;  // the current build, held
    const auto by = p["by"].cast<std::string>();
    if (by == "shared") f.select = FieldSelect::kShared;
    else if (by == "group") f.select = FieldSelect::kGroup;
    else if (by == "index") f.select = FieldSelect::kIndex;
    else throw py::value_error("by must be 'shared', 'group' or 'index', got '" + by + "'");
    f.shared = p["shared"].cast<std::int32_t>();
    f.look_ahead = get_non_negative(p, "look_ahead");
    f.slowing_radius = get_non_negative(p, "slowing_radius");
    f.tolerance = get_non_negative(p, "tolerance");
    f.shape = get_target_shape(p);
    f.reachable = p.contains("reachable") && p["reachable"].cast<bool>();
    return f;
  }
  if (kind == "follow_path") {
    FollowPath f;
    f.weight = weight;
    if (py::isinstance<PathSet>(p["path"])) {
      const auto& set = p["path"].cast<const PathSet&>();
      f.paths = set.ptrs.data();
      f.path_count = set.ptrs.size();
    } else {
      f.path = &p["path"].cast<const Path&>();
    }
    f.look_ahead = get_float(p, "look_ahead");
    if (!std::isfinite(f.look_ahead)) throw py::value_error("look_ahead must be finite");
    const auto mode = p["mode"].cast<std::string>();
    if (mode != "tangent" && mode != "seek")
      throw py::value_error("mode must be 'tangent' or 'seek', got '" + mode + "'");
    f.mode = mode == "tangent" ? PathDirectionMode::kTangent : PathDirectionMode::kSeek;
    return f;
  }
  throw py::value_error("unknown behaviour kind '" + kind + "'");
}

py::tuple evaluate_py(const py::handle& agents_obj, const py::handle& behaviour,
                      const py::handle& slots_obj, bool rotate, double time, long max_neighbors,
                      const py::handle& world_obj) {
  Agents& agents = agents_of(agents_obj);
  const InUse guard({&agents}, "Behaviour.evaluate");
  check_agents(agents,
               "Behaviour.evaluate");  // the state Simulation.step would refuse (writable views)
  const Behaviour b =
      to_behaviour(behaviour, agents.capacity());  // borrows arrays held by `behaviour`
  auto slots = input_f32(slots_obj, "directions", {kAny, 2}, {"K", "2"});
  const py::ssize_t k = slots.dim(0);
  if (k < 1) throw py::value_error("directions: expected at least one slot, got 0");
  require_non_negative(time, "time");
  if (max_neighbors < 0 || static_cast<std::size_t>(max_neighbors) > kMaxNeighbors)
    throw py::value_error("max_neighbours must be in [0, " + std::to_string(kMaxNeighbors) +
                          "], got " + std::to_string(max_neighbors));
  const auto n = static_cast<py::ssize_t>(agents.capacity());
  std::shared_ptr<const World> world;
  if (!world_obj.is_none()) world = world_obj.cast<WorldHandle&>().snapshot();
  auto interest = new_array<float>({n, k});
  auto danger = new_array<float>({n, k});
  const bool has_speed = writes_speed(b);
  auto speed = new_array<float>({has_speed ? n : 0, k});
  BehaviourInputs in;
  in.agents = agents.view();
  in.slots = slots.data;
  in.k = static_cast<std::size_t>(k);
  in.rotate_with_heading = rotate;
  in.time = time;
  in.world = world && !world->grid().empty() ? world.get() : nullptr;
  NeighborTable table;
  if (needs_neighbors(b)) {
    {
      GilRelease release;
      const float r = shared_neighbor_radius({&b, 1}, in.agents);
      table.prepare(in.agents.position, in.agents.alive, static_cast<std::size_t>(n), r,
                    static_cast<std::size_t>(max_neighbors));
    }
    // A crowd packed into one cell makes the table n² distance tests: filled in slices
    // that Ctrl-C can stop, as cs.neighbours does.
    fill_rows_interruptibly(table, static_cast<std::size_t>(n));
    in.neighbors = table.lists();
  }
  {
    GilRelease release;
    std::fill_n(interest.mutable_data(), n * k, 0.0f);
    std::fill_n(danger.mutable_data(), n * k, 0.0f);
    evaluate(b, in, interest.mutable_data(), danger.mutable_data(),
             has_speed ? speed.mutable_data() : nullptr);
  }
  if (has_speed) return py::make_tuple(interest, danger, speed);
  return py::make_tuple(interest, danger);
}

}  // namespace

void bind_behaviours(py::module_& m) {
  m.def(
      "behaviour_specs",
      [] {
        py::list out;
        append_specs(out);
        return out;
      },
      "The parameter tables of the behaviours that have one (behaviour_params.hpp): a list "
      "of dicts (kind, name, doc, writes, speed_map, needs_neighbours, params).");
  m.def("evaluate_behaviour", &evaluate_py, py::arg("agents"), py::arg("behaviour"),
        py::arg("directions"), py::arg("rotate") = false, py::arg("time") = 0.0,
        py::arg("max_neighbours") = 32, py::arg("world") = py::none());
  m.def(
      "behaviour_needs_neighbours",
      [](const py::handle& behaviour) { return needs_neighbors(to_behaviour(behaviour)); },
      py::arg("behaviour"));
  m.def(
      "behaviour_neighbor_radius",
      [](const py::handle& behaviour, double max_radius, double max_speed) {
        return neighbor_radius(to_behaviour(behaviour), static_cast<float>(max_radius),
                               static_cast<float>(max_speed));
      },
      py::arg("behaviour"), py::arg("max_radius"), py::arg("max_speed"));
}

}  // namespace contextsteer::bindings
