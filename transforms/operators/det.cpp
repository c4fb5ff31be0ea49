/// \file
/// Pure expansion of Det by the permutation (Leibniz) formula,
///   det A = sum over permutations s of sign(s) prod_i A[i, s(i)],
/// for matrices up to 8 x 8 (40,320 terms; larger ones are refused, where
/// an LU factorization with pivoting, whose row exchanges depend on the
/// data, would be needed). The permutations are a constant table, so each
/// term's factors are picked by a one-hot contraction over the columns,
/// and the terms are summed in f64 before the result is stored in A's
/// dtype: no division, so a singular matrix gives 0 as it should.

#include "transforms/operators/expansion.h"

#include <algorithm>
#include <numeric>

namespace weir::operators {
namespace {

using ir::Expr;

constexpr std::int64_t kMaxOrder = 8;

void expandDet(ExpansionContext &ctx) {
  const ir::Container &a = ctx.requireInput("X");
  const ir::Container &y = ctx.requireOutput("Y");
  if (a.dtype != ir::DType::F32 && a.dtype != ir::DType::F64)
    ctx.fail("X must be float32 or float64");
  const std::size_t rank = a.shape.size();
  if (rank < 2 || y.shape.size() != rank - 2)
    ctx.fail("X must be [..., M, M] and Y its batch shape");
  const std::int64_t n = ctx.constantDim(a.shape[rank - 1]);
  if (ctx.constantDim(a.shape[rank - 2]) != n)
    ctx.fail("X's matrices must be square");
  if (n < 1 || n > kMaxOrder)
    ctx.fail("matrices of order " + std::to_string(n) +
             " are not supported; the permutation formula is used up to " +
             std::to_string(kMaxOrder));

  // Every permutation, in lexicographic order, with its sign.
  std::vector<std::int64_t> perm(static_cast<std::size_t>(n));
  std::iota(perm.begin(), perm.end(), 0);
  std::vector<double> columns, signs;
  do {
    for (std::int64_t c : perm)
      columns.push_back(double(c));
    int inversions = 0;
    for (std::size_t i = 0; i < perm.size(); ++i)
      for (std::size_t j = i + 1; j < perm.size(); ++j)
        inversions += perm[i] > perm[j];
    signs.push_back(inversions % 2 ? -1.0 : 1.0);
  } while (std::next_permutation(perm.begin(), perm.end()));
  const auto terms = std::int64_t(signs.size());
  std::string columnTable = ctx.addConstant(
      "permutations", ctx.tensorOf(ir::DType::I64, {terms, n}, columns));
  std::string signTable =
      ctx.addConstant("signs", ctx.tensorOf(ir::DType::F64, {terms}, signs));
  std::string positions = ctx.addIota("columns", ir::DType::I64, n);

  std::vector<Expr> batchShape(y.shape.begin(), y.shape.end());
  auto batch = ExpansionContext::params(rank - 2, "b");
  auto bidx = ExpansionContext::indices(batch);
  const Expr p = Expr::symbol("p"), i = Expr::symbol("i"),
             j = Expr::symbol("j");
  // factor[b, p, i] = A[b, i, s_p(i)].
  std::vector<Expr> factorShape = batchShape;
  factorShape.push_back(Expr(terms));
  factorShape.push_back(Expr(n));
  std::string factor = ctx.addTransient("factors", ir::DType::F64, factorShape);
  auto withPI = [&](std::vector<Expr> idx) {
    idx.push_back(p);
    idx.push_back(i);
    return idx;
  };
  std::vector<std::string> fp = batch;
  fp.insert(fp.end(), {"p", "i"});
  ctx.addMap("factors_zero", fp, ExpansionContext::fullRanges(factorShape),
             {}, "f = f64(0)", {{"f", factor, withPI(bidx)}});
  std::vector<std::string> pick = fp;
  pick.push_back("j");
  auto pickRanges = ExpansionContext::fullRanges(factorShape);
  pickRanges.emplace_back(Expr(0), Expr(n));
  std::vector<Expr> aIdx = bidx;
  aIdx.insert(aIdx.end(), {i, j});
  ctx.addMap("pick", pick, pickRanges,
             {{"v", a.name, aIdx},
              {"s", columnTable, {p, i}},
              {"c", positions, {j}}},
             "f = select(s == c, f64(v), f64(0))",
             {{"f", factor, withPI(bidx), ir::Wcr::Sum}});
  // sum[b] = sum over p of sign_p prod_i factor[b, p, i].
  std::string sum = ctx.addTransient("sum", ir::DType::F64, batchShape);
  ctx.addMap("sum_zero", batch, ExpansionContext::fullRanges(batchShape), {},
             "t = f64(0)", {{"t", sum, bidx}});
  std::vector<std::string> tp = batch;
  tp.push_back("p");
  auto termRanges = ExpansionContext::fullRanges(batchShape);
  termRanges.emplace_back(Expr(0), Expr(terms));
  std::vector<ir::MappedInput> in{{"g", signTable, {p}}};
  std::string product = "t = g";
  for (std::int64_t k = 0; k < n; ++k) {
    std::vector<Expr> idx = bidx;
    idx.insert(idx.end(), {p, Expr(k)});
    in.push_back({"f" + std::to_string(k), factor, idx});
    product += " * f" + std::to_string(k);
  }
  ctx.addMap("terms", tp, termRanges, in, product,
             {{"t", sum, bidx, ir::Wcr::Sum}});
  ctx.addMap("store", batch, ExpansionContext::fullRanges(batchShape),
             {{"t", sum, bidx}},
             "y = " + std::string(ir::dtypeName(a.dtype)) + "(t)",
             {{"y", y.name, bidx}});
}

const ExpansionRegistrar kDet{
    {"Det", "pure",
     "permutation formula (up to 8 x 8): factors picked one-hot from a "
     "constant table, terms summed in f64",
     expandDet},
    true};

} // namespace
} // namespace weir::operators
