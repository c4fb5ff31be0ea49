/// \file
/// Pure expansions of linear algebra: MatMul, Gemm, direct convolution and
/// transposed convolution.
/// Each is an initializing map followed by one map over the whole iteration
/// space whose tasklet's product is summed into the output by
/// write-conflict resolution, so the reduction stays visible to later tiers
/// (which may tile it, or swap in a BLAS call).

#include "transforms/operators/linalg.h"

#include "transforms/operators/broadcast.h"
#include "transforms/operators/conv_common.h"

#include <algorithm>
#include <charconv>

namespace weir::operators {
namespace {

using ir::Expr;

std::string zeroOf(ir::DType dtype) {
  return std::string(ir::dtypeName(dtype)) + "(0)";
}

/// MatMul with numpy semantics: 1-D operands gain and then lose a unit
/// dimension, batch dimensions broadcast.
void expandMatMul(ExpansionContext &ctx) {
  const ir::Container &a = ctx.requireInput("A");
  const ir::Container &b = ctx.requireInput("B");
  const ir::Container &y = ctx.requireOutput("Y");
  MatMulSpace space = matMulSpace(ctx, a, b, y);
  auto outParams = ExpansionContext::params(y.shape.size());
  auto outIdx = ExpansionContext::indices(outParams);
  ctx.addMap("init", outParams, ExpansionContext::fullRanges(y.shape), {},
             "y = " + zeroOf(y.dtype), {{"y", y.name, outIdx}});
  ctx.addMap("accumulate", space.params, space.ranges,
             {{"a", a.name, space.aIndex}, {"b", b.name, space.bIndex}},
             "y = a * b", {{"y", y.name, space.yIndex, ir::Wcr::Sum}});
}

/// Y = alpha * A' * B' + beta * C: Y starts as beta * C (or 0), then the
/// products are summed into it.
void expandGemm(ExpansionContext &ctx) {
  const ir::Container &a = ctx.requireInput("A");
  const ir::Container &b = ctx.requireInput("B");
  const ir::Container *c = ctx.input("C");
  const ir::Container &y = ctx.requireOutput("Y");
  if (a.shape.size() != 2 || b.shape.size() != 2 || y.shape.size() != 2)
    ctx.fail("A, B and Y must be 2-D");
  bool transA = ctx.intAttr("transA", 0) != 0;
  bool transB = ctx.intAttr("transB", 0) != 0;
  double alpha = ctx.floatAttr("alpha", 1.0);
  double beta = ctx.floatAttr("beta", 1.0);
  if (!ir::isFloat(y.dtype) && (alpha != 1.0 || beta != 1.0))
    ctx.fail("alpha and beta other than 1 need a float dtype");
  Expr k = a.shape[transA ? 0 : 1];
  if (k != b.shape[transB ? 1 : 0])
    ctx.fail("inner dimensions differ");

  Expr i = Expr::symbol("i"), j = Expr::symbol("j"), kk = Expr::symbol("k");
  auto yRanges = ExpansionContext::fullRanges(y.shape);
  if (c && beta != 0.0) {
    if (c->shape.size() > 2)
      ctx.fail("C has rank above 2");
    std::string code =
        beta == 1.0 ? "y = c"
                    : "y = " + ExpansionContext::floatLiteral(beta) + " * c";
    ctx.addMap("init", {"i", "j"}, yRanges,
               {{"c", c->name, broadcastIndex(c->shape, y.shape, {i, j})}},
               code, {{"y", y.name, {i, j}}});
  } else {
    ctx.addMap("init", {"i", "j"}, yRanges, {}, "y = " + zeroOf(y.dtype),
               {{"y", y.name, {i, j}}});
  }
  auto ranges = yRanges;
  ranges.emplace_back(Expr(0), k);
  std::string code =
      alpha == 1.0
          ? "y = a * b"
          : "y = " + ExpansionContext::floatLiteral(alpha) + " * a * b";
  ctx.addMap("accumulate", {"i", "j", "k"}, ranges,
             {{"a", a.name,
               transA ? std::vector<Expr>{kk, i} : std::vector<Expr>{i, kk}},
              {"b", b.name,
               transB ? std::vector<Expr>{j, kk} : std::vector<Expr>{kk, j}}},
             code, {{"y", y.name, {i, j}, ir::Wcr::Sum}});
}

/// Direct convolution. Padding goes into a zero-filled transient copy of
/// the input, so the accumulation map reads every window in bounds with
/// plain affine indices: [n, m, o..., c, k...] summing
/// Xp[n, group(m) * C/g + c, o * stride + k * dilation] * W[m, c, k...].
void expandConv(ExpansionContext &ctx) {
  const ir::Container &x = ctx.requireInput("X");
  const ir::Container &w = ctx.requireInput("W");
  const ir::Container *bias = ctx.input("B");
  const ir::Container &y = ctx.requireOutput("Y");
  ConvGeometry g = readConvGeometry(ctx);
  std::size_t rank = x.shape.size(), d = g.kernel.size();
  std::int64_t m = g.outChannels, group = g.group;
  const std::vector<std::int64_t> &kernel = g.kernel, &strides = g.strides,
                                  &dilations = g.dilations;
  std::string source = paddedInput(ctx, g);

  auto outParams = ExpansionContext::params(rank, "o");
  auto outIdx = ExpansionContext::indices(outParams);
  if (bias)
    ctx.addMap("init", outParams, ExpansionContext::fullRanges(y.shape),
               {{"b", bias->name, {outIdx[1]}}}, "y = b",
               {{"y", y.name, outIdx}});
  else
    ctx.addMap("init", outParams, ExpansionContext::fullRanges(y.shape), {},
               "y = " + zeroOf(y.dtype), {{"y", y.name, outIdx}});

  auto params = outParams;
  auto ranges = ExpansionContext::fullRanges(y.shape);
  params.push_back("c");
  ranges.emplace_back(Expr(0), w.shape[1]);
  Expr c = Expr::symbol("c");
  Expr channel = floorDiv(outIdx[1], Expr(m / group)) * w.shape[1] + c;
  std::vector<Expr> xIdx{outIdx[0], channel}, wIdx{outIdx[1], c};
  for (std::size_t t = 0; t < d; ++t) {
    std::string kp = "k" + std::to_string(t);
    params.push_back(kp);
    ranges.emplace_back(Expr(0), Expr(kernel[t]));
    Expr kv = Expr::symbol(kp);
    xIdx.push_back(outIdx[2 + t] * Expr(strides[t]) + kv * Expr(dilations[t]));
    wIdx.push_back(kv);
  }
  ctx.addMap("accumulate", params, ranges,
             {{"x", source, xIdx}, {"w", w.name, wIdx}}, "y = x * w",
             {{"y", y.name, outIdx, ir::Wcr::Sum}});
}

/// Transposed convolution as a scatter: every input element adds
/// x * w into a zero-filled transient holding the full, uncropped output
/// (so no write falls out of bounds), and a final map crops the begin
/// padding off and adds the bias.
void expandConvTranspose(ExpansionContext &ctx) {
  const ir::Container &x = ctx.requireInput("X");
  const ir::Container &w = ctx.requireInput("W");
  const ir::Container *bias = ctx.input("B");
  const ir::Container &y = ctx.requireOutput("Y");
  std::size_t rank = x.shape.size();
  if (rank < 3 || w.shape.size() != rank || y.shape.size() != rank)
    ctx.fail("X, W and Y must have the same rank, at least 3");
  std::size_t d = rank - 2;
  std::int64_t group = ctx.intAttr("group", 1);
  std::int64_t c = ctx.constantDim(x.shape[1]);
  if (group < 1 || c % group != 0 || ctx.constantDim(w.shape[0]) != c)
    ctx.fail("group does not divide the input channels");
  std::int64_t mg = ctx.constantDim(w.shape[1]);
  auto strides = ctx.intsAttr("strides", std::vector<std::int64_t>(d, 1));
  auto dilations = ctx.intsAttr("dilations", std::vector<std::int64_t>(d, 1));
  auto outPad = ctx.intsAttr("output_padding", std::vector<std::int64_t>(d, 0));
  auto pads = ctx.intsAttr("pads", std::vector<std::int64_t>(2 * d, 0));
  if (strides.size() != d || dilations.size() != d || outPad.size() != d ||
      pads.size() != 2 * d)
    ctx.fail("strides, dilations, output_padding or pads have the wrong "
             "length");
  std::string autoPad = ctx.stringAttr("auto_pad", "NOTSET");
  if (autoPad != "NOTSET" && autoPad != "VALID" && autoPad != "SAME_UPPER" &&
      autoPad != "SAME_LOWER")
    ctx.fail("auto_pad '" + autoPad + "' is not handled");
  bool derived = autoPad != "NOTSET" || ctx.hasAttr("output_shape");

  std::vector<Expr> full{x.shape[0], y.shape[1]};
  std::vector<std::int64_t> begin(d);
  for (std::size_t t = 0; t < d; ++t) {
    std::int64_t in = ctx.constantDim(x.shape[2 + t]);
    std::int64_t k = ctx.constantDim(w.shape[2 + t]);
    std::int64_t out = ctx.constantDim(y.shape[2 + t]);
    if (strides[t] < 1 || dilations[t] < 1)
      ctx.fail("strides and dilations must be positive");
    std::int64_t f =
        (in - 1) * strides[t] + (k - 1) * dilations[t] + 1 + outPad[t];
    // Padding the spec derives from the output shape (with Python's floor
    // division: an output_shape past the extent pads zeros at the end), or
    // the attribute.
    std::int64_t total = f - out;
    std::int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);
    begin[t] = !derived                  ? pads[t]
               : autoPad == "VALID"      ? 0
               : autoPad == "SAME_UPPER" ? half
                                         : total - half;
    if (begin[t] < 0)
      ctx.fail("negative padding is not handled");
    full.push_back(Expr(std::max(f, begin[t] + out)));
  }
  if (ctx.constantDim(y.shape[1]) != mg * group)
    ctx.fail("output channels disagree with W and group");

