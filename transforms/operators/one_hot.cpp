/// \file
/// Pure expansion of OneHot: y[.., k, ..] (k on `axis`, inserted into the
/// indices' shape) is values[1] where the index, made non-negative by
/// adding depth, equals k, and values[0] elsewhere. Positions reach the
/// tasklet from a constant iota vector; the depth is read as data (it may
/// be a graph input), so an index outside [-depth, depth - 1] matches no
/// position and its row is all values[0], as ONNX says.

#include "transforms/operators/expansion.h"

namespace weir::operators {
namespace {

using ir::Expr;

void expandOneHot(ExpansionContext &ctx) {
  const ir::Container &indices = ctx.requireInput("indices");
  const ir::Container &depth = ctx.requireInput("depth");
  const ir::Container &values = ctx.requireInput("values");
  const ir::Container &y = ctx.requireOutput("output");
  if (indices.dtype == ir::DType::Bool || depth.dtype == ir::DType::Bool)
    ctx.fail("indices and depth must be numbers");
  if (depth.shape.size() > 1 ||
      (depth.shape.size() == 1 && ctx.constantDim(depth.shape[0]) != 1))
    ctx.fail("depth must hold one value");
  if (values.shape.size() != 1 || ctx.constantDim(values.shape[0]) != 2)
    ctx.fail("values must be [off, on]");
  if (y.shape.size() != indices.shape.size() + 1)
    ctx.fail("the output's rank is not the indices' rank plus one");
  std::int64_t axis =
      ctx.normalizeAxis(ctx.intAttr("axis", -1), y.shape.size());
  for (std::size_t d = 0, i = 0; d < y.shape.size(); ++d)
    if (std::int64_t(d) != axis &&
        ctx.constantDim(y.shape[d]) != ctx.constantDim(indices.shape[i++]))
      ctx.fail("the output's shape does not match the indices'");
  std::int64_t positions = ctx.constantDim(y.shape[std::size_t(axis)]);

  auto params = ExpansionContext::params(y.shape.size());
  auto idx = ExpansionContext::indices(params);
  std::vector<Expr> at = idx;
  at.erase(at.begin() + axis);
  std::vector<Expr> once(depth.shape.size(), Expr(0));
  ctx.addMap("select", params, ExpansionContext::fullRanges(y.shape),
             {{"i", indices.name, at},
              {"d", depth.name, once},
              {"k",
               ctx.addIota("positions", ir::DType::I64, positions),
               {idx[std::size_t(axis)]}},
              {"off", values.name, {Expr(0)}},
              {"on", values.name, {Expr(1)}}},
             "n = i64(i)\nm = i64(d)\nj = select(n < 0, n + m, n)\n"
             "y = select(j == k && n < m && n >= 0 - m, on, off)",
             {{"y", y.name, idx}});
}

const ExpansionRegistrar kOneHot{
    {"OneHot", "pure",
     "values[1] where the normalized index equals the position, else "
     "values[0]",
     expandOneHot},
    true};

} // namespace
} // namespace weir::operators
