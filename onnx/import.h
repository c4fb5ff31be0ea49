#pragma once
/// \file
/// ONNX model -> ir::Program: one Library node per ONNX node (with all its
/// attributes), initializers as constant containers, graph inputs and outputs
/// as arguments, `dim_param` dimensions as program symbols.
///
/// The pipeline, in order: Weir's own safety checks (model_file.h) -> opset
/// upgrade with ONNX's version converter (where it can) -> ONNX's checker ->
/// ONNX shape inference with data propagation (these three in a child
/// process, onnx_passes.h) -> building the program.

#include "ir/program.h"
#include "onnx/limits.h"
#include "onnx/shape_inputs.h"

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace weir::onnx_import {

struct ImportOptions {
  ImportLimits limits;
  /// Upgrade models older than `targetOpset` with ONNX's version converter.
  bool upgradeOpset = true;
  int targetOpset = 13;
  /// Run onnx::checker::check_model after Weir's own checks.
  bool runOnnxChecker = true;
  /// ONNX's passes (onnx_passes.h) run in a child process that is stopped,
  /// and the model refused, after this many seconds.
  int passSeconds = 300;
  /// Values of symbolic dimensions (an input's `dim_param`), fixed at load
  /// before shape inference, so that the shape computations that read them
  /// fold too (`weir run --dim N=1`). A name no dimension uses is ignored.
  std::map<std::string, std::int64_t, std::less<>> dims;
  /// Values of graph inputs, fixed at load (shape_inputs.h): each becomes
  /// a constant and leaves the program's inputs, and shape specialization
  /// folds what reads it. For the inputs that decide sizes
  /// (ImportReport::shapeInputs): ReduceSum's axes, Pad's pads, a window's
  /// size.
  std::map<std::string, ir::TensorValue, std::less<>> values;
  /// Shape specialization folds the computations that start from a Shape
  /// or Size, and only those: a model with no shape arithmetic imports to
  /// the same program (the same node ids) as before specialization
  /// existed, so its saved sessions replay. True folds every small constant
  /// computation as well (an Identity of a bias, arithmetic on Constant
  /// nodes), as ONNX Runtime's constant folding does.
  bool foldConstants = false;
  /// False skips shape specialization altogether: what sessions saved
  /// before it existed replay on (workspace/session.h).
  bool specializeShapes = true;
};

struct ImportReport {
  /// Operator types Weir does not know ("domain.Op" outside the default
  /// domain), sorted and unique; those nodes are imported as unknown library
  /// nodes.
  std::vector<std::string> unsupportedOps;
  /// Things the user should know: opset upgrades, checker or shape-inference
  /// complaints that did not stop the import, values whose shapes could not
  /// be inferred.
  std::vector<std::string> notes;
  /// Why the model's shapes could not be verified ("" when they were):
  /// shape inference stopped early, or a value's type or rank could not be
  /// inferred. The program then carries ir::kShapesUnverified and can be
  /// viewed and transformed, not run.
  std::string unverifiedShapes;
  /// Graph inputs whose values decide sizes (shape_inputs.h) and that
  /// `values` did not fix: the program's shapes after them stay unknown
  /// until they are given.
  std::vector<ShapeInput> shapeInputs;
  int originalOpset = 0; ///< default-domain opset in the file
  int opset = 0;         ///< after any upgrade
};

struct ImportResult {
  ir::Program program;
  ImportReport report;
};

/// Throws weir::Error naming the file and the problem.
ImportResult importModel(const std::filesystem::path &path,
                         const ImportOptions &options = {});

} // namespace weir::onnx_import
