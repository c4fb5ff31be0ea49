#pragma once
// Helpers the single-operator expansion tests share: a program holding one
// library node with given arguments, expansion, validation and interpreter
// runs, and tensors to feed them.

#include "core/interp/interpreter.h"
#include "ir/error.h"
#include "ir/validate.h"
#include "transforms/operators/expansion.h"
#include "unit/ir_builders.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

namespace weir::expansion_testing {

using namespace weir::ir;
using namespace weir::ir::builders;

struct Arg {
  std::string connector;
  std::string container;
  std::vector<std::int64_t> shape;
  DType dtype = DType::F32;
  /// Contents when constant (converted to `dtype`).
  std::vector<std::int64_t> constant = {};
};

inline std::vector<Expr> exprs(const std::vector<std::int64_t> &v) {
  return {v.begin(), v.end()};
}

/// One library node `op` reading `ins` and writing `outs`.
inline Program single(const std::string &op, Attributes attrs,
                      const std::vector<Arg> &ins,
                      const std::vector<Arg> &outs) {
  Program p;
  p.name = op;
  State &s = p.states.emplace_back();
  s.name = "main";
  LibraryData data;
  data.op = op;
  data.opsetVersion = 13;
  data.attributes = std::move(attrs);
  std::vector<Connector> inConns, outConns;
  for (const Arg &a : ins) {
    Container c = argument(a.container, a.dtype, exprs(a.shape));
    if (!a.constant.empty()) {
      // The values in the argument's dtype.
      runtime::Tensor t(a.dtype, {std::int64_t(a.constant.size())});
      for (std::size_t i = 0; i < a.constant.size(); ++i)
        t.setFromDouble(std::int64_t(i), double(a.constant[i]));
      c.constant = std::make_shared<std::vector<std::byte>>(
          t.data(), t.data() + t.byteSize());
      c.transient = true;
    } else {
      p.inputs.push_back(a.container);
    }
    p.addContainer(c);
    inConns.push_back({a.connector, a.dtype});
  }
  for (const Arg &a : outs) {
    p.addContainer(argument(a.container, a.dtype, exprs(a.shape)));
    p.outputs.push_back(a.container);
    outConns.push_back({a.connector, a.dtype});
  }
  std::vector<NodeId> inNodes;
  for (const Arg &a : ins)
    inNodes.push_back(addAccess(p, s, a.container));
  NodeId node = addLibrary(p, s, op + "0", data, inConns, outConns);
  for (std::size_t i = 0; i < ins.size(); ++i)
    addEdge(p, s, inNodes[i], "", node, ins[i].connector,
            Memlet{ins[i].container, Subset::full(exprs(ins[i].shape)), {}});
  for (const Arg &a : outs)
    addEdge(p, s, node, a.connector, addAccess(p, s, a.container), "",
            Memlet{a.container, Subset::full(exprs(a.shape)), {}});
  return p;
}

inline void expectValid(const Program &p) {
  for (const Diagnostic &d : validate(p))
    EXPECT_NE(d.severity, Severity::Error) << d.message;
}

inline runtime::Tensor random(std::vector<std::int64_t> shape, unsigned seed) {
  runtime::Tensor t(DType::F32, std::move(shape));
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (std::int64_t i = 0; i < t.elementCount(); ++i)
    t.setFromDouble(i, dist(gen));
  return t;
}

/// Seeded random tensors (seed, seed + 1, ...) for every input of `p`,
/// whose shapes must be static.
inline interp::TensorMap randomInputs(const Program &p, unsigned seed = 1) {
  interp::TensorMap inputs;
  for (const std::string &name : p.inputs) {
    std::vector<std::int64_t> shape;
    for (const Expr &d : p.container(name).shape)
      shape.push_back(*d.asConstant());
    inputs[name] = random(shape, seed++);
  }
  return inputs;
}

inline int count(const Program &p, NodeKind kind) {
  int n = 0;
  for (const State &s : p.states)
    for (const Node &node : s.nodes)
      n += node.kind == kind;
  return n;
}

inline int wcrEdges(const Program &p) {
  int n = 0;
  for (const State &s : p.states)
    for (const Edge &e : s.edges)
      n += e.memlet.wcr.has_value();
  return n;
}

inline void expectNear(const runtime::Tensor &got,
                       const std::vector<double> &want) {
  ASSERT_EQ(got.elementCount(), static_cast<std::int64_t>(want.size()));
  for (std::size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(got.getAsDouble(static_cast<std::int64_t>(i)), want[i], 1e-4)
        << "element " << i;
}

/// A Conv node whose filters W are a constant of random values.
inline Program convWithConstantFilters(const std::vector<std::int64_t> &x,
                                       const std::vector<std::int64_t> &w,
                                       const std::vector<std::int64_t> &y,
                                       Attributes attrs, bool bias) {
  std::vector<Arg> ins{{"X", "X", x}, {"W", "W", w}};
  if (bias)
    ins.push_back({"B", "B", {w[0]}});
  Program p = single("Conv", std::move(attrs), ins, {{"Y", "Y", y}});
  runtime::Tensor filters = random(w, 99);
  auto bytes = std::make_shared<std::vector<std::byte>>(
      static_cast<std::size_t>(filters.elementCount()) * 4);
  for (std::int64_t i = 0; i < filters.elementCount(); ++i) {
    float v = static_cast<float>(filters.getAsDouble(i));
    std::memcpy(bytes->data() + i * 4, &v, 4);
  }
  Container &c = p.containers.find("W")->second;
  c.constant = bytes;
  c.transient = true;
  std::erase(p.inputs, std::string("W"));
  return p;
}

} // namespace weir::expansion_testing
