// SPDX-License-Identifier: MIT
// Bindings of the classic (gdx-ai) steering: the spec built by contextsteer.classic →
// classic::Steering, and the functional classic_accelerations.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cmath>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "gil.hpp"
#include "agents.hpp"
#include "simulation_handle.hpp"  // check_agents
#include "arrays.hpp"
#include "classic_spec.hpp"
#include "contextsteer/classic.hpp"
#include "contextsteer/neighbours.hpp"
#include "in_use.hpp"
#include "parallel.hpp"
#include "world_handle.hpp"

namespace contextsteer::bindings {

namespace {

// Owns what the steering's spans and pointers refer to.
struct Holder {
  classic::Steering steering;
  std::vector<std::vector<std::int32_t>> ids;
  std::vector<py::object> keep;           // Python objects owning borrowed C++ data (paths)
  std::deque<std::vector<double>> walks;  // Wander random-walk state, (N,2) each (stable addresses)
};

/// A classic parameter as the core uses it: not NaN, and finite values below 2^60 in
/// magnitude (contextsteer.classic checks the same and the bounds of each parameter).
float num(const py::handle& x, const char* key, bool allow_inf = false) {
  const double v = x.cast<double>();
  if (std::isnan(v) || (std::isinf(v) && !allow_inf))
    throw py::value_error(std::string(key) + " must be finite");
  if (std::isfinite(v) && !(std::fabs(v) < kMaxMagnitude))
    throw py::value_error(std::string(key) + " must be below 2^60 (1.15e18) in magnitude, got " +
                          number_text(v));
  return static_cast<float>(v);
}

float num(const py::dict& p, const char* key, bool allow_inf = false) {
  return num(py::handle(p[key]), key, allow_inf);
}

classic::Neighbourhood neighbourhood_of(const py::dict& p) {
  using classic::Proximity;
  classic::Neighbourhood nb;
  const auto kind = p["proximity"].cast<std::string>();
  nb.kind = kind == "radius"          ? Proximity::kRadius
            : kind == "field_of_view" ? Proximity::kFieldOfView
            : kind == "cone"          ? Proximity::kCone
            : kind == "infinite"      ? Proximity::kInfinite
                                      : Proximity::kCenter;
  nb.radius = num(p, "radius");
  // As gdx-ai's FieldOfViewProximity: (float) Math.cos(angle * 0.5f) of the float angle,
  // so a neighbour exactly to the side of a half-turn view (angle π) counts.
  const float half = static_cast<float>(p["angle"].cast<double>()) * 0.5f;
  nb.cos_half_angle = static_cast<float>(std::cos(static_cast<double>(half)));
  return nb;
}

classic::Target target_of(const py::dict& p, Holder& h, std::size_t n) {
  classic::Target t;
  const auto source = p["source"].cast<std::string>();
  if (source == "own") {
    t.source = classic::Source::kOwnTarget;
  } else if (source == "point") {
    t.source = classic::Source::kPoint;
    auto a = input_f32(p["point"], "target", {2}, {"2"});
    t.point = {a.data[0], a.data[1]};
  } else if (source == "agents") {
    t.source = classic::Source::kAgents;
    auto ids = p["ids"].cast<std::vector<std::int32_t>>();
    for (std::int32_t j : ids)
      if (j < 0 || static_cast<std::size_t>(j) >= n)
        throw py::index_error("target: agent id " + std::to_string(j) + " out of range [0, " +
                              std::to_string(n) + ")");
    h.ids.push_back(std::move(ids));
    t.ids = h.ids.back();
  } else {
    throw py::value_error("target: unknown source '" + source + "'");
  }
  return t;
}

classic::Behaviour behaviour_of(const std::string& kind, const py::dict& p, Holder& h,
                                std::size_t n) {
  using namespace classic;
  if (kind == "seek") return Seek{target_of(p, h, n), p["away"].cast<bool>()};
  if (kind == "arrive") {
    return classic::Arrive{target_of(p, h, n), num(p, "tolerance"), num(p, "slowing_radius"),
                           num(p, "time_to_target")};
  }
  if (kind == "pursue")
    return Pursue{target_of(p, h, n), num(p, "max_prediction"), p["away"].cast<bool>()};
  if (kind == "match_velocity") return MatchVelocity{target_of(p, h, n), num(p, "time_to_target")};
  if (kind == "wander") {
    classic::Wander w{num(p, "offset"), num(p, "radius"), num(p, "rate"),
                      p["seed"].cast<std::uint64_t>()};
    if (p["walk"].cast<std::string>() == "random") {
      // The random walk's state (orientation, last time) lives as long as the steering.
      h.walks.emplace_back(2 * n, 0.0);
      w.walk = h.walks.back().data();
    }
    return w;
  }
  if (kind == "group") {
    const auto rule = p["rule"].cast<std::string>();
    const GroupRule r = rule == "separation"  ? GroupRule::kSeparation
                        : rule == "alignment" ? GroupRule::kAlignment
                                              : GroupRule::kCohesion;
    return Group{r, neighbourhood_of(p), num(p, "decay")};
  }
  if (kind == "collision_avoidance") {
    return CollisionAvoidance{neighbourhood_of(p), p["push_overlapping"].cast<bool>()};
  }
  if (kind == "raycast_avoidance") {
    RaycastAvoidance r;
    const auto c = p["config"].cast<std::string>();
    r.config = c == "single"     ? RayConfig::kSingle
               : c == "parallel" ? RayConfig::kParallel
                                 : RayConfig::kWhiskers;
    r.length = num(p, "length");
    r.side_offset = num(p, "side_offset");
    r.whisker_length = num(p, "whisker_length");
    r.whisker_angle = num(p, "whisker_angle");
    r.distance_from_boundary = num(p, "distance_from_boundary");
    r.layers = p["layers"].cast<std::uint32_t>();
    r.include_radius = p["include_radius"].cast<bool>();
    return r;
  }
  if (kind == "follow_path") {
    classic::FollowPath f;
    h.keep.push_back(p["path"]);
    f.path = &p["path"].cast<const Path&>();
    f.path_offset = num(p, "path_offset");
    f.prediction = num(p, "prediction");
    f.slowing_radius = num(p, "slowing_radius");
    const auto arrive = p["arrive"].cast<std::string>();
    f.arrive = arrive == "slowing_radius" ? PathArrive::kNearEnd
               : arrive == "end"          ? PathArrive::kEnd
                                          : PathArrive::kOff;
    f.tolerance = num(p, "tolerance");
    f.time_to_target = num(p, "time_to_target");
    return f;
  }
  if (kind == "interpose") {
    const auto a = p["a"].cast<long>(), b = p["b"].cast<long>();
    for (long j : {a, b})
      if (j < 0 || static_cast<std::size_t>(j) >= n)
        throw py::index_error("interpose: agent id " + std::to_string(j) + " out of range [0, " +
                              std::to_string(n) + ")");
    return Interpose{
        static_cast<std::int32_t>(a), static_cast<std::int32_t>(b), num(p, "ratio"),
        num(p, "slowing_radius"),     num(p, "tolerance"),          num(p, "time_to_target")};
  }
  if (kind == "flow_field") {
    FlowField f;
    h.keep.push_back(p["field"]);
    auto a = input_f32(p["field"], "field", {kAny, kAny, 2}, {"rows", "cols", "2"});
    f.vectors = a.data;
    f.rows = static_cast<int>(a.dim(0));
    f.cols = static_cast<int>(a.dim(1));
    if (f.rows < 1 || f.cols < 1) throw py::value_error("field: expected at least one node");
    auto o = input_f32(p["origin"], "origin", {2}, {"2"});
    f.origin = {o.data[0], o.data[1]};
    f.cell = num(p, "cell");
    f.prediction = num(p, "prediction");
    return f;
  }
  if (kind == "hide") {
    return Hide{target_of(p, h, n),           num(p, "distance_from_boundary"),
                num(p, "max_distance", true), num(p, "slowing_radius"),
                num(p, "tolerance"),          num(p, "time_to_target")};
  }
  throw py::value_error("unknown classic behaviour '" + kind + "'");
}

}  // namespace

std::shared_ptr<const classic::Steering> classic_steering(const py::handle& spec,
                                                          std::size_t n_agents) {
  auto h = std::make_shared<Holder>();
  const auto d = spec.cast<py::dict>();
  h->steering.epsilon = num(d, "epsilon");
  const auto groups = d["groups"].cast<py::list>();
  // Reserve so the id vectors (spans point into them) never move their buffers... they
  // would not anyway (moving a vector keeps its heap block), but keep it obvious.
  h->ids.reserve(64);
  const auto truncate = d["truncate"].cast<std::vector<bool>>();
  if (truncate.size() != groups.size())
    throw py::value_error("spec: one truncate flag per group expected");
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    const auto g = groups[gi];
    classic::Blended b;
    b.truncate = truncate[gi];
    for (const auto& item : g.cast<py::list>()) {
      const auto t = item.cast<py::tuple>();
      b.behaviours.push_back(
          behaviour_of(t[0].cast<std::string>(), t[1].cast<py::dict>(), *h, n_agents));
      b.weights.push_back(num(py::handle(t[2]), "Blended weight"));
    }
    h->steering.groups.push_back(std::move(b));
  }
  return {h, &h->steering};
}

