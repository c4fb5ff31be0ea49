/// \file
/// Type checking of tasklet code against its connectors' dtypes. There is no
/// implicit promotion: mixing f32 and i64 needs a cast. Only literals bend,
/// taking the type of the operand next to them, so `x * 2` and
/// `select(t > 0, t, 0.1 * t)` need no casts.

#include "ir/tasklet.h"

#include <cassert>
#include <set>
#include <utility>

namespace weir::ir::tasklet {
namespace {

/// A literal not yet settled by a typed operand next to it.
enum class Literal : std::uint8_t { None, Int, Float };

/// The type of a subexpression. For a literal, `dtype` is the default it
/// gets when nothing settles it.
struct Type {
  DType dtype;
  Literal literal = Literal::None;
};

constexpr Type kIntLiteral{DType::I64, Literal::Int};
constexpr Type kFloatLiteral{DType::F32, Literal::Float};

std::string describe(Type t) {
  switch (t.literal) {
  case Literal::Int:
    return "integer literal";
  case Literal::Float:
    return "float literal";
  case Literal::None:
    break;
  }
  return std::string(dtypeName(t.dtype));
}

bool isNumeric(Type t) {
  return t.literal != Literal::None || isFloat(t.dtype) || isInteger(t.dtype);
}

bool isFloatType(Type t) {
  return t.literal == Literal::Float ||
         (t.literal == Literal::None && isFloat(t.dtype));
}

bool isBool(Type t) {
  return t.literal == Literal::None && t.dtype == DType::Bool;
}

/// Whether a value of type `t` may stand where `to` is required: the same
/// dtype, or a literal that adopts it.
bool fits(Type t, DType to) {
  switch (t.literal) {
  case Literal::None:
    return t.dtype == to;
  case Literal::Int:
    return isFloat(to) || isInteger(to);
  case Literal::Float:
    return isFloat(to);
  }
  return false;
}

/// The common type of two operands, or nullopt when they do not agree.
std::optional<Type> unify(Type a, Type b) {
  if (a.literal != Literal::None && b.literal != Literal::None)
    return a.literal == Literal::Float ? a : b;
  if (a.literal != Literal::None)
    std::swap(a, b);
  // `a` is now a concrete type.
  if (fits(b, a.dtype))
    return a;
  return std::nullopt;
}

/// The variables an expression may read.
class Scope {
public:
  virtual ~Scope() = default;
  /// The type of `name`, or nullopt with the reason in `problem`; an empty
  /// reason means the variable's problem was reported before.
  virtual std::optional<Type> lookup(const std::string &name,
                                     std::string &problem) const = 0;
};

class Inferrer {
public:
  Inferrer(const Scope &scope, std::string prefix,
           std::vector<TypeIssue> &issues)
      : scope_(scope), prefix_(std::move(prefix)), issues_(issues) {}

  std::optional<Type> infer(const Expr &e) {
    switch (e.kind) {
    case ExprKind::FloatLit:
      return kFloatLiteral;
    case ExprKind::IntLit:
      return kIntLiteral;
    case ExprKind::BoolLit:
      return Type{DType::Bool};
    case ExprKind::Var: {
      std::string problem;
      std::optional<Type> t = scope_.lookup(e.name, problem);
      if (!t && !problem.empty())
        issue(problem);
      return t;
    }
    case ExprKind::Unary:
      return unary(e);
    case ExprKind::Binary:
      return binary(e);
    case ExprKind::Call:
      return call(e);
    case ExprKind::Select:
      return select(e);
    case ExprKind::Cast:
      // Any source type converts; the operand only has to be well typed.
      if (!infer(*e.operands[0]))
        return std::nullopt;
      return Type{e.castTo};
    }
    assert(false && "unknown ExprKind");
    return std::nullopt;
  }

private:
  void issue(const std::string &message) {
    issues_.push_back({prefix_ + message});
  }

