// `map-interchange`: golden text, the memlets a nested swap re-derives,
// refusals matching their reasons, every match on the bundled models.

#include "transforms/schedule_checks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <iostream>

namespace weir::transforms_testing {
namespace {

using ::testing::HasSubstr;

TEST(MapInterchange, SwapGolden) {
  OneMap m = transposeMap();
  ir::Program before = m.g.p, after = before;
  after = transforms::applyChecked(before, interchange(), mapMatch(m.ids.entry))
              .program;
  expectValid(after);
  expectGolden("schedule_interchange_swap", before, after);
  EXPECT_EQ(after.states[0].findNode(m.ids.entry)->map().params,
            (std::vector<std::string>{"j", "i"}));
  EXPECT_EQ(bytesMoved(after), bytesMoved(before));
  expectEquivalent(before, after, interchange().exactness());
  // The lowering follows the order: j is now the outer loop.
  std::string ir = codegen::compile(after, eagerParallel()).loopIR();
  EXPECT_LT(ir.find("for j"), ir.find("for i")) << ir;
  // Swapping back gives the program we started from.
  ir::Program again =
      transforms::applyChecked(after, interchange(), mapMatch(m.ids.entry))
          .program;
  EXPECT_EQ(ir::print(again), ir::print(before));
}

TEST(MapInterchange, PermutationGolden) {
  OneMap m("permute");
  m.g.input("x", {2, 3, 4}).output("y", {4, 2, 3});
  m.add("perm", {"a", "b", "c"}, {{0, 2}, {0, 3}, {0, 4}},
        {{"x", "x", {sym("a"), sym("b"), sym("c")}}}, "y = x * x",
        {{"y", "y", {sym("c"), sym("a"), sym("b")}}});
  ir::Program before = m.g.p;
  ir::Program after =
      transforms::applyChecked(before, interchange(), mapMatch(m.ids.entry),
                               {{"permutation", transforms::IntList{2, 0, 1}}})
          .program;
  expectValid(after);
  expectGolden("schedule_interchange_permutation", before, after);
  EXPECT_EQ(after.states[0].findNode(m.ids.entry)->map().params,
            (std::vector<std::string>{"c", "a", "b"}));
  expectEquivalent(before, after, interchange().exactness());
  expectJitMatchesInterpreter(after);
}

TEST(MapInterchange, NestedSwapRederivesTheMiddleMemlets) {
  OneMap m = biasMap();
  splitMap(m.g.p, m.ids.entry, 1);
  ir::Program before = m.g.p;
  expectValid(before);
  ir::Program after =
      transforms::applyChecked(before, interchange(), mapMatch(m.ids.entry),
                               {{"nested", true}})
          .program;
  expectValid(after);
  expectGolden("schedule_interchange_nested", before, after);
  const ir::State &s = after.states[0];
  EXPECT_EQ(s.findNode(m.ids.entry)->map().params,
            std::vector<std::string>{"j"});
  // For one j the inner map reads column j of x and b[j], writes column j.
  std::vector<std::string> middle;
  for (const ir::Edge &e : s.edges)
    if (e.src == m.ids.entry || e.dst == m.ids.exit)
      middle.push_back(e.memlet.str());
  std::sort(middle.begin(), middle.end());
  EXPECT_EQ(middle,
            (std::vector<std::string>{"b[j]", "x[0:8, j]", "y[0:8, j]"}));
  expectEquivalent(before, after, interchange().exactness());
  expectJitMatchesInterpreter(after);
}

TEST(MapInterchange, KeepsTheOrderOfASumAndRefusesToChangeIt) {
  OneMap m = sumMap();
  Match at = mapMatch(m.ids.entry);
  // i and j: the sum into y[i] still runs over j, then k.
  ir::Program swapped =
      transforms::applyChecked(m.g.p, interchange(), at).program;
  expectEquivalent(m.g.p, swapped, interchange().exactness());
  // j and k: y[i] would add x[i, j, k] in another order.
  EXPECT_THAT(reasonAt(m.g.p, interchange(), at, {{"first", 1}, {"second", 2}}),
              HasSubstr("'y' (y[i] (sum)) may be touched by iterations that "
                        "differ in j, k; reordering them changes the order "
                        "of those accesses (the sum would reassociate)"));
  EXPECT_THAT(reasonAt(m.g.p, interchange(), at,
                       {{"permutation", transforms::IntList{0, 2, 1}}}),
              HasSubstr("differ in j, k"));
  // The nest [i][j, k] may swap ([j, k][i] keeps j before k).
  OneMap n = sumMap();
  splitMap(n.g.p, n.ids.entry, 1);
  ir::Program nested =
      transforms::applyChecked(n.g.p, interchange(), mapMatch(n.ids.entry),
                               {{"nested", true}})
          .program;
  expectValid(nested);
  expectEquivalent(n.g.p, nested, interchange().exactness());
  expectJitMatchesInterpreter(nested);
  // The nest [i, j][k] may not: k would run before j.
  OneMap q = sumMap();
  splitMap(q.g.p, q.ids.entry, 2);
  EXPECT_THAT(
      reasonAt(q.g.p, interchange(), mapMatch(q.ids.entry), {{"nested", true}}),
      HasSubstr("differ in j, k; reordering them"));
}

TEST(MapInterchange, RefusesWhatItCannotReorder) {
  // Dimension parameters.
  OneMap t = transposeMap();
  Match at = mapMatch(t.ids.entry);
  EXPECT_THAT(reasonAt(t.g.p, interchange(), at, {{"first", 1}, {"second", 1}}),
              HasSubstr("first and second both name dimension 1 of map 'tr'"));
  EXPECT_THAT(reasonAt(t.g.p, interchange(), at, {{"second", 2}}),
              HasSubstr("map 'tr' (%" + std::to_string(t.ids.entry) +
                        ") has 2 dimensions"));
  EXPECT_THAT(reasonAt(t.g.p, interchange(), at,
                       {{"permutation", transforms::IntList{0, 0}}}),
              HasSubstr("permutation [0, 0] is not a permutation of 0..1"));
  EXPECT_THAT(reasonAt(t.g.p, interchange(), at, {{"permutation", "a,b"}}),
              HasSubstr("parameter 'permutation' must be int-list, got "
                        "string \"a,b\""));
  EXPECT_THAT(reasonAt(t.g.p, interchange(), at,
                       {{"permutation", transforms::IntList{0, 1}}}),
              HasSubstr("the permutation leaves map 'tr'"));
  EXPECT_THAT(reasonAt(t.g.p, interchange(), at, {{"nested", true}}),
              HasSubstr("map 'tr' (%" + std::to_string(t.ids.entry) +
                        ") does not hold exactly one inner map"));

  // One dimension.
  OneMap one("one");
  one.g.input("x", {5}).output("y", {5});
  one.add("neg", {"i"}, {{0, 5}}, {{"x", "x", {sym("i")}}}, "y = -x",
          {{"y", "y", {sym("i")}}});
  EXPECT_THAT(reasonAt(one.g.p, interchange(), mapMatch(one.ids.entry)),
              HasSubstr("has one dimension; nothing to reorder"));

  // A triangle: j's range names i.
  OneMap tri("triangle");
  tri.g.input("x", {4, 4}).output("y", {4, 4});
  tri.add("tri", {"i", "j"}, {{0, 4}, {ir::Expr(0), sym("i") + ir::Expr(1)}},
          {{"x", "x", {sym("i"), sym("j")}}}, "y = x",
          {{"y", "y", {sym("i"), sym("j")}}});
  EXPECT_THAT(reasonAt(tri.g.p, interchange(), mapMatch(tri.ids.entry)),
              HasSubstr("the range of 'j' (0:i + 1) depends on 'i'"));
  splitMap(tri.g.p, tri.ids.entry, 1);
  EXPECT_THAT(reasonAt(tri.g.p, interchange(), mapMatch(tri.ids.entry),
                       {{"nested", true}}),
              HasSubstr("in the inner map 'tri_inner'"));

  // An iteration reads what another writes: y[i, j] = y[j, i] + 1.
  OneMap rw("read_write");
  rw.g.input("x", {4, 4}).output("y", {4, 4});
  rw.add("copy", {"i", "j"}, {{0, 4}, {0, 4}},
         {{"x", "x", {sym("i"), sym("j")}}}, "y = x",
         {{"y", "y", {sym("i"), sym("j")}}});
  OneMap &r = rw;
  r.add("mirror", {"i", "j"}, {{0, 4}, {0, 4}},
        {{"y", "y", {sym("j"), sym("i")}}}, "z = y + 1.0",
        {{"z", "y", {sym("i"), sym("j")}}});
  EXPECT_THAT(reasonAt(r.g.p, interchange(), mapMatch(r.ids.entry)),
              HasSubstr("'y' (y[i, j]) may be touched by iterations that "
                        "differ in i, j"));
}

TEST(MapInterchange, BundledModelsEveryMatchTwice) {
  for (const char *name : {"cnn.onnx", "mlp.onnx", "transformer.onnx"}) {
    SCOPED_TRACE(name);
    ir::Program before = expandedModel(name);
    ir::Program after = before;
    std::vector<Match> matches = transforms::findMatches(before, interchange());
    int applied = applyEach(after, interchange(), matches);
    expectValid(after);
    std::cout << "[ map-interchange ] " << name << ": swapped the first two "
              << "dimensions of " << applied << " of " << matches.size()
              << " maps\n";
    EXPECT_GT(applied, 0);
    expectEquivalent(before, after, interchange().exactness(), 19);
    // Applying every swap again restores the program.
    ir::Program back = after;
    applyEach(back, interchange(), matches);
    EXPECT_EQ(ir::print(back), ir::print(before));
  }
}

} // namespace
} // namespace weir::transforms_testing
