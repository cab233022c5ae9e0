// SPDX-License-Identifier: MIT
// Steer: the fused map pipeline combine -> resolve -> choose, one cache-sized block of rows at a time.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>

#include "contextsteer/choose.hpp"
#include "contextsteer/combine.hpp"
#include "contextsteer/resolve.hpp"
#include "contextsteer/slot_set.hpp"

namespace contextsteer {

/// Modes and scalars of the three stages of steer.
struct SteerParams {
  CombineMode combine = CombineMode::kMax;
  std::span<const float> weights;  ///< B floats, kWeightedSum only
  ResolveParams resolve;
  ChooseParams choose;
};

/// Floats of scratch that steer_rows uses per block of rows (16 KiB: stays in L1).
inline constexpr std::size_t kSteerBlockFloats = 4096;

/// Rows [begin, end) of steer: for each block of at most max(1, kSteerBlockFloats / K)
/// rows, combine_rows of the B interest maps into `scratch`, resolve_rows with danger in
/// place, choose_rows into the outputs. So the intermediate maps never leave the cache,
/// and the outputs are bit-identical to choose(resolve(combine(...))) called separately.
/// interest_maps: B*N*K floats (map b, agent i, slot j at (b*N + i)*K + j); danger N*K;
/// direction N*2, strength N, slot N as in choose_rows; scratch at least
/// min(end - begin, max(1, kSteerBlockFloats / K)) * K floats, not overlapping anything
/// else. `slots` has K slots (also used by ResolveMode::kAvoidOpposite).
/// Pure apart from scratch, allocation-free, reentrant.
void steer_rows(std::span<const float> interest_maps, std::size_t b, std::size_t n, std::size_t k,
                std::span<const float> danger, const SlotSet& slots, const SteerParams& p,
                std::span<float> direction, std::span<float> strength, std::span<std::int32_t> slot,
                std::span<float> scratch, std::size_t begin, std::size_t end);

/// steer over all N agents on the thread pool (per-thread scratch on the stack when
/// K <= kSteerBlockFloats). For larger K, `big_scratch` (N*K floats) holds the
/// intermediate map and the three stages run one after the other; it may be empty
/// otherwise. Sets *nonfinite (if given) when an interest or danger value is NaN/inf.
/// With CombineMode::kMax, ResolveMode::kMask, K = 8, 16, 32 or 64 and AVX2, each row is
/// combined, masked and checked in registers in one pass (the same operations, so the
/// same bits as steer_rows); ChooseMode::kArgmax chooses there too, every other mode
/// chooses from a block of those rows with choose_rows.
void steer(std::span<const float> interest_maps, std::size_t b, std::size_t n, std::size_t k,
           std::span<const float> danger, const SlotSet& slots, const SteerParams& p,
           std::span<float> direction, std::span<float> strength, std::span<std::int32_t> slot,
           std::span<float> big_scratch, std::atomic<bool>* nonfinite = nullptr);

}  // namespace contextsteer