void bind_classic(py::module_& m) {
  m.def(
      "classic_accelerations",
      [](py::object world, py::object agents_obj, const py::handle& spec, double time,
         long max_neighbors) {
        if (max_neighbors < 1 || static_cast<std::size_t>(max_neighbors) > kMaxNeighbors)
          throw py::value_error("max_neighbours must be in [1, " + std::to_string(kMaxNeighbors) +
                                "], got " + std::to_string(max_neighbors));
        if (!std::isfinite(time) || time < 0.0)
          throw py::value_error("time must be a finite number >= 0");
        const auto m_nb = static_cast<std::size_t>(max_neighbors);
        Agents& agents = agents_of(agents_obj);
        const InUse guard({&agents}, "classic.accelerations");
        check_agents(agents, "classic.accelerations");
        const std::size_t n = agents.capacity();
        auto steering = classic_steering(spec, n);
        std::shared_ptr<const World> snap;
        if (!world.is_none()) snap = world.cast<WorldHandle&>().snapshot();
        auto out = new_array<float>({static_cast<py::ssize_t>(n), 2});
        float* o = out.mutable_data();
        {
          GilRelease release;
          const AgentsView v = agents.view();
          classic::Inputs in{v, {}, snap && !snap->grid().empty() ? snap.get() : nullptr, time};
          float rmax = 0.0f;
          for (std::size_t i = 0; i < n; ++i)
            if (v.alive[i]) rmax = std::max(rmax, v.radius[i]);
          const float radius = classic::neighbor_radius(*steering, rmax);
          NeighborGrid grid;
          std::vector<std::int32_t> idx, cnt;
          if (radius > 0.0f) {
            grid.rebuild(v.position, v.alive, n, radius);
            idx.assign(n * m_nb, -1);
            cnt.assign(n, 0);
            find_neighbors(grid, v.position, v.alive, n, radius, m_nb, idx.data(), cnt.data());
            in.neighbors = {idx.data(), cnt.data(), m_nb};
          }
          parallel_for(n, 128, [&](std::size_t b, std::size_t e) {
            classic::accelerate_rows(*steering, in, o, b, e);
          });
        }
        return out;
      },
      py::arg("world"), py::arg("agents"), py::arg("spec"), py::arg("time") = 0.0,
      py::arg("max_neighbours") = 16);
}

}  // namespace contextsteer::bindings
