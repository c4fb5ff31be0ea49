// reduction-fusion: golden before/after text (softmax's scaled scores read
// by three passes; layer-norm's centred values whose producer keeps its
// reduction), one negative test per precondition (matching its reason),
// and equivalence on the interpreter and the CPU JIT, synthetic and on the
// bundled models.

#include "transforms/golden.h"
#include "transforms/graph_builder.h"
#include "transforms/program_checks.h"
#include "transforms/rewrite.h"
#include "workspace/auto_recipe.h"
#include "workspace/workspace.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>

namespace weir::transforms_testing {
namespace {

using ::testing::HasSubstr;
using transforms::Match;
using transforms::Params;

const transforms::Transformation &fusion() {
  return *transforms::requireTransformation("reduction-fusion");
}

std::vector<Match> fusionMatches(const ir::Program &p) {
  return transforms::findMatches(p, fusion());
}

/// The match whose array is `container`.
Match matchOf(const ir::Program &p, const std::string &container) {
  for (const Match &m : fusionMatches(p))
    if (transforms::stateNamed(p, m.state)
            .findNode(m.node("array"))
            ->access()
            .container == container)
      return m;
  ADD_FAILURE() << "no match writes '" << container << "'";
  return {};
}

std::string reason(const ir::Program &p, const Match &m,
                   const Params &params = {}) {
  transforms::CheckResult c = transforms::checkMatch(p, fusion(), m, params);
  EXPECT_FALSE(c.ok);
  return c.reason;
}

ir::Program applied(const ir::Program &p, const std::string &container,
                    const Params &params = {}) {
  transforms::ApplyResult r =
      transforms::applyChecked(p, fusion(), matchOf(p, container), params);
  expectValid(r.program);
  expectEquivalent(p, r.program, fusion().exactness());
  return r.program;
}

ir::Expr sym(const char *s) { return ir::Expr::symbol(s); }
const ir::Expr i0 = sym("i0"), i1 = sym("i1"), o0 = sym("o0");

/// Softmax over rows of scores scaled by 1/8, as the expansion writes it:
/// d = x * 0.125; m = max(d); s = sum(exp(d - m)); y = exp(d - m) / s.
GraphBuilder softmax() {
  GraphBuilder g("softmax");
  g.input("x", {4, 8})
      .transient("d", {4, 8})
      .transient("m", {4, 1})
      .transient("s", {4, 1})
      .output("y", {4, 8});
  Maps m(g);
  std::vector<ir::Range> r{{0, 4}, {0, 8}}, rows{{0, 4}, {0, 1}};
  m.add("scale", {"i0", "i1"}, r, {{"x", "x", {i0, i1}}}, "d = x * 0.125",
        {{"d", "d", {i0, i1}}});
  m.add("max_init", {"o0", "o1"}, rows, {}, "v = f32(-1.0 / 0.0)",
        {{"v", "m", {o0, sym("o1")}}});
  ir::NodeId mInit = m.access.at("m");
  m.access.erase("m");
  auto max = m.add("max", {"i0", "i1"}, r, {{"x", "d", {i0, i1}}}, "v = x",
                   {{"v", "m", {i0, 0}, ir::Wcr::Max}});
  ir::addEdge(g.p, g.p.states.back(), mInit, "", max.entry, "", ir::Memlet{});
  m.add("sum_init", {"o0", "o1"}, rows, {}, "v = f32(0)",
        {{"v", "s", {o0, sym("o1")}}});
  ir::NodeId sInit = m.access.at("s");
  m.access.erase("s");
  auto sum = m.add("sumexp", {"i0", "i1"}, r,
                   {{"x", "d", {i0, i1}}, {"m", "m", {i0, 0}}},
                   "v = exp(x - m)", {{"v", "s", {i0, 0}, ir::Wcr::Sum}});
  ir::addEdge(g.p, g.p.states.back(), sInit, "", sum.entry, "", ir::Memlet{});
  m.add("normalize", {"i0", "i1"}, r,
        {{"x", "d", {i0, i1}}, {"m", "m", {i0, 0}}, {"s", "s", {i0, 0}}},
        "y = exp(x - m) / s", {{"y", "y", {i0, i1}}});
  return g;
}

TEST(ReductionFusion, SoftmaxScoresAreRecomputedInEveryPass) {
  GraphBuilder g = softmax();
  Match m = matchOf(g.p, "d");
  transforms::ApplyResult r = transforms::applyChecked(g.p, fusion(), m);
  expectValid(r.program);
  expectGolden("reduction_fusion_softmax", g.p, r.program);
  expectEquivalent(g.p, r.program, fusion().exactness());
  EXPECT_TRUE(fusion().exactness().exact);
  EXPECT_EQ(fusion().tier(), transforms::Tier::Fusion);
  EXPECT_EQ(r.program.findContainer("d"), nullptr);
  // The scale map computed nothing else: it is gone, and so is d's node.
  EXPECT_EQ(r.idMap.count(m.node("producer_exit")), 0u);
  EXPECT_EQ(r.idMap.count(m.node("array")), 0u);
  EXPECT_EQ(countNodes(r.program, ir::NodeKind::MapEntry), 5);
  // x is read three times instead of once, d stored once and read three
  // times no more: five passes of 4x8 f32 become three.
  EXPECT_EQ(bytesMoved(g.p) - bytesMoved(r.program), 2 * 4 * 8 * 4);
  // Tasklet-fusion then joins each copy to the tasklet it feeds.
  ir::Program p = r.program;
  EXPECT_EQ(
      toFixedPoint(p, *transforms::requireTransformation("tasklet-fusion")), 3);
  expectEquivalent(g.p, p, fusion().exactness());
}

/// Layer-norm's variance pass after map-fusion: one map centres x (c,
/// kept for the normalisation) and accumulates c * c; the normalisation
/// reads c back.
GraphBuilder layerNorm(ir::MappedTaskletIds *centerIds = nullptr) {
  GraphBuilder g("layer_norm");
  g.input("x", {4, 8})
      .input("mean", {4, 1})
      .input("r", {4, 1})
      .input("w", {8})
      .transient("c", {4, 8})
      .transient("q", {4, 1})
      .output("y", {4, 8})
      .output("var", {4, 1});
  Maps m(g);
  std::vector<ir::Range> r{{0, 4}, {0, 8}}, rows{{0, 4}, {0, 1}};
  m.add("q_init", {"o0", "o1"}, rows, {}, "v = f32(0)",
        {{"v", "q", {o0, sym("o1")}}});
  ir::NodeId qInit = m.access.at("q");
  m.access.erase("q");
  auto center = m.add(
      "center", {"i0", "i1"}, r, {{"a", "x", {i0, i1}}, {"b", "mean", {i0, 0}}},
      "d = a - b; c = d; v = d * d",
      {{"c", "c", {i0, i1}}, {"v", "q", {i0, 0}, ir::Wcr::Sum}});
  ir::addEdge(g.p, g.p.states.back(), qInit, "", center.entry, "",
              ir::Memlet{});
  if (centerIds)
    *centerIds = center;
  m.add("variance", {"o0", "o1"}, rows, {{"q", "q", {o0, sym("o1")}}},
        "v = q / 8.0", {{"v", "var", {o0, sym("o1")}}});
  m.add("normalize", {"j", "k"}, r,
        {{"c", "c", {sym("j"), sym("k")}},
         {"r", "r", {sym("j"), 0}},
         {"w", "w", {sym("k")}}},
        "y = c * r * w", {{"y", "y", {sym("j"), sym("k")}}});
  return g;
}

TEST(ReductionFusion, ProducerKeepsItsReduction) {
  ir::MappedTaskletIds ids;
  GraphBuilder g = layerNorm(&ids);
  auto center = [&] { return ids; };
  Match m = matchOf(g.p, "c");
  transforms::ApplyResult r = transforms::applyChecked(g.p, fusion(), m);
  expectValid(r.program);
  expectGolden("reduction_fusion_layer_norm", g.p, r.program);
  expectEquivalent(g.p, r.program, fusion().exactness());
  EXPECT_EQ(r.program.findContainer("c"), nullptr);
  // The centring map stays (it accumulates q) without its output c.
  ir::NodeId exit = m.node("producer_exit");
  ASSERT_EQ(r.idMap.count(exit), 1u);
  ir::NodeId tasklet = center().tasklet;
  const ir::Node *kept = r.program.states[0].findNode(tasklet);
  ASSERT_NE(kept, nullptr);
  EXPECT_EQ(kept->outputs.size(), 1u);
  EXPECT_EQ(kept->tasklet().source, "d = a - b\nv = d * d\n");
  // c's store and load go; the normalisation reads x and mean instead.
  EXPECT_EQ(bytesMoved(g.p) - bytesMoved(r.program), 4 * 8 * 4 - 4 * 4);
}

TEST(ReductionFusion, BroadcastReadsOnlyWhenAsked) {
  // The consumer reads d[i0, 0] in every i1.
  GraphBuilder g("broadcast");
  g.input("x", {4, 1}).transient("d", {4, 1}).output("y", {4, 8});
  Maps m(g);
  m.add("scale", {"o0", "o1"}, {{0, 4}, {0, 1}}, {{"x", "x", {o0, sym("o1")}}},
        "d = x * 2.0", {{"d", "d", {o0, sym("o1")}}});
  m.add("spread", {"i0", "i1"}, {{0, 4}, {0, 8}}, {{"d", "d", {i0, 0}}},
        "y = d + 1.0", {{"y", "y", {i0, i1}}});
  EXPECT_THAT(reason(g.p, matchOf(g.p, "d")),
              HasSubstr("reads d[i0, 0], the same element in several "
                        "iterations; recomputing it there repeats the work"));
  ir::Program p = applied(g.p, "d", {{"broadcast", true}});
  EXPECT_EQ(p.findContainer("d"), nullptr);
}

// --- negative tests, one per precondition ----------------------------------

TEST(ReductionFusion, RefusesAnExpensiveValue) {
  GraphBuilder g = softmax();
  for (ir::Node &n : g.p.states[0].nodes.editable())
    if (n.kind == ir::NodeKind::Tasklet && n.label == "scale")
      n.payload = ir::TaskletData{
          "d = exp(x * 0.125) * 2.0 - x / 3.0 + 1.0",
          std::make_shared<const ir::tasklet::Code>(
              ir::tasklet::parse("d = exp(x * 0.125) * 2.0 - x / 3.0 + 1.0"))};
  EXPECT_THAT(reason(g.p, matchOf(g.p, "d")),
              HasSubstr("'d' costs 6 operations per element in tasklet "
                        "'scale'"));
  EXPECT_THAT(reason(g.p, matchOf(g.p, "d")), HasSubstr("max_ops is 4"));
  applied(g.p, "d", {{"max_ops", std::int64_t{6}}});
}

TEST(ReductionFusion, RefusesWhenBytesWouldNotDrop) {
  // d = a + b + c read by two maps: 3 + 1 + 2 passes become 3 * 2.
  GraphBuilder g("no_gain");
  g.input("a", {16}).input("b", {16}).input("c", {16});
  g.transient("d", {16}).output("y", {16}).output("z", {16});
  Maps m(g);
  std::vector<ir::Range> r{{0, 16}};
  m.add("sum3", {"i0"}, r,
        {{"a", "a", {i0}}, {"b", "b", {i0}}, {"c", "c", {i0}}}, "d = a + b + c",
        {{"d", "d", {i0}}});
  m.add("left", {"i0"}, r, {{"d", "d", {i0}}}, "y = d * 2.0",
        {{"y", "y", {i0}}});
  m.add("right", {"i0"}, r, {{"d", "d", {i0}}}, "z = d * 3.0",
        {{"z", "z", {i0}}});
  EXPECT_THAT(reason(g.p, matchOf(g.p, "d")),
              HasSubstr("recomputing 'd' moves 512 bytes instead of 512"));
  applied(g.p, "d", {{"require_gain", false}});
}

TEST(ReductionFusion, RefusesAReaderThatIsNotAMap) {
  GraphBuilder g("library_reader");
  g.input("x", {8}).transient("d", {8}).output("y", {8});
  Maps m(g);
  m.add("scale", {"i0"}, {{0, 8}}, {{"x", "x", {i0}}}, "d = x * 2.0",
        {{"d", "d", {i0}}});
  ir::NodeId d = m.access.at("d");
  ir::LibraryData relu;
  relu.op = "Relu";
  relu.opsetVersion = 13;
  ir::State &s = g.p.states[0];
  ir::NodeId lib = builders::addLibrary(
      g.p, s, "relu", relu, {{"X", ir::DType::F32}}, {{"Y", ir::DType::F32}});
  ir::NodeId y = ir::addAccess(g.p, s, "y");
  ir::addEdge(g.p, s, d, "", lib, "X",
              ir::Memlet{"d", ir::Subset::full(g.p.container("d").shape), {}});
  ir::addEdge(g.p, s, lib, "Y", y, "",
              ir::Memlet{"y", ir::Subset::full(g.p.container("y").shape), {}});
  EXPECT_THAT(reason(g.p, matchOf(g.p, "d")),
              HasSubstr("'d' is read by library 'relu'"));
}

TEST(ReductionFusion, RefusesAProgramOutput) {
  GraphBuilder g("output");
  g.input("x", {8}).output("d", {8}).output("y", {8});
  Maps m(g);
  m.add("scale", {"i0"}, {{0, 8}}, {{"x", "x", {i0}}}, "d = x * 2.0",
        {{"d", "d", {i0}}});
  m.add("use", {"i0"}, {{0, 8}}, {{"d", "d", {i0}}}, "y = d + 1.0",
        {{"y", "y", {i0}}});
  EXPECT_THAT(reason(g.p, matchOf(g.p, "d")),
              HasSubstr("'d' is not transient"));
}

TEST(ReductionFusion, RefusesAPartialWrite) {
  // scale writes d[0:6] of 8 elements: a consumer may read what it did not
  // write.
  GraphBuilder g("partial");
  g.input("x", {8}).transient("d", {8}).output("y", {8});
  Maps m(g);
  m.add("scale", {"i0"}, {{0, 6}}, {{"x", "x", {i0}}}, "d = x * 2.0",
        {{"d", "d", {i0}}});
  m.add("use", {"i0"}, {{0, 8}}, {{"d", "d", {i0}}}, "y = d + 1.0",
        {{"y", "y", {i0}}});
  EXPECT_THAT(reason(g.p, matchOf(g.p, "d")),
              HasSubstr("writes 'd' at d[i0] over i0 = 0:6, not the whole "
                        "dimension 0 (8)"));
  // An index that is not a parameter.
  GraphBuilder h("shifted");
  h.input("x", {8}).transient("d", {9}).output("y", {8});
  Maps mh(h);
  mh.add("scale", {"i0"}, {{0, 8}}, {{"x", "x", {i0}}}, "d = x * 2.0",
         {{"d", "d", {i0 + ir::Expr(1)}}});
  mh.add("use", {"i0"}, {{0, 8}}, {{"d", "d", {i0 + ir::Expr(1)}}},
         "y = d + 1.0", {{"y", "y", {i0}}});
  EXPECT_THAT(reason(h.p, matchOf(h.p, "d")),
              HasSubstr("only an index made of distinct map parameters"));
}

TEST(ReductionFusion, RefusesAnArrayWithSeveralAccessNodes) {
  // d is read again in a later state: that reader is not reached from the
  // access node the producer writes.
  GraphBuilder g("two_nodes");
  g.input("x", {8}).transient("d", {8}).output("y", {8}).output("z", {8});
  Maps m(g);
  std::vector<ir::Range> r{{0, 8}};
  m.add("scale", {"i0"}, r, {{"x", "x", {i0}}}, "d = x * 2.0",
        {{"d", "d", {i0}}});
  m.add("use", {"i0"}, r, {{"d", "d", {i0}}}, "y = d + 1.0",
        {{"y", "y", {i0}}});
  g.newState("later");
  Maps later(g);
  later.add("again", {"i0"}, r, {{"d", "d", {i0}}}, "z = d",
            {{"z", "z", {i0}}});
  EXPECT_THAT(reason(g.p, matchOf(g.p, "d")),
              HasSubstr("'d' has 2 access nodes"));
}

TEST(ReductionFusion, RefusesAWriteConflictResolution) {
  // The accumulator of a reduction is no value to recompute.
  GraphBuilder g("accumulated");
  g.input("x", {4, 8}).transient("s", {4, 1}).output("y", {4, 1});
  Maps m(g);
  m.add("acc", {"i0", "i1"}, {{0, 4}, {0, 8}}, {{"x", "x", {i0, i1}}}, "v = x",
        {{"v", "s", {i0, 0}, ir::Wcr::Sum}});
  m.add("use", {"o0", "o1"}, {{0, 4}, {0, 1}}, {{"s", "s", {o0, sym("o1")}}},
        "y = s", {{"y", "y", {o0, sym("o1")}}});
  EXPECT_THAT(reason(g.p, matchOf(g.p, "s")),
              HasSubstr("does not write 's' plainly"));
}

TEST(ReductionFusion, AnInputMayBeOverwrittenAfterEveryConsumer) {
  // u is read by scale and overwritten once `use` has run: recomputed in
  // `use`, d still sees the old u.
  GraphBuilder g("overwritten_later");
  g.input("x", {8}).transient("u", {8}).transient("d", {8});
  g.output("y", {8}).output("z", {8});
  Maps m(g);
  std::vector<ir::Range> r{{0, 8}};
  m.add("init", {"i0"}, r, {{"x", "x", {i0}}}, "u = x", {{"u", "u", {i0}}});
  m.add("scale", {"i0"}, r, {{"u", "u", {i0}}}, "d = u * 2.0",
        {{"d", "d", {i0}}});
  m.add("use", {"i0"}, r, {{"d", "d", {i0}}}, "y = d + 1.0",
        {{"y", "y", {i0}}});
  m.access.erase("u");
  m.add("again", {"i0"}, r, {{"y", "y", {i0}}}, "u = y * y",
        {{"u", "u", {i0}}});
  m.add("last", {"i0"}, r, {{"u", "u", {i0}}}, "z = u", {{"z", "z", {i0}}});
  applied(g.p, "d");
}

TEST(ReductionFusion, RefusesAnInputWrittenBeforeAConsumerReadsIt) {
  // scale also writes e; `clobber` overwrites u from e, unordered with
  // `use`, which would read u recomputing d.
  GraphBuilder g("war");
  g.input("x", {8}).transient("u", {8}).transient("d", {8});
  g.transient("e", {8}).output("y", {8}).output("z", {8});
  Maps m(g);
  std::vector<ir::Range> r{{0, 8}};
  m.add("init", {"i0"}, r, {{"x", "x", {i0}}}, "u = x", {{"u", "u", {i0}}});
  m.add("scale", {"i0"}, r, {{"u", "u", {i0}}}, "d = u * 2.0; e = u",
        {{"d", "d", {i0}}, {"e", "e", {i0}}});
  m.add("use", {"i0"}, r, {{"d", "d", {i0}}}, "y = d + 1.0",
        {{"y", "y", {i0}}});
  m.access.erase("u");
  m.add("clobber", {"i0"}, r, {{"e", "e", {i0}}}, "u = e * e",
        {{"u", "u", {i0}}});
  m.add("last", {"i0"}, r, {{"u", "u", {i0}}}, "z = u", {{"z", "z", {i0}}});
  std::string why = reason(g.p, matchOf(g.p, "d"));
  EXPECT_THAT(why, HasSubstr("'u' is written at access node"));
  EXPECT_THAT(why, HasSubstr("but not after map 'use'"));

  // The consumer writes u itself.
  GraphBuilder h("in_place");
  h.input("x", {8}).transient("u", {8}).transient("d", {8});
  h.output("y", {8}).output("z", {8});
  Maps mh(h);
  mh.add("init", {"i0"}, r, {{"x", "x", {i0}}}, "u = x", {{"u", "u", {i0}}});
  mh.add("scale", {"i0"}, r, {{"u", "u", {i0}}}, "d = u * 2.0",
         {{"d", "d", {i0}}});
  mh.access.erase("u");
  mh.add("use", {"i0"}, r, {{"d", "d", {i0}}}, "y = d + 1.0; u = d",
         {{"y", "y", {i0}}, {"u", "u", {i0}}});
  mh.add("last", {"i0"}, r, {{"u", "u", {i0}}}, "z = u", {{"z", "z", {i0}}});
  EXPECT_THAT(reason(h.p, matchOf(h.p, "d")),
              HasSubstr("'u' is written by map 'use'"));
}

TEST(ReductionFusion, RefusesAValueHandedOverInsideTheProducer) {
  // After map-fusion without tasklet-fusion, the producing tasklet takes
  // its input from another tasklet, which the consumer would not have.
  GraphBuilder g("handed");
  g.input("x", {8}).transient("t", {8}).transient("d", {8});
  g.output("y", {8});
  Maps m(g);
  std::vector<ir::Range> r{{0, 8}};
  m.add("neg", {"i0"}, r, {{"x", "x", {i0}}}, "t = -x", {{"t", "t", {i0}}});
  m.add("scale", {"i0"}, r, {{"t", "t", {i0}}}, "d = t * 2.0",
        {{"d", "d", {i0}}});
  m.add("use", {"i0"}, r, {{"d", "d", {i0}}}, "y = d + 1.0",
        {{"y", "y", {i0}}});
  ir::Program p = g.p;
  const transforms::Transformation &mf =
      *transforms::requireTransformation("map-fusion");
  for (const Match &mm : transforms::findMatches(p, mf))
    if (transforms::stateNamed(p, mm.state)
            .findNode(mm.node("array"))
            ->access()
            .container == "t") {
      p = transforms::applyChecked(p, mf, mm).program;
      break;
    }
  ASSERT_EQ(p.findContainer("t"), nullptr);
  EXPECT_THAT(reason(p, matchOf(p, "d")),
              HasSubstr("takes 't' from tasklet 'neg'"));
}

// --- the bundled models ----------------------------------------------------

TEST(ReductionFusion, BundledModelsAfterMapFusion) {
  for (const char *name : {"cnn.onnx", "mlp.onnx", "transformer.onnx"}) {
    SCOPED_TRACE(name);
    ir::Program expanded = expandedModel(name);
    ir::Program before = expanded;
    toFixedPoint(before, *transforms::requireTransformation("map-fusion"));
    ir::Program after = before;
    int fused = toFixedPoint(after, fusion());
    expectValid(after);
    std::int64_t b0 = bytesMoved(before), b1 = bytesMoved(after);
    std::cout << "[ reduction-fusion ] " << name << ": " << fused
              << " recomputed, bytes moved (N = 1) " << b0 << " -> " << b1
              << "\n";
    EXPECT_LE(b1, b0);
    EXPECT_EQ(fused > 0, b1 < b0);
    if (std::string(name) == "transformer.onnx") {
      EXPECT_GT(fused, 0);
    }
    expectEquivalent(expanded, after, fusion().exactness(), 11);
  }
}

TEST(ReductionFusion, BertEncoderLayerInTheAutoRecipe) {
  // The bench's BERT layer (build/bench/models, made by the bench script):
  // the auto recipe recomputes both layer norms' centred values in their
  // normalisation, and the result still matches the imported layer.
  std::filesystem::path path =
      std::filesystem::path(WEIR_SOURCE_DIR) / "build/bench/models/bert.onnx";
  if (!std::filesystem::exists(path))
    GTEST_SKIP() << path << " is not there (the bench script makes it)";
  workspace::Workspace ws(onnx_import::importModel(path).program);
  workspace::applyAutoRecipe(ws, "cpu");
  int fused = 0;
  for (const workspace::Version &v : ws.versions())
    fused += v.step && v.step->transformation == "reduction-fusion";
  std::cout << "[ reduction-fusion ] bert.onnx in auto: " << fused
            << " recomputed\n";
  EXPECT_GE(fused, 2);
  workspace::VerifyReport v = ws.verify();
  EXPECT_TRUE(v.ok) << v.str();
}

} // namespace
} // namespace weir::transforms_testing
