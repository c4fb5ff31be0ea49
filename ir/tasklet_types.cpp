/// \file
/// Settling the concrete types of tasklet subexpressions (see the header).

#include "ir/tasklet_types.h"

#include <optional>

namespace weir::ir::tasklet {
namespace {

class Settler {
public:
  explicit Settler(SettledTypes &out) : out_(out) {}

  enum class Lit : std::uint8_t { None, Int, Float };
  struct Ty {
    DType dtype;
    Lit lit = Lit::None;
  };

  static bool fits(Ty t, DType to) {
    switch (t.lit) {
    case Lit::None:
      return t.dtype == to;
    case Lit::Int:
      return isFloat(to) || isInteger(to);
    case Lit::Float:
      return isFloat(to);
    }
    return false;
  }

  static Ty unify(Ty a, Ty b) {
    if (a.lit != Lit::None && b.lit != Lit::None)
      return a.lit == Lit::Float ? a : b;
    return a.lit == Lit::None ? a : b;
  }

  /// Bottom-up type; literals stay marked until settled.
  Ty infer(const Expr &e) {
    if (auto it = memo_.find(&e); it != memo_.end())
      return it->second;
    Ty t{DType::Bool};
    switch (e.kind) {
    case ExprKind::FloatLit:
      t = {DType::F32, Lit::Float};
      break;
    case ExprKind::IntLit:
      t = {DType::I64, Lit::Int};
      break;
    case ExprKind::BoolLit:
      break;
    case ExprKind::Var: {
      auto it = vars.find(e.name);
      t = {it == vars.end() ? DType::F32 : it->second};
      break;
    }
    case ExprKind::Unary:
      if (e.unaryOp == UnaryOp::Neg)
        t = infer(*e.operands[0]);
      break;
    case ExprKind::Binary:
      if (e.binaryOp != BinaryOp::And && e.binaryOp != BinaryOp::Or &&
          !isComparison(e.binaryOp))
        t = unify(infer(*e.operands[0]), infer(*e.operands[1]));
      break;
    case ExprKind::Call:
      t = infer(*e.operands[0]);
      if (e.operands.size() == 2)
        t = unify(t, infer(*e.operands[1]));
      break;
    case ExprKind::Select:
      t = unify(infer(*e.operands[1]), infer(*e.operands[2]));
      break;
    case ExprKind::Cast:
      t = {e.castTo};
      break;
    }
    memo_.emplace(&e, t);
    return t;
  }

  /// Records the concrete type of `e` and its operands, where `want` is the
  /// type the context expects.
  DType settle(const Expr &e, std::optional<DType> want) {
    Ty t = infer(e);
    DType type = t.lit != Lit::None && want && fits(t, *want) ? *want : t.dtype;
    out_.type[&e] = type;
    switch (e.kind) {
    case ExprKind::FloatLit:
    case ExprKind::IntLit:
    case ExprKind::BoolLit:
    case ExprKind::Var:
      break;
    case ExprKind::Unary:
      settle(*e.operands[0], type);
      break;
    case ExprKind::Binary: {
      DType operands = type;
      if (e.binaryOp == BinaryOp::And || e.binaryOp == BinaryOp::Or) {
        operands = DType::Bool;
      } else if (isComparison(e.binaryOp)) {
        operands = unify(infer(*e.operands[0]), infer(*e.operands[1])).dtype;
        out_.operandType[&e] = operands;
      }
      settle(*e.operands[0], operands);
      settle(*e.operands[1], operands);
      break;
    }
    case ExprKind::Call:
      for (const ExprPtr &op : e.operands)
        settle(*op, type);
      break;
    case ExprKind::Select:
      settle(*e.operands[0], DType::Bool);
      settle(*e.operands[1], type);
      settle(*e.operands[2], type);
      break;
    case ExprKind::Cast: {
      const Expr &op = *e.operands[0];
      Ty inner = infer(op);
      settle(op, inner.lit != Lit::None && fits(inner, e.castTo) ? e.castTo
                                                                 : inner.dtype);
      break;
    }
    }
    return type;
  }

  /// Readable variables: inputs and temporaries.
  ConnectorTypes vars;

private:
  SettledTypes &out_;
  std::map<const Expr *, Ty> memo_;
};

} // namespace

SettledTypes settleTypes(const Code &code, const ConnectorTypes &inputs,
                         const ConnectorTypes &outputs) {
  SettledTypes out;
  Settler s(out);
  s.vars = inputs;
  for (const Assignment &a : code.statements) {
    if (auto it = outputs.find(a.target); it != outputs.end()) {
      s.settle(*a.value, it->second);
      out.targetType.push_back(it->second);
    } else if (auto temp = s.vars.find(a.target); temp != s.vars.end()) {
      s.settle(*a.value, temp->second);
      out.targetType.push_back(temp->second);
    } else {
      // A new temporary: a lone literal settles to its default type.
      DType type = s.settle(*a.value, std::nullopt);
      s.vars[a.target] = type;
      out.targetType.push_back(type);
    }
  }
  return out;
}

} // namespace weir::ir::tasklet
