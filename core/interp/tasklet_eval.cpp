/// \file
/// Typed evaluation of tasklet code: values, conversions, element loads and
/// stores, write-conflict resolution, and the compiled tasklet whose literal
/// types are settled once so that each map iteration only evaluates.

#include "core/interp/tasklet_eval.h"

#include "ir/error.h"
#include "ir/float16.h"
#include "ir/tasklet_math.h"
#include "ir/tasklet_types.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <type_traits>

namespace weir::interp {
namespace {

using ir::DType;
using ir::tasklet::BinaryOp;
using ir::tasklet::convert;
using ir::tasklet::ExprKind;
using ir::tasklet::Func;
using ir::tasklet::isComparison;
using ir::tasklet::literalValue;
using ir::tasklet::UnaryOp;
using ir::tasklet::wrapBits;

std::int64_t asSigned(std::uint64_t bits) {
  return static_cast<std::int64_t>(bits);
}

template <typename T> T loadAs(const std::byte *p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

template <typename T> void storeAs(std::byte *p, T v) {
  std::memcpy(p, &v, sizeof v);
}

/// One arithmetic operation in T: double for f64, float (rounded after the
/// operation) for the narrower float types.
template <typename T> T arith(BinaryOp op, T a, T b) {
  switch (op) {
  case BinaryOp::Add:
    return a + b;
  case BinaryOp::Sub:
    return a - b;
  case BinaryOp::Mul:
    return a * b;
  case BinaryOp::Div:
    return a / b;
  case BinaryOp::Mod:
    return std::fmod(a, b);
  default:
    assert(false && "not an arithmetic operator");
    return T(0);
  }
}

Value floatArith(BinaryOp op, DType t, double a, double b) {
  if (t == DType::F64)
    return Value::ofFloat(t, arith<double>(op, a, b));
  return Value::ofFloat(
      t, arith<float>(op, static_cast<float>(a), static_cast<float>(b)));
}

Value intArith(BinaryOp op, DType t, std::uint64_t a, std::uint64_t b,
               const std::string &text) {
  std::uint64_t r = 0;
  switch (op) {
  case BinaryOp::Add:
    r = a + b;
    break;
  case BinaryOp::Sub:
    r = a - b;
    break;
  case BinaryOp::Mul:
    r = a * b;
    break;
  case BinaryOp::Div:
  case BinaryOp::Mod: {
    bool div = op == BinaryOp::Div;
    if (b == 0)
      throw Error(std::string("integer ") + (div ? "division" : "remainder") +
                  " by zero in '" + text + "'");
    if (ir::isSignedInt(t)) {
      // -1 is split off because MIN / -1 overflows int64; negation in
      // unsigned arithmetic wraps instead.
      if (asSigned(b) == -1)
        r = div ? 0 - a : 0;
      else
        r = static_cast<std::uint64_t>(div ? asSigned(a) / asSigned(b)
                                           : asSigned(a) % asSigned(b));
    } else {
      r = div ? a / b : a % b;
    }
    break;
  }
  default:
    assert(false && "not an arithmetic operator");
  }
  return Value{t, 0, wrapBits(t, r)};
}

bool compare(BinaryOp op, DType t, const Value &a, const Value &b) {
  auto cmp = [op](auto x, auto y) {
    switch (op) {
    case BinaryOp::Eq:
      return x == y;
    case BinaryOp::Ne:
      return x != y;
    case BinaryOp::Lt:
      return x < y;
    case BinaryOp::Le:
      return x <= y;
    case BinaryOp::Gt:
      return x > y;
    case BinaryOp::Ge:
      return x >= y;
    default:
      assert(false && "not a comparison");
      return false;
    }
  };
  if (ir::isFloat(t))
    return cmp(a.f, b.f);
  if (ir::isSignedInt(t))
    return cmp(asSigned(a.bits), asSigned(b.bits));
  return cmp(a.bits, b.bits);
}

template <typename F> F floatMinMax(bool isMax, F a, F b) {
  // NaN wins, as in numpy's minimum/maximum and ONNX Min/Max.
  if (std::isnan(a) || std::isnan(b))
    return std::numeric_limits<F>::quiet_NaN();
  return isMax ? std::max(a, b) : std::min(a, b);
}

template <typename F> F floatCall(Func f, F x, F y) {
  switch (f) {
  case Func::Exp:
    if constexpr (std::is_same_v<F, float>)
      return weir_math::expF32(x);
    return std::exp(x);
  case Func::Log:
    return std::log(x);
  case Func::Sqrt:
    return std::sqrt(x);
  case Func::Rsqrt:
    return F(1) / std::sqrt(x);
  case Func::Tanh:
    return std::tanh(x);
  case Func::Erf:
    if constexpr (std::is_same_v<F, float>)
      return weir_math::erfF32(x);
    return std::erf(x);
  case Func::Abs:
    return std::fabs(x);
  case Func::Min:
    return floatMinMax(false, x, y);
  case Func::Max:
    return floatMinMax(true, x, y);
  case Func::Pow:
    return weir_math::pow(x, y);
  case Func::Floor:
    return std::floor(x);
  case Func::Ceil:
    return std::ceil(x);
  case Func::Sigmoid:
    if constexpr (std::is_same_v<F, float>)
      return F(1) / (F(1) + weir_math::expF32(-x));
    return F(1) / (F(1) + std::exp(-x));
  case Func::Sin:
    return std::sin(x);
  case Func::Cos:
    return std::cos(x);
  case Func::Tan:
    return std::tan(x);
  case Func::Asin:
    return std::asin(x);
  case Func::Acos:
    return std::acos(x);
  case Func::Atan:
    return std::atan(x);
  case Func::Sinh:
    return std::sinh(x);
  case Func::Cosh:
    return std::cosh(x);
  case Func::Asinh:
    return std::asinh(x);
  case Func::Acosh:
    return std::acosh(x);
  case Func::Atanh:
    return std::atanh(x);
  case Func::Round:
    // Half to even (ONNX Round, numpy.round): the default rounding mode.
    return std::nearbyint(x);
  case Func::Hash: // integers only (the type checker)
    break;
  }
  assert(false && "unknown Func");
  return x;
}

Value call(Func f, DType t, const Value &a, const Value &b) {
  if (ir::isFloat(t)) {
    if (t == DType::F64)
      return Value::ofFloat(t, floatCall<double>(f, a.f, b.f));
    return Value::ofFloat(t, floatCall<float>(f, static_cast<float>(a.f),
                                              static_cast<float>(b.f)));
  }
  // The type checker admits only abs, min, max and hash on integers.
  bool sgn = ir::isSignedInt(t);
  auto less = [sgn](std::uint64_t x, std::uint64_t y) {
    return sgn ? asSigned(x) < asSigned(y) : x < y;
  };
  switch (f) {
  case Func::Abs:
    return Value{
        t, 0, wrapBits(t, sgn && asSigned(a.bits) < 0 ? 0 - a.bits : a.bits)};
  case Func::Min:
    return less(b.bits, a.bits) ? b : a;
  case Func::Max:
    return less(a.bits, b.bits) ? b : a;
  case Func::Hash: // 64-bit types only (the type checker)
    return Value{t, 0, weir_math::hash(a.bits, b.bits)};
  default:
    throw Error("'" + std::string(ir::tasklet::funcName(f)) +
                "' needs a floating-point argument, got " +
                std::string(ir::dtypeName(t)));
  }
}

Value negate(const Value &v) {
  if (ir::isFloat(v.dtype))
    return Value::ofFloat(v.dtype, -v.f);
  return Value{v.dtype, 0, wrapBits(v.dtype, 0 - v.bits)};
}

} // namespace

Value loadElement(const runtime::Tensor &t, std::int64_t flatIndex) {
  const std::byte *p =
      t.data() + static_cast<std::size_t>(flatIndex) * ir::dtypeSize(t.dtype());
  DType d = t.dtype();
  switch (d) {
  case DType::F32:
    return Value::ofFloat(d, loadAs<float>(p));
  case DType::F64:
    return Value::ofFloat(d, loadAs<double>(p));
  case DType::F16:
    return Value::ofFloat(d, ir::halfToFloat(loadAs<std::uint16_t>(p)));
  case DType::BF16:
    return Value::ofFloat(d, ir::bfloat16ToFloat(loadAs<std::uint16_t>(p)));
  case DType::I8:
    return Value::ofInt(d, loadAs<std::int8_t>(p));
  case DType::I16:
    return Value::ofInt(d, loadAs<std::int16_t>(p));
  case DType::I32:
    return Value::ofInt(d, loadAs<std::int32_t>(p));
  case DType::I64:
    return Value::ofInt(d, loadAs<std::int64_t>(p));
  case DType::U8:
    return Value{d, 0, loadAs<std::uint8_t>(p)};
  case DType::U16:
    return Value{d, 0, loadAs<std::uint16_t>(p)};
  case DType::U32:
    return Value{d, 0, loadAs<std::uint32_t>(p)};
  case DType::U64:
    return Value{d, 0, loadAs<std::uint64_t>(p)};
  case DType::Bool:
    return Value::ofBool(loadAs<std::uint8_t>(p) != 0);
  }
  assert(false && "unknown DType");
  return {};
}

void storeElement(runtime::Tensor &t, std::int64_t flatIndex, const Value &v) {
  DType d = t.dtype();
  Value c = convert(v, d);
  std::byte *p =
      t.mutableData() + static_cast<std::size_t>(flatIndex) * ir::dtypeSize(d);
  switch (d) {
  case DType::F32:
    return storeAs(p, static_cast<float>(c.f));
  case DType::F64:
    return storeAs(p, c.f);
  case DType::F16:
    return storeAs(p, ir::doubleToHalf(c.f));
  case DType::BF16:
    return storeAs(p, ir::doubleToBfloat16(c.f));
  case DType::I8:
  case DType::U8:
  case DType::Bool:
    return storeAs(p, static_cast<std::uint8_t>(c.bits));
  case DType::I16:
  case DType::U16:
    return storeAs(p, static_cast<std::uint16_t>(c.bits));
  case DType::I32:
  case DType::U32:
    return storeAs(p, static_cast<std::uint32_t>(c.bits));
  case DType::I64:
  case DType::U64:
    return storeAs(p, c.bits);
  }
  assert(false && "unknown DType");
}

Value combine(ir::Wcr wcr, const Value &existing, const Value &incoming) {
  DType t = existing.dtype;
  Value in = convert(incoming, t);
  if (t == DType::Bool) {
    bool orLike = wcr == ir::Wcr::Sum || wcr == ir::Wcr::Max;
    return Value::ofBool(orLike ? (existing.bits || in.bits)
                                : (existing.bits && in.bits));
  }
  switch (wcr) {
  case ir::Wcr::Sum:
  case ir::Wcr::Prod: {
    BinaryOp op = wcr == ir::Wcr::Sum ? BinaryOp::Add : BinaryOp::Mul;
    if (ir::isFloat(t))
      return floatArith(op, t, existing.f, in.f);
    return intArith(op, t, existing.bits, in.bits, "");
  }
  case ir::Wcr::Max:
    return call(Func::Max, t, existing, in);
  case ir::Wcr::Min:
    return call(Func::Min, t, existing, in);
  }
  assert(false && "unknown Wcr");
  return existing;
}

/// Builds the evaluation nodes of a body whose types ir::tasklet::
/// settleTypes has settled.
struct CompiledTasklet::Builder {
  Builder(CompiledTasklet &out, const ir::tasklet::SettledTypes &types)
      : out(out), types(types) {}

