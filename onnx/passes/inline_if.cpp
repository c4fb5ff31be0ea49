#include "onnx/passes/inline_if.h"

#include "onnx/passes/shape_values.h"

#include <onnx/onnx_pb.h>

#include <map>
#include <set>
#include <string>
#include <vector>

namespace weir::onnx_import {
namespace {

/// Every name `g` defines: its initializers and its nodes' outputs, at the
/// top level.
void definedNames(const onnx::GraphProto &g, std::set<std::string> &names) {
  for (const onnx::TensorProto &t : g.initializer())
    names.insert(t.name());
  for (const onnx::ValueInfoProto &v : g.input())
    names.insert(v.name());
  for (const onnx::NodeProto &n : g.node())
    for (const std::string &o : n.output())
      if (!o.empty())
        names.insert(o);
}

/// The branch an If with a constant condition takes, or null.
const onnx::GraphProto *
takenBranch(const onnx::NodeProto &n,
            const std::map<std::string, const onnx::TensorProto *> &constants) {
  if (!(n.domain().empty() || n.domain() == "ai.onnx") ||
      n.op_type() != "If" || n.input_size() != 1)
    return nullptr;
  auto c = constants.find(n.input(0));
  if (c == constants.end())
    return nullptr;
  std::optional<ShapeValue> v = shapeValueOf(*c->second);
  if (!v || v->size() != 1)
    return nullptr;
  bool cond = v->isReal() ? v->reals[0] != 0 : v->ints[0] != 0;
  for (const onnx::AttributeProto &a : n.attribute())
    if (a.name() == (cond ? "then_branch" : "else_branch") && a.has_g())
      return &a.g();
  return nullptr;
}

} // namespace

int inlineConstantIfs(onnx::ModelProto &model) {
  onnx::GraphProto &g = *model.mutable_graph();
  std::map<std::string, const onnx::TensorProto *> constants;
  for (const onnx::TensorProto &t : g.initializer())
    constants[t.name()] = &t;
  int inlined = 0;
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  std::vector<onnx::TensorProto> joining;
  for (const onnx::NodeProto &n : g.node()) {
    const onnx::GraphProto *branch = takenBranch(n, constants);
    std::set<std::string> outer, inner;
    if (branch) {
      definedNames(g, outer);
      definedNames(*branch, inner);
      for (const std::string &name : inner)
        if (outer.count(name)) {
          branch = nullptr;
          break;
        }
    }
    if (!branch || branch->output_size() != n.output_size()) {
      *nodes.Add() = n;
      continue;
    }
    // Copies first: the branch lives in `n`, which `nodes` replaces.
    for (const onnx::TensorProto &t : branch->initializer())
      joining.push_back(t);
    for (const onnx::NodeProto &inner_node : branch->node())
      *nodes.Add() = inner_node;
    for (int k = 0; k < n.output_size(); ++k) {
      if (n.output(k).empty())
        continue;
      onnx::NodeProto &id = *nodes.Add();
      id.set_op_type("Identity");
      id.set_name(n.name() + "/" + n.output(k));
      id.add_input(branch->output(k).name());
      id.add_output(n.output(k));
    }
    ++inlined;
  }
  if (inlined == 0)
    return 0;
  g.mutable_node()->Swap(&nodes);
  for (onnx::TensorProto &t : joining)
    *g.add_initializer() = std::move(t);
  return inlined;
}

} // namespace weir::onnx_import
