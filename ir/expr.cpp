/// \file
/// Expr basics: construction, accessors, evaluation, printing, hashing and
/// ordering. The simplifier lives in expr_simplify.cpp, the parser in
/// expr_parse.cpp.

#include "ir/expr.h"

#include "ir/error.h"
#include "ir/expr_node.h"

#include <algorithm>
#include <cassert>
#include <limits>
#include <ostream>
#include <set>

namespace weir::ir {

namespace {

std::shared_ptr<const ExprNode> makeConstantNode(std::int64_t value) {
  auto node = std::make_shared<ExprNode>();
  node->value = value;
  node->canonical = true;
  return node;
}

bool isIdentifier(std::string_view name) {
  auto isAlpha = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  };
  if (name.empty() || !isAlpha(name[0]))
    return false;
  for (char c : name)
    if (!isAlpha(c) && !(c >= '0' && c <= '9'))
      return false;
  return true;
}

const char *functionName(ExprKind kind) {
  switch (kind) {
  case ExprKind::FloorDiv:
    return "floordiv";
  case ExprKind::Mod:
    return "mod";
  case ExprKind::Min:
    return "min";
  case ExprKind::Max:
    return "max";
  default:
    return "";
  }
}

constexpr std::int64_t kInt64Min = std::numeric_limits<std::int64_t>::min();

// The trailing constant of a Mul is its coefficient; a negative one is printed
// as a leading minus (or as " - " inside a sum) so canonical text reads the
// way people write it. INT64_MIN cannot be negated and is printed literally.
std::optional<std::int64_t> negativeCoefficient(const Expr &e) {
  if (e.kind() == ExprKind::Const) {
    std::int64_t v = e.node()->value;
    if (v < 0 && v != kInt64Min)
      return v;
    return std::nullopt;
  }
  if (e.kind() == ExprKind::Mul && e.operands().size() >= 2 &&
      e.operands().back().kind() == ExprKind::Const) {
    std::int64_t v = e.operands().back().node()->value;
    if (v < 0 && v != kInt64Min)
      return v;
  }
  return std::nullopt;
}

void print(const Expr &e, std::string &out);

// Prints a product; `negate` flips the sign of its trailing coefficient, which
// the caller has checked is negative and negatable.
void printMul(const Expr &e, bool negate, std::string &out) {
  const auto &ops = e.operands();
  if (ops.empty()) {
    out += "1";
    return;
  }
  std::size_t factors = ops.size();
  std::optional<std::int64_t> coefficient;
  if (ops.size() >= 2 && ops.back().kind() == ExprKind::Const) {
    coefficient = ops.back().node()->value;
    --factors;
    if (negate)
      *coefficient = -*coefficient;
    else if (*coefficient < 0 && *coefficient != kInt64Min) {
      out += "-";
      *coefficient = -*coefficient;
    }
  }
  for (std::size_t i = 0; i < factors; ++i) {
    if (i > 0)
      out += "*";
    bool parens = ops[i].kind() == ExprKind::Add;
    if (parens)
      out += "(";
    print(ops[i], out);
    if (parens)
      out += ")";
  }
  if (coefficient && *coefficient != 1)
    out += "*" + std::to_string(*coefficient);
}

void printSum(const Expr &e, std::string &out) {
  const auto &ops = e.operands();
  if (ops.empty()) {
    out += "0";
    return;
  }
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const Expr &term = ops[i];
    bool negative = i > 0 && negativeCoefficient(term).has_value();
    if (i > 0)
      out += negative ? " - " : " + ";
    if (negative && term.kind() == ExprKind::Const) {
      out += std::to_string(-term.node()->value);
    } else if (term.kind() == ExprKind::Mul) {
      printMul(term, negative, out);
    } else {
      // Only a raw (unsimplified) tree nests a sum in a sum.
      bool parens = term.kind() == ExprKind::Add;
      if (parens)
        out += "(";
      print(term, out);
      if (parens)
        out += ")";
    }
  }
}

