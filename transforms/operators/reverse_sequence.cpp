/// \file
/// Pure expansion of ReverseSequence: along time_axis, the first
/// sequence_lens[b] elements of each batch entry b come in reverse order
/// and the rest stay. The lengths are data, so the source position is a
/// one-hot contraction over the time axis, as Gather's index is.

#include "transforms/operators/expansion.h"

namespace weir::operators {
namespace {

using ir::Expr;

void expandReverseSequence(ExpansionContext &ctx) {
  const ir::Container &x = ctx.requireInput("input");
  const ir::Container &lens = ctx.requireInput("sequence_lens");
  const ir::Container &y = ctx.requireOutput("Y");
  std::size_t rank = x.shape.size();
  if (rank < 2)
    ctx.fail("the input must have rank 2 or more");
  if (x.dtype == ir::DType::Bool)
    ctx.fail("bool data cannot be summed");
  auto time = static_cast<std::size_t>(ctx.intAttr("time_axis", 0));
  auto batch = static_cast<std::size_t>(ctx.intAttr("batch_axis", 1));
  if (time > 1 || batch > 1 || time == batch)
    ctx.fail("time_axis and batch_axis must be 0 and 1, in either order");
  if (lens.shape.size() != 1 || lens.dtype != ir::DType::I64)
    ctx.fail("sequence_lens must be an int64 vector");
  std::int64_t steps = ctx.constantDim(x.shape[time]);
  if (ctx.constantDim(lens.shape[0]) != ctx.constantDim(x.shape[batch]))
    ctx.fail("sequence_lens must hold one length per batch entry");

  auto params = ExpansionContext::params(rank);
  auto idx = ExpansionContext::indices(params);
  std::string zero = ExpansionContext::sumIdentity(x.dtype);
  ctx.addMap("fill", params, ExpansionContext::fullRanges(y.shape), {},
             "y = " + zero, {{"y", y.name, idx}});
  std::string positions = ctx.addIota("positions", ir::DType::I64, steps);
  std::vector<std::string> all = params;
  all.push_back("s");
  auto ranges = ExpansionContext::fullRanges(y.shape);
  ranges.emplace_back(Expr(0), Expr(steps));
  std::vector<Expr> from = idx;
  from[time] = Expr::symbol("s");
  ctx.addMap("select", all, ranges,
             {{"x", x.name, from},
              {"n", lens.name, {idx[batch]}},
              {"t", positions, {idx[time]}},
              {"u", positions, {Expr::symbol("s")}}},
             "k = select(t < n, n - 1 - t, t)\ny = select(u == k, x, " + zero +
                 ")",
             {{"y", y.name, idx, ir::Wcr::Sum}});
}

const ExpansionRegistrar kReverseSequence{
    {"ReverseSequence", "pure",
     "one-hot contraction over the time axis at the reversed position",
     expandReverseSequence},
    true};

} // namespace
} // namespace weir::operators
