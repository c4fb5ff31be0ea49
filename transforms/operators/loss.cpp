/// \file
/// Pure expansions of the loss operators: NegativeLogLikelihoodLoss, and
/// SoftmaxCrossEntropyLoss as a log-softmax over the class axis followed by
/// the same negative log-likelihood. Tasklets cannot index with data, so the
/// class a target names is picked by a one-hot contraction over the class
/// axis, as Gather does: each (sample, class) pair contributes its term
/// where the class equals the target and the target is not ignore_index.
/// The reductions are Sum-resolved accumulators; "mean" divides by the sum
/// of the picked weights (the count of targets not ignored, without
/// weights), as ONNX defines it.

#include "transforms/operators/reduction.h"

namespace weir::operators {
namespace {

using ir::Expr;

/// x's index with the class axis (1) dropped: where a target lives.
std::vector<Expr> withoutClass(const std::vector<Expr> &idx) {
  std::vector<Expr> out{idx[0]};
  out.insert(out.end(), idx.begin() + 2, idx.end());
  return out;
}

/// The negative log-likelihood of log-probabilities `logp` ([N, C] or
/// [N, C, d1, ...]) at `target` ([N] or [N, d1, ...], i32 or i64) with
/// optional class `weight` [C], reduced as `reduction` says into `loss`.
void negativeLogLikelihood(ExpansionContext &ctx, const ir::Container &logp,
                           const ir::Container &target,
                           const ir::Container *weight,
                           const ir::Container &loss) {
  std::size_t rank = logp.shape.size();
  if (rank < 2)
    ctx.fail("input has rank " + std::to_string(rank) +
             "; it must be [N, C] or [N, C, d1, ...]");
  if (!ir::isFloat(logp.dtype))
    ctx.fail("input of " + std::string(ir::dtypeName(logp.dtype)) +
             " is not supported");
  if (target.dtype != ir::DType::I32 && target.dtype != ir::DType::I64)
    ctx.fail("target must be int32 or int64, not " +
             std::string(ir::dtypeName(target.dtype)));
  if (target.shape.size() != rank - 1)
    ctx.fail("target has rank " + std::to_string(target.shape.size()) +
             " where the input's rank " + std::to_string(rank) + " needs " +
             std::to_string(rank - 1));
  std::int64_t classes = ctx.constantDim(logp.shape[1]);
  if (weight && (weight->shape.size() != 1 || weight->dtype != logp.dtype ||
                 ctx.constantDim(weight->shape[0]) != classes))
    ctx.fail("weight must be a " + std::string(ir::dtypeName(logp.dtype)) +
             " vector of the " + std::to_string(classes) + " classes");
  std::string reduction = ctx.stringAttr("reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean")
    ctx.fail("reduction '" + reduction + "' is not none, sum or mean");

  std::string t(ir::dtypeName(target.dtype));
  std::string picked = "k == t";
  if (ctx.hasAttr("ignore_index"))
    picked += " && t != " + t + "(" +
              std::to_string(ctx.intAttr("ignore_index", 0)) + ")";
  std::string zero = std::string(ir::dtypeName(logp.dtype)) + "(0)";
  std::string one = std::string(ir::dtypeName(logp.dtype)) + "(1)";

  auto ip = ExpansionContext::params(rank);
  auto idx = ExpansionContext::indices(ip);
  std::vector<ir::MappedInput> inputs{
      {"x", logp.name, idx},
      {"t", target.name, withoutClass(idx)},
      {"k", ctx.addIota("classes", target.dtype, classes), {idx[1]}}};
  if (weight)
    inputs.push_back({"w", weight->name, {idx[1]}});
  std::string term = "p = " + picked + "\nv = select(p, -(x" +
                     (weight ? std::string(" * w") : "") + "), " + zero + ")";
  auto init = [&](const std::string &acc) {
    const ir::Container &a = ctx.program().container(acc);
    auto op = ExpansionContext::params(a.shape.size(), "o");
    ctx.addMap("init", op, ExpansionContext::fullRanges(a.shape), {},
               "v = " + zero, {{"v", acc, ExpansionContext::indices(op)}});
  };

  if (reduction == "none") {
    init(loss.name);
    ctx.addMap("pick", ip, ExpansionContext::fullRanges(logp.shape), inputs,
               term, {{"v", loss.name, withoutClass(idx), ir::Wcr::Sum}});
    return;
  }
  if (!loss.shape.empty())
    ctx.fail("a reduced loss must be a scalar");
  if (reduction == "sum") {
    init(loss.name);
    ctx.addMap("pick", ip, ExpansionContext::fullRanges(logp.shape), inputs,
               term, {{"v", loss.name, {}, ir::Wcr::Sum}});
    return;
  }
  std::string total = ctx.addTransient("total", logp.dtype, {});
  std::string weights = ctx.addTransient("weights", logp.dtype, {});
  init(total);
  init(weights);
  ctx.addMap(
      "pick", ip, ExpansionContext::fullRanges(logp.shape), inputs,
      term + "\nu = select(p, " + (weight ? "w" : one) + ", " + zero + ")",
      {{"v", total, {}, ir::Wcr::Sum}, {"u", weights, {}, ir::Wcr::Sum}});
  ctx.addMap("mean", {}, {}, {{"s", total, {}}, {"n", weights, {}}},
             "y = s / n", {{"y", loss.name, {}}});
}

void expandNllLoss(ExpansionContext &ctx) {
  negativeLogLikelihood(ctx, ctx.requireInput("input"),
                        ctx.requireInput("target"), ctx.input("weight"),
                        ctx.requireOutput("loss"));
}

void expandSoftmaxCrossEntropy(ExpansionContext &ctx) {
  const ir::Container &scores = ctx.requireInput("scores");
  if (scores.shape.size() < 2)
    ctx.fail("scores have rank " + std::to_string(scores.shape.size()) +
             "; they must be [N, C] or [N, C, d1, ...]");
  const ir::Container *logProb = ctx.output("log_prob");
  std::string logp =
      logProb ? logProb->name
              : ctx.addTransient("log_prob", scores.dtype, scores.shape);
  std::vector<bool> classAxis(scores.shape.size(), false);
  classAxis[1] = true;
  addSoftmax(ctx, scores, classAxis, /*log=*/true, logp);
  negativeLogLikelihood(ctx, ctx.program().container(logp),
                        ctx.requireInput("labels"), ctx.input("weights"),
                        ctx.requireOutput("output"));
}

const ExpansionRegistrar kNllLoss{
    {"NegativeLogLikelihoodLoss", "pure",
     "one-hot pick of each target's class, Sum-resolved reduction",
     expandNllLoss},
    true};
const ExpansionRegistrar kSoftmaxCrossEntropy{
    {"SoftmaxCrossEntropyLoss", "pure",
     "log-softmax over the classes, then the negative log-likelihood",
     expandSoftmaxCrossEntropy},
    true};

} // namespace
} // namespace weir::operators
