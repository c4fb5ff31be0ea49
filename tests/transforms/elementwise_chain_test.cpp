// elementwise-chain: golden before/after text, refusals matching their
// reasons, bit-identical equivalence on the interpreter and the JIT, and
// the bundled models, where one step per chain reaches what map-fusion
// and tasklet-fusion reach pair by pair.

#include "transforms/golden.h"
#include "transforms/graph_builder.h"
#include "transforms/program_checks.h"
#include "transforms/registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <iostream>

namespace weir::transforms_testing {
namespace {

using ::testing::HasSubstr;

const transforms::Transformation &chain() {
  return *transforms::requireTransformation("elementwise-chain");
}

ir::Program fourOps() {
  GraphBuilder g("four_ops");
  g.input("x", {4, 6}).transient("a", {4, 6}).transient("b", {4, 6});
  g.transient("c", {4, 6}).output("y", {4, 6});
  g.op("Neg", "neg", {{"X", "x"}}, {{"Y", "a"}});
  g.op("Relu", "relu", {{"X", "a"}}, {{"Y", "b"}});
  g.op("Sigmoid", "sigmoid", {{"X", "b"}}, {{"Y", "c"}});
  g.op("Exp", "exp", {{"input", "c"}}, {{"output", "y"}});
  return expandAll(g.p);
}

TEST(ElementwiseChain, FourOperatorsGolden) {
  ir::Program before = fourOps();
  ASSERT_EQ(countNodes(before, ir::NodeKind::MapEntry), 4);
  std::vector<transforms::Match> heads = passing(before, chain());
  ASSERT_EQ(heads.size(), 1u) << "only the chain's head matches";
  ir::Program after =
      transforms::applyChecked(before, chain(), heads.front()).program;
  expectValid(after);
  expectGolden("elementwise_chain_four_ops", before, after);
  EXPECT_EQ(countNodes(after, ir::NodeKind::MapEntry), 1);
  EXPECT_EQ(countNodes(after, ir::NodeKind::Tasklet), 1);
  for (const char *gone : {"a", "b", "c"})
    EXPECT_EQ(after.findContainer(gone), nullptr) << gone;
  EXPECT_LT(bytesMoved(after), bytesMoved(before));
  expectEquivalent(before, after, chain().exactness());
}

TEST(ElementwiseChain, RefusesMapsInsideAChainAndLoneMaps) {
  ir::Program p = fourOps();
  std::string why = refusals(p, chain());
  EXPECT_THAT(why, HasSubstr("map 'relu.map' is inside a chain: map "
                             "'neg.map' fuses into it"));
  EXPECT_THAT(why, HasSubstr("map 'exp.map' is inside a chain: map "
                             "'sigmoid.map' fuses into it"));
  GraphBuilder g("lone");
  g.input("x", {3, 5}).output("y", {5, 3});
  g.op("Transpose", "t", {{"data", "x"}}, {{"transposed", "y"}});
  EXPECT_THAT(refusals(expandAll(g.p), chain()),
              HasSubstr("no map reads the output of map 't.copy'"));
}

TEST(ElementwiseChain, BundledModelsMatchPairByPairFusion) {
  for (const char *name : {"cnn.onnx", "mlp.onnx", "transformer.onnx"}) {
    SCOPED_TRACE(name);
    ir::Program before = expandedModel(name);
    ir::Program chained = before;
    int steps = toFixedPoint(chained, chain());
    expectValid(chained);
    ir::Program pairwise = before;
    toFixedPoint(pairwise, *transforms::requireTransformation("map-fusion"));
    toFixedPoint(pairwise,
                 *transforms::requireTransformation("tasklet-fusion"));
    std::cout << "[ elementwise-chain ] " << name << ": " << steps
              << " chains, maps " << countNodes(before, ir::NodeKind::MapEntry)
              << " -> " << countNodes(chained, ir::NodeKind::MapEntry)
              << " (pair by pair: "
              << countNodes(pairwise, ir::NodeKind::MapEntry) << ")\n";
    EXPECT_GT(steps, 0);
    EXPECT_EQ(countNodes(chained, ir::NodeKind::MapEntry),
              countNodes(pairwise, ir::NodeKind::MapEntry));
    EXPECT_EQ(bytesMoved(chained), bytesMoved(pairwise));
    expectEquivalent(before, chained, chain().exactness(), 23);
  }
}

} // namespace
} // namespace weir::transforms_testing
