/// \file
/// Pure expansions of linear quantization: QuantizeLinear, DequantizeLinear
/// and DynamicQuantizeLinear. Each is an elementwise map; a per-axis scale
/// and zero point ([C] along `axis`) are read at the element's position on
/// that axis, a per-tensor one (a scalar or [1]) at its only element.
/// Quantizing rounds half to even and saturates to the integer type, as
/// ONNX defines it:
///   QuantizeLinear:   y = saturate(round(x / scale) + zero_point)
///   DequantizeLinear: y = (x - zero_point) * scale

#include "transforms/operators/expansion.h"

namespace weir::operators {
namespace {

using ir::Expr;

/// Where a scale or zero point of `param` is read for element `idx` of a
/// tensor of `shape`: per tensor or per `axis`.
std::vector<Expr> paramIndex(ExpansionContext &ctx, const ir::Container &param,
                             const std::vector<Expr> &shape,
                             const std::vector<Expr> &idx) {
  if (param.shape.empty())
    return {};
  if (param.shape.size() != 1)
    ctx.fail("'" + param.name + "' must be a scalar or a vector");
  std::int64_t n = ctx.constantDim(param.shape[0]);
  if (n == 1 && shape.empty())
    return {Expr(0)};
  if (shape.empty())
    ctx.fail("a per-axis '" + param.name + "' needs an input with axes");
  std::int64_t axis = ctx.normalizeAxis(ctx.intAttr("axis", 1), shape.size());
  std::int64_t extent = ctx.constantDim(shape[static_cast<std::size_t>(axis)]);
  if (n == 1 && extent != 1)
    return {Expr(0)};
  if (n != extent)
    ctx.fail("'" + param.name + "' has " + std::to_string(n) +
             " values for an axis of " + std::to_string(extent));
  return {idx[static_cast<std::size_t>(axis)]};
}

/// The saturating range of an 8-bit (or 32-bit) integer type, as f32
/// literals of the tasklet language.
std::pair<std::string, std::string> saturation(ExpansionContext &ctx,
                                               ir::DType t) {
  switch (t) {
  case ir::DType::U8:
    return {"0.0", "255.0"};
  case ir::DType::I8:
    return {"(-128.0)", "127.0"};
  default:
    ctx.fail("quantizing to " + std::string(ir::dtypeName(t)) +
             " is not supported (uint8 and int8 are)");
  }
}

void expandQuantizeLinear(ExpansionContext &ctx) {
  const ir::Container &x = ctx.requireInput("x");
  const ir::Container &scale = ctx.requireInput("y_scale");
  const ir::Container *zero = ctx.input("y_zero_point");
  const ir::Container &y = ctx.requireOutput("y");
  if (x.dtype != ir::DType::F32 || scale.dtype != ir::DType::F32)
    ctx.fail("x and y_scale must be float32");
  auto [lo, hi] = saturation(ctx, y.dtype);
  auto params = ExpansionContext::params(x.shape.size());
  auto idx = ExpansionContext::indices(params);
  std::vector<ir::MappedInput> inputs{
      {"x", x.name, idx},
      {"s", scale.name, paramIndex(ctx, scale, x.shape, idx)}};
  std::string shifted = "round(x / s)";
  if (zero) {
    if (zero->dtype != y.dtype)
      ctx.fail("y_zero_point and y differ in type");
    inputs.push_back({"z", zero->name, paramIndex(ctx, *zero, x.shape, idx)});
    shifted += " + f32(z)";
  }
  ctx.addMap("quantize", params, ExpansionContext::fullRanges(x.shape), inputs,
             "q = " + shifted + "\ny = " + std::string(ir::dtypeName(y.dtype)) +
                 "(min(max(q, " + lo + "), " + hi + "))",
             {{"y", y.name, idx}});
}

void expandDequantizeLinear(ExpansionContext &ctx) {
  const ir::Container &x = ctx.requireInput("x");
  const ir::Container &scale = ctx.requireInput("x_scale");
  const ir::Container *zero = ctx.input("x_zero_point");
  const ir::Container &y = ctx.requireOutput("y");
  if (scale.dtype != ir::DType::F32 || y.dtype != ir::DType::F32)
    ctx.fail("x_scale and y must be float32");
  if (x.dtype != ir::DType::U8 && x.dtype != ir::DType::I8 &&
      x.dtype != ir::DType::I32)
    ctx.fail("x must be uint8, int8 or int32, not " +
             std::string(ir::dtypeName(x.dtype)));
  auto params = ExpansionContext::params(x.shape.size());
  auto idx = ExpansionContext::indices(params);
  std::vector<ir::MappedInput> inputs{
      {"x", x.name, idx},
      {"s", scale.name, paramIndex(ctx, scale, x.shape, idx)}};
  std::string code = "y = f32(x) * s";
  if (zero) {
    if (zero->dtype != x.dtype)
      ctx.fail("x_zero_point and x differ in type");
    inputs.push_back({"z", zero->name, paramIndex(ctx, *zero, x.shape, idx)});
    code = "y = (f32(x) - f32(z)) * s";
  }
  ctx.addMap("dequantize", params, ExpansionContext::fullRanges(x.shape),
             inputs, code, {{"y", y.name, idx}});
}

/// DynamicQuantizeLinear: the uint8 scale and zero point that map the
/// range of x (widened to include 0) onto [0, 255], and x quantized with
/// them.
void expandDynamicQuantizeLinear(ExpansionContext &ctx) {
  const ir::Container &x = ctx.requireInput("x");
  const ir::Container &y = ctx.requireOutput("y");
  const ir::Container &scale = ctx.requireOutput("y_scale");
  const ir::Container &zero = ctx.requireOutput("y_zero_point");
  if (x.dtype != ir::DType::F32 || y.dtype != ir::DType::U8)
    ctx.fail("x must be float32 and y uint8");
  auto params = ExpansionContext::params(x.shape.size());
  auto idx = ExpansionContext::indices(params);
  auto full = ExpansionContext::fullRanges(x.shape);
  std::string lo = ctx.addTransient("min", ir::DType::F32, {});
  std::string hi = ctx.addTransient("max", ir::DType::F32, {});
  // The range starts at [0, 0]: it always includes zero.
  ctx.addMap("init", {}, {}, {}, "a = f32(0)\nb = f32(0)",
             {{"a", lo, {}}, {"b", hi, {}}});
  ctx.addMap("range", params, full, {{"x", x.name, idx}}, "a = x\nb = x",
             {{"a", lo, {}, ir::Wcr::Min}, {"b", hi, {}, ir::Wcr::Max}});
  ctx.addMap("parameters", {}, {}, {{"a", lo, {}}, {"b", hi, {}}},
             "t = (b - a) / 255.0\ns = t\nz = u8(min(max(round(0.0 - a / t), "
             "0.0), 255.0))",
             {{"s", scale.name, {}}, {"z", zero.name, {}}});
  ctx.addMap("quantize", params, full,
             {{"x", x.name, idx}, {"s", scale.name, {}}, {"z", zero.name, {}}},
             "y = u8(min(max(round(x / s) + f32(z), 0.0), 255.0))",
             {{"y", y.name, idx}});
}

const ExpansionRegistrar kQuantizeLinear{
    {"QuantizeLinear", "pure",
     "y = saturate(round(x / scale) + zero_point), per tensor or axis",
     expandQuantizeLinear},
    true};
const ExpansionRegistrar kDequantizeLinear{
    {"DequantizeLinear", "pure",
     "y = (x - zero_point) * scale, per tensor or axis",
     expandDequantizeLinear},
    true};
const ExpansionRegistrar kDynamicQuantizeLinear{
    {"DynamicQuantizeLinear", "pure",
     "min/max of x with 0, uint8 scale and zero point, then quantize",
     expandDynamicQuantizeLinear},
    true};

} // namespace
} // namespace weir::operators
