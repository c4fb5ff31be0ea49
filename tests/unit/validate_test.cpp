#include "ir/validate.h"

#include "ir/error.h"
#include "tests/unit/ir_builders.h"
#include "tests/unit/program_edits.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

using namespace weir::ir;
using namespace weir::ir::builders;

namespace {

using Ids = ElementwiseIds;

/// The first diagnostic whose message contains `phrase`; fails the test
/// (listing every diagnostic) when there is none.
const Diagnostic *findDiagnostic(const std::vector<Diagnostic> &ds,
                                 const std::string &phrase) {
  for (const Diagnostic &d : ds)
    if (d.message.find(phrase) != std::string::npos)
      return &d;
  ADD_FAILURE() << "no diagnostic contains '" << phrase << "'; got:\n"
                << dump(ds);
  return nullptr;
}

/// Expects a diagnostic with `phrase`, of the given severity, naming exactly
/// these nodes and edges.
void expectDiagnostic(const Program &p, const std::string &phrase,
                      Severity severity, std::vector<NodeId> nodes,
                      std::vector<EdgeId> edges = {}) {
  std::vector<Diagnostic> ds = validate(p);
  const Diagnostic *d = findDiagnostic(ds, phrase);
  if (!d)
    return;
  EXPECT_EQ(d->severity, severity) << d->str();
  EXPECT_EQ(d->nodes, nodes) << d->str();
  EXPECT_EQ(d->edges, edges) << d->str();
  if (severity == Severity::Error) {
    EXPECT_TRUE(hasErrors(ds));
  }
}

void expectError(const Program &p, const std::string &phrase,
                 std::vector<NodeId> nodes, std::vector<EdgeId> edges = {}) {
  expectDiagnostic(p, phrase, Severity::Error, std::move(nodes),
                   std::move(edges));
}

} // namespace

// --- Valid programs ------------------------------------------------------

TEST(Validate, BuilderProgramsAreClean) {
  Expr n = Expr::symbol("N");
  for (const Program &p :
       {elementwiseAdd(16), elementwiseAdd(n), matmulWithWcr(8, 16, 4),
        matmulWithWcr(n, n * 2, 3), libraryRelu(), libraryRelu({n, 4}),
        nestedMaps(4, 8), nestedMaps(n, 8)}) {
    std::vector<Diagnostic> ds = validate(p);
    EXPECT_TRUE(ds.empty()) << p.name << ":\n" << dump(ds);
    EXPECT_FALSE(hasErrors(ds));
  }
}

TEST(Validate, EmptyProgramIsClean) {
  EXPECT_TRUE(validate(Program{}).empty());
}

TEST(Validate, ExactFitIsInBounds) {
  // A map over 0:10 reading A[i] with A of size 10 touches A[9] last.
  Program p = elementwiseAdd(10);
  EXPECT_TRUE(validate(p).empty()) << dump(validate(p));
}

// --- Diagnostic ----------------------------------------------------------

TEST(Validate, DiagnosticStr) {
  Diagnostic d{Severity::Error, "bad thing", "main", {3, 7}, {2}};
  EXPECT_EQ(d.str(), "error: state 'main': bad thing [nodes 3, 7] [edges 2]");
  Diagnostic w{Severity::Warning, "odd thing", "", {}, {}};
  EXPECT_EQ(w.str(), "warning: odd thing");
  Diagnostic e{Severity::Error, "edge only", "s", {}, {5}};
  EXPECT_EQ(e.str(), "error: state 's': edge only [edges 5]");
}

TEST(Validate, HasErrors) {
  EXPECT_FALSE(hasErrors({}));
  Diagnostic w{Severity::Warning, "w", "", {}, {}};
  Diagnostic e{Severity::Error, "e", "", {}, {}};
  EXPECT_FALSE(hasErrors({w, w}));
  EXPECT_TRUE(hasErrors({w, e}));
}

TEST(Validate, DiagnosticsAreDeterministic) {
  Program p = elementwiseAdd(10);
  removeEdge(p, Ids::bInner);
  edge(p, Ids::aInner).dstConn = "q";
  std::vector<Diagnostic> a = validate(p), b = validate(p);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i)
    EXPECT_EQ(a[i].str(), b[i].str());
}

