/// \file
/// Pure expansions of reductions (Reduce*, ArgMax/ArgMin) and of the
/// softmax family. Written the data-centric way: a map writes the identity
/// into an accumulator, a map over the input combines into it through a
/// write-conflict resolution, and a finalize map applies what is left
/// (mean's division, L2's square root, ...). Nothing is hidden in a loop a
/// later tier could not see into.

#include "transforms/operators/reduction.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

namespace weir::operators {
namespace {

std::string dtypeText(ir::DType t) { return std::string(ir::dtypeName(t)); }

/// The identity of `wcr` in `dtype`, as a tasklet expression of that dtype.
std::string identity(ir::Wcr wcr, ir::DType dtype) {
  std::string dt = dtypeText(dtype);
  auto cast = [&](const std::string &e) { return dt + "(" + e + ")"; };
  switch (wcr) {
  case ir::Wcr::Sum:
    return cast("0");
  case ir::Wcr::Prod:
    return cast("1");
  case ir::Wcr::Max:
  case ir::Wcr::Min:
    break;
  }
  bool max = wcr == ir::Wcr::Max;
  if (ir::isFloat(dtype))
    return cast(max ? "-1.0 / 0.0" : "1.0 / 0.0");
  if (ir::isUnsignedInt(dtype)) {
    if (max)
      return cast("0");
    // The largest value wraps around from zero; u64's does not fit an i64
    // literal.
    return "(" + cast("0") + " - " + cast("1") + ")";
  }
  std::int64_t lo = 0, hi = 0;
  switch (dtype) {
  case ir::DType::I8:
    lo = std::numeric_limits<std::int8_t>::min();
    hi = std::numeric_limits<std::int8_t>::max();
    break;
  case ir::DType::I16:
    lo = std::numeric_limits<std::int16_t>::min();
    hi = std::numeric_limits<std::int16_t>::max();
    break;
  case ir::DType::I32:
    lo = std::numeric_limits<std::int32_t>::min();
    hi = std::numeric_limits<std::int32_t>::max();
    break;
  default:
    // The i64 minimum has no literal: its magnitude does not fit.
    return max ? cast("-9223372036854775807 - 1") : cast("9223372036854775807");
  }
  return cast(std::to_string(max ? lo : hi));
}

/// Normalised, sorted, de-duplicated axes; fails on out-of-range ones.
std::vector<bool> reducedAxes(ExpansionContext &ctx,
                              const std::vector<std::int64_t> &axes,
                              std::size_t rank) {
  std::vector<bool> reduced(rank, false);
  for (std::int64_t a : axes) {
    std::int64_t r = static_cast<std::int64_t>(rank);
    if (a < -r || a >= r)
      ctx.fail("axis " + std::to_string(a) + " is out of range for rank " +
               std::to_string(rank));
    reduced[static_cast<std::size_t>(a < 0 ? a + r : a)] = true;
  }
  return reduced;
}

/// The shape of the input with reduced axes set to 1 (kept) or dropped.
std::vector<ir::Expr> reducedShape(const std::vector<ir::Expr> &shape,
                                   const std::vector<bool> &reduced,
                                   bool keepdims) {
  std::vector<ir::Expr> out;
  for (std::size_t d = 0; d < shape.size(); ++d)
    if (!reduced[d])
      out.push_back(shape[d]);
    else if (keepdims)
      out.push_back(ir::Expr(1));
  return out;
}

/// Where input index `idx` lands in a reduced container.
std::vector<ir::Expr> reducedIndex(const std::vector<ir::Expr> &idx,
                                   const std::vector<bool> &reduced,
                                   bool keepdims) {
  std::vector<ir::Expr> out;
  for (std::size_t d = 0; d < idx.size(); ++d)
    if (!reduced[d])
      out.push_back(idx[d]);
    else if (keepdims)
      out.push_back(ir::Expr(0));
  return out;
}

/// acc = identity, then acc (wcr)= f(x) over all of x, where `code` assigns
/// `v` from input `x` (and any `extra` inputs, indexed in x's params).
void accumulate(ExpansionContext &ctx, const std::string &label,
                const ir::Container &x, const std::string &acc,
                const std::vector<bool> &reduced, bool keepdims, ir::Wcr wcr,
                const std::string &code,
                std::vector<ir::MappedInput> extra = {}) {
  const ir::Container &a = ctx.program().container(acc);
  auto op = ExpansionContext::params(a.shape.size(), "o");
  ctx.addMap(label + "_init", op, ExpansionContext::fullRanges(a.shape), {},
             "v = " + identity(wcr, a.dtype),
             {{"v", acc, ExpansionContext::indices(op)}});
  auto ip = ExpansionContext::params(x.shape.size());
  auto idx = ExpansionContext::indices(ip);
  extra.insert(extra.begin(), ir::MappedInput{"x", x.name, idx});
  ctx.addMap(label, ip, ExpansionContext::fullRanges(x.shape), extra, code,
             {{"v", acc, reducedIndex(idx, reduced, keepdims), wcr}});
}

enum class ReduceKind {
  Sum,
  Mean,
  Max,
  Min,
  Prod,
  L1,
  L2,
  LogSum,
  LogSumExp,
  SumSquare
};

Expander reduce(ReduceKind kind) {
  return [kind](ExpansionContext &ctx) {
    const ir::Container &x = ctx.requireInput("data");
    const ir::Container &y = ctx.requireOutput("reduced");
    ir::DType dt = x.dtype;
    bool isFloat = ir::isFloat(dt);
    if (dt == ir::DType::Bool)
      ctx.fail("bool reductions are not supported");
    bool keepdims = ctx.intAttr("keepdims", 1) != 0;
    std::vector<std::int64_t> axes;
    if (ctx.input("axes")) {
      auto c = ctx.constantInts("axes");
      if (!c)
        ctx.fail("input 'axes' is not a constant");
      axes = *c;
    } else {
      axes = ctx.intsAttr("axes", {});
    }
    auto ip = ExpansionContext::params(x.shape.size());
    auto idx = ExpansionContext::indices(ip);
    if (axes.empty() && ctx.intAttr("noop_with_empty_axes", 0) != 0) {
      ctx.addMap("copy", ip, ExpansionContext::fullRanges(x.shape),
                 {{"x", x.name, idx}}, "y = x", {{"y", y.name, idx}});
      return;
    }
    std::vector<bool> reduced = axes.empty()
                                    ? std::vector<bool>(x.shape.size(), true)
                                    : reducedAxes(ctx, axes, x.shape.size());
    if (y.shape.size() != reducedShape(x.shape, reduced, keepdims).size())
      ctx.fail("output rank does not match the reduction");
    std::string t = dtypeText(dt);
    auto yp = ExpansionContext::params(y.shape.size(), "o");
    auto yidx = ExpansionContext::indices(yp);
    auto finalize = [&](const std::string &acc, const std::string &code,
                        std::vector<ir::MappedInput> extra = {}) {
      extra.insert(extra.begin(), ir::MappedInput{"s", acc, yidx});
      ctx.addMap("finalize", yp, ExpansionContext::fullRanges(y.shape), extra,
                 code, {{"y", y.name, yidx}});
    };
    auto transient = [&](const std::string &suffix) {
      return ctx.addTransient(suffix, dt, y.shape);
    };
    // A float function of an integer accumulator goes through f64, as
    // numpy would compute it, and truncates back.
    auto viaFloat = [&](const std::string &fn) {
      return isFloat ? fn + "(s)" : t + "(" + fn + "(f64(s)))";
    };
    switch (kind) {
    case ReduceKind::Sum:
      return accumulate(ctx, "sum", x, y.name, reduced, keepdims, ir::Wcr::Sum,
                        "v = x");
    case ReduceKind::Max:
      return accumulate(ctx, "max", x, y.name, reduced, keepdims, ir::Wcr::Max,
                        "v = x");
    case ReduceKind::Min:
      return accumulate(ctx, "min", x, y.name, reduced, keepdims, ir::Wcr::Min,
                        "v = x");
    case ReduceKind::Prod:
      return accumulate(ctx, "prod", x, y.name, reduced, keepdims,
                        ir::Wcr::Prod, "v = x");
    case ReduceKind::L1:
      // select rather than abs: abs is a float function in the tasklet
      // language, and L1 is defined for integers too.
      return accumulate(ctx, "l1", x, y.name, reduced, keepdims, ir::Wcr::Sum,
                        "v = select(x < 0, -x, x)");
    case ReduceKind::SumSquare:
      return accumulate(ctx, "sumsq", x, y.name, reduced, keepdims,
                        ir::Wcr::Sum, "v = x * x");
    case ReduceKind::Mean: {
      std::int64_t n = ctx.spannedCount(x, reduced);
      std::string acc = transient("sum");
      accumulate(ctx, "sum", x, acc, reduced, keepdims, ir::Wcr::Sum, "v = x");
      return finalize(
          acc, "y = s / " + (isFloat ? ExpansionContext::floatLiteral(double(n))
                                     : std::to_string(n)));
    }
    case ReduceKind::L2: {
      std::string acc = transient("sumsq");
      accumulate(ctx, "sumsq", x, acc, reduced, keepdims, ir::Wcr::Sum,
                 "v = x * x");
      return finalize(acc, "y = " + viaFloat("sqrt"));
    }
    case ReduceKind::LogSum: {
      std::string acc = transient("sum");
      accumulate(ctx, "sum", x, acc, reduced, keepdims, ir::Wcr::Sum, "v = x");
      return finalize(acc, "y = " + viaFloat("log"));
    }
    case ReduceKind::LogSumExp: {
      if (!isFloat)
        ctx.fail("ReduceLogSumExp of " + t + " is not supported");
      // log(sum(exp(x - m))) + m with m the maximum, so exp cannot
      // overflow. When m is -inf (all -inf, or nothing reduced) x - m is
      // NaN for -inf inputs; exp(x) is then the right term (0).
      std::string m = transient("max");
      accumulate(ctx, "max", x, m, reduced, keepdims, ir::Wcr::Max, "v = x");
      std::string acc = transient("sumexp");
      accumulate(ctx, "sumexp", x, acc, reduced, keepdims, ir::Wcr::Sum,
                 "d = x - m\nv = exp(select(d == d, d, x))",
                 {{"m", m, reducedIndex(idx, reduced, keepdims)}});
      return finalize(acc, "y = log(s) + m", {{"m", m, yidx}});
    }
    }
  };
}

/// Writes into `out` (i64, x's shape with `axis` kept or dropped per
/// `keepdims`) the index along `axis` of the first (or last) maximum (or
/// minimum) of x. The index is a value a tasklet reads from a constant
/// 0..n-1 vector, since tasklets cannot see map parameters; it combines
/// through a Min (first) or Max (last) resolution over the positions that
/// hold the extreme value.
/// Returns the name of that constant.
std::string argExtreme(ExpansionContext &ctx, const ir::Container &x,
                       std::int64_t axis, bool isMax, bool last,
                       const std::string &out, bool keepdims) {
  std::vector<bool> reduced(x.shape.size(), false);
  reduced[static_cast<std::size_t>(axis)] = true;
  auto n = x.shape[static_cast<std::size_t>(axis)].asConstant();
  if (!n)
    ctx.fail("the reduced dimension is symbolic");
  std::string iotaName = ctx.addIota("iota", ir::DType::I64, *n);

  std::string m = ctx.addTransient(isMax ? "max" : "min", x.dtype,
                                   reducedShape(x.shape, reduced, true));
  accumulate(ctx, isMax ? "max" : "min", x, m, reduced, true,
             isMax ? ir::Wcr::Max : ir::Wcr::Min, "v = x");
  auto ip = ExpansionContext::params(x.shape.size());
  auto idx = ExpansionContext::indices(ip);
  // A NaN is the extreme (Max and Min propagate it), and numpy reports the
  // NaN's position: `x != x` selects it where `x == m` cannot.
  std::string none = last ? "-1" : std::to_string(*n);
  accumulate(ctx, "index", x, out, reduced, keepdims,
             last ? ir::Wcr::Max : ir::Wcr::Min,
             "v = select(x == m || x != x, k, " + none + ")",
             {{"m", m, reducedIndex(idx, reduced, true)},
              {"k", iotaName, {idx[static_cast<std::size_t>(axis)]}}});
  return iotaName;
}

Expander argReduce(bool isMax) {
  return [isMax](ExpansionContext &ctx) {
    const ir::Container &x = ctx.requireInput("data");
    const ir::Container &y = ctx.requireOutput("reduced");
    if (!ir::isFloat(x.dtype) && !ir::isInteger(x.dtype))
      ctx.fail("unsupported dtype " + dtypeText(x.dtype));
    if (y.dtype != ir::DType::I64)
      ctx.fail("output is not i64");
    std::int64_t axis =
        ctx.normalizeAxis(ctx.intAttr("axis", 0), x.shape.size());
    argExtreme(ctx, x, axis, isMax, ctx.intAttr("select_last_index", 0) != 0,
               y.name, ctx.intAttr("keepdims", 1) != 0);
  };
}

/// The axes a softmax-family node reduces over: its one axis from opset 13,
/// and before that every axis from `axis` (default 1) on, the input read
/// as the 2-D matrix it was flattened to.
std::vector<bool> softmaxAxes(ExpansionContext &ctx, std::size_t rank) {
  int opset = ctx.library().opsetVersion;
  bool flattening = opset != 0 && opset < 13;
  std::int64_t axis =
      ctx.normalizeAxis(ctx.intAttr("axis", flattening ? 1 : -1), rank);
  std::size_t last = flattening ? rank : std::size_t(axis) + 1;
  std::vector<bool> reduced(rank, false);
  for (std::size_t d = std::size_t(axis); d < last; ++d)
    reduced[d] = true;
  return reduced;
}

Expander softmax(bool log) {
  return [log](ExpansionContext &ctx) {
    const ir::Container &x = ctx.requireInput("input");
    const ir::Container &y = ctx.requireOutput("output");
    addSoftmax(ctx, x, softmaxAxes(ctx, x.shape.size()), log, y.name);
  };
}

void hardmax(ExpansionContext &ctx) {
  const ir::Container &x = ctx.requireInput("input");
  const ir::Container &y = ctx.requireOutput("output");
  if (int opset = ctx.library().opsetVersion; opset != 0 && opset < 13)
    ctx.fail("opset " + std::to_string(opset) +
             " semantics (flattening to 2-D) are not supported");
  if (!ir::isFloat(x.dtype))
    ctx.fail("Hardmax of " + dtypeText(x.dtype) + " is not supported");
  std::int64_t axis =
      ctx.normalizeAxis(ctx.intAttr("axis", -1), x.shape.size());
  std::vector<bool> reduced(x.shape.size(), false);
  reduced[static_cast<std::size_t>(axis)] = true;
  std::string a = ctx.addTransient("argmax", ir::DType::I64,
                                   reducedShape(x.shape, reduced, true));
  std::string iota = argExtreme(ctx, x, axis, true, false, a, true);
  auto ip = ExpansionContext::params(x.shape.size());
  auto idx = ExpansionContext::indices(ip);
  ctx.addMap("onehot", ip, ExpansionContext::fullRanges(x.shape),
             {{"a", a, reducedIndex(idx, reduced, true)},
              {"k", iota, {idx[static_cast<std::size_t>(axis)]}}},
             "y = " + dtypeText(y.dtype) + "(select(k == a, 1, 0))",
             {{"y", y.name, idx}});
}

const ExpansionRegistrar kReduceSum{{"ReduceSum", "pure",
                                     "identity init, then a Sum-resolved map",
                                     reduce(ReduceKind::Sum)},
                                    true};
const ExpansionRegistrar kReduceMean{
    {"ReduceMean", "pure", "Sum-resolved map, then divide by the count",
     reduce(ReduceKind::Mean)},
    true};
const ExpansionRegistrar kReduceMax{{"ReduceMax", "pure",
                                     "-inf init, then a Max-resolved map",
                                     reduce(ReduceKind::Max)},
                                    true};
const ExpansionRegistrar kReduceMin{{"ReduceMin", "pure",
                                     "+inf init, then a Min-resolved map",
                                     reduce(ReduceKind::Min)},
                                    true};
const ExpansionRegistrar kReduceProd{{"ReduceProd", "pure",
                                      "one init, then a Prod-resolved map",
                                      reduce(ReduceKind::Prod)},
                                     true};
const ExpansionRegistrar kReduceL1{
    {"ReduceL1", "pure", "Sum-resolved map of |x|", reduce(ReduceKind::L1)},
    true};
const ExpansionRegistrar kReduceL2{{"ReduceL2", "pure",
                                    "Sum-resolved map of x*x, then sqrt",
                                    reduce(ReduceKind::L2)},
                                   true};
const ExpansionRegistrar kReduceLogSum{{"ReduceLogSum", "pure",
                                        "Sum-resolved map, then log",
                                        reduce(ReduceKind::LogSum)},
                                       true};
const ExpansionRegistrar kReduceLogSumExp{
    {"ReduceLogSumExp", "pure",
     "max pass, Sum-resolved exp(x - max), then log + max",
     reduce(ReduceKind::LogSumExp)},
    true};
const ExpansionRegistrar kReduceSumSquare{{"ReduceSumSquare", "pure",
                                           "Sum-resolved map of x*x",
                                           reduce(ReduceKind::SumSquare)},
                                          true};
const ExpansionRegistrar kArgMax{
    {"ArgMax", "pure", "Max pass, then a Min/Max-resolved index pass",
     argReduce(true)},
    true};
const ExpansionRegistrar kArgMin{
    {"ArgMin", "pure", "Min pass, then a Min/Max-resolved index pass",
     argReduce(false)},
    true};
const ExpansionRegistrar kSoftmax{{"Softmax", "pure",
                                   "max, Sum-resolved exp(x - max), normalize",
                                   softmax(false)},
                                  true};
const ExpansionRegistrar kLogSoftmax{
    {"LogSoftmax", "pure", "max, Sum-resolved exp(x - max), x - max - log",
     softmax(true)},
    true};
const ExpansionRegistrar kHardmax{
    {"Hardmax", "pure", "first arg max along the axis, then a one-hot map",
     hardmax},
    true};

} // namespace

void addSoftmax(ExpansionContext &ctx, const ir::Container &x,
                const std::vector<bool> &axes, bool log,
                const std::string &out) {
  if (!ir::isFloat(x.dtype))
    ctx.fail("softmax of " + dtypeText(x.dtype) + " is not supported");
  auto shape = reducedShape(x.shape, axes, true);
  // Subtracting the maximum keeps exp from overflowing.
  std::string m = ctx.addTransient("max", x.dtype, shape);
  accumulate(ctx, "max", x, m, axes, true, ir::Wcr::Max, "v = x");
  auto ip = ExpansionContext::params(x.shape.size());
  auto idx = ExpansionContext::indices(ip);
  auto ridx = reducedIndex(idx, axes, true);
  std::string s = ctx.addTransient("sum", x.dtype, shape);
  accumulate(ctx, "sumexp", x, s, axes, true, ir::Wcr::Sum, "v = exp(x - m)",
             {{"m", m, ridx}});
  ctx.addMap("normalize", ip, ExpansionContext::fullRanges(x.shape),
             {{"x", x.name, idx}, {"m", m, ridx}, {"s", s, ridx}},
             log ? "y = x - m - log(s)" : "y = exp(x - m) / s",
             {{"y", out, idx}});
}

} // namespace weir::operators
