/// \file
/// See tasklet_value.h.

#include "ir/tasklet_value.h"

#include "ir/error.h"
#include "ir/float16.h"

#include <cmath>
#include <limits>

namespace weir::ir::tasklet {
namespace {

int widthBits(DType t) {
  switch (t) {
  case DType::I8:
  case DType::U8:
    return 8;
  case DType::I16:
  case DType::U16:
    return 16;
  case DType::I32:
  case DType::U32:
    return 32;
  default:
    return 64;
  }
}

/// Round to the precision a value of float type `t` is held in between
/// operations: double for f64, float for the others.
double computePrecision(DType t, double v) {
  return t == DType::F64 ? v : static_cast<double>(static_cast<float>(v));
}

/// Round to the precision of `t` itself (f16 and bf16 included).
double storagePrecision(DType t, double v) {
  switch (t) {
  case DType::F64:
    return v;
  case DType::F16:
    return ir::halfToFloat(ir::doubleToHalf(v));
  case DType::BF16:
    return ir::bfloat16ToFloat(ir::doubleToBfloat16(v));
  default:
    return static_cast<float>(v);
  }
}

/// Truncate toward zero, saturate at the range of `t`, NaN to 0.
std::uint64_t floatToIntBits(double v, DType t) {
  if (std::isnan(v))
    return 0;
  v = std::trunc(v);
  int w = widthBits(t);
  if (ir::isSignedInt(t)) {
    double limit = std::ldexp(1.0, w - 1); // 2^(w-1), exact
    std::int64_t lo = w == 64 ? std::numeric_limits<std::int64_t>::min()
                              : -(std::int64_t(1) << (w - 1));
    std::int64_t hi = w == 64 ? std::numeric_limits<std::int64_t>::max()
                              : (std::int64_t(1) << (w - 1)) - 1;
    if (v <= -limit)
      return static_cast<std::uint64_t>(lo);
    if (v >= limit)
      return static_cast<std::uint64_t>(hi);
    return static_cast<std::uint64_t>(static_cast<std::int64_t>(v));
  }
  if (v <= 0)
    return 0;
  if (v >= std::ldexp(1.0, w))
    return w == 64 ? std::numeric_limits<std::uint64_t>::max()
                   : (std::uint64_t(1) << w) - 1;
  return static_cast<std::uint64_t>(v);
}

} // namespace

// C++20 defines the narrowing conversions used here as modular.
std::uint64_t wrapBits(DType t, std::uint64_t v) {
  switch (t) {
  case DType::I8:
    return static_cast<std::uint64_t>(
        static_cast<std::int64_t>(static_cast<std::int8_t>(v)));
  case DType::I16:
    return static_cast<std::uint64_t>(
        static_cast<std::int64_t>(static_cast<std::int16_t>(v)));
  case DType::I32:
    return static_cast<std::uint64_t>(
        static_cast<std::int64_t>(static_cast<std::int32_t>(v)));
  case DType::U8:
    return v & 0xffu;
  case DType::U16:
    return v & 0xffffu;
  case DType::U32:
    return v & 0xffffffffu;
  case DType::Bool:
    return v != 0;
  default:
    return v;
  }
}

Value Value::ofFloat(DType dtype, double value) {
  return Value{dtype, computePrecision(dtype, value), 0};
}

Value Value::ofInt(DType dtype, std::int64_t value) {
  return Value{dtype, 0, wrapBits(dtype, static_cast<std::uint64_t>(value))};
}

Value Value::ofBool(bool value) { return Value{DType::Bool, 0, value}; }

double Value::toDouble() const {
  if (ir::isFloat(dtype))
    return f;
  if (ir::isSignedInt(dtype))
    return static_cast<double>(static_cast<std::int64_t>(bits));
  return static_cast<double>(bits);
}

Value convert(const Value &v, DType to) {
  if (v.dtype == to)
    return v;
  if (ir::isFloat(v.dtype)) {
    if (ir::isFloat(to))
      return Value{to, storagePrecision(to, v.f), 0};
    if (to == DType::Bool)
      return Value::ofBool(v.f != 0);
    return Value{to, 0, floatToIntBits(v.f, to)};
  }
  // From an integer or bool.
  if (ir::isFloat(to)) {
    // f32 converts straight from the integer: through double it could
    // round twice. f16 and bf16 go through double, which is exact for
    // every integer they can hold.
    if (to == DType::F32)
      return Value{to,
                   ir::isSignedInt(v.dtype)
                       ? static_cast<float>(static_cast<std::int64_t>(v.bits))
                       : static_cast<float>(v.bits),
                   0};
    return Value{to, storagePrecision(to, v.toDouble()), 0};
  }
  if (to == DType::Bool)
    return Value::ofBool(v.bits != 0);
  return Value{to, 0, wrapBits(to, v.bits)};
}

Value literalValue(const ir::tasklet::Expr &e, DType type) {
  switch (e.kind) {
  case ExprKind::FloatLit:
    return ir::isFloat(type)
               ? Value::ofFloat(type, e.floatValue)
               : convert(Value::ofFloat(DType::F64, e.floatValue), type);
  case ExprKind::IntLit:
    if (ir::isFloat(type)) {
      // Computed at float precision for f16/bf16 (see the file comment).
      DType compute = type == DType::F64 ? type : DType::F32;
      Value v = convert(Value::ofInt(DType::I64, e.intValue), compute);
      v.dtype = type;
      return v;
    }
    return convert(Value::ofInt(DType::I64, e.intValue), type);
  case ExprKind::BoolLit:
    return Value::ofBool(e.intValue != 0);
  default:
    throw Error("'" + ir::tasklet::print(e) + "' is not a literal");
  }
}

} // namespace weir::ir::tasklet
