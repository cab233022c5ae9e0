// SPDX-License-Identifier: MIT
// Bindings of the context-map engine: slot sets, dot_map, combine, resolve, choose,
// steer (the three fused), spread, blend and ContextMaps. Inputs are checked here (never converted), the GIL is
// released around the core call, and a finite check fused into the kernels' pass over
// the data reports NaN/inf afterwards (the slow check_finite then names the culprit). So an
// out= array may be written before the error is raised (as NumPy's out= under
// np.errstate(all="raise")); the inputs are never written, except one passed as out.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <utility>

#include "gil.hpp"
#include "arrays.hpp"
#include "modes.hpp"
#include "contextsteer/choose.hpp"
#include "contextsteer/combine.hpp"
#include "contextsteer/context_maps.hpp"
#include "contextsteer/dot_map.hpp"
#include "contextsteer/pipeline.hpp"
#include "contextsteer/postprocess.hpp"
#include "contextsteer/resolve.hpp"
#include "contextsteer/slot_set.hpp"

namespace py = pybind11;

namespace contextsteer::bindings {

namespace {

// More slots than any sensor uses, and few enough that a ring's tables fit in memory
// (SlotSet(10**9) would have asked for some 24 GB).
constexpr py::ssize_t kMaxRingSlots = 65536;

void require_slots(py::ssize_t k, const char* what) {
  if (k < static_cast<py::ssize_t>(kMinSlots))
    throw py::value_error(std::string(what) +
                          ": expected K >= 3 slots, got K = " + std::to_string(k));
  if (k > kMaxRingSlots)
    throw py::value_error(std::string(what) + ": expected K <= " + std::to_string(kMaxRingSlots) +
                          " slots, got K = " + std::to_string(k));
}

// out= arrays are refused with TypeError for any mismatch, shape included: they are
// never converted, so a wrong one is a programming error, not a value problem.
template <class T>
Checked<T> out_array(const py::handle& obj, const char* what,
                     std::initializer_list<py::ssize_t> pattern,
                     std::initializer_list<const char*> names) {
  try {
    return check_array<T>(obj, what, pattern, names, true);
  } catch (py::value_error& e) {
    throw py::type_error(e.what());
  }
}

template <class T>
std::pair<py::object, Checked<T>> out_or_new(const py::object& out, const char* what,
                                             std::initializer_list<py::ssize_t> shape,
                                             std::initializer_list<const char*> names) {
  py::object arr = out.is_none() ? py::object(new_array<T>(shape)) : out;
  return {arr, out_array<T>(arr, what, shape, names)};
}

const SlotSet& slots_for(const SlotSet& slots, py::ssize_t k, const char* what) {
  if (static_cast<py::ssize_t>(slots.size()) != k) {
    throw py::value_error(std::string(what) + " has K = " + std::to_string(k) +
                          " slots but the slot set has " + std::to_string(slots.size()));
  }
  return slots;
}

CombineMode combine_mode(const std::string& mode, const char* owner, const char* argument) {
  return parse_mode(kCombineModes, py::str(mode), owner, argument);
}

ResolveMode resolve_mode(const std::string& mode, const char* owner, const char* argument) {
  return parse_mode(kResolveModes, py::str(mode), owner, argument);
}

ChooseMode choose_mode(const std::string& mode, const char* owner, const char* argument) {
  return parse_mode(kChooseModes, py::str(mode), owner, argument);
}

// Weights of combine: required by, and only allowed with, kWeightedSum.
Checked<const float> combine_weights(CombineMode cm, const std::string& mode,
                                     const py::object& weights, py::ssize_t b) {
  Checked<const float> w;
  if (cm == CombineMode::kWeightedSum) {
    if (weights.is_none())
      throw py::value_error("combine: mode 'weighted_sum' needs weights of shape (B,)");
    w = input_f32(weights, "weights", {b}, {"B"});
  } else if (!weights.is_none()) {
    throw py::value_error("combine: weights are only used by mode 'weighted_sum', got mode '" +
                          mode + "'");
  }
  return w;
}

}  // namespace

void bind_maps(py::module_& m) {
  m.def(
      "slot_directions",
      [](py::ssize_t k, double offset) {
        require_slots(k, "slot_directions");
        require_finite(offset, "offset");
        auto out = new_array<float>({k, 2});
        slot_directions(static_cast<std::size_t>(k), offset,
                        {out.mutable_data(), static_cast<std::size_t>(2 * k)});
        return out;
      },
      py::arg("k"), py::arg("offset") = 0.0);

  py::class_<SlotSet>(m, "SlotSet")
      .def(py::init([](py::ssize_t k, double offset) {
             require_slots(k, "SlotSet");
             require_finite(offset, "offset");
             return SlotSet::ring(static_cast<std::size_t>(k), offset);
           }),
           py::arg("k"), py::arg("offset") = 0.0)
      .def_static(
          "from_directions",
          [](py::handle xy) {
            auto a = input_f32(xy, "directions", {kAny, 2}, {"K", "2"});
            require_slots(a.dim(0), "directions");
            std::size_t bad = 0;
            const std::string err = SlotSet::check_ring(a.span(), &bad);
            if (!err.empty()) {
              throw py::value_error("directions: " + err + " (at slot " + std::to_string(bad) +
                                    ")");
            }
            return SlotSet::from_directions(a.span());
          },
          py::arg("directions"))
      .def_property_readonly("k", [](const SlotSet& s) { return s.size(); })
      .def_property_readonly("offset", &SlotSet::offset)
      .def_property_readonly("regular", &SlotSet::regular)
      .def_property_readonly("directions",
                             [](py::object self) {
                               auto& s = self.cast<const SlotSet&>();
                               return view_of(const_cast<float*>(s.directions()),
                                              {static_cast<py::ssize_t>(s.size()), 2}, self, false);
                             })
      .def_property_readonly("gaps",
                             [](py::object self) {
                               auto& s = self.cast<const SlotSet&>();
                               return view_of(const_cast<float*>(s.gaps()),
                                              {static_cast<py::ssize_t>(s.size())}, self, false);
                             })
      .def_property_readonly("neighbours", [](py::object self) {
        auto& s = self.cast<const SlotSet&>();
        return view_of(const_cast<std::int32_t*>(s.neighbours()),
                       {static_cast<py::ssize_t>(s.size()), 2}, self, false);
      });

  m.def(
      "dot_map",
      [](const SlotSet& slots, py::handle vectors, const std::string& shape, double weight,
         py::object weights, bool magnitude, py::object out) {
        auto v = check_array<const float>(vectors, "vectors", {kAny, 2}, {"N", "2"});
        const py::ssize_t n = v.dim(0), k = static_cast<py::ssize_t>(slots.size());
        require_finite(weight, "weight");
        DotMapParams p;
        p.shape = parse_mode(kDotShapes, py::str(shape), "dot_map", "shape");
        p.weight = static_cast<float>(weight);
        p.magnitude = magnitude;
        Checked<const float> w;
        if (!weights.is_none()) {
          w = check_array<const float>(weights, "weights", {n}, {std::to_string(n).c_str()});
          p.agent_weights = w.span();
        }
        auto [arr, o] = out_or_new<float>(out, "out", {n, k},
                                          {std::to_string(n).c_str(), std::to_string(k).c_str()});
        refuse_overlap(o, "out", v, "vectors", false);
        if (w.data) refuse_overlap(o, "out", w, "weights", false);
        std::atomic<bool> bad{false};
        {
          GilRelease release;
          dot_map(slots, v.span(), p, o.span(), &bad);
        }
        if (bad) {
          check_finite(v, "vectors");
          if (w.data) check_finite(w, "weights");
          unlocated_bad("dot_map");
        }
        return arr;
      },
      py::arg("slots"), py::arg("vectors"), py::kw_only(), py::arg("shape"), py::arg("weight"),
      py::arg("weights"), py::arg("magnitude"), py::arg("out").noconvert() = py::none());

  m.def(
      "combine",
      [](py::handle maps, const std::string& mode, py::object weights, py::object out) {
        auto s = check_array<const float>(maps, "maps", {kAny, kAny, kAny}, {"B", "N", "K"});
        const py::ssize_t b = s.dim(0), n = s.dim(1), k = s.dim(2);
        if (b < 1) throw py::value_error("maps: expected at least one map (B >= 1), got B = 0");
        require_slots(k, "maps");
        const CombineMode cm = combine_mode(mode, "combine", "mode");
        const Checked<const float> w = combine_weights(cm, mode, weights, b);
        auto [arr, o] = out_or_new<float>(out, "out", {n, k},
                                          {std::to_string(n).c_str(), std::to_string(k).c_str()});
        refuse_overlap(o, "out", s, "maps", false);
        if (w.data) refuse_overlap(o, "out", w, "weights", false);  // (read while out is written)
        std::atomic<bool> bad{false};
        {
          GilRelease release;
          combine(s.span(), static_cast<std::size_t>(b), static_cast<std::size_t>(n),
                  static_cast<std::size_t>(k), cm, w.span(), o.span(), &bad);
        }
        if (bad) {
          check_finite(s, "maps");
          unlocated_bad("combine");
        }
        return arr;
      },
      py::arg("maps"), py::arg("mode"), py::arg("weights") = py::none(),
      py::arg("out").noconvert() = py::none());

  m.def(
      "resolve",
      [](py::handle interest, py::handle danger, const std::string& mode, double threshold,
         double epsilon, const SlotSet* slots, py::object out) {
        auto in = check_array<const float>(interest, "interest", {kAny, kAny}, {"N", "K"});
        const py::ssize_t n = in.dim(0), k = in.dim(1);
        require_slots(k, "interest");
        const std::string ns = std::to_string(n), ks = std::to_string(k);
        auto dg = check_array<const float>(danger, "danger", {n, k}, {ns.c_str(), ks.c_str()});
        require_finite(threshold, "threshold");
        require_non_negative(epsilon, "epsilon");
        ResolveParams p;
        p.mode = resolve_mode(mode, "resolve", "mode");
        p.threshold = static_cast<float>(threshold);
        p.epsilon = static_cast<float>(epsilon);
        if (p.mode == ResolveMode::kAvoidOpposite) {
          if (!slots)
            throw py::value_error("resolve: mode 'avoid_opposite' needs the slot directions");
          slots_for(*slots, k, "interest");
        }
        auto [arr, o] = out_or_new<float>(out, "out", {n, k},
                                          {std::to_string(n).c_str(), std::to_string(k).c_str()});
        refuse_overlap(o, "out", in, "interest", true);
        refuse_overlap(o, "out", dg, "danger", p.mode != ResolveMode::kAvoidOpposite);
        // In place: the input that out is gets checked before the kernel writes over it,
        // so the error names the right input and a NaN under a masked slot is reported.
        const bool into_interest = same_array(o, in), into_danger = same_array(o, dg);
        if (into_interest) check_finite(in, "interest");
        if (into_danger) check_finite(dg, "danger");
        std::atomic<bool> bad{false};
        {
          GilRelease release;
          resolve(in.span(), dg.span(), static_cast<std::size_t>(n), static_cast<std::size_t>(k), p,
                  slots, o.span(), &bad);
        }
        if (bad) {
          if (!into_interest) check_finite(in, "interest");
          if (!into_danger) check_finite(dg, "danger");
          unlocated_bad("resolve");
        }
        return arr;
      },
      py::arg("interest"), py::arg("danger"), py::arg("mode"), py::arg("threshold"),
      py::arg("epsilon"), py::arg("slots"), py::arg("out").noconvert() = py::none());

  m.def(
      "choose",
      [](py::handle values, const SlotSet& slots, const std::string& mode, py::ssize_t width,
         bool contiguous, py::object out_direction, py::object out_strength, py::object out_slot) {
        auto v = check_array<const float>(values, "values", {kAny, kAny}, {"N", "K"});
        const py::ssize_t n = v.dim(0), k = v.dim(1);
        require_slots(k, "values");
        slots_for(slots, k, "values");
        if (width < 0) throw py::value_error("width: expected >= 0, got " + std::to_string(width));
        ChooseParams p;
        p.mode = choose_mode(mode, "choose", "mode");
        p.width = static_cast<std::size_t>(width);
        p.contiguous = contiguous;
        auto [da, d] = out_or_new<float>(out_direction, "out.direction", {n, 2},
                                         {std::to_string(n).c_str(), "2"});
        auto [sa, s] =
            out_or_new<float>(out_strength, "out.strength", {n}, {std::to_string(n).c_str()});
        auto [ia, i] =
            out_or_new<std::int32_t>(out_slot, "out.slot", {n}, {std::to_string(n).c_str()});
        refuse_overlap(d, "out.direction", v, "values", false);
        refuse_overlap(s, "out.strength", v, "values", false);
        refuse_overlap(i, "out.slot", v, "values", false);
        refuse_overlap(d, "out.direction", s, "out.strength", false);
        refuse_overlap(d, "out.direction", i, "out.slot", false);
        refuse_overlap(s, "out.strength", i, "out.slot", false);
        std::atomic<bool> bad{false};
        {
          GilRelease release;
          choose(v.span(), static_cast<std::size_t>(n), static_cast<std::size_t>(k), slots, p,
                 d.span(), s.span(), i.span(), &bad);
        }
        if (bad) {
          check_finite(v, "values");
          unlocated_bad("choose");
        }
        return py::make_tuple(da, sa, ia);
      },
      py::arg("values"), py::arg("slots"), py::arg("mode"), py::arg("width"), py::arg("contiguous"),
      py::arg("out_direction").noconvert() = py::none(),
      py::arg("out_strength").noconvert() = py::none(),
      py::arg("out_slot").noconvert() = py::none());

  m.def(
      "steer",
      [](py::handle maps, py::handle danger, const SlotSet& slots, const std::string& combine,
         py::object weights, const std::string& resolve, double threshold, double epsilon,
         const std::string& choose, py::ssize_t width, bool contiguous, py::object out_direction,
         py::object out_strength, py::object out_slot) {
        auto s =
            check_array<const float>(maps, "interest_maps", {kAny, kAny, kAny}, {"B", "N", "K"});
        const py::ssize_t b = s.dim(0), n = s.dim(1), k = s.dim(2);
        if (b < 1)
          throw py::value_error("interest_maps: expected at least one map (B >= 1), got B = 0");
        require_slots(k, "interest_maps");
        const std::string ns = std::to_string(n), ks = std::to_string(k);
        auto dg = check_array<const float>(danger, "danger", {n, k}, {ns.c_str(), ks.c_str()});
        slots_for(slots, k, "interest_maps");
        SteerParams p;
        p.combine = combine_mode(combine, "steer", "combine");
        const Checked<const float> w = combine_weights(p.combine, combine, weights, b);
        p.weights = w.span();
        require_finite(threshold, "threshold");
        require_non_negative(epsilon, "epsilon");
        p.resolve.mode = resolve_mode(resolve, "steer", "resolve");
        p.resolve.threshold = static_cast<float>(threshold);
        p.resolve.epsilon = static_cast<float>(epsilon);
        if (width < 0) throw py::value_error("width: expected >= 0, got " + std::to_string(width));
        p.choose.mode = choose_mode(choose, "steer", "choose");
        p.choose.width = static_cast<std::size_t>(width);
        p.choose.contiguous = contiguous;
        auto [da, d] = out_or_new<float>(out_direction, "out.direction", {n, 2}, {ns.c_str(), "2"});
        auto [sa, st] = out_or_new<float>(out_strength, "out.strength", {n}, {ns.c_str()});
        auto [ia, i] = out_or_new<std::int32_t>(out_slot, "out.slot", {n}, {ns.c_str()});
        refuse_overlap(d, "out.direction", s, "interest_maps", false);
        refuse_overlap(st, "out.strength", s, "interest_maps", false);
        refuse_overlap(i, "out.slot", s, "interest_maps", false);
        refuse_overlap(d, "out.direction", dg, "danger", false);
        refuse_overlap(st, "out.strength", dg, "danger", false);
        refuse_overlap(i, "out.slot", dg, "danger", false);
        refuse_overlap(d, "out.direction", st, "out.strength", false);
        refuse_overlap(d, "out.direction", i, "out.slot", false);
        refuse_overlap(st, "out.strength", i, "out.slot", false);
        if (w.data) {
          refuse_overlap(d, "out.direction", w, "weights", false);
          refuse_overlap(st, "out.strength", w, "weights", false);
          refuse_overlap(i, "out.slot", w, "weights", false);
        }
        // Rows longer than a cache block need an intermediate map of their own.
        py::array_t<float> big;
        std::span<float> big_scratch;
        if (static_cast<std::size_t>(k) > kSteerBlockFloats) {
          big = new_array<float>({n, k});
          big_scratch = {big.mutable_data(), static_cast<std::size_t>(n * k)};
        }
        std::atomic<bool> bad{false};
        {
          GilRelease release;
          steer(s.span(), static_cast<std::size_t>(b), static_cast<std::size_t>(n),
                static_cast<std::size_t>(k), dg.span(), slots, p, d.span(), st.span(), i.span(),
                big_scratch, &bad);
        }
        if (bad) {
          check_finite(s, "interest_maps");
          check_finite(dg, "danger");
          unlocated_bad("steer");
        }
        return py::make_tuple(da, sa, ia);
      },
      py::arg("interest_maps"), py::arg("danger"), py::arg("slots"), py::arg("combine"),
      py::arg("weights"), py::arg("resolve"), py::arg("threshold"), py::arg("epsilon"),
      py::arg("choose"), py::arg("width"), py::arg("contiguous"),
      py::arg("out_direction").noconvert() = py::none(),
      py::arg("out_strength").noconvert() = py::none(),
      py::arg("out_slot").noconvert() = py::none());

  m.def(
      "spread",
      [](py::handle values, py::handle kernel, const std::string& mode, py::object out) {
        auto v = check_array<const float>(values, "values", {kAny, kAny}, {"N", "K"});
        const py::ssize_t n = v.dim(0), k = v.dim(1);
        require_slots(k, "values");
        auto w = input_f32(kernel, "kernel", {kAny}, {"L"});
        const py::ssize_t len = w.dim(0);
        if (len % 2 == 0 || len > k) {
          throw py::value_error("kernel: expected an odd length L <= K = " + std::to_string(k) +
                                ", got L = " + std::to_string(len));
        }
        const SpreadMode sm = parse_mode(kSpreadModes, py::str(mode), "spread", "mode");
        auto [arr, o] = out_or_new<float>(out, "out", {n, k},
                                          {std::to_string(n).c_str(), std::to_string(k).c_str()});
        refuse_overlap(o, "out", v, "values", false);
        refuse_overlap(o, "out", w, "kernel", false);  // (read while out is written)
        std::atomic<bool> bad{false};
        // Its work is N·K·L, quadratic in K for a kernel as long as the ring: cut into
        // slices of rows of about 2^27 multiply-adds (tens of milliseconds), or one row
        // where a row is more (1.4 s at K = 65536, L = 65535), with a Ctrl-C poll between
        // them. Rows are independent: slicing changes no result.
        const auto rows = static_cast<std::size_t>(n), ks = static_cast<std::size_t>(k);
        const std::size_t per =
            std::max<std::size_t>(1, (std::size_t{1} << 27) / (ks * static_cast<std::size_t>(len)));
        for (std::size_t b = 0; b < rows; b += per) {
          const std::size_t e = std::min(rows, b + per);
          {
            GilRelease release;
            spread(v.span().subspan(b * ks, (e - b) * ks), e - b, ks, w.span(), sm,
                   o.span().subspan(b * ks, (e - b) * ks), &bad);
          }
          if (e < rows && PyErr_CheckSignals() != 0) throw py::error_already_set();
        }
        if (bad) {
          check_finite(v, "values");
          unlocated_bad("spread");
        }
        return arr;
      },
      py::arg("values"), py::arg("kernel"), py::arg("mode"),
      py::arg("out").noconvert() = py::none());

  m.def(
      "blend",
      [](py::handle previous, py::handle current, double alpha, py::object out) {
        auto p = check_array<const float>(previous, "previous", {kAny, kAny}, {"N", "K"});
        const py::ssize_t n = p.dim(0), k = p.dim(1);
        require_slots(k, "previous");
        const std::string ns = std::to_string(n), ks = std::to_string(k);
        auto c = check_array<const float>(current, "current", {n, k}, {ns.c_str(), ks.c_str()});
        if (!(alpha >= 0.0 && alpha <= 1.0)) {
          throw py::value_error("alpha: expected a number in [0, 1], got " + number_text(alpha));
        }
        auto [arr, o] = out_or_new<float>(out, "out", {n, k},
                                          {std::to_string(n).c_str(), std::to_string(k).c_str()});
        refuse_overlap(o, "out", p, "previous", true);
        refuse_overlap(o, "out", c, "current", true);
        // In place: as resolve's.
        const bool into_previous = same_array(o, p), into_current = same_array(o, c);
        if (into_previous) check_finite(p, "previous");
        if (into_current) check_finite(c, "current");
        std::atomic<bool> bad{false};
        {
          GilRelease release;
          blend(p.span(), c.span(), static_cast<std::size_t>(n), static_cast<std::size_t>(k),
                static_cast<float>(alpha), o.span(), &bad);
        }
        if (bad) {
          if (!into_previous) check_finite(p, "previous");
          if (!into_current) check_finite(c, "current");
          unlocated_bad("blend");
        }
        return arr;
      },
      py::arg("previous"), py::arg("current"), py::arg("alpha"),
      py::arg("out").noconvert() = py::none());

  py::class_<ContextMaps>(m, "ContextMaps")
      .def(py::init([](py::ssize_t n, py::ssize_t k) {
             if (n < 0)
               throw py::value_error("ContextMaps: expected n >= 0 agents, got " +
                                     std::to_string(n));
             require_slots(k, "ContextMaps");
             return new ContextMaps(static_cast<std::size_t>(n), static_cast<std::size_t>(k));
           }),
           py::arg("n"), py::arg("k"))
      .def_property_readonly("n", &ContextMaps::agents)
      .def_property_readonly("k", &ContextMaps::slots)
      .def_property_readonly(
          "interest",
          [](py::object self) {
            auto& c = self.cast<ContextMaps&>();
            return view_of(
                c.interest(),
                {static_cast<py::ssize_t>(c.agents()), static_cast<py::ssize_t>(c.slots())}, self);
          })
      .def_property_readonly(
          "danger",
          [](py::object self) {
            auto& c = self.cast<ContextMaps&>();
            return view_of(
                c.danger(),
                {static_cast<py::ssize_t>(c.agents()), static_cast<py::ssize_t>(c.slots())}, self);
          })
      .def("clear", &ContextMaps::clear);
}

}  // namespace contextsteer::bindings
