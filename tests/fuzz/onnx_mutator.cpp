#include "tests/fuzz/onnx_mutator.h"

#include <onnx/onnx_pb.h>

#include <array>
#include <random>
#include <vector>

namespace weir::fuzz {
namespace {

using Rng = std::mt19937;

template <typename T> T pick(Rng &rng, std::initializer_list<T> choices) {
  return *(choices.begin() + rng() % choices.size());
}

/// A value that breaks assumptions: small, zero, negative, off by one,
/// or huge.
std::int64_t nastyInt(Rng &rng, std::int64_t was) {
  switch (rng() % 8) {
  case 0:
    return 0;
  case 1:
    return -1;
  case 2:
    return was + 1;
  case 3:
    return was - 1;
  case 4:
    return was * 2;
  case 5:
    return std::int64_t(1) << (rng() % 63);
  case 6:
    return -(std::int64_t(1) << (rng() % 63));
  default:
    return static_cast<std::int64_t>(rng() % 17);
  }
}

void mutateShape(onnx::TensorShapeProto &shape, Rng &rng) {
  int dims = shape.dim_size();
  switch (dims == 0 ? 0 : rng() % 5) {
  case 0:
    shape.add_dim()->set_dim_value(nastyInt(rng, 1));
    return;
  case 1:
    shape.mutable_dim()->RemoveLast();
    return;
  case 2:
    shape.mutable_dim(rng() % dims)
        ->set_dim_param(pick<const char *>(rng, {"N", "batch", "", "1x"}));
    return;
  default: {
    auto *d = shape.mutable_dim(rng() % dims);
    d->set_dim_value(nastyInt(rng, d->has_dim_value() ? d->dim_value() : 1));
    return;
  }
  }
}

/// The shapes a graph declares: inputs, outputs and value_info.
std::vector<onnx::ValueInfoProto *> declaredValues(onnx::GraphProto &g) {
  std::vector<onnx::ValueInfoProto *> v;
  for (auto &x : *g.mutable_input())
    v.push_back(&x);
  for (auto &x : *g.mutable_output())
    v.push_back(&x);
  for (auto &x : *g.mutable_value_info())
    v.push_back(&x);
  return v;
}

bool mutateDeclaredValue(onnx::GraphProto &g, Rng &rng) {
  std::vector<onnx::ValueInfoProto *> values = declaredValues(g);
  if (values.empty())
    return false;
  onnx::ValueInfoProto *v = values[rng() % values.size()];
  auto *type = v->mutable_type()->mutable_tensor_type();
  if (rng() % 6 == 0)
    type->set_elem_type(static_cast<int>(rng() % 20));
  else if (rng() % 8 == 0)
    type->clear_shape();
  else
    mutateShape(*type->mutable_shape(), rng);
  return true;
}

bool mutateAttribute(onnx::GraphProto &g, Rng &rng) {
  if (g.node_size() == 0)
    return false;
  onnx::NodeProto &n = *g.mutable_node(rng() % g.node_size());
  if (n.attribute_size() == 0 || rng() % 5 == 0) {
    // A new attribute the operator may or may not know.
    onnx::AttributeProto *a = n.add_attribute();
    a->set_name(pick<const char *>(rng, {"axis", "group", "kernel_shape",
                                         "pads", "strides", "perm", "keepdims",
                                         "alpha", "transA", "dilations"}));
    a->set_type(onnx::AttributeProto::INTS);
    for (int k = rng() % 5; k-- > 0;)
      a->add_ints(nastyInt(rng, 1));
    return true;
  }
  onnx::AttributeProto &a = *n.mutable_attribute(rng() % n.attribute_size());
  switch (a.type()) {
  case onnx::AttributeProto::INT:
    a.set_i(nastyInt(rng, a.i()));
    break;
  case onnx::AttributeProto::FLOAT:
    a.set_f(pick<float>(rng, {0.f, -1.f, 1e30f, -1e-30f, a.f() * 2}));
    break;
  case onnx::AttributeProto::INTS:
    if (a.ints_size() == 0 || rng() % 4 == 0)
      a.add_ints(nastyInt(rng, 1));
    else if (rng() % 3 == 0)
      a.mutable_ints()->RemoveLast();
    else {
      int k = rng() % a.ints_size();
      a.set_ints(k, nastyInt(rng, a.ints(k)));
    }
    break;
  default:
    a.set_type(pick(rng, {onnx::AttributeProto::INT, onnx::AttributeProto::INTS,
                          onnx::AttributeProto::FLOAT}));
  }
  return true;
}

bool mutateInitializer(onnx::GraphProto &g, Rng &rng) {
  if (g.initializer_size() == 0)
    return false;
  onnx::TensorProto &t = *g.mutable_initializer(rng() % g.initializer_size());
  switch (rng() % 5) {
  case 0:
    if (t.dims_size() > 0) {
      int k = rng() % t.dims_size();
      t.set_dims(k, nastyInt(rng, t.dims(k)));
    } else {
      t.add_dims(nastyInt(rng, 1));
    }
    break;
  case 1:
    t.add_dims(pick<std::int64_t>(rng, {1, 2, 0}));
    break;
  case 2:
    t.set_data_type(static_cast<int>(rng() % 17));
    break;
  case 3:
    if (t.has_raw_data())
      t.mutable_raw_data()->resize(rng() % (t.raw_data().size() + 16));
    break;
  default:
    if (t.dims_size() > 0)
      t.mutable_dims()->RemoveLast();
  }
  return true;
}

bool mutateNode(onnx::GraphProto &g, Rng &rng) {
  if (g.node_size() == 0)
    return false;
  int which = rng() % g.node_size();
  onnx::NodeProto &n = *g.mutable_node(which);
  // Value names a node could read: graph inputs, initializers, outputs of
  // earlier nodes.
  std::vector<std::string> names;
  for (const auto &i : g.input())
    names.push_back(i.name());
  for (const auto &i : g.initializer())
    names.push_back(i.name());
  for (int k = 0; k < which; ++k)
    for (const auto &o : g.node(k).output())
      names.push_back(o);
  switch (rng() % 6) {
  case 0:
    n.set_op_type(pick<const char *>(
        rng, {"Add", "Relu", "Conv", "MatMul", "Gemm", "Transpose", "Reshape",
              "Concat", "MaxPool", "Softmax", "Flatten", "Slice", "Gather",
              "ReduceMean", "BatchNormalization", "Identity", "Mul"}));
    break;
  case 1:
    if (n.input_size() > 0)
      n.mutable_input()->RemoveLast();
    break;
  case 2:
    if (!names.empty())
      n.add_input(names[rng() % names.size()]);
    break;
  case 3:
    if (!names.empty() && n.input_size() > 0)
      n.set_input(rng() % n.input_size(), names[rng() % names.size()]);
    break;
  case 4:
    g.mutable_node()->DeleteSubrange(which, 1);
    break;
  default:
    *g.add_node() = n; // the same outputs written twice
  }
  return true;
}

} // namespace

std::optional<std::string> mutateModel(std::string_view bytes,
                                       std::uint32_t seed) {
  onnx::ModelProto model;
  if (!model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return std::nullopt;
  Rng rng(seed);
  onnx::GraphProto &g = *model.mutable_graph();
  // A few tries: a kind of change may not apply to this model.
  for (int tries = 0; tries < 8; ++tries) {
    bool changed = false;
    switch (rng() % 8) {
    case 0:
    case 1:
      changed = mutateDeclaredValue(g, rng);
      break;
    case 2:
    case 3:
    case 4:
      changed = mutateAttribute(g, rng);
      break;
    case 5:
      changed = mutateInitializer(g, rng);
      break;
    case 6:
      changed = mutateNode(g, rng);
      break;
    default:
      if (model.opset_import_size() > 0)
        model.mutable_opset_import(0)->set_version(
            pick<std::int64_t>(rng, {1, 7, 11, 12, 13, 17, 19, 99}));
      changed = true;
    }
    if (changed)
      break;
  }
  std::string out;
  model.SerializeToString(&out);
  return out;
}

} // namespace weir::fuzz