void print(const Expr &e, std::string &out) {
  const ExprNode &n = *e.node();
  switch (n.kind) {
  case ExprKind::Const:
    out += std::to_string(n.value);
    return;
  case ExprKind::Sym:
    out += n.name;
    return;
  case ExprKind::Add:
    printSum(e, out);
    return;
  case ExprKind::Mul:
    printMul(e, false, out);
    return;
  case ExprKind::FloorDiv:
  case ExprKind::Mod:
  case ExprKind::Min:
  case ExprKind::Max:
    out += functionName(n.kind);
    out += "(";
    for (std::size_t i = 0; i < n.operands.size(); ++i) {
      if (i > 0)
        out += ", ";
      print(n.operands[i], out);
    }
    out += ")";
    return;
  }
}

class Evaluator {
public:
  Evaluator(const Bindings &bindings, const Expr &root)
      : bindings_(bindings), root_(root) {}

  std::int64_t eval(const Expr &e) const {
    const ExprNode &n = *e.node();
    switch (n.kind) {
    case ExprKind::Const:
      return n.value;
    case ExprKind::Sym: {
      auto it = bindings_.find(n.name);
      if (it == bindings_.end())
        fail("symbol '" + n.name + "' is not bound");
      return it->second;
    }
    case ExprKind::Add: {
      std::int64_t sum = 0;
      for (const Expr &op : n.operands)
        if (__builtin_add_overflow(sum, eval(op), &sum))
          fail("integer overflow in '" + e.str() + "'");
      return sum;
    }
    case ExprKind::Mul: {
      std::int64_t product = 1;
      for (const Expr &op : n.operands)
        if (__builtin_mul_overflow(product, eval(op), &product))
          fail("integer overflow in '" + e.str() + "'");
      return product;
    }
    case ExprKind::FloorDiv:
    case ExprKind::Mod:
    case ExprKind::Min:
    case ExprKind::Max:
      break;
    }
    assert(n.operands.size() == 2 && "binary expression node");
    std::int64_t a = eval(n.operands[0]);
    std::int64_t b = eval(n.operands[1]);
    switch (n.kind) {
    case ExprKind::FloorDiv:
      if (b == 0)
        fail("division by zero in '" + e.str() + "'");
      if (a == kInt64Min && b == -1)
        fail("integer overflow in '" + e.str() + "'");
      return pyFloorDiv(a, b);
    case ExprKind::Mod:
      if (b == 0)
        fail("modulo by zero in '" + e.str() + "'");
      return pyMod(a, b);
    case ExprKind::Min:
      return std::min(a, b);
    default:
      return std::max(a, b);
    }
  }

private:
  [[noreturn]] void fail(const std::string &why) const {
    throw Error("cannot evaluate '" + root_.str() + "': " + why);
  }

  const Bindings &bindings_;
  const Expr &root_;
};

void collectSymbols(const Expr &e, std::set<std::string> &out) {
  if (e.kind() == ExprKind::Sym)
    out.insert(e.symbolName());
  for (const Expr &op : e.operands())
    collectSymbols(op, out);
}

// FNV-1a: simple, and independent of pointers, platform and standard library.
class Fnv {
public:
  void byte(std::uint8_t b) {
    state_ ^= b;
    state_ *= 0x100000001b3ULL;
  }
  void word(std::uint64_t w) {
    for (int i = 0; i < 8; ++i)
      byte(static_cast<std::uint8_t>(w >> (8 * i)));
  }
  std::uint64_t value() const { return state_; }

private:
  std::uint64_t state_ = 0xcbf29ce484222325ULL;
};

} // namespace

std::int64_t pyFloorDiv(std::int64_t a, std::int64_t b) {
  assert(b != 0 && !(a == kInt64Min && b == -1));
  std::int64_t q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0)))
    --q;
  return q;
}

std::int64_t pyMod(std::int64_t a, std::int64_t b) {
  assert(b != 0);
  if (b == -1)
    return 0; // INT64_MIN % -1 is undefined in C++
  std::int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0)))
    r += b;
  return r;
}

