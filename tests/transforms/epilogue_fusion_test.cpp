// epilogue-fusion and init-fusion: golden before/after text, chains of
// epilogues, gemms in a batch map (batched MatMul, convolution over a batch
// of two), one negative test per precondition (matching its reason), and
// equivalence on the interpreter and the CPU JIT, synthetic and on the
// bundled models.

#include "ir/primitives.h"
#include "transforms/golden.h"
#include "transforms/graph_builder.h"
#include "transforms/program_checks.h"
#include "transforms/registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <iostream>

namespace weir::transforms_testing {
namespace {

using ::testing::HasSubstr;
using transforms::Match;

const transforms::Transformation &epilogue() {
  return *transforms::requireTransformation("epilogue-fusion");
}
const transforms::Transformation &init() {
  return *transforms::requireTransformation("init-fusion");
}

std::vector<ir::GemmCall> gemms(const ir::Program &p) {
  std::vector<ir::GemmCall> out;
  for (const ir::State &s : p.states)
    for (const ir::Node &n : s.nodes)
      if (n.kind == ir::NodeKind::Primitive &&
          n.primitive().primitive == "gemm")
        out.push_back(ir::readGemm(n.primitive()));
  return out;
}

/// y = relu(x · w + b): MatMul, Add, Relu.
GraphBuilder matmulBiasRelu() {
  GraphBuilder g("matmul_bias_relu");
  g.input("x", {4, 8})
      .input("w", {8, 6})
      .input("b", {6})
      .transient("xw", {4, 6})
      .transient("xwb", {4, 6})
      .output("y", {4, 6});
  g.op("MatMul", "mm", {{"A", "x"}, {"B", "w"}}, {{"Y", "xw"}});
  g.op("Add", "bias", {{"A", "xw"}, {"B", "b"}}, {{"C", "xwb"}});
  g.op("Relu", "relu", {{"X", "xwb"}}, {{"Y", "y"}});
  return g;
}

TEST(EpilogueFusion, BiasThenReluGolden) {
  ir::Program before = expandAll(matmulBiasRelu().p);
  std::vector<Match> ms = passing(before, epilogue());
  ASSERT_EQ(ms.size(), 1u);
  ir::Program one = transforms::applyChecked(before, epilogue(), ms[0]).program;
  expectValid(one);
  expectGolden("epilogue_fusion_bias", before, one);
  expectEquivalent(before, one, epilogue().exactness());

  // The relu reads what the gemm now writes: a second epilogue follows the
  // first.
  ms = passing(one, epilogue());
  ASSERT_EQ(ms.size(), 1u);
  ir::Program two = transforms::applyChecked(one, epilogue(), ms[0]).program;
  expectValid(two);
  expectGolden("epilogue_fusion_bias_relu", one, two);
  expectEquivalent(before, two, epilogue().exactness());
  EXPECT_EQ(countNodes(two, ir::NodeKind::MapEntry), 0);
  EXPECT_LT(bytesMoved(two), bytesMoved(before));
  ASSERT_EQ(gemms(two).size(), 1u);
  EXPECT_EQ(gemms(two)[0].operands.size(), 1u);
  EXPECT_EQ(ir::analyze(two).flops.evaluate(),
            ir::analyze(before).flops.evaluate());
}

TEST(EpilogueFusion, GemmWithBiasNeedsInitFusionFirst) {
  GraphBuilder g("gemm_bias_tanh");
  g.input("a", {5, 7})
      .input("b", {3, 7})
      .input("c", {3})
      .transient("t", {5, 3})
      .output("y", {5, 3});
  g.op("Gemm", "fc", {{"A", "a"}, {"B", "b"}, {"C", "c"}}, {{"Y", "t"}},
       {{"transB", std::int64_t(1)}, {"alpha", 0.5}, {"beta", 2.0}});
  g.op("Tanh", "act", {{"input", "t"}}, {{"output", "y"}});
  ir::Program before = expandAll(g.p);
  EXPECT_TRUE(passing(before, epilogue()).empty());
  EXPECT_THAT(refusals(before, epilogue()), HasSubstr("(init-fusion)"));

  std::vector<Match> ms = passing(before, init());
  ASSERT_EQ(ms.size(), 1u);
  ir::Program folded = transforms::applyChecked(before, init(), ms[0]).program;
  expectValid(folded);
  expectGolden("init_fusion_gemm", before, folded);
  ASSERT_EQ(gemms(folded).size(), 1u);
  EXPECT_EQ(gemms(folded)[0].beta, 0.0);
  workspace::VerifyReport v =
      workspace::verifyPrograms(before, folded, init().exactness(), {});
  EXPECT_TRUE(v.ok) << v.str();

  ms = passing(folded, epilogue());
  ASSERT_EQ(ms.size(), 1u);
  ir::Program fused =
      transforms::applyChecked(folded, epilogue(), ms[0]).program;
  expectValid(fused);
  EXPECT_EQ(countNodes(fused, ir::NodeKind::MapEntry), 0);
  v = workspace::verifyPrograms(before, fused, init().exactness(), {});
  EXPECT_TRUE(v.ok) << v.str();
}

/// Convolution with bias, relu and a residual add over a batch of `n`: the
/// gemm runs in a map over the images.
GraphBuilder convBlock(std::int64_t n) {
  GraphBuilder g("conv_block");
  g.input("x", {n, 3, 6, 6})
      .input("w", {3, 3, 3, 3})
      .input("b", {3})
      .transient("c", {n, 3, 6, 6})
      .transient("r", {n, 3, 6, 6})
      .output("y", {n, 3, 6, 6});
  g.op("Conv", "conv", {{"X", "x"}, {"W", "w"}, {"B", "b"}}, {{"Y", "c"}},
       {{"kernel_shape", std::vector<std::int64_t>{3, 3}},
        {"pads", std::vector<std::int64_t>{1, 1, 1, 1}}});
  g.op("Relu", "relu", {{"X", "c"}}, {{"Y", "r"}});
  g.op("Add", "residual", {{"A", "r"}, {"B", "x"}}, {{"C", "y"}});
  return g;
}

TEST(EpilogueFusion, ConvolutionBiasReluResidualOverABatch) {
  for (std::int64_t n : {1, 2}) {
    SCOPED_TRACE("batch " + std::to_string(n));
    ir::Program before = expandAll(convBlock(n).p);
    ir::Program p = before;
    EXPECT_EQ(toFixedPoint(p, init()), 1);
    EXPECT_EQ(toFixedPoint(p, epilogue()), 2);
    expectValid(p);
    ASSERT_EQ(gemms(p).size(), 1u);
    // Bias, residual: two operands; relu needs none.
    EXPECT_EQ(gemms(p)[0].operands.size(), 2u);
    EXPECT_LT(bytesMoved(p), bytesMoved(before));
    workspace::VerifyReport v =
        workspace::verifyPrograms(before, p, init().exactness(), {.seed = 3});
    EXPECT_TRUE(v.ok) << v.str();
    if (n == 2)
      expectGolden("epilogue_fusion_conv_batch", before, p);
  }
}

TEST(EpilogueFusion, BatchedMatMulScale) {
  GraphBuilder g("attention_scores");
  g.input("q", {2, 3, 4, 5})
      .input("k", {2, 3, 5, 4})
      .constantF32("scale", {}, {0.125f})
      .transient("s", {2, 3, 4, 4})
      .output("y", {2, 3, 4, 4});
  g.op("MatMul", "qk", {{"A", "q"}, {"B", "k"}}, {{"Y", "s"}});
  g.op("Mul", "scaled", {{"A", "s"}, {"B", "scale"}}, {{"C", "y"}});
  ir::Program before = expandAll(g.p);
  ir::Program p = before;
  EXPECT_EQ(toFixedPoint(p, epilogue()), 1);
  expectValid(p);
  EXPECT_EQ(countNodes(p, ir::NodeKind::Tasklet), 0);
  expectEquivalent(before, p, epilogue().exactness());
}

TEST(EpilogueFusion, RefusesAnOutputReadTwice) {
  GraphBuilder g("read_twice");
  g.input("x", {4, 8}).input("w", {8, 6});
  g.transient("xw", {4, 6}).output("y", {4, 6}).output("z", {4, 6});
  g.op("MatMul", "mm", {{"A", "x"}, {"B", "w"}}, {{"Y", "xw"}});
  g.op("Relu", "relu", {{"X", "xw"}}, {{"Y", "y"}});
  g.op("Neg", "neg", {{"X", "xw"}}, {{"Y", "z"}});
  ir::Program p = expandAll(g.p);
  EXPECT_TRUE(passing(p, epilogue()).empty());
  EXPECT_THAT(refusals(p, epilogue()), HasSubstr("has other readers"));
}

TEST(EpilogueFusion, RefusesATransposedRead) {
  GraphBuilder g("transposed");
  g.input("x", {4, 8}).input("w", {8, 6});
  g.transient("xw", {4, 6}).output("y", {6, 4});
  g.op("MatMul", "mm", {{"A", "x"}, {"B", "w"}}, {{"Y", "xw"}});
  g.op("Transpose", "t", {{"data", "xw"}}, {{"transposed", "y"}});
  ir::Program p = expandAll(g.p);
  EXPECT_TRUE(passing(p, epilogue()).empty());
  EXPECT_THAT(refusals(p, epilogue()),
              HasSubstr("a gemm writes its rows contiguously"));
}

TEST(EpilogueFusion, RefusesAReductionAndABroadcastingConsumer) {
  GraphBuilder g("reduce");
  g.input("x", {4, 8}).input("w", {8, 6});
  g.transient("xw", {4, 6}).output("y", {4, 1});
  g.op("MatMul", "mm", {{"A", "x"}, {"B", "w"}}, {{"Y", "xw"}});
  g.op("ReduceSum", "sum", {{"data", "xw"}}, {{"reduced", "y"}},
       {{"axes", std::vector<std::int64_t>{1}}});
  ir::Program p = expandAll(g.p);
  EXPECT_TRUE(passing(p, epilogue()).empty());
  EXPECT_FALSE(refusals(p, epilogue()).empty());
}

TEST(EpilogueFusion, RefusesWritingWhatTheGemmReads) {
  // y = relu(x · w) written back into x's place is impossible for a gemm;
  // here the consumer writes the gemm's input w (an in-place update).
  GraphBuilder g("in_place");
  g.input("x", {6, 6}).transient("w", {6, 6}).transient("xw", {6, 6});
  g.output("y", {6, 6});
  g.op("Neg", "init", {{"X", "x"}}, {{"Y", "w"}});
  g.op("MatMul", "mm", {{"A", "x"}, {"B", "w"}}, {{"Y", "xw"}});
  g.op("Relu", "relu", {{"X", "xw"}}, {{"Y", "w"}});
  g.op("Neg", "out", {{"X", "w"}}, {{"Y", "y"}});
  ir::Program p = expandAll(g.p);
  EXPECT_TRUE(passing(p, epilogue()).empty());
  EXPECT_THAT(refusals(p, epilogue()), HasSubstr("the gemm reads"));
}

TEST(InitFusion, RefusesAnInitializationReadElsewhere) {
  GraphBuilder g("init_read");
  g.input("a", {5, 7}).input("b", {7, 3}).input("c", {5, 3});
  g.transient("t", {5, 3}).output("y", {5, 3});
  g.op("Gemm", "fc", {{"A", "a"}, {"B", "b"}, {"C", "c"}}, {{"Y", "y"}});
  ir::Program p = expandAll(g.p);
  // Make the initialized accumulator visible to another reader.
  std::vector<Match> ms = transforms::findMatches(p, init());
  ASSERT_EQ(ms.size(), 1u);
  ir::State &s = p.states[0];
  ir::NodeId array = ms[0].node("array");
  ir::NodeId extra = ir::addAccess(p, s, "t");
  s.edges.push_back(
      {p.newEdgeId(), array, "", extra, "",
       ir::Memlet{"y", ir::Subset::full(p.container("y").shape), {}}});
  transforms::CheckResult c = transforms::checkMatch(p, init(), ms[0]);
  EXPECT_FALSE(c.ok);
  EXPECT_THAT(c.reason, HasSubstr("other writers or readers"));
}

TEST(EpilogueFusion, BundledModelsToAFixedPoint) {
  for (const char *name : {"cnn.onnx", "mlp.onnx", "transformer.onnx"}) {
    SCOPED_TRACE(name);
    ir::Program before = expandedModel(name);
    ir::Program after = before;
    int inits = toFixedPoint(after, init());
    int epilogues = toFixedPoint(after, epilogue());
    expectValid(after);
    std::int64_t b0 = bytesMoved(before), b1 = bytesMoved(after);
    std::cout << "[ epilogue-fusion ] " << name << ": " << inits
              << " init-fusions, " << epilogues
              << " epilogue-fusions, bytes moved (N = 1) " << b0 << " -> " << b1
              << "\n";
    EXPECT_GT(inits + epilogues, 0);
    EXPECT_LT(b1, b0);
    workspace::VerifyReport v = workspace::verifyPrograms(
        before, after, init().exactness(), {.seed = 9});
    EXPECT_TRUE(v.ok) << v.str();
  }
}

} // namespace
} // namespace weir::transforms_testing
