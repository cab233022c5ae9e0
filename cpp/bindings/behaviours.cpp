// SPDX-License-Identifier: MIT
// Bindings of the behaviour kernels: Python config objects → C++ variants, and a
// one-behaviour evaluation used by tests and notebooks.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "agents.hpp"
#include "in_use.hpp"
#include "arrays.hpp"
#include "contextsteer/neighbours.hpp"
#include "contextsteer/path.hpp"
#include "nav.hpp"
#include "world_handle.hpp"

namespace contextsteer::bindings {

namespace {

float get_float(const py::dict& p, const char* key) {
  const double v = p[key].cast<double>();
  if (std::isnan(v)) throw py::value_error(std::string(key) + " must not be NaN");
  if (std::isfinite(v) && !(std::fabs(v) < kMaxMagnitude))
    throw py::value_error(std::string(key) + " must be below 2^60 (1.15e18) in magnitude, got " +
                          std::to_string(v));
  return static_cast<float>(v);
}

/// A scalar >= 0 as the core uses it: finite and < kMaxMagnitude (so that it stays finite
/// as a float32 and in the sums and products of a step), or +inf where allowed.
float get_non_negative(const py::dict& p, const char* key, bool allow_inf = false) {
  const double v = p[key].cast<double>();
  if (allow_inf && v == std::numeric_limits<double>::infinity())
    return std::numeric_limits<float>::infinity();
  if (!(v >= 0.0) || !(v < kMaxMagnitude))
    throw py::value_error(std::string(key) +
                          " must be a finite number >= 0 and below 2^60 (1.15e18), got " +
                          std::to_string(v));
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

/// The optional "shape" of target behaviours: true for "half_cosine".
bool get_half_cosine(const py::dict& p) {
  if (!p.contains("shape")) return false;
  const auto shape = p["shape"].cast<std::string>();
  if (shape != "clamped_cosine" && shape != "half_cosine")
    throw py::value_error("shape must be 'clamped_cosine' or 'half_cosine', got '" + shape + "'");
  return shape == "half_cosine";
}

Falloff get_falloff(const py::dict& p) {
  const auto s = p["falloff"].cast<std::string>();
  if (s == "linear") return Falloff::kLinear;
  if (s == "none") return Falloff::kNone;
  throw py::value_error("falloff must be 'linear' or 'none', got '" + s + "'");
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
      throw py::value_error("agent_weights: expected one weight per agent slot, shape (" +
                            std::to_string(n_agents) + ",), got (" + std::to_string(w.size()) +
                            ",)");
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
  }
  return b;
}

namespace {
Behaviour behaviour_of(const std::string& kind, const py::dict& p) {
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
    t.half_cosine = get_half_cosine(p);
    return t;
  }
  if (kind == "arrive") {
    Arrive a;
    a.weight = weight;
    a.slowing_radius = get_positive(p, "slowing_radius");
    a.tolerance = get_non_negative(p, "tolerance");
    a.half_cosine = get_half_cosine(p);
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
  if (kind == "agent_danger") {
    AgentDanger d;
    d.weight = weight;
    d.radius = get_positive(p, "radius");
    d.predictive = p["predictive"].cast<bool>();
    d.horizon = get_positive(p, "horizon");
    d.falloff = get_falloff(p);
    d.groups = get_groups(p);
    return d;
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
    f.field = &p["field"].cast<const PyNavField&>().field;
    const auto by = p["by"].cast<std::string>();
    if (by == "shared") f.select = FieldSelect::kShared;
    else if (by == "group") f.select = FieldSelect::kGroup;
    else if (by == "index") f.select = FieldSelect::kIndex;
    else throw py::value_error("by must be 'shared', 'group' or 'index', got '" + by + "'");
    f.shared = p["shared"].cast<std::int32_t>();
    f.look_ahead = get_non_negative(p, "look_ahead");
    f.slowing_radius = get_non_negative(p, "slowing_radius");
    f.tolerance = get_non_negative(p, "tolerance");
    f.half_cosine = get_half_cosine(p);
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
  if (kind == "wall_danger") {
    WallDanger w;
    w.weight = weight;
    w.look_ahead = get_positive(p, "look_ahead");
    const auto falloff = p["falloff"].cast<std::string>();
    if (falloff == "binary") w.falloff = WallFalloff::kBinary;
    else if (falloff == "linear") w.falloff = WallFalloff::kLinear;
    else if (falloff == "quadratic") w.falloff = WallFalloff::kQuadratic;
    else
      throw py::value_error("falloff must be 'binary', 'linear' or 'quadratic', got '" + falloff +
                            "'");
    const long spread = p["spread"].cast<long>();
    if (spread < 0) throw py::value_error("spread must be >= 0, got " + std::to_string(spread));
    w.spread = static_cast<std::uint32_t>(spread);
    w.padding = get_non_negative(p, "padding");
    w.layers = p["layers"].cast<std::uint32_t>();
    w.ray_radius = p["ray_radius"].is_none() ? -1.0f : get_non_negative(p, "ray_radius");
    w.agents = p["agents"].cast<bool>();
    return w;
  }
  if (kind == "collision_danger") {
    CollisionDanger c;
    c.weight = weight;
    c.horizon = get_positive(p, "horizon");
    c.wall_horizon = p.contains("wall_horizon") && !p["wall_horizon"].is_none()
                         ? get_positive(p, "wall_horizon")
                         : c.horizon;
    const long speeds = p["speeds"].cast<long>();
    if (speeds < 1 || speeds > 64)
      throw py::value_error("speeds must be in [1, 64], got " + std::to_string(speeds));
    c.speeds = static_cast<std::uint32_t>(speeds);
    c.margin = get_non_negative(p, "margin");
    c.reciprocity = get_non_negative(p, "reciprocity");
    if (!(c.reciprocity < 1.0f))
      throw py::value_error("reciprocity must be in [0, 1), got " + std::to_string(c.reciprocity));
    c.walls = p["walls"].cast<bool>();
    c.layers = p["layers"].cast<std::uint32_t>();
    const auto side = p["side"].cast<std::string>();
    if (side == "right") c.side = 1.0f;
    else if (side == "left") c.side = -1.0f;
    else if (side == "none") c.side = 0.0f;
    else throw py::value_error("side must be 'right', 'left' or 'none', got '" + side + "'");
    c.side_bias = get_non_negative(p, "side_bias");
    c.smoothness = p.contains("smoothness") ? get_non_negative(p, "smoothness") : 0.0f;
    c.commit = p.contains("commit") ? get_non_negative(p, "commit") : 0.0f;
    if (!(c.commit < 1.0f))
      throw py::value_error("commit must be in [0, 1), got " + std::to_string(c.commit));
    return c;
  }
  throw py::value_error("unknown behaviour kind '" + kind + "'");
}

py::tuple evaluate_py(const py::handle& agents_obj, const py::handle& behaviour,
                      const py::handle& slots_obj, bool rotate, double time, long max_neighbors,
                      const py::handle& world_obj) {
  Agents& agents = agents_of(agents_obj);
  const InUse guard({&agents}, "Behaviour.evaluate");
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
  if (const auto* t = std::get_if<Targets>(&b)) {
    for (std::int32_t j : t->target_ids)
      if (j < 0 || j >= n)
        throw py::index_error("targets: agent id " + std::to_string(j) + " out of range [0, " +
                              std::to_string(n) + ")");
  }
  std::shared_ptr<const World> world;
  if (!world_obj.is_none()) world = world_obj.cast<WorldHandle&>().snapshot();
  auto interest = new_array<float>({n, k});
  auto danger = new_array<float>({n, k});
  const bool has_speed = writes_speed(b);
  auto speed = new_array<float>({has_speed ? n : 0, k});
  {
    py::gil_scoped_release release;
    std::fill_n(interest.mutable_data(), n * k, 0.0f);
    std::fill_n(danger.mutable_data(), n * k, 0.0f);
    BehaviourInputs in;
    in.agents = agents.view();
    in.slots = slots.data;
    in.k = static_cast<std::size_t>(k);
    in.rotate_with_heading = rotate;
    in.time = time;
    in.world = world && !world->grid().empty() ? world.get() : nullptr;
    NeighborTable table;
    if (needs_neighbors(b)) {
      const float r = shared_neighbor_radius({&b, 1}, in.agents);
      table.build(in.agents.position, in.agents.alive, static_cast<std::size_t>(n), r,
                  static_cast<std::size_t>(max_neighbors));
      in.neighbors = table.lists();
    }
    evaluate(b, in, interest.mutable_data(), danger.mutable_data(),
             has_speed ? speed.mutable_data() : nullptr);
  }
  if (has_speed) return py::make_tuple(interest, danger, speed);
  return py::make_tuple(interest, danger);
}

}  // namespace

void bind_behaviours(py::module_& m) {
  m.def("evaluate_behaviour", &evaluate_py, py::arg("agents"), py::arg("behaviour"),
        py::arg("directions"), py::arg("rotate") = false, py::arg("time") = 0.0,
        py::arg("max_neighbours") = 32, py::arg("world") = py::none());
  m.def(
      "behaviour_neighbor_radius",
      [](const py::handle& behaviour, double max_radius, double max_speed) {
        return neighbor_radius(to_behaviour(behaviour), static_cast<float>(max_radius),
                               static_cast<float>(max_speed));
      },
      py::arg("behaviour"), py::arg("max_radius"), py::arg("max_speed"));
}

}  // namespace contextsteer::bindings
