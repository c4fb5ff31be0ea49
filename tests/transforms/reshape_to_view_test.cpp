// `reshape-to-view`: exactness on the bundled models (interpreter and JIT),
// refusals.

#include "core/interp/interpreter.h"
#include "core/runtime/random_tensor.h"
#include "ir/analysis.h"
#include "ir/hash.h"
#include "ir/json.h"
#include "transforms/graph_builder.h"
#include "transforms/operators/expansion.h"
#include "transforms/tier1_checks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>

namespace weir::transforms_testing {
namespace {

using ::testing::HasSubstr;
using transforms::Match;

/// Expanded, the program runs the same on the interpreter as on the JIT
/// (verifyPrograms covers the JIT); views must work on both.
void expectInterpreterAgrees(const ir::Program &before,
                             const ir::Program &after) {
  ir::Program a = before, b = after;
  operators::expandAll(a);
  operators::expandAll(b);
  interp::TensorMap in = runtime::randomInputs(a, 3, {{"N", 2}});
  interp::TensorMap x = interp::interpret(a, in), y = interp::interpret(b, in);
  for (const auto &[name, t] : x) {
    ASSERT_EQ(t.byteSize(), y.at(name).byteSize());
    EXPECT_EQ(std::memcmp(t.data(), y.at(name).data(), t.byteSize()), 0)
        << name;
  }
}

TEST(ReshapeToView, FlattenInCnnIsExact) {
  ir::Program p = model("cnn.onnx");
  std::vector<Match> ms = matchesOf(p, "reshape-to-view");
  ASSERT_EQ(ms.size(), 1u);
  ir::Program after =
      applyGoldenVerified("reshape_to_view_cnn", p, "reshape-to-view", ms[0]);
  EXPECT_TRUE(T("reshape-to-view").exactness().exact);
  int views = 0;
  for (const auto &[name, c] : after.containers)
    views += c.isView();
  EXPECT_EQ(views, 1);
  ir::SerializedProgram saved = ir::serialize(after);
  EXPECT_EQ(ir::structuralHash(ir::deserialize(saved.json, saved.binary)),
            ir::structuralHash(after));
  expectInterpreterAgrees(p, after);
  // Fewer bytes move: the copy is gone.
  ir::Program e1 =
      transforms::applyChecked(p, T("expand-all"), Match{}).program;
  ir::Program e2 =
      transforms::applyChecked(after, T("expand-all"), Match{}).program;
  EXPECT_LT(*ir::analyze(e2).bytesMoved.asConstant(),
            *ir::analyze(e1).bytesMoved.asConstant());
}

TEST(ReshapeToView, EveryReshapeOfTheTransformer) {
  ir::Program p = model("transformer.onnx");
  int applied = 0;
  for (;;) {
    bool progress = false;
    for (const Match &m : matchesOf(p, "reshape-to-view"))
      if (transforms::checkMatch(p, T("reshape-to-view"), m)) {
        ir::Program next =
            transforms::applyChecked(p, T("reshape-to-view"), m).program;
        expectValid(next);
        workspace::VerifyReport v = workspace::verifyPrograms(
            p, next, T("reshape-to-view").exactness(), {.seed = 1});
        ASSERT_TRUE(v.ok) << v.str();
        p = std::move(next);
        ++applied;
        progress = true;
        break;
      }
    if (!progress)
      break;
  }
  EXPECT_GE(applied, 4);
  expectInterpreterAgrees(model("transformer.onnx"), p);
}

TEST(ReshapeToView, Negative) {
  GraphBuilder g("reshape_out");
  g.input("x", {2, 6}).output("y", {3, 4});
  g.constant("shape", {2}, std::vector<std::int64_t>{3, 4}, ir::DType::I64);
  g.op("Reshape", "reshape", {{"data", "x"}, {"shape", "shape"}},
       {{"reshaped", "y"}});
  EXPECT_THAT(
      reason(g.p, "reshape-to-view", matchesOf(g.p, "reshape-to-view").at(0)),
      HasSubstr("program argument"));
  // The input is written twice (an accumulation), so a view could see the
  // later value.
  GraphBuilder twice("reshape_twice");
  twice.input("x", {2, 6})
      .input("z", {2, 6})
      .transient("t", {2, 6})
      .transient("u", {3, 4})
      .output("y", {3, 4});
  twice.constant("shape", {2}, std::vector<std::int64_t>{3, 4}, ir::DType::I64);
  twice.op("Relu", "relu", {{"X", "x"}}, {{"Y", "t"}});
  twice.op("Reshape", "reshape", {{"data", "t"}, {"shape", "shape"}},
           {{"reshaped", "u"}});
  twice.op("Neg", "neg", {{"X", "z"}}, {{"Y", "t"}});
  twice.op("Relu", "relu2", {{"X", "u"}}, {{"Y", "y"}});
  EXPECT_THAT(reason(twice.p, "reshape-to-view",
                     matchesOf(twice.p, "reshape-to-view").at(0)),
              HasSubstr("written more than once"));
  // The data input is the shape, not the tensor: the match is not this one.
  GraphBuilder ok("reshape_ok");
  ok.input("x", {2, 6}).transient("u", {3, 4}).output("y", {3, 4});
  ok.constant("shape", {2}, std::vector<std::int64_t>{3, 4}, ir::DType::I64);
  ok.op("Reshape", "reshape", {{"data", "x"}, {"shape", "shape"}},
        {{"reshaped", "u"}});
  ok.op("Relu", "relu", {{"X", "u"}}, {{"Y", "y"}});
  std::vector<Match> ms = matchesOf(ok.p, "reshape-to-view");
  ASSERT_EQ(ms.size(), 2u); // input = x, and input = shape
  EXPECT_TRUE(transforms::checkMatch(ok.p, T("reshape-to-view"), ms[0]).ok);
  EXPECT_THAT(reason(ok.p, "reshape-to-view", ms[1]),
              HasSubstr("not the operator's data input"));
  // A view is read-only: validation rejects a write into one.
  ir::Program viewed =
      transforms::applyChecked(ok.p, T("reshape-to-view"), ms[0]).program;
  viewed.containers.at("u").viewOf = "nothing";
  EXPECT_TRUE(ir::hasErrors(ir::validate(viewed)));
}

} // namespace
} // namespace weir::transforms_testing
