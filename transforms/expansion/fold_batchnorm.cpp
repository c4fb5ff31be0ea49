/// \file
/// `fold-batchnorm`: Conv followed by an inference-mode BatchNormalization
/// becomes one Conv with the normalization folded into its weights and bias.

#include "ir/error.h"
#include "transforms/registry.h"
#include "transforms/rewrite.h"
#include "transforms/transformation.h"

#include <cmath>
#include <cstring>

namespace weir::transforms {

namespace {

/// The f32 constant feeding connector `conn`, or nullptr. The statistics'
/// connectors are "mean"/"var" up to opset 13, "input_mean"/"input_var"
/// after.
const ir::Container *constantF32(const ir::Program &program,
                                 const ir::State &state, ir::NodeId node,
                                 std::string_view conn) {
  std::string name = inputContainer(state, node, conn);
  if (name.empty() && conn.starts_with("input_"))
    name = inputContainer(state, node, conn.substr(6));
  const ir::Container *c = name.empty() ? nullptr : program.findContainer(name);
  return c && c->isConstant() && c->dtype == ir::DType::F32 ? c : nullptr;
}

std::vector<double> floats(const ir::Container &c) {
  std::vector<double> out(c.constant->size() / 4);
  for (std::size_t i = 0; i < out.size(); ++i) {
    float f;
    std::memcpy(&f, c.constant->data() + 4 * i, 4);
    out[i] = f;
  }
  return out;
}

ir::Blob blobOf(const std::vector<float> &v) {
  auto bytes = std::make_shared<std::vector<std::byte>>(v.size() * 4);
  std::memcpy(bytes->data(), v.data(), bytes->size());
  return bytes;
}

double epsilonOf(const ir::Node &bn) {
  auto it = bn.library().attributes.find("epsilon");
  if (it != bn.library().attributes.end() &&
      std::holds_alternative<double>(it->second))
    return std::get<double>(it->second);
  return 1e-5;
}

} // namespace

namespace {

class FoldBatchNorm : public Transformation {
public:
  FoldBatchNorm();
  CheckResult check(const ir::Program &program, const Match &match,
                    const Params &params) const override;
  ApplyResult apply(const ir::Program &program, const Match &match,
                    const Params &params) const override;
};

} // namespace

FoldBatchNorm::FoldBatchNorm()
    : Transformation({
          .id = "fold-batchnorm",
          .tier = Tier::Expansion,
          .summary = "Fold an inference-mode BatchNormalization into the Conv "
                     "before it",
          .description =
              "At inference a BatchNormalization is a per-channel affine map y "
              "= s·x + t with s = scale/sqrt(var + eps) and t = B - s·mean. "
              "After a Conv it folds into the Conv: each output channel's "
              "weights are multiplied by s and its bias becomes s·(bias - "
              "mean) + B. One full pass over the activations disappears. The "
              "folded constants are rounded once to f32, so results agree "
              "within rounding.",
          .exactness = {false, 1e-4, 1e-5},
          .pattern =
              Pattern()
                  .node("conv", ir::NodeKind::Library, {"Conv"})
                  .node("mid", ir::NodeKind::Access)
                  .node("bn", ir::NodeKind::Library, {"BatchNormalization"})
                  .edge("conv", "mid", std::string("Y"))
                  .edge("mid", "bn", std::nullopt, std::string("X")),
      }) {}

CheckResult FoldBatchNorm::check(const ir::Program &program, const Match &match,
                                 const Params &) const {
  const ir::State &state = stateNamed(program, match.state);
  ir::NodeId conv = match.node("conv"), bn = match.node("bn");
  const ir::Container *w = constantF32(program, state, conv, "W");
  if (!w || w->shape.empty())
    return CheckResult::failure("the Conv's weights are not an f32 constant",
                                {conv});
  if (!inputContainer(state, conv, "B").empty() &&
      !constantF32(program, state, conv, "B"))
    return CheckResult::failure("the Conv's bias is not an f32 constant",
                                {conv});
  const ir::Node *bnNode = state.findNode(bn);
  auto training = bnNode->library().attributes.find("training_mode");
  if (training != bnNode->library().attributes.end() &&
      std::holds_alternative<std::int64_t>(training->second) &&
      std::get<std::int64_t>(training->second) != 0)
    return CheckResult::failure("the BatchNormalization is in training mode",
                                {bn});
  std::int64_t channels = w->shape[0].asConstant().value_or(-1);
  for (const char *conn : {"scale", "B", "input_mean", "input_var"}) {
    const ir::Container *c = constantF32(program, state, bn, conn);
    if (!c)
      return CheckResult::failure(std::string("the BatchNormalization's ") +
                                      conn + " is not an f32 constant",
                                  {bn});
    if (std::int64_t(c->constant->size() / 4) != channels)
      return CheckResult::failure(std::string("the BatchNormalization's ") +
                                      conn +
                                      " does not have one value per "
                                      "Conv output channel",
                                  {bn, conv});
  }
  for (const char *conn : {"running_mean", "running_var"})
    if (std::string o = outputContainer(state, bn, conn);
        !o.empty() &&
        (isArgument(program, o) || containerUses(program, o).reads > 0))
      return CheckResult::failure(std::string("the BatchNormalization's ") +
                                      conn + " output is used",
                                  {bn});
  const std::string &mid =
      state.findNode(match.node("mid"))->access().container;
  ContainerUses u = containerUses(program, mid);
  if (isArgument(program, mid) || u.accessNodes != 1 || u.reads != 1 ||
      u.writes != 1)
    return CheckResult::failure("the Conv's output '" + mid +
                                    "' is used by more than the "
                                    "BatchNormalization",
                                {conv, bn});
  if (outputContainer(state, bn, "Y").empty())
    return CheckResult::failure("the BatchNormalization's output is unused",
                                {bn});
  return CheckResult::success();
}

ApplyResult FoldBatchNorm::apply(const ir::Program &program, const Match &match,
                                 const Params &) const {
  ApplyResult r{program, {}};
  ir::Program &p = r.program;
  ir::State &state = stateNamed(p, match.state);
  ir::NodeId conv = match.node("conv"), mid = match.node("mid"),
             bn = match.node("bn");
  const ir::Container &w = *constantF32(p, state, conv, "W");
  const ir::Container *b = constantF32(p, state, conv, "B");
  std::vector<double> weights = floats(w);
  std::vector<double> scale = floats(*constantF32(p, state, bn, "scale"));
  std::vector<double> shift = floats(*constantF32(p, state, bn, "B"));
  std::vector<double> mean = floats(*constantF32(p, state, bn, "input_mean"));
  std::vector<double> var = floats(*constantF32(p, state, bn, "input_var"));
  std::vector<double> bias = b ? floats(*b) : std::vector<double>(scale.size());
  double eps = epsilonOf(*state.findNode(bn));

  std::size_t channels = scale.size(), per = weights.size() / channels;
  std::vector<float> newW(weights.size()), newB(channels);
  for (std::size_t m = 0; m < channels; ++m) {
    double s = scale[m] / std::sqrt(var[m] + eps);
    for (std::size_t i = 0; i < per; ++i)
      newW[m * per + i] = float(weights[m * per + i] * s);
    newB[m] = float((bias[m] - mean[m]) * s + shift[m]);
  }

  const ir::Node &convNode = *state.findNode(conv);
  ir::Container cw = w;
  cw.name = freshContainerName(p, convNode.label + ".weight_folded");
  cw.constant = blobOf(newW);
  cw.transient = true;
  ir::Container cb;
  cb.name = freshContainerName(p, convNode.label + ".bias_folded");
  cb.dtype = ir::DType::F32;
  cb.shape = {ir::Expr(std::int64_t(channels))};
  cb.strides = ir::rowMajorStrides(cb.shape);
  cb.constant = blobOf(newB);
  std::string wName = cw.name, bName = cb.name;
  p.addContainer(std::move(cw));
  p.addContainer(std::move(cb));

  // Conv reads the folded constants and writes the normalization's output.
  ir::NodeId wAccess = ir::addAccess(p, state, wName);
  ir::NodeId bAccess = ir::addAccess(p, state, bName);
  ir::Node *convMut = state.findNode(conv);
  if (!convMut->findInput("B"))
    convMut->inputs.push_back({"B", ir::DType::F32});
  state.edges.eraseIf([&](const ir::Edge &e) {
    return e.dst == conv && (e.dstConn == "W" || e.dstConn == "B");
  });
  ir::addEdge(p, state, wAccess, "", conv, "W",
              {wName, ir::Subset::full(p.container(wName).shape)});
  ir::addEdge(p, state, bAccess, "", conv, "B",
              {bName, ir::Subset::full(p.container(bName).shape)});
  ir::NodeId yAccess = 0;
  std::string y;
  for (const ir::Edge &e : state.edges)
    if (e.src == bn && e.srcConn == "Y") {
      yAccess = e.dst;
      y = e.memlet.container;
    }
  state.edges.editWhere(
      [&](const ir::Edge &e) { return e.src == conv && e.dst == mid; },
      [&](ir::Edge &e) {
        e.dst = yAccess;
        e.memlet.container = y;
      });
  removeNode(state, bn, &r.idMap);
  removeNode(state, mid, &r.idMap);
  r.idMap[bn] = conv;
  removeUnused(p, &r.idMap);
  return r;
}

static const TransformationRegistrar kRegister{
    std::make_shared<FoldBatchNorm>()};

} // namespace weir::transforms
