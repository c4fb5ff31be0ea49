// `expand-all`: golden text, equivalence, and its refusals.

#include "transforms/tier1_checks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace weir::transforms_testing {
namespace {

using ::testing::HasSubstr;
using transforms::Match;

TEST(ExpandAll, GoldenAndEquivalentOnMlp) {
  ir::Program p = model("mlp.onnx");
  ir::Program after =
      applyGoldenVerified("expand_all_mlp", p, "expand-all", Match{});
  for (const ir::State &s : after.states)
    for (const ir::Node &n : s.nodes)
      EXPECT_NE(n.kind, ir::NodeKind::Library) << n.label;
}

TEST(ExpandAll, Negative) {
  ir::Program p = model("mlp.onnx");
  EXPECT_THAT(reason(p, "expand-all", Match{},
                     {{"implementations", std::string("Gemm")}}),
              HasSubstr("is not OP=IMPL"));
  EXPECT_THAT(reason(p, "expand-all", Match{},
                     {{"implementations", std::string("Gemm=magic")}}),
              HasSubstr("Gemm has no implementation 'magic'"));
  ir::Program done =
      transforms::applyChecked(p, T("expand-all"), Match{}).program;
  EXPECT_THAT(reason(done, "expand-all", Match{}),
              HasSubstr("no expandable operator left"));
  EXPECT_THAT(reason(p, "expand-all", Match{"main", {{"node", 1}}}),
              HasSubstr("whole program"));
}

} // namespace
} // namespace weir::transforms_testing