  std::string buffer = ctx.addTransient("full", y.dtype, full);
  auto fullParams = ExpansionContext::params(rank);
  auto fullIdx = ExpansionContext::indices(fullParams);
  ctx.addMap("fill", fullParams, ExpansionContext::fullRanges(full), {},
             "y = " + zeroOf(y.dtype), {{"y", buffer, fullIdx}});

  // [n, c, i..., m, k...]: X[n, c, i] * W[c, m, k] lands at
  // full[n, group(c) * M/g + m, i * stride + k * dilation].
  auto params = ExpansionContext::params(rank, "i");
  auto idx = ExpansionContext::indices(params);
  auto ranges = ExpansionContext::fullRanges(x.shape);
  params.push_back("m");
  ranges.emplace_back(Expr(0), Expr(mg));
  Expr m = Expr::symbol("m");
  std::vector<Expr> tIdx{idx[0],
                         floorDiv(idx[1], Expr(c / group)) * Expr(mg) + m};
  std::vector<Expr> wIdx{idx[1], m};
  for (std::size_t t = 0; t < d; ++t) {
    std::string kp = "k" + std::to_string(t);
    params.push_back(kp);
    ranges.emplace_back(Expr(0), w.shape[2 + t]);
    Expr kv = Expr::symbol(kp);
    tIdx.push_back(idx[2 + t] * Expr(strides[t]) + kv * Expr(dilations[t]));
    wIdx.push_back(kv);
  }
  ctx.addMap("scatter", params, ranges,
             {{"x", x.name, idx}, {"w", w.name, wIdx}}, "y = x * w",
             {{"y", buffer, tIdx, ir::Wcr::Sum}});

