// `map-collapse`: golden text, fills, sums and deeper nests, refusals, the
// bundled models split and collapsed again.

#include "transforms/schedule_checks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <iostream>

namespace weir::transforms_testing {
namespace {

using ::testing::HasSubstr;

TEST(MapCollapse, NestGolden) {
  OneMap m = biasMap();
  ir::Program flat = m.g.p;
  ir::NodeId inner = splitMap(m.g.p, m.ids.entry, 1);
  ir::Program before = m.g.p;
  expectValid(before);
  Match at{"main", {{"outer", m.ids.entry}, {"inner", inner}}};
  transforms::ApplyResult r = transforms::applyChecked(before, collapse(), at);
  ir::Program after = r.program;
  expectValid(after);
  expectGolden("schedule_collapse", before, after);
  EXPECT_EQ(countNodes(after, ir::NodeKind::MapEntry), 1);
  EXPECT_EQ(after.states[0].findNode(m.ids.entry)->map().params,
            (std::vector<std::string>{"i", "j"}));
  EXPECT_EQ(r.idMap.at(inner), m.ids.entry);
  // The same program as before the split, up to the edge ids.
  EXPECT_EQ(bytesMoved(after), bytesMoved(flat));
  expectEquivalent(before, after, collapse().exactness());
  expectJitMatchesInterpreter(after);
}

TEST(MapCollapse, FillsAndSumsAndDeeperNests) {
  // A map without inputs: the nest is held together by ordering edges.
  OneMap fill("fill");
  fill.g.output("y", {3, 5});
  fill.add("fill", {"i", "j"}, {{0, 3}, {0, 5}}, {}, "y = 2.5",
           {{"y", "y", {sym("i"), sym("j")}}});
  splitMap(fill.g.p, fill.ids.entry, 1);
  ir::Program p = fill.g.p;
  EXPECT_EQ(toFixedPoint(p, collapse()), 1);
  expectValid(p);
  expectEquivalent(fill.g.p, p, collapse().exactness());

  // A sum split into three maps collapses twice, innermost pair first or not.
  OneMap sum = sumMap();
  ir::NodeId middle = splitMap(sum.g.p, sum.ids.entry, 1);
  splitMap(sum.g.p, middle, 1);
  expectValid(sum.g.p);
  p = sum.g.p;
  EXPECT_EQ(toFixedPoint(p, collapse()), 2);
  expectValid(p);
  EXPECT_EQ(countNodes(p, ir::NodeKind::MapEntry), 1);
  EXPECT_EQ(p.states[0].findNode(sum.ids.entry)->map().params,
            (std::vector<std::string>{"i", "j", "k"}));
  expectEquivalent(sum.g.p, p, collapse().exactness());
  expectJitMatchesInterpreter(p);
}

TEST(MapCollapse, Refusals) {
  // A triangle is not a box.
  OneMap tri("triangle");
  tri.g.input("x", {4, 4}).output("y", {4, 4});
  tri.add("tri", {"i", "j"}, {{0, 4}, {ir::Expr(0), sym("i") + ir::Expr(1)}},
          {{"x", "x", {sym("i"), sym("j")}}}, "y = x",
          {{"y", "y", {sym("i"), sym("j")}}});
  splitMap(tri.g.p, tri.ids.entry, 1);
  EXPECT_THAT(refusals(tri.g.p, collapse()),
              HasSubstr("the range of 'j' (0:i + 1) depends on 'i' of the "
                        "outer map 'tri' (%" +
                        std::to_string(tri.ids.entry) +
                        "); the iteration space is not a box"));

  // The inner map binds the outer parameter again.
  OneMap same = biasMap();
  ir::NodeId inner = splitMap(same.g.p, same.ids.entry, 1);
  same.g.p.states[0].findNode(inner)->map().params = {"i"};
  EXPECT_THAT(refusals(same.g.p, collapse()),
              HasSubstr("binds 'i' of the outer map 'bias'"));

  // The outer scope holds a second map.
  OneMap two = biasMap();
  ir::NodeId in2 = splitMap(two.g.p, two.ids.entry, 1);
  ir::State &s = two.g.p.states[0];
  auto [e2, x2] = ir::addMap(two.g.p, s, "other", {"k"}, {{0, 2}});
  ir::addEdge(two.g.p, s, two.ids.entry, "", e2, "", ir::Memlet{});
  ir::addEdge(two.g.p, s, x2, "", two.ids.exit, "", ir::Memlet{});
  ir::addEdge(two.g.p, s, e2, "", x2, "", ir::Memlet{});
  (void)in2;
  EXPECT_THAT(refusals(two.g.p, collapse()),
              HasSubstr("does not hold exactly one inner map and nothing "
                        "else (2 nodes directly in its scope)"));
}

TEST(MapCollapse, BundledModelsSplitThenCollapsed) {
  for (const char *name : {"cnn.onnx", "mlp.onnx", "transformer.onnx"}) {
    SCOPED_TRACE(name);
    ir::Program flat = expandedModel(name);
    ir::Program nested = flat;
    int split = 0;
    for (const ir::Node &n : flat.states[0].nodes)
      if (n.kind == ir::NodeKind::MapEntry && n.map().params.size() >= 2) {
        splitMap(nested, n.id, 1);
        ++split;
      }
    expectValid(nested);
    ir::Program after = nested;
    int collapsed = toFixedPoint(after, collapse());
    expectValid(after);
    std::cout << "[ map-collapse ] " << name << ": " << split
              << " maps split into nests, " << collapsed << " collapsed back\n";
    EXPECT_EQ(collapsed, split);
    EXPECT_EQ(countNodes(after, ir::NodeKind::MapEntry),
              countNodes(flat, ir::NodeKind::MapEntry));
    EXPECT_EQ(bytesMoved(after), bytesMoved(flat));
    expectEquivalent(nested, after, collapse().exactness(), 23);

    // And every nest swaps where its sums keep their order.
    ir::Program swapped = nested;
    std::vector<Match> outers;
    for (const Match &m : transforms::findMatches(nested, collapse()))
      outers.push_back(mapMatch(m.node("outer")));
    int applied = applyEach(swapped, interchange(), outers, {{"nested", true}});
    expectValid(swapped);
    std::cout << "[ map-interchange nested ] " << name << ": " << applied
              << " of " << outers.size() << " nests swapped\n";
    EXPECT_GT(applied, 0);
    expectEquivalent(nested, swapped, interchange().exactness(), 29);
  }
}

} // namespace
} // namespace weir::transforms_testing
