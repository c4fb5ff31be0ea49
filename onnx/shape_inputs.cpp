#include "onnx/shape_inputs.h"

#include "ir/error.h"
#include "ir/float16.h"
#include "onnx/passes/shape_folding.h"
#include "onnx/tensor_data.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <sstream>
#include <string_view>

namespace weir::onnx_import {
namespace {

/// An operand read for its value: input `index` of `op`, named as the
/// operator's definition names it.
struct ValueOperand {
  std::string_view op;
  int index;
  std::string_view name;
};

/// Operands whose value decides an output's shape, or that an expansion
/// needs as a constant (Dropout's training_mode, CumSum's axis). An index
/// an older opset gives as an attribute instead is simply absent there.
constexpr ValueOperand kValueOperands[] = {
    {"Reshape", 1, "shape"},
    {"Expand", 1, "shape"},
    {"Tile", 1, "repeats"},
    {"ConstantOfShape", 0, "input"},
    {"Range", 0, "start"},
    {"Range", 1, "limit"},
    {"Range", 2, "delta"},
    {"Slice", 1, "starts"},
    {"Slice", 2, "ends"},
    {"Slice", 3, "axes"},
    {"Slice", 4, "steps"},
    {"Pad", 1, "pads"},
    {"Pad", 3, "axes"},
    {"Squeeze", 1, "axes"},
    {"Unsqueeze", 1, "axes"},
    {"Split", 1, "split"},
    {"ReduceSum", 1, "axes"},
    {"ReduceMean", 1, "axes"},
    {"ReduceMax", 1, "axes"},
    {"ReduceMin", 1, "axes"},
    {"ReduceProd", 1, "axes"},
    {"ReduceL1", 1, "axes"},
    {"ReduceL2", 1, "axes"},
    {"ReduceLogSum", 1, "axes"},
    {"ReduceLogSumExp", 1, "axes"},
    {"ReduceSumSquare", 1, "axes"},
    {"Resize", 2, "scales"},
    {"Resize", 3, "sizes"},
    {"Upsample", 1, "scales"},
    {"TopK", 1, "K"},
    {"OneHot", 1, "depth"},
    {"CumSum", 1, "axis"},
    {"Dropout", 2, "training_mode"},
    {"CenterCropPad", 1, "shape"},
    {"MaxUnpool", 2, "output_shape"},
    {"If", 0, "cond"},
    {"HannWindow", 0, "size"},
    {"HammingWindow", 0, "size"},
    {"BlackmanWindow", 0, "size"},
    {"MelWeightMatrix", 0, "num_mel_bins"},
    {"MelWeightMatrix", 1, "dft_length"},
    {"MelWeightMatrix", 2, "sample_rate"},
    {"MelWeightMatrix", 3, "lower_edge_hertz"},
    {"MelWeightMatrix", 4, "upper_edge_hertz"},
    {"STFT", 1, "frame_step"},
    {"STFT", 3, "frame_length"},
    {"DFT", 1, "dft_length"},
};

bool defaultDomain(const onnx::NodeProto &n) {
  return n.domain().empty() || n.domain() == "ai.onnx";
}

std::string nodeName(const onnx::NodeProto &n, int index) {
  std::string name =
      n.name().empty() ? n.op_type() + "_" + std::to_string(index) : n.name();
  return "node '" + name + "' (" + n.op_type() + ")";
}

std::string shapeText(const std::vector<std::int64_t> &dims) {
  std::string s = "[";
  for (std::size_t k = 0; k < dims.size(); ++k)
    s += (k ? ", " : "") + std::to_string(dims[k]);
  return s + "]";
}

std::string declaredText(const onnx::TensorShapeProto &shape) {
  std::string s = "[";
  for (int k = 0; k < shape.dim_size(); ++k) {
    const auto &d = shape.dim(k);
    s += (k ? ", " : "") + (d.has_dim_value() ? std::to_string(d.dim_value())
                            : d.has_dim_param() ? d.dim_param()
                                                : std::string("?"));
  }
  return s + "]";
}

} // namespace

std::vector<ShapeInput> shapeInputs(const onnx::GraphProto &g) {
  std::map<std::string, int, std::less<>> producer;
  for (int i = 0; i < g.node_size(); ++i)
    for (const std::string &out : g.node(i).output())
      if (!out.empty())
        producer[out] = i;
  std::set<std::string, std::less<>> initializers;
  for (const onnx::TensorProto &t : g.initializer())
    initializers.insert(t.name());

  // Each value an operand reads for its value, and what it decides; then
  // everything those values are computed from, up to the graph's inputs.
  std::map<std::string, std::string, std::less<>> reached; // value -> decides
  std::vector<std::string> work;
  for (int i = 0; i < g.node_size(); ++i) {
    const onnx::NodeProto &n = g.node(i);
    if (!defaultDomain(n))
      continue;
    for (const ValueOperand &v : kValueOperands)
      if (v.op == n.op_type() && v.index < n.input_size() &&
          !n.input(v.index).empty() &&
          reached
              .emplace(n.input(v.index),
                       "the " + std::string(v.name) + " of " + nodeName(n, i))
              .second)
        work.push_back(n.input(v.index));
  }
  while (!work.empty()) {
    std::string value = std::move(work.back());
    work.pop_back();
    auto p = producer.find(value);
    if (p == producer.end())
      continue;
    const onnx::NodeProto &n = g.node(p->second);
    if (n.op_type() == "Shape" || n.op_type() == "Size")
      continue;
    const std::string decides = reached.at(value);
    for (const std::string &in : n.input())
      if (!in.empty() && reached.emplace(in, decides).second)
        work.push_back(in);
  }
  std::vector<ShapeInput> found;
  for (const onnx::ValueInfoProto &v : g.input())
    if (auto r = reached.find(v.name());
        r != reached.end() && !initializers.count(v.name()))
      found.push_back({v.name(), r->second});
  return found;
}

void fixInputs(
    onnx::ModelProto &model,
    const std::map<std::string, ir::TensorValue, std::less<>> &values) {
  onnx::GraphProto &g = *model.mutable_graph();
  for (const auto &[name, value] : values) {
    auto *inputs = g.mutable_input();
    auto it = std::find_if(
        inputs->begin(), inputs->end(),
        [&](const onnx::ValueInfoProto &v) { return v.name() == name; });
    if (it == inputs->end())
      throw Error("a value was given for '" + name +
                  "', which is not one of the model's inputs");
    const std::string who = "the value given for input '" + name + "'";
    const onnx::TypeProto::Tensor &declared = it->type().tensor_type();
    if (auto d = dtypeFromOnnx(declared.elem_type()); d && *d != value.dtype)
      throw Error(who + " is " + std::string(ir::dtypeName(value.dtype)) +
                  "; the model declares " +
                  std::string(ir::dtypeName(*d)));
    if (declared.has_shape()) {
      const auto &dims = declared.shape().dim();
      bool fits = dims.size() == int(value.shape.size());
      for (int k = 0; fits && k < dims.size(); ++k)
        fits = !dims[k].has_dim_value() ||
               dims[k].dim_value() == value.shape[std::size_t(k)];
      if (!fits)
        throw Error(who + " has shape " + shapeText(value.shape) +
                    "; the model declares " + declaredText(declared.shape()));
    }
    std::size_t bytes = ir::dtypeSize(value.dtype);
    for (std::int64_t d : value.shape) {
      if (d < 0)
        throw Error(who + " has a negative dimension");
      bytes *= std::size_t(d);
    }
    if (!value.data || value.data->size() != bytes)
      throw Error(who + " holds " +
                  std::to_string(value.data ? value.data->size() : 0) +
                  " bytes where its dtype and shape take " +
                  std::to_string(bytes));
    onnx::TensorProto &t = *g.add_initializer();
    t.set_name(name);
    t.set_data_type(onnxDataType(value.dtype));
    for (std::int64_t d : value.shape)
      t.add_dims(d);
    t.set_raw_data(std::string(reinterpret_cast<const char *>(
                                   value.data->data()),
                               value.data->size()));
    t.set_doc_string(kFoldedDoc);
    inputs->erase(it);
  }
}

std::string describeValue(const ir::TensorValue &value) {
  std::int64_t count = 1;
  for (std::int64_t d : value.shape)
    count *= d;
  std::ostringstream s;
  if (count > 16 || !value.data) {
    return std::string(ir::dtypeName(value.dtype)) + " " +
           shapeText(value.shape);
  }
  const std::byte *at = value.data->data();
  auto element = [&](std::int64_t i) -> std::string {
    const std::byte *p = at + std::size_t(i) * ir::dtypeSize(value.dtype);
    auto read = [&](auto v) {
      std::memcpy(&v, p, sizeof v);
      return v;
    };
    std::ostringstream e;
    switch (value.dtype) {
    case ir::DType::F32: e << read(float{}); break;
    case ir::DType::F64: e << read(double{}); break;
    case ir::DType::F16: e << ir::halfToFloat(read(std::uint16_t{})); break;
    case ir::DType::BF16:
      e << ir::bfloat16ToFloat(read(std::uint16_t{}));
      break;
    case ir::DType::I8: e << int(read(std::int8_t{})); break;
    case ir::DType::U8: e << int(read(std::uint8_t{})); break;
    case ir::DType::I16: e << read(std::int16_t{}); break;
    case ir::DType::U16: e << read(std::uint16_t{}); break;
    case ir::DType::I32: e << read(std::int32_t{}); break;
    case ir::DType::U32: e << read(std::uint32_t{}); break;
    case ir::DType::I64: e << read(std::int64_t{}); break;
    case ir::DType::U64: e << read(std::uint64_t{}); break;
    case ir::DType::Bool: e << (read(std::uint8_t{}) ? "true" : "false"); break;
    }
    return e.str();
  };
  if (value.shape.empty())
    return element(0);
  s << "[";
  for (std::int64_t i = 0; i < count; ++i)
    s << (i ? ", " : "") << element(i);
  s << "]";
  return s.str();
}

} // namespace weir::onnx_import
