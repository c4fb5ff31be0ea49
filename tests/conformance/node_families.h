#pragma once
// Which ONNX node tests fall in the families Weir leaves out: sequence,
// optional, string and training operators and values.

#include <onnx/onnx_pb.h>

#include <filesystem>
#include <set>
#include <string>

namespace weir::testing_support {

inline const std::filesystem::path kNodeTests =
    "/usr/share/libonnx-testdata/data/node";

inline bool isExcludedOp(const onnx::NodeProto &n) {
  static const std::set<std::string> kOps{
      "SequenceConstruct", "SequenceAt",         "SequenceEmpty",
      "SequenceErase",     "SequenceInsert",     "SequenceLength",
      "SequenceMap",       "SplitToSequence",    "ConcatFromSequence",
      "Optional",          "OptionalGetElement", "OptionalHasElement",
      "StringNormalizer",  "RegexFullMatch",     "StringSplit",
      "StringConcat"};
  return n.domain() == "ai.onnx.preview.training" || kOps.count(n.op_type());
}

inline bool isExcludedType(const onnx::TypeProto &t) {
  if (t.has_sequence_type() || t.has_optional_type() || t.has_map_type())
    return true;
  return t.has_tensor_type() &&
         t.tensor_type().elem_type() == onnx::TensorProto::STRING;
}

/// Why a model falls in an excluded family, or "" when it does not.
inline std::string excludedFamily(const onnx::GraphProto &g) {
  for (const auto *list : {&g.input(), &g.output(), &g.value_info()})
    for (const onnx::ValueInfoProto &v : *list)
      if (isExcludedType(v.type()))
        return "value '" + v.name() + "' has a sequence/optional/string type";
  for (const onnx::TensorProto &t : g.initializer())
    if (t.data_type() == onnx::TensorProto::STRING)
      return "string initializer";
  for (const onnx::NodeProto &n : g.node()) {
    if (isExcludedOp(n))
      return "operator " + n.op_type();
    for (const onnx::AttributeProto &a : n.attribute()) {
      if (a.has_t() && a.t().data_type() == onnx::TensorProto::STRING)
        return "string tensor attribute";
      if (a.has_g())
        if (std::string why = excludedFamily(a.g()); !why.empty())
          return why;
    }
  }
  return "";
}

} // namespace weir::testing_support
