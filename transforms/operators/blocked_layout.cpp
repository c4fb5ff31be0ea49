/// \file
/// Pure expansions of the blocked-layout operators (see the header).

#include "transforms/operators/blocked_layout.h"

#include "transforms/operators/expansion.h"

namespace weir::operators {
namespace {

using ir::Expr;

std::int64_t blockOf(ExpansionContext &ctx) {
  std::int64_t b = ctx.intAttr("block", 0);
  if (b < 1)
    ctx.fail("attribute block must be a positive channel count");
  return b;
}

/// Y[n, cb, h, w, ci] = X[n, cb·b + ci, h, w] (or the reverse), one map
/// over the blocked index space.
void expandReorder(ExpansionContext &ctx, bool toBlocked) {
  const ir::Container &x = ctx.requireInput("X");
  const ir::Container &y = ctx.requireOutput("Y");
  std::int64_t b = blockOf(ctx);
  const ir::Container &blocked = toBlocked ? y : x;
  if (blocked.shape.size() != 5 || blocked.shape[4] != Expr(b))
    ctx.fail("the blocked side must be [N, C/b, H, W, b] with b = " +
             std::to_string(b));
  auto params = ExpansionContext::params(5);
  auto idx = ExpansionContext::indices(params);
  std::vector<Expr> plain{idx[0], idx[1] * Expr(b) + idx[4], idx[2], idx[3]};
  ctx.addMap(toBlocked ? "to_blocked" : "from_blocked", params,
             ExpansionContext::fullRanges(blocked.shape),
             {{"x", x.name, toBlocked ? plain : idx}}, "y = x",
             {{"y", y.name, toBlocked ? idx : plain}});
}

void expandBlockedConv(ExpansionContext &ctx) {
  const ir::Container &x = ctx.requireInput("X");
  const ir::Container &w = ctx.requireInput("W");
  const ir::Container *bias = ctx.input("B");
  const ir::Container &y = ctx.requireOutput("Y");
  std::int64_t b = blockOf(ctx);
  auto kernel = ctx.intsAttr("kernel_shape", {});
  auto strides = ctx.intsAttr("strides", {1, 1});
  auto dilations = ctx.intsAttr("dilations", {1, 1});
  auto pads = ctx.intsAttr("pads", {0, 0, 0, 0});
  if (x.shape.size() != 5 || y.shape.size() != 5 || w.shape.size() != 6 ||
      kernel.size() != 2 || strides.size() != 2 || dilations.size() != 2 ||
      pads.size() != 4)
    ctx.fail("expects blocked 2-D operands (X, Y rank 5, W rank 6) and "
             "2-D kernel_shape, strides, dilations and 4 pads");

  // Zero-padded copy of the blocked input.
  std::string source = x.name;
  if (pads != std::vector<std::int64_t>{0, 0, 0, 0}) {
    std::vector<Expr> shape = {
        x.shape[0], x.shape[1], x.shape[2] + Expr(pads[0] + pads[2]),
        x.shape[3] + Expr(pads[1] + pads[3]), x.shape[4]};
    source = ctx.addTransient("padded", x.dtype, shape);
    auto params = ExpansionContext::params(5);
    auto idx = ExpansionContext::indices(params);
    ctx.addMap("pad_fill", params, ExpansionContext::fullRanges(shape), {},
               "y = 0.0", {{"y", source, idx}});
    auto inner = idx;
    inner[2] = inner[2] + Expr(pads[0]);
    inner[3] = inner[3] + Expr(pads[1]);
    ctx.addMap("pad_copy", params, ExpansionContext::fullRanges(x.shape),
               {{"x", x.name, idx}}, "y = x", {{"y", source, inner}});
  }

  auto outParams = ExpansionContext::params(5, "o");
  auto o = ExpansionContext::indices(outParams);
  if (bias)
    ctx.addMap("init", outParams, ExpansionContext::fullRanges(y.shape),
               {{"b", bias->name, {o[1] * Expr(b) + o[4]}}}, "y = b",
               {{"y", y.name, o}});
  else
    ctx.addMap("init", outParams, ExpansionContext::fullRanges(y.shape), {},
               "y = 0.0", {{"y", y.name, o}});

  // [n, kb, oh, ow, cb, kh, kw, ci, ko]: the output block innermost.
  std::vector<std::string> params{"o0", "o1", "o2", "o3", "cb",
                                  "kh", "kw", "ci", "o4"};
  auto yRanges = ExpansionContext::fullRanges(y.shape);
  std::vector<ir::Range> ranges{yRanges[0],
                                yRanges[1],
                                yRanges[2],
                                yRanges[3],
                                {Expr(0), x.shape[1]},
                                {Expr(0), Expr(kernel[0])},
                                {Expr(0), Expr(kernel[1])},
                                {Expr(0), Expr(b)},
                                yRanges[4]};
  Expr cb = Expr::symbol("cb"), kh = Expr::symbol("kh"),
       kw = Expr::symbol("kw"), ci = Expr::symbol("ci");
  std::vector<Expr> xIdx{o[0], cb,
                         o[2] * Expr(strides[0]) + kh * Expr(dilations[0]),
                         o[3] * Expr(strides[1]) + kw * Expr(dilations[1]), ci};
  std::vector<Expr> wIdx{o[1], cb, kh, kw, ci, o[4]};
  ctx.addMap("accumulate", params, ranges,
             {{"x", source, xIdx}, {"w", w.name, wIdx}}, "y = x * w",
             {{"y", y.name, o, ir::Wcr::Sum}});
}

const ExpansionRegistrar kToBlockedPure{
    {std::string(kToBlocked), "pure",
     "one copy map over the blocked index space",
     [](ExpansionContext &ctx) { expandReorder(ctx, true); }},
    true};

const ExpansionRegistrar kFromBlockedPure{
    {std::string(kFromBlocked), "pure",
     "one copy map over the blocked index space",
     [](ExpansionContext &ctx) { expandReorder(ctx, false); }},
    true};

const ExpansionRegistrar kBlockedConvPure{
    {std::string(kBlockedConv), "pure",
     "zero-padded blocked copy of X, bias init, then sum x * w over "
     "[n, kb, oh, ow, cb, kh, kw, ci, ko] (output block innermost)",
     expandBlockedConv},
    true};

} // namespace
} // namespace weir::operators