// --- One negative test per rule ------------------------------------------

TEST(Validate, DanglingInputConnector) {
  Program p = elementwiseAdd(10);
  removeEdge(p, Ids::bInner);
  expectError(p, "input connector 'b' of tasklet 'add' (%5) has no incoming",
              {Ids::tasklet});
}

TEST(Validate, DoublyFedInputConnector) {
  Program p = elementwiseAdd(10);
  edge(p, Ids::bInner).dstConn = "a";
  expectError(p, "input connector 'a' of tasklet 'add' (%5) has 2 incoming",
              {Ids::tasklet});
}

TEST(Validate, DanglingOutputConnector) {
  Program p = elementwiseAdd(10);
  node(p, Ids::entry).outputs.push_back({"OUT_X", DType::F32});
  expectError(p,
              "output connector 'OUT_X' of map-entry 'add' (%3) has no "
              "outgoing edge",
              {Ids::entry});
}

TEST(Validate, UndeclaredConnectorOnEdge) {
  Program p = elementwiseAdd(10);
  edge(p, Ids::aInner).dstConn = "q";
  expectError(p, "edge 3 uses undeclared input connector 'q' of tasklet",
              {Ids::tasklet}, {Ids::aInner});
  Program q = elementwiseAdd(10);
  edge(q, Ids::cInner).srcConn = "out";
  expectError(q, "edge 5 uses undeclared output connector 'out' of tasklet",
              {Ids::tasklet}, {Ids::cInner});
}

TEST(Validate, DuplicateConnectorDeclaration) {
  Program p = elementwiseAdd(10);
  node(p, Ids::exit).inputs.push_back({"IN_C", DType::F32});
  expectError(p,
              "input connector 'IN_C' of map-exit 'add' (%4) is declared "
              "twice",
              {Ids::exit});
}

TEST(Validate, ConnectorOnAccessNode) {
  Program p = elementwiseAdd(10);
  edge(p, Ids::aIn).srcConn = "x";
  expectError(p,
              "edge 1 uses connector 'x' on access 'A' (%1), which has "
              "none",
              {Ids::a}, {Ids::aIn});
}

TEST(Validate, EdgeToNodeNotInState) {
  Program p = elementwiseAdd(10);
  p.setNextIds(100, p.nextEdgeId());
  edge(p, Ids::cOut).dst = 99;
  expectError(p, "edge 6 connects a node (99) that is not in the state", {},
              {Ids::cOut});
}

TEST(Validate, SubsetRankMismatch) {
  Program p = elementwiseAdd(10);
  edge(p, Ids::aInner).memlet.subset.dims.push_back(Range::point(0));
  expectError(p, "edge 3 subset [i, 0] has rank 2 but container 'A' has rank 1",
              {Ids::entry, Ids::tasklet}, {Ids::aInner});
}

TEST(Validate, SubsetOutOfBoundsConstant) {
  Program p = elementwiseAdd(10);
  edge(p, Ids::aIn).memlet.subset = Subset{{Range(0, 11)}};
  expectError(p,
              "edge 1 subset A[0:11] is out of bounds in dimension 0 (size "
              "10)",
              {Ids::a, Ids::entry}, {Ids::aIn});
  Program q = elementwiseAdd(10);
  edge(q, Ids::aIn).memlet.subset = Subset{{Range(-1, 10)}};
  expectError(q, "edge 1 subset A[-1:10] is out of bounds",
              {Ids::a, Ids::entry}, {Ids::aIn});
}

