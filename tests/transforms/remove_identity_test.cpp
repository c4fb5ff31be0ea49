// `remove-identity`: golden text, exactness, one negative test per
// precondition.

#include "transforms/graph_builder.h"
#include "transforms/tier1_checks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace weir::transforms_testing {
namespace {

using ::testing::HasSubstr;
using transforms::Match;

TEST(RemoveIdentity, InteriorCopyIsExact) {
  GraphBuilder g("identity");
  g.input("x", {2, 3})
      .transient("t", {2, 3})
      .transient("u", {2, 3})
      .output("y", {2, 3});
  g.op("Relu", "relu1", {{"X", "x"}}, {{"Y", "t"}});
  g.op("Identity", "copy", {{"input", "t"}}, {{"output", "u"}});
  g.op("Neg", "neg", {{"X", "u"}}, {{"Y", "y"}});
  std::vector<Match> ms = matchesOf(g.p, "remove-identity");
  ASSERT_EQ(ms.size(), 1u);
  ir::Program after = applyGoldenVerified("remove_identity_interior", g.p,
                                          "remove-identity", ms[0]);
  EXPECT_EQ(after.findContainer("u"), nullptr);
  EXPECT_TRUE(T("remove-identity").exactness().exact);
}

TEST(RemoveIdentity, OutputCopyRenamesProducer) {
  GraphBuilder g("identity_out");
  g.input("x", {4}).transient("t", {4}).output("y", {4});
  g.op("Relu", "relu", {{"X", "x"}}, {{"Y", "t"}});
  g.op("Identity", "copy", {{"input", "t"}}, {{"output", "y"}});
  ir::Program after =
      applyGoldenVerified("remove_identity_output", g.p, "remove-identity",
                          matchesOf(g.p, "remove-identity").at(0));
  EXPECT_EQ(after.findContainer("t"), nullptr);
  ASSERT_NE(after.findContainer("y"), nullptr);
}

TEST(RemoveIdentity, DropoutAndNegative) {
  GraphBuilder g("dropout");
  g.input("x", {4})
      .transient("t", {4})
      .transient("mask", {4}, ir::DType::Bool)
      .output("y", {4});
  g.op("Dropout", "drop", {{"data", "x"}}, {{"output", "t"}, {"mask", "mask"}});
  g.op("Relu", "relu", {{"X", "t"}}, {{"Y", "y"}});
  applyGoldenVerified("remove_dropout", g.p, "remove-identity",
                      matchesOf(g.p, "remove-identity").at(0));

  GraphBuilder training("dropout_training");
  training.input("x", {4}).transient("t", {4}).output("y", {4});
  training.constant("on", {}, std::vector<std::uint8_t>{1}, ir::DType::Bool);
  training.op("Dropout", "drop", {{"data", "x"}, {"training_mode", "on"}},
              {{"output", "t"}});
  training.op("Relu", "relu", {{"X", "t"}}, {{"Y", "y"}});
  EXPECT_THAT(reason(training.p, "remove-identity",
                     matchesOf(training.p, "remove-identity").at(0)),
              HasSubstr("training_mode is not a constant false"));

  GraphBuilder mask("dropout_mask");
  mask.input("x", {4})
      .transient("t", {4})
      .output("m", {4}, ir::DType::Bool)
      .output("y", {4});
  mask.op("Dropout", "drop", {{"data", "x"}}, {{"output", "t"}, {"mask", "m"}});
  mask.op("Relu", "relu", {{"X", "t"}}, {{"Y", "y"}});
  EXPECT_THAT(reason(mask.p, "remove-identity",
                     matchesOf(mask.p, "remove-identity").at(0)),
              HasSubstr("mask output 'm' is used"));

  GraphBuilder passthrough("passthrough");
  passthrough.input("x", {4}).output("y", {4});
  passthrough.op("Identity", "copy", {{"input", "x"}}, {{"output", "y"}});
  EXPECT_THAT(reason(passthrough.p, "remove-identity",
                     matchesOf(passthrough.p, "remove-identity").at(0)),
              HasSubstr("the copy is needed"));
}

TEST(RemoveIdentity, MoreNegatives) {
  // The copy's output is written again afterwards.
  GraphBuilder g("identity_twice");
  g.input("x", {4})
      .input("z", {4})
      .transient("t", {4})
      .transient("u", {4})
      .output("y", {4});
  g.op("Relu", "relu", {{"X", "x"}}, {{"Y", "t"}});
  g.op("Identity", "copy", {{"input", "t"}}, {{"output", "u"}});
  g.op("Neg", "neg", {{"X", "z"}}, {{"Y", "u"}});
  g.op("Relu", "relu2", {{"X", "u"}}, {{"Y", "y"}});
  EXPECT_THAT(
      reason(g.p, "remove-identity", matchesOf(g.p, "remove-identity").at(0)),
      HasSubstr("is written 2 times"));
  // Shapes that differ (a malformed model).
  GraphBuilder s("identity_shapes");
  s.input("x", {4}).transient("u", {2, 2}).output("y", {2, 2});
  s.op("Identity", "copy", {{"input", "x"}}, {{"output", "u"}});
  s.op("Relu", "relu", {{"X", "u"}}, {{"Y", "y"}});
  EXPECT_THAT(
      reason(s.p, "remove-identity", matchesOf(s.p, "remove-identity").at(0)),
      HasSubstr("differ in dtype or rank"));
}

} // namespace
} // namespace weir::transforms_testing
