#include "ir/float16.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <cmath>

namespace weir::ir {
namespace {

/// Rounds a finite or non-finite double to the nearest-even binary format
/// with `ExpBits` exponent and `ManBits` mantissa bits (binary16 or
/// bfloat16). Converting straight from double avoids the double rounding a
/// detour through float would cause.
template <int ExpBits, int ManBits> std::uint16_t encodeSmallFloat(double v) {
  constexpr int kBias = (1 << (ExpBits - 1)) - 1;
  constexpr std::uint32_t kExpMask = (1u << ExpBits) - 1;
  constexpr std::uint32_t kInf = kExpMask << ManBits;
  auto bits = std::bit_cast<std::uint64_t>(v);
  auto sign = static_cast<std::uint32_t>(bits >> 63) << (ExpBits + ManBits);
  auto exp = static_cast<int>((bits >> 52) & 0x7FF);
  std::uint64_t mant = bits & ((std::uint64_t(1) << 52) - 1);
  if (exp == 0x7FF) {
    if (mant == 0)
      return static_cast<std::uint16_t>(sign | kInf);
    // Keep the payload's top bits and force a quiet NaN, as hardware does.
    auto payload = static_cast<std::uint32_t>(mant >> (52 - ManBits));
    return static_cast<std::uint16_t>(sign | kInf | payload |
                                      (1u << (ManBits - 1)));
  }
  if (exp == 0) // zero or a double subnormal: far below half the smallest
    return static_cast<std::uint16_t>(sign); // target subnormal
  int unbiased = exp - 1023;
  if (unbiased > kBias)
    return static_cast<std::uint16_t>(sign | kInf);
  std::uint64_t sig = mant | (std::uint64_t(1) << 52); // value = sig*2^(e-52)
  int targetExp = std::max(unbiased, 1 - kBias);
  // Result significand in units of 2^(targetExp - ManBits).
  int shift = targetExp - ManBits - unbiased + 52;
  std::uint64_t r = 0;
  if (shift < 64) {
    r = sig >> shift;
    std::uint64_t rem = sig & ((std::uint64_t(1) << shift) - 1);
    std::uint64_t half = std::uint64_t(1) << (shift - 1);
    if (rem > half || (rem == half && (r & 1)))
      ++r;
  } // else: far below half the smallest subnormal, so it rounds to zero.
  // Subnormal: r < 2^ManBits encodes itself, and r == 2^ManBits lands on the
  // smallest normal. Normal: r carries the implicit bit, which adds one to
  // the exponent field; a carry out of the mantissa rounds up to the next
  // binade and, from the largest finite value, exactly to infinity.
  std::uint64_t encoded =
      unbiased < 1 - kBias
          ? r
          : (static_cast<std::uint64_t>(targetExp + kBias - 1) << ManBits) + r;
  assert(encoded <= kInf);
  return static_cast<std::uint16_t>(sign | encoded);
}

} // namespace

float halfToFloat(std::uint16_t bits) {
  std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000) << 16;
  std::uint32_t exp = (bits >> 10) & 0x1F;
  std::uint32_t mant = bits & 0x3FF;
  if (exp == 0) {
    // Subnormal halves are normal floats; mant * 2^-24 is exact.
    float magnitude = std::ldexp(static_cast<float>(mant), -24);
    return std::bit_cast<float>(sign | std::bit_cast<std::uint32_t>(magnitude));
  }
  if (exp == 0x1F)
    return std::bit_cast<float>(sign | 0x7F800000u | (mant << 13));
  return std::bit_cast<float>(sign | ((exp + 127 - 15) << 23) | (mant << 13));
}

std::uint16_t floatToHalf(float value) {
  return encodeSmallFloat<5, 10>(static_cast<double>(value));
}

float bfloat16ToFloat(std::uint16_t bits) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}

std::uint16_t floatToBfloat16(float value) {
  return encodeSmallFloat<8, 7>(static_cast<double>(value));
}

std::uint16_t doubleToHalf(double value) {
  return encodeSmallFloat<5, 10>(value);
}

std::uint16_t doubleToBfloat16(double value) {
  return encodeSmallFloat<8, 7>(value);
}

} // namespace weir::ir
