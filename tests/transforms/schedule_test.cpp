// The scheduling helpers of tier 3 — map-interchange, map-collapse,
// parallelize, vectorize: golden before/after text, negative tests matching
// their reasons, equivalence on the interpreter and the CPU JIT (also
// compiled so that small maps do become parallel loops), the loop kinds
// the lowering emits for each schedule, and every match on the bundled
// models.

#include "codegen/cpu/compile.h"
#include "ir/mapped_tasklet.h"
#include "ir/print.h"
#include "transforms/golden.h"
#include "transforms/graph_builder.h"
#include "transforms/program_checks.h"
#include "transforms/registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>

namespace weir::transforms_testing {
namespace {

using ::testing::HasSubstr;
using transforms::Match;
using transforms::Params;

const transforms::Transformation &byId(const char *id) {
  return *transforms::requireTransformation(id);
}
const transforms::Transformation &interchange() {
  return byId("map-interchange");
}
const transforms::Transformation &collapse() { return byId("map-collapse"); }
const transforms::Transformation &parallelize() { return byId("parallelize"); }
const transforms::Transformation &vectorize() { return byId("vectorize"); }

ir::Expr sym(const char *s) { return ir::Expr::symbol(s); }

/// One mapped tasklet in a fresh program: inputs and outputs are declared
/// by the caller on `g` first.
struct OneMap {
  GraphBuilder g;
  ir::AccessNodes access;
  ir::MappedTaskletIds ids;
  explicit OneMap(const char *name) : g(name) {}
  ir::MappedTaskletIds
  add(const std::string &label, std::vector<std::string> params,
      std::vector<ir::Range> ranges, std::vector<ir::MappedInput> in,
      std::string_view code, std::vector<ir::MappedOutput> out,
      ir::Schedule schedule = ir::Schedule::Sequential) {
    ids = ir::addMappedTasklet(g.p, g.p.states.back(), label, params, ranges,
                               in, code, out, access, schedule);
    return ids;
  }
};

/// Splits the flat map at `entry` into an outer map over its first `k`
/// parameters holding an inner map over the rest (what a tiling or DaCe's
/// MapExpansion makes): the body's memlets stay, the memlets between the
/// two maps are the outer ones (a superset, as expansions write them).
ir::NodeId splitMap(ir::Program &p, ir::NodeId entry, std::size_t k,
                    ir::Schedule innerSchedule = ir::Schedule::Sequential) {
  ir::State &s = p.states.front();
  const ir::Node outer = *s.findNode(entry);
  const ir::MapData m = outer.map();
  const ir::Node outerExit = *s.findNode(m.partner);
  std::vector<std::string> op(m.params.begin(), m.params.begin() + k),
      ip(m.params.begin() + k, m.params.end());
  std::vector<ir::Range> orng(m.ranges.begin(), m.ranges.begin() + k),
      irng(m.ranges.begin() + k, m.ranges.end());
  for (ir::NodeId id : {entry, m.partner}) {
    s.findNode(id)->map().params = op;
    s.findNode(id)->map().ranges = orng;
  }
  auto [ie, ix] =
      ir::addMap(p, s, outer.label + "_inner", ip, irng, innerSchedule);
  s.findNode(ie)->inputs = outer.inputs;
  s.findNode(ie)->outputs = outer.outputs;
  s.findNode(ix)->inputs = outerExit.inputs;
  s.findNode(ix)->outputs = outerExit.outputs;
  std::vector<ir::Edge> in, out;
  for (ir::Edge &e : s.edges) {
    // Ordering edges into the outer entry or out of the outer exit stay.
    if (e.dst == entry && !e.dstConn.empty())
      in.push_back(e);
    if (e.src == m.partner && !e.srcConn.empty())
      out.push_back(e);
    if (e.src == entry)
      e.src = ie;
    if (e.dst == m.partner)
      e.dst = ix;
  }
  for (const ir::Edge &e : in)
    ir::addEdge(p, s, entry, "OUT_" + e.dstConn.substr(3), ie, e.dstConn,
                e.memlet);
  for (const ir::Edge &e : out)
    ir::addEdge(p, s, ix, e.srcConn, m.partner, "IN_" + e.srcConn.substr(4),
                e.memlet);
  if (in.empty())
    ir::addEdge(p, s, entry, "", ie, "", ir::Memlet{});
  if (out.empty())
    ir::addEdge(p, s, ix, "", m.partner, "", ir::Memlet{});
  return ie;
}

/// Sets every map's schedule (entries and exits).
void setSchedules(ir::Program &p, ir::Schedule schedule) {
  for (ir::State &s : p.states)
    for (ir::Node &n : s.nodes)
      if (n.kind == ir::NodeKind::MapEntry || n.kind == ir::NodeKind::MapExit)
        n.map().schedule = schedule;
}

int countSchedule(const ir::Program &p, ir::Schedule schedule) {
  int count = 0;
  for (const ir::State &s : p.states)
    for (const ir::Node &n : s.nodes)
      count += n.kind == ir::NodeKind::MapEntry && n.map().schedule == schedule;
  return count;
}

int occurrences(const std::string &text, const std::string &what) {
  int n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos;
       at = text.find(what, at + 1))
    ++n;
  return n;
}

/// Compiled so that every map, however small, may become a parallel loop,
/// on two threads.
codegen::CompileOptions eagerParallel() {
  codegen::CompileOptions o;
  o.lower.minParallelIterations = 1;
  o.threads = 2;
  o.useCache = false;
  return o;
}

/// The JIT compiled with eagerParallel() gives the interpreter's outputs
/// bit for bit.
void expectJitMatchesInterpreter(const ir::Program &p, std::uint64_t seed = 5) {
  interp::TensorMap in = runtime::randomInputs(p, seed, {{"N", 2}});
  interp::TensorMap want = interp::interpret(p, in);
  interp::TensorMap got = codegen::compile(p, eagerParallel()).run(in);
  for (const auto &[name, t] : want) {
    ASSERT_EQ(t.byteSize(), got.at(name).byteSize()) << name;
    EXPECT_EQ(std::memcmp(t.data(), got.at(name).data(), t.byteSize()), 0)
        << name;
  }
}

Match mapMatch(ir::NodeId entry) { return Match{"main", {{"map", entry}}}; }

/// Applies `t` once at every listed match that still passes its check
/// (ids survive every helper but map-collapse); returns how many applied.
int applyEach(ir::Program &p, const transforms::Transformation &t,
              const std::vector<Match> &matches, const Params &params = {}) {
  int applied = 0;
  for (const Match &m : matches)
    if (transforms::checkMatch(p, t, m, params)) {
      p = transforms::applyChecked(p, t, m, params).program;
      ++applied;
    }
  return applied;
}

std::string reasonAt(const ir::Program &p, const transforms::Transformation &t,
                     const Match &m, const Params &params = {}) {
  transforms::CheckResult c = transforms::checkMatch(p, t, m, params);
  EXPECT_FALSE(c.ok) << t.id() << " at " << m.str() << " should be refused";
  return c.reason;
}

// y[i, j] = x[j, i] + 1 over [i = 0:4, j = 0:6]: a transpose.
OneMap transposeMap(ir::Schedule schedule = ir::Schedule::Sequential) {
  OneMap m("transpose");
  m.g.input("x", {6, 4}).output("y", {4, 6});
  m.add("tr", {"i", "j"}, {{0, 4}, {0, 6}}, {{"x", "x", {sym("j"), sym("i")}}},
        "y = x + 1.0", {{"y", "y", {sym("i"), sym("j")}}}, schedule);
  return m;
}

// y[i] += x[i, j, k] over [i = 0:3, j = 0:4, k = 0:5].
OneMap sumMap() {
  OneMap m("sum");
  m.g.input("x", {3, 4, 5}).output("y", {3});
  m.add("sum", {"i", "j", "k"}, {{0, 3}, {0, 4}, {0, 5}},
        {{"x", "x", {sym("i"), sym("j"), sym("k")}}}, "y = x",
        {{"y", "y", {sym("i")}, ir::Wcr::Sum}});
  return m;
}

// y[i, j] = x[i, j] * 2 + b[j] over [i = 0:8, j = 0:16].
OneMap biasMap(ir::Schedule schedule = ir::Schedule::Sequential) {
  OneMap m("bias");
  m.g.input("x", {8, 16}).input("b", {16}).output("y", {8, 16});
  m.add("bias", {"i", "j"}, {{0, 8}, {0, 16}},
        {{"x", "x", {sym("i"), sym("j")}}, {"b", "b", {sym("j")}}},
        "y = x * 2.0 + b", {{"y", "y", {sym("i"), sym("j")}}}, schedule);
  return m;
}

// ---------------------------------------------------------------- interchange

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
                               {{"permutation", "2,0,1"}})
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
  EXPECT_THAT(reasonAt(m.g.p, interchange(), at, {{"permutation", "0,2,1"}}),
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
  EXPECT_THAT(reasonAt(t.g.p, interchange(), at, {{"permutation", "0,0"}}),
              HasSubstr("permutation '0,0' is not a permutation of 0..1"));
  EXPECT_THAT(reasonAt(t.g.p, interchange(), at, {{"permutation", "a,b"}}),
              HasSubstr("permutation 'a,b' is not a list of positions"));
  EXPECT_THAT(reasonAt(t.g.p, interchange(), at, {{"permutation", "0,1"}}),
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

// ------------------------------------------------------------------- collapse

TEST(MapCollapse, NestGolden) {
  OneMap m = biasMap();
  ir::Program flat = m.g.p;
  ir::NodeId inner = splitMap(m.g.p, m.ids.entry, 1);
  ir::Program before = m.g.p;
  expectValid(before);
  Match at{"main", {{"outer", m.ids.entry}, {"inner", inner}}};
  transforms::ApplyResult r = transforms::applyChecked(before, collapse(), at);
  ir::Program after = r.program;
  expectValid(after);
  expectGolden("schedule_collapse", before, after);
  EXPECT_EQ(countNodes(after, ir::NodeKind::MapEntry), 1);
  EXPECT_EQ(after.states[0].findNode(m.ids.entry)->map().params,
            (std::vector<std::string>{"i", "j"}));
  EXPECT_EQ(r.idMap.at(inner), m.ids.entry);
  // The same program as before the split, up to the edge ids.
  EXPECT_EQ(bytesMoved(after), bytesMoved(flat));
  expectEquivalent(before, after, collapse().exactness());
  expectJitMatchesInterpreter(after);
}

TEST(MapCollapse, FillsAndSumsAndDeeperNests) {
  // A map without inputs: the nest is held together by ordering edges.
  OneMap fill("fill");
  fill.g.output("y", {3, 5});
  fill.add("fill", {"i", "j"}, {{0, 3}, {0, 5}}, {}, "y = 2.5",
           {{"y", "y", {sym("i"), sym("j")}}});
  splitMap(fill.g.p, fill.ids.entry, 1);
  ir::Program p = fill.g.p;
  EXPECT_EQ(toFixedPoint(p, collapse()), 1);
  expectValid(p);
  expectEquivalent(fill.g.p, p, collapse().exactness());

  // A sum split into three maps collapses twice, innermost pair first or not.
  OneMap sum = sumMap();
  ir::NodeId middle = splitMap(sum.g.p, sum.ids.entry, 1);
  splitMap(sum.g.p, middle, 1);
  expectValid(sum.g.p);
  p = sum.g.p;
  EXPECT_EQ(toFixedPoint(p, collapse()), 2);
  expectValid(p);
  EXPECT_EQ(countNodes(p, ir::NodeKind::MapEntry), 1);
  EXPECT_EQ(p.states[0].findNode(sum.ids.entry)->map().params,
            (std::vector<std::string>{"i", "j", "k"}));
  expectEquivalent(sum.g.p, p, collapse().exactness());
  expectJitMatchesInterpreter(p);
}

TEST(MapCollapse, Refusals) {
  // A triangle is not a box.
  OneMap tri("triangle");
  tri.g.input("x", {4, 4}).output("y", {4, 4});
  tri.add("tri", {"i", "j"}, {{0, 4}, {ir::Expr(0), sym("i") + ir::Expr(1)}},
          {{"x", "x", {sym("i"), sym("j")}}}, "y = x",
          {{"y", "y", {sym("i"), sym("j")}}});
  splitMap(tri.g.p, tri.ids.entry, 1);
  EXPECT_THAT(refusals(tri.g.p, collapse()),
              HasSubstr("the range of 'j' (0:i + 1) depends on 'i' of the "
                        "outer map 'tri' (%" +
                        std::to_string(tri.ids.entry) +
                        "); the iteration space is not a box"));

  // The inner map binds the outer parameter again.
  OneMap same = biasMap();
  ir::NodeId inner = splitMap(same.g.p, same.ids.entry, 1);
  same.g.p.states[0].findNode(inner)->map().params = {"i"};
  EXPECT_THAT(refusals(same.g.p, collapse()),
              HasSubstr("binds 'i' of the outer map 'bias'"));

  // The outer scope holds a second map.
  OneMap two = biasMap();
  ir::NodeId in2 = splitMap(two.g.p, two.ids.entry, 1);
  ir::State &s = two.g.p.states[0];
  auto [e2, x2] = ir::addMap(two.g.p, s, "other", {"k"}, {{0, 2}});
  ir::addEdge(two.g.p, s, two.ids.entry, "", e2, "", ir::Memlet{});
  ir::addEdge(two.g.p, s, x2, "", two.ids.exit, "", ir::Memlet{});
  ir::addEdge(two.g.p, s, e2, "", x2, "", ir::Memlet{});
  (void)in2;
  EXPECT_THAT(refusals(two.g.p, collapse()),
              HasSubstr("does not hold exactly one inner map and nothing "
                        "else (2 nodes directly in its scope)"));
}

TEST(MapCollapse, BundledModelsSplitThenCollapsed) {
  for (const char *name : {"cnn.onnx", "mlp.onnx", "transformer.onnx"}) {
    SCOPED_TRACE(name);
    ir::Program flat = expandedModel(name);
    ir::Program nested = flat;
    int split = 0;
    for (const ir::Node &n : flat.states[0].nodes)
      if (n.kind == ir::NodeKind::MapEntry && n.map().params.size() >= 2) {
        splitMap(nested, n.id, 1);
        ++split;
      }
    expectValid(nested);
    ir::Program after = nested;
    int collapsed = toFixedPoint(after, collapse());
    expectValid(after);
    std::cout << "[ map-collapse ] " << name << ": " << split
              << " maps split into nests, " << collapsed << " collapsed back\n";
    EXPECT_EQ(collapsed, split);
    EXPECT_EQ(countNodes(after, ir::NodeKind::MapEntry),
              countNodes(flat, ir::NodeKind::MapEntry));
    EXPECT_EQ(bytesMoved(after), bytesMoved(flat));
    expectEquivalent(nested, after, collapse().exactness(), 23);

    // And every nest swaps where its sums keep their order.
    ir::Program swapped = nested;
    std::vector<Match> outers;
    for (const Match &m : transforms::findMatches(nested, collapse()))
      outers.push_back(mapMatch(m.node("outer")));
    int applied = applyEach(swapped, interchange(), outers, {{"nested", true}});
    expectValid(swapped);
    std::cout << "[ map-interchange nested ] " << name << ": " << applied
              << " of " << outers.size() << " nests swapped\n";
    EXPECT_GT(applied, 0);
    expectEquivalent(nested, swapped, interchange().exactness(), 29);
  }
}

// ---------------------------------------------------------------- parallelize

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

// ------------------------------------------------------------------ vectorize

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
