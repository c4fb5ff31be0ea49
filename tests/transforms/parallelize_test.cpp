// `parallelize`: golden text, private sums inside, refusals, the bundled models
// from sequential, `outermost`; the JIT runs the parallel loops against the
// interpreter.

#include "transforms/schedule_checks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <iostream>

namespace weir::transforms_testing {
namespace {

using ::testing::HasSubstr;

TEST(Parallelize, Golden) {
  OneMap m = biasMap();
  ir::Program before = m.g.p;
  ir::Program after = before;
  EXPECT_EQ(toFixedPoint(after, parallelize()), 1);
  expectValid(after);
  expectGolden("schedule_parallelize", before, after);
  EXPECT_EQ(after.states[0].findNode(m.ids.entry)->map().schedule,
            ir::Schedule::CpuParallel);
  expectEquivalent(before, after, parallelize().exactness());
  // The lowering emits the loop the schedule asks for, and the JIT runs it
  // on the pool.
  codegen::Executable exe = codegen::compile(after, eagerParallel());
  EXPECT_EQ(occurrences(exe.loopIR(), "parallel for"), 1) << exe.loopIR();
  EXPECT_THAT(exe.llvmIR(), HasSubstr("weir_parallel_for"));
  EXPECT_EQ(occurrences(codegen::compile(before, eagerParallel()).loopIR(),
                        "parallel for"),
            0);
  expectJitMatchesInterpreter(after);
}

TEST(Parallelize, AnOuterMapWithAPrivateSumInside) {
  // [i] { [j, k] y[i] += x[i, j, k] }: the sum is private to i.
  OneMap m = sumMap();
  ir::NodeId inner = splitMap(m.g.p, m.ids.entry, 1);
  ir::Program before = m.g.p;
  ir::Program after =
      transforms::applyChecked(before, parallelize(), mapMatch(m.ids.entry))
          .program;
  expectValid(after);
  EXPECT_THAT(reasonAt(before, parallelize(), mapMatch(inner)),
              HasSubstr("'y' (y[i] (sum)) may be touched by iterations that "
                        "differ in j, k (a write-conflict resolution "
                        "combines them)"));
  std::string ir = codegen::compile(after, eagerParallel()).loopIR();
  EXPECT_EQ(occurrences(ir, "parallel for"), 1) << ir;
  EXPECT_LT(ir.find("parallel for i"), ir.find("for j")) << ir;
  expectEquivalent(before, after, parallelize().exactness());
  expectJitMatchesInterpreter(after);
}

TEST(Parallelize, Refusals) {
  OneMap sum = sumMap();
  EXPECT_THAT(refusals(sum.g.p, parallelize()),
              HasSubstr("the iterations of map 'sum' (%" +
                        std::to_string(sum.ids.entry) +
                        ") are not provably independent: 'y' (y[i] (sum)) may "
                        "be touched by iterations that differ in j, k"));

  OneMap one("one");
  one.g.input("x", {1, 1}).output("y", {1, 1});
  one.add("one", {"i", "j"}, {{0, 1}, {0, 1}},
          {{"x", "x", {sym("i"), sym("j")}}}, "y = x",
          {{"y", "y", {sym("i"), sym("j")}}});
  EXPECT_THAT(refusals(one.g.p, parallelize()),
              HasSubstr("map 'one' (%" + std::to_string(one.ids.entry) +
                        ") runs one iteration; nothing to run in parallel"));
  EXPECT_THAT(refusals(one.g.p, vectorize()),
              HasSubstr("the last parameter 'j' of map 'one' (%" +
                        std::to_string(one.ids.entry) +
                        ") runs one iteration; nothing to vectorize"));

  OneMap par = biasMap(ir::Schedule::CpuParallel);
  EXPECT_THAT(refusals(par.g.p, parallelize()),
              HasSubstr("map 'bias' (%" + std::to_string(par.ids.entry) +
                        ") is already cpu-parallel"));

  OneMap outer = biasMap(ir::Schedule::CpuParallel);
  ir::NodeId inner = splitMap(outer.g.p, outer.ids.entry, 1);
  EXPECT_THAT(reasonAt(outer.g.p, parallelize(), mapMatch(inner)),
              HasSubstr("is inside the cpu-parallel map 'bias' (%" +
                        std::to_string(outer.ids.entry) +
                        "); parallel regions do not nest"));

  OneMap holds = biasMap();
  splitMap(holds.g.p, holds.ids.entry, 1, ir::Schedule::CpuParallel);
  EXPECT_THAT(reasonAt(holds.g.p, parallelize(), mapMatch(holds.ids.entry)),
              HasSubstr("holds the cpu-parallel map 'bias_inner'"));

  // y[i, j] = y[j, i] + 1 after y was filled: iterations race on y.
  OneMap rw("mirror");
  rw.g.input("x", {4, 4}).output("y", {4, 4});
  rw.add("copy", {"i", "j"}, {{0, 4}, {0, 4}},
         {{"x", "x", {sym("i"), sym("j")}}}, "y = x",
         {{"y", "y", {sym("i"), sym("j")}}}, ir::Schedule::CpuParallel);
  rw.add("mirror", {"i", "j"}, {{0, 4}, {0, 4}},
         {{"y", "y", {sym("j"), sym("i")}}}, "z = y + 1.0",
         {{"z", "y", {sym("i"), sym("j")}}});
  EXPECT_THAT(reasonAt(rw.g.p, parallelize(), mapMatch(rw.ids.entry)),
              HasSubstr("map 'mirror' (%" + std::to_string(rw.ids.entry) +
                        ") are not provably independent: 'y'"));
}

TEST(Parallelize, BundledModelsFromSequential) {
  for (const char *name : {"cnn.onnx", "mlp.onnx", "transformer.onnx"}) {
    SCOPED_TRACE(name);
    ir::Program expanded = expandedModel(name);
    int maps = countNodes(expanded, ir::NodeKind::MapEntry);
    int marked = countSchedule(expanded, ir::Schedule::CpuParallel);
    ir::Program before = expanded;
    setSchedules(before, ir::Schedule::Sequential);
    ir::Program strict = before;
    int applied = toFixedPoint(strict, parallelize());
    expectValid(strict);
    ir::Program outer = strict;
    int more = applyEach(outer, parallelize(),
                         transforms::findMatches(outer, parallelize()),
                         {{"outermost", true}});
    expectValid(outer);
    // What stays sequential, and why (the first few reasons).
    std::string why;
    int shown = 0;
    for (const Match &m : transforms::findMatches(outer, parallelize()))
      if (auto c = transforms::checkMatch(outer, parallelize(), m,
                                          {{"outermost", true}});
          !c && c.reason.find("already") == std::string::npos && shown++ < 3)
        why += "    refused: " + c.reason + "\n";
    std::cout << why;
    auto loops = [](const ir::Program &p) {
      return occurrences(codegen::compile(p, eagerParallel()).loopIR(),
                         "parallel for");
    };
    int loopsExpansion = loops(expanded), loopsStrict = loops(strict),
        loopsOuter = loops(outer);
    std::cout << "[ parallelize ] " << name << ": " << maps << " maps ("
              << marked << " cpu-parallel after expansion); from all "
              << "sequential, " << applied << " proven independent, " << more
              << " more with outermost; parallel loops (threshold 1): "
              << loopsExpansion << " expansion, " << loopsStrict << " strict, "
              << loopsOuter << " outermost\n";
    EXPECT_GT(applied, 0);
    EXPECT_EQ(countSchedule(strict, ir::Schedule::CpuParallel), applied);
    // Every map parallelize accepts, the lowering proves parallel.
    EXPECT_EQ(loopsStrict, applied);
    EXPECT_EQ(loopsOuter, applied + more);
    EXPECT_GE(loopsOuter, loopsExpansion);
    expectEquivalent(before, strict, parallelize().exactness(), 31);
    expectEquivalent(before, outer, parallelize().exactness(), 37);
  }
}

TEST(Parallelize, OutermostAcceptsARowWiseSum) {
  // y[i] += x[i, j, k]: rows are private, j and k conflict.
  OneMap m = sumMap();
  Match at = mapMatch(m.ids.entry);
  EXPECT_THAT(reasonAt(m.g.p, parallelize(), at), HasSubstr("differ in j, k"));
  ir::Program after =
      transforms::applyChecked(m.g.p, parallelize(), at, {{"outermost", true}})
          .program;
  expectValid(after);
  std::string ir = codegen::compile(after, eagerParallel()).loopIR();
  EXPECT_EQ(occurrences(ir, "parallel for i"), 1) << ir;
  expectEquivalent(m.g.p, after, parallelize().exactness());
  expectJitMatchesInterpreter(after);
  // A sum over the outermost parameter is refused even so.
  OneMap cols("columns");
  cols.g.input("x", {4, 6}).output("y", {6});
  cols.add("colsum", {"i", "j"}, {{0, 4}, {0, 6}},
           {{"x", "x", {sym("i"), sym("j")}}}, "y = x",
           {{"y", "y", {sym("j")}, ir::Wcr::Sum}});
  EXPECT_THAT(reasonAt(cols.g.p, parallelize(), mapMatch(cols.ids.entry),
                       {{"outermost", true}}),
              HasSubstr("'y' (y[j] (sum)) may be touched by iterations that "
                        "differ in i"));
}

} // namespace
} // namespace weir::transforms_testing
