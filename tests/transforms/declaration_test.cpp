// The registry and the declarations: ids, tiers, descriptions, and parameter
// resolution.

#include "ir/error.h"
#include "transforms/tier1_checks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace weir::transforms_testing {
namespace {

using transforms::Params;

TEST(Registry, ListsTierOneWithDeclarations) {
  std::vector<std::string> ids;
  for (const auto &t : transforms::transformations()) {
    ids.push_back(std::string(t->id()));
    EXPECT_TRUE(transforms::isKebabCase(t->id()));
    EXPECT_FALSE(t->summary().empty());
    // The tier is declared once: the text does not restate it, and
    // description() puts it in front from the tier table.
    const std::string &declared = t->declaration().description;
    EXPECT_FALSE(declared.empty()) << t->id();
    EXPECT_EQ(declared.find("(tier "), std::string::npos) << t->id();
    const transforms::TierInfo &tier = transforms::tierInfo(t->tier());
    EXPECT_EQ(t->description(), std::string(tier.title) + " (tier " +
                                    std::to_string(tier.number) + "). " +
                                    declared);
  }
  for (const char *id :
       {"expand", "expand-all", "fold-batchnorm", "fold-constants",
        "remove-identity", "reshape-to-view"})
    EXPECT_NE(std::find(ids.begin(), ids.end(), id), ids.end()) << id;
  EXPECT_THROW(transforms::requireTransformation("no-such"), weir::Error);
  EXPECT_FALSE(transforms::isKebabCase("Map_Fusion"));
  EXPECT_FALSE(transforms::isKebabCase("map--fusion"));
  EXPECT_TRUE(transforms::isKebabCase("map-fusion2"));
}

TEST(Params, ResolveChecksKindsRangesAndChoices) {
  Params p = transforms::resolveParams(T("fold-constants"), {});
  EXPECT_EQ(transforms::intParam(p, "max_bytes"), 64 << 20);
  EXPECT_THROW(transforms::resolveParams(T("fold-constants"),
                                         {{"max_bytes", std::string("x")}}),
               weir::Error);
  EXPECT_THROW(
      transforms::resolveParams(T("fold-constants"), {{"other", true}}),
      weir::Error);
}

TEST(Params, IntListsFromText) {
  using transforms::IntList;
  using transforms::parseIntList;
  EXPECT_EQ(parseIntList("16, 0, 8"), IntList({16, 0, 8}));
  EXPECT_EQ(parseIntList(" [1,-2] "), IntList({1, -2}));
  EXPECT_EQ(parseIntList(""), IntList());
  EXPECT_EQ(parseIntList("[]"), IntList());
  // Items are what the commas separate: no silent joining or dropping.
  EXPECT_EQ(parseIntList("16 0"), std::nullopt);
  EXPECT_EQ(parseIntList("1,,2"), std::nullopt);
  EXPECT_EQ(parseIntList("1,"), std::nullopt);
  EXPECT_EQ(parseIntList("x"), std::nullopt);
  EXPECT_EQ(parseIntList("99999999999999999999"), std::nullopt);
}

} // namespace
} // namespace weir::transforms_testing
