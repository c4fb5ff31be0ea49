// local-storage: golden before/after text on nests map-tiling makes,
// negative tests matching their reasons, equivalence on the interpreter and
// the CPU JIT (odd sizes: the remainder tiles run), the bundled models, and
// the bytes moved and JIT time it leads to.

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
const transforms::Transformation &storage() {
  return *transforms::requireTransformation("local-storage");
}

Expr sym(const char *name) { return Expr::symbol(name); }

const ir::Node &node(const ir::Program &p, const Match &m, const char *role) {
  return *transforms::stateNamed(p, m.state).findNode(m.node(role));
}

/// `p` with its map labelled `label` tiled.
ir::Program tiled(const ir::Program &p, const std::string &label,
                  const Params &params) {
  for (const Match &m : transforms::findMatches(p, tiling()))
    if (node(p, m, "map").label == label)
      return transforms::applyChecked(p, tiling(), m, params).program;
  ADD_FAILURE() << "no map '" << label << "'";
  return p;
}

/// The local-storage match whose inner map is labelled `label`.
Match nestMatch(const ir::Program &p, const std::string &label) {
  for (const Match &m : transforms::findMatches(p, storage()))
    if (node(p, m, "inner").label == label)
      return m;
  ADD_FAILURE() << "no tiled nest around '" << label << "'";
  return {};
}

ir::Program staged(const ir::Program &p, const std::string &label,
                   const Params &params) {
  ir::Program out =
      transforms::applyChecked(p, storage(), nestMatch(p, label), params)
          .program;
  expectValid(out);
  return out;
}

std::string refusal(const ir::Program &p, const std::string &label,
                    const Params &params) {
  transforms::CheckResult c =
      transforms::checkMatch(p, storage(), nestMatch(p, label), params);
  EXPECT_FALSE(c.ok);
  EXPECT_FALSE(c.nodes.empty());
  return c.reason;
}

Params in(const char *array) {
  return {{"array", std::string(array)}, {"direction", std::string("in")}};
}
Params out(const char *array) {
  return {{"array", std::string(array)}, {"direction", std::string("out")}};
}

const ir::Container *localOf(const ir::Program &p, const std::string &array) {
  return p.findContainer(array + "_local");
}

/// y[i, j] = 2·x[i, j] + x[i, j + 1] over 37x53, tiled by 16.
ir::Program tiledStencil() {
  GraphBuilder g("stencil");
  g.input("x", {37, 54}).output("y", {37, 53});
  Maps m(g);
  Expr i = sym("i"), j = sym("j");
  m.add("st", {"i", "j"}, {{0, 37}, {0, 53}},
        {{"a", "x", {i, j}}, {"b", "x", {i, j + 1}}}, "y = a * 2.0 + b",
        {{"y", "y", {i, j}}});
  return tiled(g.p, "st", {{"tile", std::int64_t{16}}});
}

ir::Program matmulMap(std::int64_t m, std::int64_t n, std::int64_t k) {
  GraphBuilder g("matmul");
  g.input("A", {m, k}).input("B", {k, n}).output("C", {m, n});
  Maps maps(g);
  Expr i = sym("i"), j = sym("j"), kk = sym("k");
  maps.add("mm", {"i", "j", "k"}, {{0, m}, {0, n}, {0, k}},
           {{"a", "A", {i, kk}}, {"b", "B", {kk, j}}}, "c = a * b",
           {{"c", "C", {i, j}, ir::Wcr::Sum}});
  return g.p;
}

TEST(LocalStorage, StencilInGolden) {
  ir::Program before = tiledStencil();
  ir::Program after = staged(before, "st", in("x"));
  expectGolden("local_storage_stencil_in", before, after);
  // One tile reads 16 rows and 16 + 1 columns (the neighbour).
  ASSERT_NE(localOf(after, "x"), nullptr);
  EXPECT_EQ(localOf(after, "x")->shape, (std::vector<Expr>{16, 17}));
  EXPECT_EQ(localOf(after, "x")->storage, ir::Storage::Host);
  std::cout << "[ local-storage ] stencil 37x53 tile 16, x staged: bytes "
            << "moved " << bytesMoved(before) << " -> " << bytesMoved(after)
            << "\n";
  expectEquivalent(before, after, storage().exactness());
}

