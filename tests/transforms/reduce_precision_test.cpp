// reduce-precision: golden before/after text, refusals matching their
// reasons, results equal to a hand-rounded reference on the interpreter
// and the CPU JIT, and the bundled models within the declared tolerance.

#include "codegen/cpu/compile.h"
#include "core/runtime/tensor.h"
#include "ir/float16.h"
#include "transforms/golden.h"
#include "transforms/graph_builder.h"
#include "transforms/program_checks.h"
#include "transforms/registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <iostream>

namespace weir::transforms_testing {
namespace {

using ::testing::HasSubstr;

const transforms::Transformation &reducePrecision() {
  return *transforms::requireTransformation("reduce-precision");
}

float roundedToBf16(float v) {
  return ir::bfloat16ToFloat(ir::floatToBfloat16(v));
}

std::vector<float> floats(const runtime::Tensor &t) {
  std::vector<float> v(std::size_t(t.elementCount()));
  std::memcpy(v.data(), t.data(), v.size() * sizeof(float));
  return v;
}

/// y = relu(x) * w: the transient relu(x) and the constant w are both
/// stored in bf16 afterwards.
ir::Program reluTimesWeight() {
  GraphBuilder g("relu_times_w");
  std::vector<float> w(5 * 7);
  for (std::size_t i = 0; i < w.size(); ++i)
    w[i] = 0.1f * float(i) - 1.7f + 1e-3f * float(i * i); // not bf16-exact
  g.input("x", {5, 7}).transient("t", {5, 7}).constantF32("w", {5, 7}, w);
  g.output("y", {5, 7});
  g.op("Relu", "relu", {{"X", "x"}}, {{"Y", "t"}});
  g.op("Mul", "mul", {{"A", "t"}, {"B", "w"}}, {{"C", "y"}});
  return expandAll(g.p);
}

TEST(ReducePrecision, TransientAndWeightGolden) {
  ir::Program before = reluTimesWeight();
  ir::Program after = before;
  EXPECT_EQ(toFixedPoint(after, reducePrecision()), 2);
  expectValid(after);
  expectGolden("reduce_precision_relu_times_w", before, after);
  EXPECT_EQ(after.container("t").dtype, ir::DType::BF16);
  EXPECT_EQ(after.container("w").dtype, ir::DType::BF16);
  EXPECT_EQ(after.container("w").constant->size(), 5u * 7u * 2u);
  // t is written once and read once, w read once: 3 × 35 elements move
  // 2 bytes fewer each.
  EXPECT_EQ(bytesMoved(after), bytesMoved(before) - 3 * 35 * 2);
}

TEST(ReducePrecision, ResultsAreTheRoundedStorageComputedInF32) {
  ir::Program before = reluTimesWeight();
  ir::Program after = before;
  ASSERT_EQ(toFixedPoint(after, reducePrecision()), 2);
  interp::TensorMap in = runtime::randomInputs(before, 11, {});
  std::vector<float> x = floats(in.at("x"));
  std::vector<float> w(35);
  std::memcpy(w.data(), before.container("w").constant->data(), 35 * 4);
  // What bf16 storage with f32 compute must give, element by element: the
  // product of two bf16 values is exact in f32, so equality is bitwise.
  std::vector<float> want(35);
  bool anyRounded = false;
  for (std::size_t i = 0; i < 35; ++i) {
    want[i] = roundedToBf16(std::max(x[i], 0.0f)) * roundedToBf16(w[i]);
    anyRounded |= want[i] != std::max(x[i], 0.0f) * w[i];
  }
  ASSERT_TRUE(anyRounded) << "the data must exercise the rounding";
  EXPECT_EQ(floats(interp::interpret(after, in).at("y")), want)
      << "interpreter";
  EXPECT_EQ(floats(codegen::compile(after).run(in).at("y")), want) << "JIT";
  workspace::VerifyReport v =
      workspace::verifyPrograms(before, after, reducePrecision().exactness());
  EXPECT_TRUE(v.ok) << v.str();
}

TEST(ReducePrecision, RefusesArgumentsGemmOperandsAccumulatorsAndCopies) {
  GraphBuilder g("refusals");
  g.input("x", {4, 8}).constantF32("w", {8, 3}, std::vector<float>(24, 0.5f));
  g.transient("h", {4, 3}).transient("s", {1, 1}).output("y", {1, 1});
  g.op("MatMul", "mm", {{"A", "x"}, {"B", "w"}}, {{"Y", "h"}});
  g.op("ReduceSum", "sum", {{"data", "h"}}, {{"reduced", "s"}},
       {{"keepdims", std::int64_t(1)}});
  g.op("Neg", "neg", {{"X", "s"}}, {{"Y", "y"}});
  ir::Program p = expandAll(g.p);
  std::string why = refusals(p, reducePrecision());
  EXPECT_THAT(why, HasSubstr("'x': is a program argument"));
  EXPECT_THAT(why, HasSubstr("'w': read by primitive"));
  EXPECT_THAT(why, HasSubstr("'h': written by primitive"));
  EXPECT_THAT(why, HasSubstr("'s': edge"));
  EXPECT_THAT(why, HasSubstr("accumulates into it with 'sum'"));
  EXPECT_TRUE(passing(p, reducePrecision()).empty()) << why;
}

TEST(ReducePrecision, OneMatchPerContainer) {
  // t is read in a second state through an access node of its own.
  GraphBuilder g("two_states");
  g.input("x", {6}).transient("t", {6}).output("y", {6});
  g.op("Exp", "exp", {{"input", "x"}}, {{"output", "t"}});
  g.newState("second");
  g.op("Sqrt", "sqrt", {{"X", "t"}}, {{"Y", "y"}});
  ir::Program before = expandAll(g.p);
  EXPECT_EQ(passing(before, reducePrecision()).size(), 1u);
  EXPECT_THAT(refusals(before, reducePrecision()),
              HasSubstr("'t': converted through its first access node (main:"));
  ir::Program after = before;
  EXPECT_EQ(toFixedPoint(after, reducePrecision()), 1);
  expectValid(after);
  workspace::VerifyReport v =
      workspace::verifyPrograms(before, after, reducePrecision().exactness());
  EXPECT_TRUE(v.ok) << v.str();
}

TEST(ReducePrecision, BundledModelsWithinTheDeclaredTolerance) {
  for (const char *name : {"cnn.onnx", "mlp.onnx", "transformer.onnx"}) {
    SCOPED_TRACE(name);
    ir::Program before = expandedModel(name);
    ir::Program after = before;
    int applied = toFixedPoint(after, reducePrecision());
    expectValid(after);
    std::cout << "[ reduce-precision ] " << name << ": " << applied
              << " containers in bf16, bytes moved " << bytesMoved(before)
              << " -> " << bytesMoved(after) << "\n";
    EXPECT_GT(applied, 0);
    EXPECT_LT(bytesMoved(after), bytesMoved(before));
    workspace::VerifyReport v = workspace::verifyPrograms(
        before, after, reducePrecision().exactness(), {.seed = 5});
    EXPECT_TRUE(v.ok) << v.str();
  }
}

} // namespace
} // namespace weir::transforms_testing
