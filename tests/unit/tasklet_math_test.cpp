// The tasklet language's own f32 exp and erf (ir/tasklet_math.h) against
// libm in double: within the ulps the header promises over dense sweeps,
// exact at the special values, and pow(x, 2) is x * x.

#include "ir/tasklet_math.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace {

/// |got - want| in units of the last place of `want` rounded to float.
double ulps(float got, double want) {
  float w = static_cast<float>(want);
  double ulp = std::nextafter(std::fabs(w), std::numeric_limits<float>::max()) -
               std::fabs(w);
  if (w == 0 || !std::isfinite(ulp))
    ulp = std::numeric_limits<float>::denorm_min();
  return std::fabs(double(got) - want) / ulp;
}

TEST(TaskletMath, ExpWithinOnePointTwoUlps) {
  double worst = 0;
  for (float x = -87.0f; x < 88.5f; x += 0.000731f)
    worst = std::max(worst, ulps(weir_math::expF32(x), std::exp(double(x))));
  EXPECT_LE(worst, 1.25);
  EXPECT_GT(worst, 0.0); // not libm itself
}

TEST(TaskletMath, ExpSpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(weir_math::expF32(0.0f), 1.0f);
  EXPECT_EQ(weir_math::expF32(-0.0f), 1.0f);
  EXPECT_EQ(weir_math::expF32(inf), inf);
  EXPECT_EQ(weir_math::expF32(89.0f), inf);
  EXPECT_EQ(weir_math::expF32(-inf), 0.0f);
  EXPECT_EQ(weir_math::expF32(-200.0f), 0.0f);
  EXPECT_TRUE(std::isnan(weir_math::expF32(std::nanf(""))));
  // Just below overflow, and results that are subnormal: rounded once.
  EXPECT_LE(ulps(weir_math::expF32(88.7f), std::exp(double(88.7f))), 1.25);
  for (float x : {-87.5f, -90.0f, -95.0f, -100.0f, -103.0f})
    EXPECT_LE(ulps(weir_math::expF32(x), std::exp(double(x))), 1.0) << x;
}

TEST(TaskletMath, ErfWithinItsBounds) {
  double small = 0, large = 0;
  for (float x = -0.99999f; x < 1.0f; x += 0.0000173f)
    small = std::max(small, ulps(weir_math::erfF32(x), std::erf(double(x))));
  for (float a = 1.0f; a < 6.0f; a += 0.0000371f) {
    large = std::max(large, ulps(weir_math::erfF32(a), std::erf(double(a))));
    large = std::max(large, ulps(weir_math::erfF32(-a), std::erf(-double(a))));
  }
  EXPECT_LE(small, 3.0);
  EXPECT_LE(large, 1.5);
  // Tiny arguments: erf(x) = 2x / sqrt(pi) to float precision.
  for (float x : {1e-30f, -3e-20f, 1e-8f, 2e-4f})
    EXPECT_LE(ulps(weir_math::erfF32(x), std::erf(double(x))), 3.0) << x;
}

TEST(TaskletMath, ErfSpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(weir_math::erfF32(0.0f), 0.0f);
  EXPECT_TRUE(std::signbit(weir_math::erfF32(-0.0f)));
  EXPECT_EQ(weir_math::erfF32(inf), 1.0f);
  EXPECT_EQ(weir_math::erfF32(-inf), -1.0f);
  EXPECT_EQ(weir_math::erfF32(4.0f), 1.0f);
  EXPECT_EQ(weir_math::erfF32(-1e30f), -1.0f);
  EXPECT_LE(weir_math::erfF32(3.99f), 1.0f);
  EXPECT_TRUE(std::isnan(weir_math::erfF32(std::nanf(""))));
}

TEST(TaskletMath, PowOfTwoIsASquare) {
  for (float x : {3.0f, -1.5f, 1.0000001f, 1e20f, 1e-30f})
    EXPECT_EQ(weir_math::pow(x, 2.0f), x * x) << x;
  EXPECT_EQ(weir_math::pow(2.0, 0.5), std::pow(2.0, 0.5));
  EXPECT_EQ(weir_math::pow(-8.0f, 3.0f), -512.0f);
}

} // namespace
