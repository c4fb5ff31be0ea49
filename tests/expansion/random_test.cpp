// The random generators: the tasklet language's hash is SplitMix64, and
// the expansions' draws have the distributions they should, on samples
// large enough to tell (65,536 draws: bounds of about 4.5 standard
// errors), with the same numbers for the same seed.

#include "expansion/single_op.h"
#include "ir/tasklet_math.h"

#include <cmath>

namespace weir::expansion_testing {
namespace {

constexpr std::int64_t kDraws = 65536;

TEST(RandomExpansion, HashIsSplitMix64) {
  // The first outputs of SplitMix64 seeded with 0 (its reference code).
  EXPECT_EQ(weir_math::hash(0, 0), 0xE220A8397B1DCDAFull);
  EXPECT_EQ(weir_math::hash(0, 1), 0x6E789E6AA1B965F4ull);
  EXPECT_EQ(weir_math::hash(0, 2), 0x06C45D188009454Full);
}

runtime::Tensor draw(const std::string &op, Attributes a,
                     std::vector<Arg> ins = {},
                     interp::TensorMap inputs = {}) {
  Program p = single(op, std::move(a), ins, {{"output", "y", {kDraws}}});
  operators::ExpandAllReport r = operators::expandAll(p);
  EXPECT_TRUE(r.skipped.empty()) << (r.skipped.empty() ? "" : r.skipped[0]);
  expectValid(p);
  return interp::interpret(p, inputs).at("y");
}

struct Moments {
  double mean = 0, variance = 0, low = INFINITY, high = -INFINITY;
};
Moments moments(const runtime::Tensor &t) {
  Moments m;
  double sq = 0;
  for (std::int64_t i = 0; i < t.elementCount(); ++i) {
    double v = t.getAsDouble(i);
    m.mean += v;
    sq += v * v;
    m.low = std::min(m.low, v);
    m.high = std::max(m.high, v);
  }
  m.mean /= double(t.elementCount());
  m.variance = sq / double(t.elementCount()) - m.mean * m.mean;
  return m;
}

TEST(RandomExpansion, UniformDrawsFillTheirRange) {
  // Uniform on [-2, 3): mean 0.5, variance 25/12.
  Moments m = moments(draw("RandomUniform",
                           {{"low", -2.0}, {"high", 3.0}, {"seed", 3.0}}));
  EXPECT_NEAR(m.mean, 0.5, 4.5 * std::sqrt(25.0 / 12 / kDraws));
  EXPECT_NEAR(m.variance, 25.0 / 12, 0.05);
  EXPECT_GE(m.low, -2.0);
  EXPECT_LT(m.high, 3.0);
  EXPECT_LT(m.low, -1.99);
  EXPECT_GT(m.high, 2.99);
}

TEST(RandomExpansion, NormalDrawsHaveTheirMeanAndScale) {
  Moments m = moments(
      draw("RandomNormal", {{"mean", 1.0}, {"scale", 2.0}, {"seed", 5.0}}));
  EXPECT_NEAR(m.mean, 1.0, 4.5 * 2.0 / std::sqrt(double(kDraws)));
  EXPECT_NEAR(std::sqrt(m.variance), 2.0, 0.03);
}

TEST(RandomExpansion, BernoulliFollowsItsProbabilities) {
  runtime::Tensor p(DType::F32, {kDraws});
  for (std::int64_t i = 0; i < kDraws; ++i)
    p.setFromDouble(i, i % 2 ? 0.1 : 0.5); // mean probability 0.3
  runtime::Tensor y = draw("Bernoulli", {}, {{"input", "p", {kDraws}}},
                           {{"p", p}});
  Moments m = moments(y);
  EXPECT_NEAR(m.mean, 0.3, 4.5 * std::sqrt(0.3 * 0.7 / kDraws));
  EXPECT_EQ(m.low, 0.0);
  EXPECT_EQ(m.high, 1.0);
  // Where p is 0.1, about a tenth are 1.
  double odd = 0;
  for (std::int64_t i = 1; i < kDraws; i += 2)
    odd += y.getAsDouble(i);
  EXPECT_NEAR(odd / (kDraws / 2), 0.1, 4.5 * std::sqrt(0.09 / (kDraws / 2)));
}

TEST(RandomExpansion, TheSameSeedDrawsTheSameNumbers) {
  runtime::Tensor a = draw("RandomUniform", {{"seed", 7.0}});
  runtime::Tensor b = draw("RandomUniform", {{"seed", 7.0}});
  runtime::Tensor c = draw("RandomUniform", {{"seed", 8.0}});
  std::int64_t same = 0, differ = 0;
  for (std::int64_t i = 0; i < kDraws; ++i) {
    same += a.getAsDouble(i) == b.getAsDouble(i);
    differ += a.getAsDouble(i) != c.getAsDouble(i);
  }
  EXPECT_EQ(same, kDraws);
  EXPECT_GT(differ, kDraws - 10);
}

TEST(RandomExpansion, TrainingDropoutKeepsScaledValuesWithItsMask) {
  Program p = single("Dropout", {{"seed", std::int64_t(11)}},
                     {{"data", "x", {kDraws}},
                      {"ratio", "r", {}},
                      {"training_mode", "t", {}, DType::Bool, {1}}},
                     {{"output", "y", {kDraws}},
                      {"mask", "m", {kDraws}, DType::Bool}});
  operators::ExpandAllReport r = operators::expandAll(p);
  ASSERT_TRUE(r.skipped.empty()) << r.skipped[0];
  expectValid(p);
  runtime::Tensor x(DType::F32, {kDraws}), ratio(DType::F32, {});
  for (std::int64_t i = 0; i < kDraws; ++i)
    x.setFromDouble(i, 3.0);
  ratio.setFromDouble(0, 0.25);
  interp::TensorMap out = interp::interpret(p, {{"x", x}, {"r", ratio}});
  std::int64_t dropped = 0;
  for (std::int64_t i = 0; i < kDraws; ++i) {
    double y = out.at("y").getAsDouble(i);
    bool kept = out.at("m").getAsDouble(i) != 0;
    ASSERT_EQ(y, kept ? 4.0 : 0.0) << i; // 3 / (1 - 0.25)
    dropped += !kept;
  }
  EXPECT_NEAR(double(dropped) / kDraws, 0.25,
              4.5 * std::sqrt(0.25 * 0.75 / kDraws));
}

} // namespace
} // namespace weir::expansion_testing
