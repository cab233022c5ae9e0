// SPDX-License-Identifier: MIT
// Run-time choice of the kernels' AVX2 variants.
#pragma once

#include <cstdlib>

namespace contextsteer::detail {

/// Whether kernels that have an AVX2 variant (compiled with target("avx2,bmi,bmi2,popcnt"),
/// no FMA, so bit-identical to the baseline) use it: the CPU has AVX2 with BMI1, BMI2 and
/// POPCNT, and CONTEXTSTEER_NO_AVX2 is unset or "0" (tests compare both paths). Decided
/// once. Always false off x86-64 GCC/Clang.
inline bool use_avx2() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  static const bool yes = [] {
    const char* off = std::getenv("CONTEXTSTEER_NO_AVX2");
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") &&
           __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("popcnt") &&
           !(off && *off && *off != '0');
  }();
  return yes;
#else
  return false;
#endif
}

}  // namespace contextsteer::detail
