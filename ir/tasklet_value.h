#pragma once
/// \file
/// The scalars of the tasklet language and their conversions: what the
/// reference interpreter computes with, and what every code generator
/// emits for a literal, so that all engines agree on the bits.
/// - f64 is held in double; f32, f16 and bf16 in float precision, rounded
///   to their own precision only when stored or cast.
/// - Integers are two's complement bits at their width, sign- or
///   zero-extended to 64; bool is 0 or 1.
/// - Casts: float to float rounds to nearest even; float to integer
///   truncates toward zero, saturating at the target's range, NaN giving 0;
///   integer to integer keeps the low bits (C's conversion); to bool is
///   `!= 0`.
/// - A literal takes the type settleTypes gave it (the typed operand beside
///   it, or a cast's target when it fits; otherwise i64 or f32).

#include "ir/dtype.h"
#include "ir/tasklet.h"

#include <cstdint>

namespace weir::ir::tasklet {

/// One scalar of a tasklet computation.
struct Value {
  DType dtype = DType::F32;
  /// The value of a float type. For f32, f16 and bf16 it is always a value a
  /// float can hold exactly.
  double f = 0;
  /// Integers: the two's complement bits, sign-extended (signed types) or
  /// zero-extended (unsigned types) from the type's width. Bool: 0 or 1.
  std::uint64_t bits = 0;

  static Value ofFloat(DType dtype, double value);
  static Value ofInt(DType dtype, std::int64_t value);
  static Value ofBool(bool value);
  /// The value as a double (integers converted, bool 0/1).
  double toDouble() const;
};

/// `to(v)` in the tasklet language (see the file comment).
Value convert(const Value &v, DType to);

/// The canonical bits of an integer of type `t` holding the low bits of
/// `v`: sign- or zero-extended from the type's width (bool: `v != 0`).
std::uint64_t wrapBits(DType t, std::uint64_t v);

/// The value of literal `e` (a float, integer or bool literal) when its
/// settled type is `type` (settleTypes): what the interpreter
/// computes with and code generators emit. Throws weir::Error for a
/// non-literal.
Value literalValue(const Expr &e, DType type);

} // namespace weir::ir::tasklet