TEST(Validate, SteppedSubsetsEndingPastTheShapeAreInBounds) {
  // 0:12:4 touches 0, 4 and 8 of A's 10 elements.
  Program p = elementwiseAdd(10);
  edge(p, Ids::aIn).memlet.subset = Subset{{Range(0, 12, 4)}};
  EXPECT_TRUE(validate(p).empty()) << dump(validate(p));
  // ... and 0:13:4 touches 12.
  edge(p, Ids::aIn).memlet.subset = Subset{{Range(0, 13, 4)}};
  expectError(p, "edge 1 subset A[0:13:4] is out of bounds",
              {Ids::a, Ids::entry}, {Ids::aIn});
  // A window sliding with the map parameter: i = 0:4 reads A[2*i : 2*i+3 : 2]
  // (indices 2i and 2i+2, at most 8).
  Program q = elementwiseAdd(10);
  for (NodeId id : {Ids::entry, Ids::exit})
    node(q, id).map().ranges = {Range(0, 4)};
  Expr i = Expr::symbol("i");
  for (EdgeId e : {Ids::aInner, Ids::bInner, Ids::cInner})
    edge(q, e).memlet.subset = Subset{{Range(i * 2, i * 2 + 4, 2)}};
  std::vector<Diagnostic> ds = validate(q);
  EXPECT_FALSE(hasErrors(ds)) << dump(ds);
}

TEST(Validate, SubsetOutOfBoundsThroughMapRange) {
  // i = 0:11 reads A[10], one past the end of A (size 10).
  Program p = elementwiseAdd(10);
  for (NodeId id : {Ids::entry, Ids::exit})
    node(p, id).map().ranges = {Range(0, 11)};
  expectError(p, "edge 3 subset A[i] is out of bounds in dimension 0",
              {Ids::entry, Ids::tasklet}, {Ids::aInner});
}

TEST(Validate, Cycle) {
  Program p = elementwiseAdd(10);
  State &s = p.states[0];
  addEdge(p, s, Ids::c, "", Ids::a, "", memlet("C", {Range(0, 10)}));
  expectError(p, "state 'main' has a cycle through 5 nodes",
              {Ids::a, Ids::entry, Ids::exit, Ids::tasklet, Ids::c});
}

TEST(Validate, DtypeMismatch) {
  // An f32 container into an i64 tasklet connector (the body casts, so the
  // tasklet itself is well typed).
  Program p = elementwiseAdd(10);
  Node &t = node(p, Ids::tasklet);
  t.inputs[0].dtype = DType::I64;
  setTaskletCode(t, "c = f32(a) + b");
  std::vector<Diagnostic> ds = validate(p);
  EXPECT_EQ(ds.size(), 1u) << dump(ds);
  expectError(p,
              "dtype mismatch on edge 3: container 'A' is f32 but connector "
              "'a' of tasklet 'add' (%5) is i64",
              {Ids::tasklet}, {Ids::aInner});
}

TEST(Validate, TaskletTypeError) {
  Program p = elementwiseAdd(10);
  setTaskletCode(node(p, Ids::tasklet), "c = a && b");
  expectError(p, "tasklet 'add' (%5): statement 1: '&&' needs bool operands",
              {Ids::tasklet});
}

TEST(Validate, TaskletWithoutCode) {
  Program p = elementwiseAdd(10);
  node(p, Ids::tasklet).payload = TaskletData{"c = a + b", nullptr};
  expectError(p, "tasklet 'add' (%5) has no parsed code", {Ids::tasklet});
}

TEST(Validate, PayloadOfAnotherKind) {
  Program p = elementwiseAdd(10);
  node(p, Ids::tasklet).payload = AccessData{"A"};
  expectError(p, "tasklet 'add' (%5) carries the data of another node kind",
              {Ids::tasklet});
}

TEST(Validate, MapEntryWithoutPartner) {
  Program p = elementwiseAdd(10);
  p.setNextIds(100, p.nextEdgeId());
  node(p, Ids::entry).map().partner = 99;
  expectError(p,
              "map-entry 'add' (%3) is not paired with a map-exit that "
              "points back to it",
              {Ids::entry});
  // The exit still names the entry, which no longer names it back.
  expectError(p,
              "map-exit 'add' (%4) is not paired with a map-entry that "
              "points back to it",
              {Ids::exit});
}

TEST(Validate, MapEntryPartnerPointsElsewhere) {
  Program p = elementwiseAdd(10);
  node(p, Ids::entry).map().partner = Ids::tasklet;
  expectError(p, "map-entry 'add' (%3) is not paired", {Ids::entry});
}

