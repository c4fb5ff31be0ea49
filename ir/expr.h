#pragma once
/// \file
/// Symbolic integer expressions: shapes, strides, map ranges and memlet
/// subsets are written in them. An Expr is an immutable, shared tree; copying
/// one is a pointer copy. Every Expr a factory or operator returns is already
/// in canonical form (see simplify), so structural equality is semantic
/// equality for the forms the simplifier normalizes (sums of products with
/// constant coefficients; constant folding of floordiv/mod/min/max).

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace weir::ir {

enum class ExprKind : std::uint8_t {
  Const,
  Sym,
  Add,      ///< n-ary sum
  Mul,      ///< n-ary product
  FloorDiv, ///< rounds toward negative infinity; binary
  Mod,      ///< sign follows the divisor (Python semantics); binary
  Min,      ///< binary
  Max,      ///< binary
};

struct ExprNode;

/// Symbol name -> value, for evaluation.
using Bindings = std::map<std::string, std::int64_t, std::less<>>;

class Expr {
public:
  /// The constant 0.
  Expr();
  Expr(std::int64_t value); // NOLINT: implicit from integers by design
  Expr(int value) : Expr(static_cast<std::int64_t>(value)) {} // NOLINT

  static Expr constant(std::int64_t value);
  /// A symbol; the name must be an identifier ([A-Za-z_][A-Za-z0-9_]*).
  static Expr symbol(std::string name);

  ExprKind kind() const;
  /// Constant value, when this is a constant.
  std::optional<std::int64_t> asConstant() const;
  bool isConstant() const { return kind() == ExprKind::Const; }
  /// Symbol name (only for kind Sym).
  const std::string &symbolName() const;
  /// Operands (empty for Const and Sym).
  const std::vector<Expr> &operands() const;

  /// Value under the bindings. Throws weir::Error naming an unbound symbol,
  /// or on division/modulo by zero, or on signed overflow.
  std::int64_t evaluate(const Bindings &bindings = {}) const;
  /// Replace symbols by expressions; the result is canonical.
  Expr substitute(const std::map<std::string, Expr, std::less<>> &map) const;
  /// Sorted, unique symbol names that occur.
  std::vector<std::string> freeSymbols() const;

  /// Canonical text: `N*4 + 2`, `floordiv(i, 8)`, `mod(i, 8)`, `min(a, b)`.
  /// parseExpr(e.str()) == e for every canonical e.
  std::string str() const;
  /// Structural hash, stable across runs and platforms.
  std::uint64_t hash() const;

  friend bool operator==(const Expr &a, const Expr &b);
  friend bool operator!=(const Expr &a, const Expr &b) { return !(a == b); }
  /// Total order (for canonical sorting and for use as map keys).
  friend bool operator<(const Expr &a, const Expr &b);

  const ExprNode *node() const { return node_.get(); }

  /// Internal: wrap a node without simplifying (the simplifier uses it).
  explicit Expr(std::shared_ptr<const ExprNode> node)
      : node_(std::move(node)) {}

private:
  std::shared_ptr<const ExprNode> node_;
};

Expr operator+(const Expr &a, const Expr &b);
Expr operator-(const Expr &a, const Expr &b);
Expr operator-(const Expr &a);
Expr operator*(const Expr &a, const Expr &b);
Expr floorDiv(const Expr &a, const Expr &b);
Expr mod(const Expr &a, const Expr &b);
Expr min(const Expr &a, const Expr &b);
Expr max(const Expr &a, const Expr &b);
/// ceil(a / b) for b > 0, as floorDiv(a + b - 1, b).
Expr ceilDiv(const Expr &a, const Expr &b);
/// The sum of every term, in one pass: adding n terms one `+` at a time
/// rebuilds the growing sum n times.
Expr sum(const std::vector<Expr> &terms);

/// Canonical form of an arbitrary tree (all factories already return it).
Expr simplify(const Expr &e);

/// Parse the text form. Accepts integers, identifiers, + - * (binary and
/// unary minus), parentheses, `//` and `%` as infix floordiv/mod, and the
/// calls floordiv(a, b), mod(a, b), min(a, b), max(a, b). Throws weir::Error
/// whose message quotes the text and the column of the problem.
Expr parseExpr(std::string_view text);

/// Writes e.str(); lets test frameworks and logs print expressions.
std::ostream &operator<<(std::ostream &os, const Expr &e);

/// Whether a <= b holds for all non-negative symbol values, as far as the
/// simplifier can prove it (false means "not proven", not "false").
bool provablyLessEqual(const Expr &a, const Expr &b);

} // namespace weir::ir

template <> struct std::hash<weir::ir::Expr> {
  std::size_t operator()(const weir::ir::Expr &e) const noexcept {
    return static_cast<std::size_t>(e.hash());
  }
};
