#pragma once
/// \file
/// What the matrix-product expansions share (linalg.cpp): the iteration
/// space of a numpy-semantics MatMul, which the float and the quantized
/// products (quantized_linalg.cpp) both sum over.

#include "transforms/operators/expansion.h"

#include <string>
#include <vector>

namespace weir::operators {

/// MatMul's iteration space for Y = A·B: the batch dimensions (broadcast),
/// then i (A's rows, unless A is a vector), j (B's columns, unless B is a
/// vector) and k, the summed dimension, last; and each operand's index in
/// those parameters. Fails naming the node on shapes that do not fit.
struct MatMulSpace {
  std::vector<std::string> params;
  std::vector<ir::Range> ranges;
  std::vector<ir::Expr> aIndex, bIndex, yIndex;
  bool aVector = false, bVector = false;
};
MatMulSpace matMulSpace(ExpansionContext &ctx, const ir::Container &a,
                        const ir::Container &b, const ir::Container &y);

} // namespace weir::operators
