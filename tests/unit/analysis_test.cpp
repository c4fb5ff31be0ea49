#include "ir/analysis.h"

#include "ir/scope.h"
#include "tests/unit/ir_builders.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

using namespace weir::ir;
using namespace weir::ir::builders;

namespace {

const EdgeTraffic &traffic(const StateAnalysis &s, EdgeId id) {
  for (const EdgeTraffic &e : s.edges)
    if (e.edge == id)
      return e;
  static EdgeTraffic none;
  ADD_FAILURE() << "no traffic for edge " << id;
  return none;
}

const NodeCost &cost(const StateAnalysis &s, NodeId id) {
  for (const NodeCost &n : s.nodes)
    if (n.node == id)
      return n;
  static NodeCost none;
  ADD_FAILURE() << "no cost for node " << id;
  return none;
}

Expr sym(const char *name) { return Expr::symbol(name); }

} // namespace

TEST(Analysis, ElementwiseAdd) {
  using Ids = ElementwiseIds;
  const std::int64_t n = 1000;
  ProgramAnalysis a = analyze(elementwiseAdd(n));
  // Read A and B, write C: 3 * n floats of 4 bytes; one add per element.
  EXPECT_EQ(a.bytesMoved, Expr(3 * n * 4));
  EXPECT_EQ(a.flops, Expr(n));
  ASSERT_EQ(a.states.size(), 1u);
  const StateAnalysis &s = a.states[0];
  EXPECT_EQ(s.state, "main");
  EXPECT_EQ(s.bytesMoved, a.bytesMoved);
  EXPECT_EQ(s.flops, a.flops);
  ASSERT_EQ(s.edges.size(), 6u);
  for (EdgeId e : {Ids::aIn, Ids::bIn, Ids::cOut}) {
    EXPECT_EQ(traffic(s, e).elements, Expr(n)) << e;
    EXPECT_EQ(traffic(s, e).bytes, Expr(4 * n)) << e;
  }
  // Inside the map: one element per iteration, passed in registers.
  for (EdgeId e : {Ids::aInner, Ids::bInner, Ids::cInner}) {
    EXPECT_EQ(traffic(s, e).elements, Expr(n)) << e;
    EXPECT_EQ(traffic(s, e).bytes, Expr(0)) << e;
  }
  ASSERT_EQ(s.nodes.size(), 6u);
  EXPECT_EQ(cost(s, Ids::tasklet).flops, Expr(n));
  EXPECT_EQ(cost(s, Ids::tasklet).bytesIn, Expr(0));
  EXPECT_EQ(cost(s, Ids::entry).bytesIn, Expr(8 * n));
  EXPECT_EQ(cost(s, Ids::entry).bytesOut, Expr(0));
  EXPECT_EQ(cost(s, Ids::exit).bytesOut, Expr(4 * n));
  EXPECT_EQ(cost(s, Ids::a).flops, Expr(0));
  // Access nodes are the containers themselves: their traffic is counted on
  // the computing node at the other end.
  EXPECT_EQ(cost(s, Ids::a).bytesOut, Expr(0));
  ASSERT_TRUE(a.arithmeticIntensity().has_value());
  EXPECT_DOUBLE_EQ(*a.arithmeticIntensity(), 1.0 / 12.0);
}

TEST(Analysis, ElementwiseAddSymbolic) {
  Expr n = sym("N");
  ProgramAnalysis a = analyze(elementwiseAdd(n));
  EXPECT_EQ(a.bytesMoved, n * 12);
  EXPECT_EQ(a.flops, n);
  EXPECT_EQ(a.bytesMoved.evaluate({{"N", 10}}), 120);
  EXPECT_FALSE(a.arithmeticIntensity().has_value()); // N unbound
  ASSERT_TRUE(a.arithmeticIntensity({{"N", 64}}).has_value());
  EXPECT_DOUBLE_EQ(*a.arithmeticIntensity({{"N", 64}}), 1.0 / 12.0);
  EXPECT_FALSE(a.arithmeticIntensity({{"N", 0}}).has_value()); // nothing moves
}

