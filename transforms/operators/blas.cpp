/// \file
/// Library-call expansions: MatMul and Gemm as a "gemm" primitive (OpenBLAS
/// sgemm on the CPU), Conv as im2col + gemm. They are the defaults for these
/// ops on f32; where one does not apply (another dtype, a grouped
/// convolution) expandAll falls back to the pure expansion.

#include "ir/primitives.h"
#include "transforms/operators/broadcast.h"
#include "transforms/operators/conv_common.h"
#include "transforms/operators/expansion.h"

namespace weir::operators {
namespace {

using ir::Expr;

Expr product(const std::vector<Expr> &dims) {
  Expr p(1);
  for (const Expr &d : dims)
    p = p * d;
  return p;
}

void requireF32RowMajor(ExpansionContext &ctx,
                        std::initializer_list<const ir::Container *> cs) {
  for (const ir::Container *c : cs) {
    if (!c)
      continue;
    if (c->dtype != ir::DType::F32)
      ctx.fail("'" + c->name + "' is " + std::string(ir::dtypeName(c->dtype)) +
               "; the BLAS implementation takes f32");
    if (!c->strides.empty() && c->strides != ir::rowMajorStrides(c->shape))
      ctx.fail("'" + c->name + "' is not row-major");
  }
}

/// Points at `index` in the leading dimensions, whole ranges over the
/// trailing `shape` dimensions: the region one gemm operand covers.
ir::Subset region(const std::vector<Expr> &index,
                  const std::vector<Expr> &trailing) {
  ir::Subset s;
  for (const Expr &i : index)
    s.dims.push_back(ir::Range::point(i));
  for (const Expr &d : trailing)
    s.dims.emplace_back(Expr(0), d);
  return s;
}

std::vector<Expr> tail(const std::vector<Expr> &shape, std::size_t n) {
  return {shape.end() - static_cast<std::ptrdiff_t>(n), shape.end()};
}

/// Y = A @ B (numpy semantics) as gemm calls: one call when B is a single
/// matrix and A's batch dimensions fold into its rows, otherwise one per
/// batch index in a map.
void expandMatMulBlas(ExpansionContext &ctx) {
  const ir::Container &a = ctx.requireInput("A");
  const ir::Container &b = ctx.requireInput("B");
  const ir::Container &y = ctx.requireOutput("Y");
  requireF32RowMajor(ctx, {&a, &b, &y});
  std::size_t ra = a.shape.size(), rb = b.shape.size();
  if (ra == 0 || rb == 0)
    ctx.fail("an operand is a scalar");
  bool aVec = ra == 1, bVec = rb == 1;
  std::size_t aMat = aVec ? 1 : 2, bMat = bVec ? 1 : 2;
  std::size_t yMat = (aVec ? 0 : 1) + (bVec ? 0 : 1);
  if (y.shape.size() < yMat)
    ctx.fail("the output's rank does not fit the operands'");
  std::size_t batchRank = y.shape.size() - yMat;
  std::vector<Expr> yBatch(y.shape.begin(), y.shape.begin() + batchRank);
  std::vector<Expr> aBatch(a.shape.begin(), a.shape.end() - aMat);
  std::vector<Expr> bBatch(b.shape.begin(), b.shape.end() - bMat);
  if (aBatch.size() > batchRank || bBatch.size() > batchRank)
    ctx.fail("the output's rank does not fit the operands'");
  Expr m = aVec ? Expr(1) : a.shape[ra - 2];
  Expr k = a.shape[ra - 1];
  Expr n = bVec ? Expr(1) : b.shape[rb - 1];
  if (k != b.shape[bVec ? 0 : rb - 2])
    ctx.fail("inner dimensions differ");

  ir::GemmCall call;
  call.k = k;
  call.lda = k;
  call.ldb = bVec ? Expr(1) : n;
  call.ldc = bVec ? Expr(1) : n;
  call.n = n;
  call.m = m;
  // A single B and an unbroadcast, contiguous A: the batch folds into M.
  if (bBatch.empty() && !aVec && aBatch == yBatch) {
    call.m = product(aBatch) * m;
    ctx.addPrimitive("gemm", {}, {}, "gemm", ir::gemmAttributes(call),
                     {{"A", a.name, ir::Subset::full(a.shape)},
                      {"B", b.name, ir::Subset::full(b.shape)}},
                     {{"C", y.name, ir::Subset::full(y.shape)}});
    return;
  }
  auto params = ExpansionContext::params(batchRank, "b");
  auto batchIdx = ExpansionContext::indices(params);
  ctx.addPrimitive(
      "gemm", params, ExpansionContext::fullRanges(yBatch), "gemm",
      ir::gemmAttributes(call),
      {{"A", a.name,
        region(broadcastIndex(aBatch, yBatch, batchIdx), tail(a.shape, aMat))},
       {"B", b.name,
        region(broadcastIndex(bBatch, yBatch, batchIdx), tail(b.shape, bMat))}},
      {{"C", y.name, region(batchIdx, tail(y.shape, yMat))}});
}

/// Y = alpha * A' * B' + beta * C: Y starts as C broadcast (when beta is
/// not 0), then one gemm call accumulates into it.
void expandGemmBlas(ExpansionContext &ctx) {
  const ir::Container &a = ctx.requireInput("A");
  const ir::Container &b = ctx.requireInput("B");
  const ir::Container *c = ctx.input("C");
  const ir::Container &y = ctx.requireOutput("Y");
  requireF32RowMajor(ctx, {&a, &b, c, &y});
  if (a.shape.size() != 2 || b.shape.size() != 2 || y.shape.size() != 2)
    ctx.fail("A, B and Y must be 2-D");
  ir::GemmCall call;
  call.transA = ctx.intAttr("transA", 0) != 0;
  call.transB = ctx.intAttr("transB", 0) != 0;
  call.alpha = ctx.floatAttr("alpha", 1.0);
  call.beta = ctx.floatAttr("beta", 1.0);
  call.m = a.shape[call.transA ? 1 : 0];
  call.k = a.shape[call.transA ? 0 : 1];
  call.n = b.shape[call.transB ? 0 : 1];
  if (call.k != b.shape[call.transB ? 1 : 0])
    ctx.fail("inner dimensions differ");
  call.lda = a.shape[1];
  call.ldb = b.shape[1];
  call.ldc = y.shape[1];
  std::vector<ir::MappedRegion> inputs{
      {"A", a.name, ir::Subset::full(a.shape)},
      {"B", b.name, ir::Subset::full(b.shape)}};
  if (c && call.beta != 0.0) {
    if (c->shape.size() > 2)
      ctx.fail("C has rank above 2");
    Expr i = Expr::symbol("i"), j = Expr::symbol("j");
    ctx.addMap("init", {"i", "j"}, ExpansionContext::fullRanges(y.shape),
               {{"c", c->name, broadcastIndex(c->shape, y.shape, {i, j})}},
               "y = c", {{"y", y.name, {i, j}}});
    inputs.push_back({"Cin", y.name, ir::Subset::full(y.shape)});
  } else {
    call.beta = 0;
  }
  ctx.addPrimitive("gemm", {}, {}, "gemm", ir::gemmAttributes(call), inputs,
                   {{"C", y.name, ir::Subset::full(y.shape)}});
}

/// Convolution as im2col + gemm: the windows of the (padded) input are
/// copied into a [N, C * k..., o...] matrix per image, and W, seen as an
/// [M, C * k...] matrix, multiplies it into Y[n] seen as [M, o...]. A 1x1
/// convolution with unit strides and no padding multiplies X directly.
void expandConvIm2col(ExpansionContext &ctx) {
  const ir::Container &x = ctx.requireInput("X");
  const ir::Container &w = ctx.requireInput("W");
  const ir::Container *bias = ctx.input("B");
  const ir::Container &y = ctx.requireOutput("Y");
  requireF32RowMajor(ctx, {&x, &w, bias, &y});
  ConvGeometry g = readConvGeometry(ctx);
  if (g.group != 1)
    ctx.fail("im2col handles group 1 only (this node has group " +
             std::to_string(g.group) + ")");
  std::size_t rank = x.shape.size(), d = g.kernel.size();
  std::vector<Expr> outSpatial(y.shape.begin() + 2, y.shape.end());
  Expr channels = x.shape[1];
  std::int64_t window = 1;
  for (std::int64_t k : g.kernel)
    window *= k;
  Expr rows = channels * Expr(window); // K of the gemm
  Expr cols = product(outSpatial);     // N of the gemm

  bool pointwise = window == 1;
  for (std::size_t t = 0; t < d; ++t)
    pointwise =
        pointwise && g.strides[t] == 1 && g.pads[t] == 0 && g.pads[t + d] == 0;

  std::string matrix = x.name;
  if (!pointwise) {
    std::string source = paddedInput(ctx, g);
    matrix = ctx.addTransient("columns", x.dtype, {x.shape[0], rows, cols});
    // [n, c, k..., o...] -> columns[n, c * window + k-linear, o-linear]
    std::vector<std::string> params{"n", "c"};
    std::vector<ir::Range> ranges{{Expr(0), x.shape[0]}, {Expr(0), channels}};
    Expr kLinear(0), oLinear(0);
    std::vector<Expr> xIdx{Expr::symbol("n"), Expr::symbol("c")};
    for (std::size_t t = 0; t < d; ++t) {
      std::string kp = "k" + std::to_string(t);
      params.push_back(kp);
      ranges.emplace_back(Expr(0), Expr(g.kernel[t]));
      kLinear = kLinear * Expr(g.kernel[t]) + Expr::symbol(kp);
    }
    for (std::size_t t = 0; t < d; ++t) {
      std::string op = "o" + std::to_string(t);
      params.push_back(op);
      ranges.emplace_back(Expr(0), outSpatial[t]);
      oLinear = oLinear * outSpatial[t] + Expr::symbol(op);
      xIdx.push_back(Expr::symbol(op) * Expr(g.strides[t]) +
                     Expr::symbol("k" + std::to_string(t)) *
                         Expr(g.dilations[t]));
    }
    ctx.addMap("im2col", params, ranges, {{"x", source, xIdx}}, "y = x",
               {{"y",
                 matrix,
                 {Expr::symbol("n"), Expr::symbol("c") * Expr(window) + kLinear,
                  oLinear}}});
  }

  ir::GemmCall call;
  call.m = w.shape[0];
  call.k = rows;
  call.n = cols;
  call.lda = rows;
  call.ldb = cols;
  call.ldc = cols;
  std::vector<ir::MappedRegion> inputs{
      {"A", w.name, ir::Subset::full(w.shape)}};
  Expr n = Expr::symbol("n");
  if (pointwise)
    inputs.push_back({"B", matrix, region({n}, tail(x.shape, rank - 1))});
  else
    inputs.push_back({"B", matrix, region({n}, {rows, cols})});
  if (bias) {
    auto outParams = ExpansionContext::params(rank, "o");
    auto outIdx = ExpansionContext::indices(outParams);
    ctx.addMap("init", outParams, ExpansionContext::fullRanges(y.shape),
               {{"b", bias->name, {outIdx[1]}}}, "y = b",
               {{"y", y.name, outIdx}});
    call.beta = 1;
    inputs.push_back({"Cin", y.name, region({n}, tail(y.shape, rank - 1))});
  }
  ctx.addPrimitive("gemm", {"n"}, {{Expr(0), x.shape[0]}}, "gemm",
                   ir::gemmAttributes(call), inputs,
                   {{"C", y.name, region({n}, tail(y.shape, rank - 1))}});
}

const ExpansionRegistrar kMatMulBlas{
    {"MatMul", "blas",
     "OpenBLAS sgemm (f32): one call, or one per batch index in a map",
     expandMatMulBlas},
    true};
const ExpansionRegistrar kGemmBlas{
    {"Gemm", "blas", "init with C, then one OpenBLAS sgemm call (f32)",
     expandGemmBlas},
    true};
const ExpansionRegistrar kConvIm2col{
    {"Conv", "im2col",
     "copy input windows into a column matrix, then OpenBLAS sgemm per "
     "image (f32, group 1)",
     expandConvIm2col},
    true};

} // namespace
} // namespace weir::operators
