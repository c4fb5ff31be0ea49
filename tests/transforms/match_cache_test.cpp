// The incremental match cache (transforms/match_cache.h): a state is
// matched again exactly when an element or a container it names changed,
// and the cached matches equal a fresh listing.

#include "transforms/graph_builder.h"
#include "transforms/match_cache.h"
#include "transforms/tier1_checks.h"

#include <gtest/gtest.h>

namespace weir::transforms_testing {
namespace {

TEST(MatchCache, MatchesAStateAgainOnlyWhenWhatAPatternSeesChanged) {
  GraphBuilder g("cache");
  g.input("x", {2, 3}).transient("t", {2, 3}).output("y", {2, 3});
  g.op("Relu", "relu", {{"X", "x"}}, {{"Y", "t"}});
  g.op("Neg", "neg", {{"X", "t"}}, {{"Y", "y"}});
  const transforms::Transformation &expand = T("expand");
  transforms::MatchCache cache;
  auto listed = [&](const ir::Program &p) {
    std::vector<transforms::Match> got = cache.matches(p, expand);
    EXPECT_EQ(got, transforms::findMatches(p, expand));
    return got.size();
  };
  auto matched = [&] { return cache.stats().statesMatched; };
  auto reused = [&] { return cache.stats().statesReused; };

  EXPECT_EQ(listed(g.p), 2u);
  EXPECT_EQ(matched(), 1);
  EXPECT_EQ(reused(), 0);
  // A copy shares every element and names the same containers.
  ir::Program copy = g.p;
  EXPECT_EQ(listed(copy), 2u);
  EXPECT_EQ(reused(), 1);
  // One node changed: copied on write, so at another address.
  ir::Program relabelled = g.p;
  relabelled.states[0].nodes.edit(0).label = "renamed";
  EXPECT_EQ(listed(relabelled), 2u);
  EXPECT_EQ(matched(), 2);
  // An edge removed.
  ir::Program cut = relabelled;
  cut.states[0].edges.pop_back();
  listed(cut);
  EXPECT_EQ(matched(), 3);
  // The same elements again, but a container they name reshaped.
  ir::Program reshaped = cut;
  reshaped.containers.at("t").shape = {ir::Expr(3), ir::Expr(2)};
  listed(reshaped);
  EXPECT_EQ(matched(), 4);
  // Its contents made constant.
  ir::Program constant = reshaped;
  constant.containers.at("t").constant =
      std::make_shared<const std::vector<std::byte>>(24, std::byte{0});
  listed(constant);
  EXPECT_EQ(matched(), 5);
  // Unchanged since: reused.
  ir::Program same = constant;
  listed(same);
  EXPECT_EQ(matched(), 5);
  EXPECT_EQ(reused(), 2);
}

} // namespace
} // namespace weir::transforms_testing
