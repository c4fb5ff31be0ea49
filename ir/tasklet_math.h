#ifndef WEIR_IR_TASKLET_MATH_H
#define WEIR_IR_TASKLET_MATH_H
/// \file
/// The tasklet language's own f32 `exp` and `erf`, and `pow(x, 2)`: what
/// these calls mean on every engine. The interpreter calls these functions,
/// the C++ export embeds this file in its preamble, and the CPU backend
/// emits the same operations in the same order as LLVM IR
/// (codegen/cpu/llvm_math.cpp), which vectorizes where a libm call would
/// not; so all three agree bit for bit.
///
/// - exp: x = k·ln 2 + r with k = round(x / ln 2) and ln 2 in two parts
///   (Cody and Waite), e^r by Taylor's polynomial of degree 7 (|r| <=
///   ln 2 / 2), times 2^k built in two halves so that results near the
///   subnormal range round once. At most 1.2 ulp from e^x; e^x of x < -104
///   is 0, of x > 88.73 infinity.
/// - erf: |x| < 1: x · P(x²); 1 <= |x| < 4: Q(|x| - 2.5) with the sign of
///   x; beyond, ±1. P and Q are least-squares fits (scripts/fit_math.py
///   prints them and their error): at most 2.8 ulp on |x| < 1 and 1.4 ulp
///   beyond.
/// - pow(x, 2) is x · x (correctly rounded; libm's pow need not be).
///
/// Plain C++17 with no Weir includes, so the export can embed it.

#include <cmath>
#include <cstdint>
#include <cstring>

namespace weir_math {

/// e^r on |r| <= ln 2 / 2: 1/7!, 1/6!, ..., 1/1!, 1 (Horner, highest first).
constexpr float kExpTaylor[8] = {1.0f / 5040, 1.0f / 720, 1.0f / 120,
                                 1.0f / 24,   1.0f / 6,   0.5f,
                                 1.0f,        1.0f};
constexpr float kExpLog2e = 1.44269504f;
constexpr float kExpLn2Hi = 0.693359375f; ///< 355/512: k·kExpLn2Hi is exact
constexpr float kExpLn2Lo = -2.12194440e-4f;
constexpr float kExpLow = -104.0f; ///< e^x rounds to 0 below
constexpr float kExpHigh = 89.0f;  ///< e^x overflows above

/// erf(x) / x as a polynomial in x² on |x| < 1 (highest degree first).
constexpr float kErfSmall[6] = {-5.696655717e-04f, 4.934506956e-03f,
                                -2.672698162e-02f, 1.128078848e-01f,
                                -3.761241436e-01f, 1.128379107e+00f};
/// erf(a) as a polynomial in a - 2.5 on 1 <= a < 4 (highest degree first).
constexpr float kErfLarge[13] = {
    -8.709190297e-06f, 2.140609649e-05f,  5.941226118e-05f,
    -2.808724239e-04f, 2.920029801e-04f,  5.742036738e-04f,
    -2.823757939e-03f, 6.100024562e-03f,  -8.612778038e-03f,
    8.354324847e-03f,  -5.447070580e-03f, 2.177979331e-03f,
    9.995930791e-01f};
constexpr float kErfSmallEnd = 1.0f, kErfLargeEnd = 4.0f,
                kErfLargeCentre = 2.5f;

template <int N> inline float horner(const float (&c)[N], float t) {
  float p = c[0];
  for (int i = 1; i < N; ++i)
    p = p * t + c[i];
  return p;
}

/// 2^n for n in [-126, 127], from the exponent bits.
inline float exp2Int(std::int32_t n) {
  std::int32_t bits = (n + 127) << 23;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

inline float expF32(float x) {
  if (std::isnan(x))
    return x;
  float c = x < kExpLow ? kExpLow : (x > kExpHigh ? kExpHigh : x);
  float k = std::nearbyint(c * kExpLog2e); // half to even
  float r = c - k * kExpLn2Hi;
  r = r - k * kExpLn2Lo;
  float p = horner(kExpTaylor, r);
  std::int32_t n = static_cast<std::int32_t>(k);
  std::int32_t half = n / 2;
  float y = p * exp2Int(half) * exp2Int(n - half);
  return x < kExpLow ? 0.0f : y;
}

inline float erfF32(float x) {
  if (std::isnan(x))
    return x;
  float a = std::fabs(x);
  float small = x * horner(kErfSmall, x * x);
  float q =
      horner(kErfLarge, (a < kErfLargeEnd ? a : kErfLargeEnd) - kErfLargeCentre);
  q = a < kErfLargeEnd ? (q < 1.0f ? q : 1.0f) : 1.0f;
  float large = std::copysign(q, x);
  return a < kErfSmallEnd ? small : large;
}

template <typename F> inline F pow(F x, F y) {
  return y == F(2) ? x * x : std::pow(x, y);
}

/// Output `counter` of SplitMix64 seeded with `seed` (Steele, Lea and
/// Flood, 2014): the state after counter + 1 steps of the golden-ratio
/// increment, through the finalizer. Two's complement wrap-around
/// throughout.
constexpr std::uint64_t kSplitMixGamma = 0x9E3779B97F4A7C15ull;
constexpr std::uint64_t kSplitMixMul1 = 0xBF58476D1CE4E5B9ull;
constexpr std::uint64_t kSplitMixMul2 = 0x94D049BB133111EBull;
inline std::uint64_t hash(std::uint64_t seed, std::uint64_t counter) {
  std::uint64_t z = seed + (counter + 1) * kSplitMixGamma;
  z = (z ^ (z >> 30)) * kSplitMixMul1;
  z = (z ^ (z >> 27)) * kSplitMixMul2;
  return z ^ (z >> 31);
}

} // namespace weir_math

#endif
