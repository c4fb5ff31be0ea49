/// \file
/// Pure expansion of MaxUnpool: the output is zero except where MaxPool's
/// indices put each input value back,
///   y.flat[I[n, c, p]] = x[n, c, p],
/// written as a one-hot contraction per (n, c) plane, like the scatters:
/// every output position of the plane compares its flat index with each
/// index of the input's plane. The flat indices count positions of the
/// shape MaxPool's input had, (in - 1) * stride - pads + kernel per
/// spatial axis; a larger output_shape is that block padded with zeros at
/// the end of each axis, as the reference and ONNX Runtime do. Indices
/// are taken as MaxPool makes them, inside their own (n, c) plane; one
/// pointing into another plane is not written.

#include "transforms/operators/expansion.h"

namespace weir::operators {
namespace {

using ir::Expr;

void expandMaxUnpool(ExpansionContext &ctx) {
  const ir::Container &x = ctx.requireInput("X");
  const ir::Container &ind = ctx.requireInput("I");
  const ir::Container &y = ctx.requireOutput("output");
  std::size_t rank = x.shape.size();
  if (rank < 3 || ind.shape.size() != rank || y.shape.size() != rank)
    ctx.fail("X, I and the output must be [N, C, spatial...] of one rank");
  if (ind.dtype != ir::DType::I64)
    ctx.fail("the indices must be int64");
  if (x.dtype == ir::DType::Bool)
    ctx.fail("bool values cannot be summed");

  // The block the indices count in, inside the output.
  const std::size_t spatial = rank - 2;
  std::vector<std::int64_t> kernel = ctx.intsAttr("kernel_shape", {});
  std::vector<std::int64_t> strides =
      ctx.intsAttr("strides", std::vector<std::int64_t>(spatial, 1));
  std::vector<std::int64_t> pads =
      ctx.intsAttr("pads", std::vector<std::int64_t>(2 * spatial, 0));
  if (kernel.size() != spatial || strides.size() != spatial ||
      pads.size() != 2 * spatial)
    ctx.fail("kernel_shape, strides and pads must give every spatial axis");
  std::vector<Expr> block{y.shape[0], y.shape[1]};
  for (std::size_t d = 0; d < spatial; ++d) {
    std::int64_t b = (ctx.constantDim(x.shape[d + 2]) - 1) * strides[d] -
                     pads[d] - pads[spatial + d] + kernel[d];
    if (b < 1 || b > ctx.constantDim(y.shape[d + 2]))
      ctx.fail("the unpooled size " + std::to_string(b) + " of axis " +
               std::to_string(d + 2) + " does not fit the output");
    block.push_back(Expr(b));
  }
  // Flat positions of the block, and the affine flat index of an element.
  std::int64_t total = 1;
  for (const Expr &d : block)
    total *= ctx.constantDim(d);
  std::string positions = ctx.addIota("positions", ir::DType::I64, total);
  auto out = ExpansionContext::params(rank, "o");
  Expr flat(0);
  for (std::size_t d = 0; d < rank; ++d)
    flat = flat * block[d] + Expr::symbol(out[d]);

  std::string zero = ExpansionContext::sumIdentity(x.dtype);
  auto outIdx = ExpansionContext::indices(out);
  ctx.addMap("fill", out, ExpansionContext::fullRanges(y.shape), {},
             "y = " + zero, {{"y", y.name, outIdx}});
  // Over the output's positions and the input plane's (n and c shared).
  std::vector<std::string> all = out;
  std::vector<ir::Range> ranges = ExpansionContext::fullRanges(block);
  std::vector<Expr> inIdx{Expr::symbol(out[0]), Expr::symbol(out[1])};
  for (std::size_t d = 2; d < rank; ++d) {
    std::string p = "p" + std::to_string(d - 2);
    all.push_back(p);
    ranges.emplace_back(Expr(0), x.shape[d]);
    inIdx.push_back(Expr::symbol(p));
  }
  ctx.addMap("scatter", all, ranges,
             {{"i", ind.name, inIdx},
              {"q", positions, {flat}},
              {"v", x.name, inIdx}},
             "y = select(i == q, v, " + zero + ")",
             {{"y", y.name, outIdx, ir::Wcr::Sum}});
}

const ExpansionRegistrar kMaxUnpool{
    {"MaxUnpool", "pure",
     "one-hot contraction of each (n, c) plane with MaxPool's indices",
     expandMaxUnpool},
    true};

} // namespace
} // namespace weir::operators
