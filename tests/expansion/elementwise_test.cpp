// Pure expansions of elementwise operators: structure (one map, the tasklet
// text), validity, and values on the reference interpreter against values
// computed here; negative tests for attributes the expansions refuse.

#include "core/interp/interpreter.h"
#include "ir/error.h"
#include "ir/validate.h"
#include "transforms/operators/expansion.h"
#include "unit/ir_builders.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace weir;
using namespace weir::ir;
using namespace weir::ir::builders;

namespace {

struct Operand {
  std::string connector;
  std::string container;
  DType dtype;
  std::vector<std::int64_t> shape;
};

/// One library node `op` reading `inputs` and writing `outputs`, all
/// program arguments. Returns the program and the library node's id.
std::pair<Program, NodeId> singleOp(const std::string &op,
                                    const std::vector<Operand> &inputs,
                                    const std::vector<Operand> &outputs,
                                    Attributes attributes = {}) {
  Program p;
  p.name = op;
  auto shapeOf = [](const Operand &o) {
    std::vector<Expr> shape;
    for (std::int64_t d : o.shape)
      shape.push_back(Expr(d));
    return shape;
  };
  for (const Operand &o : inputs) {
    p.addContainer(argument(o.container, o.dtype, shapeOf(o)));
    p.inputs.push_back(o.container);
  }
  for (const Operand &o : outputs) {
    p.addContainer(argument(o.container, o.dtype, shapeOf(o)));
    p.outputs.push_back(o.container);
  }
  State &s = p.states.emplace_back();
  s.name = "main";
  Node n;
  n.id = p.newNodeId();
  n.kind = NodeKind::Library;
  n.label = op + "_0";
  LibraryData lib;
  lib.op = op;
  lib.opsetVersion = 13;
  lib.attributes = std::move(attributes);
  n.payload = lib;
  for (const Operand &o : inputs)
    n.inputs.push_back({o.connector, o.dtype});
  for (const Operand &o : outputs)
    n.outputs.push_back({o.connector, o.dtype});
  NodeId id = n.id;
  s.nodes.push_back(std::move(n));
  auto full = [&](const Operand &o) {
    std::vector<Range> dims;
    for (std::int64_t d : o.shape)
      dims.push_back(Range(0, d));
    return memlet(o.container, dims);
  };
  for (const Operand &o : inputs)
    addEdge(p, s, addAccess(p, s, o.container), "", id, o.connector, full(o));
  for (const Operand &o : outputs)
    addEdge(p, s, id, o.connector, addAccess(p, s, o.container), "", full(o));
  return {std::move(p), id};
}

std::size_t countErrors(const Program &p) {
  std::size_t n = 0;
  for (const Diagnostic &d : validate(p))
    n += d.severity == Severity::Error;
  return n;
}

std::vector<const Node *> nodesOfKind(const Program &p, NodeKind kind) {
  std::vector<const Node *> out;
  for (const Node &n : p.states.at(0).nodes)
    if (n.kind == kind)
      out.push_back(&n);
  return out;
}

runtime::Tensor tensor(DType dtype, std::vector<std::int64_t> shape,
                       const std::vector<double> &values) {
  runtime::Tensor t(dtype, std::move(shape));
  for (std::size_t i = 0; i < values.size(); ++i)
    t.setFromDouble(static_cast<std::int64_t>(i), values[i]);
  return t;
}

/// Expands the single library node and checks the common structure: no
/// library node left, one map, one tasklet whose canonical source is `code`
/// (one statement a line), and a program that validates.
void expandAndCheck(Program &p, NodeId id, const std::string &code) {
  operators::expandNode(p, id);
  EXPECT_EQ(countErrors(p), 0u);
  EXPECT_TRUE(nodesOfKind(p, NodeKind::Library).empty());
  EXPECT_EQ(nodesOfKind(p, NodeKind::MapEntry).size(), 1u);
  auto tasklets = nodesOfKind(p, NodeKind::Tasklet);
  ASSERT_EQ(tasklets.size(), 1u);
  EXPECT_EQ(std::get<TaskletData>(tasklets[0]->payload).source, code + "\n");
}

TEST(ElementwiseExpansion, LeakyReluUsesTheAlphaAttribute) {
  auto [p, id] = singleOp("LeakyRelu", {{"X", "x", DType::F32, {2, 3}}},
                          {{"Y", "y", DType::F32, {2, 3}}}, {{"alpha", 0.25}});
  expandAndCheck(p, id, "y = select(x < 0, 0.25 * x, x)");
  std::vector<double> in{-4, -1, 0, 1, 2.5, -0.5};
  auto out = interp::interpret(p, {{"x", tensor(DType::F32, {2, 3}, in)}});
  for (std::size_t i = 0; i < in.size(); ++i)
    EXPECT_EQ(out.at("y").getAsDouble(static_cast<std::int64_t>(i)),
              in[i] < 0 ? 0.25 * in[i] : in[i]);
}

TEST(ElementwiseExpansion, SubBroadcastsARowAcrossAMatrix) {
  auto [p, id] = singleOp(
      "Sub", {{"A", "a", DType::F32, {2, 3}}, {"B", "b", DType::F32, {3}}},
      {{"C", "c", DType::F32, {2, 3}}});
  expandAndCheck(p, id, "c = a - b");
  auto out = interp::interpret(
      p, {{"a", tensor(DType::F32, {2, 3}, {1, 2, 3, 4, 5, 6})},
          {"b", tensor(DType::F32, {3}, {10, 20, 30})}});
  std::vector<double> want{-9, -18, -27, -6, -15, -24};
  for (std::size_t i = 0; i < want.size(); ++i)
    EXPECT_EQ(out.at("c").getAsDouble(static_cast<std::int64_t>(i)), want[i]);
}

TEST(ElementwiseExpansion, IntegerModTakesTheDivisorsSign) {
  auto [p, id] = singleOp(
      "Mod", {{"A", "a", DType::I32, {4}}, {"B", "b", DType::I32, {4}}},
      {{"C", "c", DType::I32, {4}}});
  expandAndCheck(p, id,
                 "r = a % b\nc = select(r != 0 && r < 0 != b < 0, r + b, r)");
  auto out =
      interp::interpret(p, {{"a", tensor(DType::I32, {4}, {-7, 7, -7, 6})},
                            {"b", tensor(DType::I32, {4}, {2, -2, -2, 3})}});
  // Python: -7 % 2 == 1, 7 % -2 == -1, -7 % -2 == -1, 6 % 3 == 0.
  std::vector<double> want{1, -1, -1, 0};
  for (std::size_t i = 0; i < want.size(); ++i)
    EXPECT_EQ(out.at("c").getAsDouble(static_cast<std::int64_t>(i)), want[i]);
}

TEST(ElementwiseExpansion, RoundIsHalfToEven) {
  auto [p, id] = singleOp("Round", {{"X", "x", DType::F32, {5}}},
                          {{"Y", "y", DType::F32, {5}}});
  expandAndCheck(p, id, "y = round(x)");
  auto out = interp::interpret(
      p, {{"x", tensor(DType::F32, {5}, {0.5, 1.5, 2.5, -2.5, 2.6})}});
  std::vector<double> want{0, 2, 2, -2, 3};
  for (std::size_t i = 0; i < want.size(); ++i)
    EXPECT_EQ(out.at("y").getAsDouble(static_cast<std::int64_t>(i)), want[i]);
}

TEST(ElementwiseExpansion, SumOfThreeInputs) {
  auto [p, id] = singleOp("Sum",
                          {{"data_0_0", "a", DType::F32, {3}},
                           {"data_0_1", "b", DType::F32, {1}},
                           {"data_0_2", "c", DType::F32, {3}}},
                          {{"sum", "s", DType::F32, {3}}});
  expandAndCheck(p, id, "y = in0 + in1 + in2");
  auto out =
      interp::interpret(p, {{"a", tensor(DType::F32, {3}, {1, 2, 3})},
                            {"b", tensor(DType::F32, {1}, {10})},
                            {"c", tensor(DType::F32, {3}, {100, 200, 300})}});
  std::vector<double> want{111, 212, 313};
  for (std::size_t i = 0; i < want.size(); ++i)
    EXPECT_EQ(out.at("s").getAsDouble(static_cast<std::int64_t>(i)), want[i]);
}

TEST(ElementwiseExpansion, CastToInt32Truncates) {
  auto [p, id] =
      singleOp("Cast", {{"input", "x", DType::F32, {3}}},
               {{"output", "y", DType::I32, {3}}}, {{"to", std::int64_t{6}}});
  expandAndCheck(p, id, "y = i32(x)");
  auto out =
      interp::interpret(p, {{"x", tensor(DType::F32, {3}, {-1.7, 0.2, 2.9})}});
  std::vector<double> want{-1, 0, 2};
  for (std::size_t i = 0; i < want.size(); ++i)
    EXPECT_EQ(out.at("y").getAsDouble(static_cast<std::int64_t>(i)), want[i]);
}

TEST(ElementwiseExpansion, RefusesFloatModWithoutFmod) {
  auto [p, id] = singleOp(
      "Mod", {{"A", "a", DType::F32, {4}}, {"B", "b", DType::F32, {4}}},
      {{"C", "c", DType::F32, {4}}}, {{"fmod", std::int64_t{0}}});
  try {
    operators::expandNode(p, id);
    FAIL() << "expected the expansion to refuse";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("fmod=0"), std::string::npos)
        << e.what();
  }
  // The program is unchanged: the node stays a library node.
  EXPECT_EQ(nodesOfKind(p, NodeKind::Library).size(), 1u);
}

TEST(ElementwiseExpansion, RefusesBitShiftWithoutDirection) {
  auto [p, id] = singleOp(
      "BitShift", {{"X", "a", DType::U8, {2}}, {"Y", "b", DType::U8, {2}}},
      {{"Z", "c", DType::U8, {2}}}, {{"direction", std::string("UP")}});
  EXPECT_THROW(operators::expandNode(p, id), Error);
}

} // namespace