TEST(Validate, MapPartnersDisagree) {
  Program p = elementwiseAdd(10);
  node(p, Ids::exit).map().params = {"k"};
  expectError(p, "map-entry 'add' (%3) and its partner disagree",
              {Ids::entry, Ids::exit});
}

TEST(Validate, MapParamsRangesCountMismatch) {
  Program p = elementwiseAdd(10);
  for (NodeId id : {Ids::entry, Ids::exit})
    node(p, id).map().params.push_back("j");
  expectError(p, "map-entry 'add' (%3) has 2 parameters but 1 ranges",
              {Ids::entry});
}

TEST(Validate, NonPositiveStep) {
  Program p = elementwiseAdd(10);
  for (NodeId id : {Ids::entry, Ids::exit})
    node(p, id).map().ranges[0].step = Expr(0);
  expectError(p, "map-entry 'add' (%3) has a non-positive step in range 0:10",
              {Ids::entry});
}

TEST(Validate, UnknownContainerOnAccessNode) {
  Program p = elementwiseAdd(10);
  node(p, Ids::a).payload = AccessData{"Z"};
  expectError(p, "access 'A' (%1) names unknown container 'Z'", {Ids::a});
  // The memlet on its edge now names a container neither end accesses.
  expectError(p, "edge 1 names container 'A' but neither end accesses it",
              {Ids::a, Ids::entry}, {Ids::aIn});
}

TEST(Validate, UnknownContainerOnMemlet) {
  Program p = elementwiseAdd(10);
  edge(p, Ids::aInner).memlet.container = "Z";
  expectError(p, "edge 3 moves unknown container 'Z'",
              {Ids::entry, Ids::tasklet}, {Ids::aInner});
}

TEST(Validate, UnusedContainerIsAWarning) {
  Program p = elementwiseAdd(10);
  Container t;
  t.name = "T";
  t.shape = {Expr(4)};
  p.addContainer(t);
  std::vector<Diagnostic> ds = validate(p);
  EXPECT_FALSE(hasErrors(ds)) << dump(ds);
  expectDiagnostic(p, "container 'T' is named by no node or edge",
                   Severity::Warning, {});
  const Diagnostic *d = findDiagnostic(ds, "container 'T'");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->str(), "warning: container 'T' is named by no node or edge");
}

TEST(Validate, ArgumentNamesNoContainer) {
  Program p = elementwiseAdd(10);
  p.inputs.push_back("Q");
  expectError(p, "input 'Q' names no container", {});
  Program q = elementwiseAdd(10);
  q.outputs.push_back("R");
  expectError(q, "output 'R' names no container", {});
}

TEST(Validate, ArgumentIsTransient) {
  Program p = elementwiseAdd(10);
  p.containers.at("A").transient = true;
  expectError(p, "input 'A' is a transient container", {});
}

TEST(Validate, ArgumentListedTwice) {
  Program p = elementwiseAdd(10);
  p.inputs.push_back("A");
  expectError(p, "input 'A' is listed twice among arguments", {});
  // An input may also be an output (ONNX passes inputs through).
  Program q = elementwiseAdd(10);
  q.outputs.push_back("A");
  EXPECT_FALSE(hasErrors(validate(q))) << dump(validate(q));
}

TEST(Validate, DuplicateNodeIds) {
  Program p = elementwiseAdd(10);
  Node copy = node(p, Ids::a);
  p.states[0].nodes.push_back(copy);
  expectError(p, "node id 1 is used twice", {Ids::a});
}

TEST(Validate, NodeIdInTwoStates) {
  Program p = elementwiseAdd(10);
  State &second = p.states.emplace_back();
  second.name = "second";
  second.nodes.push_back(node(p, Ids::c));
  std::vector<Diagnostic> ds = validate(p);
  const Diagnostic *d = findDiagnostic(ds, "node id 6 appears in two states");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->state, "second");
  EXPECT_EQ(d->nodes, std::vector<NodeId>{Ids::c});
}

