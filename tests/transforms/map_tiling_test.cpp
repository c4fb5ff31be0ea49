// map-tiling: golden before/after text, negative tests matching their
// reasons, equivalence on the interpreter and the CPU JIT (odd sizes, so
// the remainder tiles run), the bundled models, and a JIT timing.

#include "codegen/cpu/compile.h"
#include "transforms/golden.h"
#include "transforms/graph_builder.h"
#include "transforms/program_checks.h"
#include "transforms/registry.h"
#include "transforms/rewrite.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <iostream>

namespace weir::transforms_testing {
namespace {

using ::testing::HasSubstr;
using transforms::Match;
using transforms::Params;

const transforms::Transformation &tiling() {
  return *transforms::requireTransformation("map-tiling");
}

Expr sym(const char *name) { return Expr::symbol(name); }

/// The match of the map labelled `label`.
Match mapMatch(const ir::Program &p, const std::string &label) {
  for (const Match &m : transforms::findMatches(p, tiling()))
    if (transforms::stateNamed(p, m.state).findNode(m.node("map"))->label ==
        label)
      return m;
  ADD_FAILURE() << "no map '" << label << "'";
  return {};
}

ir::Program tiled(const ir::Program &p, const std::string &label,
                  const Params &params) {
  ir::Program out =
      transforms::applyChecked(p, tiling(), mapMatch(p, label), params).program;
  expectValid(out);
  return out;
}

std::string refusal(const ir::Program &p, const std::string &label,
                    const Params &params) {
  transforms::CheckResult c =
      transforms::checkMatch(p, tiling(), mapMatch(p, label), params);
  EXPECT_FALSE(c.ok);
  EXPECT_FALSE(c.nodes.empty());
  return c.reason;
}

/// y = x * 2 + x[i, j] shifted by one column (a neighbour read), 37x53.
GraphBuilder stencil() {
  GraphBuilder g("stencil");
  g.input("x", {37, 54}).output("y", {37, 53});
  Maps m(g);
  Expr i = sym("i"), j = sym("j");
  m.add("st", {"i", "j"}, {{0, 37}, {0, 53}},
        {{"a", "x", {i, j}}, {"b", "x", {i, j + 1}}}, "y = a * 2.0 + b",
        {{"y", "y", {i, j}}});
  return g;
}

/// C[i, j] += A[i, k] * B[k, j] as one three-dimensional map with a WCR.
GraphBuilder matmulMap(std::int64_t m, std::int64_t n, std::int64_t k) {
  GraphBuilder g("matmul");
  g.input("A", {m, k}).input("B", {k, n}).output("C", {m, n});
  Maps maps(g);
  Expr i = sym("i"), j = sym("j"), kk = sym("k");
  maps.add("mm", {"i", "j", "k"}, {{0, m}, {0, n}, {0, k}},
           {{"a", "A", {i, kk}}, {"b", "B", {kk, j}}}, "c = a * b",
           {{"c", "C", {i, j}, ir::Wcr::Sum}});
  return g;
}

TEST(MapTiling, StencilGolden) {
  ir::Program before = stencil().p;
  ir::Program after = tiled(before, "st", {{"tile", std::int64_t{16}}});
  expectGolden("map_tiling_stencil", before, after);
  EXPECT_EQ(countNodes(after, ir::NodeKind::MapEntry), 2);
  EXPECT_EQ(bytesMoved(after), bytesMoved(before));
  expectEquivalent(before, after, tiling().exactness());
}

TEST(MapTiling, PerDimensionTilesAndSteps) {
  // Rows 1, 4, ..., 34 (step 3), columns whole; tiles "4,0": the outer map
  // steps 12 rows, the last tile holds 2 of them.
  GraphBuilder g("stepped");
  g.input("x", {37, 53}).output("y", {37, 53});
  Maps m(g);
  Expr i = sym("i"), j = sym("j");
  m.add("sp", {"i", "j"}, {{1, 37, 3}, {0, 53}}, {{"a", "x", {i, j}}},
        "y = a + 1.0", {{"y", "y", {i, j}}});
  ir::Program before = g.p;
  // A string, as recipes written before int-list parameters hold it.
  ir::Program after = tiled(before, "sp", {{"tiles", std::string("4, 0")}});
  expectGolden("map_tiling_stepped", before, after);
  expectEquivalent(before, after, tiling().exactness());
  // Tiling the columns too (16 does not divide 53: a min() remains).
  ir::Program both =
      tiled(before, "sp", {{"tiles", transforms::IntList{4, 16}}});
  expectEquivalent(before, both, tiling().exactness());
}

TEST(MapTiling, SymbolicRangeKeepsMin) {
  GraphBuilder g("symbolic");
  g.p.symbols.push_back("N");
  Container x = builders::argument("x", DType::F32, {sym("N"), Expr(5)});
  Container y = builders::argument("y", DType::F32, {sym("N"), Expr(5)});
  g.p.addContainer(x);
  g.p.addContainer(y);
  g.p.inputs = {"x"};
  g.p.outputs = {"y"};
  Maps m(g);
  Expr i = sym("i"), j = sym("j");
  m.add("sym", {"i", "j"}, {{0, sym("N")}, {0, 5}}, {{"a", "x", {i, j}}},
        "y = exp(a)", {{"y", "y", {i, j}}});
  ir::Program before = g.p;
  ir::Program after = tiled(before, "sym", {{"tile", std::int64_t{4}}});
  expectGolden("map_tiling_symbolic", before, after);
  for (std::int64_t n : {1, 4, 13}) {
    workspace::VerifyReport v = workspace::verifyPrograms(
        before, after, tiling().exactness(), {.seed = 3, .dims = {{"N", n}}});
    EXPECT_TRUE(v.ok) << "N = " << n << ": " << v.str();
  }
  expectEquivalent(before, after, tiling().exactness());
}

TEST(MapTiling, MatmulWithWcrKeepsTheSumOrder) {
  ir::Program before = matmulMap(37, 53, 29).p;
  ir::Program after = tiled(before, "mm", {{"tile", std::int64_t{16}}});
  expectGolden("map_tiling_matmul", before, after);
  // i and j pin C's element; k, the one free parameter, is the first free
  // one, so each element still sums k = 0, 1, ... in order: bit-identical.
  expectEquivalent(before, after, tiling().exactness(), 5);
}

TEST(MapTiling, RefusesBadParametersAndSmallMaps) {
  ir::Program p = stencil().p;
  EXPECT_THAT(refusal(p, "st", {{"tiles", transforms::IntList{16}}}),
              HasSubstr("gives 1 sizes but the map has 2 dimensions"));
  // Parameter errors name the parameter (no node is at fault).
  auto paramError = [&](const Params &params) {
    transforms::CheckResult c =
        transforms::checkMatch(p, tiling(), mapMatch(p, "st"), params);
    EXPECT_FALSE(c.ok);
    return c.reason;
  };
  EXPECT_THAT(paramError({{"tiles", std::string("16,x")}}),
              HasSubstr("parameter 'tiles' must be int-list, got string "
                        "\"16,x\""));
  EXPECT_THAT(paramError({{"tiles", transforms::IntList{-1, 4}}}),
              HasSubstr("-1 is outside [0, 1048576]"));
  EXPECT_THAT(refusal(p, "st", {{"tile", std::int64_t{64}}}),
              HasSubstr("map 'st' (%"));
  EXPECT_THAT(refusal(p, "st", {{"tile", std::int64_t{64}}}),
              HasSubstr("[i = 0:37, j = 0:53] fits in one tile"));
  EXPECT_THAT(refusal(p, "st", {{"tiles", transforms::IntList{0, 1}}}),
              HasSubstr("nothing to tile"));
  // A tiled inner map [o, min(o + 16, 37)) is never tiled again by 16.
  ir::Program t = tiled(p, "st", {{"tile", std::int64_t{16}}});
  EXPECT_EQ(toFixedPoint(t, tiling()), 0);
}

TEST(MapTiling, RefusesReorderedWrites) {
  // y[i] += x[i, j, k]: j and k are free; tiling both (or k alone, which is
  // not the first free one) would change the summation order.
  GraphBuilder g("reduce");
  g.input("x", {5, 37, 41}).output("y", {5});
  Maps m(g);
  Expr i = sym("i"), j = sym("j"), k = sym("k");
  m.add("red", {"i", "j", "k"}, {{0, 5}, {0, 37}, {0, 41}},
        {{"a", "x", {i, j, k}}}, "s = a", {{"s", "y", {i}, ir::Wcr::Sum}});
  ir::Program p = g.p;
  std::string why = refusal(p, "red", {{"tile", std::int64_t{8}}});
  EXPECT_THAT(why, HasSubstr("writes y[i] (sum) from several iterations"));
  EXPECT_THAT(why, HasSubstr("one element of 'y'"));
  EXPECT_THAT(refusal(p, "red", {{"tiles", transforms::IntList{0, 0, 8}}}),
              HasSubstr("map 'red' (%"));
  // Tiling j alone keeps the order: each y[i] still sums j-major.
  ir::Program ok = tiled(p, "red", {{"tiles", transforms::IntList{0, 8, 0}}});
  expectEquivalent(p, ok, tiling().exactness());

  // A map that reads a neighbour of what it writes in one array.
  GraphBuilder h("shift");
  h.input("x", {6, 40}).transient("t", {6, 41}).output("y", {6, 40});
  Maps n(h);
  Expr a = sym("a"), b = sym("b");
  n.add("fill", {"a", "b"}, {{0, 6}, {0, 40}}, {{"v", "x", {a, b}}}, "w = v",
        {{"w", "t", {a, b + 1}}});
  n.add("shift", {"a", "b"}, {{0, 6}, {0, 40}}, {{"v", "t", {a, b + 1}}},
        "w = v * 3.0", {{"w", "t", {a, b}}});
  n.add("out", {"a", "b"}, {{0, 6}, {0, 40}}, {{"v", "t", {a, b}}}, "w = v",
        {{"w", "y", {a, b}}});
  EXPECT_THAT(refusal(h.p, "shift", {{"tile", std::int64_t{8}}}),
              HasSubstr("reads t[a, b + 1] and writes t[a, b]; tiling would "
                        "reorder an iteration's read of 't'"));
}

TEST(MapTiling, BundledModels) {
  for (const char *name : {"cnn.onnx", "mlp.onnx", "transformer.onnx"}) {
    SCOPED_TRACE(name);
    ir::Program before = expandedModel(name);
    ir::Program after = before;
    int applied = 0, refused = 0;
    Params params{{"tile", std::int64_t{8}}};
    for (const Match &m : transforms::findMatches(before, tiling())) {
      // Ids survive tiling, so the matches listed up front still apply.
      if (!transforms::checkMatch(after, tiling(), m, params)) {
        ++refused;
        continue;
      }
      after = transforms::applyChecked(after, tiling(), m, params).program;
      ++applied;
    }
    expectValid(after);
    std::cout << "[ map-tiling ] " << name << ": " << applied
              << " maps tiled by 8, " << refused << " refused; bytes moved "
              << bytesMoved(before) << " -> " << bytesMoved(after) << "\n";
    EXPECT_GT(applied, 0);
    EXPECT_EQ(bytesMoved(after), bytesMoved(before));
    expectEquivalent(before, after, tiling().exactness(), 23);
  }
}

/// Median of three runs of the compiled program, in milliseconds.
double jitMillis(const ir::Program &p, const interp::TensorMap &in) {
  codegen::CompileOptions o;
  o.keepLLVMIR = false;
  codegen::Executable exe = codegen::compile(p, o);
  exe.run(in);
  std::vector<double> ms;
  for (int r = 0; r < 3; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    exe.run(in);
    ms.push_back(std::chrono::duration<double, std::milli>(
                     std::chrono::steady_clock::now() - t0)
                     .count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[1];
}

TEST(MapTiling, MatmulJitTime) {
  // Reported, not asserted: no performance target.
  ir::Program before = matmulMap(256, 256, 256).p;
  interp::TensorMap in = runtime::randomInputs(before, 11, {});
  std::cout << "[ map-tiling ] 256^3 matmul map, JIT ms: untiled "
            << jitMillis(before, in);
  for (std::int64_t t : {16, 32, 64}) {
    ir::Program after = tiled(before, "mm", {{"tile", t}});
    std::cout << ", tile " << t << " " << jitMillis(after, in);
  }
  std::cout << "\n";
  ir::Program t32 = tiled(before, "mm", {{"tile", std::int64_t{32}}});
  workspace::VerifyReport v =
      workspace::verifyPrograms(before, t32, tiling().exactness(), {.seed = 2});
  EXPECT_TRUE(v.ok) << v.str();
}

} // namespace
} // namespace weir::transforms_testing
