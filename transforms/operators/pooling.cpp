/// \file
/// Pure expansions of pooling. A window is a nested range: one map runs
/// over the output positions and, inside the same map, over the input
/// positions of each window, combining into the output through a Max or Sum
/// write-conflict resolution. Padding is never read: each window's input
/// range is clipped to the input with min/max expressions of the output
/// index, so every memlet stays in bounds.

#include "transforms/operators/expansion.h"

#include <algorithm>
#include <charconv>
#include <cstring>

namespace weir::operators {
namespace {

std::string dtypeText(ir::DType t) { return std::string(ir::dtypeName(t)); }

/// -inf for floats, the type's minimum for integers: the Max identity.
std::string lowest(ir::DType t) {
  std::string dt = dtypeText(t);
  switch (t) {
  case ir::DType::I8:
    return dt + "(-128)";
  case ir::DType::I16:
    return dt + "(-32768)";
  case ir::DType::I32:
    return dt + "(-2147483648)";
  case ir::DType::I64:
    return dt + "(-9223372036854775807 - 1)";
  default:
    break;
  }
  if (ir::isUnsignedInt(t))
    return dt + "(0)";
  return dt + "(-1.0 / 0.0)";
}

/// init `out` with `initCode` (assigning `v`) over its whole shape.
void fill(ExpansionContext &ctx, const std::string &label,
          const ir::Container &out, const std::string &initCode) {
  auto p = ExpansionContext::params(out.shape.size(), "o");
  ctx.addMap(label, p, ExpansionContext::fullRanges(out.shape), {}, initCode,
             {{"v", out.name, ExpansionContext::indices(p)}});
}

enum class GlobalKind { Average, Max };

Expander globalPool(GlobalKind kind) {
  return [kind](ExpansionContext &ctx) {
    const ir::Container &x = ctx.requireInput("X");
    const ir::Container &y = ctx.requireOutput("Y");
    if (x.shape.size() < 2 || y.shape.size() != x.shape.size())
      ctx.fail("input must be N x C x spatial, output of the same rank");
    if (kind == GlobalKind::Average && !ir::isFloat(x.dtype))
      ctx.fail(dtypeText(x.dtype) + " input is not supported");
    auto ip = ExpansionContext::params(x.shape.size());
    auto idx = ExpansionContext::indices(ip);
    std::vector<ir::Expr> yidx = {idx[0], idx[1]};
    std::int64_t n = 1;
    for (std::size_t d = 2; d < x.shape.size(); ++d) {
      yidx.push_back(ir::Expr(0));
      auto c = x.shape[d].asConstant();
      if (!c && kind == GlobalKind::Average)
        ctx.fail("spatial dimension " + x.shape[d].str() +
                 " is symbolic; the element count must be constant");
      n *= c.value_or(1);
    }
    if (kind == GlobalKind::Max) {
      fill(ctx, "init", y, "v = " + lowest(y.dtype));
      ctx.addMap("max", ip, ExpansionContext::fullRanges(x.shape),
                 {{"x", x.name, idx}}, "v = x",
                 {{"v", y.name, yidx, ir::Wcr::Max}});
      return;
    }
    std::string s = ctx.addTransient("sum", x.dtype, y.shape);
    const ir::Container &sc = ctx.program().container(s);
    fill(ctx, "init", sc, "v = " + dtypeText(x.dtype) + "(0)");
    ctx.addMap("sum", ip, ExpansionContext::fullRanges(x.shape),
               {{"x", x.name, idx}}, "v = x", {{"v", s, yidx, ir::Wcr::Sum}});
    auto op = ExpansionContext::params(y.shape.size(), "o");
    auto oidx = ExpansionContext::indices(op);
    ctx.addMap("mean", op, ExpansionContext::fullRanges(y.shape),
               {{"s", s, oidx}},
               "y = s / " + ExpansionContext::floatLiteral(double(n)),
               {{"y", y.name, oidx}});
  };
}

/// The window geometry of one spatial dimension.
struct Window {
  std::int64_t kernel, stride, dilation, padBegin, padEnd;
};

/// Kernel, strides, dilations and pads per spatial dimension, resolving
/// auto_pad. SAME_* needs the input extent, so a symbolic one fails.
std::vector<Window> windows(ExpansionContext &ctx, const ir::Container &x) {
  if (x.shape.size() < 3)
    ctx.fail("the input has rank " + std::to_string(x.shape.size()) +
             "; pooling needs a batch, a channel and a spatial dimension");
  std::size_t k = x.shape.size() - 2;
  auto kernel = ctx.intsAttr("kernel_shape", {});
  if (kernel.size() != k)
    ctx.fail("kernel_shape must have one entry per spatial dimension");
  auto strides = ctx.intsAttr("strides", std::vector<std::int64_t>(k, 1));
  auto dilations = ctx.intsAttr("dilations", std::vector<std::int64_t>(k, 1));
  auto pads = ctx.intsAttr("pads", std::vector<std::int64_t>(2 * k, 0));
  if (strides.size() != k || dilations.size() != k || pads.size() != 2 * k)
    ctx.fail("strides, dilations or pads have the wrong length");
  std::string autoPad = ctx.stringAttr("auto_pad", "NOTSET");
  std::vector<Window> w(k);
  for (std::size_t d = 0; d < k; ++d) {
    w[d] = {kernel[d], strides[d], dilations[d], pads[d], pads[d + k]};
    if (w[d].kernel < 1 || w[d].stride < 1 || w[d].dilation < 1 ||
        w[d].padBegin < 0 || w[d].padEnd < 0)
      ctx.fail("kernel, strides and dilations must be positive, pads not "
               "negative");
    if (autoPad == "NOTSET")
      continue;
    if (autoPad == "VALID") {
      w[d].padBegin = w[d].padEnd = 0;
      continue;
    }
    if (autoPad != "SAME_UPPER" && autoPad != "SAME_LOWER")
      ctx.fail("auto_pad '" + autoPad + "' is not supported");
    auto extent = x.shape[d + 2].asConstant();
    if (!extent)
      ctx.fail("auto_pad " + autoPad + " needs constant spatial dimensions");
    std::int64_t out = (*extent + w[d].stride - 1) / w[d].stride;
    std::int64_t total = std::max<std::int64_t>(
        0, (out - 1) * w[d].stride + (w[d].kernel - 1) * w[d].dilation + 1 -
               *extent);
    w[d].padBegin = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
    w[d].padEnd = total - w[d].padBegin;
  }
  return w;
}

/// Params `n, c, w0.., <inner>0..` and ranges: the output positions, then
/// for each the input positions `o*s - pb + k*d` of its window that lie in
/// [0, limit). The first in-range k is max(0, ceil((pb - o*s) / d)); the
/// outer max(0, ...) changes no value but lets validation's interval
/// arithmetic see that the range never starts below zero.
void windowMap(const ir::Container &y, const std::vector<Window> &w,
               const std::vector<ir::Expr> &limits, const std::string &inner,
               std::vector<std::string> &params,
               std::vector<ir::Range> &ranges) {
  params = {"n", "c"};
  ranges = {ir::Range(ir::Expr(0), y.shape[0]),
            ir::Range(ir::Expr(0), y.shape[1])};
  for (std::size_t d = 0; d < w.size(); ++d) {
    params.push_back("w" + std::to_string(d));
    ranges.emplace_back(ir::Expr(0), y.shape[d + 2]);
  }
  for (std::size_t d = 0; d < w.size(); ++d) {
    ir::Expr o = ir::Expr::symbol("w" + std::to_string(d));
    ir::Expr origin = o * w[d].stride - ir::Expr(w[d].padBegin);
    ir::Expr first = ir::max(
        ir::Expr(0), ir::ceilDiv(ir::Expr(w[d].padBegin) - o * w[d].stride,
                                 ir::Expr(w[d].dilation)));
    ir::Expr begin = ir::max(ir::Expr(0), origin + first * w[d].dilation);
    ir::Expr end = ir::min(
        limits[d], origin + ir::Expr((w[d].kernel - 1) * w[d].dilation + 1));
    params.push_back(inner + std::to_string(d));
    ranges.emplace_back(begin, end, ir::Expr(w[d].dilation));
  }
}

/// MaxPool's Indices: the flat index into X of each window's maximum. Like
/// ArgMax, a second pass over the windows combines, through a Min
/// resolution, the row-major flat index of every position holding the
/// maximum, so the first one in window order wins (as ONNX's reference
/// scans). Tasklets cannot read map parameters, so the per-dimension
/// positions come from a constant 0..n-1 vector. storage_order=1 reports the
/// index column-major over the spatial dimensions; a finalize map converts.
void maxIndices(ExpansionContext &ctx, const ir::Container &x,
                const ir::Container &y, const ir::Container &indices,
                const std::vector<std::string> &params,
                const std::vector<ir::Range> &ranges,
                const std::vector<ir::Expr> &xidx,
                const std::vector<ir::Expr> &yidx) {
  if (indices.dtype != ir::DType::I64 || indices.shape.size() != y.shape.size())
    ctx.fail("the Indices output must be i64 of the output's rank");
  std::int64_t storageOrder = ctx.intAttr("storage_order", 0);
  if (storageOrder != 0 && (storageOrder != 1 || x.shape.size() != 4))
    ctx.fail("storage_order=" + std::to_string(storageOrder) +
             " is supported only as 0, or 1 for 2-D pooling");
  std::vector<std::int64_t> dims;
  for (const ir::Expr &d : x.shape) {
    auto c = d.asConstant();
    if (!c)
      ctx.fail("the Indices output needs constant input dimensions");
    dims.push_back(*c);
  }
  std::int64_t longest = *std::max_element(dims.begin(), dims.end());
  std::string iotaName = ctx.addIota("iota", ir::DType::I64, longest);

  std::vector<ir::MappedInput> in = {{"x", x.name, xidx}, {"m", y.name, yidx}};
  std::string flat;
  for (std::size_t d = 0; d < dims.size(); ++d) {
    std::string k = "k" + std::to_string(d);
    in.push_back({k, iotaName, {xidx[d]}});
    flat =
        d == 0 ? k : "(" + flat + ") * " + std::to_string(dims[d]) + " + " + k;
  }
  std::string acc = indices.name;
  if (storageOrder == 1)
    acc = ctx.addTransient("rowmajor", ir::DType::I64, indices.shape);
  fill(ctx, "indices_init", ctx.program().container(acc),
       "v = 9223372036854775807");
  // A NaN maximum (Max propagates it) is found where x != x.
  ctx.addMap("indices", params, ranges, in,
             "v = select(x == m || x != x, " + flat + ", 9223372036854775807)",
             {{"v", acc, yidx, ir::Wcr::Min}});
  if (storageOrder == 1) {
    std::string h = std::to_string(dims[2]), w = std::to_string(dims[3]);
    std::string plane = std::to_string(dims[2] * dims[3]);
    auto p = ExpansionContext::params(indices.shape.size(), "o");
    auto idx = ExpansionContext::indices(p);
    ctx.addMap("indices_colmajor", p,
               ExpansionContext::fullRanges(indices.shape), {{"r", acc, idx}},
               "s = r % " + plane + "\ny = r - s + s / " + w + " + s % " + w +
                   " * " + h,
               {{"y", indices.name, idx}});
  }
}

enum class PoolKind { Average, Max };

Expander pool(PoolKind kind) {
  return [kind](ExpansionContext &ctx) {
    const ir::Container &x = ctx.requireInput("X");
    const ir::Container &y = ctx.requireOutput("Y");
    if (x.shape.size() < 3 || y.shape.size() != x.shape.size())
      ctx.fail("input must be N x C x spatial, output of the same rank");
    if (kind == PoolKind::Average && !ir::isFloat(x.dtype))
      ctx.fail(dtypeText(x.dtype) + " input is not supported");
    std::vector<Window> w = windows(ctx, x);
    std::size_t k = w.size();

    std::vector<ir::Expr> inputLimits(x.shape.begin() + 2, x.shape.end());
    std::vector<std::string> params;
    std::vector<ir::Range> ranges;
    windowMap(y, w, inputLimits, "h", params, ranges);
    auto all = ExpansionContext::indices(params);
    std::vector<ir::Expr> xidx = {all[0], all[1]}, yidx = {all[0], all[1]};
    for (std::size_t d = 0; d < k; ++d) {
      yidx.push_back(all[2 + d]);
      xidx.push_back(all[2 + k + d]);
    }
    if (kind == PoolKind::Max) {
      fill(ctx, "init", y, "v = " + lowest(y.dtype));
      ctx.addMap("max", params, ranges, {{"x", x.name, xidx}}, "v = x",
                 {{"v", y.name, yidx, ir::Wcr::Max}});
      if (const ir::Container *indices = ctx.output("Indices"))
        maxIndices(ctx, x, y, *indices, params, ranges, xidx, yidx);
      return;
    }

    std::string dt = dtypeText(x.dtype);
    std::string s = ctx.addTransient("sum", x.dtype, y.shape);
    fill(ctx, "sum_init", ctx.program().container(s), "v = " + dt + "(0)");
    ctx.addMap("sum", params, ranges, {{"x", x.name, xidx}}, "v = x",
               {{"v", s, yidx, ir::Wcr::Sum}});
    // The divisor counts the window's positions inside the input, or with
    // count_include_pad inside the padded input (a ceil_mode window can
    // still hang past the end pad; those positions never count).
    std::vector<ir::Expr> countLimits = inputLimits;
    std::vector<Window> cw = w;
    if (ctx.intAttr("count_include_pad", 0) != 0)
      for (std::size_t d = 0; d < k; ++d) {
        countLimits[d] = inputLimits[d] + ir::Expr(w[d].padBegin + w[d].padEnd);
        // Positions shift by the begin pad, so the padded input starts at 0.
        cw[d].padBegin = 0;
      }
    std::vector<std::string> cparams;
    std::vector<ir::Range> cranges;
    windowMap(y, cw, countLimits, "q", cparams, cranges);
    std::string c = ctx.addTransient("count", x.dtype, y.shape);
    fill(ctx, "count_init", ctx.program().container(c), "v = " + dt + "(0)");
    ctx.addMap("count", cparams, cranges, {}, "v = " + dt + "(1)",
               {{"v", c, yidx, ir::Wcr::Sum}});
    auto op = ExpansionContext::params(y.shape.size(), "o");
    auto oidx = ExpansionContext::indices(op);
    ctx.addMap("average", op, ExpansionContext::fullRanges(y.shape),
               {{"s", s, oidx}, {"c", c, oidx}}, "y = s / c",
               {{"y", y.name, oidx}});
  };
}

/// The largest window the `window` implementation writes out.
constexpr std::int64_t kMaxWindowElements = 64;

/// MaxPool `window`: one map over the output positions whose tasklet reads
/// the whole window and takes the maximum in window order, so the innermost
/// loop, over output columns, vectorizes (the pure expansion's window loops
/// run two or three iterations each, scalar). Padding is never read: a
/// position outside the input is clamped to the nearest edge, which with
/// unit dilation lies in the same window whenever the window overlaps the
/// input, and a repeated element leaves a maximum unchanged. So: unit
/// dilations, constant spatial extents, every window overlapping the input,
/// no Indices output, at most kMaxWindowElements positions. The result is
/// bit for bit the pure expansion's (the same max, in the same order).
void expandMaxPoolWindow(ExpansionContext &ctx) {
  const ir::Container &x = ctx.requireInput("X");
  const ir::Container &y = ctx.requireOutput("Y");
  if (x.shape.size() < 3 || y.shape.size() != x.shape.size())
    ctx.fail("input must be N x C x spatial, output of the same rank");
  if (x.dtype == ir::DType::Bool)
    ctx.fail("bool input is not supported");
  if (ctx.output("Indices"))
    ctx.fail("the window implementation does not compute Indices");
  std::vector<Window> w = windows(ctx, x);
  std::size_t k = w.size();
  std::int64_t positions = 1;
  std::vector<std::int64_t> extent(k), outExtent(k);
  for (std::size_t d = 0; d < k; ++d) {
    auto in = x.shape[d + 2].asConstant(), out = y.shape[d + 2].asConstant();
    if (!in || !out)
      ctx.fail("spatial dimensions must be constant");
    extent[d] = *in;
    outExtent[d] = *out;
    if (w[d].dilation != 1)
      ctx.fail("dilations must be 1");
    if (w[d].padBegin > w[d].kernel - 1 ||
        (outExtent[d] - 1) * w[d].stride - w[d].padBegin > extent[d] - 1)
      ctx.fail("a window lies wholly in the padding");
    positions *= w[d].kernel;
    if (positions > kMaxWindowElements)
      ctx.fail("windows of more than " + std::to_string(kMaxWindowElements) +
               " positions are not supported");
  }

  std::vector<std::string> params{"n", "c"};
  std::vector<ir::Range> ranges{{ir::Expr(0), y.shape[0]},
                                {ir::Expr(0), y.shape[1]}};
  std::vector<ir::Expr> yidx{ir::Expr::symbol("n"), ir::Expr::symbol("c")};
  for (std::size_t d = 0; d < k; ++d) {
    params.push_back("w" + std::to_string(d));
    ranges.emplace_back(ir::Expr(0), y.shape[d + 2]);
    yidx.push_back(ir::Expr::symbol(params.back()));
  }
  // One connector per window position, in row-major window order.
  std::vector<ir::MappedInput> in;
  std::string code;
  for (std::int64_t flat = 0; flat < positions; ++flat) {
    std::vector<ir::Expr> xidx{yidx[0], yidx[1]};
    std::int64_t rest = flat;
    std::string conn = "x";
    for (std::size_t d = k; d-- > 0;) {
      std::int64_t at = rest % w[d].kernel;
      rest /= w[d].kernel;
      conn.insert(1, "_" + std::to_string(at));
      ir::Expr pos =
          yidx[2 + d] * ir::Expr(w[d].stride) + ir::Expr(at - w[d].padBegin);
      // Clamp only where some window reaches past an edge.
      if (at < w[d].padBegin)
        pos = ir::max(ir::Expr(0), pos);
      if ((outExtent[d] - 1) * w[d].stride - w[d].padBegin + at > extent[d] - 1)
        pos = ir::min(ir::Expr(extent[d] - 1), pos);
      xidx.insert(xidx.begin() + 2, pos); // last dimension first
    }
    in.push_back({conn, x.name, xidx});
    std::string acc = "m" + std::to_string(flat);
    // A lone position still goes through max, whose NaN is the canonical
    // one, as the pure expansion's max(-inf, x) gives.
    if (flat == 0)
      code += acc + " = " +
              (positions == 1 ? "max(" + conn + ", " + conn + ")" : conn) +
              "\n";
    else
      code += acc + " = max(m" + std::to_string(flat - 1) + ", " + conn + ")\n";
  }
  code += "v = m" + std::to_string(positions - 1) + "\n";
  ctx.addMap("max", params, ranges, in, code, {{"v", y.name, yidx}});
}

const ExpansionRegistrar kGlobalAveragePool{
    {"GlobalAveragePool", "pure", "Sum-resolved map over the spatial axes",
     globalPool(GlobalKind::Average)},
    true};
const ExpansionRegistrar kGlobalMaxPool{
    {"GlobalMaxPool", "pure", "Max-resolved map over the spatial axes",
     globalPool(GlobalKind::Max)},
    true};
const ExpansionRegistrar kMaxPool{{"MaxPool", "pure",
                                   "Max-resolved map over clipped windows",
                                   pool(PoolKind::Max)},
                                  true};
const ExpansionRegistrar kMaxPoolWindow{
    {"MaxPool", "window",
     "one map over output positions, each reading its whole window (edges "
     "clamped); unit dilations, windows overlapping the input, no Indices",
     expandMaxPoolWindow},
    false};
const ExpansionRegistrar kAveragePool{
    {"AveragePool", "pure",
     "Sum-resolved map over clipped windows, divided by a counted divisor",
     pool(PoolKind::Average)},
    true};

} // namespace
} // namespace weir::operators
