// Conv as Winograd F(2x2, 3x3) (`winograd`) and F(4x4, 3x3) (`winograd4`)
// against the pure expansion on the reference interpreter: outputs that are
// whole tiles and outputs that are not (the tile-rounded copy), padding on
// all sides, unevenly and not at all, a batch of two, with and without
// bias, wider channels; and the convolutions they refuse, with reasons.

#include "core/interp/interpreter.h"
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

/// Expands `p` with Winograd variant `impl` and purely; both agree on
/// random inputs. Returns the Winograd program.
Program expectMatchesPure(const Program &p, const std::string &impl) {
  Program fast = p, pure = p;
  auto report = operators::expandAll(fast, {{"Conv", impl}});
  EXPECT_TRUE(report.skipped.empty()) << report.skipped.front();
  EXPECT_TRUE(operators::expandAll(pure, {{"Conv", "pure"}}).skipped.empty());
  expectValid(fast);
  EXPECT_EQ(count(fast, NodeKind::Library), 0);
  EXPECT_EQ(count(fast, NodeKind::Primitive), 1) << "the gemms, one map";
  interp::TensorMap inputs = randomInputs(p);
  auto got = interp::interpret(fast, inputs);
  auto want = interp::interpret(pure, inputs);
  const runtime::Tensor &w = want.at("Y");
  std::vector<double> values;
  for (std::int64_t i = 0; i < w.elementCount(); ++i)
    values.push_back(w.getAsDouble(i));
  expectNear(got.at("Y"), values);
  return fast;
}

bool hasContainer(const Program &p, const std::string &suffix) {
  for (const auto &[name, c] : p.containers)
    if (name.ends_with(suffix))
      return true;
  return false;
}

const Attributes kSame{{"pads", std::vector<std::int64_t>{1, 1, 1, 1}}};

class WinogradVariant : public ::testing::TestWithParam<std::string> {};

TEST_P(WinogradVariant, WholeTilesWriteYDirectly) {
  Program p =
      expectMatchesPure(convWithConstantFilters({1, 3, 8, 12}, {4, 3, 3, 3},
                                                {1, 4, 8, 12}, kSame, true),
                        GetParam());
  EXPECT_FALSE(hasContainer(p, "winograd_rounded"));
  EXPECT_TRUE(hasContainer(p, "winograd_filters"));
}

TEST_P(WinogradVariant, PartialTilesGoThroughARoundedCopy) {
  Program p =
      expectMatchesPure(convWithConstantFilters({2, 5, 7, 5}, {3, 5, 3, 3},
                                                {2, 3, 7, 5}, kSame, true),
                        GetParam());
  EXPECT_TRUE(hasContainer(p, "winograd_rounded"));
}

TEST_P(WinogradVariant, NoPaddingUnevenPaddingNoBias) {
  expectMatchesPure(convWithConstantFilters({1, 2, 6, 7}, {5, 2, 3, 3},
                                            {1, 5, 4, 5}, {}, false),
                    GetParam());
  expectMatchesPure(
      convWithConstantFilters({1, 4, 5, 6}, {2, 4, 3, 3}, {1, 2, 4, 6},
                              {{"pads", std::vector<std::int64_t>{1, 0, 0, 2}}},
                              false),
      GetParam());
}

TEST_P(WinogradVariant, SixtyFourChannels) {
  // Sums of 64 · 9 products: the transforms' rounding stays inside 1e-4.
  expectMatchesPure(convWithConstantFilters({1, 64, 8, 8}, {16, 64, 3, 3},
                                            {1, 16, 8, 8}, kSame, true),
                    GetParam());
}

TEST_P(WinogradVariant, RefusesWhatItCannotCompute) {
  auto reason = [this](const Program &p) {
    Program q = p;
    auto report = operators::expandAll(q, {{"Conv", GetParam()}});
    EXPECT_EQ(report.skipped.size(), 1u);
    return report.skipped.empty() ? std::string() : report.skipped[0];
  };
  {
    std::string r = reason(convWithConstantFilters(
        {1, 2, 8, 8}, {2, 2, 3, 3}, {1, 2, 4, 4},
        {{"strides", std::vector<std::int64_t>{2, 2}},
         {"pads", std::vector<std::int64_t>{1, 1, 1, 1}}},
        false));
    EXPECT_NE(r.find("unit strides"), std::string::npos) << r;
  }
  std::string kernel = reason(convWithConstantFilters(
      {1, 2, 8, 8}, {2, 2, 5, 5}, {1, 2, 4, 4}, {}, false));
  EXPECT_NE(kernel.find("3x3 kernel"), std::string::npos) << kernel;
  std::string grouped =
      reason(convWithConstantFilters({1, 4, 6, 6}, {2, 2, 3, 3}, {1, 2, 4, 4},
                                     {{"group", std::int64_t(2)}}, false));
  EXPECT_NE(grouped.find("group 1"), std::string::npos) << grouped;
  // Filters that are an input (not a constant) cannot be transformed once.
  Program input =
      single("Conv", {}, {{"X", "X", {1, 2, 6, 6}}, {"W", "W", {2, 2, 3, 3}}},
             {{"Y", "Y", {1, 2, 4, 4}}});
  std::string notConstant = reason(input);
  EXPECT_NE(notConstant.find("must be a constant"), std::string::npos)
      << notConstant;
}

INSTANTIATE_TEST_SUITE_P(Conv, WinogradVariant,
                         ::testing::Values("winograd", "winograd4"));

// Not a default: expand-all still uses im2col, and falls back past
// Winograd where im2col does not apply.
TEST(WinogradExpansion, NeverTheDefault) {
  Program p = convWithConstantFilters({1, 3, 8, 6}, {4, 3, 3, 3}, {1, 4, 8, 6},
                                      kSame, true);
  ASSERT_TRUE(operators::expandAll(p).skipped.empty());
  EXPECT_FALSE(hasContainer(p, "winograd_filters"));
  EXPECT_FALSE(hasContainer(p, "winograd_tiles"));
  EXPECT_TRUE(hasContainer(p, "columns"));
}

} // namespace
