#pragma once
/// \file
/// ONNX element types and TensorProto contents in Weir's terms.

#include "ir/attribute.h"
#include "ir/dtype.h"

#include <optional>
#include <string>

namespace onnx {
class TensorProto;
} // namespace onnx

namespace weir::onnx_import {

/// Weir's dtype for an ONNX TensorProto::DataType; nullopt for string,
/// complex and undefined types.
std::optional<ir::DType> dtypeFromOnnx(int dataType);
/// The ONNX TensorProto::DataType of a Weir dtype.
int onnxDataType(ir::DType dtype);
/// "string", "complex64", ... for messages.
std::string onnxTypeName(int dataType);

/// The tensor's contents, densely packed little-endian in Weir's dtype.
/// `who` names the tensor in error messages. The tensor must already have
/// passed checkAndInlineModel (no external data left).
ir::TensorValue tensorValue(const onnx::TensorProto &t, const std::string &who);

} // namespace weir::onnx_import
