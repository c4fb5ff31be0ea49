// `vectorize`: golden text, after interchange and under a parallel map,
// refusals, the bundled models.

#include "transforms/schedule_checks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <iostream>

namespace weir::transforms_testing {
namespace {

using ::testing::HasSubstr;

TEST(Vectorize, Golden) {
  OneMap m = biasMap();
  ir::Program before = m.g.p;
  ir::Program after = before;
  EXPECT_EQ(toFixedPoint(after, vectorize()), 1);
  expectValid(after);
  expectGolden("schedule_vectorize", before, after);
  codegen::Executable exe = codegen::compile(after, eagerParallel());
  EXPECT_EQ(occurrences(exe.loopIR(), "vectorized for j"), 1) << exe.loopIR();
  EXPECT_THAT(exe.llvmIR(), HasSubstr("llvm.loop.vectorize.enable"));
  EXPECT_THAT(codegen::compile(before, eagerParallel()).llvmIR(),
              ::testing::Not(HasSubstr("llvm.loop.vectorize.enable")));
  expectEquivalent(before, after, vectorize().exactness());
  expectJitMatchesInterpreter(after);
}

TEST(Vectorize, AfterInterchangeAndUnderAParallelMap) {
  // y[i, j] = x[i, j] with i innermost walks y and x at stride 16.
  OneMap m("columns");
  m.g.input("x", {8, 16}).output("y", {8, 16});
  m.add("cols", {"j", "i"}, {{0, 16}, {0, 8}},
        {{"x", "x", {sym("i"), sym("j")}}}, "y = exp(x)",
        {{"y", "y", {sym("i"), sym("j")}}});
  Match at = mapMatch(m.ids.entry);
  EXPECT_THAT(reasonAt(m.g.p, vectorize(), at),
              HasSubstr("the last parameter 'i' of map 'cols' (%" +
                        std::to_string(m.ids.entry) +
                        ") walks x[i, j] at stride 16, not 0 or 1"));
  ir::Program p = transforms::applyChecked(m.g.p, interchange(), at).program;
  p = transforms::applyChecked(p, vectorize(), at).program;
  expectValid(p);
  expectEquivalent(m.g.p, p, vectorize().exactness());

  // [i] parallel { [j] vectorized }: both loop kinds in one nest.
  OneMap n = biasMap();
  ir::NodeId inner = splitMap(n.g.p, n.ids.entry, 1);
  ir::Program q =
      transforms::applyChecked(n.g.p, vectorize(), mapMatch(inner)).program;
  q = transforms::applyChecked(q, parallelize(), mapMatch(n.ids.entry)).program;
  expectValid(q);
  std::string ir = codegen::compile(q, eagerParallel()).loopIR();
  EXPECT_EQ(occurrences(ir, "parallel for i"), 1) << ir;
  EXPECT_EQ(occurrences(ir, "vectorized for j"), 1) << ir;
  expectEquivalent(n.g.p, q, vectorize().exactness());
  expectJitMatchesInterpreter(q);
}

TEST(Vectorize, Refusals) {
  OneMap t = transposeMap();
  EXPECT_THAT(refusals(t.g.p, vectorize()),
              HasSubstr("the last parameter 'j' of map 'tr' (%" +
                        std::to_string(t.ids.entry) +
                        ") walks x[j, i] at stride 4, not 0 or 1"));
  OneMap sum = sumMap();
  EXPECT_THAT(
      refusals(sum.g.p, vectorize()),
      HasSubstr("map 'sum' (%" + std::to_string(sum.ids.entry) +
                ") writes y[i] (sum) with a write-conflict resolution"));
  OneMap last("last_write");
  last.g.input("x", {3, 4}).output("y", {3});
  last.add("last", {"i", "j"}, {{0, 3}, {0, 4}},
           {{"x", "x", {sym("i"), sym("j")}}}, "y = x",
           {{"y", "y", {sym("i")}}});
  EXPECT_THAT(refusals(last.g.p, vectorize()),
              HasSubstr("the iterations of 'j' in map 'last' (%" +
                        std::to_string(last.ids.entry) +
                        ") are not private: 'y' (y[i]) may be touched by "
                        "iterations that differ in j"));
  OneMap nest = biasMap();
  ir::NodeId inner = splitMap(nest.g.p, nest.ids.entry, 1);
  EXPECT_THAT(reasonAt(nest.g.p, vectorize(), mapMatch(nest.ids.entry)),
              HasSubstr("map 'bias' (%" + std::to_string(nest.ids.entry) +
                        ") is not innermost: it holds map 'bias_inner' (%" +
                        std::to_string(inner) + ")"));
  OneMap done = biasMap(ir::Schedule::Vectorized);
  EXPECT_THAT(refusals(done.g.p, vectorize()),
              HasSubstr("is already vectorized"));
}

TEST(Vectorize, BundledModels) {
  for (const char *name : {"cnn.onnx", "mlp.onnx", "transformer.onnx"}) {
    SCOPED_TRACE(name);
    ir::Program before = expandedModel(name);
    ir::Program after = before;
    int applied = toFixedPoint(after, vectorize());
    expectValid(after);
    std::string refused = refusals(before, vectorize());
    std::cout << "    first refusal: " << refused.substr(0, refused.find('\n'))
              << "\n";
    codegen::CompileOptions o;
    o.useCache = false;
    int loops =
        occurrences(codegen::compile(after, o).loopIR(), "vectorized for");
    std::cout << "[ vectorize ] " << name << ": "
              << countNodes(before, ir::NodeKind::MapEntry) << " maps, "
              << applied << " vectorized, " << occurrences(refused, "\n")
              << " refused; " << loops << " vectorized loops emitted\n";
    EXPECT_GT(applied, 0);
    EXPECT_GT(loops, 0);
    expectEquivalent(before, after, vectorize().exactness(), 37);
  }
}

} // namespace
} // namespace weir::transforms_testing
