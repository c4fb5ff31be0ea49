// `fold-batchnorm`: golden text, equivalence, one negative test per
// precondition.

#include "transforms/graph_builder.h"
#include "transforms/tier1_checks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace weir::transforms_testing {
namespace {

using ::testing::HasSubstr;
using transforms::Match;

TEST(FoldBatchNorm, GoldenAndEquivalentOnCnn) {
  ir::Program p = model("cnn.onnx");
  std::vector<Match> ms = matchesOf(p, "fold-batchnorm");
  ASSERT_EQ(ms.size(), 2u);
  ir::Program after =
      applyGoldenVerified("fold_batchnorm_cnn", p, "fold-batchnorm", ms[0]);
  EXPECT_EQ(matchesOf(after, "fold-batchnorm").size(), 1u);
}

/// x -> Conv(w, b) -> mid -> BatchNormalization -> y, 2 channels.
GraphBuilder convBn(bool constWeights = true, std::size_t statCount = 2,
                    std::int64_t training = 0) {
  GraphBuilder g("convbn");
  g.input("x", {1, 3, 4, 4})
      .output("y", {1, 2, 4, 4})
      .transient("mid", {1, 2, 4, 4});
  if (constWeights)
    g.constantF32("w", {2, 3, 1, 1}, {0.5f, -1, 2, 0.25f, 1, -0.5f});
  else
    g.input("w", {2, 3, 1, 1});
  g.constantF32("b", {2}, {0.1f, -0.2f});
  std::vector<float> stat(statCount, 0.7f);
  g.constantF32("scale", {std::int64_t(statCount)}, stat)
      .constantF32("shift", {std::int64_t(statCount)}, stat)
      .constantF32("mean", {std::int64_t(statCount)}, stat)
      .constantF32("var", {std::int64_t(statCount)}, stat);
  g.op("Conv", "conv", {{"X", "x"}, {"W", "w"}, {"B", "b"}}, {{"Y", "mid"}});
  ir::Attributes a = {{"epsilon", 1e-5}};
  if (training)
    a["training_mode"] = training;
  g.op("BatchNormalization", "bn",
       {{"X", "mid"},
        {"scale", "scale"},
        {"B", "shift"},
        {"mean", "mean"},
        {"var", "var"}},
       {{"Y", "y"}}, a);
  return g;
}

TEST(FoldBatchNorm, NegativeAndSynthetic) {
  GraphBuilder ok = convBn();
  std::vector<Match> ms = matchesOf(ok.p, "fold-batchnorm");
  ASSERT_EQ(ms.size(), 1u);
  applyGoldenVerified("fold_batchnorm_synthetic", ok.p, "fold-batchnorm",
                      ms[0]);

  GraphBuilder input = convBn(false);
  EXPECT_THAT(reason(input.p, "fold-batchnorm",
                     matchesOf(input.p, "fold-batchnorm")[0]),
              HasSubstr("weights are not an f32 constant"));
  GraphBuilder count = convBn(true, 3);
  EXPECT_THAT(reason(count.p, "fold-batchnorm",
                     matchesOf(count.p, "fold-batchnorm")[0]),
              HasSubstr("one value per Conv output channel"));
  GraphBuilder train = convBn(true, 2, 1);
  EXPECT_THAT(reason(train.p, "fold-batchnorm",
                     matchesOf(train.p, "fold-batchnorm")[0]),
              HasSubstr("training mode"));
  // The Conv's output is also read elsewhere.
  GraphBuilder shared = convBn();
  shared.output("z", {1, 2, 4, 4});
  shared.op("Relu", "relu", {{"X", "mid"}}, {{"Y", "z"}});
  EXPECT_THAT(reason(shared.p, "fold-batchnorm",
                     matchesOf(shared.p, "fold-batchnorm")[0]),
              HasSubstr("used by more than the BatchNormalization"));
}

TEST(FoldBatchNorm, MoreNegatives) {
  // A bias that is not constant.
  GraphBuilder g = convBn();
  g.p.containers.at("b").constant = nullptr;
  g.p.containers.at("b").transient = false;
  g.p.inputs.push_back("b");
  EXPECT_THAT(
      reason(g.p, "fold-batchnorm", matchesOf(g.p, "fold-batchnorm").at(0)),
      HasSubstr("bias is not an f32 constant"));
  // A statistic that is not constant.
  GraphBuilder s = convBn();
  s.p.containers.at("var").constant = nullptr;
  s.p.containers.at("var").transient = false;
  s.p.inputs.push_back("var");
  EXPECT_THAT(
      reason(s.p, "fold-batchnorm", matchesOf(s.p, "fold-batchnorm").at(0)),
      HasSubstr("input_var is not an f32 constant"));
  // The running statistics are outputs someone reads.
  GraphBuilder r("convbn_running");
  r.input("x", {1, 3, 4, 4})
      .output("y", {1, 2, 4, 4})
      .transient("mid", {1, 2, 4, 4})
      .output("rm", {2});
  r.constantF32("w", {2, 3, 1, 1}, {0.5f, -1, 2, 0.25f, 1, -0.5f});
  for (const char *n : {"scale", "shift", "mean", "var"})
    r.constantF32(n, {2}, {0.7f, 0.7f});
  r.op("Conv", "conv", {{"X", "x"}, {"W", "w"}}, {{"Y", "mid"}});
  r.op("BatchNormalization", "bn",
       {{"X", "mid"},
        {"scale", "scale"},
        {"B", "shift"},
        {"mean", "mean"},
        {"var", "var"}},
       {{"Y", "y"}, {"running_mean", "rm"}});
  EXPECT_THAT(
      reason(r.p, "fold-batchnorm", matchesOf(r.p, "fold-batchnorm").at(0)),
      HasSubstr("running_mean output is used"));
}

} // namespace
} // namespace weir::transforms_testing