TEST(Analysis, MatmulWithWcr) {
  const std::int64_t m = 8, n = 16, k = 4;
  Program p = matmulWithWcr(m, n, k);
  ProgramAnalysis a = analyze(p);
  // One multiply per (i, j, k); the accumulation is the memlet's wcr.
  const std::int64_t countOps = 1;
  EXPECT_EQ(a.flops, Expr(countOps * m * n * k));
  // A and B read once in full, C written once in full: the bytes on edges
  // with an access node at one end.
  EXPECT_EQ(a.bytesMoved, Expr(4 * (m * k + k * n + m * n)));
  const StateAnalysis &s = a.states[0];
  EXPECT_EQ(traffic(s, 1).bytes, Expr(4 * m * k));
  EXPECT_EQ(traffic(s, 2).bytes, Expr(4 * k * n));
  EXPECT_EQ(traffic(s, 6).bytes, Expr(4 * m * n));
  // Inner edges run once per iteration of the 3-D map.
  for (EdgeId e : {3, 4, 5}) {
    EXPECT_EQ(traffic(s, e).elements, Expr(m * n * k)) << e;
    EXPECT_EQ(traffic(s, e).bytes, Expr(0)) << e;
  }
  EXPECT_DOUBLE_EQ(*a.arithmeticIntensity(),
                   double(m * n * k) / double(4 * (m * k + k * n + m * n)));
}

TEST(Analysis, MatmulSymbolic) {
  Expr m = sym("M"), n = sym("N"), k = sym("K");
  ProgramAnalysis a = analyze(matmulWithWcr(m, n, k));
  EXPECT_EQ(a.flops, m * n * k);
  EXPECT_EQ(a.bytesMoved, (m * k + k * n + m * n) * 4);
  Bindings b{{"M", 64}, {"N", 32}, {"K", 16}};
  EXPECT_EQ(a.flops.evaluate(b), 64 * 32 * 16);
  EXPECT_EQ(a.bytesMoved.evaluate(b), 4 * (64 * 16 + 16 * 32 + 64 * 32));
}

TEST(Analysis, LibraryNode) {
  ProgramAnalysis a = analyze(libraryRelu());
  EXPECT_EQ(a.flops, Expr(32));
  EXPECT_EQ(a.bytesMoved, Expr(2 * 32 * 4));
  const StateAnalysis &s = a.states[0];
  EXPECT_EQ(cost(s, ReluIds::relu).bytesIn, Expr(128));
  EXPECT_EQ(cost(s, ReluIds::relu).bytesOut, Expr(128));
  // Unknown flops count as 0.
  Program p = libraryRelu({sym("N"), 3});
  p.states[0].findNode(ReluIds::relu)->library().flops.reset();
  ProgramAnalysis b = analyze(p);
  EXPECT_EQ(b.flops, Expr(0));
  EXPECT_EQ(b.bytesMoved, sym("N") * 24);
  EXPECT_DOUBLE_EQ(*b.arithmeticIntensity({{"N", 2}}), 0.0);
}

TEST(Analysis, PrimitiveFlopsAttribute) {
  Program p = libraryRelu();
  State &s = p.states[0];
  Node prim;
  prim.id = p.newNodeId();
  prim.kind = NodeKind::Primitive;
  prim.label = "tile";
  prim.payload = PrimitiveData{"brgemm", {{"flops", std::int64_t{128}}}};
  s.nodes.push_back(prim);
  Node other = prim;
  other.id = p.newNodeId();
  other.payload = PrimitiveData{"unary", {{"flops", std::string("many")}}};
  s.nodes.push_back(other);
  ProgramAnalysis a = analyze(p);
  EXPECT_EQ(cost(a.states[0], prim.id).flops, Expr(128));
  EXPECT_EQ(cost(a.states[0], other.id).flops, Expr(0));
  EXPECT_EQ(a.flops, Expr(32 + 128));
}

TEST(Analysis, NestedMaps) {
  using Ids = NestedIds;
  Expr rows = sym("R");
  ProgramAnalysis a = analyze(nestedMaps(rows, 8));
  // One multiply per element; X read and Y written once.
  EXPECT_EQ(a.flops, rows * 8);
  EXPECT_EQ(a.bytesMoved, rows * 64);
  const StateAnalysis &s = a.states[0];
  // outer -> inner entry carries a row per outer iteration.
  EXPECT_EQ(traffic(s, 2).elements, rows * 8);
  EXPECT_EQ(traffic(s, 3).elements, rows * 8);
  EXPECT_EQ(traffic(s, 4).elements, rows * 8);
  EXPECT_EQ(traffic(s, 5).elements, rows * 8);
  EXPECT_EQ(traffic(s, 5).bytes, Expr(0));
  EXPECT_EQ(cost(s, Ids::tasklet).flops, rows * 8);
}

TEST(Analysis, EmptyMemletsMoveNothing) {
  Program p = libraryRelu();
  addEdge(p, p.states[0], ReluIds::x, "", ReluIds::y, "", Memlet{});
  ProgramAnalysis a = analyze(p);
  EXPECT_EQ(a.bytesMoved, Expr(256));
}

