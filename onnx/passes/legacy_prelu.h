#pragma once
/// \file
/// PRelu before opset 7 applied a [C] slope per channel (axis 1), the way
/// PyTorch's early exporter wrote PReLU; from opset 7 on the slope
/// broadcasts from the right, so ONNX's version converter, which keeps the
/// node as it is, turns such a model into one whose slope no longer fits.
/// Before the upgrade, this gives each such slope its trailing unit axes
/// (an Unsqueeze), which means the same at every opset.

#include <onnx/onnx_pb.h>

namespace weir::onnx_import {

/// For a model whose opset is below 7: every PRelu whose slope is one
/// dimension of C values, on an input of rank r > 2 whose axis 1 has C
/// values (by shape inference at the model's opset), gets its slope through
/// Unsqueeze(axes = 1 .. r - 2). Returns how many it changed.
int adaptLegacyPReluSlopes(onnx::ModelProto &model);

} // namespace weir::onnx_import
