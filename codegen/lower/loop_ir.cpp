/// \file
/// Loop IR factories and the text printer.

#include "codegen/lower/loop_ir.h"

#include "ir/error.h"

#include <cassert>
#include <cstdio>
#include <sstream>

namespace weir::codegen {
namespace {

using ir::tasklet::BinaryOp;

bool isComparisonOrLogical(BinaryOp op) {
  return ir::tasklet::isComparison(op) || op == BinaryOp::And ||
         op == BinaryOp::Or;
}

std::shared_ptr<Value> make(ValueKind kind, ir::DType type) {
  auto v = std::make_shared<Value>();
  v->kind = kind;
  v->type = type;
  return v;
}

std::shared_ptr<Stmt> makeStmt(StmtKind kind) {
  auto s = std::make_shared<Stmt>();
  s->kind = kind;
  return s;
}

std::string literalText(const Value &v) {
  if (ir::isFloat(v.type)) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", v.f);
    std::string s = buf;
    if (s.find_first_of(".eEn") == std::string::npos)
      s += ".0";
    return s + ":" + std::string(ir::dtypeName(v.type));
  }
  if (v.type == ir::DType::Bool)
    return v.bits ? "true" : "false";
  std::string s = ir::isSignedInt(v.type)
                      ? std::to_string(static_cast<std::int64_t>(v.bits))
                      : std::to_string(v.bits);
  return s + ":" + std::string(ir::dtypeName(v.type));
}

} // namespace

ValuePtr floatLiteral(ir::DType type, double value) {
  auto v = make(ValueKind::Literal, type);
  v->f = value;
  return v;
}

ValuePtr intLiteral(ir::DType type, std::uint64_t bits) {
  auto v = make(ValueKind::Literal, type);
  v->bits = bits;
  return v;
}

ValuePtr load(ir::DType type, std::string buffer, ir::Expr index,
              GuardPtr guard) {
  auto v = make(ValueKind::Load, type);
  v->name = std::move(buffer);
  v->index = std::move(index);
  v->guard = std::move(guard);
  return v;
}

ValuePtr local(ir::DType type, std::string name) {
  auto v = make(ValueKind::Local, type);
  v->name = std::move(name);
  return v;
}

ValuePtr unary(ir::tasklet::UnaryOp op, ValuePtr a) {
  auto v = make(ValueKind::Unary,
                op == ir::tasklet::UnaryOp::Not ? ir::DType::Bool : a->type);
  v->unaryOp = op;
  v->operands = {std::move(a)};
  return v;
}

ValuePtr binary(BinaryOp op, ValuePtr a, ValuePtr b) {
  assert(a->type == b->type && "binary operands must have one type");
  bool boolean = isComparisonOrLogical(op);
  auto v = make(ValueKind::Binary, boolean ? ir::DType::Bool : a->type);
  v->binaryOp = op;
  v->operandType = a->type;
  v->operands = {std::move(a), std::move(b)};
  return v;
}

ValuePtr call(ir::tasklet::Func f, ir::DType type, std::vector<ValuePtr> args) {
  auto v = make(ValueKind::Call, type);
  v->func = f;
  v->operands = std::move(args);
  return v;
}

ValuePtr select(ValuePtr cond, ValuePtr then, ValuePtr otherwise) {
  auto v = make(ValueKind::Select, then->type);
  v->operands = {std::move(cond), std::move(then), std::move(otherwise)};
  return v;
}

ValuePtr cast(ir::DType to, ValuePtr value) {
  if (value->type == to)
    return value;
  auto v = make(ValueKind::Cast, to);
  v->operands = {std::move(value)};
  return v;
}

bool hasIntegerDivision(const Value &v) {
  if (v.kind == ValueKind::Binary && !ir::isFloat(v.type) &&
      (v.binaryOp == BinaryOp::Div || v.binaryOp == BinaryOp::Mod))
    return true;
  for (const ValuePtr &op : v.operands)
    if (hasIntegerDivision(*op))
      return true;
  return false;
}