  auto outParams = ExpansionContext::params(rank, "o");
  auto outIdx = ExpansionContext::indices(outParams);
  auto cropIdx = outIdx;
  for (std::size_t t = 0; t < d; ++t)
    cropIdx[2 + t] = cropIdx[2 + t] + Expr(begin[t]);
  std::vector<ir::MappedInput> inputs{{"t", buffer, cropIdx}};
  if (bias)
    inputs.push_back({"b", bias->name, {outIdx[1]}});
  ctx.addMap("crop", outParams, ExpansionContext::fullRanges(y.shape), inputs,
             bias ? "y = t + b" : "y = t", {{"y", y.name, outIdx}});
}

const ExpansionRegistrar kMatMul{
    {"MatMul", "pure", "zero init, then sum a * b over [batch..., i, j, k]",
     expandMatMul},
    false}; // the default is "blas" (blas.cpp), which falls back to this

const ExpansionRegistrar kGemm{
    {"Gemm", "pure", "init with beta * C, then sum alpha * a * b", expandGemm},
    false}; // the default is "blas" (blas.cpp)

const ExpansionRegistrar kConv{
    {"Conv", "pure",
     "zero-padded copy of X, bias init, then sum x * w over "
     "[n, m, o..., c, k...]",
     expandConv},
    false}; // the default is "im2col" (blas.cpp)

const ExpansionRegistrar kConvTranspose{
    {"ConvTranspose", "pure",
     "scatter x * w into a zero-filled full-extent buffer, then crop and add "
     "the bias",
     expandConvTranspose},
    true};

} // namespace