  /// Infers every operand, so that independent problems are all reported.
  std::optional<std::vector<Type>> operands(const Expr &e) {
    std::vector<Type> types;
    bool ok = true;
    for (const ExprPtr &op : e.operands) {
      std::optional<Type> t = infer(*op);
      ok = ok && t.has_value();
      if (t)
        types.push_back(*t);
    }
    if (!ok)
      return std::nullopt;
    return types;
  }

  std::optional<Type> unary(const Expr &e) {
    std::optional<Type> t = infer(*e.operands[0]);
    if (!t)
      return std::nullopt;
    if (e.unaryOp == UnaryOp::Neg && !isNumeric(*t)) {
      issue("unary '-' needs a numeric operand, got " + describe(*t) + " in '" +
            print(e) + "'");
      return std::nullopt;
    }
    if (e.unaryOp == UnaryOp::Not && !isBool(*t)) {
      issue("'!' needs a bool operand, got " + describe(*t) + " in '" +
            print(e) + "'");
      return std::nullopt;
    }
    return t;
  }

  std::optional<Type> binary(const Expr &e) {
    std::optional<std::vector<Type>> ts = operands(e);
    if (!ts)
      return std::nullopt;
    Type a = (*ts)[0], b = (*ts)[1];
    std::string op(binaryOpText(e.binaryOp));
    switch (e.binaryOp) {
    case BinaryOp::And:
    case BinaryOp::Or:
      if (!isBool(a) || !isBool(b)) {
        issue("'" + op + "' needs bool operands, got " + describe(a) + " and " +
              describe(b) + " in '" + print(e) + "'");
        return std::nullopt;
      }
      return a;
    default:
      break;
    }
    std::optional<Type> common = unify(a, b);
    if (!common) {
      issue("'" + op + "' mixes " + describe(a) + " and " + describe(b) +
            " in '" + print(e) +
            "'; convert one side with a cast such as f32(...)");
      return std::nullopt;
    }
    bool equality = e.binaryOp == BinaryOp::Eq || e.binaryOp == BinaryOp::Ne;
    if (!equality && !isNumeric(*common)) {
      issue("'" + op + "' needs numeric operands, got " + describe(*common) +
            " in '" + print(e) + "'");
      return std::nullopt;
    }
    if (isComparison(e.binaryOp))
      return Type{DType::Bool};
    return common;
  }

  std::optional<Type> call(const Expr &e) {
    std::optional<std::vector<Type>> ts = operands(e);
    if (!ts)
      return std::nullopt;
    std::string name(funcName(e.func));
    std::optional<Type> t = (*ts)[0];
    if (ts->size() == 2) {
      t = unify((*ts)[0], (*ts)[1]);
      if (!t) {
        issue("'" + name + "' mixes " + describe((*ts)[0]) + " and " +
              describe((*ts)[1]) + " in '" + print(e) +
              "'; convert one side with a cast such as f32(...)");
        return std::nullopt;
      }
    }
    if (e.func == Func::Hash) {
      if (t->literal == Literal::Float ||
          (t->dtype != DType::I64 && t->dtype != DType::U64)) {
        issue("'hash' needs 64-bit integer arguments, got " + describe(*t) +
              " in '" + print(e) + "'; cast with e.g. u64(...)");
        return std::nullopt;
      }
      return t;
    }
    bool integersToo =
        e.func == Func::Abs || e.func == Func::Min || e.func == Func::Max;
    if (integersToo ? !isNumeric(*t) : !isFloatType(*t)) {
      issue("'" + name + "' needs " +
            (integersToo ? "numeric" : "floating-point") + " arguments, got " +
            describe(*t) + " in '" + print(e) + "'" +
            (integersToo ? "" : "; cast with e.g. f32(...)"));
      return std::nullopt;
    }
    return t;
  }

  std::optional<Type> select(const Expr &e) {
    std::optional<std::vector<Type>> ts = operands(e);
    if (!ts)
      return std::nullopt;
    bool ok = true;
    if (!isBool((*ts)[0])) {
      issue("the condition of 'select' must be bool, got " +
            describe((*ts)[0]) + " in '" + print(e) + "'");
      ok = false;
    }
    std::optional<Type> t = unify((*ts)[1], (*ts)[2]);
    if (!t) {
      issue("the branches of 'select' have different types, " +
            describe((*ts)[1]) + " and " + describe((*ts)[2]) + ", in '" +
            print(e) + "'");
      ok = false;
    }
    return ok ? t : std::nullopt;
  }