TEST(Analysis, SumsOverStates) {
  Program p = elementwiseAdd(10);
  // A second state reusing the same shape of work doubles the totals.
  State second = p.states[0];
  second.name = "again";
  p.states.push_back(second);
  ProgramAnalysis a = analyze(p);
  ASSERT_EQ(a.states.size(), 2u);
  EXPECT_EQ(a.states[1].state, "again");
  EXPECT_EQ(a.bytesMoved, Expr(2 * 120));
  EXPECT_EQ(a.flops, Expr(20));
  EXPECT_FALSE(analyze(Program{}).arithmeticIntensity().has_value());
  EXPECT_EQ(analyze(Program{}).flops, Expr(0));
}

/// nestedMaps(rows, 8) with the inner map over j = 0:min(i + 1, width) (a
/// window clamped at the border) and the row handed to it X[i, 0:that].
Program triangle(std::int64_t rows, std::int64_t width) {
  using Ids = NestedIds;
  Program p = nestedMaps(rows, 8);
  Expr i = sym("i");
  Expr end = min(i + 1, Expr(width));
  State &s = p.states[0];
  for (NodeId id : {Ids::innerEntry, Ids::innerExit})
    s.findNode(id)->map().ranges = {Range(0, end)};
  for (Edge &e : s.edges.editable())
    if (e.src == Ids::outerEntry)
      e.memlet = memlet("X", {Range::point(i), Range(0, end)});
  return p;
}

TEST(Analysis, ARangeThatDependsOnAnOuterParameterIsSummed) {
  using Ids = NestedIds;
  // Rows 0..9 run 1, 2, 3, 3, ... inner iterations: 1 + 2 + 3 * 8 = 27.
  Program p = triangle(10, 3);
  const State &s = p.states[0];
  ScopeParents parents = scopeParents(s);
  EXPECT_EQ(scopeExecutions(s, parents, Ids::innerEntry), Expr(27));
  ProgramAnalysis a = analyze(p);
  EXPECT_EQ(a.flops, Expr(27));
  // The row handed in is as long as the inner map.
  EXPECT_EQ(traffic(a.states[0], 2).elements, Expr(27));
  EXPECT_TRUE(a.bytesMoved.isConstant()) << a.bytesMoved.str();
  // Past kEnumerated outer points, an upper bound: the widest window in
  // every row.
  std::int64_t rows = 2 * ScopeExecutions::kEnumerated;
  ProgramAnalysis big = analyze(triangle(rows, 3));
  ASSERT_TRUE(big.flops.isConstant()) << big.flops.str();
  EXPECT_EQ(*big.flops.asConstant(), 3 * rows);
}

TEST(Analysis, TotalsOnlyAgreeWithTheFullAnalysis) {
  Expr rows = sym("R");
  for (const Program &p :
       {elementwiseAdd(10), elementwiseAdd(sym("N")), matmulWithWcr(8, 16, 4),
        matmulWithWcr(sym("M"), 16, sym("K")), libraryRelu(),
        nestedMaps(rows, 8)}) {
    ProgramAnalysis full = analyze(p);
    ProgramAnalysis totals = analyze(p, AnalysisDetail::Totals);
    EXPECT_EQ(totals.flops, full.flops) << p.name;
    EXPECT_EQ(totals.bytesMoved, full.bytesMoved) << p.name;
    ASSERT_EQ(totals.states.size(), full.states.size());
    for (std::size_t i = 0; i < full.states.size(); ++i) {
      EXPECT_EQ(totals.states[i].flops, full.states[i].flops);
      EXPECT_EQ(totals.states[i].bytesMoved, full.states[i].bytesMoved);
      EXPECT_TRUE(totals.states[i].edges.empty());
      EXPECT_TRUE(totals.states[i].nodes.empty());
      EXPECT_FALSE(full.states[i].edges.empty());
    }
  }
}

// --- Scopes --------------------------------------------------------------

TEST(Scope, ElementwiseAdd) {
  using Ids = ElementwiseIds;
  Program p = elementwiseAdd(10);
  ScopeParents parents = scopeParents(p.states[0]);
  std::map<NodeId, NodeId> want{{Ids::a, 0},
                                {Ids::b, 0},
                                {Ids::entry, 0},
                                {Ids::exit, Ids::entry},
                                {Ids::tasklet, Ids::entry},
                                {Ids::c, 0}};
  EXPECT_EQ(parents.toMap(), want);
  EXPECT_EQ(scopeExecutions(p.states[0], parents, 0), Expr(1));
  EXPECT_EQ(scopeExecutions(p.states[0], parents, Ids::entry), Expr(10));
}

