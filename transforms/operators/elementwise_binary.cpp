/// \file
/// Pure expansions of binary elementwise operators with numpy-style
/// broadcasting — arithmetic, comparisons, logic, Pow, Mod, BitShift,
/// PRelu — and Clip.

#include "transforms/operators/elementwise.h"

namespace weir::operators::elementwise {
namespace {

/// c = a <op> b for one fixed code text, any dtype the tasklet accepts.
Expander fixed(std::string code) {
  return binary([code](auto &, auto) { return code; });
}

/// Mod: fmod=1 is C's remainder (sign of the dividend), which the tasklet
/// `%` computes for integers and floats alike; fmod=0 is Python's (sign of
/// the divisor), which ONNX allows only for integers.
std::string modCode(ExpansionContext &ctx, ir::DType t) {
  if (ctx.intAttr("fmod", 0) != 0 || ir::isUnsignedInt(t))
    return "c = a % b";
  if (ir::isFloat(t))
    ctx.fail("fmod=0 on a floating-point input (ONNX requires fmod=1)");
  return "r = a % b\nc = select(r != 0 && (r < 0) != (b < 0), r + b, r)";
}

/// Pow: the exponent may have another type than the base. A float base
/// converts the exponent to its own type; an integer base is raised in f64
/// and truncated back, as the ONNX reference does (exact while the result
/// fits in 53 bits).
void expandPow(ExpansionContext &ctx) {
  const ir::Container &a = ctx.requireInput("X");
  const ir::Container &b = ctx.requireInput("Y");
  const ir::Container &c = ctx.requireOutput("Z");
  std::string t(ir::dtypeName(a.dtype));
  std::string code;
  if (ir::isFloat(a.dtype))
    code = b.dtype == a.dtype ? "c = pow(a, b)" : "c = pow(a, " + t + "(b))";
  else if (ir::isInteger(a.dtype))
    code = "c = " + t + "(pow(f64(a), f64(b)))";
  else
    ctx.fail("needs a numeric base, got " + t);
  addMap(ctx, {{"a", &a}, {"b", &b}}, code, {{"c", &c}});
}

/// BitShift on unsigned integers as multiplication or division by a power
/// of two (the tasklet language has no shifts); shifting by the width or
/// more gives 0, as numpy does.
std::string bitShiftCode(ExpansionContext &ctx, ir::DType t) {
  if (!ir::isUnsignedInt(t))
    ctx.fail("needs an unsigned integer input");
  std::string dir = ctx.stringAttr("direction", "");
  std::string op;
  if (dir == "LEFT")
    op = " * ";
  else if (dir == "RIGHT")
    op = " / ";
  else
    ctx.fail("direction must be LEFT or RIGHT, got '" + dir + "'");
  std::string width = std::to_string(8 * ir::dtypeSize(t));
  return "c = select(b >= " + width + ", 0, a" + op +
         std::string(ir::dtypeName(t)) + "(pow(f64(2), f64(b))))";
}

/// PRelu: y = x < 0 ? slope * x : x. Before opset 7 a [C] slope was per
/// channel (axis 1), as PyTorch's early exporter wrote it; from opset 7 on
/// the slope broadcasts from the right, as numpy's do.
void expandPRelu(ExpansionContext &ctx) {
  const ir::Container &x = ctx.requireInput("X");
  const ir::Container &slope = ctx.requireInput("slope");
  const ir::Container &y = ctx.requireOutput("Y");
  const std::string code = "c = select(a < 0, b * a, a)";
  int opset = ctx.library().opsetVersion;
  if (opset != 0 && opset < 7 && x.shape.size() > 2 &&
      slope.shape.size() == 1 && slope.shape[0] == x.shape[1]) {
    auto params = ExpansionContext::params(y.shape.size());
    auto idx = ExpansionContext::indices(params);
    ctx.addMap("map", params, ExpansionContext::fullRanges(y.shape),
               {{"a", x.name, idx}, {"b", slope.name, {idx[1]}}}, code,
               {{"c", y.name, idx}});
    return;
  }
  addMap(ctx, {{"a", &x}, {"b", &slope}}, code, {{"c", &y}});
}

/// Clip with optional scalar bounds, constants or tensors alike.
void expandClip(ExpansionContext &ctx) {
  const ir::Container &x = ctx.requireInput("input");
  const ir::Container &y = ctx.requireOutput("output");
  std::vector<Port> ins{{"x", &x}};
  std::string expr = "x";
  if (const ir::Container *lo = ctx.input("min")) {
    ins.push_back({"lo", lo});
    expr = "max(" + expr + ", lo)";
  }
  if (const ir::Container *hi = ctx.input("max")) {
    ins.push_back({"hi", hi});
    expr = "min(" + expr + ", hi)";
  }
  for (const Port &p : ins)
    if (p.second != &x && !p.second->shape.empty())
      ctx.fail("min and max must be scalars");
  addMap(ctx, ins, "y = " + expr, {{"y", &y}});
}

const ExpansionRegistrar kAdd{
    {"Add", "pure", "c = a + b, broadcasting", fixed("c = a + b")}, true};
const ExpansionRegistrar kSub{
    {"Sub", "pure", "c = a - b, broadcasting", fixed("c = a - b")}, true};
const ExpansionRegistrar kMul{
    {"Mul", "pure", "c = a * b, broadcasting", fixed("c = a * b")}, true};
const ExpansionRegistrar kDiv{{"Div", "pure",
                               "c = a / b, broadcasting; integers truncate",
                               fixed("c = a / b")},
                              true};
const ExpansionRegistrar kMod{
    {"Mod", "pure", "c = a mod b, broadcasting (fmod or Python's sign)",
     binary(modCode)},
    true};
const ExpansionRegistrar kPow{
    {"Pow", "pure", "c = pow(a, b), broadcasting, mixed types", expandPow},
    true};
const ExpansionRegistrar kBitShift{{"BitShift", "pure",
                                    "c = a << b or a >> b on unsigned integers",
                                    binary(bitShiftCode)},
                                   true};
const ExpansionRegistrar kPRelu{
    {"PRelu", "pure",
     "c = a < 0 ? slope * a : a, slope broadcast (per channel before opset 7)",
     expandPRelu},
    true};
const ExpansionRegistrar kEqual{
    {"Equal", "pure", "c = a == b, broadcasting", fixed("c = a == b")}, true};
const ExpansionRegistrar kLess{
    {"Less", "pure", "c = a < b, broadcasting", fixed("c = a < b")}, true};
const ExpansionRegistrar kLessOrEqual{
    {"LessOrEqual", "pure", "c = a <= b, broadcasting", fixed("c = a <= b")},
    true};
const ExpansionRegistrar kGreater{
    {"Greater", "pure", "c = a > b, broadcasting", fixed("c = a > b")}, true};
const ExpansionRegistrar kGreaterOrEqual{
    {"GreaterOrEqual", "pure", "c = a >= b, broadcasting", fixed("c = a >= b")},
    true};
const ExpansionRegistrar kAnd{
    {"And", "pure", "c = a && b, broadcasting", fixed("c = a && b")}, true};
const ExpansionRegistrar kOr{
    {"Or", "pure", "c = a || b, broadcasting", fixed("c = a || b")}, true};
const ExpansionRegistrar kXor{
    {"Xor", "pure", "c = a != b, broadcasting", fixed("c = a != b")}, true};
const ExpansionRegistrar kClip{
    {"Clip", "pure", "y = min(max(x, lo), hi), optional bounds", expandClip},
    true};

} // namespace
} // namespace weir::operators::elementwise