  const Scope &scope_;
  std::string prefix_;
  std::vector<TypeIssue> &issues_;
};

/// What the statements of a body may read: inputs and the temporaries
/// assigned so far. Outputs are write-only.
class BodyScope : public Scope {
public:
  BodyScope(const ConnectorTypes &inputs, const ConnectorTypes &outputs)
      : inputs_(inputs), outputs_(outputs) {}

  std::optional<Type> lookup(const std::string &name,
                             std::string &problem) const override {
    if (auto it = inputs_.find(name); it != inputs_.end())
      return Type{it->second};
    if (auto it = temps.find(name); it != temps.end()) {
      if (!it->second)
        return std::nullopt;
      return Type{*it->second};
    }
    if (outputs_.count(name) != 0)
      problem = "'" + name +
                "' is an output connector, which cannot be read; compute the "
                "value into a temporary and read that";
    else
      problem =
          "'" + name + "' is not an input connector or an earlier temporary";
    return std::nullopt;
  }

  /// Temporary -> type of its first assignment; nullopt when that
  /// assignment was ill typed, so that reads of it add no further issues.
  std::map<std::string, std::optional<DType>, std::less<>> temps;

private:
  const ConnectorTypes &inputs_;
  const ConnectorTypes &outputs_;
};

class VarScope : public Scope {
public:
  explicit VarScope(const ConnectorTypes &vars) : vars_(vars) {}

  std::optional<Type> lookup(const std::string &name,
                             std::string &problem) const override {
    if (auto it = vars_.find(name); it != vars_.end())
      return Type{it->second};
    problem = "'" + name + "' is not a known variable";
    return std::nullopt;
  }

private:
  const ConnectorTypes &vars_;
};

} // namespace

std::vector<TypeIssue> typeCheck(const Code &code, const ConnectorTypes &inputs,
                                 const ConnectorTypes &outputs) {
  std::vector<TypeIssue> issues;
  BodyScope scope(inputs, outputs);
  std::set<std::string, std::less<>> assigned;
  for (std::size_t i = 0; i < code.statements.size(); ++i) {
    const Assignment &s = code.statements[i];
    std::string prefix = "statement " + std::to_string(i + 1) + ": ";
    std::optional<Type> t = Inferrer(scope, prefix, issues).infer(*s.value);
    if (inputs.count(s.target) != 0) {
      issues.push_back({prefix + "'" + s.target +
                        "' is an input connector and cannot be assigned"});
    } else if (auto out = outputs.find(s.target); out != outputs.end()) {
      assigned.insert(s.target);
      if (t && !fits(*t, out->second))
        issues.push_back({prefix + "the value assigned to output '" + s.target +
                          "' has type " + describe(*t) +
                          " but the connector is " +
                          std::string(dtypeName(out->second))});
    } else if (auto temp = scope.temps.find(s.target);
               temp != scope.temps.end()) {
      if (t && temp->second && !fits(*t, *temp->second))
        issues.push_back({prefix + "temporary '" + s.target +
                          "' was first assigned " +
                          std::string(dtypeName(*temp->second)) +
                          " but is now assigned " + describe(*t)});
    } else {
      // A lone literal settles to its default type here.
      scope.temps[s.target] = t ? std::optional(t->dtype) : std::nullopt;
    }
  }
  for (const auto &[name, dtype] : outputs)
    if (assigned.count(name) == 0)
      issues.push_back({"output connector '" + name + "' is never assigned"});
  return issues;
}

std::optional<DType> inferType(const Expr &expr, const ConnectorTypes &vars,
                               std::vector<TypeIssue> &issues) {
  VarScope scope(vars);
  std::optional<Type> t = Inferrer(scope, "", issues).infer(expr);
  if (!t)
    return std::nullopt;
  return t->dtype;
}

} // namespace weir::ir::tasklet
