/// \file
/// Pure expansion of CumSum: y[.., i, ..] is the sum of x[.., j, ..] over
/// the positions j along the axis up to i (before i when exclusive; from
/// the end when reverse). It is a contraction over the axis with a
/// triangular mask, Sum-resolved into y; positions reach the tasklet from
/// constant iota vectors. A constant axis makes one map. An axis given as
/// data (a graph input) makes one masked map per axis it could name, each
/// keeping its terms only where the data names it, so the answer is exact
/// for whichever axis arrives at run time.

#include "transforms/operators/expansion.h"

namespace weir::operators {
namespace {

using ir::Expr;

/// Contraction visits past which the expansion refuses: the work is the
/// input's size times the axis' length, quadratic in the axis.
constexpr double kMaxVisits = 1e8;

void expandCumSum(ExpansionContext &ctx) {
  const ir::Container &x = ctx.requireInput("x");
  const ir::Container &axisIn = ctx.requireInput("axis");
  const ir::Container &y = ctx.requireOutput("y");
  auto rank = static_cast<std::int64_t>(x.shape.size());
  if (rank == 0)
    ctx.fail("the input is a scalar; CumSum needs an axis");
  if (x.dtype == ir::DType::Bool)
    ctx.fail("bool data cannot be summed");
  if (axisIn.dtype != ir::DType::I32 && axisIn.dtype != ir::DType::I64)
    ctx.fail("axis must be int32 or int64");
  if (axisIn.shape.size() > 1 ||
      (axisIn.shape.size() == 1 && ctx.constantDim(axisIn.shape[0]) != 1))
    ctx.fail("axis must hold one value");
  bool exclusive = ctx.intAttr("exclusive", 0) != 0;
  bool reverse = ctx.intAttr("reverse", 0) != 0;

  std::vector<std::int64_t> candidates;
  std::optional<std::vector<std::int64_t>> constant = ctx.constantInts("axis");
  if (constant && constant->size() != 1)
    ctx.fail("axis must hold one value");
  if (constant)
    candidates.push_back(ctx.normalizeAxis(constant->at(0), x.shape.size()));
  else
    for (std::int64_t d = 0; d < rank; ++d)
      candidates.push_back(d);

  double elements = 1;
  for (const Expr &e : x.shape)
    elements *= static_cast<double>(ctx.constantDim(e));

  auto params = ExpansionContext::params(x.shape.size());
  auto idx = ExpansionContext::indices(params);
  std::string zero = std::string(ir::dtypeName(x.dtype)) + "(0)";
  ctx.addMap("init", params, ExpansionContext::fullRanges(y.shape), {},
             "v = " + zero, {{"v", y.name, idx}});
  const char *order =
      reverse ? (exclusive ? " > " : " >= ") : (exclusive ? " < " : " <= ");
  double visits = 0;
  for (std::int64_t d : candidates) {
    auto a = static_cast<std::size_t>(d);
    std::int64_t n = ctx.constantDim(x.shape[a]);
    visits += elements * static_cast<double>(n);
    if (visits > kMaxVisits)
      ctx.fail("a cumulative sum this long is too costly as a masked "
               "contraction");
    std::string positions =
        ctx.addIota("positions" + std::to_string(d), ir::DType::I64, n);
    std::vector<std::string> all = params;
    all.push_back("j");
    std::vector<ir::Range> ranges = ExpansionContext::fullRanges(x.shape);
    ranges.emplace_back(Expr(0), Expr(n));
    std::vector<Expr> from = idx;
    from[a] = Expr::symbol("j");
    std::vector<ir::MappedInput> inputs{{"x", x.name, from},
                                        {"p", positions, {Expr::symbol("j")}},
                                        {"q", positions, {idx[a]}}};
    std::string keep = "p" + std::string(order) + "q";
    if (!constant) {
      std::vector<Expr> at(axisIn.shape.size(), Expr(0));
      inputs.push_back({"ax", axisIn.name, at});
      keep += " && (i64(ax) == " + std::to_string(d) +
              " || i64(ax) == " + std::to_string(d - rank) + ")";
    }
    ctx.addMap("sum" + std::to_string(d), all, ranges, inputs,
               "v = select(" + keep + ", x, " + zero + ")",
               {{"v", y.name, idx, ir::Wcr::Sum}});
  }
}

const ExpansionRegistrar kCumSum{
    {"CumSum", "pure",
     "triangular-masked contraction over the axis, Sum-resolved", expandCumSum},
    true};

} // namespace
} // namespace weir::operators
