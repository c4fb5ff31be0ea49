#pragma once
/// \file
/// The concrete dtype of every subexpression of a well-typed tasklet body:
/// what the interpreter evaluates in and what code generators emit. Types
/// flow bottom-up from connectors and casts, then down into literals, which
/// take the type of the typed operand beside them (the rule of typeCheck); a
/// literal nothing settles gets its default, i64 or f32. A literal directly
/// inside a cast takes the cast's target when it fits (`f64(0.1)`).

#include "ir/tasklet.h"

#include <map>
#include <string>
#include <vector>

namespace weir::ir::tasklet {

struct SettledTypes {
  /// Every subexpression's type (a comparison's is bool).
  std::map<const Expr *, DType> type;
  /// Comparisons: the type both operands are compared in.
  std::map<const Expr *, DType> operandType;
  /// Per statement, in order: the type of its target (an output connector's
  /// dtype, or the temporary's type, settled at its first assignment).
  std::vector<DType> targetType;
};

/// Settles the types of `code`, which must type check against the
/// connectors (see typeCheck; behaviour on ill-typed code is unspecified but
/// safe).
SettledTypes settleTypes(const Code &code, const ConnectorTypes &inputs,
                         const ConnectorTypes &outputs);

} // namespace weir::ir::tasklet
