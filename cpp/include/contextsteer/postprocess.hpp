// SPDX-License-Identifier: MIT
// Post-processing of context maps: spread over neighbouring slots, temporal blend.
#pragma once

#include <atomic>
#include <cstddef>
#include <span>

#include "contextsteer/modes.hpp"

namespace contextsteer {

class SlotSet;

/// How spread combines the kernel-weighted neighbours of a slot.
enum class SpreadMode {
  kSum,  ///< out_j = sum_m w_m v_{j+m-h}: circular convolution (blur)
  kMax,  ///< out_j = max_m w_m v_{j+m-h}: weighted dilation (grow danger)
};

/// The names of SpreadMode (contextsteer.SPREAD_MODES), checked and listed from here.
inline constexpr ModeEntry<SpreadMode> kSpreadModes[] = {
    {"sum", SpreadMode::kSum, "circular convolution with the kernel (blur)"},
    {"max", SpreadMode::kMax, "largest kernel-weighted neighbour (dilation: grow danger)"},
};

/// Rows [begin, end) of spread over the ring graph: kernel has odd length L <= K with
/// centre h = L/2, slot indices are mod K. values, out: N*K floats that must not
/// overlap. Pure, allocation-free, reentrant.
void spread_rows(std::span<const float> values, std::size_t k, std::span<const float> kernel,
                 SpreadMode mode, std::span<float> out, std::size_t begin, std::size_t end);

/// spread over all N agents on the thread pool; sets *nonfinite (if given) when a
/// value is NaN/inf.
void spread(std::span<const float> values, std::size_t n, std::size_t k,
            std::span<const float> kernel, SpreadMode mode, std::span<float> out,
            std::atomic<bool>* nonfinite = nullptr);

/// Rows [begin, end) of blend: out = previous + alpha * (current - previous), all N*K
/// floats; out may be previous or current. alpha in [0, 1]. Pure, allocation-free.
void blend_rows(std::span<const float> previous, std::span<const float> current, std::size_t k,
                float alpha, std::span<float> out, std::size_t begin, std::size_t end);

/// One map row of a slot set that turns with its agent, perceived at heading h0, read in
/// the frame of heading h0 + delta: out_j is the row's value at slot j's angle plus delta,
/// interpolated linearly between the two slots either side (over the ring's own gaps, so
/// any ring). delta = 0 copies the row. in, out: K floats each, not overlapping.
void turn_row(const float* in, const SlotSet& slots, double delta, float* out);

/// blend over all N agents on the thread pool; sets *nonfinite (if given) when an input
/// is NaN/inf.
void blend(std::span<const float> previous, std::span<const float> current, std::size_t n,
           std::size_t k, float alpha, std::span<float> out,
           std::atomic<bool>* nonfinite = nullptr);

}  // namespace contextsteer
