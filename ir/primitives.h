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
///
/// An optional epilogue (epilogue fusion, transforms/fusion/) rewrites each
/// element of C once the product is complete: tasklet code (attribute
/// "epilogue") that reads `acc`, the f32 value alpha·op(A)·op(B) + beta·C
/// of the element, and any number of operand connectors, and assigns the
/// f32 output `C`. Operand `x` is an input connector of the node; for
/// element (i, j) of C it reads element `begin + i·x.row + j·x.col` of its
/// memlet's container (begin: the flat offset of the memlet's begin
/// corner; attributes "x.row" and "x.col", non-negative expressions; 0
/// broadcasts). Operands never name C's container.

#include "ir/attribute.h"
#include "ir/expr.h"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace weir::ir {

struct PrimitiveData;
struct Connector;
namespace tasklet {
struct Code;
}

/// An epilogue operand: an input connector and its strides per row and
/// column of C, in elements.
struct GemmOperand {
  std::string connector;
  Expr row, col;
};

struct GemmCall {
  Expr m, n, k;
  Expr lda, ldb, ldc; ///< leading dimensions (row strides), in elements
  bool transA = false, transB = false;
  double alpha = 1, beta = 0;
  std::string epilogue; ///< tasklet code; "" for none
  std::vector<GemmOperand> operands;
};

/// Connector names the gemm contract reserves: no epilogue operand may use
/// them.
bool isGemmReservedName(std::string_view name);

/// The attributes of a "gemm" primitive (expressions stored as text, so
/// they may use symbols).
Attributes gemmAttributes(const GemmCall &call);
/// Reads them back; throws weir::Error naming a missing or malformed one.
GemmCall readGemm(const PrimitiveData &primitive);

/// The epilogue's code parsed and type-checked against the node's input
/// connectors: `acc` is f32, each operand has its connector's dtype, and
/// `C` (f32) is assigned. Every operand must be an input connector and
/// every input connector but A, B and Cin an operand. Throws weir::Error
/// naming the problem; null when the call has no epilogue.
std::shared_ptr<const tasklet::Code>
gemmEpilogue(const GemmCall &call, const std::vector<Connector> &inputs);

} // namespace weir::ir