MatMulSpace matMulSpace(ExpansionContext &ctx, const ir::Container &a,
                        const ir::Container &b, const ir::Container &y) {
  std::size_t ra = a.shape.size(), rb = b.shape.size();
  if (ra == 0 || rb == 0)
    ctx.fail("an operand is a scalar");
  MatMulSpace s;
  s.aVector = ra == 1;
  s.bVector = rb == 1;
  if (y.shape.size() < std::size_t(!s.aVector + !s.bVector))
    ctx.fail("the output's rank does not fit the operands'");
  std::size_t batchRank = y.shape.size() - !s.aVector - !s.bVector;
  std::vector<Expr> yBatch(y.shape.begin(), y.shape.begin() + batchRank);
  std::vector<Expr> aBatch(a.shape.begin(),
                           a.shape.end() - (s.aVector ? 1 : 2));
  std::vector<Expr> bBatch(b.shape.begin(),
                           b.shape.end() - (s.bVector ? 1 : 2));
  if (aBatch.size() > batchRank || bBatch.size() > batchRank)
    ctx.fail("the output's rank does not fit the operands'");
  Expr k = a.shape[ra - 1];
  if (k != b.shape[s.bVector ? 0 : rb - 2])
    ctx.fail("inner dimensions differ");

  s.params = ExpansionContext::params(batchRank, "b");
  auto batchIdx = ExpansionContext::indices(s.params);
  s.ranges = ExpansionContext::fullRanges(yBatch);
  s.aIndex = broadcastIndex(aBatch, yBatch, batchIdx);
  s.bIndex = broadcastIndex(bBatch, yBatch, batchIdx);
  s.yIndex = batchIdx;
  Expr i = Expr::symbol("i"), j = Expr::symbol("j"), kk = Expr::symbol("k");
  if (!s.aVector) {
    s.params.push_back("i");
    s.ranges.emplace_back(Expr(0), a.shape[ra - 2]);
    s.aIndex.push_back(i);
    s.yIndex.push_back(i);
  }
  s.aIndex.push_back(kk);
  s.bIndex.push_back(kk);
  if (!s.bVector) {
    s.params.push_back("j");
    s.ranges.emplace_back(Expr(0), b.shape[rb - 1]);
    s.bIndex.push_back(j);
    s.yIndex.push_back(j);
  }
  s.params.push_back("k");
  s.ranges.emplace_back(Expr(0), k);
  return s;
}

} // namespace weir::operators
