// SPDX-License-Identifier: MIT
// exp for float arrays, the same answer on every path and every machine.
#pragma once

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>

namespace contextsteer::detail {

// e^x for float x by the table method of ARM's optimized-routines expf, which glibc has
// used since 2.28 (its x86-64 build with FMA, `__expf_fma`, does exactly these double
// operations): with N = 32, x·N/ln 2 = k + r, |r| <= 1/2, and
// e^x = 2^(k/N) · 2^(r/N) ≈ s · (1 + c2·r + c1·r² + c0·r³), s = 2^(k/N) built from the
// table entry T[k mod N] and k's high bits. Every step is a double add, multiply or fused
// multiply-add (std::fma, correctly rounded on any IEEE machine), so the float result is
// the same with or without hardware FMA, on any libm, and in the 8-lane kernel
// (exp_floats). Maximum error about 0.502 ULP. Arguments with |x| >= 88 or NaN (outside
// every use in the step) take std::exp. On the development machine (glibc 2.36, AMD EPYC)
// all 2^32 float inputs give std::exp's bits, in the kernel and in the scalar function.
struct ExpFloatData {
  // N / ln 2, and 1.5 · 2^52, whose addition rounds to an integer.
  static constexpr double inv_ln2_n = 0x1.71547652b82fep+5;
  static constexpr double shift = 0x1.8p+52;
  // The cubic's coefficients, scaled by 1/N³, 1/N² and 1/N.
  static constexpr double c0 = 0x1.c6af84b912394p-20;
  static constexpr double c1 = 0x1.ebfce50fac4f3p-13;
  static constexpr double c2 = 0x1.62e42ff0c52d6p-6;
  // T[i] = bits(2^(i/N)) − (i << 47): the bits of 2^(i/N) rounded to double, less i/N
  // in the exponent field, which k's high bits put back (tests/cpp/test_exp_float.cpp
  // checks each against long double exp2).
  static constexpr std::uint64_t table[32] = {
      0x3ff0000000000000, 0x3fefd9b0d3158574, 0x3fefb5586cf9890f, 0x3fef9301d0125b51,
      0x3fef72b83c7d517b, 0x3fef54873168b9aa, 0x3fef387a6e756238, 0x3fef1e9df51fdee1,
      0x3fef06fe0a31b715, 0x3feef1a7373aa9cb, 0x3feedea64c123422, 0x3feece086061892d,
      0x3feebfdad5362a27, 0x3feeb42b569d4f82, 0x3feeab07dd485429, 0x3feea47eb03a5585,
      0x3feea09e667f3bcd, 0x3fee9f75e8ec5f74, 0x3feea11473eb0187, 0x3feea589994cce13,
      0x3feeace5422aa0db, 0x3feeb737b0cdc5e5, 0x3feec49182a3f090, 0x3feed503b23e255d,
      0x3feee89f995ad3ad, 0x3feeff76f2fb5e47, 0x3fef199bdd85529c, 0x3fef3720dcef9069,
      0x3fef5818dcfba487, 0x3fef7c97337b9b5f, 0x3fefa4afa2a490da, 0x3fefd0765b6e4540};
  // Arguments whose bits 20–30 (the exponent and the mantissa's top three bits) exceed
  // this, |x| >= 88 or NaN, leave the table method.
  static constexpr std::uint32_t top_limit = 0x42a;
};

/// Whether float x is inside exp_float's table range (|x| < 88, not NaN).
inline bool exp_float_in_range(float x) {
  return ((std::bit_cast<std::uint32_t>(x) >> 20) & 0x7ffu) <= ExpFloatData::top_limit;
}

/// e^x, see ExpFloatData.
inline float exp_float(float x) {
  using D = ExpFloatData;
  if (!exp_float_in_range(x)) return std::exp(x);
  const double xd = x;
  const double kds = std::fma(D::inv_ln2_n, xd, D::shift);
  const auto ki = std::bit_cast<std::uint64_t>(kds);
  const double kd = kds - D::shift;
  const double r = std::fma(D::inv_ln2_n, xd, -kd);
  const double s = std::bit_cast<double>(D::table[ki % 32] + (ki << 47));
  const double z = std::fma(r, D::c0, D::c1);
  const double r2 = r * r;
  const double y = std::fma(z, r2, std::fma(r, D::c2, 1.0));
  return static_cast<float>(y * s);
}

/// x[i] ← exp_float(x[i]) for i < n: eight at a time in AVX2 and FMA where the CPU has
/// them (and CONTEXTSTEER_NO_AVX2 is unset), bit for bit the scalar function.
void exp_floats(float* x, std::size_t n);

/// The scalar loop of exp_floats, for tests of the kernel against it.
void exp_floats_scalar(float* x, std::size_t n);

}  // namespace contextsteer::detail
