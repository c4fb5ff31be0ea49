#include "onnx/passes/shape_folding.h"

#include "onnx/passes/shape_values.h"

#include <algorithm>
#include <map>
#include <set>

namespace weir::onnx_import {
namespace {

using Dims = std::vector<std::int64_t>;

/// A value's dimensions where its type gives a rank: each known or not.
using PartialDims = std::vector<std::optional<std::int64_t>>;
std::optional<PartialDims> partialShape(const onnx::TypeProto &type) {
  if (!type.has_tensor_type() || !type.tensor_type().has_shape())
    return std::nullopt;
  PartialDims dims;
  for (const onnx::TensorShapeProto::Dimension &d :
       type.tensor_type().shape().dim())
    dims.push_back(d.has_dim_value() && d.dim_value() >= 0
                       ? std::optional<std::int64_t>(d.dim_value())
                       : std::nullopt);
  return dims;
}

/// The dimensions when every one is known.
std::optional<Dims> staticShape(const PartialDims &partial) {
  Dims dims;
  for (const std::optional<std::int64_t> &d : partial) {
    if (!d)
      return std::nullopt;
    dims.push_back(*d);
  }
  return dims;
}

/// `Gather(Shape(x), i)` where dimension i of x is static though others are
/// not (`x.size(1)` under a symbolic batch): the dimensions `partial` gives
/// for Shape's output, the indices a constant.
std::optional<ShapeValue> gatherFromPartial(const PartialDims &partial,
                                            const ShapeValue &indices,
                                            std::int64_t axis) {
  if (axis != 0 || indices.isReal() || indices.dims.size() > 1 ||
      indices.type == onnx::TensorProto::BOOL)
    return std::nullopt;
  ShapeValue out{onnx::TensorProto::INT64, indices.dims, {}, {}};
  auto rank = std::int64_t(partial.size());
  for (std::int64_t i : indices.ints) {
    if (i < -rank || i >= rank)
      return std::nullopt;
    const std::optional<std::int64_t> &d =
        partial[std::size_t(i < 0 ? i + rank : i)];
    if (!d)
      return std::nullopt;
    out.ints.push_back(*d);
  }
  return out;
}

/// A Constant node's value, when it is one Weir folds.
std::optional<ShapeValue> constantValue(const onnx::NodeProto &n) {
  if (n.output_size() != 1 || n.attribute_size() != 1)
    return std::nullopt;
  const onnx::AttributeProto &a = n.attribute(0);
  ShapeValue v;
  if (a.name() == "value")
    return shapeValueOf(a.t());
  if (a.name() == "value_int" || a.name() == "value_ints") {
    v.ints = a.name() == "value_int" ? Dims{a.i()}
                                     : Dims(a.ints().begin(), a.ints().end());
  } else if (a.name() == "value_float" || a.name() == "value_floats") {
    v.type = onnx::TensorProto::FLOAT;
    v.reals = a.name() == "value_float"
                  ? std::vector<double>{a.f()}
                  : std::vector<double>(a.floats().begin(), a.floats().end());
  } else {
    return std::nullopt;
  }
  if (a.name() == "value_ints" || a.name() == "value_floats")
    v.dims = {v.size()};
  if (v.size() > kMaxFoldedElements)
    return std::nullopt;
  return v;
}

/// Every value the nodes of `g`'s subgraphs (If, Loop and Scan bodies, at
/// any depth) read.
void subgraphReads(const onnx::NodeProto &n, std::set<std::string> &reads) {
  for (const onnx::AttributeProto &a : n.attribute()) {
    std::vector<const onnx::GraphProto *> graphs;
    if (a.has_g())
      graphs.push_back(&a.g());
    for (const onnx::GraphProto &g : a.graphs())
      graphs.push_back(&g);
    for (const onnx::GraphProto *g : graphs)
      for (const onnx::NodeProto &inner : g->node()) {
        reads.insert(inner.input().begin(), inner.input().end());
        subgraphReads(inner, reads);
      }
  }
}

bool defaultDomain(const onnx::NodeProto &n) {
  return n.domain().empty() || n.domain() == "ai.onnx";
}

} // namespace

FoldedShapes foldShapeComputations(onnx::ModelProto &model,
                                   bool everyConstant) {
  onnx::GraphProto &g = *model.mutable_graph();
  std::map<std::string, ShapeValue, std::less<>> known;
  std::map<std::string, Dims, std::less<>> shapes;
  for (const onnx::TensorProto &t : g.initializer()) {
    if (std::optional<ShapeValue> v = shapeValueOf(t))
      known.emplace(t.name(), std::move(*v));
    shapes[t.name()] = Dims(t.dims().begin(), t.dims().end());
  }
  std::map<std::string, PartialDims, std::less<>> partials;
  for (const auto *list : {&g.input(), &g.value_info(), &g.output()})
    for (const onnx::ValueInfoProto &v : *list) {
      std::optional<PartialDims> p = partialShape(v.type());
      if (!p)
        continue;
      if (std::optional<Dims> dims = staticShape(*p))
        shapes.emplace(v.name(), std::move(*dims));
      else
        partials.emplace(v.name(), std::move(*p));
    }
  // Shape outputs whose input has a rank but not every dimension: what a
  // Gather of them can still fold (below).
  std::map<std::string, PartialDims, std::less<>> partialShapes;
  std::set<std::string> graphOutputs;
  for (const onnx::ValueInfoProto &v : g.output())
    graphOutputs.insert(v.name());

  // Values computed from a shape: Shape and Size outputs, what folded
  // nodes make from them, and the initializers an earlier round folded
  // (they carry kFoldedDoc).
  std::set<std::string> fromShapes;
  for (int i = 0; i < g.initializer_size(); ++i)
    if (g.initializer(i).doc_string() == kFoldedDoc)
      fromShapes.insert(g.initializer(i).name());
  FoldedShapes result;
  std::vector<bool> folded(std::size_t(g.node_size()), false);
  std::set<std::string> readByFolded;
  for (int i = 0; i < g.node_size(); ++i) {
    const onnx::NodeProto &n = g.node(i);
    if (!defaultDomain(n))
      continue;
    if (n.op_type() == "Constant") {
      if (std::optional<ShapeValue> v = constantValue(n))
        known.emplace(n.output(0), std::move(*v));
      continue;
    }
    if (n.output_size() != 1 || graphOutputs.count(n.output(0)))
      continue;
    const bool ofShape = n.op_type() == "Shape" || n.op_type() == "Size";
    NodeInputs in;
    bool ready = true;
    for (int k = 0; k < n.input_size() && ready; ++k) {
      const std::string &name = n.input(k);
      auto v = name.empty() ? known.end() : known.find(name);
      in.values.push_back(v == known.end() ? nullptr : &v->second);
      ready = name.empty() || v != known.end() || (ofShape && k == 0);
    }
    if (ofShape && n.input_size() > 0) {
      auto s = shapes.find(n.input(0));
      auto p = partials.find(n.input(0));
      if (ready && s == shapes.end() && p != partials.end() &&
          n.op_type() == "Shape" && n.attribute_size() == 0)
        partialShapes[n.output(0)] = p->second;
      ready = ready && s != shapes.end();
      if (ready)
        in.shape0 = s->second;
    }
    bool onShapes = ofShape;
    for (const std::string &name : n.input())
      onShapes = onShapes || fromShapes.count(name) > 0 ||
                 partialShapes.count(name) > 0;
    std::optional<std::vector<ShapeValue>> out =
        ready ? evaluateNode(n, in) : std::nullopt;
    // Integer and boolean values computed from constants alone are shape
    // and index arithmetic too (an expand's target written as
    // Where(Equal(c, ConstantOfShape(k) * -1), ...)); real ones fold only
    // from shapes, or when every constant is asked for.
    if (out && !onShapes && !everyConstant &&
        !std::all_of(out->begin(), out->end(),
                     [](const ShapeValue &v) { return !v.isReal(); }))
      out.reset();
    if (!out && n.op_type() == "Gather" && n.input_size() == 2 &&
        partialShapes.count(n.input(0)) && known.count(n.input(1)))
      if (std::optional<ShapeValue> v = gatherFromPartial(
              partialShapes.at(n.input(0)), known.at(n.input(1)),
              [&] {
                for (const onnx::AttributeProto &a : n.attribute())
                  if (a.name() == "axis")
                    return a.i();
                return std::int64_t(0);
              }()))
        out = std::vector<ShapeValue>{std::move(*v)};
    if (!out || out->size() != 1)
      continue;
    fromShapes.insert(n.output(0));
    shapes[n.output(0)] = (*out)[0].dims;
    known[n.output(0)] = std::move((*out)[0]);
    folded[std::size_t(i)] = true;
    readByFolded.insert(n.input().begin(), n.input().end());
    ++result.nodes;
    result.ops.push_back(n.op_type());
  }
  if (result.nodes == 0)
    return result;

  // What the nodes that stay read, at any depth, and the graph's outputs.
  std::set<std::string> needed(graphOutputs);
  for (int i = 0; i < g.node_size(); ++i) {
    if (folded[std::size_t(i)])
      continue;
    needed.insert(g.node(i).input().begin(), g.node(i).input().end());
    subgraphReads(g.node(i), needed);
  }
  google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
  for (int i = 0; i < g.node_size(); ++i) {
    onnx::NodeProto &n = *g.mutable_node(i);
    if (folded[std::size_t(i)]) {
      if (needed.count(n.output(0))) {
        onnx::TensorProto &t = *g.add_initializer();
        t = tensorOf(known.at(n.output(0)), n.output(0));
        t.set_doc_string(kFoldedDoc);
      }
      continue;
    }
    // A Constant or Shape only folded nodes read goes with them.
    bool dead = (n.op_type() == "Constant" || n.op_type() == "Shape") &&
                defaultDomain(n) && n.output_size() == 1 &&
                readByFolded.count(n.output(0)) && !needed.count(n.output(0));
    if (!dead)
      kept.Add()->Swap(&n);
  }
  g.mutable_node()->Swap(&kept);
  std::sort(result.ops.begin(), result.ops.end());
  result.ops.erase(std::unique(result.ops.begin(), result.ops.end()),
                   result.ops.end());
  return result;
}

} // namespace weir::onnx_import
