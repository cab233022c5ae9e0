// SPDX-License-Identifier: MIT
// Run-time choice of the kernels' AVX2 variants.
#pragma once

#include <cstdlib>

// x86-64 with GCC or Clang: kernels may have AVX2 variants, compiled with CS_AVX2 (AVX2 and
// the bit instructions use_avx2() checks for; no FMA, so every lane rounds as the baseline)
// and run only when use_avx2() says so. Elsewhere CONTEXTSTEER_AVX2 is undefined and CS_AVX2
// is empty.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define CONTEXTSTEER_AVX2 1
#define CS_AVX2 __attribute__((target("avx2,bmi,bmi2,popcnt")))
// For the few kernels whose scalar version uses std::fma explicitly (exp_float.hpp): there
// FMA instructions round as the baseline's std::fma does. Run only when use_avx2_fma().
#define CS_AVX2_FMA __attribute__((target("avx2,fma")))
#else
#define CS_AVX2
#define CS_AVX2_FMA
#endif

namespace contextsteer::detail {

/// Whether kernels that have an AVX2 variant (compiled with target("avx2,bmi,bmi2,popcnt"),
/// no FMA, so bit-identical to the baseline) use it: the CPU has AVX2 with BMI1, BMI2 and
/// POPCNT, and CONTEXTSTEER_NO_AVX2 is unset or "0" (tests compare both paths). Decided
/// once. Always false off x86-64 GCC/Clang.
inline bool use_avx2() {
#if defined(CONTEXTSTEER_AVX2)
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

/// Whether kernels with an AVX2 + FMA variant (CS_AVX2_FMA) use it: use_avx2() and the
/// CPU has FMA3.
inline bool use_avx2_fma() {
#if defined(CONTEXTSTEER_AVX2)
  static const bool yes = use_avx2() && __builtin_cpu_supports("fma");
  return yes;
#else
  return false;
#endif
}

}  // namespace contextsteer::detail
