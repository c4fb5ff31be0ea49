#include "onnx/passes/shape_consistency.h"

#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <map>
#include <vector>

namespace weir::onnx_import {
namespace {

/// Dimensions as text ("[1, 16, N, 16]"); a dimension with neither a
/// value nor a name prints as "?".
std::string shapeText(const onnx::TensorShapeProto &shape) {
  std::string out = "[";
  for (int i = 0; i < shape.dim_size(); ++i) {
    const onnx::TensorShapeProto::Dimension &d = shape.dim(i);
    out += i ? ", " : "";
    out += d.has_dim_value()   ? std::to_string(d.dim_value())
           : d.has_dim_param() ? d.dim_param()
                               : "?";
  }
  return out + "]";
}

const onnx::TensorShapeProto *tensorShape(const onnx::ValueInfoProto &v) {
  if (!v.has_type() || !v.type().has_tensor_type() ||
      !v.type().tensor_type().has_shape())
    return nullptr;
  return &v.type().tensor_type().shape();
}

/// Whether two shapes contradict each other: different ranks, or a
/// dimension both give as a number with different numbers.
bool contradict(const onnx::TensorShapeProto &a,
                const onnx::TensorShapeProto &b) {
  if (a.dim_size() != b.dim_size())
    return true;
  for (int i = 0; i < a.dim_size(); ++i)
    if (a.dim(i).has_dim_value() && b.dim(i).has_dim_value() &&
        a.dim(i).dim_value() != b.dim(i).dim_value())
      return true;
  return false;
}

} // namespace

std::optional<std::string>
declaredShapeMismatch(const onnx::ModelProto &model) {
  onnx::ModelProto bare = model;
  onnx::GraphProto &g = *bare.mutable_graph();
  g.clear_value_info();
  for (onnx::ValueInfoProto &out : *g.mutable_output())
    if (out.has_type() && out.type().has_tensor_type())
      out.mutable_type()->mutable_tensor_type()->clear_shape();
  try {
    onnx::ShapeInferenceOptions options(/*check_type=*/false,
                                        /*error_mode=*/0,
                                        /*data_prop=*/true);
    onnx::shape_inference::InferShapes(bare, onnx::OpSchemaRegistry::Instance(),
                                       options);
  } catch (const std::exception &) {
    return std::nullopt; // not a disagreement with the declarations
  }
  std::map<std::string, const onnx::TensorShapeProto *> inferred;
  for (const onnx::ValueInfoProto &v : g.value_info())
    if (const onnx::TensorShapeProto *s = tensorShape(v))
      inferred[v.name()] = s;
  for (const onnx::ValueInfoProto &v : g.output())
    if (const onnx::TensorShapeProto *s = tensorShape(v))
      inferred[v.name()] = s;
  std::map<std::string, const onnx::NodeProto *> producer;
  for (const onnx::NodeProto &n : model.graph().node())
    for (const std::string &out : n.output())
      producer[out] = &n;

  std::vector<const onnx::ValueInfoProto *> declared;
  for (const onnx::ValueInfoProto &v : model.graph().value_info())
    declared.push_back(&v);
  for (const onnx::ValueInfoProto &v : model.graph().output())
    declared.push_back(&v);
  for (const onnx::ValueInfoProto *v : declared) {
    const onnx::TensorShapeProto *said = tensorShape(*v);
    auto computed = inferred.find(v->name());
    if (!said || computed == inferred.end() ||
        !contradict(*said, *computed->second))
      continue;
    std::string by = "the graph";
    if (auto p = producer.find(v->name()); p != producer.end())
      by = "node '" + p->second->name() + "' (" + p->second->op_type() + ")";
    return "value '" + v->name() + "' is declared " + shapeText(*said) +
           ", but " + by + " computes " + shapeText(*computed->second) +
           ": the model's declared shapes disagree with its operators";
  }
  return std::nullopt;
}

} // namespace weir::onnx_import
