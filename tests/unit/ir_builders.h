#pragma once
/// \file
/// Small, realistic programs for the IR unit tests. Every builder returns a
/// program that validates without errors; tests break one thing at a time.
///
/// Node and edge ids are assigned in the order the builders add them, and the
/// tests rely on that order (see the comments on each builder).

#include "ir/program.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

namespace weir::ir::builders {

/// A container that is a program argument (not transient), row-major.
inline Container argument(std::string name, DType dtype,
                          std::vector<Expr> shape) {
  Container c;
  c.name = std::move(name);
  c.dtype = dtype;
  c.shape = std::move(shape);
  c.strides = rowMajorStrides(c.shape);
  c.transient = false;
  return c;
}

inline Memlet memlet(std::string container, std::vector<Range> dims,
                     std::optional<Wcr> wcr = std::nullopt) {
  return Memlet{std::move(container), Subset{std::move(dims)}, wcr};
}

/// Adds every free symbol of `e` to the program's symbols (once).
inline void declareSymbols(Program &p, const Expr &e) {
  for (const std::string &s : e.freeSymbols())
    if (std::find(p.symbols.begin(), p.symbols.end(), s) == p.symbols.end())
      p.symbols.push_back(s);
}

/// Ids of the nodes and edges of elementwiseAdd, in creation order.
struct ElementwiseIds {
  static constexpr NodeId a = 1, b = 2, entry = 3, exit = 4, tasklet = 5, c = 6;
  /// A -> entry.IN_A, B -> entry.IN_B, entry.OUT_A -> t.a, entry.OUT_B -> t.b,
  /// t.c -> exit.IN_C, exit.OUT_C -> C.
  static constexpr EdgeId aIn = 1, bIn = 2, aInner = 3, bInner = 4, cInner = 5,
                          cOut = 6;
};

/// C[i] = A[i] + B[i] for i in 0:n, with A, B inputs and C the output, all
/// f32[n]. `n` may be symbolic (its symbols are declared).
inline Program elementwiseAdd(Expr n) {
  Program p;
  p.name = "elementwise_add";
  declareSymbols(p, n);
  for (const char *name : {"A", "B", "C"})
    p.addContainer(argument(name, DType::F32, {n}));
  p.inputs = {"A", "B"};
  p.outputs = {"C"};
  State &s = p.states.emplace_back();
  s.name = "main";
  NodeId a = addAccess(p, s, "A");
  NodeId b = addAccess(p, s, "B");
  auto [entry, exit] = addMap(p, s, "add", {"i"}, {Range(0, n)});
  s.findNode(entry)->inputs = {{"IN_A", DType::F32}, {"IN_B", DType::F32}};
  s.findNode(entry)->outputs = {{"OUT_A", DType::F32}, {"OUT_B", DType::F32}};
  s.findNode(exit)->inputs = {{"IN_C", DType::F32}};
  s.findNode(exit)->outputs = {{"OUT_C", DType::F32}};
  NodeId t = addTasklet(p, s, "add", {{"a", DType::F32}, {"b", DType::F32}},
                        {{"c", DType::F32}}, "c = a + b");
  NodeId c = addAccess(p, s, "C");
  Expr i = Expr::symbol("i");
  addEdge(p, s, a, "", entry, "IN_A", memlet("A", {Range(0, n)}));
  addEdge(p, s, b, "", entry, "IN_B", memlet("B", {Range(0, n)}));
  addEdge(p, s, entry, "OUT_A", t, "a", memlet("A", {Range::point(i)}));
  addEdge(p, s, entry, "OUT_B", t, "b", memlet("B", {Range::point(i)}));
  addEdge(p, s, t, "c", exit, "IN_C", memlet("C", {Range::point(i)}));
  addEdge(p, s, exit, "OUT_C", c, "", memlet("C", {Range(0, n)}));
  return p;
}

/// Ids of the nodes of matmulWithWcr, in creation order (edges as in
/// ElementwiseIds).
struct MatmulIds {
  static constexpr NodeId a = 1, b = 2, entry = 3, exit = 4, tasklet = 5, c = 6;
};

/// C[i, j] += A[i, k] * B[k, j] over a 3-D map (i, j, k), the accumulation
/// expressed as a `sum` write-conflict resolution on the memlets into C.
inline Program matmulWithWcr(Expr m, Expr n, Expr k) {
  Program p;
  p.name = "matmul";
  for (const Expr &e : {m, n, k})
    declareSymbols(p, e);
  p.addContainer(argument("A", DType::F32, {m, k}));
  p.addContainer(argument("B", DType::F32, {k, n}));
  p.addContainer(argument("C", DType::F32, {m, n}));
  p.inputs = {"A", "B"};
  p.outputs = {"C"};
  State &s = p.states.emplace_back();
  s.name = "main";
  NodeId a = addAccess(p, s, "A");
  NodeId b = addAccess(p, s, "B");
  auto [entry, exit] =
      addMap(p, s, "matmul", {"i", "j", "k"},
             {Range(0, m), Range(0, n), Range(0, k)}, Schedule::CpuParallel);
  s.findNode(entry)->inputs = {{"IN_A", DType::F32}, {"IN_B", DType::F32}};
  s.findNode(entry)->outputs = {{"OUT_A", DType::F32}, {"OUT_B", DType::F32}};
  s.findNode(exit)->inputs = {{"IN_C", DType::F32}};
  s.findNode(exit)->outputs = {{"OUT_C", DType::F32}};
  NodeId t = addTasklet(p, s, "mul", {{"a", DType::F32}, {"b", DType::F32}},
                        {{"c", DType::F32}}, "c = a * b");
  NodeId c = addAccess(p, s, "C");
  Expr i = Expr::symbol("i"), j = Expr::symbol("j"), kk = Expr::symbol("k");
  addEdge(p, s, a, "", entry, "IN_A", memlet("A", {Range(0, m), Range(0, k)}));
  addEdge(p, s, b, "", entry, "IN_B", memlet("B", {Range(0, k), Range(0, n)}));
  addEdge(p, s, entry, "OUT_A", t, "a",
          memlet("A", {Range::point(i), Range::point(kk)}));
  addEdge(p, s, entry, "OUT_B", t, "b",
          memlet("B", {Range::point(kk), Range::point(j)}));
  addEdge(p, s, t, "c", exit, "IN_C",
          memlet("C", {Range::point(i), Range::point(j)}, Wcr::Sum));
  addEdge(p, s, exit, "OUT_C", c, "",
          memlet("C", {Range(0, m), Range(0, n)}, Wcr::Sum));
  return p;
}

/// Adds a Library node; returns its id.
inline NodeId addLibrary(Program &p, State &s, std::string label,
                         LibraryData data, std::vector<Connector> inputs,
                         std::vector<Connector> outputs) {
  Node n;
  n.id = p.newNodeId();
  n.kind = NodeKind::Library;
  n.label = std::move(label);
  n.inputs = std::move(inputs);
  n.outputs = std::move(outputs);
  n.payload = std::move(data);
  s.nodes.push_back(std::move(n));
  return s.nodes.back().id;
}

/// Ids of libraryRelu: access X (1) -> Relu (2) -> access Y (3), edges 1, 2.
struct ReluIds {
  static constexpr NodeId x = 1, relu = 2, y = 3;
  static constexpr EdgeId in = 1, out = 2;
};

/// Y = Relu(X) as one Library node between two access nodes; X and Y are
/// f32[shape] and the memlets move the full tensors. The node's flops are
/// the element count.
inline Program libraryRelu(std::vector<Expr> shape = {4, 8}) {
  Program p;
  p.name = "relu";
  for (const Expr &d : shape)
    declareSymbols(p, d);
  Container &x = p.addContainer(argument("X", DType::F32, shape));
  Expr count = x.elementCount();
  p.addContainer(argument("Y", DType::F32, shape));
  p.inputs = {"X"};
  p.outputs = {"Y"};
  State &s = p.states.emplace_back();
  s.name = "main";
  NodeId in = addAccess(p, s, "X");
  LibraryData relu;
  relu.op = "Relu";
  relu.opsetVersion = 14;
  relu.flops = count;
  NodeId op = addLibrary(p, s, "relu0", std::move(relu), {{"X", DType::F32}},
                         {{"Y", DType::F32}});
  NodeId out = addAccess(p, s, "Y");
  addEdge(p, s, in, "", op, "X", Memlet{"X", Subset::full(shape), {}});
  addEdge(p, s, op, "Y", out, "", Memlet{"Y", Subset::full(shape), {}});
  return p;
}

/// Ids of nestedMaps (see below).
struct NestedIds {
  static constexpr NodeId x = 1, outerEntry = 2, outerExit = 3, innerEntry = 4,
                          innerExit = 5, tasklet = 6, y = 7;
};

/// Y[i, j] = X[i, j] * 2 as two nested maps: i = 0:rows outside,
/// j = 0:cols inside.
inline Program nestedMaps(Expr rows, Expr cols) {
  Program p;
  p.name = "nested";
  declareSymbols(p, rows);
  declareSymbols(p, cols);
  p.addContainer(argument("X", DType::F32, {rows, cols}));
  p.addContainer(argument("Y", DType::F32, {rows, cols}));
  p.inputs = {"X"};
  p.outputs = {"Y"};
  State &s = p.states.emplace_back();
  s.name = "main";
  NodeId x = addAccess(p, s, "X");
  auto [outer, outerExit] = addMap(p, s, "rows", {"i"}, {Range(0, rows)});
  auto [inner, innerExit] = addMap(p, s, "cols", {"j"}, {Range(0, cols)});
  for (NodeId id : {outer, outerExit, inner, innerExit}) {
    Node &n = *s.findNode(id);
    bool entry = n.kind == NodeKind::MapEntry;
    n.inputs = {{entry ? "IN_X" : "IN_Y", DType::F32}};
    n.outputs = {{entry ? "OUT_X" : "OUT_Y", DType::F32}};
  }
  NodeId t = addTasklet(p, s, "double", {{"x", DType::F32}},
                        {{"y", DType::F32}}, "y = x * 2.0");
  NodeId y = addAccess(p, s, "Y");
  Expr i = Expr::symbol("i"), j = Expr::symbol("j");
  addEdge(p, s, x, "", outer, "IN_X",
          memlet("X", {Range(0, rows), Range(0, cols)}));
  addEdge(p, s, outer, "OUT_X", inner, "IN_X",
          memlet("X", {Range::point(i), Range(0, cols)}));
  addEdge(p, s, inner, "OUT_X", t, "x",
          memlet("X", {Range::point(i), Range::point(j)}));
  addEdge(p, s, t, "y", innerExit, "IN_Y",
          memlet("Y", {Range::point(i), Range::point(j)}));
  addEdge(p, s, innerExit, "OUT_Y", outerExit, "IN_Y",
          memlet("Y", {Range::point(i), Range(0, cols)}));
  addEdge(p, s, outerExit, "OUT_Y", y, "",
          memlet("Y", {Range(0, rows), Range(0, cols)}));
  return p;
}

} // namespace weir::ir::builders
