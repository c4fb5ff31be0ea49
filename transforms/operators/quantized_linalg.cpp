/// \file
/// Pure expansions of the integer and quantized products: MatMulInteger,
/// QLinearMatMul, ConvInteger and QLinearConv. Each sums
/// (a - a_zero_point)·(b - b_zero_point) in int32 over the iteration space
/// its float sibling has (linalg.h's MatMulSpace; conv_common.h's
/// geometry), Sum-resolved. The Integer ops return that sum; the QLinear
/// ops (plus QLinearConv's int32 bias) scale it by a_scale·b_scale /
/// y_scale, round half to even, add y_zero_point and saturate, as
/// QuantizeLinear does. A convolution's padding holds zero after the shift
/// (x_zero_point before it), so padded windows add nothing.

#include "transforms/operators/conv_common.h"
#include "transforms/operators/linalg.h"

namespace weir::operators {
namespace {

using ir::Expr;

bool quantizedType(ir::DType t) {
  return t == ir::DType::U8 || t == ir::DType::I8;
}

/// Where a zero point or scale is read: one value (a scalar or [1]), or
/// per position `at` of a [n] vector.
std::vector<Expr> perIndex(ExpansionContext &ctx, const ir::Container &c,
                           const Expr &at, std::int64_t n) {
  if (c.shape.empty())
    return {};
  if (c.shape.size() == 1) {
    std::int64_t size = ctx.constantDim(c.shape[0]);
    if (size == 1)
      return {Expr(0)};
    if (size == n)
      return {at};
  }
  ctx.fail("'" + c.name + "' must be one value or one per " +
           std::to_string(n) + " rows or channels");
}

/// "(i32(v) - i32(z))" with the zero point's input added to `inputs`, or
/// "i32(v)" when there is none.
std::string shifted(const std::string &v, const ir::Container *zero,
                    const std::string &zname, std::vector<Expr> zindex,
                    std::vector<ir::MappedInput> &inputs) {
  if (!zero)
    return "i32(" + v + ")";
  inputs.push_back({zname, zero->name, std::move(zindex)});
  return "(i32(" + v + ") - i32(" + zname + "))";
}

/// The QLinear ops' requantization of int32 `acc` into y's type: inputs
/// `sa`, `sb`, `sy` (scales) and, when y has one, `zy` (its zero point)
/// must be connected.
std::string requantize(ExpansionContext &ctx, ir::DType y) {
  std::string lo = y == ir::DType::U8 ? "0.0" : "(-128.0)";
  std::string hi = y == ir::DType::U8 ? "255.0" : "127.0";
  if (!quantizedType(y))
    ctx.fail("the output must be uint8 or int8");
  std::string zero = ctx.input("y_zero_point") ? "f32(zy)" : "0.0";
  return "q = round(f32(acc) * (sa * sb / sy)) + " + zero +
         "\ny = " + std::string(ir::dtypeName(y)) + "(min(max(q, " + lo +
         "), " + hi + "))";
}

/// acc (int32, y's shape) = sum of the shifted products over the MatMul
/// space; a zero point of A may be per row, one of B per column.
void integerProduct(ExpansionContext &ctx, const ir::Container &a,
                    const ir::Container *za, const ir::Container &b,
                    const ir::Container *zb, const ir::Container &y,
                    const std::string &acc) {
  if (!quantizedType(a.dtype) || !quantizedType(b.dtype))
    ctx.fail("the operands must be uint8 or int8");
  MatMulSpace space = matMulSpace(ctx, a, b, y);
  const ir::Container &out = ctx.program().container(acc);
  auto op = ExpansionContext::params(out.shape.size(), "o");
  ctx.addMap("init", op, ExpansionContext::fullRanges(out.shape), {},
             "v = i32(0)", {{"v", acc, ExpansionContext::indices(op)}});
  std::vector<ir::MappedInput> inputs{{"a", a.name, space.aIndex},
                                      {"b", b.name, space.bIndex}};
  Expr row = space.aVector ? Expr(0) : Expr::symbol("i");
  Expr col = space.bVector ? Expr(0) : Expr::symbol("j");
  std::int64_t rows =
      space.aVector ? 1 : ctx.constantDim(a.shape[a.shape.size() - 2]);
  std::int64_t cols = space.bVector ? 1 : ctx.constantDim(b.shape.back());
  std::string code =
      "v = " +
      shifted("a", za, "za",
              za ? perIndex(ctx, *za, row, rows) : std::vector<Expr>{},
              inputs) +
      " * " +
      shifted("b", zb, "zb",
              zb ? perIndex(ctx, *zb, col, cols) : std::vector<Expr>{}, inputs);
  ctx.addMap("accumulate", space.params, space.ranges, inputs, code,
             {{"v", acc, space.yIndex, ir::Wcr::Sum}});
}

void expandMatMulInteger(ExpansionContext &ctx) {
  const ir::Container &y = ctx.requireOutput("Y");
  if (y.dtype != ir::DType::I32)
    ctx.fail("the output must be int32");
  integerProduct(ctx, ctx.requireInput("A"), ctx.input("a_zero_point"),
                 ctx.requireInput("B"), ctx.input("b_zero_point"), y, y.name);
}

/// Scalar scales and y's zero point as tasklet inputs at `at` (per output
/// channel where a scale of B or W has one value per channel).
std::vector<ir::MappedInput>
requantizeInputs(ExpansionContext &ctx, const char *aScale, const char *bScale,
                 const Expr &channel, std::int64_t channels) {
  const ir::Container &sa = ctx.requireInput(aScale);
  const ir::Container &sb = ctx.requireInput(bScale);
  const ir::Container &sy = ctx.requireInput("y_scale");
  for (const ir::Container *s : {&sa, &sb, &sy})
    if (s->dtype != ir::DType::F32)
      ctx.fail("scales must be float32");
  std::vector<ir::MappedInput> in{
      {"sa", sa.name, perIndex(ctx, sa, Expr(0), 1)},
      {"sb", sb.name, perIndex(ctx, sb, channel, channels)},
      {"sy", sy.name, perIndex(ctx, sy, Expr(0), 1)}};
  if (const ir::Container *zy = ctx.input("y_zero_point"))
    in.push_back({"zy", zy->name, perIndex(ctx, *zy, Expr(0), 1)});
  return in;
}

void expandQLinearMatMul(ExpansionContext &ctx) {
  const ir::Container &a = ctx.requireInput("a");
  const ir::Container &b = ctx.requireInput("b");
  const ir::Container &y = ctx.requireOutput("y");
  std::string acc = ctx.addTransient("acc", ir::DType::I32, y.shape);
  integerProduct(ctx, a, ctx.input("a_zero_point"), b,
                 ctx.input("b_zero_point"), y, acc);
  auto op = ExpansionContext::params(y.shape.size(), "o");
  auto idx = ExpansionContext::indices(op);
  std::int64_t cols = b.shape.size() == 1 ? 1 : ctx.constantDim(b.shape.back());
  std::vector<ir::MappedInput> in =
      requantizeInputs(ctx, "a_scale", "b_scale",
                       b.shape.size() == 1 ? Expr(0) : idx.back(), cols);
  in.push_back({"acc", acc, idx});
  ctx.addMap("requantize", op, ExpansionContext::fullRanges(y.shape), in,
             requantize(ctx, y.dtype), {{"y", y.name, idx}});
}

/// acc (int32, y's shape) = the convolution of the shifted x and w, plus
/// an int32 bias per output channel when given.
void integerConvolution(ExpansionContext &ctx, const ir::Container &x,
                        const ir::Container *zx, const ir::Container &w,
                        const ir::Container *zw, const ir::Container *bias,
                        const ir::Container &y, const std::string &acc) {
  if (!quantizedType(x.dtype) || !quantizedType(w.dtype))
    ctx.fail("x and w must be uint8 or int8");
  ConvGeometry g = readConvGeometry(ctx, x, w, y);
  std::size_t rank = x.shape.size(), d = g.kernel.size();
  std::int64_t m = g.outChannels;
  // The shifted input, zero-padded.
  std::vector<Expr> padded{x.shape[0], x.shape[1]};
  for (std::size_t t = 0; t < d; ++t)
    padded.push_back(x.shape[2 + t] + Expr(g.pads[t] + g.pads[t + d]));
  std::string source = ctx.addTransient("shifted", ir::DType::I32, padded);
  auto params = ExpansionContext::params(rank);
  auto idx = ExpansionContext::indices(params);
  ctx.addMap("pad_fill", params, ExpansionContext::fullRanges(padded), {},
             "v = i32(0)", {{"v", source, idx}});
  auto inner = idx;
  for (std::size_t t = 0; t < d; ++t)
    inner[2 + t] = inner[2 + t] + Expr(g.pads[t]);
  std::vector<ir::MappedInput> shiftIn{{"x", x.name, idx}};
  std::string value = shifted(
      "x", zx, "zx", zx ? perIndex(ctx, *zx, Expr(0), 1) : std::vector<Expr>{},
      shiftIn);
  ctx.addMap("shift", params, ExpansionContext::fullRanges(x.shape), shiftIn,
             "v = " + value, {{"v", source, inner}});

  auto outParams = ExpansionContext::params(rank, "o");
  auto outIdx = ExpansionContext::indices(outParams);
  if (bias) {
    if (bias->dtype != ir::DType::I32 || bias->shape.size() != 1 ||
        ctx.constantDim(bias->shape[0]) != m)
      ctx.fail("the bias must be int32, one value per output channel");
    ctx.addMap("init", outParams, ExpansionContext::fullRanges(y.shape),
               {{"b", bias->name, {outIdx[1]}}}, "v = b", {{"v", acc, outIdx}});
  } else {
    ctx.addMap("init", outParams, ExpansionContext::fullRanges(y.shape), {},
               "v = i32(0)", {{"v", acc, outIdx}});
  }
  auto all = outParams;
  auto ranges = ExpansionContext::fullRanges(y.shape);
  all.push_back("c");
  ranges.emplace_back(Expr(0), w.shape[1]);
  Expr c = Expr::symbol("c");
  Expr channel = floorDiv(outIdx[1], Expr(m / g.group)) * w.shape[1] + c;
  std::vector<Expr> xIdx{outIdx[0], channel}, wIdx{outIdx[1], c};
  for (std::size_t t = 0; t < d; ++t) {
    std::string kp = "k" + std::to_string(t);
    all.push_back(kp);
    ranges.emplace_back(Expr(0), Expr(g.kernel[t]));
    Expr kv = Expr::symbol(kp);
    xIdx.push_back(outIdx[2 + t] * Expr(g.strides[t]) +
                   kv * Expr(g.dilations[t]));
    wIdx.push_back(kv);
  }
  std::vector<ir::MappedInput> in{{"x", source, xIdx}, {"w", w.name, wIdx}};
  std::string weight =
      shifted("w", zw, "zw",
              zw ? perIndex(ctx, *zw, outIdx[1], m) : std::vector<Expr>{}, in);
  ctx.addMap("accumulate", all, ranges, in, "v = x * " + weight,
             {{"v", acc, outIdx, ir::Wcr::Sum}});
}

void expandConvInteger(ExpansionContext &ctx) {
  const ir::Container &y = ctx.requireOutput("y");
  if (y.dtype != ir::DType::I32)
    ctx.fail("the output must be int32");
  integerConvolution(ctx, ctx.requireInput("x"), ctx.input("x_zero_point"),
                     ctx.requireInput("w"), ctx.input("w_zero_point"), nullptr,
                     y, y.name);
}

void expandQLinearConv(ExpansionContext &ctx) {
  const ir::Container &x = ctx.requireInput("x");
  const ir::Container &w = ctx.requireInput("w");
  const ir::Container &y = ctx.requireOutput("y");
  std::string acc = ctx.addTransient("acc", ir::DType::I32, y.shape);
  integerConvolution(ctx, x, ctx.input("x_zero_point"), w,
                     ctx.input("w_zero_point"), ctx.input("B"), y, acc);
  auto op = ExpansionContext::params(y.shape.size(), "o");
  auto idx = ExpansionContext::indices(op);
  std::vector<ir::MappedInput> in = requantizeInputs(
      ctx, "x_scale", "w_scale", idx[1], ctx.constantDim(w.shape[0]));
  in.push_back({"acc", acc, idx});
  ctx.addMap("requantize", op, ExpansionContext::fullRanges(y.shape), in,
             requantize(ctx, y.dtype), {{"y", y.name, idx}});
}

const ExpansionRegistrar kMatMulInteger{
    {"MatMulInteger", "pure",
     "int32 sum of zero-point-shifted products, Sum-resolved",
     expandMatMulInteger},
    true};
const ExpansionRegistrar kQLinearMatMul{
    {"QLinearMatMul", "pure",
     "int32 shifted product, then scale, round, zero point, saturate",
     expandQLinearMatMul},
    true};
const ExpansionRegistrar kConvInteger{
    {"ConvInteger", "pure",
     "zero-point-shifted input in a zero-padded int32 copy, int32 sum",
     expandConvInteger},
    true};
const ExpansionRegistrar kQLinearConv{
    {"QLinearConv", "pure",
     "int32 shifted convolution plus bias, then requantized",
     expandQLinearConv},
    true};

} // namespace
} // namespace weir::operators
