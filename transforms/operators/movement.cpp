/// \file
/// Pure expansions of data-movement operators: every one is a copy map
/// (`y = x`) whose memlet index expressions do the work, so each element's
/// move is an explicit edge later tiers can analyze and fuse.

#include "transforms/operators/broadcast.h"
#include "transforms/operators/expansion.h"

#include <algorithm>

namespace weir::operators {
namespace {

using ir::Expr;

const ir::Container &firstInput(ExpansionContext &ctx) {
  return ctx.requireInputAt(0);
}

const ir::Container &firstOutput(ExpansionContext &ctx) {
  return ctx.requireOutputAt(0);
}

/// Refuses the node unless `a` and `b` have the same rank (a damaged model
/// can declare any shapes; the index maps below assume they agree).
void requireSameRank(ExpansionContext &ctx, const ir::Container &a,
                     const ir::Container &b) {
  if (a.shape.size() != b.shape.size())
    ctx.fail("'" + a.name + "' has rank " + std::to_string(a.shape.size()) +
             ", '" + b.name + "' rank " + std::to_string(b.shape.size()));
}

/// A map over `out`'s shape copying in[inIndex(outIndex)] to out[outIndex].
void copyOver(ExpansionContext &ctx, const ir::Container &in,
              const ir::Container &out,
              const std::function<std::vector<Expr>(const std::vector<Expr> &)>
                  &inIndex) {
  auto params = ExpansionContext::params(out.shape.size());
  auto idx = ExpansionContext::indices(params);
  ctx.addMap("copy", params, ExpansionContext::fullRanges(out.shape),
             {{"x", in.name, inIndex(idx)}}, "y = x", {{"y", out.name, idx}});
}

/// Row-major linear offset of `index` in `shape`.
Expr linearize(const std::vector<Expr> &index, const std::vector<Expr> &shape) {
  Expr lin(0);
  for (std::size_t k = 0; k < shape.size(); ++k)
    lin = lin * shape[k] + index[k];
  return lin;
}

/// The index in `shape` of row-major offset `lin`; the outermost dimension
/// needs no modulo because `lin` is in bounds.
std::vector<Expr> delinearize(const Expr &lin, const std::vector<Expr> &shape) {
  std::vector<Expr> index(shape.size());
  Expr stride(1);
  for (std::size_t k = shape.size(); k-- > 0;) {
    Expr q = floorDiv(lin, stride);
    index[k] = k == 0 ? q : mod(q, shape[k]);
    stride = stride * shape[k];
  }
  return index;
}

/// Reshape, Flatten, Squeeze, Unsqueeze: the same row-major element order,
/// so the output index is linearized and de-linearized into the input's.
void expandReshape(ExpansionContext &ctx) {
  const ir::Container &x = firstInput(ctx);
  const ir::Container &y = firstOutput(ctx);
  Expr inCount(1), outCount(1);
  for (const Expr &d : x.shape)
    inCount = inCount * d;
  for (const Expr &d : y.shape)
    outCount = outCount * d;
  if (inCount != outCount)
    ctx.fail("input has " + inCount.str() + " elements, output " +
             outCount.str());
  copyOver(ctx, x, y, [&](const std::vector<Expr> &o) {
    // Identical shapes (a reshape to the same shape) need no index math.
    if (x.shape == y.shape)
      return o;
    return delinearize(linearize(o, y.shape), x.shape);
  });
}

void expandTranspose(ExpansionContext &ctx) {
  const ir::Container &x = firstInput(ctx);
  const ir::Container &y = firstOutput(ctx);
  requireSameRank(ctx, x, y);
  std::size_t rank = x.shape.size();
  std::vector<std::int64_t> perm;
  for (std::size_t k = rank; k-- > 0;)
    perm.push_back(static_cast<std::int64_t>(k));
  perm = ctx.intsAttr("perm", perm);
  std::vector<bool> seen(rank);
  if (perm.size() != rank)
    ctx.fail("perm has " + std::to_string(perm.size()) + " entries for rank " +
             std::to_string(rank));
  for (std::int64_t p : perm) {
    if (p < 0 || p >= static_cast<std::int64_t>(rank) || seen[p])
      ctx.fail("perm is not a permutation");
    seen[p] = true;
  }
  copyOver(ctx, x, y, [&](const std::vector<Expr> &o) {
    std::vector<Expr> in(rank);
    for (std::size_t j = 0; j < rank; ++j)
      in[perm[j]] = o[j];
    return in;
  });
}

/// One map per input, writing its slice of the output.
void expandConcat(ExpansionContext &ctx) {
  const ir::Container &y = firstOutput(ctx);
  std::int64_t axis = ctx.normalizeAxis(ctx.intAttr("axis", 0), y.shape.size());
  Expr offset(0);
  for (const ir::Container *in : ctx.variadicInputs("inputs")) {
    if (!in)
      ctx.fail("an input is missing");
    requireSameRank(ctx, *in, y);
    auto params = ExpansionContext::params(in->shape.size());
    auto idx = ExpansionContext::indices(params);
    auto outIdx = idx;
    outIdx[axis] = outIdx[axis] + offset;
    ctx.addMap("copy", params, ExpansionContext::fullRanges(in->shape),
               {{"x", in->name, idx}}, "y = x", {{"y", y.name, outIdx}});
    offset = offset + in->shape[axis];
  }
  if (offset != y.shape[axis])
    ctx.fail("inputs add up to " + offset.str() + " along the axis, output " +
             y.shape[axis].str());
}

/// Each output reads its slice of the input; the slices' extents come from
/// the (statically inferred) output shapes, which agree with `split` or
/// `num_outputs`.
void expandSplit(ExpansionContext &ctx) {
  const ir::Container &x = firstInput(ctx);
  std::int64_t axis = ctx.normalizeAxis(ctx.intAttr("axis", 0), x.shape.size());
  Expr offset(0);
  for (const ir::Connector &conn : ctx.node().outputs) {
    const ir::Container &y = ctx.requireOutput(conn.name);
    requireSameRank(ctx, x, y);
    Expr off = offset;
    copyOver(ctx, x, y, [&](const std::vector<Expr> &o) {
      auto in = o;
      in[axis] = in[axis] + off;
      return in;
    });
    offset = offset + y.shape[axis];
  }
  if (offset != x.shape[axis])
    ctx.fail("outputs add up to " + offset.str() + " along the axis, input " +
             x.shape[axis].str());
}

void expandExpand(ExpansionContext &ctx) {
  const ir::Container &x = ctx.requireInput("input");
  const ir::Container &y = firstOutput(ctx);
  if (x.shape.size() > y.shape.size())
    ctx.fail("the input has a higher rank than the output");
  copyOver(ctx, x, y, [&](const std::vector<Expr> &o) {
    return broadcastIndex(x.shape, y.shape, o);
  });
}

void expandTile(ExpansionContext &ctx) {
  const ir::Container &x = ctx.requireInput("input");
  const ir::Container &y = firstOutput(ctx);
  requireSameRank(ctx, x, y);
  copyOver(ctx, x, y, [&](const std::vector<Expr> &o) {
    std::vector<Expr> in;
    for (std::size_t k = 0; k < o.size(); ++k)
      in.push_back(x.shape[k] == y.shape[k] ? o[k] : mod(o[k], x.shape[k]));
    return in;
  });
}

Expr absExpr(const Expr &e) { return max(e, -e); }

void expandPad(ExpansionContext &ctx) {
  const ir::Container &x = ctx.requireInput("data");
  const ir::Container &y = firstOutput(ctx);
  requireSameRank(ctx, x, y);
  std::size_t rank = x.shape.size();
  auto pads = ctx.constantInts("pads");
  if (!pads)
    ctx.fail("pads must be a constant");
  std::vector<std::int64_t> axes;
  if (ctx.input("axes")) {
    auto a = ctx.constantInts("axes");
    if (!a)
      ctx.fail("axes must be a constant");
    for (std::int64_t v : *a)
      axes.push_back(ctx.normalizeAxis(v, rank));
  } else {
    for (std::size_t k = 0; k < rank; ++k)
      axes.push_back(static_cast<std::int64_t>(k));
  }
  if (pads->size() != 2 * axes.size())
    ctx.fail("pads has " + std::to_string(pads->size()) + " entries for " +
             std::to_string(axes.size()) + " axes");
  std::vector<std::int64_t> lo(rank, 0), hi(rank, 0);
  for (std::size_t k = 0; k < axes.size(); ++k) {
    lo[axes[k]] = (*pads)[k];
    hi[axes[k]] = (*pads)[k + axes.size()];
  }
  std::string mode = ctx.stringAttr("mode", "constant");
  if (mode == "edge" || mode == "reflect" || mode == "wrap") {
    for (std::size_t k = 0; k < rank; ++k)
      if (lo[k] < 0 || hi[k] < 0)
        ctx.fail("negative pads are only handled in constant mode");
    // One reflection covers pads below the extent, which ONNX requires.
    if (mode == "reflect")
      for (std::size_t k = 0; k < rank; ++k)
        if ((lo[k] || hi[k]) &&
            std::max(lo[k], hi[k]) >= ctx.constantDim(x.shape[k]))
          ctx.fail("reflect pads must be smaller than the dimension");
    copyOver(ctx, x, y, [&](const std::vector<Expr> &o) {
      std::vector<Expr> in;
      for (std::size_t k = 0; k < rank; ++k) {
        Expr t = o[k] - Expr(lo[k]);
        const Expr &d = x.shape[k];
        if (lo[k] == 0 && hi[k] == 0)
          in.push_back(o[k]);
        else if (mode == "edge")
          in.push_back(min(max(t, Expr(0)), d - 1));
        else if (mode == "wrap")
          in.push_back(mod(t, d));
        else // reflect about 0 and d - 1; the clamp changes no value but
             // lets validation's interval arithmetic prove the bounds
          in.push_back(
              min(max(d - 1 - absExpr(d - 1 - absExpr(t)), Expr(0)), d - 1));
      }
      return in;
    });
    return;
  }
  if (mode != "constant")
    ctx.fail("mode '" + mode + "' is not handled");

  // Fill everything with the pad value, then copy the input's interior
  // over it (the second write orders after the first).
  auto params = ExpansionContext::params(rank);
  auto idx = ExpansionContext::indices(params);
  const ir::Container *value = ctx.input("constant_value");
  std::string zero = std::string(ir::dtypeName(y.dtype)) + "(0)";
  if (value)
    ctx.addMap(
        "fill", params, ExpansionContext::fullRanges(y.shape),
        {{"v", value->name, std::vector<Expr>(value->shape.size(), Expr(0))}},
        "y = v", {{"y", y.name, idx}});
  else
    ctx.addMap("fill", params, ExpansionContext::fullRanges(y.shape), {},
               "y = " + zero, {{"y", y.name, idx}});
  // Negative pads crop: the copied region starts inside the input.
  std::vector<ir::Range> ranges;
  std::vector<Expr> inIdx, outIdx;
  for (std::size_t k = 0; k < rank; ++k) {
    Expr count = x.shape[k] + Expr(std::min<std::int64_t>(lo[k], 0)) +
                 Expr(std::min<std::int64_t>(hi[k], 0));
    ranges.emplace_back(Expr(0), max(count, Expr(0)));
    inIdx.push_back(idx[k] + Expr(std::max<std::int64_t>(-lo[k], 0)));
    outIdx.push_back(idx[k] + Expr(std::max<std::int64_t>(lo[k], 0)));
  }
  ctx.addMap("copy", params, ranges, {{"x", x.name, inIdx}}, "y = x",
             {{"y", y.name, outIdx}});
}

/// DepthToSpace (DCR and CRD) and SpaceToDepth: a reshape-transpose-reshape
/// composed into one index map on [N, C, H, W].
void expandDepthToSpace(ExpansionContext &ctx) {
  const ir::Container &x = ctx.requireInput("input");
  const ir::Container &y = firstOutput(ctx);
  if (x.shape.size() != 4)
    ctx.fail("only 4-D inputs are handled");
  requireSameRank(ctx, x, y);
  std::int64_t blocksize = ctx.intAttr("blocksize", 0);
  if (blocksize < 1)
    ctx.fail("blocksize must be at least 1, not " + std::to_string(blocksize));
  Expr b(blocksize);
  std::string mode = ctx.stringAttr("mode", "DCR");
  if (mode != "DCR" && mode != "CRD")
    ctx.fail("mode '" + mode + "' is not handled");
  const Expr &c = y.shape[1];
  copyOver(ctx, x, y, [&](const std::vector<Expr> &o) {
    Expr bh = mod(o[2], b), bw = mod(o[3], b);
    Expr ch =
        mode == "DCR" ? (bh * b + bw) * c + o[1] : (o[1] * b + bh) * b + bw;
    return std::vector<Expr>{o[0], ch, floorDiv(o[2], b), floorDiv(o[3], b)};
  });
}

void expandSpaceToDepth(ExpansionContext &ctx) {
  const ir::Container &x = ctx.requireInput("input");
  const ir::Container &y = firstOutput(ctx);
  if (x.shape.size() != 4)
    ctx.fail("only 4-D inputs are handled");
  requireSameRank(ctx, x, y);
  std::int64_t blocksize = ctx.intAttr("blocksize", 0);
  if (blocksize < 1)
    ctx.fail("blocksize must be at least 1, not " + std::to_string(blocksize));
  Expr b(blocksize);
  const Expr &c = x.shape[1];
  copyOver(ctx, x, y, [&](const std::vector<Expr> &o) {
    Expr ch = mod(o[1], c), blk = floorDiv(o[1], c);
    return std::vector<Expr>{o[0], ch, o[2] * b + floorDiv(blk, b),
                             o[3] * b + mod(blk, b)};
  });
}

const ExpansionRegistrar kReshape{
    {"Reshape", "pure", "copy with de-linearized indices", expandReshape},
    true};
const ExpansionRegistrar kFlatten{
    {"Flatten", "pure", "copy with de-linearized indices", expandReshape},
    true};
const ExpansionRegistrar kSqueeze{
    {"Squeeze", "pure", "copy with de-linearized indices", expandReshape},
    true};
const ExpansionRegistrar kUnsqueeze{
    {"Unsqueeze", "pure", "copy with de-linearized indices", expandReshape},
    true};
const ExpansionRegistrar kTranspose{
    {"Transpose", "pure", "copy with permuted indices", expandTranspose}, true};
const ExpansionRegistrar kConcat{
    {"Concat", "pure", "one copy map per input into its slice", expandConcat},
    true};
const ExpansionRegistrar kSplit{
    {"Split", "pure", "one copy map per output from its slice", expandSplit},
    true};
const ExpansionRegistrar kExpand{
    {"Expand", "pure", "broadcasting copy", expandExpand}, true};
const ExpansionRegistrar kTile{
    {"Tile", "pure", "copy with modulo indices", expandTile}, true};
const ExpansionRegistrar kPad{
    {"Pad", "pure",
     "constant: fill map then interior copy; edge/reflect/wrap: clamped, "
     "reflected or modulo indices",
     expandPad},
    true};
const ExpansionRegistrar kDepthToSpace{
    {"DepthToSpace", "pure", "copy with block index math", expandDepthToSpace},
    true};
const ExpansionRegistrar kSpaceToDepth{
    {"SpaceToDepth", "pure", "copy with block index math", expandSpaceToDepth},
    true};

} // namespace
} // namespace weir::operators
