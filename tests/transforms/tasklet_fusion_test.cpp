// tasklet-fusion: golden before/after text on the hand-overs map-fusion
// leaves, a chain applied from one list of matches, a handed-over value kept
// as an output, renaming on clashes, one negative test per precondition
// (matching its reason), and equivalence on the interpreter and the CPU JIT,
// synthetic and on the bundled models.

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

#include <algorithm>
#include <cstring>
#include <iostream>

namespace weir::transforms_testing {
namespace {

using ::testing::HasSubstr;
using transforms::Match;

const transforms::Transformation &fusion() {
  return *transforms::requireTransformation("tasklet-fusion");
}

const transforms::Transformation &mapFusion() {
  return *transforms::requireTransformation("map-fusion");
}

std::vector<Match> fusionMatches(const ir::Program &p) {
  return transforms::findMatches(p, fusion());
}

const ir::Node &onlyTasklet(const ir::Program &p) {
  const ir::Node *found = nullptr;
  for (const ir::Node &n : p.states.at(0).nodes)
    if (n.kind == ir::NodeKind::Tasklet) {
      EXPECT_EQ(found, nullptr) << "more than one tasklet";
      found = &n;
    }
  EXPECT_NE(found, nullptr);
  return *found;
}

/// FLOPs and bytes moved do not change: the same operations run as often,
/// and a hand-over inside a scope moves no bytes.
void expectSameCosts(const ir::Program &before, const ir::Program &after) {
  ir::ProgramAnalysis a = ir::analyze(before), b = ir::analyze(after);
  EXPECT_EQ(a.flops, b.flops);
  EXPECT_EQ(a.bytesMoved, b.bytesMoved);
}

/// Bit-identical outputs before and after (program_checks.h).
void expectEquivalent(const ir::Program &before, const ir::Program &after,
                      std::uint64_t seed = 7) {
  transforms_testing::expectEquivalent(before, after, fusion().exactness(),
                                       seed);
}

std::string reason(const ir::Program &p, const Match &m,
                   const transforms::Params &params = {}) {
  transforms::CheckResult c = transforms::checkMatch(p, fusion(), m, params);
  EXPECT_FALSE(c.ok);
  return c.reason;
}

/// Applies `ms` in the given order, each to the program the previous one
/// produced, as a script holding a precomputed list does; with `forward`,
/// the matches still to come are carried through each step's id map.
ir::Program applyInOrder(ir::Program p, std::vector<Match> ms,
                         bool forward = true) {
  for (std::size_t k = 0; k < ms.size(); ++k) {
    transforms::CheckResult c = transforms::checkMatch(p, fusion(), ms[k]);
    EXPECT_TRUE(c.ok) << ms[k].str() << ": " << c.reason;
    if (!c.ok)
      break;
    transforms::ApplyResult r = transforms::applyChecked(p, fusion(), ms[k]);
    p = std::move(r.program);
    expectValid(p);
    for (std::size_t later = k + 1; forward && later < ms.size(); ++later)
      for (auto &[role, id] : ms[later].roles)
        if (r.idMap.count(id))
          id = r.idMap.at(id);
  }
  return p;
}

ir::Expr sym(const char *s) { return ir::Expr::symbol(s); }
const ir::Expr i0 = sym("i0"), i1 = sym("i1");

/// `g` after map-fusion to a fixed point: the maps' tasklets now hand their
/// values over directly.
ir::Program mapFused(const GraphBuilder &g) {
  ir::Program p = g.p;
  EXPECT_GT(toFixedPoint(p, mapFusion()), 0);
  expectValid(p);
  return p;
}

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
  m.add("scale", {"i0", "i1"}, r, {{"t", "t", {i0, i1}}, {"b", "b", {i1}}},
        "y = t * 2.0 + b", {{"y", "y", {i0, i1}}});
  return g;
}

TEST(TaskletFusion, TwoTaskletsGolden) {
  GraphBuilder g = twoMaps();
  ir::Program before = mapFused(g);
  std::vector<Match> ms = fusionMatches(before);
  ASSERT_EQ(ms.size(), 1u);
  transforms::ApplyResult r = transforms::applyChecked(before, fusion(), ms[0]);
  expectValid(r.program);
  expectGolden("tasklet_fusion_two_tasklets", before, r.program);
  EXPECT_TRUE(fusion().exactness().exact);
  EXPECT_EQ(fusion().tier(), transforms::Tier::Fusion);
  // The fused tasklet keeps the first's id; the second maps to it.
  ir::NodeId first = ms[0].node("first"), second = ms[0].node("second");
  EXPECT_EQ(r.idMap.at(first), first);
  EXPECT_EQ(r.idMap.at(second), first);
  const ir::Node &fused = onlyTasklet(r.program);
  EXPECT_EQ(fused.id, first);
  EXPECT_EQ(fused.label, "relu+scale");
  expectSameCosts(before, r.program);
  expectEquivalent(before, r.program);
  expectEquivalent(g.p, r.program, 3);
}

TEST(TaskletFusion, ThreeTaskletChainFromOneListOfMatches) {
  GraphBuilder g = threeMapChain();
  ir::Program before = mapFused(g);
  std::vector<Match> ms = fusionMatches(before);
  ASSERT_EQ(ms.size(), 2u);
  // In the listed order, a+b keeps a's id and the id map sends b there, so
  // b->c becomes (a+b)->c. Last link first, b+c keeps b's id and a->b
  // stays valid as listed, with no id map needed.
  for (bool reversed : {false, true}) {
    SCOPED_TRACE(reversed);
    std::vector<Match> order = ms;
    if (reversed)
      std::reverse(order.begin(), order.end());
    ir::Program after = applyInOrder(before, order, /*forward=*/!reversed);
    const ir::Node &fused = onlyTasklet(after);
    EXPECT_EQ(fused.id, ms[0].node("first"));
    EXPECT_EQ(fused.label, "a+b+c");
    // x is read once: b's read of it is the same edge as a's.
    ASSERT_EQ(fused.inputs.size(), 1u);
    EXPECT_EQ(fused.inputs[0].name, "x");
    EXPECT_EQ(fused.tasklet().source, "t = x * x\nu = t - x\ny = exp(u)\n");
    expectSameCosts(before, after);
    expectEquivalent(before, after);
    expectEquivalent(g.p, after, 5);
    if (!reversed)
      expectGolden("tasklet_fusion_three_tasklets", before, after);
  }
}

/// neg -> t -> sq -> y, and t -> half -> z: map-fusion of neg and sq keeps
/// t materialized, so neg's output goes both to sq and to the map exit.
ir::Program materialized() {
  GraphBuilder g("materialized");
  g.input("x", {8}).transient("t", {8}).output("y", {8}).output("z", {8});
  Maps m(g);
  std::vector<ir::Range> r{{0, 8}};
  m.add("neg", {"i0"}, r, {{"x", "x", {i0}}}, "t = -x", {{"t", "t", {i0}}});
  m.add("sq", {"i0"}, r, {{"t", "t", {i0}}}, "y = t * t", {{"y", "y", {i0}}});
  m.add("half", {"i0"}, r, {{"t", "t", {i0}}}, "z = t * 0.5",
        {{"z", "z", {i0}}});
  return transforms::applyChecked(g.p, mapFusion(),
                                  transforms::findMatches(g.p, mapFusion())[0])
      .program;
}

TEST(TaskletFusion, KeepsAValueAlsoReadElsewhere) {
  ir::Program before = materialized();
  std::vector<Match> ms = fusionMatches(before);
  ASSERT_EQ(ms.size(), 1u);
  transforms::ApplyResult r = transforms::applyChecked(before, fusion(), ms[0]);
  expectValid(r.program);
  expectGolden("tasklet_fusion_kept_output", before, r.program);
  const ir::Node &fused =
      *transforms::stateNamed(r.program, "main").findNode(ms[0].node("first"));
  ASSERT_EQ(fused.outputs.size(), 2u);
  EXPECT_EQ(fused.outputs[0].name, "t");
  EXPECT_EQ(fused.outputs[1].name, "y");
  EXPECT_EQ(fused.tasklet().source, "t_1 = -x\nt = t_1\ny = t_1 * t_1\n");
  expectSameCosts(before, r.program);
  expectEquivalent(before, r.program);
}

TEST(TaskletFusion, RenamesClashingNamesAndSharesEqualInputs) {
  // Both tasklets have a temporary u and read x, the second transposed (a
  // different element, so not shared) and b like the first (shared).
  GraphBuilder g("clash");
  g.input("x", {4, 4})
      .input("b", {4})
      .transient("t", {4, 4})
      .output("y", {4, 4});
  Maps m(g);
  std::vector<ir::Range> r{{0, 4}, {0, 4}};
  m.add("first", {"i0", "i1"}, r, {{"x", "x", {i0, i1}}, {"b", "b", {i1}}},
        "u = x + b; t = u * u", {{"t", "t", {i0, i1}}});
  m.add("second", {"i0", "i1"}, r,
        {{"t", "t", {i0, i1}}, {"x", "x", {i1, i0}}, {"c", "b", {i1}}},
        "u = t - x; y = u * 0.5 + c", {{"y", "y", {i0, i1}}});
  ir::Program before = mapFused(g);
  ir::Program after =
      transforms::applyChecked(before, fusion(), fusionMatches(before).at(0))
          .program;
  expectValid(after);
  const ir::Node &fused = onlyTasklet(after);
  ASSERT_EQ(fused.inputs.size(), 3u);
  EXPECT_EQ(fused.inputs[2].name, "x_1");
  EXPECT_EQ(fused.tasklet().source,
            "u = x + b\nt = u * u\nu_1 = t - x_1\ny = u_1 * 0.5 + b\n");
  expectSameCosts(before, after);
  expectEquivalent(before, after);
}

// --- hand-built pairs; negative tests, one per precondition ---------------

/// Hand-built tasklets: the connector types are spelled out.
ir::NodeId tasklet(GraphBuilder &g, const std::string &label,
                   std::vector<ir::Connector> in,
                   std::vector<ir::Connector> out, std::string_view code) {
  return ir::addTasklet(g.p, g.p.states.back(), label, std::move(in),
                        std::move(out), code);
}

void edge(GraphBuilder &g, ir::NodeId src, std::string srcConn, ir::NodeId dst,
          std::string dstConn, ir::Memlet memlet = {}) {
  ir::addEdge(g.p, g.p.states.back(), src, std::move(srcConn), dst,
              std::move(dstConn), std::move(memlet));
}

ir::Memlet at0(const std::string &container) {
  return {container, ir::Subset{{ir::Range::point(ir::Expr(0))}}, {}};
}

/// Top level: x[0] -> first -> (hand-over) -> second -> y[0], in `dtype`.
struct TopLevel {
  GraphBuilder g{"top_level"};
  ir::NodeId x = 0, first = 0, second = 0, y = 0;
  Match match() const {
    return {"main", {{"first", first}, {"second", second}}};
  }
};

TopLevel topLevel(ir::DType dtype, std::string_view codeA,
                  std::string_view codeB, ir::DType handed) {
  TopLevel t;
  t.g.input("x", {1}, dtype).output("y", {1}, dtype);
  t.x = ir::addAccess(t.g.p, t.g.p.states[0], "x");
  t.first = tasklet(t.g, "first", {{"x", dtype}}, {{"t", handed}}, codeA);
  t.second = tasklet(t.g, "second", {{"t", handed}}, {{"y", dtype}}, codeB);
  t.y = ir::addAccess(t.g.p, t.g.p.states[0], "y");
  edge(t.g, t.x, "", t.first, "x", at0("x"));
  edge(t.g, t.first, "t", t.second, "t");
  edge(t.g, t.second, "y", t.y, "", at0("y"));
  return t;
}

TEST(TaskletFusion, FusesAtTheTopLevelInEveryFloatType) {
  // f16 and bf16 round only when stored: a handed-over value is not
  // rounded, and neither is the temporary that replaces it.
  for (ir::DType dtype :
       {ir::DType::F64, ir::DType::F32, ir::DType::F16, ir::DType::BF16}) {
    SCOPED_TRACE(ir::dtypeName(dtype));
    TopLevel t = topLevel(dtype, "t = sqrt(x) * 1.1", "y = t / 3.0", dtype);
    expectValid(t.g.p);
    ir::Program after =
        transforms::applyChecked(t.g.p, fusion(), t.match()).program;
    expectValid(after);
    EXPECT_EQ(onlyTasklet(after).tasklet().source,
              "t = sqrt(x) * 1.1\ny = t / 3.0\n");
    expectSameCosts(t.g.p, after);
    expectEquivalent(t.g.p, after);
  }
}

TEST(TaskletFusion, RefusesTaskletsInDifferentScopes) {
  // first runs in a map; second at the top level (its access node to c is
  // reached first), fed by first directly.
  GraphBuilder g("scopes");
  g.input("x", {4}).input("c", {1}).transient("t", {4}).output("y", {1});
  Maps m(g);
  m.access["c"] = ir::addAccess(g.p, g.p.states[0], "c");
  ir::MappedTaskletIds a = m.add("first", {"i0"}, {{0, 4}}, {{"x", "x", {i0}}},
                                 "t = x + 1.0", {{"t", "t", {i0}}});
  ir::NodeId b =
      tasklet(g, "second", {{"t", ir::DType::F32}, {"c", ir::DType::F32}},
              {{"y", ir::DType::F32}}, "y = t * c");
  edge(g, m.access["c"], "", b, "c", at0("c"));
  edge(g, a.tasklet, "t", b, "t");
  edge(g, b, "y", ir::addAccess(g.p, g.p.states[0], "y"), "", at0("y"));
  std::vector<Match> ms = fusionMatches(g.p);
  ASSERT_EQ(ms.size(), 1u);
  EXPECT_THAT(reason(g.p, ms[0]),
              HasSubstr("tasklet 'first' (%" + std::to_string(a.tasklet) +
                        ") is in map 'first' (%" + std::to_string(a.entry) +
                        ") and tasklet 'second' (%" + std::to_string(b) +
                        ") at the top level; only tasklets in the same "
                        "scope fuse"));
}

TEST(TaskletFusion, RefusesAValueAlsoReadElsewhereWhenAskedTo) {
  ir::Program p = materialized();
  Match m = fusionMatches(p).at(0);
  const ir::State &s = p.states[0];
  ir::NodeId exit = 0;
  for (const ir::Edge &e : s.edges)
    if (e.src == m.node("first") && !e.memlet.empty())
      exit = e.dst;
  EXPECT_THAT(reason(p, m, {{"keep_outputs", false}}),
              HasSubstr("output 't' of tasklet 'neg' (%" +
                        std::to_string(m.node("first")) +
                        ") is also read by map-exit 'neg' (%" +
                        std::to_string(exit) + ") (keep_outputs is false)"));
  EXPECT_TRUE(transforms::checkMatch(p, fusion(), m).ok);
}

TEST(TaskletFusion, RefusesWriteConflictResolution) {
  // The handed-over value is also summed into s.
  GraphBuilder g("wcr");
  g.input("x", {4}).output("s", {1}).output("y", {4});
  Maps m(g);
  ir::MappedTaskletIds a =
      m.add("first", {"i0"}, {{0, 4}}, {{"x", "x", {i0}}}, "t = x * x",
            {{"t", "s", {ir::Expr(0)}, ir::Wcr::Sum}});
  ir::NodeId b = tasklet(g, "second", {{"t", ir::DType::F32}},
                         {{"y", ir::DType::F32}}, "y = t + 1.0");
  ir::Node &exit = *g.p.states[0].findNode(a.exit);
  exit.inputs.push_back({"IN_y", ir::DType::F32});
  exit.outputs.push_back({"OUT_y", ir::DType::F32});
  edge(g, a.tasklet, "t", b, "t");
  edge(g, b, "y", a.exit, "IN_y",
       {"y", ir::Subset{{ir::Range::point(i0)}}, {}});
  edge(g, a.exit, "OUT_y", ir::addAccess(g.p, g.p.states[0], "y"), "",
       {"y", ir::Subset{{ir::Range(0, 4)}}, {}});
  expectValid(g.p);
  Match match{"main", {{"first", a.tasklet}, {"second", b}}};
  EXPECT_THAT(reason(g.p, match),
              HasSubstr("tasklet 'first' (%" + std::to_string(a.tasklet) +
                        ") also writes 't' as s[0] (sum) into map-exit "
                        "'first' (%" +
                        std::to_string(a.exit) +
                        ") with a write-conflict resolution (sum)"));

  // A hand-over edge claiming a write-conflict resolution.
  TopLevel t = topLevel(ir::DType::F32, "t = x", "y = t", ir::DType::F32);
  for (ir::Edge &e : t.g.p.states[0].edges.editable())
    if (e.src == t.first)
      e.memlet.wcr = ir::Wcr::Max;
  EXPECT_THAT(reason(t.g.p, t.match()),
              HasSubstr("has a write-conflict resolution (max)"));
}

TEST(TaskletFusion, RefusesAPathThatWouldBecomeACycle) {
  // first hands t to middle and second; middle hands v to second.
  TopLevel t = topLevel(ir::DType::F32, "t = x + 1.0", "y = t", ir::DType::F32);
  GraphBuilder &g = t.g;
  ir::NodeId mid = tasklet(g, "middle", {{"t", ir::DType::F32}},
                           {{"v", ir::DType::F32}}, "v = t * 2.0");
  ir::Node &second = *g.p.states[0].findNode(t.second);
  second.inputs.push_back({"v", ir::DType::F32});
  auto code = std::make_shared<const ir::tasklet::Code>(
      ir::tasklet::parse("y = t + v"));
  second.payload = ir::TaskletData{ir::tasklet::print(*code), code};
  edge(g, t.first, "t", mid, "t");
  edge(g, mid, "v", t.second, "v");
  expectValid(g.p);
  EXPECT_THAT(reason(g.p, t.match()),
              HasSubstr("tasklet 'second' (%" + std::to_string(t.second) +
                        ") also depends on tasklet 'first' (%" +
                        std::to_string(t.first) +
                        ") through tasklet 'middle' (%" + std::to_string(mid) +
                        "); fused, the tasklet would depend on itself"));
  // Fusing first with middle (t kept, read by second too), then with
  // second, gives one tasklet.
  ir::Program p = g.p;
  EXPECT_EQ(toFixedPoint(p, fusion()), 2);
  expectValid(p);
  EXPECT_EQ(onlyTasklet(p).tasklet().source,
            "t_1 = x + 1.0\nt = t_1\nv = t_1 * 2.0\ny = t + v\n");
  expectSameCosts(g.p, p);
  expectEquivalent(g.p, p);
}

TEST(TaskletFusion, RefusesDisagreeingTypes) {
  // The connectors at both ends of the hand-over disagree.
  TopLevel t = topLevel(ir::DType::F32, "t = x", "y = t", ir::DType::F32);
  ir::Node &second = *t.g.p.states[0].findNode(t.second);
  second.inputs[0].dtype = ir::DType::F64;
  auto code = std::make_shared<const ir::tasklet::Code>(
      ir::tasklet::parse("y = f32(t)"));
  second.payload = ir::TaskletData{ir::tasklet::print(*code), code};
  EXPECT_THAT(reason(t.g.p, t.match()),
              HasSubstr("hands 't' over as f32 but tasklet 'second' (%" +
                        std::to_string(t.second) + ") takes it as 't': f64"));
  // A bare literal handed over as f64: as a temporary it would be an f32.
  TopLevel lit =
      topLevel(ir::DType::F64, "t = 0.1", "y = t * x", ir::DType::F64);
  ir::Node &s2 = *lit.g.p.states[0].findNode(lit.second);
  s2.inputs.push_back({"x", ir::DType::F64});
  edge(lit.g, lit.x, "", lit.second, "x", at0("x"));
  ir::Node &s1 = *lit.g.p.states[0].findNode(lit.first);
  s1.inputs.clear();
  lit.g.p.states[0].edges.eraseIf(
      [&](const ir::Edge &e) { return e.dst == lit.first; });
  expectValid(lit.g.p);
  EXPECT_THAT(reason(lit.g.p, lit.match()),
              HasSubstr("statement 1 of tasklet 'first' (%" +
                        std::to_string(lit.first) +
                        ") ('t = 0.1') would compute in another type"));
}

TEST(TaskletFusion, RefusesAnEdgeThatIsNotAHandOver) {
  // A memlet naming a container between two tasklets moves no value a
  // tasklet could read as a local.
  TopLevel t = topLevel(ir::DType::F32, "t = x", "y = t", ir::DType::F32);
  for (ir::Edge &e : t.g.p.states[0].edges.editable())
    if (e.src == t.first)
      e.memlet = at0("x");
  EXPECT_THAT(reason(t.g.p, t.match()),
              HasSubstr("(x[0]) from tasklet 'first' (%" +
                        std::to_string(t.first) + ") to tasklet 'second' (%" +
                        std::to_string(t.second) +
                        ") names a container; only a value handed over on an "
                        "empty memlet fuses"));
}

TEST(TaskletFusion, RefusesTaskletsThatAreOnlyOrdered) {
  TopLevel t = topLevel(ir::DType::F32, "t = x", "y = t", ir::DType::F32);
  ir::NodeId other = tasklet(t.g, "other", {{"x", ir::DType::F32}},
                             {{"z", ir::DType::F32}}, "z = x");
  t.g.output("z", {1});
  edge(t.g, t.x, "", other, "x", at0("x"));
  edge(t.g, other, "z", ir::addAccess(t.g.p, t.g.p.states[0], "z"), "",
       at0("z"));
  edge(t.g, other, "", t.second, "");
  expectValid(t.g.p);
  Match m{"main", {{"first", other}, {"second", t.second}}};
  EXPECT_THAT(reason(t.g.p, m),
              HasSubstr("tasklet 'other' (%" + std::to_string(other) +
                        ") and tasklet 'second' (%" + std::to_string(t.second) +
                        ") are only ordered; no value is handed over"));
  // The ordering edge moves to the fused tasklet when first and second
  // fuse.
  ir::Program after =
      transforms::applyChecked(t.g.p, fusion(), t.match()).program;
  expectValid(after);
  EXPECT_NE(std::find_if(after.states[0].edges.begin(),
                         after.states[0].edges.end(),
                         [&](const ir::Edge &e) {
                           return e.src == other && e.dst == t.first;
                         }),
            after.states[0].edges.end());
  expectEquivalent(t.g.p, after);
}

// --- the bundled models ----------------------------------------------------

TEST(TaskletFusion, BundledModelsToAFixedPoint) {
  for (const char *name : {"cnn.onnx", "mlp.onnx", "transformer.onnx"}) {
    SCOPED_TRACE(name);
    ir::Program expanded = expandedModel(name);
    ir::Program before = expanded;
    int maps = toFixedPoint(before, mapFusion());
    ir::Program after = before;
    int fused = toFixedPoint(after, fusion());
    expectValid(after);
    std::vector<Match> left = fusionMatches(after);
    std::cout << "[ tasklet-fusion ] " << name << ": " << maps
              << " map fusions, then " << fused << " tasklet fusions, "
              << countNodes(before, ir::NodeKind::Tasklet) << " -> "
              << countNodes(after, ir::NodeKind::Tasklet) << " tasklets, "
              << left.size() << " matches refused\n";
    for (const Match &m : left)
      std::cout << "    " << m.str() << ": " << reason(after, m) << "\n";
    EXPECT_EQ(countNodes(before, ir::NodeKind::Tasklet) -
                  countNodes(after, ir::NodeKind::Tasklet),
              fused);
    EXPECT_EQ(fused > 0, maps > 0);
    expectSameCosts(before, after);
    expectEquivalent(expanded, after, 11);
  }
}

TEST(TaskletFusion, TransformerFromOneListOfMatches) {
  // A script's way: list every match once, then apply them in order, each
  // carried through the id maps of the steps before it. Map-fusion hands a
  // diamond (GELU's x -> {x, erf(x / c) + 1} -> product) over in one map,
  // so the tasklets form a diamond too: its short edge is refused until the
  // long path has been fused into one tasklet, after which the matches
  // carried along it fuse the same pair. Matches refused when their turn
  // comes are skipped; none may be left at the end.
  ir::Program expanded = expandedModel("transformer.onnx");
  ir::Program before = expanded;
  toFixedPoint(before, mapFusion());
  std::vector<Match> ms = fusionMatches(before);
  ASSERT_FALSE(ms.empty());
  ir::Program after = before;
  for (std::size_t k = 0; k < ms.size(); ++k) {
    if (!transforms::checkMatch(after, fusion(), ms[k]))
      continue;
    transforms::ApplyResult r =
        transforms::applyChecked(after, fusion(), ms[k]);
    after = std::move(r.program);
    expectValid(after);
    for (std::size_t later = k + 1; later < ms.size(); ++later)
      for (auto &[role, id] : ms[later].roles)
        if (r.idMap.count(id))
          id = r.idMap.at(id);
  }
  EXPECT_TRUE(fusionMatches(after).empty());
  std::cout << "[ tasklet-fusion ] transformer.onnx: " << ms.size()
            << " fusions from the list taken up front\n";
  expectSameCosts(before, after);
  expectEquivalent(expanded, after, 5);
}

} // namespace
} // namespace weir::transforms_testing
