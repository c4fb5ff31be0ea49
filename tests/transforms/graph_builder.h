#pragma once
// Builds small operator graphs for transformation tests: containers by
// name, library nodes wired through access nodes with full-container
// memlets, the way the ONNX importer builds them.

#include "ir/mapped_tasklet.h"
#include "ir/program.h"
#include "unit/ir_builders.h"

#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace weir::transforms_testing {

using namespace weir::ir;

class GraphBuilder {
public:
  explicit GraphBuilder(std::string name) {
    p.name = std::move(name);
    p.states.emplace_back().name = "main";
  }

  GraphBuilder &input(const std::string &name, std::vector<std::int64_t> shape,
                      DType dtype = DType::F32) {
    p.addContainer(builders::argument(name, dtype, exprs(shape)));
    p.inputs.push_back(name);
    return *this;
  }
  GraphBuilder &output(const std::string &name, std::vector<std::int64_t> shape,
                       DType dtype = DType::F32) {
    p.addContainer(builders::argument(name, dtype, exprs(shape)));
    p.outputs.push_back(name);
    return *this;
  }
  GraphBuilder &transient(const std::string &name,
                          std::vector<std::int64_t> shape,
                          DType dtype = DType::F32) {
    Container c = builders::argument(name, dtype, exprs(shape));
    c.transient = true;
    p.addContainer(c);
    return *this;
  }
  template <typename T>
  GraphBuilder &constant(const std::string &name,
                         std::vector<std::int64_t> shape,
                         const std::vector<T> &values, DType dtype) {
    Container c = builders::argument(name, dtype, exprs(shape));
    c.transient = true;
    auto bytes =
        std::make_shared<std::vector<std::byte>>(values.size() * sizeof(T));
    std::memcpy(bytes->data(), values.data(), bytes->size());
    c.constant = bytes;
    p.addContainer(c);
    return *this;
  }
  GraphBuilder &constantF32(const std::string &name,
                            std::vector<std::int64_t> shape,
                            const std::vector<float> &values) {
    return constant(name, std::move(shape), values, DType::F32);
  }

  /// Starts a new state; later operators go there, reading containers
  /// through access nodes of their own.
  GraphBuilder &newState(std::string name) {
    p.states.emplace_back().name = std::move(name);
    last_.clear();
    return *this;
  }

  /// A library node reading {connector, container} pairs and writing
  /// others; returns its id.
  NodeId op(const std::string &type, const std::string &label,
            const std::vector<std::pair<std::string, std::string>> &ins,
            const std::vector<std::pair<std::string, std::string>> &outs,
            Attributes attrs = {}) {
    State &s = p.states.back();
    LibraryData data;
    data.op = type;
    data.opsetVersion = 13;
    data.attributes = std::move(attrs);
    std::vector<Connector> inConns, outConns;
    for (const auto &[conn, c] : ins)
      inConns.push_back({conn, p.container(c).dtype});
    for (const auto &[conn, c] : outs)
      outConns.push_back({conn, p.container(c).dtype});
    std::vector<NodeId> inNodes;
    for (const auto &[conn, c] : ins)
      inNodes.push_back(accessFor(c));
    NodeId node = builders::addLibrary(p, s, label, data, inConns, outConns);
    for (std::size_t i = 0; i < ins.size(); ++i)
      addEdge(p, s, inNodes[i], "", node, ins[i].first,
              Memlet{ins[i].second,
                     Subset::full(p.container(ins[i].second).shape),
                     {}});
    for (const auto &[conn, c] : outs) {
      NodeId a = addAccess(p, s, c);
      last_[c] = a;
      addEdge(p, s, node, conn, a, "",
              Memlet{c, Subset::full(p.container(c).shape), {}});
    }
    return node;
  }

  Program p;

private:
  static std::vector<Expr> exprs(const std::vector<std::int64_t> &v) {
    return {v.begin(), v.end()};
  }
  NodeId accessFor(const std::string &c) {
    auto it = last_.find(c);
    if (it != last_.end())
      return it->second;
    NodeId a = addAccess(p, p.states.back(), c);
    last_[c] = a;
    return a;
  }
  std::map<std::string, NodeId> last_;
};

/// Mapped tasklets added to the builder's last state, sharing access nodes
/// the way expansions do (cpu-parallel maps).
struct Maps {
  explicit Maps(GraphBuilder &g) : g(g) {}
  ir::MappedTaskletIds
  add(const std::string &label, std::vector<std::string> params,
      std::vector<ir::Range> ranges, std::vector<ir::MappedInput> in,
      std::string_view code, std::vector<ir::MappedOutput> out) {
    return ir::addMappedTasklet(g.p, g.p.states.back(), label, params, ranges,
                                in, code, out, access,
                                ir::Schedule::CpuParallel);
  }
  GraphBuilder &g;
  ir::AccessNodes access;
};

/// x -> a -> t1 -> b (also reads x) -> t2 -> c -> y, three elementwise maps
/// over [0:3, 0:5] (the fusion tests' chain).
inline GraphBuilder threeMapChain() {
  GraphBuilder g("three_maps");
  g.input("x", {3, 5})
      .transient("t1", {3, 5})
      .transient("t2", {3, 5})
      .output("y", {3, 5});
  Maps m(g);
  ir::Expr i0 = ir::Expr::symbol("i0"), i1 = ir::Expr::symbol("i1");
  std::vector<ir::Range> r{{0, 3}, {0, 5}};
  m.add("a", {"i0", "i1"}, r, {{"x", "x", {i0, i1}}}, "t = x * x",
        {{"t", "t1", {i0, i1}}});
  m.add("b", {"i0", "i1"}, r, {{"t", "t1", {i0, i1}}, {"x", "x", {i0, i1}}},
        "u = t - x", {{"u", "t2", {i0, i1}}});
  m.add("c", {"i0", "i1"}, r, {{"u", "t2", {i0, i1}}}, "y = exp(u)",
        {{"y", "y", {i0, i1}}});
  return g;
}

} // namespace weir::transforms_testing