TEST(Scope, NestedMaps) {
  using Ids = NestedIds;
  Expr rows = sym("R");
  Program p = nestedMaps(rows, 8);
  const State &s = p.states[0];
  ScopeParents parents = scopeParents(s);
  std::map<NodeId, NodeId> want{
      {Ids::x, 0},
      {Ids::outerEntry, 0},
      {Ids::outerExit, Ids::outerEntry},
      {Ids::innerEntry, Ids::outerEntry},
      {Ids::innerExit, Ids::innerEntry},
      {Ids::tasklet, Ids::innerEntry},
      {Ids::y, 0},
  };
  EXPECT_EQ(parents.toMap(), want);
  EXPECT_EQ(scopeExecutions(s, parents, Ids::outerEntry), rows);
  EXPECT_EQ(scopeExecutions(s, parents, Ids::innerEntry), rows * 8);
  EXPECT_EQ(parents.size(), s.nodes.size());
  EXPECT_EQ(parents[12345], 0u); // not in the state
  std::vector<NodeId> children = {Ids::outerExit, Ids::innerEntry};
  std::sort(children.begin(), children.end());
  EXPECT_EQ(parents.childrenOf(Ids::outerEntry), children);
  EXPECT_EQ(parents.bodyOf(Ids::outerEntry),
            (std::set<NodeId>{Ids::outerExit, Ids::innerEntry, Ids::innerExit,
                              Ids::tasklet}));
  EXPECT_EQ(parents.bodyOf(Ids::innerEntry),
            (std::set<NodeId>{Ids::innerExit, Ids::tasklet}));
  EXPECT_TRUE(parents.childrenOf(Ids::x).empty());
}

TEST(Scope, NodeOrderDoesNotMatter) {
  using Ids = NestedIds;
  Program p = nestedMaps(4, 8);
  State &s = p.states[0];
  std::map<NodeId, NodeId> expected = scopeParents(s).toMap();
  s.nodes.reverse();
  EXPECT_EQ(scopeParents(s).toMap(), expected);
  s.edges.reverse();
  EXPECT_EQ(scopeParents(s).toMap(), expected);
  EXPECT_EQ(expected.at(Ids::tasklet), Ids::innerEntry);
}

TEST(Scope, TwoSequentialMaps) {
  // A -> map1 -> T (transient) -> map2 -> C: T sits at the top level
  // between the maps, and map2's body is not inside map1.
  Program p = elementwiseAdd(10);
  State &s = p.states[0];
  auto [e2, x2] = addMap(p, s, "copy", {"j"}, {Range(0, 10)});
  s.findNode(e2)->inputs = {{"IN_C", DType::F32}};
  s.findNode(e2)->outputs = {{"OUT_C", DType::F32}};
  s.findNode(x2)->inputs = {{"IN_D", DType::F32}};
  s.findNode(x2)->outputs = {{"OUT_D", DType::F32}};
  NodeId t = addTasklet(p, s, "copy", {{"x", DType::F32}}, {{"y", DType::F32}},
                        "y = x");
  p.addContainer(argument("D", DType::F32, {Expr(10)}));
  p.outputs.push_back("D");
  NodeId d = addAccess(p, s, "D");
  Expr j = sym("j");
  addEdge(p, s, ElementwiseIds::c, "", e2, "IN_C", memlet("C", {Range(0, 10)}));
  addEdge(p, s, e2, "OUT_C", t, "x", memlet("C", {Range::point(j)}));
  addEdge(p, s, t, "y", x2, "IN_D", memlet("D", {Range::point(j)}));
  addEdge(p, s, x2, "OUT_D", d, "", memlet("D", {Range(0, 10)}));
  std::map<NodeId, NodeId> parents = scopeParents(s).toMap();
  EXPECT_EQ(parents.at(ElementwiseIds::c), 0u);
  EXPECT_EQ(parents.at(e2), 0u);
  EXPECT_EQ(parents.at(t), e2);
  EXPECT_EQ(parents.at(x2), e2);
  EXPECT_EQ(parents.at(d), 0u);
  ProgramAnalysis a = analyze(p);
  EXPECT_EQ(a.flops, Expr(10)); // `y = x` performs no operation
  EXPECT_EQ(a.bytesMoved, Expr(3 * 40 + 2 * 40));
}

TEST(Scope, CyclesAndDanglingEdgesDoNotHang) {
  // Invalid states (validate rejects them) still get an answer: nodes on a
  // cycle land at the top level, edges to missing nodes are skipped.
  using Ids = ElementwiseIds;
  Program p = elementwiseAdd(10);
  State &s = p.states[0];
  addEdge(p, s, Ids::c, "", Ids::a, "", memlet("C", {Range(0, 10)}));
  addEdge(p, s, Ids::c, "", 99, "", memlet("C", {Range(0, 10)}));
  std::map<NodeId, NodeId> parents = scopeParents(s).toMap();
  EXPECT_EQ(parents.at(Ids::tasklet), 0u);
  EXPECT_EQ(parents.at(Ids::exit), Ids::entry);
  ProgramAnalysis a = analyze(p);
  EXPECT_EQ(a.states[0].edges.size(), 7u);
}
