#include "onnx/op_catalog.h"

#include <algorithm>
#include <array>
#include <map>

namespace weir::onnx_import {
namespace {

using ir::Expr;

/// How the FLOPs of an operator follow from its operands.
enum class Rule : std::uint8_t {
  None,          ///< moves data, computes nothing
  PerOutput,     ///< `weight` per output element
  PerInput,      ///< `weight` per element of the first input
  Conv,          ///< 2 * out * (C/group) * prod(kernel)
  ConvTranspose, ///< 2 * in * (M/group) * prod(kernel)
  MatMul,        ///< 2 * out * K
  Gemm,          ///< 2 * M * N * K (+ M * N with C)
  Pool,          ///< out * prod(kernel_shape)
  Recurrent,     ///< gates * 2 * seq * batch * hidden * (input + hidden)
  Unknown,       ///< data- or subgraph-dependent
};

struct Entry {
  std::string_view op;
  OpClass cls;
  Rule rule;
  int weight; ///< per-element operations, or gate count for Recurrent
};

using C = OpClass;
using R = Rule;

// Sorted by name; the default ONNX domain. Weights count the scalar
// operations a straightforward implementation performs per element.
constexpr std::array kCatalog{
    Entry{"Abs", C::OneToOne, R::PerOutput, 1},
    Entry{"Acos", C::OneToOne, R::PerOutput, 1},
    Entry{"Acosh", C::OneToOne, R::PerOutput, 1},
    Entry{"Add", C::OneToOne, R::PerOutput, 1},
    Entry{"And", C::OneToOne, R::PerOutput, 1},
    Entry{"ArgMax", C::Reduction, R::PerInput, 1},
    Entry{"ArgMin", C::Reduction, R::PerInput, 1},
    Entry{"Asin", C::OneToOne, R::PerOutput, 1},
    Entry{"Asinh", C::OneToOne, R::PerOutput, 1},
    Entry{"Atan", C::OneToOne, R::PerOutput, 1},
    Entry{"Atanh", C::OneToOne, R::PerOutput, 1},
    Entry{"AveragePool", C::ManyToMany, R::Pool, 1},
    Entry{"BatchNormalization", C::OneToOne, R::PerOutput, 2},
    Entry{"Bernoulli", C::Source, R::PerOutput, 1},
    Entry{"BitShift", C::OneToOne, R::PerOutput, 1},
    Entry{"BlackmanWindow", C::Source, R::PerOutput, 6},
    Entry{"Cast", C::OneToOne, R::None, 0},
    Entry{"CastLike", C::OneToOne, R::None, 0},
    Entry{"Ceil", C::OneToOne, R::PerOutput, 1},
    Entry{"Celu", C::OneToOne, R::PerOutput, 4},
    Entry{"Clip", C::OneToOne, R::PerOutput, 2},
    Entry{"Compress", C::Shuffle, R::None, 0},
    Entry{"Concat", C::Shuffle, R::None, 0},
    Entry{"Constant", C::Source, R::None, 0},
    Entry{"ConstantOfShape", C::OneToMany, R::None, 0},
    Entry{"Conv", C::ManyToMany, R::Conv, 2},
    Entry{"ConvInteger", C::ManyToMany, R::Conv, 2},
    Entry{"ConvTranspose", C::ManyToMany, R::ConvTranspose, 2},
    Entry{"Cos", C::OneToOne, R::PerOutput, 1},
    Entry{"Cosh", C::OneToOne, R::PerOutput, 1},
    Entry{"CumSum", C::ManyToMany, R::PerOutput, 1},
    Entry{"DFT", C::ManyToMany, R::Unknown, 0},
    Entry{"DepthToSpace", C::Shuffle, R::None, 0},
    Entry{"DequantizeLinear", C::OneToOne, R::PerOutput, 2},
    Entry{"Det", C::ManyToMany, R::Unknown, 0},
    Entry{"Div", C::OneToOne, R::PerOutput, 1},
    Entry{"Dropout", C::OneToOne, R::None, 0},
    Entry{"DynamicQuantizeLinear", C::ManyToMany, R::PerInput, 4},
    Entry{"Einsum", C::ManyToMany, R::Unknown, 0},
    Entry{"Elu", C::OneToOne, R::PerOutput, 3},
    Entry{"Equal", C::OneToOne, R::PerOutput, 1},
    Entry{"Erf", C::OneToOne, R::PerOutput, 1},
    Entry{"Exp", C::OneToOne, R::PerOutput, 1},
    Entry{"Expand", C::OneToMany, R::None, 0},
    Entry{"EyeLike", C::Source, R::None, 0},
    Entry{"Flatten", C::Reorganize, R::None, 0},
    Entry{"Floor", C::OneToOne, R::PerOutput, 1},
    Entry{"GRU", C::ManyToMany, R::Recurrent, 3},
    Entry{"Gather", C::Shuffle, R::None, 0},
    Entry{"GatherElements", C::Shuffle, R::None, 0},
    Entry{"GatherND", C::Shuffle, R::None, 0},
    // ONNX opset 20; Weir's fusion of the Erf subgraph exporters emit.
    Entry{"Gelu", C::OneToOne, R::PerOutput, 5},
    Entry{"Gemm", C::ManyToMany, R::Gemm, 2},
    Entry{"GlobalAveragePool", C::Reduction, R::PerInput, 1},
    Entry{"GlobalLpPool", C::Reduction, R::PerInput, 2},
    Entry{"GlobalMaxPool", C::Reduction, R::PerInput, 1},
    Entry{"Greater", C::OneToOne, R::PerOutput, 1},
    Entry{"GreaterOrEqual", C::OneToOne, R::PerOutput, 1},
    Entry{"GridSample", C::Shuffle, R::PerOutput, 8},
    Entry{"HammingWindow", C::Source, R::PerOutput, 4},
    Entry{"HannWindow", C::Source, R::PerOutput, 4},
    Entry{"HardSigmoid", C::OneToOne, R::PerOutput, 3},
    Entry{"HardSwish", C::OneToOne, R::PerOutput, 4},
    Entry{"Hardmax", C::Reduction, R::PerInput, 2},
    Entry{"Identity", C::OneToOne, R::None, 0},
    Entry{"If", C::Control, R::Unknown, 0},
    Entry{"InstanceNormalization", C::ManyToMany, R::PerOutput, 8},
    Entry{"IsInf", C::OneToOne, R::PerOutput, 1},
    Entry{"IsNaN", C::OneToOne, R::PerOutput, 1},
    Entry{"LRN", C::ManyToMany, R::Unknown, 0},
    Entry{"LSTM", C::ManyToMany, R::Recurrent, 4},
    Entry{"LayerNormalization", C::ManyToMany, R::PerOutput, 8},
    Entry{"LeakyRelu", C::OneToOne, R::PerOutput, 2},
    Entry{"Less", C::OneToOne, R::PerOutput, 1},
    Entry{"LessOrEqual", C::OneToOne, R::PerOutput, 1},
    Entry{"Log", C::OneToOne, R::PerOutput, 1},
    Entry{"LogSoftmax", C::Reduction, R::PerOutput, 5},
    Entry{"Loop", C::Control, R::Unknown, 0},
    Entry{"LpNormalization", C::ManyToMany, R::PerOutput, 3},
    Entry{"LpPool", C::ManyToMany, R::Pool, 2},
    Entry{"MatMul", C::ManyToMany, R::MatMul, 2},
    Entry{"MatMulInteger", C::ManyToMany, R::MatMul, 2},
    Entry{"Max", C::OneToOne, R::PerOutput, 1},
    Entry{"MaxPool", C::ManyToMany, R::Pool, 1},
    Entry{"MaxRoiPool", C::ManyToMany, R::Unknown, 0},
    Entry{"MaxUnpool", C::Shuffle, R::None, 0},
    Entry{"Mean", C::OneToOne, R::PerOutput, 1},
    Entry{"MeanVarianceNormalization", C::ManyToMany, R::PerOutput, 6},
    Entry{"MelWeightMatrix", C::Source, R::Unknown, 0},
    Entry{"Min", C::OneToOne, R::PerOutput, 1},
    Entry{"Mod", C::OneToOne, R::PerOutput, 1},
    Entry{"Mul", C::OneToOne, R::PerOutput, 1},
    Entry{"Multinomial", C::Source, R::Unknown, 0},
    Entry{"Neg", C::OneToOne, R::PerOutput, 1},
    Entry{"NegativeLogLikelihoodLoss", C::Reduction, R::PerInput, 1},
    Entry{"NonMaxSuppression", C::ManyToMany, R::Unknown, 0},
    Entry{"NonZero", C::Shuffle, R::None, 0},
    Entry{"Not", C::OneToOne, R::PerOutput, 1},
    Entry{"OneHot", C::OneToMany, R::None, 0},
    Entry{"Or", C::OneToOne, R::PerOutput, 1},
    Entry{"PRelu", C::OneToOne, R::PerOutput, 2},
    Entry{"Pad", C::Shuffle, R::None, 0},
    Entry{"Pow", C::OneToOne, R::PerOutput, 1},
    Entry{"QLinearConv", C::ManyToMany, R::Conv, 2},
    Entry{"QLinearMatMul", C::ManyToMany, R::MatMul, 2},
    Entry{"QuantizeLinear", C::OneToOne, R::PerOutput, 3},
    Entry{"RNN", C::ManyToMany, R::Recurrent, 1},
    Entry{"RandomNormal", C::Source, R::PerOutput, 1},
    Entry{"RandomNormalLike", C::Source, R::PerOutput, 1},
    Entry{"RandomUniform", C::Source, R::PerOutput, 1},
    Entry{"RandomUniformLike", C::Source, R::PerOutput, 1},
    Entry{"Range", C::Source, R::PerOutput, 1},
    Entry{"Reciprocal", C::OneToOne, R::PerOutput, 1},
    Entry{"ReduceL1", C::Reduction, R::PerInput, 2},
    Entry{"ReduceL2", C::Reduction, R::PerInput, 2},
    Entry{"ReduceLogSum", C::Reduction, R::PerInput, 1},
    Entry{"ReduceLogSumExp", C::Reduction, R::PerInput, 2},
    Entry{"ReduceMax", C::Reduction, R::PerInput, 1},
    Entry{"ReduceMean", C::Reduction, R::PerInput, 1},
    Entry{"ReduceMin", C::Reduction, R::PerInput, 1},
    Entry{"ReduceProd", C::Reduction, R::PerInput, 1},
    Entry{"ReduceSum", C::Reduction, R::PerInput, 1},
    Entry{"ReduceSumSquare", C::Reduction, R::PerInput, 2},
    Entry{"Relu", C::OneToOne, R::PerOutput, 1},
    Entry{"Reshape", C::Reorganize, R::None, 0},
    Entry{"Resize", C::OneToMany, R::PerOutput, 4},
    Entry{"ReverseSequence", C::Shuffle, R::None, 0},
    Entry{"RoiAlign", C::ManyToMany, R::Unknown, 0},
    Entry{"Round", C::OneToOne, R::PerOutput, 1},
    Entry{"STFT", C::ManyToMany, R::Unknown, 0},
    Entry{"Scan", C::Control, R::Unknown, 0},
    Entry{"Scatter", C::Shuffle, R::None, 0},
    Entry{"ScatterElements", C::Shuffle, R::None, 0},
    Entry{"ScatterND", C::Shuffle, R::None, 0},
    Entry{"Selu", C::OneToOne, R::PerOutput, 3},
    Entry{"Shape", C::Source, R::None, 0},
    Entry{"Shrink", C::OneToOne, R::PerOutput, 2},
    Entry{"Sigmoid", C::OneToOne, R::PerOutput, 3},
    Entry{"Sign", C::OneToOne, R::PerOutput, 1},
    Entry{"Sin", C::OneToOne, R::PerOutput, 1},
    Entry{"Sinh", C::OneToOne, R::PerOutput, 1},
    Entry{"Size", C::Source, R::None, 0},
    Entry{"Slice", C::Shuffle, R::None, 0},
    Entry{"Softmax", C::Reduction, R::PerOutput, 5},
    Entry{"SoftmaxCrossEntropyLoss", C::Reduction, R::PerInput, 6},
    Entry{"Softplus", C::OneToOne, R::PerOutput, 3},
    Entry{"Softsign", C::OneToOne, R::PerOutput, 3},
    Entry{"SpaceToDepth", C::Shuffle, R::None, 0},
    Entry{"Split", C::Shuffle, R::None, 0},
    Entry{"Sqrt", C::OneToOne, R::PerOutput, 1},
    Entry{"Squeeze", C::Reorganize, R::None, 0},
    Entry{"Sub", C::OneToOne, R::PerOutput, 1},
    Entry{"Sum", C::OneToOne, R::PerOutput, 1},
    Entry{"Tan", C::OneToOne, R::PerOutput, 1},
    Entry{"Tanh", C::OneToOne, R::PerOutput, 1},
    Entry{"TfIdfVectorizer", C::ManyToMany, R::Unknown, 0},
    Entry{"ThresholdedRelu", C::OneToOne, R::PerOutput, 1},
    Entry{"Tile", C::OneToMany, R::None, 0},
    Entry{"TopK", C::Reduction, R::PerInput, 1},
    Entry{"Transpose", C::Shuffle, R::None, 0},
    Entry{"Trilu", C::Shuffle, R::None, 0},
    Entry{"Unique", C::Shuffle, R::Unknown, 0},
    Entry{"Unsqueeze", C::Reorganize, R::None, 0},
    Entry{"Upsample", C::OneToMany, R::PerOutput, 4},
    Entry{"Where", C::OneToOne, R::None, 0},
    Entry{"Xor", C::OneToOne, R::PerOutput, 1},
};

const Entry *lookup(std::string_view op) {
  auto it = std::lower_bound(
      kCatalog.begin(), kCatalog.end(), op,
      [](const Entry &e, std::string_view name) { return e.op < name; });
  return it != kCatalog.end() && it->op == op ? &*it : nullptr;
}

Expr elements(const ir::Container *c) {
  return c ? c->elementCount() : Expr(0);
}

std::optional<std::vector<std::int64_t>> intsAttr(const ir::Attributes *a,
                                                  std::string_view name) {
  if (!a)
    return std::nullopt;
  auto it = a->find(name);
  if (it == a->end())
    return std::nullopt;
  if (auto *v = std::get_if<std::vector<std::int64_t>>(&it->second))
    return *v;
  return std::nullopt;
}

std::int64_t intAttr(const ir::Attributes *a, std::string_view name,
                     std::int64_t fallback) {
  if (!a)
    return fallback;
  auto it = a->find(name);
  if (it == a->end())
    return fallback;
  if (auto *v = std::get_if<std::int64_t>(&it->second))
    return *v;
  return fallback;
}

const ir::Container *operand(const std::vector<const ir::Container *> &v,
                             std::size_t i) {
  return i < v.size() ? v[i] : nullptr;
}

} // namespace

std::string_view opClassName(OpClass c) {
  static constexpr std::array<std::string_view, 8> kNames{
      "one-to-one", "one-to-many", "many-to-many", "reorganize",
      "shuffle",    "reduction",   "control",      "source"};
  return kNames[static_cast<std::size_t>(c)];
}

std::optional<OpInfo> findOp(std::string_view domain, std::string_view op) {
  if (!domain.empty() && domain != "ai.onnx")
    return std::nullopt;
  if (const Entry *e = lookup(op))
    return OpInfo{e->op, e->cls};
  return std::nullopt;
}

std::vector<std::string_view> knownOps() {
  std::vector<std::string_view> ops;
  for (const Entry &e : kCatalog)
    ops.push_back(e.op);
  return ops;
}

std::optional<Expr> estimateFlops(const OpInfo &info, const OpOperands &ops) {
  const Entry *e = lookup(info.op);
  if (!e)
    return std::nullopt;
  const ir::Container *in0 = operand(ops.inputs, 0);
  const ir::Container *in1 = operand(ops.inputs, 1);
  const ir::Container *out0 = operand(ops.outputs, 0);
  Expr w(e->weight);
  switch (e->rule) {
  case Rule::None:
    return Expr(0);
  case Rule::Unknown:
    return std::nullopt;
  case Rule::PerOutput:
    return out0 ? std::optional(w * elements(out0)) : std::nullopt;
  case Rule::PerInput:
    return in0 ? std::optional(w * elements(in0)) : std::nullopt;
  case Rule::Conv:
  case Rule::ConvTranspose: {
    // W is [M, C/group, k...] for Conv and [C, M/group, k...] for
    // ConvTranspose; QLinearConv carries W as its fourth input.
    const ir::Container *weight =
        info.op == "QLinearConv" ? operand(ops.inputs, 3) : in1;
    const ir::Container *base = e->rule == Rule::Conv ? out0 : in0;
    if (!weight || !base || weight->shape.size() < 2)
      return std::nullopt;
    Expr perElement = w;
    for (std::size_t d = 1; d < weight->shape.size(); ++d)
      perElement = perElement * weight->shape[d];
    return elements(base) * perElement;
  }
  case Rule::MatMul: {
    const ir::Container *a = in0;
    if (!a || !out0 || a->shape.empty())
      return std::nullopt;
    return w * elements(out0) * a->shape.back();
  }
  case Rule::Gemm: {
    if (!in0 || !out0 || in0->shape.size() != 2)
      return std::nullopt;
    Expr k =
        intAttr(ops.attributes, "transA", 0) ? in0->shape[0] : in0->shape[1];
    Expr flops = w * elements(out0) * k;
    if (operand(ops.inputs, 2))
      flops = flops + elements(out0);
    return flops;
  }
  case Rule::Pool: {
    auto kernel = intsAttr(ops.attributes, "kernel_shape");
    if (!kernel || !out0)
      return std::nullopt;
    Expr k(1);
    for (std::int64_t d : *kernel)
      k = k * Expr(d);
    return w * elements(out0) * k;
  }
  case Rule::Recurrent: {
    // X is [seq, batch, input]; W is [dirs, gates*hidden, input].
    const ir::Container *weight = in1;
    if (!in0 || !weight || in0->shape.size() != 3 || weight->shape.size() != 3)
      return std::nullopt;
    Expr hidden = floorDiv(weight->shape[1], Expr(e->weight));
    Expr perStep = Expr(2) * weight->shape[1] * (in0->shape[2] + hidden);
    return weight->shape[0] * in0->shape[0] * in0->shape[1] * perStep;
  }
  }
  return std::nullopt;
}

bool drawsRandomNumbers(const ir::Program &program) {
  for (const ir::State &s : program.states)
    for (const ir::Node &n : s.nodes) {
      if (n.kind != ir::NodeKind::Library)
        continue;
      const std::string &op = n.library().op;
      if (op == "RandomUniform" || op == "RandomUniformLike" ||
          op == "RandomNormal" || op == "RandomNormalLike" ||
          op == "Bernoulli" || op == "Multinomial")
        return true;
      if (op != "Dropout")
        continue;
      for (const ir::Edge &e : s.edges) {
        if (e.dst != n.id || e.dstConn != "training_mode")
          continue;
        const ir::Container *c = program.findContainer(e.memlet.container);
        if (c && c->constant)
          for (std::byte b : *c->constant)
            if (b != std::byte{0})
              return true;
      }
    }
  return false;
}

} // namespace weir::onnx_import
