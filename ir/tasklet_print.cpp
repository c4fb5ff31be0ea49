/// \file
/// Canonical text of tasklet code: the fewest parentheses the precedence
/// table allows, and literals that parse back to exactly the same value.

#include "ir/tasklet.h"

#include <cassert>
#include <charconv>
#include <cmath>
#include <limits>

namespace weir::ir::tasklet {
namespace {

// Binding strength of forms that are not binary operators, on the scale of
// precedence(BinaryOp).
constexpr int kUnaryPrec = 7;
constexpr int kPrimaryPrec = 8;

/// How tightly the printed form of `e` binds. Literals the grammar cannot
/// spell directly print as small expressions and bind like those.
int printedPrec(const Expr &e) {
  switch (e.kind) {
  case ExprKind::FloatLit:
    if (!std::isfinite(e.floatValue))
      return precedence(BinaryOp::Div);
    return std::signbit(e.floatValue) ? kUnaryPrec : kPrimaryPrec;
  case ExprKind::IntLit:
    if (e.intValue == std::numeric_limits<std::int64_t>::min())
      return precedence(BinaryOp::Sub);
    return e.intValue < 0 ? kUnaryPrec : kPrimaryPrec;
  case ExprKind::Unary:
    return kUnaryPrec;
  case ExprKind::Binary:
    return precedence(e.binaryOp);
  case ExprKind::BoolLit:
  case ExprKind::Var:
  case ExprKind::Call:
  case ExprKind::Select:
  case ExprKind::Cast:
    return kPrimaryPrec;
  }
  assert(false && "unknown ExprKind");
  return kPrimaryPrec;
}

void printFloat(std::string &out, double v) {
  // The grammar has no infinity or NaN; these divisions evaluate to them.
  if (std::isnan(v)) {
    out += "0.0 / 0.0";
    return;
  }
  if (std::isinf(v)) {
    out += v < 0 ? "-1.0 / 0.0" : "1.0 / 0.0";
    return;
  }
  // Shortest text that reads back as the same double (so 0.1 stays "0.1",
  // not "0.10000000000000001"), and independent of the C locale.
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  assert(ec == std::errc());
  std::string_view text(buf, static_cast<std::size_t>(end - buf));
  out += text;
  // "1" would read back as an integer literal.
  if (text.find_first_of(".eE") == std::string_view::npos)
    out += ".0";
}

void printInt(std::string &out, std::int64_t v) {
  // The literal 9223372036854775808 does not fit, so the minimum cannot be
  // written as the negation of one.
  if (v == std::numeric_limits<std::int64_t>::min()) {
    out += "-9223372036854775807 - 1";
    return;
  }
  out += std::to_string(v);
}

void print(std::string &out, const Expr &e);

/// Prints `e`, in parentheses when it binds less tightly than `minPrec`.
void printOperand(std::string &out, const Expr &e, int minPrec) {
  bool parens = printedPrec(e) < minPrec;
  if (parens)
    out += '(';
  print(out, e);
  if (parens)
    out += ')';
}

void printArgs(std::string &out, std::string_view callee, const Expr &e) {
  out += callee;
  out += '(';
  for (std::size_t i = 0; i < e.operands.size(); ++i) {
    if (i > 0)
      out += ", ";
    print(out, *e.operands[i]);
  }
  out += ')';
}

void print(std::string &out, const Expr &e) {
  switch (e.kind) {
  case ExprKind::FloatLit:
    printFloat(out, e.floatValue);
    return;
  case ExprKind::IntLit:
    printInt(out, e.intValue);
    return;
  case ExprKind::BoolLit:
    out += e.intValue != 0 ? "true" : "false";
    return;
  case ExprKind::Var:
    out += e.name;
    return;
  case ExprKind::Unary:
    assert(e.operands.size() == 1);
    out += e.unaryOp == UnaryOp::Neg ? '-' : '!';
    printOperand(out, *e.operands[0], kUnaryPrec);
    return;
  case ExprKind::Binary: {
    assert(e.operands.size() == 2);
    int prec = precedence(e.binaryOp);
    // Left-associative: an equally binding right operand keeps its
    // parentheses, so a - (b - c) survives and (a - b) - c loses them.
    printOperand(out, *e.operands[0], prec);
    out += ' ';
    out += binaryOpText(e.binaryOp);
    out += ' ';
    printOperand(out, *e.operands[1], prec + 1);
    return;
  }
  case ExprKind::Call:
    printArgs(out, funcName(e.func), e);
    return;
  case ExprKind::Select:
    printArgs(out, "select", e);
    return;
  case ExprKind::Cast:
    printArgs(out, dtypeName(e.castTo), e);
    return;
  }
  assert(false && "unknown ExprKind");
}

} // namespace

std::string print(const Expr &expr) {
  std::string out;
  print(out, expr);
  return out;
}

std::string print(const Code &code) {
  std::string out;
  for (const Assignment &s : code.statements) {
    out += s.target;
    out += " = ";
    print(out, *s.value);
    out += '\n';
  }
  return out;
}

} // namespace weir::ir::tasklet
