#pragma once
/// \file
/// Whether a model's declared value shapes agree with what its operators
/// compute. A file may declare `pool1_out` as [1, 16, 108, 16] while the
/// MaxPool that makes it computes [1, 16, 16, 16] (a damaged or hostile
/// file); a program built from the declaration would size its buffers from
/// one shape and index them with the other. ONNX's shape inference stops at
/// the first such disagreement without naming the value; this finds it.

#include <onnx/onnx_pb.h>

#include <optional>
#include <string>

namespace weir::onnx_import {

/// Infers every value's shape from the graph inputs and initializers alone
/// (the declared value_info and output shapes set aside) and compares each
/// declaration with it. Returns the first disagreement, naming the value,
/// both shapes and the node that computes it, or nullopt when there is none
/// (or inference fails even without the declarations).
std::optional<std::string>
declaredShapeMismatch(const onnx::ModelProto &model);

} // namespace weir::onnx_import
