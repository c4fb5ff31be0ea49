#pragma once
/// \file
/// Reading an ONNX model file safely: size caps, protobuf parsing with its
/// recursion limit, structural checks (nesting, tensor dims and types,
/// references to undefined values), and external data read only from inside
/// the model's folder. Runs before ONNX's own checker and shape inference,
/// which have crashed on hostile models.

#include "onnx/limits.h"

#include <filesystem>
#include <string>

namespace onnx {
class ModelProto;
} // namespace onnx

namespace weir::onnx_import {

/// Parse the protobuf in `path`. Throws weir::Error naming the file and the
/// problem (not a regular file, too large, truncated or corrupt).
void parseModelFile(const std::filesystem::path &path,
                    const ImportLimits &limits, onnx::ModelProto &model);

/// Check the model's structure and pull every external-data tensor into
/// `raw_data` so later stages never touch the file system. `baseDir` is the
/// folder the model was read from; external data must lie inside it.
/// Throws weir::Error naming the tensor and the problem.
void checkAndInlineModel(onnx::ModelProto &model,
                         const std::filesystem::path &baseDir,
                         const ImportLimits &limits);

} // namespace weir::onnx_import
