/// \file
/// Convolution geometry and the padded input copy (see conv_common.h).

#include "transforms/operators/conv_common.h"

#include <algorithm>

namespace weir::operators {

using ir::Expr;

namespace {
std::string zeroOf(ir::DType dtype) {
  return std::string(ir::dtypeName(dtype)) + "(0)";
}
} // namespace

ConvGeometry readConvGeometry(ExpansionContext &ctx) {
  return readConvGeometry(ctx, ctx.requireInput("X"), ctx.requireInput("W"),
                          ctx.requireOutput("Y"));
}

ConvGeometry readConvGeometry(ExpansionContext &ctx, const ir::Container &x,
                              const ir::Container &w, const ir::Container &y) {
  std::size_t rank = x.shape.size();
  if (rank < 3 || w.shape.size() != rank || y.shape.size() != rank)
    ctx.fail("X, W and Y must have the same rank, at least 3");
  std::size_t d = rank - 2;
  std::int64_t group = ctx.intAttr("group", 1);
  std::int64_t m = ctx.constantDim(w.shape[0]);
  if (group < 1 || m % group != 0)
    ctx.fail("group does not divide the output channels");
  std::vector<std::int64_t> kernel;
  for (std::size_t t = 0; t < d; ++t)
    kernel.push_back(ctx.constantDim(w.shape[2 + t]));
  if (ctx.hasAttr("kernel_shape") && ctx.intsAttr("kernel_shape", {}) != kernel)
    ctx.fail("kernel_shape disagrees with W");
  auto strides = ctx.intsAttr("strides", std::vector<std::int64_t>(d, 1));
  auto dilations = ctx.intsAttr("dilations", std::vector<std::int64_t>(d, 1));
  auto pads = ctx.intsAttr("pads", std::vector<std::int64_t>(2 * d, 0));
  if (strides.size() != d || dilations.size() != d || pads.size() != 2 * d)
    ctx.fail("strides, dilations or pads have the wrong length");
  std::string autoPad = ctx.stringAttr("auto_pad", "NOTSET");
  if (autoPad == "VALID") {
    pads.assign(2 * d, 0);
  } else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    for (std::size_t t = 0; t < d; ++t) {
      std::int64_t in = ctx.constantDim(x.shape[2 + t]);
      std::int64_t out = (in + strides[t] - 1) / strides[t];
      std::int64_t total = std::max<std::int64_t>(
          0, (out - 1) * strides[t] + (kernel[t] - 1) * dilations[t] + 1 - in);
      std::int64_t small = total / 2;
      pads[t] = autoPad == "SAME_UPPER" ? small : total - small;
      pads[t + d] = total - pads[t];
    }
  } else if (autoPad != "NOTSET") {
    ctx.fail("auto_pad '" + autoPad + "' is not handled");
  }
  for (std::size_t t = 0; t < d; ++t)
    if (strides[t] < 1 || dilations[t] < 1 || pads[t] < 0 || pads[t + d] < 0)
      ctx.fail("strides and dilations must be positive, pads non-negative");
  ConvGeometry g;
  g.kernel = kernel;
  g.strides = strides;
  g.dilations = dilations;
  g.pads = pads;
  g.group = group;
  g.outChannels = m;
  return g;
}

std::string paddedInput(ExpansionContext &ctx, const ConvGeometry &g) {
  const ir::Container &x = ctx.requireInput("X");
  std::size_t rank = x.shape.size(), d = g.kernel.size();
  const std::vector<std::int64_t> &pads = g.pads;
  std::string source = x.name;
  bool padded = false;
  for (std::int64_t p : pads)
    padded = padded || p != 0;
  if (padded) {
    std::vector<Expr> shape = {x.shape[0], x.shape[1]};
    for (std::size_t t = 0; t < d; ++t)
      shape.push_back(x.shape[2 + t] + Expr(pads[t] + pads[t + d]));
    source = ctx.addTransient("padded", x.dtype, shape);
    auto params = ExpansionContext::params(rank);
    auto idx = ExpansionContext::indices(params);
    ctx.addMap("pad_fill", params, ExpansionContext::fullRanges(shape), {},
               "y = " + zeroOf(x.dtype), {{"y", source, idx}});
    auto inner = idx;
    for (std::size_t t = 0; t < d; ++t)
      inner[2 + t] = inner[2 + t] + Expr(pads[t]);
    ctx.addMap("pad_copy", params, ExpansionContext::fullRanges(x.shape),
               {{"x", x.name, idx}}, "y = x", {{"y", source, inner}});
  }
  return source;
}

} // namespace weir::operators
