#pragma once
/// \file
/// Numpy-style (ONNX multidirectional) broadcasting for expansions: the
/// index an input of shape `inShape` is read at, inside a map over the
/// output's shape.

#include "ir/expr.h"

#include <vector>

namespace weir::operators {

/// Shapes align on the right; a dimension of size 1 (where the output's is
/// not) is read at 0, every other dimension at the output's index.
std::vector<ir::Expr> broadcastIndex(const std::vector<ir::Expr> &inShape,
                                     const std::vector<ir::Expr> &outShape,
                                     const std::vector<ir::Expr> &outIndex);

} // namespace weir::operators
