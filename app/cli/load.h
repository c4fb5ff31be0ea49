#pragma once
/// \file
/// Opening what the user names on the command line: an ONNX model, a Weir
/// program (JSON with its binary sidecar) or a session.

#include "ir/program.h"
#include "onnx/import.h"

#include <map>
#include <optional>
#include <string>

namespace weir::cli {

struct Loaded {
  ir::Program program;
  onnx_import::ImportReport report; ///< empty for a program file
  bool fromOnnx = false;
  /// For a session: whether its program came from the program cache
  /// (workspace/program_cache.h) rather than from replaying its recipe.
  std::optional<bool> sessionFromCache;
};

/// `.json` files are Weir programs, `.weir` files sessions (the model with
/// its recipe replayed); everything else is read as ONNX, with the symbolic
/// dimensions `dims` names fixed at load (onnx_import::ImportOptions::dims:
/// the shape computations that read them fold). Programs and sessions keep
/// their symbols; `dims` binds them when they run. `values` fixes ONNX
/// inputs at load (onnx_import::ImportOptions::values).
Loaded loadAny(const std::string &path, const ir::Bindings &dims = {},
               const std::map<std::string, ir::TensorValue, std::less<>>
                   &values = {});

} // namespace weir::cli