  int build(const ir::tasklet::Expr &e) {
    DType type = types.type.at(&e);
    Node n;
    n.kind = e.kind;
    n.type = type;
    switch (e.kind) {
    case ExprKind::FloatLit:
    case ExprKind::IntLit:
    case ExprKind::BoolLit:
      n.literal = literalValue(e, type);
      break;
    case ExprKind::Var:
      n.slot = vars.at(e.name);
      break;
    case ExprKind::Unary:
      n.unaryOp = e.unaryOp;
      break;
    case ExprKind::Binary:
      n.binaryOp = e.binaryOp;
      if (isComparison(e.binaryOp))
        n.operandType = types.operandType.at(&e);
      else if (!ir::isFloat(type) &&
               (e.binaryOp == BinaryOp::Div || e.binaryOp == BinaryOp::Mod))
        n.text = ir::tasklet::print(e);
      break;
    case ExprKind::Call:
      n.func = e.func;
      break;
    case ExprKind::Select:
    case ExprKind::Cast:
      break;
    }
    for (const ir::tasklet::ExprPtr &op : e.operands)
      n.operands.push_back(build(*op));
    out.nodes_.push_back(std::move(n));
    return static_cast<int>(out.nodes_.size()) - 1;
  }

  CompiledTasklet &out;
  const ir::tasklet::SettledTypes &types;
  /// Readable variables: name -> slot.
  std::map<std::string, int, std::less<>> vars;
};

CompiledTasklet::CompiledTasklet(const ir::tasklet::Code &code,
                                 const std::vector<ir::Connector> &inputs,
                                 const std::vector<ir::Connector> &outputs)
    : inputCount_(inputs.size()), outputCount_(outputs.size()) {
  ir::tasklet::ConnectorTypes inTypes, outTypes;
  for (const ir::Connector &c : inputs)
    inTypes[c.name] = c.dtype;
  for (const ir::Connector &c : outputs)
    outTypes[c.name] = c.dtype;
  std::vector<ir::tasklet::TypeIssue> issues =
      ir::tasklet::typeCheck(code, inTypes, outTypes);
  if (!issues.empty()) {
    std::string message = "the code does not type check: " + issues[0].message;
    if (issues.size() > 1)
      message += " (and " + std::to_string(issues.size() - 1) + " more)";
    throw Error(message);
  }

  ir::tasklet::SettledTypes types =
      ir::tasklet::settleTypes(code, inTypes, outTypes);
  Builder b(*this, types);
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    b.vars[inputs[i].name] = static_cast<int>(i);
    inputTypes_.push_back(inputs[i].dtype);
  }
  std::map<std::string, int, std::less<>> outSlots;
  for (std::size_t i = 0; i < outputs.size(); ++i)
    outSlots[outputs[i].name] = static_cast<int>(inputs.size() + i);
  slotCount_ = inputs.size() + outputs.size();
  for (const ir::tasklet::Assignment &s : code.statements) {
    int value = b.build(*s.value);
    if (auto it = outSlots.find(s.target); it != outSlots.end()) {
      statements_.push_back({it->second, value});
    } else if (auto temp = b.vars.find(s.target); temp != b.vars.end()) {
      statements_.push_back({temp->second, value});
    } else {
      int slot = static_cast<int>(slotCount_++);
      b.vars[s.target] = slot;
      statements_.push_back({slot, value});
    }
  }
}

void CompiledTasklet::run(std::span<const Value> inputs,
                          std::span<Value> outputs) const {
  assert(inputs.size() == inputCount_ && outputs.size() == outputCount_);
  std::vector<Value> slots(slotCount_);
  // Inputs arrive in their connectors' dtypes from validated programs;
  // converting costs nothing then and keeps a stray caller well defined.
  for (std::size_t i = 0; i < inputCount_; ++i)
    slots[i] = convert(inputs[i], inputTypes_[i]);
  for (const Statement &s : statements_)
    slots[s.slot] = eval(s.value, slots);
  std::copy(slots.begin() + static_cast<std::ptrdiff_t>(inputCount_),
            slots.begin() +
                static_cast<std::ptrdiff_t>(inputCount_ + outputCount_),
            outputs.begin());
}

Value CompiledTasklet::eval(int index, const std::vector<Value> &slots) const {
  const Node &n = nodes_[static_cast<std::size_t>(index)];
  auto operand = [&](std::size_t i) { return eval(n.operands[i], slots); };
  switch (n.kind) {
  case ExprKind::FloatLit:
  case ExprKind::IntLit:
  case ExprKind::BoolLit:
    return n.literal;
  case ExprKind::Var:
    return slots[static_cast<std::size_t>(n.slot)];
  case ExprKind::Unary: {
    Value v = operand(0);
    return n.unaryOp == UnaryOp::Not ? Value::ofBool(v.bits == 0) : negate(v);
  }
  case ExprKind::Binary: {
    if (n.binaryOp == BinaryOp::And)
      return Value::ofBool(operand(0).bits != 0 && operand(1).bits != 0);
    if (n.binaryOp == BinaryOp::Or)
      return Value::ofBool(operand(0).bits != 0 || operand(1).bits != 0);
    Value a = operand(0), b = operand(1);
    if (isComparison(n.binaryOp))
      return Value::ofBool(compare(n.binaryOp, n.operandType, a, b));
    if (ir::isFloat(n.type))
      return floatArith(n.binaryOp, n.type, a.f, b.f);
    return intArith(n.binaryOp, n.type, a.bits, b.bits, n.text);
  }
  case ExprKind::Call: {
    Value a = operand(0);
    Value b = n.operands.size() > 1 ? operand(1) : a;
    return call(n.func, n.type, a, b);
  }
  case ExprKind::Select:
    return operand(0).bits != 0 ? operand(1) : operand(2);
  case ExprKind::Cast:
    return convert(operand(0), n.type);
  }
  assert(false && "unknown ExprKind");
  return {};
}

} // namespace weir::interp