TEST(Validate, IdsNotBelowNextId) {
  Program p = elementwiseAdd(10);
  p.setNextIds(Ids::c, Ids::cOut);
  expectError(p, "node id 6 is not below the program's next id", {Ids::c});
  expectError(p, "edge id 6 is not below the program's next id", {},
              {Ids::cOut});
}

TEST(Validate, DuplicateEdgeIds) {
  Program p = elementwiseAdd(10);
  edge(p, Ids::bIn).id = Ids::aIn;
  expectError(p, "edge id 1 is used twice", {}, {Ids::aIn});
}

TEST(Validate, NegativeConstantDimension) {
  Program p = elementwiseAdd(10);
  Container t;
  t.name = "T";
  t.shape = {Expr(4), Expr(-3)};
  p.addContainer(t);
  expectError(p, "container 'T' has negative dimension -3", {});
}

TEST(Validate, ConstantDataSizeMismatch) {
  Program p = elementwiseAdd(10);
  Container w = argument("W", DType::F32, {Expr(4)});
  w.constant = std::make_shared<const std::vector<std::byte>>(12);
  p.addContainer(w);
  expectError(p, "constant container 'W' holds 12 bytes, its shape needs 16",
              {});
  Program q = elementwiseAdd(10);
  w.name = "S";
  w.shape = {Expr::symbol("N")};
  w.strides = {Expr(1)};
  q.symbols = {"N"};
  q.addContainer(w);
  expectError(q, "constant container 'S' has a symbolic shape", {});
}

TEST(Validate, StrideCountMismatch) {
  Program p = elementwiseAdd(10);
  p.containers.at("A").strides = {Expr(1), Expr(1)};
  expectError(p, "container 'A' has 2 strides for rank 1", {});
}

TEST(Validate, UndeclaredSymbolInShape) {
  Program p = elementwiseAdd(Expr::symbol("N"));
  p.symbols.clear();
  expectError(p, "shape of container 'A' uses undeclared symbol 'N'", {});
}

TEST(Validate, UnknownLibraryOpIsAWarning) {
  Program p = libraryRelu();
  LibraryData &l = node(p, ReluIds::relu).library();
  l.op = "FancyOp";
  l.domain = "com.example";
  l.unknown = true;
  std::vector<Diagnostic> ds = validate(p);
  EXPECT_FALSE(hasErrors(ds)) << dump(ds);
  expectDiagnostic(p,
                   "library 'relu0' (%2): operator 'com.example.FancyOp' is "
                   "not supported by Weir",
                   Severity::Warning, {ReluIds::relu});
}

TEST(Validate, SubgraphDiagnosticsNameTheLibraryNode) {
  Program body = elementwiseAdd(10);
  body.inputs.push_back("Q");
  Program p = libraryRelu();
  node(p, ReluIds::relu).library().attributes["body"] =
      std::make_shared<const Program>(body);
  expectError(p,
              "library 'relu0' (%2), subgraph 'body': input 'Q' names no "
              "container",
              {ReluIds::relu});
}

TEST(State, FindNodeFindsNodesOutOfIdOrder) {
  // Nodes are usually in id order and found by binary search; an order a
  // transformation changed must still find every node, and no other.
  State s;
  for (NodeId id : {1, 2, 3, 4, 5, 6, 7, 8}) {
    Node n;
    n.id = id;
    s.nodes.push_back(n);
  }
  for (NodeId id = 1; id <= 8; ++id)
    ASSERT_EQ(s.findNode(id)->id, id);
  s.nodes.swapAt(1, 6);
  s.nodes.rotate(s.nodes.begin(), s.nodes.begin() + 3, s.nodes.end());
  for (NodeId id = 1; id <= 8; ++id) {
    ASSERT_NE(s.findNode(id), nullptr) << id;
    EXPECT_EQ(s.findNode(id)->id, id);
    EXPECT_EQ(std::as_const(s).findNode(id)->id, id);
  }
  EXPECT_EQ(s.findNode(0), nullptr);
  EXPECT_EQ(s.findNode(9), nullptr);
}
