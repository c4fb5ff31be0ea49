#pragma once
/// \file
/// The 16-bit float formats Weir stores: IEEE binary16 (f16) and bfloat16
/// (bf16), as bit patterns. Rounding is to nearest even; a NaN keeps its
/// payload's top bits and becomes quiet, as hardware does. Tensors, the
/// interpreter, reduce-precision's constants and the CPU runtime all use
/// these, so every engine rounds alike.

#include <cstdint>

namespace weir::ir {

/// f16 / bf16 conversions (IEEE binary16 and bfloat16 bit patterns).
float halfToFloat(std::uint16_t bits);
std::uint16_t floatToHalf(float value);
float bfloat16ToFloat(std::uint16_t bits);
std::uint16_t floatToBfloat16(float value);
/// Straight from double, rounding once (a detour through float could round
/// twice and miss the nearest value).
std::uint16_t doubleToHalf(double value);
std::uint16_t doubleToBfloat16(double value);

} // namespace weir::ir
