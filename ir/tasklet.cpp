/// \file
/// Names of the tasklet language's operators and functions, and countOps.
/// The lexer, parser, printer and type checker live in tasklet_*.cpp.

#include "ir/tasklet.h"

#include <array>
#include <cassert>

namespace weir::ir::tasklet {
namespace {

struct FuncInfo {
  Func func;
  std::string_view name;
  int arity;
};

// Indexed by Func, in declaration order.
constexpr std::array<FuncInfo, 26> kFuncs{{
    {Func::Exp, "exp", 1},         {Func::Log, "log", 1},
    {Func::Sqrt, "sqrt", 1},       {Func::Rsqrt, "rsqrt", 1},
    {Func::Tanh, "tanh", 1},       {Func::Erf, "erf", 1},
    {Func::Abs, "abs", 1},         {Func::Min, "min", 2},
    {Func::Max, "max", 2},         {Func::Pow, "pow", 2},
    {Func::Floor, "floor", 1},     {Func::Ceil, "ceil", 1},
    {Func::Sigmoid, "sigmoid", 1}, {Func::Sin, "sin", 1},
    {Func::Cos, "cos", 1},         {Func::Tan, "tan", 1},
    {Func::Asin, "asin", 1},       {Func::Acos, "acos", 1},
    {Func::Atan, "atan", 1},       {Func::Sinh, "sinh", 1},
    {Func::Cosh, "cosh", 1},       {Func::Asinh, "asinh", 1},
    {Func::Acosh, "acosh", 1},     {Func::Atanh, "atanh", 1},
    {Func::Round, "round", 1},     {Func::Hash, "hash", 2},
}};
static_assert(kFuncs.size() == static_cast<std::size_t>(kLastFunc) + 1,
              "kFuncs must list every Func");

const FuncInfo &info(Func f) {
  const FuncInfo &i = kFuncs[static_cast<std::size_t>(f)];
  assert(i.func == f && "kFuncs out of order with Func");
  return i;
}

std::int64_t countOps(const Expr &e) {
  std::int64_t n = 0;
  switch (e.kind) {
  case ExprKind::FloatLit:
  case ExprKind::IntLit:
  case ExprKind::BoolLit:
  case ExprKind::Var:
    break;
  case ExprKind::Unary:
  case ExprKind::Binary:
  case ExprKind::Call:
  case ExprKind::Select:
  case ExprKind::Cast:
    n = 1;
    break;
  }
  for (const ExprPtr &op : e.operands)
    n += countOps(*op);
  return n;
}

} // namespace

std::string_view binaryOpText(BinaryOp op) {
  switch (op) {
  case BinaryOp::Add:
    return "+";
  case BinaryOp::Sub:
    return "-";
  case BinaryOp::Mul:
    return "*";
  case BinaryOp::Div:
    return "/";
  case BinaryOp::Mod:
    return "%";
  case BinaryOp::Eq:
    return "==";
  case BinaryOp::Ne:
    return "!=";
  case BinaryOp::Lt:
    return "<";
  case BinaryOp::Le:
    return "<=";
  case BinaryOp::Gt:
    return ">";
  case BinaryOp::Ge:
    return ">=";
  case BinaryOp::And:
    return "&&";
  case BinaryOp::Or:
    return "||";
  }
  assert(false && "unknown BinaryOp");
  return "?";
}

bool isComparison(BinaryOp op) {
  switch (op) {
  case BinaryOp::Eq:
  case BinaryOp::Ne:
  case BinaryOp::Lt:
  case BinaryOp::Le:
  case BinaryOp::Gt:
  case BinaryOp::Ge:
    return true;
  default:
    return false;
  }
}

int precedence(BinaryOp op) {
  switch (op) {
  case BinaryOp::Or:
    return 1;
  case BinaryOp::And:
    return 2;
  case BinaryOp::Eq:
  case BinaryOp::Ne:
    return 3;
  case BinaryOp::Lt:
  case BinaryOp::Le:
  case BinaryOp::Gt:
  case BinaryOp::Ge:
    return 4;
  case BinaryOp::Add:
  case BinaryOp::Sub:
    return 5;
  case BinaryOp::Mul:
  case BinaryOp::Div:
  case BinaryOp::Mod:
    return 6;
  }
  assert(false && "unknown BinaryOp");
  return 0;
}

std::string_view funcName(Func f) { return info(f).name; }

std::optional<Func> parseFunc(std::string_view name) {
  for (const FuncInfo &i : kFuncs)
    if (i.name == name)
      return i.func;
  return std::nullopt;
}

int funcArity(Func f) { return info(f).arity; }

std::int64_t countOps(const Code &code) {
  std::int64_t n = 0;
  for (const Assignment &s : code.statements)
    n += countOps(*s.value);
  return n;
}

} // namespace weir::ir::tasklet
