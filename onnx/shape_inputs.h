#pragma once
/// \file
/// Graph inputs whose values decide sizes, and fixing them at load.
///
/// Some operands are read for their value, not as data: ReduceSum's
/// `axes`, Pad's `pads`, Reshape's `shape`, a window function's `size`,
/// Range's bounds. A model whose graph input feeds one of them (directly
/// or through arithmetic, as the window functions' ONNX definitions
/// compute their Range) has output sizes that depend on that input's
/// value, so its shapes cannot be settled before the value is known.
/// TensorRT calls these shape tensors and asks for their values when it
/// builds an engine; Weir does the same: the value given at load becomes a
/// constant (ImportOptions::values), shape specialization folds what reads
/// it, and every size after it is settled. The program then no longer
/// takes that input; a different value means loading again.
///
///     for (const ShapeInput &s : shapeInputs(model.graph()))
///       ...;  // s.name, and s.decides for the message
///     fixInputs(model, {{"axes", axesValue}});

#include "ir/attribute.h"

#include <map>
#include <string>
#include <vector>

namespace onnx {
class GraphProto;
class ModelProto;
} // namespace onnx

namespace weir::onnx_import {

struct ShapeInput {
  std::string name;
  /// The first operand it reaches, for messages: "the axes of node
  /// 'ReduceSum_0' (ReduceSum)".
  std::string decides;
};

/// The graph inputs (not those an initializer gives a default) from which
/// an operand read for its value is reachable, in the graph's input order.
/// Shape and Size stop the search: their outputs depend on their input's
/// shape only. Subgraphs are not searched.
std::vector<ShapeInput> shapeInputs(const onnx::GraphProto &graph);

/// Makes each named graph input an initializer holding its value, marked
/// so that shape specialization folds what reads it. Throws weir::Error
/// naming the input when it is not a graph input, or when the value's
/// dtype or a static dimension differs from the input's declaration.
void fixInputs(onnx::ModelProto &model,
               const std::map<std::string, ir::TensorValue, std::less<>> &values);

/// "[0, 2]" or "int64 [3, 4]" (larger values): a value for messages.
std::string describeValue(const ir::TensorValue &value);

} // namespace weir::onnx_import
