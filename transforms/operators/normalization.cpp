/// \file
/// Pure expansions of the normalisation operators. Statistics are
/// reductions written the data-centric way (a zero-initialised accumulator
/// and a Sum-resolved map over the input), and the normalisation itself is
/// one elementwise map reading the statistics through broadcasting indices.

#include "transforms/operators/broadcast.h"
#include "transforms/operators/expansion.h"

#include <charconv>

namespace weir::operators {
namespace {

std::string dtypeText(ir::DType t) { return std::string(ir::dtypeName(t)); }

/// The shape with reduced axes set to 1.
std::vector<ir::Expr> keptShape(const std::vector<ir::Expr> &shape,
                                const std::vector<bool> &reduced) {
  std::vector<ir::Expr> out = shape;
  for (std::size_t d = 0; d < shape.size(); ++d)
    if (reduced[d])
      out[d] = ir::Expr(1);
  return out;
}

std::vector<ir::Expr> keptIndex(const std::vector<ir::Expr> &idx,
                                const std::vector<bool> &reduced) {
  std::vector<ir::Expr> out = idx;
  for (std::size_t d = 0; d < idx.size(); ++d)
    if (reduced[d])
      out[d] = ir::Expr(0);
  return out;
}

/// acc = 0, then acc += f(x) over x, `code` assigning `v` from `x` and the
/// `extra` inputs (indexed in x's params `i0, i1, ...`).
void sumInto(ExpansionContext &ctx, const std::string &label,
             const ir::Container &x, const std::string &acc,
             const std::vector<bool> &reduced, const std::string &code,
             std::vector<ir::MappedInput> extra = {}) {
  const ir::Container &a = ctx.program().container(acc);
  auto op = ExpansionContext::params(a.shape.size(), "o");
  ctx.addMap(label + "_init", op, ExpansionContext::fullRanges(a.shape), {},
             "v = " + dtypeText(a.dtype) + "(0)",
             {{"v", acc, ExpansionContext::indices(op)}});
  auto ip = ExpansionContext::params(x.shape.size());
  auto idx = ExpansionContext::indices(ip);
  extra.insert(extra.begin(), ir::MappedInput{"x", x.name, idx});
  ctx.addMap(label, ip, ExpansionContext::fullRanges(x.shape), extra, code,
             {{"v", acc, keptIndex(idx, reduced), ir::Wcr::Sum}});
}

/// mean = sum(x) / n into a fresh transient (or `into`), returning its name.
std::string meanOf(ExpansionContext &ctx, const ir::Container &x,
                   const std::vector<bool> &reduced, const std::string &n,
                   const std::string &into = "") {
  auto shape = keptShape(x.shape, reduced);
  std::string s = ctx.addTransient("sum", x.dtype, shape);
  sumInto(ctx, "sum", x, s, reduced, "v = x");
  std::string m =
      into.empty() ? ctx.addTransient("mean", x.dtype, shape) : into;
  auto p = ExpansionContext::params(shape.size(), "o");
  auto idx = ExpansionContext::indices(p);
  ctx.addMap("mean", p, ExpansionContext::fullRanges(shape), {{"s", s, idx}},
             "m = s / " + n, {{"m", m, idx}});
  return m;
}

void requireFloat(ExpansionContext &ctx, const ir::Container &x) {
  if (!ir::isFloat(x.dtype))
    ctx.fail(dtypeText(x.dtype) + " input is not supported");
}

/// The mean of x over the `reduced` axes and the sum of squared deviations
/// from it, in two passes rather than E[x^2] - E[x]^2, which cancels
/// badly; both with the reduced axes kept as 1.
struct Moments {
  std::string count; ///< elements per statistic, a tasklet literal
  std::string mean, sqdev;
};

Moments momentsOf(ExpansionContext &ctx, const ir::Container &x,
                  const std::vector<bool> &reduced) {
  Moments m;
  m.count = ExpansionContext::floatLiteral(
      static_cast<double>(ctx.spannedCount(x, reduced)));
  m.mean = meanOf(ctx, x, reduced, m.count);
  m.sqdev = ctx.addTransient("sqdev", x.dtype, keptShape(x.shape, reduced));
  auto idx = ExpansionContext::indices(ExpansionContext::params(x.shape.size()));
  sumInto(ctx, "sqdev", x, m.sqdev, reduced, "d = x - m\nv = d * d",
          {{"m", m.mean, keptIndex(idx, reduced)}});
  return m;
}

/// BatchNormalization with training_mode=1 (opset 14 on): normalized with
/// the batch's own statistics over every axis but the channels (the
/// variance the population's), and the running statistics, when asked
/// for, moved toward them: running = input * momentum + batch * (1 -
/// momentum).
void batchNormalizationTraining(ExpansionContext &ctx) {
  const ir::Container &x = ctx.requireInput("X");
  const ir::Container &y = ctx.requireOutput("Y");
  requireFloat(ctx, x);
  if (x.shape.size() < 2)
    ctx.fail("input of rank < 2 has no channel axis");
  std::vector<bool> reduced(x.shape.size(), true);
  reduced[1] = false;
  const Moments moments = momentsOf(ctx, x, reduced);
  const std::string &n = moments.count, &m = moments.mean, &q = moments.sqdev;
  auto ip = ExpansionContext::params(x.shape.size());
  auto idx = ExpansionContext::indices(ip);
  auto kidx = keptIndex(idx, reduced);
  std::vector<ir::MappedInput> in{{"x", x.name, idx}, {"m", m, kidx},
                                  {"q", q, kidx}};
  for (auto [conn, var] : {std::pair{"scale", "s"}, std::pair{"B", "b"}}) {
    const ir::Container &c = ctx.requireInput(conn);
    if (c.dtype != x.dtype || c.shape.size() != 1)
      ctx.fail(std::string("input '") + conn +
               "' must be a vector of X's dtype");
    in.push_back({var, c.name, {idx[1]}});
  }
  double eps = ctx.floatAttr("epsilon", 1e-5);
  ctx.addMap("normalize", ip, ExpansionContext::fullRanges(x.shape), in,
             "y = (x - m) / sqrt(q / " + n + " + " +
                 ExpansionContext::floatLiteral(eps) + ") * s + b",
             {{"y", y.name, idx}});
  const std::string momentum =
      ExpansionContext::floatLiteral(ctx.floatAttr("momentum", 0.9));
  std::vector<ir::Expr> channel(x.shape.size(), ir::Expr(0));
  channel[1] = ir::Expr::symbol("c");
  auto running = [&](const char *input, const char *output,
                     const std::string &batch, const std::string &value) {
    const ir::Container *out = ctx.output(output);
    if (!out)
      return;
    const ir::Container &prior = ctx.requireInput(input);
    ctx.addMap(std::string(output), {"c"}, {{ir::Expr(0), x.shape[1]}},
               {{"p", prior.name, {ir::Expr::symbol("c")}},
                {"t", batch, channel}},
               "r = p * " + momentum + " + " + value + " * (1.0 - " +
                   momentum + ")",
               {{"r", out->name, {ir::Expr::symbol("c")}}});
  };
  running("input_mean", "running_mean", m, "t");
  running("input_var", "running_var", q, "t / " + n);
}

void batchNormalization(ExpansionContext &ctx) {
  if (ctx.intAttr("training_mode", 0) != 0) {
    if (!ctx.input("input_mean"))
      ctx.fail("training_mode=1 before opset 14 is not supported");
    batchNormalizationTraining(ctx);
    return;
  }
  // Opsets before 9 could normalise per element (spatial=0).
  if (ctx.intAttr("spatial", 1) != 1)
    ctx.fail("spatial=0 is not supported");
  // Any output beyond Y (running or saved statistics, by opset) is a
  // training output.
  if (ctx.node().outputs.size() > 1)
    ctx.fail("statistics outputs are not supported (inference only)");
  const ir::Container &x = ctx.requireInput("X");
  const ir::Container &y = ctx.requireOutput("Y");
  requireFloat(ctx, x);
  if (x.shape.size() < 2)
    ctx.fail("input of rank < 2 has no channel axis");
  std::vector<ir::MappedInput> in;
  auto ip = ExpansionContext::params(x.shape.size());
  auto idx = ExpansionContext::indices(ip);
  in.push_back({"x", x.name, idx});
  // BatchNormalization-9 (opset 9-13) names the statistics "mean" and
  // "var"; opset 14 renamed them "input_mean" and "input_var".
  bool renamed = ctx.input("input_mean") != nullptr;
  for (auto [conn, var] : {std::pair{"scale", "s"}, std::pair{"B", "b"},
                           std::pair{renamed ? "input_mean" : "mean", "m"},
                           std::pair{renamed ? "input_var" : "var", "v"}}) {
    const ir::Container &c = ctx.requireInput(conn);
    if (c.dtype != x.dtype)
      ctx.fail(std::string("input '") + conn + "' has another dtype than X");
    if (c.shape.size() != 1)
      ctx.fail(std::string("input '") + conn + "' is not a vector");
    in.push_back({var, c.name, {idx[1]}});
  }
  double eps = ctx.floatAttr("epsilon", 1e-5);
  ctx.addMap("normalize", ip, ExpansionContext::fullRanges(x.shape), in,
             "y = (x - m) / sqrt(v + " + ExpansionContext::floatLiteral(eps) +
                 ") * s + b",
             {{"y", y.name, idx}});
}

void instanceNormalization(ExpansionContext &ctx) {
  const ir::Container &x = ctx.requireInput("input");
  const ir::Container &scale = ctx.requireInput("scale");
  const ir::Container &b = ctx.requireInput("B");
  const ir::Container &y = ctx.requireOutput("output");
  requireFloat(ctx, x);
  if (x.shape.size() < 2)
    ctx.fail("input of rank < 2 has no channel axis");
  if (scale.dtype != x.dtype || b.dtype != x.dtype)
    ctx.fail("scale and B must have the input's dtype");
  std::vector<bool> reduced(x.shape.size(), true);
  reduced[0] = reduced[1] = false;
  const Moments moments = momentsOf(ctx, x, reduced);
  const std::string &n = moments.count, &m = moments.mean, &q = moments.sqdev;
  auto ip = ExpansionContext::params(x.shape.size());
  auto idx = ExpansionContext::indices(ip);
  auto kidx = keptIndex(idx, reduced);
  ctx.addMap(
      "normalize", ip, ExpansionContext::fullRanges(x.shape),
      {{"x", x.name, idx},
       {"m", m, kidx},
       {"q", q, kidx},
       {"s", scale.name, {idx[1]}},
       {"b", b.name, {idx[1]}}},
      "y = (x - m) / sqrt(q / " + n + " + " +
          ExpansionContext::floatLiteral(ctx.floatAttr("epsilon", 1e-5)) +
          ") * s + b",
      {{"y", y.name, idx}});
}

void layerNormalization(ExpansionContext &ctx) {
  const ir::Container &x = ctx.requireInput("X");
  const ir::Container &scale = ctx.requireInput("Scale");
  const ir::Container *b = ctx.input("B");
  const ir::Container &y = ctx.requireOutput("Y");
  // The statistics are computed in stash_type (f32); for an f32 input that
  // is the input's own arithmetic, other inputs would need casts throughout.
  if (x.dtype != ir::DType::F32 || ctx.intAttr("stash_type", 1) != 1)
    ctx.fail("only f32 input with stash_type=1 is supported");
  if (scale.dtype != x.dtype || (b && b->dtype != x.dtype))
    ctx.fail("Scale and B must have the input's dtype");
  auto rank = static_cast<std::int64_t>(x.shape.size());
  std::int64_t axis = ctx.intAttr("axis", -1);
  if (axis < -rank || axis >= rank)
    ctx.fail("axis " + std::to_string(axis) + " is out of range");
  if (axis < 0)
    axis += rank;
  std::vector<bool> reduced(x.shape.size(), false);
  for (std::int64_t d = axis; d < rank; ++d)
    reduced[static_cast<std::size_t>(d)] = true;
  auto shape = keptShape(x.shape, reduced);
  const ir::Container *meanOut = ctx.output("Mean");
  const ir::Container *invOut = ctx.output("InvStdDev");
  for (const ir::Container *o : {meanOut, invOut})
    if (o && (o->dtype != x.dtype || o->shape.size() != shape.size()))
      ctx.fail("output '" + o->name + "' has an unexpected dtype or rank");

  std::string n = ExpansionContext::floatLiteral(
      static_cast<double>(ctx.spannedCount(x, reduced)));
  std::string m = meanOf(ctx, x, reduced, n, meanOut ? meanOut->name : "");
  auto ip = ExpansionContext::params(x.shape.size());
  auto idx = ExpansionContext::indices(ip);
  auto kidx = keptIndex(idx, reduced);
  std::string q = ctx.addTransient("sqdev", x.dtype, shape);
  sumInto(ctx, "sqdev", x, q, reduced, "d = x - m\nv = d * d",
          {{"m", m, kidx}});
  std::string inv =
      invOut ? invOut->name : ctx.addTransient("invstd", x.dtype, shape);
  auto op = ExpansionContext::params(shape.size(), "o");
  auto oidx = ExpansionContext::indices(op);
  ctx.addMap(
      "invstd", op, ExpansionContext::fullRanges(shape), {{"q", q, oidx}},
      "r = 1.0 / sqrt(q / " + n + " + " +
          ExpansionContext::floatLiteral(ctx.floatAttr("epsilon", 1e-5)) + ")",
      {{"r", inv, oidx}});
  std::vector<ir::MappedInput> in = {
      {"x", x.name, idx},
      {"m", m, kidx},
      {"r", inv, kidx},
      {"s", scale.name, broadcastIndex(scale.shape, x.shape, idx)}};
  if (b)
    in.push_back({"b", b->name, broadcastIndex(b->shape, x.shape, idx)});
  ctx.addMap("normalize", ip, ExpansionContext::fullRanges(x.shape), in,
             b ? "y = (x - m) * r * s + b" : "y = (x - m) * r * s",
             {{"y", y.name, idx}});
}

void meanVarianceNormalization(ExpansionContext &ctx) {
  const ir::Container &x = ctx.requireInput("X");
  const ir::Container &y = ctx.requireOutput("Y");
  requireFloat(ctx, x);
  auto rank = static_cast<std::int64_t>(x.shape.size());
  std::vector<bool> reduced(x.shape.size(), false);
  for (std::int64_t a : ctx.intsAttr("axes", {0, 2, 3})) {
    if (a < -rank || a >= rank)
      ctx.fail("axis " + std::to_string(a) + " is out of range");
    reduced[static_cast<std::size_t>(a < 0 ? a + rank : a)] = true;
  }
  std::string n = ExpansionContext::floatLiteral(
      static_cast<double>(ctx.spannedCount(x, reduced)));
  auto shape = keptShape(x.shape, reduced);
  // As ONNX's function body computes it: the variance is E[x^2] - E[x]^2
  // and the epsilon is added to the standard deviation.
  std::string s = ctx.addTransient("sum", x.dtype, shape);
  sumInto(ctx, "sum", x, s, reduced, "v = x");
  std::string q = ctx.addTransient("sumsq", x.dtype, shape);
  sumInto(ctx, "sumsq", x, q, reduced, "v = x * x");
  auto ip = ExpansionContext::params(x.shape.size());
  auto idx = ExpansionContext::indices(ip);
  auto kidx = keptIndex(idx, reduced);
  ctx.addMap("normalize", ip, ExpansionContext::fullRanges(x.shape),
             {{"x", x.name, idx}, {"s", s, kidx}, {"q", q, kidx}},
             "m = s / " + n + "\nv = q / " + n +
                 " - m * m\ny = (x - m) / (sqrt(v) + 1e-09)",
             {{"y", y.name, idx}});
}

void lpNormalization(ExpansionContext &ctx) {
  const ir::Container &x = ctx.requireInput("input");
  const ir::Container &y = ctx.requireOutput("output");
  requireFloat(ctx, x);
  std::int64_t p = ctx.intAttr("p", 2);
  if (p != 1 && p != 2)
    ctx.fail("p=" + std::to_string(p) + " is not supported (only 1 and 2)");
  auto rank = static_cast<std::int64_t>(x.shape.size());
  std::int64_t axis = ctx.intAttr("axis", -1);
  if (axis < -rank || axis >= rank)
    ctx.fail("axis " + std::to_string(axis) + " is out of range");
  std::vector<bool> reduced(x.shape.size(), false);
  reduced[static_cast<std::size_t>(axis < 0 ? axis + rank : axis)] = true;
  std::string s =
      ctx.addTransient("norm", x.dtype, keptShape(x.shape, reduced));
  sumInto(ctx, "norm", x, s, reduced, p == 1 ? "v = abs(x)" : "v = x * x");
  auto ip = ExpansionContext::params(x.shape.size());
  auto idx = ExpansionContext::indices(ip);
  ctx.addMap("normalize", ip, ExpansionContext::fullRanges(x.shape),
             {{"x", x.name, idx}, {"s", s, keptIndex(idx, reduced)}},
             p == 1 ? "y = x / s" : "y = x / sqrt(s)", {{"y", y.name, idx}});
}

/// LRN: y = x / (bias + alpha / size * s)^beta, where s sums the squares
/// of x over a window of `size` channels around each one. The squares go
/// into a zero-padded transient (floor((size - 1) / 2) channels before,
/// the rest after), so the window's Sum-resolved map never reads outside
/// a container.
void localResponseNormalization(ExpansionContext &ctx) {
  const ir::Container &x = ctx.requireInput("X");
  const ir::Container &y = ctx.requireOutput("Y");
  if (!ir::isFloat(x.dtype))
    ctx.fail("LRN of " + dtypeText(x.dtype) + " is not supported");
  if (x.shape.size() < 3)
    ctx.fail("the input must be [N, C, d1, ...]");
  std::int64_t size = ctx.intAttr("size", 0);
  if (size < 1)
    ctx.fail("size must be 1 or more");
  double alpha = ctx.floatAttr("alpha", 1e-4),
         beta = ctx.floatAttr("beta", 0.75);
  double bias = ctx.floatAttr("bias", 1.0);
  std::int64_t before = (size - 1) / 2;
  auto params = ExpansionContext::params(x.shape.size());
  auto idx = ExpansionContext::indices(params);
  auto full = ExpansionContext::fullRanges(x.shape);
  std::vector<ir::Expr> padded = x.shape;
  padded[1] = x.shape[1] + ir::Expr(size - 1);
  std::string squares = ctx.addTransient("squares", x.dtype, padded);
  std::string zero = dtypeText(x.dtype) + "(0)";
  ctx.addMap("pad", params, ExpansionContext::fullRanges(padded), {},
             "v = " + zero, {{"v", squares, idx}});
  std::vector<ir::Expr> shifted = idx;
  shifted[1] = idx[1] + ir::Expr(before);
  ctx.addMap("square", params, full, {{"x", x.name, idx}}, "v = x * x",
             {{"v", squares, shifted}});
  std::string sum = ctx.addTransient("sum", x.dtype, x.shape);
  ctx.addMap("init", params, full, {}, "v = " + zero, {{"v", sum, idx}});
  auto window = params;
  window.push_back("k");
  auto ranges = full;
  ranges.emplace_back(ir::Expr(0), ir::Expr(size));
  std::vector<ir::Expr> tap = idx;
  tap[1] = idx[1] + ir::Expr::symbol("k");
  ctx.addMap("window", window, ranges, {{"q", squares, tap}}, "v = q",
             {{"v", sum, idx, ir::Wcr::Sum}});
  ctx.addMap("normalize", params, full, {{"x", x.name, idx}, {"s", sum, idx}},
             "y = x / pow(" + ExpansionContext::floatLiteral(bias) + " + " +
                 ExpansionContext::floatLiteral(alpha / double(size)) +
                 " * s, " + ExpansionContext::floatLiteral(beta) + ")",
             {{"y", y.name, idx}});
}

const ExpansionRegistrar kBatchNormalization{
    {"BatchNormalization", "pure",
     "inference: (x - mean) / sqrt(var + eps) * scale + B, one map",
     batchNormalization},
    true};
const ExpansionRegistrar kInstanceNormalization{
    {"InstanceNormalization", "pure",
     "per-instance mean and squared deviations (Sum-resolved), normalize",
     instanceNormalization},
    true};
const ExpansionRegistrar kLayerNormalization{
    {"LayerNormalization", "pure",
     "mean and squared deviations over the trailing axes, inverse std, "
     "normalize",
     layerNormalization},
    true};
const ExpansionRegistrar kMeanVarianceNormalization{
    {"MeanVarianceNormalization", "pure",
     "Sum-resolved sum and sum of squares, then (x - mean) / (std + 1e-9)",
     meanVarianceNormalization},
    true};
const ExpansionRegistrar kLrn{
    {"LRN", "pure",
     "squares into a channel-padded transient, Sum-resolved window, divide",
     localResponseNormalization},
    true};
const ExpansionRegistrar kLpNormalization{
    {"LpNormalization", "pure", "Sum-resolved L1 or L2 norm, then divide",
     lpNormalization},
    true};

} // namespace
} // namespace weir::operators