const char *forKindName(ForKind k) {
  switch (k) {
  case ForKind::Serial:
    return "for";
  case ForKind::Parallel:
    return "parallel for";
  case ForKind::Vectorized:
    return "vectorized for";
  }
  return "for";
}

std::size_t statementCount(const Stmt &s) {
  std::size_t count = 0;
  std::vector<const Stmt *> todo = {&s};
  while (!todo.empty()) {
    const Stmt *at = todo.back();
    todo.pop_back();
    ++count;
    for (const StmtPtr &child : at->body)
      todo.push_back(child.get());
  }
  return count;
}

StmtPtr block(std::vector<StmtPtr> body) {
  auto s = makeStmt(StmtKind::Block);
  s->body = std::move(body);
  return s;
}

StmtPtr forLoop(std::string var, ir::Expr begin, ir::Expr end, ir::Expr step,
                ForKind kind, std::vector<StmtPtr> body, std::string label) {
  auto s = makeStmt(StmtKind::For);
  s->var = std::move(var);
  s->begin = std::move(begin);
  s->end = std::move(end);
  s->step = std::move(step);
  s->forKind = kind;
  s->body = std::move(body);
  s->label = std::move(label);
  return s;
}

StmtPtr allocate(std::string buffer, ir::DType dtype, ir::Expr size,
                 std::vector<StmtPtr> body, bool zeroFill) {
  auto s = makeStmt(StmtKind::Allocate);
  s->buffer = std::move(buffer);
  s->dtype = dtype;
  s->size = std::move(size);
  s->body = std::move(body);
  s->zeroFill = zeroFill;
  return s;
}

StmtPtr store(std::string buffer, ir::Expr index, ValuePtr value,
              GuardPtr guard) {
  auto s = makeStmt(StmtKind::Store);
  s->buffer = std::move(buffer);
  s->index = std::move(index);
  s->value = std::move(value);
  s->guard = std::move(guard);
  return s;
}

StmtPtr assign(std::string var, ValuePtr value) {
  auto s = makeStmt(StmtKind::Assign);
  s->var = std::move(var);
  s->value = std::move(value);
  return s;
}

StmtPtr ifThen(ValuePtr cond, std::vector<StmtPtr> body) {
  auto s = makeStmt(StmtKind::If);
  s->value = std::move(cond);
  s->body = std::move(body);
  return s;
}

CallArg CallArg::pointer(std::string buffer, ir::DType dtype, ir::Expr offset) {
  CallArg a;
  a.kind = Kind::Pointer;
  a.buffer = std::move(buffer);
  a.dtype = dtype;
  a.expr = std::move(offset);
  return a;
}

CallArg CallArg::integer(ir::Expr value) {
  CallArg a;
  a.kind = Kind::Int;
  a.expr = std::move(value);
  return a;
}

CallArg CallArg::real(double value) {
  CallArg a;
  a.kind = Kind::Float;
  a.f = value;
  return a;
}

StmtPtr callStmt(std::string callee, std::vector<CallArg> args,
                 std::string label) {
  auto s = makeStmt(StmtKind::Call);
  s->callee = std::move(callee);
  s->args = std::move(args);
  s->label = std::move(label);
  return s;
}

std::string print(const Value &v) {
  auto operand = [&](std::size_t i) { return print(*v.operands[i]); };
  switch (v.kind) {
  case ValueKind::Literal:
    return literalText(v);
  case ValueKind::Load:
    // A checked access reads `checked A[...]`.
    return std::string(v.guard ? "checked " : "") + v.name + "[" +
           v.index.str() + "]";
  case ValueKind::Local:
    return v.name;
  case ValueKind::Unary:
    return std::string(v.unaryOp == ir::tasklet::UnaryOp::Neg ? "-" : "!") +
           "(" + operand(0) + ")";
  case ValueKind::Binary:
    return "(" + operand(0) + " " +
           std::string(ir::tasklet::binaryOpText(v.binaryOp)) + " " +
           operand(1) + ")";
  case ValueKind::Call: {
    std::string s = std::string(ir::tasklet::funcName(v.func)) + "(";
    for (std::size_t i = 0; i < v.operands.size(); ++i)
      s += (i ? ", " : "") + operand(i);
    return s + ")";
  }
  case ValueKind::Select:
    return "select(" + operand(0) + ", " + operand(1) + ", " + operand(2) + ")";
  case ValueKind::Cast:
    return std::string(ir::dtypeName(v.type)) + "(" + operand(0) + ")";
  }
  return "?";
}

