#pragma once
/// \file
/// The tensor primitives Primitive nodes name, with their contracts, so
/// that expansions that place them, the reference interpreter and the code
/// generators agree on one definition.
///
/// "gemm": C = alpha * op(A) * op(B) + beta * C on f32 row-major matrices
/// (the BLAS sgemm contract). op(A) is M x K, op(B) is K x N, C is M x N.
/// Connectors: inputs "A" and "B", plus "Cin" when beta != 0 (the values
/// accumulated into: the same container as "C"); output "C". Each matrix
/// starts at the begin corner of its memlet's subset and has rows `ld`
/// elements apart; the memlet's subset covers what the matrix touches.

#include "ir/attribute.h"
#include "ir/expr.h"

namespace weir::ir {

struct PrimitiveData;

struct GemmCall {
  Expr m, n, k;
  Expr lda, ldb, ldc; ///< leading dimensions (row strides), in elements
  bool transA = false, transB = false;
  double alpha = 1, beta = 0;
};

/// The attributes of a "gemm" primitive (expressions stored as text, so
/// they may use symbols).
Attributes gemmAttributes(const GemmCall &call);
/// Reads them back; throws weir::Error naming a missing or malformed one.
GemmCall readGemm(const PrimitiveData &primitive);

} // namespace weir::ir