int compareExpr(const Expr &a, const Expr &b) {
  if (a.node() == b.node())
    return 0;
  const ExprNode &x = *a.node();
  const ExprNode &y = *b.node();
  if (x.kind != y.kind)
    return x.kind < y.kind ? -1 : 1;
  if (x.kind == ExprKind::Const)
    return x.value == y.value ? 0 : (x.value < y.value ? -1 : 1);
  if (x.kind == ExprKind::Sym) {
    int c = x.name.compare(y.name);
    return c == 0 ? 0 : (c < 0 ? -1 : 1);
  }
  std::size_t n = std::min(x.operands.size(), y.operands.size());
  for (std::size_t i = 0; i < n; ++i)
    if (int c = compareExpr(x.operands[i], y.operands[i]))
      return c;
  if (x.operands.size() == y.operands.size())
    return 0;
  return x.operands.size() < y.operands.size() ? -1 : 1;
}

namespace {

/// The constants shapes, strides and steps mostly use, made once: every
/// Expr(0), Expr(1) or Expr(64) then shares one node instead of allocating.
constexpr std::int64_t kSharedLow = -16, kSharedHigh = 1024;

const std::shared_ptr<const ExprNode> &sharedConstant(std::int64_t value) {
  static const std::vector<std::shared_ptr<const ExprNode>> table = [] {
    std::vector<std::shared_ptr<const ExprNode>> t;
    for (std::int64_t v = kSharedLow; v <= kSharedHigh; ++v)
      t.push_back(makeConstantNode(v));
    return t;
  }();
  return table[static_cast<std::size_t>(value - kSharedLow)];
}

} // namespace

Expr::Expr() : node_(sharedConstant(0)) {}

Expr::Expr(std::int64_t value)
    : node_(value >= kSharedLow && value <= kSharedHigh
                ? sharedConstant(value)
                : makeConstantNode(value)) {}

Expr Expr::constant(std::int64_t value) { return Expr(value); }

Expr Expr::symbol(std::string name) {
  if (!isIdentifier(name))
    throw Error("invalid symbol name '" + name +
                "': expected a letter or '_' followed by letters, digits "
                "or '_'");
  auto node = std::make_shared<ExprNode>();
  node->kind = ExprKind::Sym;
  node->name = std::move(name);
  node->canonical = true;
  return Expr(std::shared_ptr<const ExprNode>(std::move(node)));
}

ExprKind Expr::kind() const { return node_->kind; }

std::optional<std::int64_t> Expr::asConstant() const {
  if (node_->kind == ExprKind::Const)
    return node_->value;
  return std::nullopt;
}

const std::string &Expr::symbolName() const { return node_->name; }

const std::vector<Expr> &Expr::operands() const { return node_->operands; }

std::int64_t Expr::evaluate(const Bindings &bindings) const {
  return Evaluator(bindings, *this).eval(*this);
}

std::vector<std::string> Expr::freeSymbols() const {
  std::set<std::string> names;
  collectSymbols(*this, names);
  return {names.begin(), names.end()};
}

std::string Expr::str() const {
  std::string out;
  print(*this, out);
  return out;
}

std::uint64_t Expr::hash() const {
  Fnv h;
  h.byte(static_cast<std::uint8_t>(node_->kind));
  switch (node_->kind) {
  case ExprKind::Const:
    h.word(static_cast<std::uint64_t>(node_->value));
    break;
  case ExprKind::Sym:
    h.word(node_->name.size());
    for (char c : node_->name)
      h.byte(static_cast<std::uint8_t>(c));
    break;
  default:
    h.word(node_->operands.size());
    for (const Expr &op : node_->operands)
      h.word(op.hash());
    break;
  }
  return h.value();
}

bool operator==(const Expr &a, const Expr &b) { return compareExpr(a, b) == 0; }

bool operator<(const Expr &a, const Expr &b) { return compareExpr(a, b) < 0; }

std::ostream &operator<<(std::ostream &os, const Expr &e) {
  return os << e.str();
}

} // namespace weir::ir
