#pragma once
/// \file
/// Internal: the node behind an Expr. Only the expression implementation and
/// tests that need to build unsimplified trees include this.

#include "ir/expr.h"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace weir::ir {

struct ExprNode {
  ExprKind kind = ExprKind::Const;
  std::int64_t value = 0; ///< Const only
  std::string name;       ///< Sym only
  std::vector<Expr> operands;
  /// Set on nodes the simplifier produced, so simplify() of a canonical
  /// Expr is free and factories can take any Expr without re-walking it.
  bool canonical = false;
};

/// A node exactly as given, without simplification. Most code wants the
/// factories in expr.h instead; this exists for the simplifier and for tests
/// that must compare a raw tree against its canonical form.
inline Expr rawExpr(ExprKind kind, std::vector<Expr> operands) {
  auto node = std::make_shared<ExprNode>();
  node->kind = kind;
  node->operands = std::move(operands);
  return Expr(std::shared_ptr<const ExprNode>(std::move(node)));
}

inline Expr rawConstant(std::int64_t value) {
  auto node = std::make_shared<ExprNode>();
  node->value = value;
  return Expr(std::shared_ptr<const ExprNode>(std::move(node)));
}

inline Expr rawSymbol(std::string name) {
  auto node = std::make_shared<ExprNode>();
  node->kind = ExprKind::Sym;
  node->name = std::move(name);
  return Expr(std::shared_ptr<const ExprNode>(std::move(node)));
}

/// Structural three-way comparison behind Expr's operator< (kind, then
/// value or name, then operands lexicographically).
int compareExpr(const Expr &a, const Expr &b);

/// Python floor division; the caller has excluded b == 0 and the one
/// overflowing case (INT64_MIN // -1).
std::int64_t pyFloorDiv(std::int64_t a, std::int64_t b);
/// Python modulo (sign follows the divisor); b != 0.
std::int64_t pyMod(std::int64_t a, std::int64_t b);

} // namespace weir::ir
