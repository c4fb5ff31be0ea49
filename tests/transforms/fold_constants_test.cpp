// `fold-constants`: chains folded in one step, Shape of a static value,
// refusals.

#include "transforms/graph_builder.h"
#include "transforms/tier1_checks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace weir::transforms_testing {
namespace {

using ::testing::HasSubstr;
using transforms::Match;

TEST(FoldConstants, ChainFoldsInOneStep) {
  GraphBuilder g("consts");
  g.input("x", {3}).output("y", {3}).transient("n", {3}).transient("m", {3});
  g.constantF32("c", {3}, {1, -2, 3}).constantF32("k", {3}, {0.5f, 0.25f, 2});
  g.op("Neg", "neg", {{"X", "c"}}, {{"Y", "n"}});
  g.op("Mul", "mul", {{"A", "n"}, {"B", "k"}}, {{"C", "m"}});
  g.op("Add", "add", {{"A", "x"}, {"B", "m"}}, {{"C", "y"}});
  std::vector<Match> ms = matchesOf(g.p, "fold-constants");
  ASSERT_EQ(ms.size(), 1u); // only Neg's inputs are constant yet
  ir::Program after =
      applyGoldenVerified("fold_constants_chain", g.p, "fold-constants", ms[0]);
  const ir::Container &m = after.container("m");
  ASSERT_TRUE(m.isConstant());
  float v[3];
  std::memcpy(v, m.constant->data(), 12);
  EXPECT_EQ(v[0], -0.5f);
  EXPECT_EQ(v[1], 0.5f);
  EXPECT_EQ(v[2], -6.0f);
  EXPECT_TRUE(matchesOf(after, "fold-constants").empty());
}

TEST(FoldConstants, ShapeOfStaticValue) {
  GraphBuilder g("shape");
  g.input("x", {2, 3, 4})
      .output("y", {2, 12})
      .transient("s", {2}, ir::DType::I64);
  g.op("Shape", "shape", {{"data", "x"}}, {{"shape", "s"}},
       {{"end", std::int64_t(2)}});
  g.transient("target", {2}, ir::DType::I64);
  g.constant("twelve", {1}, std::vector<std::int64_t>{12}, ir::DType::I64);
  g.transient("first", {1}, ir::DType::I64);
  g.constant("zero", {1}, std::vector<std::int64_t>{0}, ir::DType::I64);
  g.op("Gather", "gather", {{"data", "s"}, {"indices", "zero"}},
       {{"output", "first"}});
  g.op("Concat", "concat", {{"inputs_0", "first"}, {"inputs_1", "twelve"}},
       {{"concat_result", "target"}}, {{"axis", std::int64_t(0)}});
  g.op("Reshape", "reshape", {{"data", "x"}, {"shape", "target"}},
       {{"reshaped", "y"}});
  Match shape = matchesOf(g.p, "fold-constants").at(0);
  // Before folding the Reshape's target is not a constant, so the program
  // cannot run; after, it can.
  ir::Program after =
      applyGoldenVerified("fold_constants_shape_chain", g.p, "fold-constants",
                          shape, {}, /*runnable=*/false);
  const ir::Container &target = after.container("target");
  ASSERT_TRUE(target.isConstant());
  std::int64_t v[2];
  std::memcpy(v, target.constant->data(), 16);
  EXPECT_EQ(v[0], 2);
  EXPECT_EQ(v[1], 12);
  ir::Program expanded =
      transforms::applyChecked(after, T("expand-all"), Match{}).program;
  expectValid(expanded);
}

TEST(FoldConstants, Negative) {
  GraphBuilder g("consts_neg");
  g.input("x", {3}).output("y", {3}).transient("big", {3});
  g.constantF32("c", {3}, {1, 2, 3});
  ir::NodeId neg = g.op("Neg", "neg", {{"X", "c"}}, {{"Y", "big"}});
  ir::NodeId add = g.op("Add", "add", {{"A", "x"}, {"B", "big"}}, {{"C", "y"}});
  EXPECT_THAT(reason(g.p, "fold-constants", Match{"main", {{"node", neg}}},
                     {{"max_bytes", std::int64_t(8)}}),
              HasSubstr("more than max_bytes = 8"));
  EXPECT_THAT(reason(g.p, "fold-constants", Match{"main", {{"node", neg}}},
                     {{"max_bytes", std::int64_t(-1)}}),
              HasSubstr("outside"));
  EXPECT_THAT(reason(g.p, "fold-constants", Match{"main", {{"node", add}}}),
              HasSubstr("input 'x' is not constant"));
  GraphBuilder out("consts_out");
  out.output("y", {3});
  out.constantF32("c", {3}, {1, 2, 3});
  ir::NodeId n2 = out.op("Neg", "neg", {{"X", "c"}}, {{"Y", "y"}});
  EXPECT_THAT(reason(out.p, "fold-constants", Match{"main", {{"node", n2}}}),
              HasSubstr("program output"));
}

} // namespace
} // namespace weir::transforms_testing
