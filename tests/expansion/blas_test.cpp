// The library-call implementations (MatMul and Gemm as gemm primitives,
// Conv as im2col + gemm) against the pure expansions on the reference
// interpreter, and their fallbacks when they do not apply.

#include "core/interp/interpreter.h"
#include "ir/error.h"
#include "ir/validate.h"
#include "transforms/operators/expansion.h"
#include "unit/ir_builders.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

using namespace weir;
using namespace weir::ir;
using namespace weir::ir::builders;

#include "expansion/single_op.h"

using namespace weir::expansion_testing;

namespace {

const std::map<std::string, std::string> kPure{
    {"MatMul", "pure"}, {"Gemm", "pure"}, {"Conv", "pure"}};

/// Expands `p` with the defaults and with the pure implementations, checks
/// the default placed gemm primitives, and that both agree on random inputs.
void expectMatchesPure(const Program &p, int wantPrimitives) {
  Program fast = p, pure = p;
  auto report = operators::expandAll(fast);
  ASSERT_TRUE(report.skipped.empty()) << report.skipped.front();
  ASSERT_TRUE(operators::expandAll(pure, kPure).skipped.empty());
  expectValid(fast);
  EXPECT_EQ(count(fast, NodeKind::Primitive), wantPrimitives);
  EXPECT_EQ(count(fast, NodeKind::Library), 0);
  interp::TensorMap inputs = randomInputs(p);
  auto got = interp::interpret(fast, inputs);
  auto want = interp::interpret(pure, inputs);
  for (const auto &[name, t] : want) {
    std::vector<double> values;
    for (std::int64_t i = 0; i < t.elementCount(); ++i)
      values.push_back(t.getAsDouble(i));
    expectNear(got.at(name), values);
  }
}

TEST(BlasExpansion, MatMulTwoDIsOneCall) {
  expectMatchesPure(single("MatMul", {},
                           {{"A", "A", {3, 4}}, {"B", "B", {4, 5}}},
                           {{"Y", "Y", {3, 5}}}),
                    1);
}

TEST(BlasExpansion, MatMulBatchFoldsIntoRowsWhenBIsOneMatrix) {
  Program p = single("MatMul", {}, {{"A", "A", {2, 3, 4}}, {"B", "B", {4, 5}}},
                     {{"Y", "Y", {2, 3, 5}}});
  expectMatchesPure(p, 1);
  Program fast = p;
  ASSERT_TRUE(operators::expandAll(fast).skipped.empty());
  EXPECT_EQ(count(fast, NodeKind::MapEntry), 0) << "one call, no map";
}

TEST(BlasExpansion, MatMulBroadcastBatchesRunOneCallPerIndex) {
  expectMatchesPure(single("MatMul", {},
                           {{"A", "A", {2, 1, 3, 4}}, {"B", "B", {5, 4, 6}}},
                           {{"Y", "Y", {2, 5, 3, 6}}}),
                    1);
}

TEST(BlasExpansion, MatMulVectorOperands) {
  expectMatchesPure(single("MatMul", {},
                           {{"A", "A", {4}}, {"B", "B", {2, 4, 3}}},
                           {{"Y", "Y", {2, 3}}}),
                    1);
  expectMatchesPure(single("MatMul", {},
                           {{"A", "A", {2, 3, 4}}, {"B", "B", {4}}},
                           {{"Y", "Y", {2, 3}}}),
                    1);
}

TEST(BlasExpansion, GemmWithTransposesAlphaBetaAndBias) {
  Attributes attrs{{"transA", std::int64_t(1)},
                   {"transB", std::int64_t(1)},
                   {"alpha", 0.5},
                   {"beta", 2.0}};
  expectMatchesPure(
      single("Gemm", attrs,
             {{"A", "A", {4, 3}}, {"B", "B", {5, 4}}, {"C", "C", {5}}},
             {{"Y", "Y", {3, 5}}}),
      1);
  expectMatchesPure(single("Gemm", {}, {{"A", "A", {3, 4}}, {"B", "B", {4, 2}}},
                           {{"Y", "Y", {3, 2}}}),
                    1);
}

TEST(BlasExpansion, ConvIm2colWithPaddingStridesDilationsAndBias) {
  Attributes attrs{{"pads", std::vector<std::int64_t>{1, 0, 2, 1}},
                   {"strides", std::vector<std::int64_t>{2, 1}},
                   {"dilations", std::vector<std::int64_t>{1, 2}}};
  // X [2, 3, 7, 6], W [4, 3, 3, 2] -> Y [2, 4, 4, 5]
  expectMatchesPure(
      single(
          "Conv", attrs,
          {{"X", "X", {2, 3, 7, 6}}, {"W", "W", {4, 3, 3, 2}}, {"B", "B", {4}}},
          {{"Y", "Y", {2, 4, 4, 5}}}),
      1);
}

TEST(BlasExpansion, PointwiseConvMultipliesTheInputDirectly) {
  Program p =
      single("Conv", {}, {{"X", "X", {1, 6, 4, 4}}, {"W", "W", {5, 6, 1, 1}}},
             {{"Y", "Y", {1, 5, 4, 4}}});
  expectMatchesPure(p, 1);
  Program fast = p;
  ASSERT_TRUE(operators::expandAll(fast).skipped.empty());
  EXPECT_EQ(fast.containers.size(), 3u) << "no column matrix";
}

TEST(BlasExpansion, FallsBackToPureWhereItDoesNotApply) {
  // A grouped convolution and an integer MatMul expand, but purely.
  Program conv = single("Conv", {{"group", std::int64_t(2)}},
                        {{"X", "X", {1, 4, 5, 5}}, {"W", "W", {2, 2, 3, 3}}},
                        {{"Y", "Y", {1, 2, 3, 3}}});
  ASSERT_TRUE(operators::expandAll(conv).skipped.empty());
  EXPECT_EQ(count(conv, NodeKind::Primitive), 0);
  Program mm =
      single("MatMul", {},
             {{"A", "A", {2, 3}, DType::I32}, {"B", "B", {3, 4}, DType::I32}},
             {{"Y", "Y", {2, 4}, DType::I32}});
  ASSERT_TRUE(operators::expandAll(mm).skipped.empty());
  EXPECT_EQ(count(mm, NodeKind::Primitive), 0);
  // Asked for explicitly, BLAS says why it does not apply.
  Program again =
      single("MatMul", {},
             {{"A", "A", {2, 3}, DType::I32}, {"B", "B", {3, 4}, DType::I32}},
             {{"Y", "Y", {2, 4}, DType::I32}});
  auto report = operators::expandAll(again, {{"MatMul", "blas"}});
  ASSERT_EQ(report.skipped.size(), 1u);
  EXPECT_NE(report.skipped[0].find("takes f32"), std::string::npos)
      << report.skipped[0];
}

} // namespace
