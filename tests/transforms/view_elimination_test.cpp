// view-elimination: golden before/after text, transposes folded into map
// readers and into gemm operands (a new leading dimension, a flipped
// transpose flag, a head-split attention operand), negative tests matching
// their reasons, and equivalence on the interpreter and the CPU JIT,
// synthetic and on the bundled models.

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

const transforms::Transformation &elimination() {
  return *transforms::requireTransformation("view-elimination");
}

ir::GemmCall onlyGemm(const ir::Program &p) {
  std::vector<ir::GemmCall> out;
  for (const ir::Node &n : p.states[0].nodes)
    if (n.kind == ir::NodeKind::Primitive)
      out.push_back(ir::readGemm(n.primitive()));
  EXPECT_EQ(out.size(), 1u);
  return out.empty() ? ir::GemmCall{} : out[0];
}

ir::Attributes perm(std::vector<std::int64_t> p) { return {{"perm", p}}; }

TEST(ViewElimination, TransposeIntoAMapGolden) {
  GraphBuilder g("transpose_relu");
  g.input("x", {4, 6}).transient("t", {6, 4}).output("y", {6, 4});
  g.op("Transpose", "tr", {{"data", "x"}}, {{"transposed", "t"}});
  g.op("Relu", "relu", {{"X", "t"}}, {{"Y", "y"}});
  ir::Program before = expandAll(g.p);
  ir::Program after = before;
  EXPECT_EQ(toFixedPoint(after, elimination()), 1);
  expectValid(after);
  expectGolden("view_elimination_map", before, after);
  EXPECT_EQ(countNodes(after, ir::NodeKind::MapEntry), 1);
  EXPECT_LT(bytesMoved(after), bytesMoved(before));
  expectEquivalent(before, after, elimination().exactness());
}

TEST(ViewElimination, TransposedOperandFlipsTheGemm) {
  // A = a[n]^T: rows of the copy are columns of the original.
  GraphBuilder g("transposed_a");
  g.input("a", {3, 4, 5}).input("b", {3, 4, 6});
  g.transient("t", {3, 5, 4}).output("y", {3, 5, 6});
  g.op("Transpose", "tr", {{"data", "a"}}, {{"transposed", "t"}},
       perm({0, 2, 1}));
  g.op("MatMul", "mm", {{"A", "t"}, {"B", "b"}}, {{"Y", "y"}});
  ir::Program before = expandAll(g.p);
  ir::Program after = before;
  EXPECT_EQ(toFixedPoint(after, elimination()), 1);
  expectValid(after);
  ir::GemmCall call = onlyGemm(after);
  EXPECT_TRUE(call.transA);
  EXPECT_EQ(call.lda, ir::Expr(5));
  expectGolden("view_elimination_gemm_flip", before, after);
  expectEquivalent(before, after, elimination().exactness());

  // B = w^T, the weight of a linear layer stored [out, in].
  GraphBuilder h("transposed_b");
  h.input("x", {5, 4}).input("w", {6, 4});
  h.transient("wt", {4, 6}).output("y", {5, 6});
  h.op("Transpose", "tr", {{"data", "w"}}, {{"transposed", "wt"}});
  h.op("MatMul", "mm", {{"A", "x"}, {"B", "wt"}}, {{"Y", "y"}});
  before = expandAll(h.p);
  after = before;
  EXPECT_EQ(toFixedPoint(after, elimination()), 1);
  EXPECT_TRUE(onlyGemm(after).transB);
  EXPECT_EQ(onlyGemm(after).ldb, ir::Expr(4));
  expectEquivalent(before, after, elimination().exactness());
}

TEST(ViewElimination, HeadSplitOperandGetsALeadingDimension) {
  // Attention: [S, H, D] -> [H, S, D]; head h's matrix is S rows of D
  // elements, H·D apart in the original.
  GraphBuilder g("heads");
  g.input("x", {1, 4, 2, 3}).input("k", {1, 2, 3, 5});
  g.transient("t", {1, 2, 4, 3}).output("y", {1, 2, 4, 5});
  g.op("Transpose", "tr", {{"data", "x"}}, {{"transposed", "t"}},
       perm({0, 2, 1, 3}));
  g.op("MatMul", "qk", {{"A", "t"}, {"B", "k"}}, {{"Y", "y"}});
  ir::Program before = expandAll(g.p);
  ir::Program after = before;
  EXPECT_EQ(toFixedPoint(after, elimination()), 1);
  expectValid(after);
  ir::GemmCall call = onlyGemm(after);
  EXPECT_FALSE(call.transA);
  EXPECT_EQ(call.lda, ir::Expr(6));
  expectEquivalent(before, after, elimination().exactness());
}

TEST(ViewElimination, RefusesAMatrixWithoutAUnitStride) {
  GraphBuilder g("no_unit_stride");
  g.input("x", {3, 4, 5}).input("b", {4, 6});
  g.transient("t", {5, 3, 4}).output("y", {5, 3, 6});
  g.op("Transpose", "tr", {{"data", "x"}}, {{"transposed", "t"}},
       perm({2, 0, 1}));
  g.op("MatMul", "mm", {{"A", "t"}, {"B", "b"}}, {{"Y", "y"}});
  ir::Program p = expandAll(g.p);
  EXPECT_EQ(toFixedPoint(p, elimination()), 0);
  EXPECT_THAT(refusals(p, elimination()),
              HasSubstr("a gemm needs one of them to be 1"));
}

TEST(ViewElimination, RefusesArgumentsAndComputingMaps) {
  GraphBuilder g("output_copy");
  g.input("x", {4, 6}).output("y", {6, 4}).output("z", {4, 6});
  g.op("Transpose", "tr", {{"data", "x"}}, {{"transposed", "y"}});
  g.op("Neg", "neg", {{"X", "x"}}, {{"Y", "z"}});
  ir::Program p = expandAll(g.p);
  EXPECT_EQ(toFixedPoint(p, elimination()), 0);
  std::string why = refusals(p, elimination());
  EXPECT_THAT(why, HasSubstr("'y' is not a plain transient"));
  EXPECT_THAT(why, HasSubstr("does more than copy one element"));
}

TEST(ViewElimination, BundledTransformer) {
  ir::Program before = expandedModel("transformer.onnx");
  ir::Program after = before;
  int folded = toFixedPoint(after, elimination());
  expectValid(after);
  std::cout << "[ view-elimination ] transformer.onnx: " << folded
            << " copies folded, bytes moved (N = 1) " << bytesMoved(before)
            << " -> " << bytesMoved(after) << "\n";
  EXPECT_GT(folded, 0);
  expectEquivalent(before, after, elimination().exactness(), 13);
}

} // namespace
} // namespace weir::transforms_testing