namespace {

/// Appends `s` to `out`: one output string, so nesting costs no copies (a
/// model's transients nest hundreds deep).
void printTo(const Stmt &s, int indent, std::string &out) {
  std::string pad(static_cast<std::size_t>(indent) * 2, ' ');
  auto body = [&](const std::vector<StmtPtr> &stmts) {
    for (const StmtPtr &b : stmts)
      printTo(*b, indent + 1, out);
  };
  switch (s.kind) {
  case StmtKind::Block:
    for (const StmtPtr &b : s.body)
      printTo(*b, indent, out);
    return;
  case StmtKind::For: {
    out += pad;
    out.append(forKindName(s.forKind)).append(" ").append(s.var);
    out.append(" in ").append(s.begin.str()).append(":").append(s.end.str());
    if (s.step != ir::Expr(1))
      out.append(":").append(s.step.str());
    out += " {";
    if (!s.label.empty())
      out.append("  # ").append(s.label);
    out += "\n";
    body(s.body);
    out.append(pad).append("}\n");
    return;
  }
  case StmtKind::Allocate:
    out.append(pad).append("allocate ").append(s.buffer).append(": ");
    out.append(ir::dtypeName(s.dtype)).append("[").append(s.size.str());
    out.append(s.zeroFill ? "] {\n"
                          : "] {  # not cleared: written whole first\n");
    body(s.body);
    out.append(pad).append("}\n");
    return;
  case StmtKind::Store:
    out.append(pad).append(s.guard ? "checked " : "").append(s.buffer);
    out.append("[").append(s.index.str());
    out.append("] = ").append(print(*s.value)).append("\n");
    return;
  case StmtKind::Assign:
    out.append(pad).append(s.var).append(": ");
    out.append(ir::dtypeName(s.value->type)).append(" = ");
    out.append(print(*s.value)).append("\n");
    return;
  case StmtKind::If:
    out.append(pad).append("if ").append(print(*s.value)).append(" {\n");
    body(s.body);
    out.append(pad).append("}\n");
    return;
  case StmtKind::Call: {
    out.append(pad).append("call ").append(s.callee).append("(");
    for (std::size_t i = 0; i < s.args.size(); ++i) {
      const CallArg &a = s.args[i];
      out += i ? ", " : "";
      switch (a.kind) {
      case CallArg::Kind::Pointer:
        out.append("&").append(a.buffer).append("[").append(a.expr.str());
        out += "]";
        break;
      case CallArg::Kind::Int:
        out += a.expr.str();
        break;
      case CallArg::Kind::Float: {
        Value lit;
        lit.type = ir::DType::F64;
        lit.f = a.f;
        out += literalText(lit);
        break;
      }
      }
    }
    out += ")";
    if (!s.label.empty())
      out.append("  # ").append(s.label);
    out += "\n";
    return;
  }
  }
}

} // namespace

std::string print(const Stmt &s, int indent) {
  std::string out;
  printTo(s, indent, out);
  return out;
}

std::string print(const LoopFunction &f) {
  std::string out = "func " + f.name + "(";
  bool first = true;
  for (const BufferParam &b : f.buffers) {
    out += (first ? "" : ", ") + b.name + ": " +
           std::string(ir::dtypeName(b.dtype)) + "[";
    for (std::size_t d = 0; d < b.shape.size(); ++d)
      out += (d ? ", " : "") + b.shape[d].str();
    out += "]";
    out += b.role == BufferParam::Role::Input    ? " in"
           : b.role == BufferParam::Role::Output ? " out"
                                                 : " const";
    first = false;
  }
  for (const std::string &sym : f.symbols) {
    out += (first ? "" : ", ") + sym + ": i64";
    first = false;
  }
  out += ") {\n";
  if (f.body)
    printTo(*f.body, 1, out);
  return out + "}\n";
}

} // namespace weir::codegen
