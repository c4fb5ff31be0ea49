// sibling-map-fusion: golden before/after text, one negative test per
// precondition (matching its reason), and equivalence on the interpreter
// and the CPU JIT, synthetic and on the bundled models.

#include "transforms/golden.h"
#include "transforms/graph_builder.h"
#include "transforms/program_checks.h"
#include "transforms/rewrite.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <iostream>

namespace weir::transforms_testing {
namespace {

using ::testing::HasSubstr;
using transforms::Match;

const transforms::Transformation &fusion() {
  return *transforms::requireTransformation("sibling-map-fusion");
}

std::vector<Match> fusionMatches(const ir::Program &p) {
  return transforms::findMatches(p, fusion());
}

std::string reason(const ir::Program &p, const Match &m) {
  transforms::CheckResult c = transforms::checkMatch(p, fusion(), m);
  EXPECT_FALSE(c.ok);
  return c.reason;
}

ir::Expr sym(const char *s) { return ir::Expr::symbol(s); }
const ir::Expr i0 = sym("i0"), i1 = sym("i1");

/// x (and b) read by two independent maps: y = x * x + b, z = -x * b.
GraphBuilder siblings() {
  GraphBuilder g("siblings");
  g.input("x", {4, 6}).input("b", {6}).output("y", {4, 6}).output("z", {4, 6});
  Maps m(g);
  std::vector<ir::Range> r{{0, 4}, {0, 6}};
  m.add("square", {"i0", "i1"}, r, {{"x", "x", {i0, i1}}, {"b", "b", {i1}}},
        "y = x * x + b", {{"y", "y", {i0, i1}}});
  // Other parameter names: fusion renames them.
  ir::Expr j = sym("j"), k = sym("k");
  m.add("negate", {"j", "k"}, r, {{"x", "x", {j, k}}, {"b", "b", {k}}},
        "z = -x * b", {{"z", "z", {j, k}}});
  return g;
}

TEST(SiblingMapFusion, TwoMapsReadingTheSameDataGolden) {
  GraphBuilder g = siblings();
  std::vector<Match> ms = fusionMatches(g.p);
  // Through x and through b, each in both orders.
  ASSERT_EQ(ms.size(), 4u);
  transforms::ApplyResult r = transforms::applyChecked(g.p, fusion(), ms[0]);
  expectValid(r.program);
  expectGolden("sibling_map_fusion_two_maps", g.p, r.program);
  expectEquivalent(g.p, r.program, fusion().exactness());
  EXPECT_TRUE(fusion().exactness().exact);
  EXPECT_EQ(fusion().tier(), transforms::Tier::Fusion);
  EXPECT_EQ(countNodes(r.program, ir::NodeKind::MapEntry), 1);
  // x and b are read once, not twice.
  EXPECT_EQ(bytesMoved(g.p) - bytesMoved(r.program), 4 * 6 * 4 + 6 * 4);
  ir::NodeId second = ms[0].node("second");
  EXPECT_EQ(r.idMap.at(second), ms[0].node("first"));
  // Every listed match fuses the same two maps (the others now refer to
  // the kept entry and are refused as the same map, or apply equally).
  for (const Match &m : ms) {
    transforms::ApplyResult q = transforms::applyChecked(g.p, fusion(), m);
    expectValid(q.program);
    EXPECT_EQ(bytesMoved(q.program), bytesMoved(r.program));
  }
}

TEST(SiblingMapFusion, ThreeSiblingsToOneMap) {
  GraphBuilder g = siblings();
  Maps m(g);
  for (const ir::Node &n : g.p.states[0].nodes)
    if (n.kind == ir::NodeKind::Access)
      m.access[n.access().container] = n.id;
  g.output("w", {4, 6});
  m.add("halve", {"i0", "i1"}, {{0, 4}, {0, 6}}, {{"x", "x", {i0, i1}}},
        "w = x * 0.5", {{"w", "w", {i0, i1}}});
  ir::Program p = g.p;
  EXPECT_EQ(toFixedPoint(p, fusion()), 2);
  expectValid(p);
  EXPECT_EQ(countNodes(p, ir::NodeKind::MapEntry), 1);
  expectEquivalent(g.p, p, fusion().exactness());
}

// --- negative tests, one per precondition ----------------------------------

TEST(SiblingMapFusion, RefusesDifferentRanges) {
  GraphBuilder g("ranges");
  g.input("x", {4, 6}).output("y", {4, 6}).output("z", {4, 6});
  Maps m(g);
  m.add("a", {"i0", "i1"}, {{0, 4}, {0, 6}}, {{"x", "x", {i0, i1}}}, "y = x",
        {{"y", "y", {i0, i1}}});
  m.add("b", {"i0", "i1"}, {{0, 4}, {0, 3}}, {{"x", "x", {i0, i1}}}, "z = x",
        {{"z", "z", {i0, i1}}});
  EXPECT_THAT(reason(g.p, fusionMatches(g.p).at(0)),
              HasSubstr("iterate over different ranges: [i0 = 0:4, i1 = 0:6] "
                        "and [i0 = 0:4, i1 = 0:3]"));
}

TEST(SiblingMapFusion, RefusesAMapThatDependsOnTheOther) {
  // b reads x and t, which a wrote from x.
  GraphBuilder g("dependent");
  g.input("x", {8}).transient("t", {8}).output("y", {8});
  Maps m(g);
  std::vector<ir::Range> r{{0, 8}};
  m.add("a", {"i0"}, r, {{"x", "x", {i0}}}, "t = x + 1.0", {{"t", "t", {i0}}});
  m.add("b", {"i0"}, r, {{"x", "x", {i0}}, {"t", "t", {i0}}}, "y = x * t",
        {{"y", "y", {i0}}});
  EXPECT_THAT(reason(g.p, fusionMatches(g.p).at(0)), HasSubstr("map 'b' (%"));
  EXPECT_THAT(reason(g.p, fusionMatches(g.p).at(0)),
              HasSubstr("depends on map 'a'"));
}

TEST(SiblingMapFusion, RefusesAContainerOneWritesAndTheOtherReads) {
  // a overwrites u (a second access node) while b reads the old u: they
  // are unordered, and interleaved b could read a's new values.
  GraphBuilder g("hazard");
  g.input("x", {8}).transient("u", {8}).output("y", {8}).output("z", {8});
  Maps m(g);
  std::vector<ir::Range> r{{0, 8}};
  m.add("init", {"i0"}, r, {{"x", "x", {i0}}}, "u = x", {{"u", "u", {i0}}});
  ir::NodeId u1 = m.access.at("u");
  m.access.erase("u");
  auto a = m.add("a", {"i0"}, r, {{"x", "x", {i0}}}, "u = x * 2.0; y = x",
                 {{"u", "u", {i0}}, {"y", "y", {i0}}});
  ir::addEdge(g.p, g.p.states[0], u1, "", a.entry, "", ir::Memlet{});
  m.access["u"] = u1;
  m.add("b", {"i0"}, r, {{"x", "x", {i0}}, {"u", "u", {i0}}}, "z = x + u",
        {{"z", "z", {i0}}});
  bool seen = false;
  for (const Match &mm : fusionMatches(g.p)) {
    const ir::State &s = g.p.states[0];
    if (s.findNode(mm.node("data"))->access().container != "x" ||
        s.findNode(mm.node("first"))->label != "a" ||
        s.findNode(mm.node("second"))->label != "b")
      continue;
    seen = true;
    EXPECT_THAT(reason(g.p, mm), HasSubstr("'u' is written by map 'a' (%"));
    EXPECT_THAT(reason(g.p, mm), HasSubstr("and read by map 'b'"));
  }
  EXPECT_TRUE(seen);
}

TEST(SiblingMapFusion, RefusesMapsThatShareNoData) {
  // The access node of x only orders b (an empty edge).
  GraphBuilder g("ordered");
  g.input("x", {8}).input("w", {8}).output("y", {8}).output("z", {8});
  Maps m(g);
  std::vector<ir::Range> r{{0, 8}};
  m.add("a", {"i0"}, r, {{"x", "x", {i0}}}, "y = x", {{"y", "y", {i0}}});
  auto b =
      m.add("b", {"i0"}, r, {{"w", "w", {i0}}}, "z = w", {{"z", "z", {i0}}});
  ir::addEdge(g.p, g.p.states[0], m.access.at("x"), "", b.entry, "",
              ir::Memlet{});
  EXPECT_THAT(reason(g.p, fusionMatches(g.p).at(0)),
              HasSubstr("'x' only orders map 'a'"));
  EXPECT_THAT(reason(g.p, fusionMatches(g.p).at(0)),
              HasSubstr("they share no data"));
}

TEST(SiblingMapFusion, RefusesDifferentReadsOfTheData) {
  GraphBuilder g = siblings();
  Match m = fusionMatches(g.p).at(0);
  for (ir::Edge &e : g.p.states[0].edges.editable())
    if (e.src == m.node("data") && e.dst == m.node("second"))
      e.memlet.subset = ir::parseSubset("0:2, 0:6");
  ASSERT_EQ(g.p.states[0].findNode(m.node("data"))->access().container, "x");
  std::string why = reason(g.p, m);
  EXPECT_THAT(why, HasSubstr("only an equal read is shared"));
}

// --- the bundled models ----------------------------------------------------

TEST(SiblingMapFusion, BundledModelsToAFixedPoint) {
  for (const char *name : {"cnn.onnx", "mlp.onnx", "transformer.onnx"}) {
    SCOPED_TRACE(name);
    ir::Program before = expandedModel(name);
    ir::Program after = before;
    int fused = toFixedPoint(after, fusion());
    expectValid(after);
    std::int64_t b0 = bytesMoved(before), b1 = bytesMoved(after);
    std::cout << "[ sibling-map-fusion ] " << name << ": " << fused
              << " fusions, bytes moved (N = 1) " << b0 << " -> " << b1 << "\n";
    EXPECT_LE(b1, b0);
    EXPECT_EQ(fused > 0, b1 < b0);
    expectEquivalent(before, after, fusion().exactness(), 11);
  }
}

} // namespace
} // namespace weir::transforms_testing
