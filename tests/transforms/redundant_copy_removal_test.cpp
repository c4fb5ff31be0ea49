// redundant-copy-removal: golden before/after text (Concat, Pad, Split and
// a direct copy edge), negative tests matching their reasons, equivalence
// on the interpreter and the CPU JIT, and the bundled models after
// expand-all and after the auto recipe.

#include "ir/memory.h"
#include "transforms/golden.h"
#include "transforms/graph_builder.h"
#include "transforms/program_checks.h"
#include "transforms/registry.h"
#include "workspace/auto_recipe.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>

namespace weir::transforms_testing {
namespace {

using ::testing::HasSubstr;

const transforms::Transformation &rcr() {
  return *transforms::requireTransformation("redundant-copy-removal");
}

/// Copy maps (`y = x` tasklets) plus access-to-access edges that move data.
int copies(const ir::Program &p) {
  int n = 0;
  for (const ir::State &s : p.states) {
    std::map<ir::NodeId, const ir::Node *> byId;
    for (const ir::Node &node : s.nodes) {
      byId[node.id] = &node;
      if (node.kind == ir::NodeKind::Tasklet && node.inputs.size() == 1 &&
          node.outputs.size() == 1 &&
          node.tasklet().source.starts_with(node.outputs[0].name + " = " +
                                            node.inputs[0].name + "\n"))
        ++n;
    }
    for (const ir::Edge &e : s.edges)
      n += !e.memlet.empty() && byId[e.src]->kind == ir::NodeKind::Access &&
           byId[e.dst]->kind == ir::NodeKind::Access;
  }
  return n;
}

/// Applies to a fixed point and checks validity, the removed containers,
/// bytes moved and equivalence; returns the steps.
int applyAndCheck(const ir::Program &before, ir::Program &after) {
  after = before;
  int n = toFixedPoint(after, rcr());
  expectValid(after);
  EXPECT_EQ(after.containers.size(), before.containers.size() - n);
  EXPECT_EQ(copies(after), copies(before) - n);
  if (n > 0) {
    EXPECT_LT(bytesMoved(after), bytesMoved(before));
    expectEquivalent(before, after, rcr().exactness());
  }
  return n;
}

TEST(RedundantCopyRemoval, ConcatProducersWriteTheirSlices) {
  GraphBuilder g("concat");
  g.input("x", {2, 3}).input("z", {2, 4});
  g.transient("a", {2, 3}).transient("b", {2, 4}).output("y", {2, 7});
  g.op("Neg", "neg", {{"X", "x"}}, {{"Y", "a"}});
  g.op("Exp", "exp", {{"input", "z"}}, {{"output", "b"}});
  g.op("Concat", "concat", {{"inputs_0", "a"}, {"inputs_1", "b"}},
       {{"concat_result", "y"}}, {{"axis", std::int64_t(1)}});
  ir::Program before = expandAll(g.p), after;
  EXPECT_EQ(applyAndCheck(before, after), 2);
  EXPECT_EQ(after.findContainer("a"), nullptr);
  EXPECT_EQ(after.findContainer("b"), nullptr);
  expectGolden("redundant_copy_removal_concat", before, after);
}

TEST(RedundantCopyRemoval, PadProducerWritesTheInteriorAfterTheFill) {
  GraphBuilder g("pad");
  g.input("x", {1, 2, 3, 3}).transient("r", {1, 2, 3, 3});
  g.constant<std::int64_t>("pads", {8}, {0, 0, 1, 2, 0, 0, 1, 0}, DType::I64);
  g.output("y", {1, 2, 5, 5});
  g.op("Relu", "relu", {{"X", "x"}}, {{"Y", "r"}});
  g.op("Pad", "pad", {{"data", "r"}, {"pads", "pads"}}, {{"output", "y"}});
  ir::Program before = expandAll(g.p), after;
  EXPECT_EQ(applyAndCheck(before, after), 1);
  expectGolden("redundant_copy_removal_pad", before, after);
}

TEST(RedundantCopyRemoval, SplitReadersReadTheSource) {
  GraphBuilder g("split");
  g.input("x", {4, 6}).transient("s0", {1, 6}).transient("s1", {3, 6});
  g.output("y0", {1, 6}).output("y1", {3, 6});
  g.op("Split", "split", {{"input", "x"}},
       {{"outputs_0", "s0"}, {"outputs_1", "s1"}}, {{"axis", std::int64_t(0)}});
  g.op("Relu", "relu", {{"X", "s0"}}, {{"Y", "y0"}});
  g.op("Exp", "exp", {{"input", "s1"}}, {{"output", "y1"}});
  ir::Program before = expandAll(g.p), after;
  EXPECT_EQ(applyAndCheck(before, after), 2);
  expectGolden("redundant_copy_removal_split", before, after);
}

/// x -> neg -> t ==copy==> u -> exp -> y, the copy an access-to-access
/// edge over `copied`.
GraphBuilder directCopy(std::vector<ir::Range> copied) {
  GraphBuilder g("direct");
  g.input("x", {4, 6}).transient("t", {4, 6}).transient("u", {4, 6});
  g.output("y", {4, 6});
  ir::State &s = g.p.states.back();
  Maps m(g);
  ir::Expr i = ir::Expr::symbol("i"), j = ir::Expr::symbol("j");
  std::vector<ir::Range> r{{0, 4}, {0, 6}};
  m.add("neg", {"i", "j"}, r, {{"x", "x", {i, j}}}, "y = -x",
        {{"y", "t", {i, j}}});
  ir::NodeId t = m.access.at("t");
  ir::NodeId u = ir::addAccess(g.p, s, "u");
  ir::addEdge(g.p, s, t, "", u, "", {"t", ir::Subset{copied}, {}});
  m.access["u"] = u;
  m.add("exp", {"i", "j"}, r, {{"u", "u", {i, j}}}, "y = exp(u)",
        {{"y", "y", {i, j}}});
  return g;
}

TEST(RedundantCopyRemoval, DirectCopyEdge) {
  ir::Program before = directCopy({{0, 4}, {0, 6}}).p, after;
  EXPECT_EQ(applyAndCheck(before, after), 1);
  EXPECT_EQ(after.findContainer("t"), nullptr);
  expectGolden("redundant_copy_removal_direct", before, after);
}

TEST(RedundantCopyRemoval, RefusesArgumentsOnBothSides) {
  // Pad of an input into an output: neither side may go.
  GraphBuilder g("args");
  g.input("x", {2, 3}).output("y", {3, 3});
  g.constant<std::int64_t>("pads", {4}, {1, 0, 0, 0}, DType::I64);
  g.op("Pad", "pad", {{"data", "x"}, {"pads", "pads"}}, {{"output", "y"}});
  ir::Program p = expandAll(g.p);
  EXPECT_EQ(toFixedPoint(p, rcr()), 0);
  std::string why = refusals(p, rcr());
  EXPECT_THAT(why, HasSubstr("cannot remove the source 'x': 'x' is not a "
                             "plain transient"));
  EXPECT_THAT(why, HasSubstr("cannot remove the destination 'y': 'y' is not "
                             "a plain transient"));
}

TEST(RedundantCopyRemoval, RefusesASourceReadElsewhere) {
  GraphBuilder g("read_twice");
  g.input("x", {2, 3}).transient("a", {2, 3}).output("y", {2, 6});
  g.output("z", {2, 3});
  g.op("Neg", "neg", {{"X", "x"}}, {{"Y", "a"}});
  g.op("Concat", "concat", {{"inputs_0", "a"}, {"inputs_1", "x"}},
       {{"concat_result", "y"}}, {{"axis", std::int64_t(1)}});
  g.op("Exp", "exp", {{"input", "a"}}, {{"output", "z"}});
  ir::Program p = expandAll(g.p);
  EXPECT_EQ(toFixedPoint(p, rcr()), 0);
  EXPECT_THAT(refusals(p, rcr()),
              HasSubstr("'a' is read by map-entry 'exp.map'"));
}

TEST(RedundantCopyRemoval, RefusesPrimitivesAndLayouts) {
  // A gemm writes its output through ldc, not through the memlet.
  GraphBuilder g("gemm");
  g.input("x", {2, 3}).input("w", {3, 4}).transient("m", {2, 4});
  g.constant<std::int64_t>("pads", {4}, {0, 1, 0, 0}, DType::I64);
  g.output("y", {2, 5});
  g.op("MatMul", "mm", {{"A", "x"}, {"B", "w"}}, {{"Y", "m"}});
  g.op("Pad", "pad", {{"data", "m"}, {"pads", "pads"}}, {{"output", "y"}});
  ir::Program p = expandAll(g.p);
  EXPECT_EQ(toFixedPoint(p, rcr()), 0);
  EXPECT_THAT(refusals(p, rcr()),
              HasSubstr("'m' is accessed by primitive 'mm.gemm'"));

  ir::Program q = directCopy({{0, 4}, {0, 6}}).p;
  q.containers.at("t").strides = {ir::Expr(1), ir::Expr(4)};
  EXPECT_EQ(toFixedPoint(q, rcr()), 0);
  EXPECT_THAT(refusals(q, rcr()),
              HasSubstr("'t' is not row-major; the layouts differ"));
}

TEST(RedundantCopyRemoval, RefusesPartialCopies) {
  // Only rows 1:3 reach u; the rest of u stays zero.
  ir::Program p = directCopy({{1, 3}, {0, 6}}).p;
  EXPECT_EQ(toFixedPoint(p, rcr()), 0);
  std::string why = refusals(p, rcr());
  EXPECT_THAT(why, HasSubstr("the copy reads t[1:3, 0:6], not all of 't'"));
  EXPECT_THAT(why, HasSubstr("the copy writes only part of 'u'"));
}

TEST(RedundantCopyRemoval, RefusesASourceWrittenAfterTheCopy) {
  // A slice of a transient that a later map overwrites: the slice's reader
  // runs after the overwrite and must still see the old values.
  GraphBuilder g("overwritten");
  g.input("x", {2, 3}).transient("a", {2, 3}).transient("s", {1, 3});
  g.output("y", {1, 3}).output("z", {2, 3});
  ir::State &st = g.p.states.back();
  Maps m(g);
  ir::Expr i = ir::Expr::symbol("i"), j = ir::Expr::symbol("j");
  std::vector<ir::Range> r{{0, 2}, {0, 3}};
  m.add("neg", {"i", "j"}, r, {{"x", "x", {i, j}}}, "y = -x",
        {{"y", "a", {i, j}}});
  m.add("slice", {"i", "j"}, {{0, 1}, {0, 3}}, {{"x", "a", {i, j}}}, "y = x",
        {{"y", "s", {i, j}}});
  ir::NodeId s0 = m.access.at("s");
  // The second write of a gets its own access node, after the slice.
  m.access.erase("a");
  ir::MappedTaskletIds exp = m.add("exp", {"i", "j"}, r, {{"x", "x", {i, j}}},
                                   "y = exp(x)", {{"y", "a", {i, j}}});
  ir::addEdge(g.p, st, s0, "", exp.entry, "", ir::Memlet{});
  ir::MappedTaskletIds relu =
      m.add("relu", {"i", "j"}, {{0, 1}, {0, 3}}, {{"s", "s", {i, j}}},
            "y = max(s, 0.0)", {{"y", "y", {i, j}}});
  ir::addEdge(g.p, st, m.access.at("a"), "", relu.entry, "", ir::Memlet{});
  m.add("out", {"i", "j"}, r, {{"a", "a", {i, j}}}, "y = a",
        {{"y", "z", {i, j}}});
  ir::Program p = g.p;
  expectValid(p);
  EXPECT_EQ(toFixedPoint(p, rcr()), 0);
  std::string why = refusals(p, rcr());
  EXPECT_THAT(why, HasSubstr("'a' is written at %"));
  EXPECT_THAT(why, HasSubstr("after the copy or unordered with it; 's''s "
                             "readers would see the new values"));
  EXPECT_THAT(why, HasSubstr("the copy reads a[0, 0:3], not all of 'a'"));
}

TEST(RedundantCopyRemoval, RefusesADestinationReadBeforeTheCopy) {
  // y is filled, read by `peek`, then receives the copy of a: writing a's
  // values into y earlier would change what peek reads.
  GraphBuilder g("read_before");
  g.input("x", {2, 3}).transient("a", {2, 3}).output("y", {2, 3});
  g.output("z", {2, 3});
  ir::State &st = g.p.states.back();
  Maps m(g);
  ir::Expr i = ir::Expr::symbol("i"), j = ir::Expr::symbol("j");
  std::vector<ir::Range> r{{0, 2}, {0, 3}};
  m.add("neg", {"i", "j"}, r, {{"x", "x", {i, j}}}, "y = -x",
        {{"y", "a", {i, j}}});
  m.add("fill", {"i", "j"}, r, {}, "y = f32(1)", {{"y", "y", {i, j}}});
  ir::NodeId filled = m.access.at("y");
  m.add("peek", {"i", "j"}, r, {{"y", "y", {i, j}}}, "z = y * 2.0",
        {{"z", "z", {i, j}}});
  m.access.erase("y");
  ir::MappedTaskletIds copy = m.add("copy", {"i", "j"}, r, {{"x", "a", {i, j}}},
                                    "y = x", {{"y", "y", {i, j}}});
  ir::addEdge(g.p, st, filled, "", copy.entry, "", ir::Memlet{});
  ir::addEdge(g.p, st, m.access.at("z"), "", copy.entry, "", ir::Memlet{});
  ir::Program p = g.p;
  expectValid(p);
  EXPECT_EQ(toFixedPoint(p, rcr()), 0);
  EXPECT_THAT(refusals(p, rcr()),
              HasSubstr("cannot remove the source 'a': 'y' is read by "
                        "map-entry 'peek' (%"));
  EXPECT_THAT(refusals(p, rcr()),
              HasSubstr("before the copy; writing its slice earlier would "
                        "change what it reads"));
}

/// Every match on a bundled model, to a fixed point, after expand-all and
/// after the auto recipe: bit-identical outputs, bytes moved and memory.
TEST(RedundantCopyRemoval, BundledModels) {
  for (const char *name : {"cnn.onnx", "mlp.onnx", "transformer.onnx"}) {
    SCOPED_TRACE(name);
    ir::Program before = expandedModel(name), after;
    int applied = applyAndCheck(before, after);
    std::cout << "[ redundant-copy-removal ] " << name
              << " expanded: " << applied << " copies removed, bytes moved "
              << bytesMoved(before) << " -> " << bytesMoved(after)
              << ", transients " << ir::transientMemory(before).str() << " -> "
              << ir::transientMemory(after).str() << "\n";
    std::string why = refusals(after, rcr());
    if (!why.empty())
      std::cout << "  still refused:\n" << why;

    workspace::Workspace ws(
        onnx_import::importModel(std::string(WEIR_SOURCE_DIR) +
                                 "/resources/models/" + name)
            .program);
    workspace::applyAutoRecipe(ws, "cpu");
    ir::Program autoBefore = ws.program(), autoAfter;
    applied = applyAndCheck(autoBefore, autoAfter);
    std::cout << "[ redundant-copy-removal ] " << name
              << " after auto: " << applied << " copies removed, bytes moved "
              << bytesMoved(autoBefore) << " -> " << bytesMoved(autoAfter)
              << ", transients " << ir::transientMemory(autoBefore).str()
              << " -> " << ir::transientMemory(autoAfter).str() << "\n";
    why = refusals(autoAfter, rcr());
    if (!why.empty())
      std::cout << "  still refused:\n" << why;
  }
}

} // namespace
} // namespace weir::transforms_testing