TEST(LocalStorage, StencilOutGolden) {
  ir::Program before = tiledStencil();
  ir::Program after = staged(before, "st", out("y"));
  expectGolden("local_storage_stencil_out", before, after);
  EXPECT_EQ(localOf(after, "y")->shape, (std::vector<Expr>{16, 16}));
  expectEquivalent(before, after, storage().exactness());
  // Both directions on one nest.
  ir::Program both = staged(after, "st", in("x"));
  expectEquivalent(before, both, storage().exactness(), 9);
}

TEST(LocalStorage, DefaultArrayIsTheFirstThatQualifies) {
  ir::Program t =
      tiled(matmulMap(37, 53, 29), "mm", {{"tile", std::int64_t{16}}});
  ir::Program a = staged(t, "mm", {});
  EXPECT_NE(localOf(a, "A"), nullptr);
  EXPECT_EQ(localOf(a, "B"), nullptr);
  ir::Program b = staged(a, "mm", {});
  EXPECT_NE(localOf(b, "B"), nullptr);
  // The load maps sit in the outer map too, but only copy.
  EXPECT_THAT(refusal(b, "load_A", {}), HasSubstr("only copies"));
  // C is written with a WCR; nothing else moves out of the nest.
  EXPECT_THAT(refusal(b, "mm", {{"direction", std::string("out")}}),
              HasSubstr("the buffer would not hold 'C''s old values"));
  expectEquivalent(t, b, storage().exactness());
}

TEST(LocalStorage, SteppedAndSymbolicTiles) {
  GraphBuilder g("stepped");
  g.input("x", {37, 53}).output("y", {37, 53});
  Maps m(g);
  Expr i = sym("i"), j = sym("j");
  m.add("sp", {"i", "j"}, {{1, 37, 3}, {0, 53}}, {{"a", "x", {i, j}}},
        "y = a + 1.0", {{"y", "y", {i, j}}});
  ir::Program t = tiled(g.p, "sp", {{"tiles", transforms::IntList{4, 16}}});
  ir::Program a = staged(t, "sp", in("x"));
  // Four rows three apart span ten rows of x.
  EXPECT_EQ(localOf(a, "x")->shape, (std::vector<Expr>{10, 16}));
  expectEquivalent(g.p, a, storage().exactness());
  // A stepped output does not cover its box.
  EXPECT_THAT(refusal(t, "sp", out("y")),
              HasSubstr("do not cover their box exactly"));

  GraphBuilder h("symbolic");
  h.p.symbols.push_back("N");
  h.p.addContainer(builders::argument("x", DType::F32, {sym("N"), Expr(7)}));
  h.p.addContainer(builders::argument("y", DType::F32, {sym("N"), Expr(7)}));
  h.p.inputs = {"x"};
  h.p.outputs = {"y"};
  Maps n(h);
  n.add("sym", {"i", "j"}, {{0, sym("N")}, {0, 7}}, {{"a", "x", {i, j}}},
        "y = exp(a)", {{"y", "y", {i, j}}});
  ir::Program ts = tiled(h.p, "sym", {{"tile", std::int64_t{4}}});
  ir::Program s = staged(staged(ts, "sym", in("x")), "sym", out("y"));
  expectGolden("local_storage_symbolic", ts, s);
  EXPECT_EQ(localOf(s, "x")->shape, (std::vector<Expr>{4, 4}));
  for (std::int64_t v : {1, 4, 11}) {
    workspace::VerifyReport r = workspace::verifyPrograms(
        h.p, s, storage().exactness(), {.seed = 4, .dims = {{"N", v}}});
    EXPECT_TRUE(r.ok) << "N = " << v << ": " << r.str();
  }
  expectEquivalent(h.p, s, storage().exactness());

  // Untiled symbolic columns: the tile has no constant bound in j.
  GraphBuilder w("wide");
  w.p.symbols.push_back("N");
  w.p.addContainer(builders::argument("x", DType::F32, {Expr(9), sym("N")}));
  w.p.addContainer(builders::argument("y", DType::F32, {Expr(9), sym("N")}));
  w.p.inputs = {"x"};
  w.p.outputs = {"y"};
  Maps q(w);
  q.add("wide", {"i", "j"}, {{0, 9}, {0, sym("N")}}, {{"a", "x", {i, j}}},
        "y = a", {{"y", "y", {i, j}}});
  ir::Program wt = tiled(w.p, "wide", {{"tiles", transforms::IntList{4, 0}}});
  EXPECT_THAT(refusal(wt, "wide", in("x")),
              HasSubstr("the tile of 'x' is not a box the buffer can hold: "
                        "the tile's extent in j = 0:N has no constant bound"));
}

