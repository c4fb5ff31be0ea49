/// \file
/// Pure expansions of the scatters: ScatterElements (and Scatter, its name
/// before opset 11) and ScatterND. Tasklets cannot index with data, so, as
/// Gather does, each is a one-hot contraction: every output element meets
/// every update that could land on it, and an update lands where its index
/// (normalized from a negative one) equals the element's position. Two
/// Sum-resolved accumulators count the updates that land and gather their
/// values (or a Prod-resolved one multiplies them), and a final map writes
/// the data where nothing landed and the update (or data combined with the
/// updates, for reduction "add" and "mul") where something did. Adding
/// -0.0 and multiplying by 1 leave a value unchanged, so a lone update is
/// copied exactly.

#include "transforms/operators/expansion.h"

namespace weir::operators {
namespace {

using ir::Expr;

/// The index-match condition for index value `i` at position `p` of an
/// axis of `n` elements: `i == p` or, for a negative index, `i == p - n`.
std::string matches(const std::string &i, const std::string &p,
                    std::int64_t n) {
  return "(" + i + " == " + p + " || " + i + " == " + p + " - " +
         std::to_string(n) + ")";
}

/// One update's contribution, accumulated over the contraction the caller
/// describes, then the final combine into `y`. `hit` is the tasklet
/// condition that the update (connector `u`) lands on the element.
struct Contraction {
  std::vector<std::string> params;
  std::vector<ir::Range> ranges;
  std::vector<ir::MappedInput> inputs; ///< must include `u`
  std::vector<Expr> target;            ///< the element of y, in params
  std::string hit;
};

void scatterInto(ExpansionContext &ctx, const ir::Container &data,
                 const ir::Container &y, Contraction c) {
  std::string reduction = ctx.stringAttr("reduction", "none");
  if (reduction != "none" && reduction != "add" && reduction != "mul")
    ctx.fail("reduction '" + reduction + "' is not none, add or mul");
  if (data.dtype == ir::DType::Bool)
    ctx.fail("bool data cannot be combined");
  bool mul = reduction == "mul";
  std::string zero = ExpansionContext::sumIdentity(data.dtype);
  std::string one = std::string(ir::dtypeName(data.dtype)) + "(1)";
  std::string neutral = mul ? one : zero;

  auto op = ExpansionContext::params(data.shape.size(), "o");
  auto oidx = ExpansionContext::indices(op);
  auto full = ExpansionContext::fullRanges(data.shape);
  std::string count = ctx.addTransient("count", ir::DType::I64, data.shape);
  std::string values = ctx.addTransient("values", data.dtype, data.shape);
  ctx.addMap("init", op, full, {}, "n = i64(0)\nv = " + neutral,
             {{"n", count, oidx}, {"v", values, oidx}});
  ctx.addMap("land", c.params, c.ranges, c.inputs,
             "h = " + c.hit +
                 "\nn = select(h, i64(1), i64(0))\nv = select(h, u, " +
                 neutral + ")",
             {{"n", count, c.target, ir::Wcr::Sum},
              {"v", values, c.target, mul ? ir::Wcr::Prod : ir::Wcr::Sum}});
  std::string landed = reduction == "none" ? "v" : mul ? "d * v" : "d + v";
  ctx.addMap("combine", op, full,
             {{"d", data.name, oidx}, {"n", count, oidx}, {"v", values, oidx}},
             "y = select(n > 0, " + landed + ", d)", {{"y", y.name, oidx}});
}

/// ScatterElements: y = data, then y[idx with the axis replaced by
/// indices[idx]] = updates[idx] for every idx of indices.
void expandScatterElements(ExpansionContext &ctx) {
  const ir::Container &data = ctx.requireInput("data");
  const ir::Container &ind = ctx.requireInput("indices");
  const ir::Container &upd = ctx.requireInput("updates");
  const ir::Container &y = ctx.requireOutputAt(0);
  std::size_t rank = data.shape.size();
  if (ind.shape.size() != rank || upd.shape.size() != rank)
    ctx.fail("data, indices and updates ranks differ");
  std::int64_t axis = ctx.normalizeAxis(ctx.intAttr("axis", 0), rank);
  for (std::size_t d = 0; d < rank; ++d)
    if (ctx.constantDim(ind.shape[d]) != ctx.constantDim(upd.shape[d]) ||
        (std::int64_t(d) != axis &&
         ctx.constantDim(ind.shape[d]) > ctx.constantDim(data.shape[d])))
      ctx.fail("indices and updates must have one shape, within the data's "
               "off the axis");
  std::int64_t n = ctx.constantDim(data.shape[axis]);
  // Over the updates' positions, the axis' position replaced by the
  // element's position along it (o), and that update's own (k).
  Contraction c;
  c.params = ExpansionContext::params(rank);
  c.ranges = ExpansionContext::fullRanges(ind.shape);
  c.ranges[axis] = ir::Range(Expr(0), Expr(n));
  c.params.push_back("k");
  c.ranges.emplace_back(Expr(0), ind.shape[axis]);
  c.target = ExpansionContext::indices(
      std::vector<std::string>(c.params.begin(), c.params.end() - 1));
  std::vector<Expr> at = c.target;
  at[axis] = Expr::symbol("k");
  c.inputs = {{"i", ind.name, at},
              {"u", upd.name, at},
              {"p", ctx.addIota("positions", ind.dtype, n), {c.target[axis]}}};
  c.hit = matches("i", "p", n);
  scatterInto(ctx, data, y, std::move(c));
}

/// ScatterND: y = data, then y[indices[u]] (a prefix of y's index) =
/// updates[u] for every u of indices' leading dimensions.
void expandScatterND(ExpansionContext &ctx) {
  const ir::Container &data = ctx.requireInput("data");
  const ir::Container &ind = ctx.requireInput("indices");
  const ir::Container &upd = ctx.requireInput("updates");
  const ir::Container &y = ctx.requireOutput("output");
  std::size_t rank = data.shape.size();
  if (ind.shape.empty())
    ctx.fail("indices must have rank 1 or more");
  std::size_t lead = ind.shape.size() - 1;
  auto depth = static_cast<std::size_t>(ctx.constantDim(ind.shape[lead]));
  if (depth == 0 || depth > rank)
    ctx.fail("the index depth " + std::to_string(depth) +
             " is not between 1 and the data's rank " + std::to_string(rank));
  if (upd.shape.size() != lead + rank - depth)
    ctx.fail("updates have rank " + std::to_string(upd.shape.size()) +
             " where indices and data need " +
             std::to_string(lead + rank - depth));
  for (std::size_t d = 0; d < upd.shape.size(); ++d) {
    const Expr &want = d < lead ? ind.shape[d] : data.shape[depth + d - lead];
    if (ctx.constantDim(upd.shape[d]) != ctx.constantDim(want))
      ctx.fail("updates must be indices' leading shape, then the data's "
               "trailing one");
  }
  // Over the element's position (o) and the update's leading position (u).
  Contraction c;
  c.params = ExpansionContext::params(rank, "o");
  c.ranges = ExpansionContext::fullRanges(data.shape);
  c.target = ExpansionContext::indices(c.params);
  std::vector<std::string> up = ExpansionContext::params(lead, "u");
  std::vector<Expr> uidx = ExpansionContext::indices(up);
  for (std::size_t d = 0; d < lead; ++d) {
    c.params.push_back(up[d]);
    c.ranges.emplace_back(Expr(0), ind.shape[d]);
  }
  std::vector<Expr> updIndex = uidx;
  updIndex.insert(updIndex.end(), c.target.begin() + depth, c.target.end());
  c.inputs.push_back({"u", upd.name, updIndex});
  for (std::size_t t = 0; t < depth; ++t) {
    std::string s = std::to_string(t);
    std::vector<Expr> at = uidx;
    at.push_back(Expr(static_cast<std::int64_t>(t)));
    std::int64_t n = ctx.constantDim(data.shape[t]);
    c.inputs.push_back({"i" + s, ind.name, at});
    c.inputs.push_back(
        {"p" + s, ctx.addIota("positions" + s, ind.dtype, n), {c.target[t]}});
    c.hit += (t ? " && " : "") + matches("i" + s, "p" + s, n);
  }
  scatterInto(ctx, data, y, std::move(c));
}

const ExpansionRegistrar kScatterElements{
    {"ScatterElements", "pure",
     "one-hot contraction of the updates onto the axis, then a combine",
     expandScatterElements},
    true};
const ExpansionRegistrar kScatter{
    {"Scatter", "pure", "as ScatterElements (its name before opset 11)",
     expandScatterElements},
    true};
const ExpansionRegistrar kScatterND{
    {"ScatterND", "pure",
     "one-hot contraction of the updates onto the indexed prefix, then a "
     "combine",
     expandScatterND},
    true};

} // namespace
} // namespace weir::operators
