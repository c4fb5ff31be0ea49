// map-fusion: golden before/after text, chains applied from a list of
// matches taken up front, the materialized case, one negative test per
// precondition (matching its reason), and equivalence on the interpreter and
// the CPU JIT, synthetic and on the bundled models.

#include "core/interp/interpreter.h"
#include "core/runtime/random_tensor.h"
#include "ir/analysis.h"
#include "ir/mapped_tasklet.h"
#include "ir/validate.h"
#include "onnx/import.h"
#include "transforms/golden.h"
#include "transforms/graph_builder.h"
#include "transforms/program_checks.h"
#include "transforms/registry.h"
#include "transforms/rewrite.h"
#include "workspace/verify.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <iostream>

namespace weir::transforms_testing {
namespace {

using ::testing::HasSubstr;
using transforms::Match;

const transforms::Transformation &fusion() {
  return *transforms::requireTransformation("map-fusion");
}

std::vector<Match> fusionMatches(const ir::Program &p) {
  return transforms::findMatches(p, fusion());
}

/// Bit-identical outputs before and after (program_checks.h).
void expectEquivalent(const ir::Program &before, const ir::Program &after,
                      std::uint64_t seed = 7) {
  transforms_testing::expectEquivalent(before, after, fusion().exactness(),
                                       seed);
}

std::string reason(const ir::Program &p, const Match &m) {
  transforms::CheckResult c = transforms::checkMatch(p, fusion(), m);
  EXPECT_FALSE(c.ok);
  return c.reason;
}

ir::Expr sym(const char *s) { return ir::Expr::symbol(s); }
const ir::Expr i0 = sym("i0"), i1 = sym("i1");

/// x -> relu -> t -> (t * 2 + b[i1]) -> y over [i0 = 0:4, i1 = 0:6].
GraphBuilder twoMaps() {
  GraphBuilder g("two_maps");
  g.input("x", {4, 6})
      .input("b", {6})
      .transient("t", {4, 6})
      .output("y", {4, 6});
  Maps m(g);
  std::vector<ir::Range> r{{0, 4}, {0, 6}};
  m.add("relu", {"i0", "i1"}, r, {{"x", "x", {i0, i1}}}, "t = max(x, 0.0)",
        {{"t", "t", {i0, i1}}});
  // The consumer names its parameters differently; fusion renames them.
  ir::Expr j = sym("j"), k = sym("k");
  m.add("scale", {"j", "k"}, r, {{"t", "t", {j, k}}, {"b", "b", {k}}},
        "y = t * 2.0 + b", {{"y", "y", {j, k}}});
  return g;
}

TEST(MapFusion, TwoMapChainGolden) {
  GraphBuilder g = twoMaps();
  std::vector<Match> ms = fusionMatches(g.p);
  ASSERT_EQ(ms.size(), 1u);
  transforms::ApplyResult r = transforms::applyChecked(g.p, fusion(), ms[0]);
  expectValid(r.program);
  expectGolden("map_fusion_two_maps", g.p, r.program);
  expectEquivalent(g.p, r.program);
  EXPECT_TRUE(fusion().exactness().exact);
  EXPECT_EQ(fusion().tier(), transforms::Tier::Fusion);
  EXPECT_EQ(countNodes(r.program, ir::NodeKind::MapEntry), 1);
  EXPECT_EQ(r.program.findContainer("t"), nullptr);
  // The producer's entry and the consumer's exit stay; the others map to
  // them; the intermediate's access node is gone.
  ir::NodeId entry1 = transforms::stateNamed(g.p, "main")
                          .findNode(ms[0].node("first_exit"))
                          ->map()
                          .partner;
  ir::NodeId exit2 = transforms::stateNamed(g.p, "main")
                         .findNode(ms[0].node("second_entry"))
                         ->map()
                         .partner;
  EXPECT_EQ(r.idMap.at(ms[0].node("second_entry")), entry1);
  EXPECT_EQ(r.idMap.at(ms[0].node("first_exit")), exit2);
  EXPECT_EQ(r.idMap.at(entry1), entry1);
  EXPECT_EQ(r.idMap.at(exit2), exit2);
  EXPECT_EQ(r.idMap.count(ms[0].node("array")), 0u);
  // Two passes over t (a store and a load of 4x6 f32) are gone.
  EXPECT_EQ(bytesMoved(g.p) - bytesMoved(r.program), 2 * 4 * 6 * 4);
}

/// Applies `ms` in the given order, each to the program the previous one
/// produced, as a script holding a precomputed list does.
ir::Program applyInOrder(ir::Program p, const std::vector<Match> &ms) {
  for (const Match &m : ms) {
    transforms::CheckResult c = transforms::checkMatch(p, fusion(), m);
    EXPECT_TRUE(c.ok) << m.str() << ": " << c.reason;
    if (!c.ok)
      break;
    p = transforms::applyChecked(p, fusion(), m).program;
    expectValid(p);
  }
  return p;
}

TEST(MapFusion, ThreeMapChainFromOneListOfMatches) {
  GraphBuilder g = threeMapChain();
  std::vector<Match> ms = fusionMatches(g.p);
  ASSERT_EQ(ms.size(), 2u);
  // Both orders: a+b first, then (a+b)+c through b's kept exit; or b+c
  // first, then a+(b+c) through b's kept entry.
  for (bool reversed : {false, true}) {
    std::vector<Match> order = ms;
    if (reversed)
      std::reverse(order.begin(), order.end());
    ir::Program after = applyInOrder(g.p, order);
    EXPECT_EQ(countNodes(after, ir::NodeKind::MapEntry), 1) << reversed;
    EXPECT_EQ(countNodes(after, ir::NodeKind::Access), 2) << reversed; // x, y
    EXPECT_EQ(after.findContainer("t1"), nullptr);
    EXPECT_EQ(after.findContainer("t2"), nullptr);
    // The kept entry is a's, the kept exit c's.
    const ir::State &s = after.states[0];
    const ir::State &before = g.p.states[0];
    ir::NodeId aEntry =
        before.findNode(ms[0].node("first_exit"))->map().partner;
    ir::NodeId cExit =
        before.findNode(ms[1].node("second_entry"))->map().partner;
    ASSERT_NE(s.findNode(aEntry), nullptr);
    EXPECT_EQ(s.findNode(aEntry)->map().partner, cExit);
    expectEquivalent(g.p, after);
    if (!reversed)
      expectGolden("map_fusion_three_maps", g.p, after);
  }
}

TEST(MapFusion, IntermediateReadElsewhereStaysMaterialized) {
  // t is read by two maps: fusing the first keeps t, which the second
  // still reads; fusing the second then drops it.
  GraphBuilder g("materialized");
  g.input("x", {8}).transient("t", {8}).output("y", {8}).output("z", {8});
  Maps m(g);
  std::vector<ir::Range> r{{0, 8}};
  m.add("neg", {"i0"}, r, {{"x", "x", {i0}}}, "t = -x", {{"t", "t", {i0}}});
  m.add("sq", {"i0"}, r, {{"t", "t", {i0}}}, "y = t * t", {{"y", "y", {i0}}});
  m.add("half", {"i0"}, r, {{"t", "t", {i0}}}, "z = t * 0.5",
        {{"z", "z", {i0}}});
  std::vector<Match> ms = fusionMatches(g.p);
  ASSERT_EQ(ms.size(), 2u);
  transforms::ApplyResult r1 = transforms::applyChecked(g.p, fusion(), ms[0]);
  expectValid(r1.program);
  expectGolden("map_fusion_materialized", g.p, r1.program);
  ASSERT_NE(r1.program.findContainer("t"), nullptr);
  EXPECT_EQ(r1.idMap.count(ms[0].node("array")), 1u);
  expectEquivalent(g.p, r1.program);
  // Only the read of t by `sq` is gone.
  EXPECT_EQ(bytesMoved(g.p) - bytesMoved(r1.program), 8 * 4);

  // The second match, carried through the id map, now fuses completely.
  Match second = ms[1];
  for (auto &[role, id] : second.roles)
    id = r1.idMap.at(id);
  ir::Program p2 =
      transforms::applyChecked(r1.program, fusion(), second).program;
  expectValid(p2);
  EXPECT_EQ(p2.findContainer("t"), nullptr);
  EXPECT_EQ(countNodes(p2, ir::NodeKind::MapEntry), 1);
  expectEquivalent(g.p, p2);

  // Another access node of t elsewhere keeps it materialized too.
  GraphBuilder o("materialized_elsewhere");
  o.input("x", {8}).transient("t", {8}).output("y", {8}).output("z", {8});
  Maps mo(o);
  mo.add("neg", {"i0"}, r, {{"x", "x", {i0}}}, "t = -x", {{"t", "t", {i0}}});
  mo.add("sq", {"i0"}, r, {{"t", "t", {i0}}}, "y = t * t", {{"y", "y", {i0}}});
  o.newState("later");
  Maps later(o);
  later.add("half", {"i0"}, r, {{"t", "t", {i0}}}, "z = t * 0.5",
            {{"z", "z", {i0}}});
  ir::Program q =
      transforms::applyChecked(o.p, fusion(), fusionMatches(o.p).at(0)).program;
  expectValid(q);
  ASSERT_NE(q.findContainer("t"), nullptr);
  expectEquivalent(o.p, q);
}

TEST(MapFusion, SharedInputIsReadThroughOneConnector) {
  // Both maps read x from the same access node: the fused entry reads it
  // once.
  GraphBuilder g = threeMapChain();
  Match ab = fusionMatches(g.p).at(0);
  ir::Program after = transforms::applyChecked(g.p, fusion(), ab).program;
  const ir::State &s = after.states[0];
  const ir::Node *entry =
      s.findNode(g.p.states[0].findNode(ab.node("first_exit"))->map().partner);
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry->inputs.size(), 1u);
  EXPECT_NE(entry->findInput("IN_x"), nullptr);
}

/// x -> a (writes t and u) -> b (reads both) -> y: GELU's diamond.
GraphBuilder diamond(std::vector<ir::Expr> uRead = {i0, i1},
                     std::vector<std::int64_t> uShape = {4, 6}) {
  GraphBuilder g("diamond");
  g.input("x", {4, 6})
      .transient("t", {4, 6})
      .transient("u", uShape)
      .output("y", {4, 6});
  Maps m(g);
  std::vector<ir::Range> r{{0, 4}, {0, 6}};
  m.add("a", {"i0", "i1"}, r, {{"x", "x", {i0, i1}}},
        "t = x * 0.5; u = erf(x) + 1.0",
        {{"t", "t", {i0, i1}}, {"u", "u", {i0, i1}}});
  m.add("b", {"i0", "i1"}, r, {{"t", "t", {i0, i1}}, {"u", "u", uRead}},
        "y = t * u", {{"y", "y", {i0, i1}}});
  return g;
}

TEST(MapFusion, DiamondHandsEveryArrayOverAtOnce) {
  GraphBuilder g = diamond();
  std::vector<Match> ms = fusionMatches(g.p);
  ASSERT_EQ(ms.size(), 2u); // through t and through u: the same fusion
  for (const Match &m : ms) {
    transforms::ApplyResult r = transforms::applyChecked(g.p, fusion(), m);
    expectValid(r.program);
    EXPECT_EQ(countNodes(r.program, ir::NodeKind::MapEntry), 1);
    EXPECT_EQ(countNodes(r.program, ir::NodeKind::Access), 2); // x, y
    EXPECT_EQ(r.program.findContainer("t"), nullptr);
    EXPECT_EQ(r.program.findContainer("u"), nullptr);
    // A store and a load of t and of u (4x6 f32 each) are gone.
    EXPECT_EQ(bytesMoved(g.p) - bytesMoved(r.program), 4 * 4 * 6 * 4);
    expectEquivalent(g.p, r.program);
    if (&m == &ms[0])
      expectGolden("map_fusion_diamond", g.p, r.program);
  }
}

TEST(MapFusion, DiamondKeepsAnArrayReadElsewhere) {
  // u is also read by a third map: the fused map still writes it.
  GraphBuilder g = diamond();
  g.output("z", {4, 6});
  Maps m(g);
  // Reuse the access node of u the diamond made.
  for (const ir::Node &n : g.p.states[0].nodes)
    if (n.kind == ir::NodeKind::Access)
      m.access[n.access().container] = n.id;
  m.add("c", {"i0", "i1"}, {{0, 4}, {0, 6}}, {{"u", "u", {i0, i1}}},
        "z = u - 1.0", {{"z", "z", {i0, i1}}});
  Match through = fusionMatches(g.p).at(0);
  transforms::ApplyResult r = transforms::applyChecked(g.p, fusion(), through);
  expectValid(r.program);
  EXPECT_EQ(r.program.findContainer("t"), nullptr);
  ASSERT_NE(r.program.findContainer("u"), nullptr);
  EXPECT_EQ(countNodes(r.program, ir::NodeKind::MapEntry), 2);
  // t's store and load and u's load by b are gone.
  EXPECT_EQ(bytesMoved(g.p) - bytesMoved(r.program), 3 * 4 * 6 * 4);
  expectEquivalent(g.p, r.program);
}

TEST(MapFusion, RefusesADiamondWhoseOtherArrayIsNotReadElementwise) {
  // b reads u shifted by one column: t alone cannot be handed over (u would
  // still order the maps), and u cannot either.
  GraphBuilder g = diamond({i0, i1 + ir::Expr(1)}, {4, 7});
  for (const Match &m : fusionMatches(g.p)) {
    std::string why = reason(g.p, m);
    EXPECT_THAT(why, HasSubstr("reads u[i0, i1 + 1] where map 'a'"));
    transforms::CheckResult c = transforms::checkMatch(g.p, fusion(), m);
    ir::NodeId u = 0;
    for (const ir::Node &n : g.p.states[0].nodes)
      if (n.kind == ir::NodeKind::Access && n.access().container == "u")
        u = n.id;
    EXPECT_NE(std::find(c.nodes.begin(), c.nodes.end(), u), c.nodes.end());
  }
}

// --- negative tests, one per precondition ----------------------------------

/// x -> first map writing t -> second map reading t (index given) -> y.
GraphBuilder pairWith(std::vector<ir::Range> r1, std::vector<ir::Range> r2,
                      std::vector<ir::Expr> read,
                      std::optional<ir::Wcr> wcr = std::nullopt,
                      bool tIsOutput = false,
                      std::vector<std::int64_t> tShape = {4, 4}) {
  GraphBuilder g("pair");
  g.input("x", {4, 4}).output("y", {4, 4});
  if (tIsOutput)
    g.output("t", tShape);
  else
    g.transient("t", tShape);
  Maps m(g);
  m.add("first", {"i0", "i1"}, r1, {{"x", "x", {i0, i1}}}, "t = x + 1.0",
        {{"t", "t", {i0, i1}, wcr}});
  m.add("second", {"i0", "i1"}, r2, {{"t", "t", read}}, "y = t * 3.0",
        {{"y", "y", {i0, i1}}});
  return g;
}

TEST(MapFusion, RefusesDifferentRanges) {
  GraphBuilder g = pairWith({{0, 4}, {0, 4}}, {{0, 4}, {0, 3}}, {i0, i1});
  EXPECT_THAT(reason(g.p, fusionMatches(g.p).at(0)),
              HasSubstr("iterate over different ranges: [i0 = 0:4, i1 = 0:4] "
                        "and [i0 = 0:4, i1 = 0:3]"));
  // A different number of dimensions.
  GraphBuilder d("dims");
  d.input("x", {4}).transient("t", {4}).output("y", {4});
  Maps m(d);
  m.add("first", {"i0"}, {{0, 4}}, {{"x", "x", {i0}}}, "t = x",
        {{"t", "t", {i0}}});
  m.add("second", {"i0", "i1"}, {{0, 4}, {0, 1}}, {{"t", "t", {i0}}}, "y = t",
        {{"y", "y", {i0}}});
  EXPECT_THAT(reason(d.p, fusionMatches(d.p).at(0)),
              HasSubstr("has 1 dimensions and map 'second'"));
}

TEST(MapFusion, RefusesNeighbourhoodAndPermutedReads) {
  // A shifted (stencil) read: t[i0, i1 + 1] with t one column wider.
  GraphBuilder shifted =
      pairWith({{0, 4}, {0, 4}}, {{0, 4}, {0, 4}}, {i0, i1 + ir::Expr(1)},
               std::nullopt, false, {4, 5});
  std::string why = reason(shifted.p, fusionMatches(shifted.p).at(0));
  EXPECT_THAT(why, HasSubstr("reads t[i0, i1 + 1] where map 'first'"));
  EXPECT_THAT(why, HasSubstr("only an element-for-element hand-over fuses"));
  // A transposed read.
  GraphBuilder transposed =
      pairWith({{0, 4}, {0, 4}}, {{0, 4}, {0, 4}}, {i1, i0});
  EXPECT_THAT(reason(transposed.p, fusionMatches(transposed.p).at(0)),
              HasSubstr("reads t[i1, i0] where map 'first'"));
}

TEST(MapFusion, RefusesNonTransientIntermediate) {
  GraphBuilder g = pairWith({{0, 4}, {0, 4}}, {{0, 4}, {0, 4}}, {i0, i1},
                            std::nullopt, /*tIsOutput=*/true);
  EXPECT_THAT(reason(g.p, fusionMatches(g.p).at(0)),
              HasSubstr("'t' is not transient"));
}

TEST(MapFusion, RefusesWriteConflictResolution) {
  GraphBuilder g =
      pairWith({{0, 4}, {0, 4}}, {{0, 4}, {0, 4}}, {i0, i1}, ir::Wcr::Sum);
  EXPECT_THAT(reason(g.p, fusionMatches(g.p).at(0)),
              HasSubstr("writes 't' with a write-conflict resolution (sum)"));
}

TEST(MapFusion, RefusesWriteThatRepeatsAcrossIterations) {
  // first writes t[i0, 0] in every i1: the consumer would see another
  // iteration's value after fusion.
  GraphBuilder g("repeat");
  g.input("x", {4, 4}).transient("t", {4, 1}).output("y", {4, 4});
  Maps m(g);
  std::vector<ir::Range> r{{0, 4}, {0, 4}};
  m.add("first", {"i0", "i1"}, r, {{"x", "x", {i0, i1}}}, "t = x",
        {{"t", "t", {i0, ir::Expr(0)}}});
  m.add("second", {"i0", "i1"}, r, {{"t", "t", {i0, ir::Expr(0)}}}, "y = t",
        {{"y", "y", {i0, i1}}});
  EXPECT_THAT(reason(g.p, fusionMatches(g.p).at(0)),
              HasSubstr("not provably a different element in every iteration"));
}

TEST(MapFusion, RefusesAPathThatWouldBecomeACycle) {
  // first writes t and u; v = f(u) outside; second reads t and v.
  GraphBuilder g("cycle");
  g.input("x", {4})
      .transient("t", {4})
      .transient("u", {4})
      .transient("v", {4})
      .output("y", {4});
  Maps m(g);
  std::vector<ir::Range> r{{0, 4}};
  m.add("first", {"i0"}, r, {{"x", "x", {i0}}}, "t = x; u = x * 2.0",
        {{"t", "t", {i0}}, {"u", "u", {i0}}});
  m.add("middle", {"i0"}, {{0, 2}}, {{"u", "u", {i0}}}, "v = u",
        {{"v", "v", {i0}}});
  m.add("second", {"i0"}, r, {{"t", "t", {i0}}, {"v", "v", {i0}}}, "y = t + v",
        {{"y", "y", {i0}}});
  std::vector<Match> ms = fusionMatches(g.p);
  auto it = std::find_if(ms.begin(), ms.end(), [&](const Match &mm) {
    return g.p.states[0].findNode(mm.node("array"))->access().container == "t";
  });
  ASSERT_NE(it, ms.end());
  EXPECT_THAT(reason(g.p, *it), HasSubstr("also depends on map 'first'"));
}

TEST(MapFusion, RefusesOtherWritersAndViewedIntermediates) {
  // The access node of t is written twice (an ordering edge also arrives).
  GraphBuilder g = pairWith({{0, 4}, {0, 4}}, {{0, 4}, {0, 4}}, {i0, i1});
  Match m = fusionMatches(g.p).at(0);
  ir::State &s = g.p.states[0];
  ir::addEdge(g.p, s, 1, "", m.node("array"), "", ir::Memlet{});
  EXPECT_THAT(reason(g.p, m), HasSubstr("has 2 incoming edges"));
  // The intermediate is a view's target.
  GraphBuilder v = pairWith({{0, 4}, {0, 4}}, {{0, 4}, {0, 4}}, {i0, i1});
  ir::Container view = v.p.container("t");
  view.name = "t_flat";
  view.shape = {ir::Expr(16)};
  view.strides = {ir::Expr(1)};
  view.viewOf = "t";
  v.p.addContainer(view);
  EXPECT_THAT(reason(v.p, fusionMatches(v.p).at(0)),
              HasSubstr("'t' is viewed by 't_flat'"));
}

TEST(MapFusion, RefusesAContainerOneMapReadsAndTheOtherWrites) {
  // u is written by `init`, read by `first`, then overwritten by `second`:
  // fused, an iteration of `second` could overwrite what a later iteration
  // of `first` still reads.
  GraphBuilder g("war");
  g.input("x", {4}).transient("u", {4}).transient("t", {4}).output("y", {4});
  Maps m(g);
  std::vector<ir::Range> r{{0, 4}};
  m.add("init", {"i0"}, r, {{"x", "x", {i0}}}, "u = x", {{"u", "u", {i0}}});
  m.add("first", {"i0"}, r, {{"u", "u", {i0}}}, "t = u + 1.0",
        {{"t", "t", {i0}}});
  m.add("second", {"i0"}, r, {{"t", "t", {i0}}}, "u = t; y = t",
        {{"u", "u", {i0}}, {"y", "y", {i0}}});
  std::vector<Match> ms = fusionMatches(g.p);
  auto it = std::find_if(ms.begin(), ms.end(), [&](const Match &mm) {
    return g.p.states[0].findNode(mm.node("array"))->access().container == "t";
  });
  ASSERT_NE(it, ms.end());
  EXPECT_THAT(reason(g.p, *it),
              HasSubstr("'u' is read by map 'first' (%6) and written by map "
                        "'second'"));
}

TEST(MapFusion, KeepsTheProducersSchedule) {
  GraphBuilder g = twoMaps();
  for (ir::Node &n : g.p.states[0].nodes.editable())
    if ((n.kind == ir::NodeKind::MapEntry || n.kind == ir::NodeKind::MapExit) &&
        n.label == "relu")
      n.map().schedule = ir::Schedule::Sequential;
  ir::Program after =
      transforms::applyChecked(g.p, fusion(), fusionMatches(g.p).at(0)).program;
  for (const ir::Node &n : after.states[0].nodes) {
    if (n.kind == ir::NodeKind::MapEntry || n.kind == ir::NodeKind::MapExit) {
      EXPECT_EQ(n.map().schedule, ir::Schedule::Sequential) << n.id;
    }
  }
  expectEquivalent(g.p, after);
}

// --- the bundled models ----------------------------------------------------

TEST(MapFusion, BundledModelsToAFixedPoint) {
  for (const char *name : {"cnn.onnx", "mlp.onnx", "transformer.onnx"}) {
    SCOPED_TRACE(name);
    ir::Program before = expandedModel(name);
    ir::Program after = before;
    int fused = toFixedPoint(after, fusion());
    expectValid(after);
    std::int64_t b0 = bytesMoved(before), b1 = bytesMoved(after);
    std::cout << "[ map-fusion ] " << name << ": " << fused << " fusions, "
              << countNodes(before, ir::NodeKind::MapEntry) << " -> "
              << countNodes(after, ir::NodeKind::MapEntry)
              << " maps, bytes moved (N = 1) " << b0 << " -> " << b1 << "\n";
    EXPECT_LE(b1, b0);
    EXPECT_EQ(fused > 0, b1 < b0);
    if (std::string(name) == "transformer.onnx") {
      EXPECT_GT(fused, 0);
    }
    expectEquivalent(before, after, 11);
  }
}

TEST(MapFusion, TransformerFromOneListOfMatches) {
  // A script's way: list every match once, then apply those that still
  // check, in order, each to the program the previous one produced.
  ir::Program before = expandedModel("transformer.onnx");
  ir::Program p = before;
  int applied = 0;
  for (const Match &m : fusionMatches(before))
    if (transforms::checkMatch(p, fusion(), m)) {
      p = transforms::applyChecked(p, fusion(), m).program;
      ++applied;
    }
  EXPECT_GT(applied, 0);
  std::cout << "[ map-fusion ] transformer.onnx: " << applied
            << " fusions from the list taken up front\n";
  expectEquivalent(before, p, 5);
}

} // namespace
} // namespace weir::transforms_testing
