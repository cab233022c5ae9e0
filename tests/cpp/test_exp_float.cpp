// SPDX-License-Identifier: MIT
// exp_float (cpp/src/exp_float.hpp): the 8-lane AVX2 kernel against the scalar function,
// both against the double exp, the table against long double exp2, and, on glibc x86-64
// with FMA, against std::exp itself (the same algorithm: CollisionDanger's smoothness
// weights may not change when the step switched from std::exp to it).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "cpu.hpp"
#include "exp_float.hpp"

namespace {

namespace detail = contextsteer::detail;

// Every `stride`-th float bit pattern, plus the special and boundary values.
std::vector<float> sample(std::uint32_t stride) {
  std::vector<float> xs;
  for (std::uint64_t b = 0; b < (std::uint64_t{1} << 32); b += stride)
    xs.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(b)));
  const float inf = std::numeric_limits<float>::infinity();
  for (const float x : {0.0f, -0.0f, 1.0f, -1.0f, 88.0f, -88.0f, std::nextafter(88.0f, 0.0f),
                        std::nextafter(-88.0f, 0.0f), 88.72f, -103.5f, -104.0f, inf, -inf,
                        std::numeric_limits<float>::quiet_NaN(), 1e-30f, -1e-30f,
                        std::numeric_limits<float>::denorm_min(), 0.5f * 0.6931472f})
    xs.push_back(x);
  return xs;
}

std::uint32_t bits(float x) { return std::bit_cast<std::uint32_t>(x); }

TEST(ExpFloat, TableIsTwoToTheIOver32) {
  for (std::uint64_t i = 0; i < 32; ++i) {
    const double t = std::bit_cast<double>(detail::ExpFloatData::table[i] + (i << 47));
    const long double exact = std::exp2l(static_cast<long double>(i) / 32.0L);
    EXPECT_EQ(t, static_cast<double>(exact)) << "entry " << i;
  }
}

TEST(ExpFloat, KernelMatchesScalarBitForBit) {
  // Lanes in and out of the table range mixed in every block of eight (the kernel takes
  // the scalar function for a block with any lane out of range), and a tail.
  std::vector<float> xs = sample(4099);
  xs.push_back(0.25f);
  std::vector<float> kernel = xs, scalar = xs;
  detail::exp_floats(kernel.data(), kernel.size());
  detail::exp_floats_scalar(scalar.data(), scalar.size());
  std::size_t differ = 0;
  for (std::size_t i = 0; i < xs.size(); ++i)
    if (bits(kernel[i]) != bits(scalar[i]) && ++differ <= 5)
      ADD_FAILURE() << "x = " << xs[i] << ": kernel " << kernel[i] << ", scalar " << scalar[i];
  EXPECT_EQ(differ, 0u) << "of " << xs.size() << (detail::use_avx2_fma() ? " (AVX2 kernel)" : "");
}

TEST(ExpFloat, WithinOneUlpOfDoubleExp) {
  std::vector<float> xs = sample(1021);
  std::vector<float> ys = xs;
  detail::exp_floats(ys.data(), ys.size());
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const float x = xs[i];
    const float want = static_cast<float>(std::exp(static_cast<double>(x)));
    if (std::isnan(x)) {
      EXPECT_TRUE(std::isnan(ys[i]));
      continue;
    }
    if (!std::isfinite(want) || want == 0.0f) {
      EXPECT_EQ(ys[i], want) << "x = " << x;
      continue;
    }
    const float below = std::nextafter(want, 0.0f), above = std::nextafter(want, 2.0f * want);
    EXPECT_TRUE(ys[i] == want || ys[i] == below || ys[i] == above)
        << "x = " << x << ": " << ys[i] << " against " << want;
  }
}

#if defined(__GLIBC__) && defined(__x86_64__)
TEST(ExpFloat, SameAsGlibcExpfWithFma) {
  // glibc's expf (2.28 and later) on a CPU with FMA is the same table method with the
  // same fused operations: every float gives the same bits (checked for all 2^32 floats
  // on the development machine; a sample here).
  if (!__builtin_cpu_supports("fma")) GTEST_SKIP() << "glibc takes its non-FMA expf here";
  std::vector<float> xs = sample(2053);
  std::vector<float> ys = xs;
  detail::exp_floats(ys.data(), ys.size());
  std::size_t differ = 0;
  for (std::size_t i = 0; i < xs.size(); ++i)
    if (bits(ys[i]) != bits(std::exp(xs[i])) && ++differ <= 5)
      ADD_FAILURE() << "x = " << xs[i] << ": " << ys[i] << " against std::exp " << std::exp(xs[i]);
  EXPECT_EQ(differ, 0u);
}
#endif

}  // namespace