TEST(LocalStorage, MatmulStagesBothOperandsButNotTheSum) {
  ir::Program before =
      tiled(matmulMap(37, 53, 29), "mm", {{"tile", std::int64_t{16}}});
  ir::Program after = staged(staged(before, "mm", in("A")), "mm", in("B"));
  expectGolden("local_storage_matmul", before, after);
  EXPECT_EQ(localOf(after, "A")->shape, (std::vector<Expr>{16, 16}));
  expectEquivalent(matmulMap(37, 53, 29), after, storage().exactness(), 5);
  EXPECT_THAT(refusal(before, "mm", out("C")),
              HasSubstr("'C' is written with WCR sum by tasklet 'mm' (%"));
  EXPECT_THAT(refusal(before, "mm", out("C")),
              HasSubstr("the buffer would not hold 'C''s old values"));
}

TEST(LocalStorage, RefusesReadsOutsideAnAffineBox) {
  GraphBuilder g("odd_reads");
  g.input("x", {40, 40}).output("y", {40, 40}).output("z", {40, 40});
  g.output("u", {40, 40});
  Maps m(g);
  Expr i = sym("i"), j = sym("j");
  m.add("half", {"i", "j"}, {{0, 40}, {0, 40}},
        {{"a", "x", {ir::floorDiv(i, 2), j}}}, "y = a", {{"y", "y", {i, j}}});
  m.add("flip", {"i", "j"}, {{0, 40}, {0, 40}}, {{"a", "x", {39 - i, j}}},
        "z = a", {{"z", "z", {i, j}}});
  m.add("tr", {"i", "j"}, {{0, 40}, {0, 40}},
        {{"a", "x", {i, j}}, {"b", "x", {j, i}}}, "u = a + b",
        {{"u", "u", {i, j}}});
  ir::Program p = g.p;
  for (const char *label : {"half", "flip", "tr"})
    p = tiled(p, label, {{"tile", std::int64_t{8}}});
  EXPECT_THAT(refusal(p, "half", in("x")),
              HasSubstr("x[floordiv(i, 2), j] is not affine in the inner "
                        "parameters"));
  EXPECT_THAT(refusal(p, "flip", in("x")), HasSubstr("decreases with i"));
  EXPECT_THAT(refusal(p, "tr", in("x")),
              HasSubstr("are not a constant offset apart"));
  EXPECT_THAT(refusal(p, "tr", in("nope")),
              HasSubstr("reads no 'nope' through the outer map 'tr_tiles'"));
  // Without a name, every candidate's reason is given.
  EXPECT_THAT(refusal(p, "tr", {}), HasSubstr("the tile of 'x'"));
}

TEST(LocalStorage, RefusesArraysTheNestReadsAndWrites) {
  // t is scaled in place: reading a staged copy of it would be fine here,
  // but the nest writes it, so a copy could go stale; storing a buffer of
  // it would hide the reads.
  GraphBuilder g("in_place");
  g.input("x", {20, 30}).transient("t", {20, 30}).output("y", {20, 30});
  Maps m(g);
  Expr i = sym("i"), j = sym("j");
  m.add("fill", {"i", "j"}, {{0, 20}, {0, 30}}, {{"a", "x", {i, j}}}, "t = a",
        {{"t", "t", {i, j}}});
  m.add("scale", {"i", "j"}, {{0, 20}, {0, 30}}, {{"a", "t", {i, j}}},
        "t = a * 3.0", {{"t", "t", {i, j}}});
  m.add("out", {"i", "j"}, {{0, 20}, {0, 30}}, {{"a", "t", {i, j}}}, "y = a",
        {{"y", "y", {i, j}}});
  ir::Program p = tiled(g.p, "scale", {{"tile", std::int64_t{8}}});
  EXPECT_THAT(refusal(p, "scale", in("t")),
              HasSubstr("'t' is written inside the nest of map 'scale_tiles'"));
  EXPECT_THAT(refusal(p, "scale", out("t")),
              HasSubstr("'t' is read inside the nest of map 'scale_tiles'"));
  EXPECT_THAT(refusal(p, "scale", out("y")),
              HasSubstr("writes no 'y' through the outer map"));
}

