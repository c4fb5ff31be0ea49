/// \file
/// Pure expansion of TfIdfVectorizer over integer tokens. The pool of
/// n-grams is constant (attributes), so counting is one map per n-gram
/// length and skip distance: over (row, pool n-gram, start position), the
/// tasklet compares the n tokens at start + t (skip + 1) with the n-gram's
/// (a constant table) and adds 1 to that n-gram's count. As the operator's
/// definition and ONNX Runtime count them, an n-gram found at several skip
/// distances counts once per distance, and unigrams, which have no gaps,
/// once. The weighted counts then reach their output columns through a
/// one-hot contraction with ngram_indexes: TF gives the count, IDF the
/// weight where the count is not zero, TFIDF their product.

#include "transforms/operators/expansion.h"

#include <algorithm>

namespace weir::operators {
namespace {

using ir::Expr;

void expandTfIdf(ExpansionContext &ctx) {
  const ir::Container &x = ctx.requireInput("X");
  const ir::Container &y = ctx.requireOutput("Y");
  if (!ir::isInteger(x.dtype))
    ctx.fail("string tokens are not supported; only int32 and int64");
  if (ctx.hasAttr("pool_strings"))
    ctx.fail("a pool of strings is not supported; only pool_int64s");
  const std::size_t rank = x.shape.size();
  if ((rank != 1 && rank != 2) || y.shape.size() != rank)
    ctx.fail("X must be [C] or [N, C], and Y of the same rank");
  const std::int64_t rows = rank == 2 ? ctx.constantDim(x.shape[0]) : 1;
  const std::int64_t length = ctx.constantDim(x.shape[rank - 1]);
  const std::int64_t minGram = ctx.intAttr("min_gram_length", 1);
  const std::int64_t maxGram = ctx.intAttr("max_gram_length", 1);
  const std::int64_t maxSkip = ctx.intAttr("max_skip_count", 0);
  const std::string mode = ctx.stringAttr("mode", "TF");
  const std::vector<std::int64_t> counts = ctx.intsAttr("ngram_counts", {});
  const std::vector<std::int64_t> indexes = ctx.intsAttr("ngram_indexes", {});
  const std::vector<std::int64_t> pool = ctx.intsAttr("pool_int64s", {});
  std::vector<double> weights = ctx.floatsAttr("weights", {});
  if (mode != "TF" && mode != "IDF" && mode != "TFIDF")
    ctx.fail("mode must be TF, IDF or TFIDF, not '" + mode + "'");
  if (minGram < 1 || maxGram < minGram || maxSkip < 0)
    ctx.fail("needs 1 <= min_gram_length <= max_gram_length and "
             "max_skip_count >= 0");
  if (indexes.empty() || counts.empty())
    ctx.fail("ngram_counts and ngram_indexes must not be empty");
  if (weights.empty())
    weights.assign(indexes.size(), 1.0);
  if (weights.size() != indexes.size())
    ctx.fail("weights must give one weight per pool n-gram");
  const std::int64_t columns =
      *std::max_element(indexes.begin(), indexes.end()) + 1;
  if (ctx.constantDim(y.shape[rank - 1]) != columns ||
      (rank == 2 && ctx.constantDim(y.shape[0]) != rows))
    ctx.fail("Y must have max(ngram_indexes) + 1 = " +
             std::to_string(columns) + " columns");

  // counts[r, g] for every pool n-gram g, in pool order.
  const auto grams = std::int64_t(indexes.size());
  std::string count = ctx.addTransient("counts", ir::DType::F32,
                                       {Expr(rows), Expr(grams)});
  ctx.addMap("zero", {"r", "g"}, {{Expr(0), Expr(rows)}, {Expr(0), Expr(grams)}},
             {}, "c = f32(0)",
             {{"c", count, {Expr::symbol("r"), Expr::symbol("g")}}});
  auto token = [&](const Expr &position) {
    return rank == 2 ? std::vector<Expr>{Expr::symbol("r"), position}
                     : std::vector<Expr>{position};
  };
  std::int64_t first = 0; // ordinal of the first n-gram of this length
  for (std::size_t n = 1; n <= counts.size(); ++n) {
    const std::int64_t begin = counts[n - 1];
    const std::int64_t end =
        n < counts.size() ? counts[n] : std::int64_t(pool.size());
    if (begin < 0 || end < begin || end > std::int64_t(pool.size()) ||
        (end - begin) % std::int64_t(n) != 0)
      ctx.fail("ngram_counts does not divide pool_int64s into n-grams");
    const std::int64_t here = (end - begin) / std::int64_t(n);
    if (first + here > grams)
      ctx.fail("the pool holds more n-grams than ngram_indexes names");
    if (here == 0 || std::int64_t(n) < minGram || std::int64_t(n) > maxGram) {
      first += here;
      continue;
    }
    std::vector<double> values(pool.begin() + begin, pool.begin() + end);
    std::string table = ctx.addConstant(
        "pool" + std::to_string(n),
        ctx.tensorOf(x.dtype, {here, std::int64_t(n)}, values));
    for (std::int64_t skip = 0; skip <= (n == 1 ? 0 : maxSkip); ++skip) {
      const std::int64_t span = std::int64_t(n - 1) * (skip + 1);
      if (span >= length)
        break;
      std::vector<ir::MappedInput> in;
      std::string match;
      for (std::size_t t = 0; t < n; ++t) {
        std::string k = std::to_string(t);
        in.push_back({"x" + k, x.name,
                      token(Expr::symbol("p") +
                            Expr(std::int64_t(t) * (skip + 1)))});
        in.push_back({"q" + k, table, {Expr::symbol("g"), Expr(std::int64_t(t))}});
        match += (t ? " && x" : "x") + k + " == q" + k;
      }
      ctx.addMap("count" + std::to_string(n) + "_skip" + std::to_string(skip),
                 {"r", "g", "p"},
                 {{Expr(0), Expr(rows)},
                  {Expr(0), Expr(here)},
                  {Expr(0), Expr(length - span)}},
                 in, "c = select(" + match + ", f32(1), f32(0))",
                 {{"c", count,
                   {Expr::symbol("r"), Expr::symbol("g") + Expr(first)},
                   ir::Wcr::Sum}});
    }
    first += here;
  }

  // Y[r, j] = sum over g with ngram_indexes[g] == j of the weighted count.
  std::vector<double> columnOf(indexes.begin(), indexes.end());
  std::string columnTable = ctx.addConstant(
      "columns", ctx.tensorOf(ir::DType::I64, {grams}, columnOf));
  std::string weightTable = ctx.addConstant(
      "weights", ctx.tensorOf(ir::DType::F32, {grams}, weights));
  std::string positions = ctx.addIota("positions", ir::DType::I64, columns);
  auto out = [&](const char *j) {
    return rank == 2 ? std::vector<Expr>{Expr::symbol("r"), Expr::symbol(j)}
                     : std::vector<Expr>{Expr::symbol(j)};
  };
  std::vector<ir::Range> outRanges{{Expr(0), Expr(columns)}};
  std::vector<std::string> outParams{"j"};
  if (rank == 2) {
    outRanges.insert(outRanges.begin(), {Expr(0), Expr(rows)});
    outParams.insert(outParams.begin(), "r");
  }
  ctx.addMap("fill", outParams, outRanges, {}, "y = f32(0)",
             {{"y", y.name, out("j")}});
  std::string weighted = mode == "TF"    ? "c"
                         : mode == "IDF" ? "select(c > f32(0), w, f32(0))"
                                         : "c * w";
  std::vector<std::string> params{"r", "j", "g"};
  ctx.addMap("weigh", params,
             {{Expr(0), Expr(rows)}, {Expr(0), Expr(columns)},
              {Expr(0), Expr(grams)}},
             {{"c", count, {Expr::symbol("r"), Expr::symbol("g")}},
              {"w", weightTable, {Expr::symbol("g")}},
              {"i", columnTable, {Expr::symbol("g")}},
              {"q", positions, {Expr::symbol("j")}}},
             "y = select(i == q, " + weighted + ", f32(0))",
             {{"y", y.name, out("j"), ir::Wcr::Sum}});
}

const ExpansionRegistrar kTfIdf{
    {"TfIdfVectorizer", "pure",
     "n-gram counts by comparison with the constant pool, one map per "
     "length and skip, weighted into columns by a one-hot contraction",
     expandTfIdf},
    true};

} // namespace
} // namespace weir::operators
