#pragma once
/// \file
/// Shape specialization at load: the shape computations an exporter writes
/// (`Shape -> Gather -> Div -> Slice` for ShuffleNet's channel split, a
/// Transformer's head split) become constants once the inputs' shapes are
/// fixed, the way ONNX Runtime folds them when it creates a session. ONNX's
/// shape inference leaves the sizes downstream of them unknown; after
/// folding, a second inference settles them.

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

namespace weir::onnx_import {

/// The doc string of the initializers shape specialization makes, so that
/// the next round knows they were computed from shapes; inputs fixed at
/// load (shape_inputs.h) carry it too, so that what reads them folds.
inline constexpr const char *kFoldedDoc =
    "folded by Weir's shape specialization";

struct FoldedShapes {
  int nodes = 0;                 ///< nodes replaced by initializers
  std::vector<std::string> ops;  ///< their operator types, sorted, unique
};

/// Evaluates every top-level node of `model` that computes on shapes — a
/// Shape or Size whose input's shape is static after shape inference, or a
/// node with an input such a node (or one folded after it) computed — and
/// whose other inputs are constants (small initializers, Constant nodes);
/// with `everyConstant`, also nodes whose inputs are all constants;
/// replaces each such node by initializers for the outputs other nodes
/// read, appended after the model's own initializers (whose order is
/// kept), and drops the Constant nodes only folded nodes read. A node
/// whose output is a graph output, or that shapeValues cannot evaluate,
/// stays. Run shape inference again afterwards.
FoldedShapes foldShapeComputations(onnx::ModelProto &model,
                                   bool everyConstant = false);

} // namespace weir::onnx_import