/// Applies local-storage in `direction` wherever it passes, to a fixed
/// point; returns the number of buffers staged.
int stageAll(ir::Program &p, const char *direction) {
  int stages = 0;
  Params sp{{"direction", std::string(direction)}};
  for (bool progress = true; progress;) {
    progress = false;
    for (const Match &m : transforms::findMatches(p, storage()))
      if (transforms::checkMatch(p, storage(), m, sp)) {
        p = transforms::applyChecked(p, storage(), m, sp).program;
        ++stages;
        progress = true;
        break;
      }
  }
  return stages;
}

TEST(LocalStorage, BundledModels) {
  for (const char *name : {"cnn.onnx", "mlp.onnx", "transformer.onnx"}) {
    SCOPED_TRACE(name);
    ir::Program before = expandedModel(name);
    ir::Program after = before;
    int tiles = 0;
    Params tp{{"tile", std::int64_t{8}}};
    for (const Match &m : transforms::findMatches(after, tiling()))
      if (transforms::checkMatch(after, tiling(), m, tp)) {
        after = transforms::applyChecked(after, tiling(), m, tp).program;
        ++tiles;
      }
    std::int64_t tiledBytes = bytesMoved(after);
    int in = stageAll(after, "in");
    std::int64_t inBytes = bytesMoved(after);
    int out = stageAll(after, "out");
    expectValid(after);
    std::cout << "[ local-storage ] " << name << ": " << tiles
              << " maps tiled by 8, then " << in << " buffers staged in and "
              << out << " out; bytes moved " << tiledBytes << " (tiled) -> "
              << inBytes << " (in) -> " << bytesMoved(after) << " (out)\n";
    EXPECT_GT(in, 0);
    EXPECT_GT(out, 0);
    expectEquivalent(before, after, storage().exactness(), 29);
  }
}

double jitMillis(const ir::Program &p, const interp::TensorMap &inputs) {
  codegen::CompileOptions o;
  o.keepLLVMIR = false;
  codegen::Executable exe = codegen::compile(p, o);
  exe.run(inputs);
  std::vector<double> ms;
  for (int r = 0; r < 3; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    exe.run(inputs);
    ms.push_back(std::chrono::duration<double, std::milli>(
                     std::chrono::steady_clock::now() - t0)
                     .count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[1];
}

TEST(LocalStorage, MatmulBytesAndJitTime) {
  // Reported, not asserted: no performance target.
  ir::Program plain = matmulMap(256, 256, 256);
  ir::Program t = tiled(plain, "mm", {{"tile", std::int64_t{32}}});
  ir::Program s = staged(staged(t, "mm", in("A")), "mm", in("B"));
  interp::TensorMap inputs = runtime::randomInputs(plain, 3, {});
  std::cout << "[ local-storage ] 256^3 matmul map, tile 32: bytes moved "
            << bytesMoved(plain) << " (untiled) " << bytesMoved(t)
            << " (tiled) " << bytesMoved(s) << " (A, B staged); JIT ms "
            << jitMillis(plain, inputs) << " / " << jitMillis(t, inputs)
            << " / " << jitMillis(s, inputs) << "\n";
  EXPECT_GT(bytesMoved(s), bytesMoved(t));
  workspace::VerifyReport v =
      workspace::verifyPrograms(plain, s, storage().exactness(), {.seed = 2});
  EXPECT_TRUE(v.ok) << v.str();
}

} // namespace
} // namespace weir::transforms_testing
