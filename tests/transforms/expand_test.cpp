// `expand`: golden text, equivalence on the bundled CNN, one negative test per
// precondition.

#include "transforms/graph_builder.h"
#include "transforms/rewrite.h"
#include "transforms/tier1_checks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace weir::transforms_testing {
namespace {

using ::testing::HasSubstr;
using transforms::Match;

TEST(Expand, GoldenAndEquivalentOnCnn) {
  ir::Program p = model("cnn.onnx");
  std::vector<Match> ms = matchesOf(p, "expand");
  ASSERT_FALSE(ms.empty());
  // The first Conv, with the pure implementation.
  Match conv;
  for (const Match &m : ms)
    if (transforms::stateNamed(p, m.state)
            .findNode(m.node("node"))
            ->library()
            .op == "Conv") {
      conv = m;
      break;
    }
  ASSERT_FALSE(conv.roles.empty());
  ir::Program after =
      applyGoldenVerified("expand_conv_pure", p, "expand", conv,
                          {{"implementation", std::string("pure")}});
  EXPECT_EQ(transforms::stateNamed(after, "main").findNode(conv.node("node")),
            nullptr);
}

TEST(Expand, Negative) {
  ir::Program p = model("cnn.onnx");
  Match m = matchesOf(p, "expand").front();
  EXPECT_THAT(
      reason(p, "expand", m, {{"implementation", std::string("magic")}}),
      HasSubstr("has no implementation 'magic'"));
  EXPECT_THAT(reason(p, "expand", m, {{"implementation", std::int64_t(3)}}),
              HasSubstr("must be string"));
  EXPECT_THAT(reason(p, "expand", m, {{"nonsense", true}}),
              HasSubstr("'nonsense' is unknown"));
  // An access node is not a library node.
  Match wrong{m.state, {{"node", 1}}};
  EXPECT_THAT(reason(p, "expand", wrong), HasSubstr("is not a library"));
  EXPECT_THAT(reason(p, "expand", Match{"nowhere", {{"node", 1}}}),
              HasSubstr("no state 'nowhere'"));
  EXPECT_THAT(reason(p, "expand", Match{m.state, {{"op", m.node("node")}}}),
              HasSubstr("must bind the roles node"));
  // An implementation that does not apply: im2col needs group 1.
  GraphBuilder g("grouped");
  g.input("x", {1, 4, 5, 5}).output("y", {1, 4, 3, 3});
  g.constantF32("w", {4, 2, 3, 3}, std::vector<float>(72, 0.5f));
  ir::NodeId conv = g.op("Conv", "conv", {{"X", "x"}, {"W", "w"}}, {{"Y", "y"}},
                         {{"group", std::int64_t(2)}});
  EXPECT_THAT(reason(g.p, "expand", Match{"main", {{"node", conv}}},
                     {{"implementation", std::string("im2col")}}),
              HasSubstr("group"));
}

} // namespace
} // namespace weir::transforms_testing
