// SPDX-License-Identifier: MIT
// Slot sets: the K unit directions of a context map and their neighbour graph (a ring).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace contextsteer {

/// Smallest number of slots of a ring slot set.
inline constexpr std::size_t kMinSlots = 3;

/// Writes the K unit directions of a ring into xy (K*2 floats, row i = (x, y) of slot i):
/// slot 0 along +x rotated by `offset` radians, slots counter-clockwise, computed in double.
/// Precondition: xy.size() == 2*K, K >= kMinSlots. Pure, allocation-free.
void slot_directions(std::size_t k, double offset, std::span<float> xy);

/// A ring of K >= 3 slot directions shared by all agents that use it: slot i neighbours
/// slots i-1 and i+1 (mod K) and the ring winds once counter-clockwise. Immutable after
/// construction; kernels only read it, so one SlotSet may serve any number of threads.
class SlotSet {
 public:
  /// The regular ring of slot_directions(k, offset). Precondition: k >= kMinSlots.
  static SlotSet ring(std::size_t k, double offset);

  /// A ring from given unit directions xy (K*2 floats), in ring order. Preconditions
  /// (checked by the caller with check_ring): K >= 3, unit vectors, counter-clockwise
  /// gaps in (0, pi) that add up to one turn.
  static SlotSet from_directions(std::span<const float> xy);

  /// Empty string when xy (K*2 floats) is a valid ring for from_directions, otherwise a
  /// message saying what is wrong, with the offending slot in *bad_index. Pure.
  static const char* check_ring(std::span<const float> xy, std::size_t* bad_index);

  /// Number of slots K.
  std::size_t size() const { return x_.size(); }
  /// Rotation of slot 0 from +x in radians (0 for a ring given as directions).
  double offset() const { return offset_; }
  /// (K, 2) interleaved unit directions.
  const float* directions() const { return xy_.data(); }
  /// Structure-of-arrays copies of the directions (for vectorised loops over slots).
  const float* x() const { return x_.data(); }
  const float* y() const { return y_.data(); }
  /// The same directions widened to double (for sums that must not lose precision).
  const double* x64() const { return x64_.data(); }
  const double* y64() const { return y64_.data(); }
  /// gap(i): counter-clockwise angle in radians from slot i to slot i+1 (mod K).
  const float* gaps() const { return gap_.data(); }
  /// (K, 2) int32 neighbour graph: row i = (i-1 mod K, i+1 mod K).
  const std::int32_t* neighbours() const { return nbr_.data(); }
  /// True when all gaps are equal (within 1e-5 rad): then a run of at most K/2
  /// consecutive slots spans less than half a turn.
  bool regular() const { return regular_; }

 private:
  SlotSet() = default;
  void finish();

  double offset_ = 0.0;
  std::vector<float> xy_, x_, y_, gap_;
  std::vector<double> x64_, y64_;
  std::vector<std::int32_t> nbr_;
  bool regular_ = true;
};

}  // namespace contextsteer
