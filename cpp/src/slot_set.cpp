// SPDX-License-Identifier: MIT
// Slot sets: ring construction, validation of given directions, neighbour graph.
#include "contextsteer/slot_set.hpp"

#include <cmath>
#include <numbers>

namespace contextsteer {

void slot_directions(std::size_t k, double offset, std::span<float> xy) {
  const double step = 2.0 * std::numbers::pi / static_cast<double>(k);
  // The offset reduced by whole turns first (fmod is exact, and leaves |offset| < 2 pi as
  // it is): added to a large offset, the slot steps were lost to its rounding (at 1e17
  // every slot had the same direction, and the interpolating choose modes gave NaN).
  const double base = std::fmod(offset, 2.0 * std::numbers::pi);
  // A component below 2^-40 is an axis's (cos(pi/2) is 6e-17, not 0): 0, so that the
  // quarter-turn slots are the axes exactly, as slot 0 is, and a thin ray along one meets
  // a wall seen end-on as slot 0's does (fuzz round 24: rotated by a quarter turn, the
  // scene's wall straight ahead was missed). Any other direction is unchanged.
  auto snap = [](double c) { return std::fabs(c) < 0x1p-40 ? 0.0f : static_cast<float>(c); };
  for (std::size_t i = 0; i < k; ++i) {
    const double a = base + step * static_cast<double>(i);
    xy[2 * i] = snap(std::cos(a));
    xy[2 * i + 1] = snap(std::sin(a));
  }
}

SlotSet SlotSet::ring(std::size_t k, double offset) {
  SlotSet s;
  s.offset_ = offset;
  s.xy_.resize(2 * k);
  slot_directions(k, offset, s.xy_);
  s.finish();
  return s;
}

SlotSet SlotSet::from_directions(std::span<const float> xy) {
  SlotSet s;
  s.xy_.assign(xy.begin(), xy.end());
  // Given directions within the check's 1e-3 of unit length are made unit (in double,
  // rounded once): a cosine map of 1.0009 broke the documented [0, 1] of its shapes. A
  // direction already unit to float32's rounding (cos and sin of an angle) stays as given,
  // bit for bit.
  for (std::size_t i = 0; i + 1 < s.xy_.size(); i += 2) {
    const double x = s.xy_[i], y = s.xy_[i + 1];
    const double len = std::hypot(x, y);
    if (len > 0.0 && std::fabs(len - 1.0) > 0x1p-22) {
      s.xy_[i] = static_cast<float>(x / len);
      s.xy_[i + 1] = static_cast<float>(y / len);
    }
  }
  s.finish();
  return s;
}

namespace {
// Counter-clockwise angle from direction a to direction b in (-pi, pi], in double.
double turn(const float* a, const float* b) {
  const double c = double(a[0]) * b[1] - double(a[1]) * b[0];
  const double d = double(a[0]) * b[0] + double(a[1]) * b[1];
  return std::atan2(c, d);
}
}  // namespace

const char* SlotSet::check_ring(std::span<const float> xy, std::size_t* bad_index) {
  const std::size_t k = xy.size() / 2;
  if (k < kMinSlots) return "a slot set needs at least 3 slots";
  for (std::size_t i = 0; i < k; ++i) {
    const double len = std::hypot(double(xy[2 * i]), double(xy[2 * i + 1]));
    if (!(std::fabs(len - 1.0) <= 1e-3)) {
      *bad_index = i;
      return "slot directions must be unit vectors (|d| within 1e-3 of 1)";
    }
  }
  double total = 0.0;
  for (std::size_t i = 0; i < k; ++i) {
    const double g = turn(&xy[2 * i], &xy[2 * ((i + 1) % k)]);
    if (!(g > 0.0)) {
      *bad_index = i;
      return "slot directions must be in counter-clockwise ring order (each slot "
             "strictly counter-clockwise of the previous one, by less than 180 degrees: "
             "a wider gap between two slots is read as a clockwise step)";
    }
    total += g;
  }
  if (std::fabs(total - 2.0 * std::numbers::pi) > 1e-3) {
    *bad_index = 0;
    return "slot directions must wind exactly once around the circle";
  }
  return "";
}

void SlotSet::finish() {
  const std::size_t k = xy_.size() / 2;
  x_.resize(k);
  y_.resize(k);
  x64_.resize(k);
  y64_.resize(k);
  gap_.resize(k);
  nbr_.resize(2 * k);
  for (std::size_t i = 0; i < k; ++i) {
    x_[i] = xy_[2 * i];
    y_[i] = xy_[2 * i + 1];
    x64_[i] = x_[i];
    y64_[i] = y_[i];
    nbr_[2 * i] = static_cast<std::int32_t>((i + k - 1) % k);
    nbr_[2 * i + 1] = static_cast<std::int32_t>((i + 1) % k);
  }
  const double even = 2.0 * std::numbers::pi / static_cast<double>(k);
  regular_ = true;
  for (std::size_t i = 0; i < k; ++i) {
    const double g = turn(&xy_[2 * i], &xy_[2 * ((i + 1) % k)]);
    gap_[i] = static_cast<float>(g);
    if (std::fabs(g - even) > 1e-5) regular_ = false;
  }
}

}  // namespace contextsteer
