#pragma once
/// \file
/// The tasklet expression language: the scalar code inside a Tasklet node.
/// Tasklets are always written in it, never in opaque C++, so every tier and
/// backend can read them.
///
/// A tasklet body is a list of assignments, one per line or separated by ';':
///
///     t = a * b
///     out = select(t > 0, t, 0.1 * t)
///
/// Targets are output connectors or local temporaries (a temporary must be
/// assigned before it is read). Expressions: float and integer literals
/// (`1`, `2.5`, `1e-5`), `true`/`false`, identifiers (input connectors and
/// temporaries), unary `-` and `!`, binary `+ - * / %`, comparisons
/// `== != < <= > >=`, `&&`, `||`, parentheses, the calls exp, log, sqrt,
/// rsqrt, tanh, erf, abs, min, max, pow, floor, ceil, sigmoid, sin, cos,
/// tan, asin, acos, atan, sinh, cosh, asinh, acosh, atanh, round (half to
/// even, as ONNX Round and numpy.round), `select(cond, a, b)`, and casts
/// written as a dtype name called like a function: `f32(x)`, `i64(x)`,
/// `bool(x)`.

#include "ir/dtype.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace weir::ir::tasklet {

enum class ExprKind : std::uint8_t {
  FloatLit,
  IntLit,
  BoolLit,
  Var,
  Unary,
  Binary,
  Call,
  Select,
  Cast,
};

enum class UnaryOp : std::uint8_t { Neg, Not };
enum class BinaryOp : std::uint8_t {
  Add,
  Sub,
  Mul,
  Div,
  Mod,
  Eq,
  Ne,
  Lt,
  Le,
  Gt,
  Ge,
  And,
  Or,
};
enum class Func : std::uint8_t {
  Exp,
  Log,
  Sqrt,
  Rsqrt,
  Tanh,
  Erf,
  Abs,
  Min,
  Max,
  Pow,
  Floor,
  Ceil,
  Sigmoid,
  Sin,
  Cos,
  Tan,
  Asin,
  Acos,
  Atan,
  Sinh,
  Cosh,
  Asinh,
  Acosh,
  Atanh,
  Round,
  /// hash(seed, counter) on 64-bit integers: output `counter` of the
  /// SplitMix64 generator seeded with `seed` (tasklet_math.h), the same on
  /// every engine; counter-based, so parallel maps draw random numbers
  /// without shared state.
  Hash,
};
/// The last Func, for loops over all of them.
inline constexpr Func kLastFunc = Func::Hash;

std::string_view binaryOpText(BinaryOp op); ///< "+", "<=", "&&", ...
std::string_view funcName(Func f);          ///< "exp", "rsqrt", ...
std::optional<Func> parseFunc(std::string_view name);
int funcArity(Func f);
/// Binding strength of a binary operator: 1 for `||`, 2 `&&`, 3 `== !=`,
/// 4 `< <= > >=`, 5 `+ -`, 6 `* / %`; unary `-` and `!` bind tighter than
/// all of them. Every binary operator is left-associative. Printers of
/// tasklet code in other languages use this to place parentheses.
int precedence(BinaryOp op);
/// `== != < <= > >=`: compare two operands of one type, giving bool.
bool isComparison(BinaryOp op);

/// Immutable expression node; shared between program versions.
struct Expr;
using ExprPtr = std::shared_ptr<const Expr>;

struct Expr {
  ExprKind kind;
  double floatValue = 0;     ///< FloatLit
  std::int64_t intValue = 0; ///< IntLit, BoolLit (0/1)
  std::string name;          ///< Var
  UnaryOp unaryOp = UnaryOp::Neg;
  BinaryOp binaryOp = BinaryOp::Add;
  Func func = Func::Exp;
  DType castTo = DType::F32;     ///< Cast
  std::vector<ExprPtr> operands; ///< Unary: 1, Binary: 2, Call: arity,
                                 ///< Select: cond, then, else; Cast: 1
};

struct Assignment {
  std::string target;
  ExprPtr value;
};

/// A parsed tasklet body.
struct Code {
  std::vector<Assignment> statements;
};

/// Parse a body. Throws weir::Error with the line and column of the problem
/// and a quote of the offending text. Expressions nested more than
/// kMaxExprDepth levels deep are rejected, so that the recursive passes over
/// a parsed body cannot exhaust the stack.
Code parse(std::string_view text);
inline constexpr int kMaxExprDepth = 1000;
/// Canonical text: one statement per line, minimal parentheses, floats
/// printed so that they parse back to the same double (round-trip exact).
/// parse(print(c)) prints identically.
std::string print(const Code &code);
std::string print(const Expr &expr);

/// Number of arithmetic operations one execution performs (each unary,
/// binary, call, select and cast counts one; literals and vars count zero).
std::int64_t countOps(const Code &code);

/// Connector name -> dtype.
using ConnectorTypes = std::map<std::string, DType, std::less<>>;

/// One problem found by typeCheck.
struct TypeIssue {
  std::string message; ///< names the statement, variable or connector
};

/// Check the body against the connectors' dtypes: every variable read is an
/// input connector or an earlier temporary; every output connector is
/// assigned; no assignment targets an input; operand types agree (numeric
/// promotion only through explicit casts, except that literals adopt the
/// other operand's type); conditions of select, && and || are bool; math
/// functions take floats; the value assigned to an output has its dtype.
/// Returns all issues found (empty when the body is well typed).
std::vector<TypeIssue> typeCheck(const Code &code, const ConnectorTypes &inputs,
                                 const ConnectorTypes &outputs);

/// Type of one expression whose variables have the types in `vars`, by the
/// rules of typeCheck. A literal with no typed operand to adopt gets its
/// default type: i64 for integers, f32 for floats. Returns nullopt and
/// appends the reasons to `issues` when the expression is ill typed.
std::optional<DType> inferType(const Expr &expr, const ConnectorTypes &vars,
                               std::vector<TypeIssue> &issues);

} // namespace weir::ir::tasklet
