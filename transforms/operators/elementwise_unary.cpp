/// \file
/// Pure expansions of unary elementwise operators: math functions and
/// activations, y = f(x) in one map. Attribute values become float
/// literals, which take the input's float type.

#include "transforms/operators/elementwise.h"

#include "ir/error.h"

#include <cmath>

namespace weir::operators::elementwise {
namespace {

/// y = <fn>(x) for a function of the tasklet language that takes floats.
Expander floatFn(std::string fn) {
  return unary([fn](ExpansionContext &ctx, ir::DType t) {
    requireFloat(ctx, t);
    return "y = " + fn + "(x)";
  });
}

/// A float-only operator whose code uses the node's attributes.
Expander floatOp(std::function<std::string(ExpansionContext &)> code) {
  return unary([code](ExpansionContext &ctx, ir::DType t) {
    requireFloat(ctx, t);
    return code(ctx);
  });
}

std::string lit(const ExpansionContext &ctx, const char *attr,
                double fallback) {
  return floatLiteral(ctx, ctx.floatAttr(attr, fallback));
}

std::string signCode(ExpansionContext &, ir::DType t) {
  if (ir::isUnsignedInt(t))
    return "y = select(x > 0, 1, 0)";
  // The last branch returns x itself, so 0, -0 and NaN keep their value.
  return "y = select(x > 0, 1, select(x < 0, -1, x))";
}

std::string isInfCode(ExpansionContext &ctx, ir::DType t) {
  requireFloat(ctx, t);
  // The tasklet language has no infinity literal: beyond the largest finite
  // value of the type is infinite.
  std::string max = maxFiniteLiteral(t);
  bool pos = ctx.intAttr("detect_positive", 1) != 0;
  bool neg = ctx.intAttr("detect_negative", 1) != 0;
  if (pos && neg)
    return "y = abs(x) > " + max;
  if (pos)
    return "y = x > " + max;
  if (neg)
    return "y = x < -" + max;
  return "y = x != x && false";
}

std::string shrinkCode(ExpansionContext &ctx, ir::DType t) {
  double lambd = ctx.floatAttr("lambd", 0.5);
  double bias = ctx.floatAttr("bias", 0.0);
  std::string l, b;
  if (ir::isFloat(t)) {
    l = floatLiteral(ctx, lambd);
    b = floatLiteral(ctx, bias);
  } else {
    // Integer inputs compare against integer literals; a fractional
    // threshold would need a conversion the ONNX reference does not define.
    auto integral = [](double v) {
      return std::fabs(v) < 1e15 && v == std::trunc(v);
    };
    if (!integral(lambd) || !integral(bias))
      ctx.fail("fractional lambd or bias on an integer input");
    if (ir::isUnsignedInt(t))
      ctx.fail("unsigned integer input");
    l = "(" + std::to_string(static_cast<std::int64_t>(lambd)) + ")";
    b = "(" + std::to_string(static_cast<std::int64_t>(bias)) + ")";
  }
  return "y = select(x < -" + l + ", x + " + b + ", select(x > " + l +
         ", x - " + b + ", 0))";
}

const ExpansionRegistrar kRelu{
    {"Relu", "pure", "y = max(x, 0)",
     unary([](auto &, auto) { return "y = max(x, 0)"; })},
    true};
const ExpansionRegistrar kAbs{
    {"Abs", "pure", "y = abs(x)",
     unary([](auto &, auto) { return "y = abs(x)"; })},
    true};
const ExpansionRegistrar kNeg{
    {"Neg", "pure", "y = -x", unary([](auto &, auto) { return "y = -x"; })},
    true};
const ExpansionRegistrar kSign{
    {"Sign", "pure", "y = -1, 0 or 1 by the sign of x", unary(signCode)}, true};
const ExpansionRegistrar kNot{
    {"Not", "pure", "y = !x", unary([](auto &, auto) { return "y = !x"; })},
    true};
const ExpansionRegistrar kIsNaN{{"IsNaN", "pure", "y = x != x",
                                 floatOp([](auto &) { return "y = x != x"; })},
                                true};
const ExpansionRegistrar kIsInf{{"IsInf", "pure",
                                 "y = |x| beyond the largest finite value",
                                 unary(isInfCode)},
                                true};

// Float math that maps onto one function of the tasklet language.
const ExpansionRegistrar kExp{{"Exp", "pure", "y = exp(x)", floatFn("exp")},
                              true};
const ExpansionRegistrar kLog{{"Log", "pure", "y = log(x)", floatFn("log")},
                              true};
const ExpansionRegistrar kSqrt{{"Sqrt", "pure", "y = sqrt(x)", floatFn("sqrt")},
                               true};
const ExpansionRegistrar kFloor{
    {"Floor", "pure", "y = floor(x)", floatFn("floor")}, true};
const ExpansionRegistrar kCeil{{"Ceil", "pure", "y = ceil(x)", floatFn("ceil")},
                               true};
const ExpansionRegistrar kRound{
    {"Round", "pure", "y = round(x), half to even", floatFn("round")}, true};
const ExpansionRegistrar kSin{{"Sin", "pure", "y = sin(x)", floatFn("sin")},
                              true};
const ExpansionRegistrar kCos{{"Cos", "pure", "y = cos(x)", floatFn("cos")},
                              true};
const ExpansionRegistrar kTan{{"Tan", "pure", "y = tan(x)", floatFn("tan")},
                              true};
const ExpansionRegistrar kAsin{{"Asin", "pure", "y = asin(x)", floatFn("asin")},
                               true};
const ExpansionRegistrar kAcos{{"Acos", "pure", "y = acos(x)", floatFn("acos")},
                               true};
const ExpansionRegistrar kAtan{{"Atan", "pure", "y = atan(x)", floatFn("atan")},
                               true};
const ExpansionRegistrar kSinh{{"Sinh", "pure", "y = sinh(x)", floatFn("sinh")},
                               true};
const ExpansionRegistrar kCosh{{"Cosh", "pure", "y = cosh(x)", floatFn("cosh")},
                               true};
const ExpansionRegistrar kAsinh{
    {"Asinh", "pure", "y = asinh(x)", floatFn("asinh")}, true};
const ExpansionRegistrar kAcosh{
    {"Acosh", "pure", "y = acosh(x)", floatFn("acosh")}, true};
const ExpansionRegistrar kAtanh{
    {"Atanh", "pure", "y = atanh(x)", floatFn("atanh")}, true};
const ExpansionRegistrar kTanh{{"Tanh", "pure", "y = tanh(x)", floatFn("tanh")},
                               true};
const ExpansionRegistrar kSigmoid{
    {"Sigmoid", "pure", "y = sigmoid(x)", floatFn("sigmoid")}, true};
const ExpansionRegistrar kErf{{"Erf", "pure", "y = erf(x)", floatFn("erf")},
                              true};
// Gelu (ONNX opset 20), written in the order PyTorch's exported Erf
// subgraph computes it — x / sqrt(2), erf, + 1, times x, times 0.5 — so
// fusing that subgraph into one Gelu keeps the same f32 roundings.
const ExpansionRegistrar kGelu{
    {"Gelu", "pure",
     "y = x * (erf(x / sqrt(2)) + 1) * 0.5 (approximate=tanh: "
     "0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))))",
     floatOp([](ExpansionContext &ctx) {
       std::string approximate = ctx.stringAttr("approximate", "none");
       if (approximate == "tanh")
         return "y = 0.5 * x * (1.0 + tanh(" +
                floatLiteral(ctx, 0.7978845608028654) + " * (x + " +
                floatLiteral(ctx, 0.044715) + " * x * x * x)))";
       if (approximate != "none")
         throw weir::Error(
             "Gelu: approximate must be \"none\" or \"tanh\", not \"" +
             approximate + "\"");
       return "y = x * (erf(x / " + floatLiteral(ctx, 1.4142135623730951) +
              ") + 1.0) * 0.5";
     })},
    true};
const ExpansionRegistrar kReciprocal{
    {"Reciprocal", "pure", "y = 1 / x",
     floatOp([](auto &) { return "y = 1.0 / x"; })},
    true};
const ExpansionRegistrar kSoftplus{
    {"Softplus", "pure", "y = log(exp(x) + 1)",
     floatOp([](auto &) { return "y = log(exp(x) + 1.0)"; })},
    true};
const ExpansionRegistrar kSoftsign{
    {"Softsign", "pure", "y = x / (1 + |x|)",
     floatOp([](auto &) { return "y = x / (1.0 + abs(x))"; })},
    true};

// Activations with attributes.
const ExpansionRegistrar kElu{
    {"Elu", "pure", "y = x < 0 ? alpha * (exp(x) - 1) : x",
     floatOp([](ExpansionContext &ctx) {
       return "y = select(x < 0, " + lit(ctx, "alpha", 1.0) +
              " * (exp(x) - 1.0), x)";
     })},
    true};
const ExpansionRegistrar kSelu{
    {"Selu", "pure", "y = gamma * (x > 0 ? x : alpha * exp(x) - alpha)",
     floatOp([](ExpansionContext &ctx) {
       std::string alpha = lit(ctx, "alpha", 1.67326319217681884765625);
       std::string gamma = lit(ctx, "gamma", 1.05070102214813232421875);
       return "y = select(x > 0, " + gamma + " * x, " + gamma + " * (" + alpha +
              " * exp(x) - " + alpha + "))";
     })},
    true};
const ExpansionRegistrar kCelu{
    {"Celu", "pure", "y = max(0, x) + min(0, alpha * (exp(x / alpha) - 1))",
     floatOp([](ExpansionContext &ctx) {
       std::string alpha = lit(ctx, "alpha", 1.0);
       return "y = max(x, 0.0) + min(" + alpha + " * (exp(x / " + alpha +
              ") - 1.0), 0.0)";
     })},
    true};
const ExpansionRegistrar kLeakyRelu{
    {"LeakyRelu", "pure", "y = x < 0 ? alpha * x : x",
     floatOp([](ExpansionContext &ctx) {
       return "y = select(x < 0, " + lit(ctx, "alpha", 0.01) + " * x, x)";
     })},
    true};
const ExpansionRegistrar kThresholdedRelu{
    {"ThresholdedRelu", "pure", "y = x > alpha ? x : 0",
     floatOp([](ExpansionContext &ctx) {
       return "y = select(x > " + lit(ctx, "alpha", 1.0) + ", x, 0.0)";
     })},
    true};
const ExpansionRegistrar kHardSigmoid{
    {"HardSigmoid", "pure", "y = max(0, min(1, alpha * x + beta))",
     floatOp([](ExpansionContext &ctx) {
       return "y = max(min(" + lit(ctx, "alpha", 0.2) + " * x + " +
              lit(ctx, "beta", 0.5) + ", 1.0), 0.0)";
     })},
    true};
const ExpansionRegistrar kHardSwish{
    {"HardSwish", "pure", "y = x * max(0, min(1, x / 6 + 0.5))",
     floatOp([](ExpansionContext &ctx) {
       return "y = x * max(min(" + floatLiteral(ctx, 1.0 / 6.0) +
              " * x + 0.5, 1.0), 0.0)";
     })},
    true};
const ExpansionRegistrar kShrink{{"Shrink", "pure",
                                  "y = x < -l ? x + b : x > l ? x - b : 0",
                                  unary(shrinkCode)},
                                 true};

} // namespace
} // namespace weir::operators::elementwise
