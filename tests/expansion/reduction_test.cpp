// Tier-1 pure expansions of reductions, softmax, normalisation and pooling:
// each is expanded on a one-node program, validated, checked for the
// data-centric structure (an identity init and a write-conflict-resolved
// map) and run on the reference interpreter against values computed here.

#include "core/interp/interpreter.h"
#include "ir/error.h"
#include "ir/validate.h"
#include "transforms/operators/expansion.h"
#include "unit/ir_builders.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <numeric>

using namespace weir;
using ir::builders::argument;

namespace {

std::vector<ir::Expr> exprShape(const std::vector<std::int64_t> &shape) {
  return {shape.begin(), shape.end()};
}

/// One library node `op` reading `inputs` and writing `outputs` (connector
/// -> container name); containers must already exist in `p`.
ir::NodeId
addOp(ir::Program &p, const std::string &op,
      const std::vector<std::pair<std::string, std::string>> &inputs,
      const std::vector<std::pair<std::string, std::string>> &outputs,
      ir::Attributes attributes = {}) {
  ir::State &s = p.states.emplace_back();
  s.name = "main";
  ir::Node n;
  n.id = p.newNodeId();
  n.kind = ir::NodeKind::Library;
  n.label = "op";
  ir::LibraryData lib;
  lib.op = op;
  lib.opsetVersion = 13;
  lib.attributes = std::move(attributes);
  for (const auto &[conn, c] : inputs)
    n.inputs.push_back({conn, p.container(c).dtype});
  for (const auto &[conn, c] : outputs)
    n.outputs.push_back({conn, p.container(c).dtype});
  n.payload = std::move(lib);
  ir::NodeId id = n.id;
  s.nodes.push_back(std::move(n));
  for (const auto &[conn, c] : inputs) {
    ir::NodeId a = ir::addAccess(p, s, c);
    ir::addEdge(p, s, a, "", id, conn,
                ir::Memlet{c, ir::Subset::full(p.container(c).shape), {}});
  }
  for (const auto &[conn, c] : outputs) {
    ir::NodeId a = ir::addAccess(p, s, c);
    ir::addEdge(p, s, id, conn, a, "",
                ir::Memlet{c, ir::Subset::full(p.container(c).shape), {}});
  }
  return id;
}

/// X (f32, `inShape`) -> op -> Y (`outShape`, `outType`).
ir::Program unaryProgram(const std::string &op, const std::string &inConn,
                         const std::string &outConn,
                         const std::vector<std::int64_t> &inShape,
                         const std::vector<std::int64_t> &outShape,
                         ir::Attributes attributes = {},
                         ir::DType inType = ir::DType::F32,
                         ir::DType outType = ir::DType::F32) {
  ir::Program p;
  p.name = op;
  p.addContainer(argument("X", inType, exprShape(inShape)));
  p.addContainer(argument("Y", outType, exprShape(outShape)));
  p.inputs = {"X"};
  p.outputs = {"Y"};
  addOp(p, op, {{inConn, "X"}}, {{outConn, "Y"}}, std::move(attributes));
  return p;
}

void expandAndValidate(ir::Program &p) {
  operators::ExpandAllReport r = operators::expandAll(p);
  ASSERT_TRUE(r.skipped.empty()) << r.skipped.front();
  for (const ir::Diagnostic &d : ir::validate(p))
    EXPECT_NE(d.severity, ir::Severity::Error) << d.message;
}

runtime::Tensor tensorOf(ir::DType dtype, std::vector<std::int64_t> shape,
                         const std::function<double(std::int64_t)> &f) {
  runtime::Tensor t(dtype, std::move(shape));
  for (std::int64_t i = 0; i < t.elementCount(); ++i)
    t.setFromDouble(i, f(i));
  return t;
}

/// Deterministic, sign-mixed, not sorted.
double sample(std::int64_t i) { return double((i * 7 + 3) % 11) - 5.0; }

runtime::Tensor run(const ir::Program &p, const runtime::Tensor &x) {
  return interp::interpret(p, {{"X", x}}).at("Y");
}

int countWcrMaps(const ir::Program &p, ir::Wcr wcr) {
  int n = 0;
  for (const ir::State &s : p.states)
    for (const ir::Node &node : s.nodes)
      if (node.kind == ir::NodeKind::MapExit)
        for (const ir::Edge *e : s.outEdges(node.id))
          n += e->memlet.wcr == wcr;
  return n;
}

/// Maps whose tasklet has no inputs: the identity initialisations.
int countInitMaps(const ir::Program &p) {
  int n = 0;
  for (const ir::State &s : p.states)
    for (const ir::Node &node : s.nodes)
      if (node.kind == ir::NodeKind::Tasklet && node.inputs.empty())
        ++n;
  return n;
}

TEST(ReductionExpansion, ReduceSumOverAxesInputIsInitPlusSumMap) {
  ir::Program p;
  p.name = "reduce_sum";
  p.addContainer(argument("X", ir::DType::I64, exprShape({3, 4, 2})));
  p.addContainer(argument("Y", ir::DType::I64, exprShape({3, 2})));
  ir::Container axes = argument("axes", ir::DType::I64, exprShape({1}));
  std::int64_t axis = -2;
  auto blob = std::make_shared<std::vector<std::byte>>(8);
  std::memcpy(blob->data(), &axis, 8);
  axes.constant = blob;
  p.addContainer(std::move(axes));
  p.inputs = {"X"};
  p.outputs = {"Y"};
  addOp(p, "ReduceSum", {{"data", "X"}, {"axes", "axes"}}, {{"reduced", "Y"}},
        {{"keepdims", std::int64_t(0)}});
  expandAndValidate(p);
  EXPECT_EQ(countInitMaps(p), 1);
  EXPECT_EQ(countWcrMaps(p, ir::Wcr::Sum), 1);

  runtime::Tensor x = tensorOf(ir::DType::I64, {3, 4, 2}, sample);
  runtime::Tensor y = run(p, x);
  ASSERT_EQ(y.shape(), (std::vector<std::int64_t>{3, 2}));
  for (std::int64_t i = 0; i < 3; ++i)
    for (std::int64_t k = 0; k < 2; ++k) {
      double want = 0;
      for (std::int64_t j = 0; j < 4; ++j)
        want += sample(i * 8 + j * 2 + k);
      EXPECT_EQ(y.getAsDouble(i * 2 + k), want) << i << "," << k;
    }
}

TEST(ReductionExpansion, ReduceMaxAllAxesKeepdims) {
  ir::Program p = unaryProgram("ReduceMax", "data", "reduced", {2, 5}, {1, 1});
  expandAndValidate(p);
  EXPECT_EQ(countWcrMaps(p, ir::Wcr::Max), 1);
  runtime::Tensor y = run(p, tensorOf(ir::DType::F32, {2, 5}, sample));
  double want = -1e300;
  for (std::int64_t i = 0; i < 10; ++i)
    want = std::max(want, sample(i));
  EXPECT_EQ(y.getAsDouble(0), want);
}

TEST(ReductionExpansion, ReduceMeanAndLogSumExp) {
  for (const char *op : {"ReduceMean", "ReduceLogSumExp", "ReduceL2"}) {
    SCOPED_TRACE(op);
    ir::Program p = unaryProgram(op, "data", "reduced", {2, 3}, {2},
                                 {{"axes", std::vector<std::int64_t>{1}},
                                  {"keepdims", std::int64_t(0)}});
    expandAndValidate(p);
    runtime::Tensor y = run(p, tensorOf(ir::DType::F32, {2, 3}, sample));
    for (std::int64_t i = 0; i < 2; ++i) {
      double sum = 0, sumExp = 0, sumSq = 0;
      for (std::int64_t j = 0; j < 3; ++j) {
        sum += sample(i * 3 + j);
        sumExp += std::exp(sample(i * 3 + j));
        sumSq += sample(i * 3 + j) * sample(i * 3 + j);
      }
      double want = std::string(op) == "ReduceMean" ? sum / 3
                    : std::string(op) == "ReduceL2" ? std::sqrt(sumSq)
                                                    : std::log(sumExp);
      EXPECT_NEAR(y.getAsDouble(i), want, 1e-5);
    }
  }
}

TEST(ReductionExpansion, ArgMaxFirstAndLastIndex) {
  for (std::int64_t last : {0, 1}) {
    ir::Program p =
        unaryProgram("ArgMax", "data", "reduced", {2, 4}, {2, 1},
                     {{"axis", std::int64_t(1)}, {"select_last_index", last}},
                     ir::DType::F32, ir::DType::I64);
    expandAndValidate(p);
    // Row 0 has its maximum twice (positions 1 and 3).
    std::vector<double> data = {1, 5, 2, 5, -1, -3, -2, -7};
    runtime::Tensor y = run(p, tensorOf(ir::DType::F32, {2, 4}, [&](auto i) {
                              return data[static_cast<std::size_t>(i)];
                            }));
    EXPECT_EQ(y.getAsDouble(0), last ? 3 : 1);
    EXPECT_EQ(y.getAsDouble(1), 0);
  }
}

TEST(ReductionExpansion, SoftmaxRowsSumToOneAndMatch) {
  ir::Program p = unaryProgram("Softmax", "input", "output", {2, 3}, {2, 3});
  expandAndValidate(p);
  EXPECT_EQ(countWcrMaps(p, ir::Wcr::Max), 1);
  EXPECT_EQ(countWcrMaps(p, ir::Wcr::Sum), 1);
  // Large values: only the max-subtracted form avoids overflow.
  auto f = [](std::int64_t i) { return 1000.0 + sample(i); };
  runtime::Tensor y = run(p, tensorOf(ir::DType::F32, {2, 3}, f));
  for (std::int64_t i = 0; i < 2; ++i) {
    double z = 0;
    for (std::int64_t j = 0; j < 3; ++j)
      z += std::exp(sample(i * 3 + j));
    for (std::int64_t j = 0; j < 3; ++j)
      EXPECT_NEAR(y.getAsDouble(i * 3 + j), std::exp(sample(i * 3 + j)) / z,
                  1e-6);
  }
}

TEST(ReductionExpansion, MaxPoolWithPadsAndStrides) {
  // 1 x 1 x 5 input, kernel 3, stride 2, pads 1/1: windows [-1,1], [1,3],
  // [3,5].
  ir::Program p = unaryProgram("MaxPool", "X", "Y", {1, 1, 5}, {1, 1, 3},
                               {{"kernel_shape", std::vector<std::int64_t>{3}},
                                {"strides", std::vector<std::int64_t>{2}},
                                {"pads", std::vector<std::int64_t>{1, 1}}});
  expandAndValidate(p);
  std::vector<double> data = {4, -1, 3, 9, -2};
  runtime::Tensor y = run(p, tensorOf(ir::DType::F32, {1, 1, 5}, [&](auto i) {
                            return data[static_cast<std::size_t>(i)];
                          }));
  EXPECT_EQ(y.getAsDouble(0), 4);
  EXPECT_EQ(y.getAsDouble(1), 9);
  EXPECT_EQ(y.getAsDouble(2), 9);
}

TEST(ReductionExpansion, MaxPoolIndicesRowAndColumnMajor) {
  for (std::int64_t order : {0, 1}) {
    ir::Program p;
    p.name = "maxpool_indices";
    p.addContainer(argument("X", ir::DType::F32, exprShape({1, 2, 3, 3})));
    p.addContainer(argument("Y", ir::DType::F32, exprShape({1, 2, 2, 2})));
    p.addContainer(argument("I", ir::DType::I64, exprShape({1, 2, 2, 2})));
    p.inputs = {"X"};
    p.outputs = {"Y", "I"};
    addOp(p, "MaxPool", {{"X", "X"}}, {{"Y", "Y"}, {"Indices", "I"}},
          {{"kernel_shape", std::vector<std::int64_t>{2, 2}},
           {"storage_order", order}});
    expandAndValidate(p);
    EXPECT_EQ(countWcrMaps(p, ir::Wcr::Min), 1);
    // Every value distinct; the maxima of the four windows of each channel.
    runtime::Tensor x = tensorOf(ir::DType::F32, {1, 2, 3, 3},
                                 [](auto i) { return double((i * 5) % 18); });
    interp::TensorMap out = interp::interpret(p, {{"X", x}});
    for (std::int64_t c = 0; c < 2; ++c)
      for (std::int64_t oh = 0; oh < 2; ++oh)
        for (std::int64_t ow = 0; ow < 2; ++ow) {
          std::int64_t best = -1;
          for (std::int64_t kh = 0; kh < 2; ++kh)
            for (std::int64_t kw = 0; kw < 2; ++kw) {
              std::int64_t at = c * 9 + (oh + kh) * 3 + (ow + kw);
              if (best < 0 || x.getAsDouble(at) > x.getAsDouble(best))
                best = at;
            }
          std::int64_t h = (best % 9) / 3, w = best % 3;
          std::int64_t want = order ? c * 9 + h + w * 3 : best;
          std::int64_t o = c * 4 + oh * 2 + ow;
          EXPECT_EQ(out.at("Y").getAsDouble(o), x.getAsDouble(best));
          EXPECT_EQ(out.at("I").getAsDouble(o), double(want));
        }
  }
}

TEST(ReductionExpansion, AveragePoolCountsPaddingOnlyWhenAsked) {
  for (std::int64_t include : {0, 1}) {
    ir::Program p =
        unaryProgram("AveragePool", "X", "Y", {1, 1, 4}, {1, 1, 4},
                     {{"kernel_shape", std::vector<std::int64_t>{3}},
                      {"pads", std::vector<std::int64_t>{1, 1}},
                      {"count_include_pad", include}});
    expandAndValidate(p);
    std::vector<double> data = {3, 6, 9, 12};
    runtime::Tensor y = run(p, tensorOf(ir::DType::F32, {1, 1, 4}, [&](auto i) {
                              return data[static_cast<std::size_t>(i)];
                            }));
    double edge = include ? 3.0 : 2.0;
    EXPECT_FLOAT_EQ(y.getAsDouble(0), 9 / edge);
    EXPECT_FLOAT_EQ(y.getAsDouble(1), 6);
    EXPECT_FLOAT_EQ(y.getAsDouble(3), 21 / edge);
  }
}

TEST(ReductionExpansion, LayerNormalizationLastAxis) {
  ir::Program p;
  p.name = "layernorm";
  p.addContainer(argument("X", ir::DType::F32, exprShape({2, 4})));
  p.addContainer(argument("S", ir::DType::F32, exprShape({4})));
  p.addContainer(argument("Y", ir::DType::F32, exprShape({2, 4})));
  p.inputs = {"X", "S"};
  p.outputs = {"Y"};
  addOp(p, "LayerNormalization", {{"X", "X"}, {"Scale", "S"}}, {{"Y", "Y"}});
  expandAndValidate(p);
  runtime::Tensor x = tensorOf(ir::DType::F32, {2, 4}, sample);
  runtime::Tensor s =
      tensorOf(ir::DType::F32, {4}, [](auto i) { return 0.5 + double(i); });
  runtime::Tensor y = interp::interpret(p, {{"X", x}, {"S", s}}).at("Y");
  for (std::int64_t i = 0; i < 2; ++i) {
    double mean = 0, var = 0;
    for (std::int64_t j = 0; j < 4; ++j)
      mean += sample(i * 4 + j) / 4;
    for (std::int64_t j = 0; j < 4; ++j)
      var += (sample(i * 4 + j) - mean) * (sample(i * 4 + j) - mean) / 4;
    for (std::int64_t j = 0; j < 4; ++j)
      EXPECT_NEAR(y.getAsDouble(i * 4 + j),
                  (sample(i * 4 + j) - mean) / std::sqrt(var + 1e-5) *
                      (0.5 + double(j)),
                  1e-4);
  }
}

TEST(ReductionExpansion, RefusedAttributesLeaveTheNodeUnexpanded) {
  ir::Program bn;
  bn.name = "bn";
  for (const char *c : {"X", "s", "b", "m", "v", "Y"})
    bn.addContainer(argument(c, ir::DType::F32,
                             exprShape(c[0] == 'X' || c[0] == 'Y'
                                           ? std::vector<std::int64_t>{1, 2}
                                           : std::vector<std::int64_t>{2})));
  bn.inputs = {"X", "s", "b", "m", "v"};
  bn.outputs = {"Y"};
  // Training mode is expanded from opset 14 on (input_mean, input_var);
  // BatchNormalization-9 names its statistics mean and var.
  ir::NodeId id = addOp(bn, "BatchNormalization",
                        {{"X", "X"},
                         {"scale", "s"},
                         {"B", "b"},
                         {"mean", "m"},
                         {"var", "v"}},
                        {{"Y", "Y"}}, {{"training_mode", std::int64_t(1)}});
  ir::Program before = bn;
  try {
    operators::expandNode(bn, id);
    FAIL() << "training_mode=1 was expanded";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("training_mode"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(bn.nodeCount(), before.nodeCount());
  EXPECT_EQ(bn.containers.size(), before.containers.size());

  ir::Program pool =
      unaryProgram("AveragePool", "X", "Y", {1, 1, 4}, {1, 1, 4},
                   {{"kernel_shape", std::vector<std::int64_t>{3}},
                    {"auto_pad", std::string("BOGUS")}});
  operators::ExpandAllReport r = operators::expandAll(pool);
  ASSERT_EQ(r.skipped.size(), 1u);
  EXPECT_NE(r.skipped[0].find("auto_pad"), std::string::npos) << r.skipped[0];
}

} // namespace
