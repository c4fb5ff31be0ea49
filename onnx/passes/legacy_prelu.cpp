#include "onnx/passes/legacy_prelu.h"

#include <onnx/shape_inference/implementation.h>

#include <map>
#include <string>
#include <vector>

namespace weir::onnx_import {
namespace {

/// Static dimensions by value name, from the graph's inputs, outputs,
/// value_info and initializers; -1 for an unknown dimension.
std::map<std::string, std::vector<std::int64_t>>
knownShapes(const onnx::GraphProto &g) {
  std::map<std::string, std::vector<std::int64_t>> shapes;
  for (const auto *list : {&g.input(), &g.value_info(), &g.output()})
    for (const onnx::ValueInfoProto &v : *list) {
      if (!v.type().has_tensor_type() || !v.type().tensor_type().has_shape())
        continue;
      std::vector<std::int64_t> dims;
      for (const auto &d : v.type().tensor_type().shape().dim())
        dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
      shapes[v.name()] = dims;
    }
  for (const onnx::TensorProto &t : g.initializer())
    shapes[t.name()] = {t.dims().begin(), t.dims().end()};
  return shapes;
}

} // namespace

int adaptLegacyPReluSlopes(onnx::ModelProto &model) {
  bool any = false;
  for (const onnx::NodeProto &n : model.graph().node())
    any = any || n.op_type() == "PRelu";
  if (!any)
    return 0;
  // Shapes at the model's own opset, on a copy: the model itself is
  // inferred again after the upgrade.
  onnx::ModelProto inferred = model;
  try {
    onnx::shape_inference::InferShapes(inferred);
  } catch (const std::exception &) {
    // What the graph declares is all there is to go on.
  }
  auto shapes = knownShapes(inferred.graph());
  onnx::GraphProto &g = *model.mutable_graph();
  int changed = 0;
  const int count = g.node_size();
  for (int i = 0; i < count; ++i) {
    onnx::NodeProto &n = *g.mutable_node(i);
    if (n.op_type() != "PRelu" || n.input_size() != 2 ||
        !(n.domain().empty() || n.domain() == "ai.onnx"))
      continue;
    auto x = shapes.find(n.input(0)), slope = shapes.find(n.input(1));
    if (x == shapes.end() || slope == shapes.end() || x->second.size() <= 2 ||
        slope->second.size() != 1 || slope->second[0] < 2 ||
        slope->second[0] != x->second[1] ||
        slope->second[0] == x->second.back())
      continue;
    std::string shaped = n.input(1) + "/weir_per_channel_" + std::to_string(i);
    onnx::NodeProto unsqueeze;
    unsqueeze.set_op_type("Unsqueeze");
    unsqueeze.set_name(shaped);
    unsqueeze.add_input(n.input(1));
    unsqueeze.add_output(shaped);
    onnx::AttributeProto &axes = *unsqueeze.add_attribute();
    axes.set_name("axes");
    axes.set_type(onnx::AttributeProto::INTS);
    for (std::size_t a = 1; a + 1 < x->second.size(); ++a)
      axes.add_ints(std::int64_t(a));
    n.set_input(1, shaped);
    *g.add_node() = unsqueeze;
    ++changed;
  }
  if (changed == 0)
    return 0;
  // Each Unsqueeze must come before its PRelu: rebuild the node order with
  // every Unsqueeze placed just before the node that reads it.
  google::protobuf::RepeatedPtrField<onnx::NodeProto> ordered;
  std::map<std::string, onnx::NodeProto> added;
  for (int i = count; i < g.node_size(); ++i)
    added[g.node(i).output(0)] = g.node(i);
  for (int i = 0; i < count; ++i) {
    const onnx::NodeProto &n = g.node(i);
    if (n.op_type() == "PRelu" && n.input_size() == 2 &&
        added.count(n.input(1)))
      *ordered.Add() = added.at(n.input(1));
    *ordered.Add() = n;
  }
  g.mutable_node()->Swap(&ordered);
  return changed;
}

} // namespace weir::onnx_import
