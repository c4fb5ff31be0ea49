/// \file
/// Pure expansion of TopK by ranking: an element's rank along the axis is
/// the number of elements that come before it in the output order (larger,
/// or smaller when largest=0; among equals, the lower index first, as ONNX
/// orders them), counted by a Sum-resolved contraction over the axis. The
/// k-th output then picks, by a one-hot contraction, the element whose rank
/// is k, and its index. Work is the axis' length squared per row.

#include "transforms/operators/expansion.h"

namespace weir::operators {
namespace {

using ir::Expr;

void expandTopK(ExpansionContext &ctx) {
  const ir::Container &x = ctx.requireInput("X");
  const ir::Container &values = ctx.requireOutput("Values");
  const ir::Container &indices = ctx.requireOutput("Indices");
  if (x.dtype == ir::DType::Bool)
    ctx.fail("bool input cannot be ranked");
  std::size_t rank = x.shape.size();
  if (rank == 0)
    ctx.fail("the input is a scalar");
  auto axis = static_cast<std::size_t>(
      ctx.normalizeAxis(ctx.intAttr("axis", -1), rank));
  std::int64_t n = ctx.constantDim(x.shape[axis]);
  // K sets the outputs' extent along the axis; given as data, the outputs'
  // static shape must be what it says.
  std::int64_t k = ctx.constantDim(values.shape.at(axis));
  if (auto c = ctx.constantInts("K"); c && (c->size() != 1 || (*c)[0] != k))
    ctx.fail("K does not match the outputs' extent " + std::to_string(k));
  if (k > n)
    ctx.fail("K = " + std::to_string(k) + " exceeds the axis' " +
             std::to_string(n) + " elements");
  bool largest = ctx.intAttr("largest", 1) != 0;

  auto params = ExpansionContext::params(rank);
  auto idx = ExpansionContext::indices(params);
  std::string positions = ctx.addIota("positions", ir::DType::I64, n);
  std::string ranks = ctx.addTransient("rank", ir::DType::I64, x.shape);
  ctx.addMap("rank_init", params, ExpansionContext::fullRanges(x.shape), {},
             "r = i64(0)", {{"r", ranks, idx}});
  std::vector<std::string> all = params;
  all.push_back("q");
  std::vector<ir::Range> ranges = ExpansionContext::fullRanges(x.shape);
  ranges.emplace_back(Expr(0), Expr(n));
  std::vector<Expr> other = idx;
  other[axis] = Expr::symbol("q");
  std::string before = largest ? "b > a" : "b < a";
  ctx.addMap("rank", all, ranges,
             {{"a", x.name, idx},
              {"b", x.name, other},
              {"p", positions, {idx[axis]}},
              {"j", positions, {Expr::symbol("q")}}},
             "r = select(" + before + " || (b == a && j < p), i64(1), i64(0))",
             {{"r", ranks, idx, ir::Wcr::Sum}});

  std::vector<Expr> outShape = x.shape;
  outShape[axis] = Expr(k);
  std::string zero = ExpansionContext::sumIdentity(x.dtype);
  ctx.addMap("init", params, ExpansionContext::fullRanges(outShape), {},
             "v = " + zero + "\ni = i64(0)",
             {{"v", values.name, idx}, {"i", indices.name, idx}});
  std::vector<ir::Range> pick = ExpansionContext::fullRanges(outShape);
  pick.emplace_back(Expr(0), Expr(n));
  ctx.addMap("pick", all, pick,
             {{"a", x.name, other},
              {"r", ranks, other},
              {"j", positions, {Expr::symbol("q")}},
              {"o", positions, {idx[axis]}}},
             "h = r == o\nv = select(h, a, " + zero +
                 ")\ni = select(h, j, i64(0))",
             {{"v", values.name, idx, ir::Wcr::Sum},
              {"i", indices.name, idx, ir::Wcr::Sum}});
}

const ExpansionRegistrar kTopK{
    {"TopK", "pure",
     "rank by a Sum-resolved count along the axis, then a one-hot pick",
     expandTopK},
    true};

} // namespace
} // namespace weir::operators
