#include "onnx/passes/explicit_defaults.h"

#include <onnx/onnx_pb.h>

#include <algorithm>

namespace weir::onnx_import {

int writeOutDefaults(onnx::ModelProto &model) {
  int written = 0;
  for (onnx::NodeProto &n : *model.mutable_graph()->mutable_node()) {
    if (!(n.domain().empty() || n.domain() == "ai.onnx") ||
        n.op_type() != "STFT")
      continue;
    const auto &attrs = n.attribute();
    if (std::any_of(attrs.begin(), attrs.end(),
                    [](const onnx::AttributeProto &a) {
                      return a.name() == "onesided";
                    }))
      continue;
    onnx::AttributeProto &a = *n.add_attribute();
    a.set_name("onesided");
    a.set_type(onnx::AttributeProto::INT);
    a.set_i(1);
    ++written;
  }
  return written;
}

} // namespace weir::onnx_import
