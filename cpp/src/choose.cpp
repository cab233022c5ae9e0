// SPDX-License-Identifier: MIT
#include "contextsteer/choose.hpp"

#include <algorithm>
#include <cmath>

#include "contextsteer/batch.hpp"

namespace contextsteer {

namespace {

struct Out {
  float x, y, strength;
  std::int32_t slot;
};

constexpr Out kNothing{0.0f, 0.0f, 0.0f, -1};

float unit_strength(float v) { return std::clamp(v, 0.0f, 1.0f); }

// Highest slot, lowest index on ties; -1 when no value is positive.
std::int32_t best_slot(const float* v, std::size_t k) {
  std::size_t b = 0;
  float best = v[0];
  for (std::size_t j = 1; j < k; ++j) {
    if (v[j] > best) {
      best = v[j];
      b = j;
    }
  }
  return best > 0.0f ? static_cast<std::int32_t>(b) : -1;
}

// Slot whose direction is nearest to (x, y): largest dot, lowest index on ties.
std::size_t nearest_slot(const SlotSet& s, float x, float y) {
  const float* dx = s.x();
  const float* dy = s.y();
  std::size_t b = 0;
  float best = dx[0] * x + dy[0] * y;
  for (std::size_t j = 1; j < s.size(); ++j) {
    const float d = dx[j] * x + dy[j] * y;
    if (d > best) {
      best = d;
      b = j;
    }
  }
  return b;
}

// Turns a summed vector into the output. `fallback` is the slot whose direction is used
// when the sum is degenerate or (with guard) points into a non-positive slot.
Out finish_sum(const SlotSet& s, const float* v, double sx, double sy, double total,
               std::size_t fallback, bool guard) {
  const double len = std::sqrt(sx * sx + sy * sy);
  const float strength = unit_strength(v[fallback]);
  const auto slot = static_cast<std::int32_t>(fallback);
  if (!(len > 1e-6 * total)) return {s.x()[fallback], s.y()[fallback], strength, slot};
  const auto ux = static_cast<float>(sx / len), uy = static_cast<float>(sy / len);
  if (guard && !(v[nearest_slot(s, ux, uy)] > 0.0f)) {
    return {s.x()[fallback], s.y()[fallback], strength, slot};
  }
  return {ux, uy, strength, slot};
}

// Godot rule over every positive slot.
Out vector_sum_raw(const SlotSet& s, const float* v, std::size_t k) {
  const std::int32_t b = best_slot(v, k);
  if (b < 0) return kNothing;
  double sx = 0.0, sy = 0.0;  // double: sums of many slots can cancel
  double total = 0.0;
  for (std::size_t j = 0; j < k; ++j) {
    const double w = std::max(v[j], 0.0f);
    sx += w * s.x()[j];
    sy += w * s.y()[j];
    total += w;
  }
  return finish_sum(s, v, sx, sy, total, static_cast<std::size_t>(b), false);
}

// Godot rule restricted to the best contiguous run of positive slots.
Out vector_sum_run(const SlotSet& s, const float* v, std::size_t k) {
  std::size_t first_off = k;  // a non-positive slot, so that no run wraps past it
  for (std::size_t j = 0; j < k; ++j) {
    if (!(v[j] > 0.0f)) {
      first_off = j;
      break;
    }
  }
  std::size_t start = 0, len = 0;
  double total = 0.0;
  if (first_off == k) {
    len = k;  // every slot is positive: the whole ring is one run starting at 0
    for (std::size_t j = 0; j < k; ++j) total += v[j];
  } else {
    std::size_t cur_start = 0, cur_len = 0;
    double cur_total = 0.0;
    // Visit the ring from just after first_off and end on first_off, which closes the
    // last run; totals are summed in ring order from each run's first slot.
    for (std::size_t t = 1; t <= k; ++t) {
      std::size_t j = first_off + t;
      if (j >= k) j -= k;
      if (v[j] > 0.0f) {
        if (cur_len == 0) {
          cur_start = j;
          cur_total = 0.0;
        }
        cur_total += v[j];
        ++cur_len;
      } else if (cur_len) {
        if (cur_total > total || (cur_total == total && cur_start < start)) {
          start = cur_start;
          len = cur_len;
          total = cur_total;
        }
        cur_len = 0;
      }
    }
    if (len == 0) return kNothing;
  }
  // Sum the run as (at most) two straight pieces of the ring.
  const std::size_t end1 = std::min(k, start + len);
  const std::size_t rest = start + len - end1;
  double sx = 0.0, sy = 0.0;  // double: sums of many slots can cancel
  std::size_t top = start;
  for (std::size_t j = start; j < end1; ++j) {
    sx += double(v[j]) * s.x()[j];
    sy += double(v[j]) * s.y()[j];
    if (v[j] > v[top]) top = j;
  }
  for (std::size_t j = 0; j < rest; ++j) {
    sx += double(v[j]) * s.x()[j];
    sy += double(v[j]) * s.y()[j];
    if (v[j] > v[top] || (v[j] == v[top] && j < top)) top = j;
  }
  // A run of at most K/2 slots of a regular ring spans less than half a turn, so its
  // sum lies inside the run's cone and the guard cannot fire: skip the K dot products.
  const bool guard = len < k && (!s.regular() || 2 * len > k);
  return finish_sum(s, v, sx, sy, total, top, guard);
}

Out weighted_neighbours(const SlotSet& s, const float* v, std::size_t k, std::size_t width) {
  const std::int32_t bi = best_slot(v, k);
  if (bi < 0) return kNothing;
  const std::size_t b = static_cast<std::size_t>(bi);
  std::size_t l = 0, r = 0;
  while (l < width && l + 1 < k && v[(b + k - l - 1) % k] > 0.0f) ++l;
  while (r < width && l + r + 1 < k && v[(b + r + 1) % k] > 0.0f) ++r;
  double sx = 0.0, sy = 0.0;  // double: sums of many slots can cancel
  double total = 0.0;
  for (std::size_t t = 0; t <= l + r; ++t) {
    const std::size_t j = (b + k - l + t) % k;
    sx += double(v[j]) * s.x()[j];
    sy += double(v[j]) * s.y()[j];
    total += v[j];
  }
  const std::size_t len = l + r + 1;
  return finish_sum(s, v, sx, sy, total, b, len < k && (!s.regular() || 2 * len > k));
}

Out subslot(const SlotSet& s, const float* v, std::size_t k) {
  const std::int32_t bi = best_slot(v, k);
  if (bi < 0) return kNothing;
  const std::size_t b = static_cast<std::size_t>(bi);
  const std::size_t lo = (b + k - 1) % k, hi = (b + 1) % k;
  // Parabola y = A x^2 + B x + C through (-gl, yl), (0, yc), (gr, yr), in double.
  const double gl = s.gaps()[lo], gr = s.gaps()[b];
  const double yl = v[lo], yc = v[b], yr = v[hi];
  const double sr = (yr - yc) / gr, sl = (yl - yc) / gl;  // sr = A gr + B, sl = A gl - B
  const double a = (sr + sl) / (gl + gr);
  double x = 0.0, peak = yc;
  if (a < 0.0) {
    const double bb = sr - a * gr;
    x = std::clamp(-bb / (2.0 * a), -0.5 * gl, 0.5 * gr);
    peak = yc + x * (bb + a * x);
  }
  const double c = std::cos(x), sn = std::sin(x);
  const double dx = s.x()[b], dy = s.y()[b];
  const double ox = dx * c - dy * sn, oy = dx * sn + dy * c;
  const double n = std::hypot(ox, oy);
  return {static_cast<float>(ox / n), static_cast<float>(oy / n),
          unit_strength(static_cast<float>(peak)), bi};
}

template <class Rule>
void each_row(const float* values, std::size_t k, float* dir, float* str, std::int32_t* slot,
              std::size_t begin, std::size_t end, Rule&& rule) {
  for (std::size_t i = begin; i < end; ++i) {
    const Out o = rule(values + i * k);
    dir[2 * i] = o.x;
    dir[2 * i + 1] = o.y;
    str[i] = o.strength;
    slot[i] = o.slot;
  }
}

}  // namespace

void choose_rows(std::span<const float> values, std::size_t k, const SlotSet& slots,
                 const ChooseParams& p, std::span<float> direction, std::span<float> strength,
                 std::span<std::int32_t> slot, std::size_t begin, std::size_t end) {
  const float* v = values.data();
  float* d = direction.data();
  float* st = strength.data();
  std::int32_t* sl = slot.data();
  switch (p.mode) {
    case ChooseMode::kArgmax:
      each_row(v, k, d, st, sl, begin, end, [&](const float* row) {
        const std::int32_t b = best_slot(row, k);
        if (b < 0) return kNothing;
        return Out{slots.x()[b], slots.y()[b], unit_strength(row[b]), b};
      });
      break;
    case ChooseMode::kVectorSum:
      if (p.contiguous) {
        each_row(v, k, d, st, sl, begin, end, [&](const float* row) { return vector_sum_run(slots, row, k); });
      } else {
        each_row(v, k, d, st, sl, begin, end, [&](const float* row) { return vector_sum_raw(slots, row, k); });
      }
      break;
    case ChooseMode::kWeightedNeighbours:
      each_row(v, k, d, st, sl, begin, end,
               [&](const float* row) { return weighted_neighbours(slots, row, k, p.width); });
      break;
    case ChooseMode::kSubslot:
      each_row(v, k, d, st, sl, begin, end, [&](const float* row) { return subslot(slots, row, k); });
      break;
  }
}

void choose(std::span<const float> values, std::size_t n, std::size_t k, const SlotSet& slots,
            const ChooseParams& p, std::span<float> direction, std::span<float> strength,
            std::span<std::int32_t> slot, std::atomic<bool>* nonfinite) {
  for_rows(
      n, k, nonfinite,
      [&](std::size_t b, std::size_t e) { return all_finite(values.data() + b * k, (e - b) * k); },
      [&](std::size_t b, std::size_t e) {
        choose_rows(values, k, slots, p, direction, strength, slot, b, e);
      });
}

}  // namespace contextsteer
