/// \file
/// The simplifier behind every Expr factory. The canonical form is a
/// polynomial over atoms (symbols and floordiv/mod/min/max calls whose
/// operands are canonical) with int64 coefficients:
///   - a Mul is its sorted atoms followed by the coefficient when it is not 1;
///   - an Add is its monomials in Expr order followed by the constant when it
///     is not 0; products are always distributed over sums.
/// Every rewrite holds for all integer values of the symbols, negative ones
/// included; nothing here assumes a symbol is non-negative except
/// provablyLessEqual, which says so.

#include "ir/expr.h"

#include "ir/error.h"
#include "ir/expr_node.h"

#include <algorithm>
#include <cassert>
#include <limits>
#include <span>

namespace weir::ir {

namespace {

constexpr std::int64_t kInt64Min = std::numeric_limits<std::int64_t>::min();

/// Thrown when a coefficient would leave int64; the public entry points turn
/// it into weir::Error, and the atom rules fall back to an unrewritten node.
struct CoefficientOverflow {};

std::int64_t checkedAdd(std::int64_t a, std::int64_t b) {
  std::int64_t r;
  if (__builtin_add_overflow(a, b, &r))
    throw CoefficientOverflow{};
  return r;
}

std::int64_t checkedMul(std::int64_t a, std::int64_t b) {
  std::int64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    throw CoefficientOverflow{};
  return r;
}

std::uint64_t magnitude(std::int64_t v) {
  return v < 0 ? ~static_cast<std::uint64_t>(v) + 1
               : static_cast<std::uint64_t>(v);
}

std::uint64_t gcd(std::uint64_t a, std::uint64_t b) {
  while (b != 0) {
    std::uint64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

/// Sorted atoms; the empty monomial is the constant term.
using Monomial = std::vector<Expr>;
using Poly = std::map<Monomial, std::int64_t>;

Expr canonicalNode(ExprKind kind, std::vector<Expr> operands) {
  auto node = std::make_shared<ExprNode>();
  node->kind = kind;
  node->operands = std::move(operands);
  node->canonical = true;
  return Expr(std::shared_ptr<const ExprNode>(std::move(node)));
}

void addTerm(Poly &p, const Monomial &m, std::int64_t coefficient) {
  if (coefficient == 0)
    return;
  auto [it, inserted] = p.try_emplace(m, coefficient);
  if (!inserted) {
    it->second = checkedAdd(it->second, coefficient);
    if (it->second == 0)
      p.erase(it);
  }
}

Poly constantPoly(std::int64_t c) {
  Poly p;
  addTerm(p, {}, c);
  return p;
}

Poly atomPoly(const Expr &atom, std::int64_t coefficient = 1) {
  Poly p;
  addTerm(p, {atom}, coefficient);
  return p;
}

/// The polynomial of a canonical Expr (atoms are taken as they are).
Poly toPoly(const Expr &e) {
  assert(e.node()->canonical);
  Poly p;
  auto addOne = [&p](const Expr &term) {
    switch (term.kind()) {
    case ExprKind::Const:
      addTerm(p, {}, *term.asConstant());
      return;
    case ExprKind::Mul: {
      const auto &ops = term.operands();
      if (ops.back().kind() == ExprKind::Const)
        addTerm(p, Monomial(ops.begin(), ops.end() - 1),
                *ops.back().asConstant());
      else
        addTerm(p, ops, 1);
      return;
    }
    default:
      addTerm(p, {term}, 1);
      return;
    }
  };
  if (e.kind() == ExprKind::Add)
    for (const Expr &term : e.operands())
      addOne(term);
  else
    addOne(e);
  return p;
}

Expr monomialExpr(const Monomial &m, std::int64_t coefficient) {
  if (m.size() == 1 && coefficient == 1)
    return m[0];
  std::vector<Expr> ops = m;
  if (coefficient != 1)
    ops.push_back(Expr(coefficient));
  return canonicalNode(ExprKind::Mul, std::move(ops));
}

Expr fromPoly(const Poly &p) {
  std::int64_t constant = 0;
  std::vector<Expr> terms;
  for (const auto &[m, c] : p) {
    if (m.empty())
      constant = c;
    else
      terms.push_back(monomialExpr(m, c));
  }
  if (terms.empty())
    return Expr(constant);
  if (terms.size() == 1 && constant == 0)
    return terms[0];
  if (constant != 0)
    terms.push_back(Expr(constant));
  return canonicalNode(ExprKind::Add, std::move(terms));
}

Poly addPoly(Poly a, const Poly &b) {
  for (const auto &[m, c] : b)
    addTerm(a, m, c);
  return a;
}

Poly scalePoly(const Poly &p, std::int64_t k) {
  Poly r;
  if (k == 0)
    return r;
  for (const auto &[m, c] : p)
    r.emplace(m, checkedMul(c, k));
  return r;
}

Poly mulPoly(const Poly &a, const Poly &b) {
  Poly r;
  for (const auto &[ma, ca] : a)
    for (const auto &[mb, cb] : b) {
      Monomial m;
      m.reserve(ma.size() + mb.size());
      std::merge(ma.begin(), ma.end(), mb.begin(), mb.end(),
                 std::back_inserter(m));
      addTerm(r, m, checkedMul(ca, cb));
    }
  return r;
}

bool hasSymbolicTerm(const Poly &p) {
  return !p.empty() && !(p.size() == 1 && p.begin()->first.empty());
}

std::int64_t constantTerm(const Poly &p) {
  auto it = p.find(Monomial{});
  return it == p.end() ? 0 : it->second;
}

/// x - y when it is a constant.
std::optional<std::int64_t> constantDifference(const Expr &x, const Expr &y) {
  try {
    Poly d = addPoly(toPoly(x), scalePoly(toPoly(y), -1));
    if (hasSymbolicTerm(d))
      return std::nullopt;
    return constantTerm(d);
  } catch (const CoefficientOverflow &) {
    return std::nullopt;
  }
}

/// gcd of the divisor and every coefficient of p.
std::int64_t commonFactor(const Poly &p, std::int64_t divisor) {
  std::uint64_t g = magnitude(divisor);
  for (const auto &[m, c] : p)
    g = gcd(g, magnitude(c));
  return static_cast<std::int64_t>(g);
}

Poly dividePoly(const Poly &p, std::int64_t k) {
  Poly r;
  for (const auto &[m, c] : p)
    r.emplace(m, c / k);
  return r;
}

Expr atomRule(ExprKind kind, const Expr &a, const Expr &b);

Expr floorDivRule(const Expr &a, const Expr &b) {
  auto divisor = b.asConstant();
  if (!divisor || *divisor == 0)
    return canonicalNode(ExprKind::FloorDiv, {a, b});
  if (auto value = a.asConstant()) {
    if (*value == kInt64Min && *divisor == -1)
      return canonicalNode(ExprKind::FloorDiv, {a, b});
    return Expr(pyFloorDiv(*value, *divisor));
  }
  if (*divisor == 1)
    return a;
  // floor(a / -c) == floor(-a / c): only positive divisors remain below.
  if (*divisor < 0) {
    if (*divisor == kInt64Min)
      return canonicalNode(ExprKind::FloorDiv, {a, b});
    return floorDivRule(fromPoly(scalePoly(toPoly(a), -1)), Expr(-*divisor));
  }
  std::int64_t d = *divisor;
  // floor((d*q + r) / d) == q + floor(r / d) for integer q: terms whose
  // coefficient d divides leave the division, and the constant keeps only
  // its remainder.
  Poly quotient, rest;
  for (const auto &[m, c] : toPoly(a)) {
    if (m.empty()) {
      addTerm(quotient, m, pyFloorDiv(c, d));
      addTerm(rest, m, pyMod(c, d));
    } else if (c % d == 0) {
      addTerm(quotient, m, c / d);
    } else {
      addTerm(rest, m, c);
    }
  }
  // A constant remainder is in [0, d), so its quotient is 0.
  if (!hasSymbolicTerm(rest))
    return fromPoly(quotient);
  // floor(g*r / (g*d)) == floor(r / d).
  if (std::int64_t g = commonFactor(rest, d); g > 1) {
    rest = dividePoly(rest, g);
    d /= g;
  }
  // floor((floor(y / c) + k) / d) == floor((y + k*c) / (c*d)) for c, d > 0.
  std::int64_t k = constantTerm(rest);
  if (rest.size() == (k == 0 ? 1u : 2u)) {
    auto it = std::find_if(rest.begin(), rest.end(),
                           [](const auto &t) { return !t.first.empty(); });
    const Monomial &m = it->first;
    if (it->second == 1 && m.size() == 1 && m[0].kind() == ExprKind::FloorDiv) {
      const Expr &y = m[0].operands()[0];
      auto c = m[0].operands()[1].asConstant();
      if (c && *c > 0) {
        try {
          Poly shifted = addPoly(toPoly(y), constantPoly(checkedMul(k, *c)));
          Expr inner = atomRule(ExprKind::FloorDiv, fromPoly(shifted),
                                Expr(checkedMul(*c, d)));
          return fromPoly(addPoly(quotient, toPoly(inner)));
        } catch (const CoefficientOverflow &) {
          // Leave the nested division as it is.
        }
      }
    }
  }
  Expr atom = canonicalNode(ExprKind::FloorDiv, {fromPoly(rest), Expr(d)});
  return fromPoly(addPoly(quotient, atomPoly(atom)));
}

Expr modRule(const Expr &a, const Expr &b) {
  auto divisor = b.asConstant();
  if (!divisor || *divisor == 0)
    return canonicalNode(ExprKind::Mod, {a, b});
  if (auto value = a.asConstant())
    return Expr(pyMod(*value, *divisor));
  if (*divisor == 1 || *divisor == -1)
    return Expr(0);
  // mod(a, -c) == -mod(-a, c): only positive divisors remain below.
  if (*divisor < 0) {
    if (*divisor == kInt64Min)
      return canonicalNode(ExprKind::Mod, {a, b});
    Expr positive =
        modRule(fromPoly(scalePoly(toPoly(a), -1)), Expr(-*divisor));
    return fromPoly(scalePoly(toPoly(positive), -1));
  }
  std::int64_t d = *divisor;
  Poly p = toPoly(a);
  // mod(y, c) differs from y by a multiple of c; when d divides c that is a
  // multiple of d too, so mod(y, c) may be replaced by y inside mod(., d).
  bool replaced = false;
  Poly unwrapped;
  for (const auto &[m, c] : p) {
    Poly term = constantPoly(c);
    for (const Expr &atom : m) {
      auto inner = atom.kind() == ExprKind::Mod
                       ? atom.operands()[1].asConstant()
                       : std::nullopt;
      if (inner && *inner > 0 && *inner % d == 0) {
        term = mulPoly(term, toPoly(atom.operands()[0]));
        replaced = true;
      } else {
        term = mulPoly(term, atomPoly(atom));
      }
    }
    unwrapped = addPoly(std::move(unwrapped), term);
  }
  if (replaced)
    return modRule(fromPoly(unwrapped), b);
  // Multiples of d vanish: every coefficient reduces into [0, d).
  Poly rest;
  for (const auto &[m, c] : p)
    addTerm(rest, m, pyMod(c, d));
  if (!hasSymbolicTerm(rest))
    return fromPoly(rest);
  // mod(g*r, g*d) == g * mod(r, d) for g > 0.
  if (std::int64_t g = commonFactor(rest, d); g > 1) {
    Expr reduced = modRule(fromPoly(dividePoly(rest, g)), Expr(d / g));
    return fromPoly(scalePoly(toPoly(reduced), g));
  }
  return canonicalNode(ExprKind::Mod, {fromPoly(rest), Expr(d)});
}

void flatten(ExprKind kind, const Expr &e, std::vector<Expr> &out) {
  if (e.kind() == kind) {
    for (const Expr &op : e.operands())
      flatten(kind, op, out);
  } else {
    out.push_back(e);
  }
}

/// Min and max are associative and commutative: the operands are flattened,
/// any two that differ by a constant collapse to the winner, and the rest
/// are sorted into a right-nested chain.
Expr minMaxRule(ExprKind kind, const Expr &a, const Expr &b) {
  std::vector<Expr> items;
  flatten(kind, a, items);
  flatten(kind, b, items);
  std::vector<Expr> kept;
  for (const Expr &x : items) {
    bool merged = false;
    for (Expr &y : kept) {
      if (auto diff = constantDifference(x, y)) {
        bool xWins = kind == ExprKind::Min ? *diff < 0 : *diff > 0;
        if (xWins)
          y = x;
        merged = true;
        break;
      }
    }
    if (!merged)
      kept.push_back(x);
  }
  std::sort(kept.begin(), kept.end());
  Expr result = kept.back();
  for (std::size_t i = kept.size() - 1; i-- > 0;)
    result = canonicalNode(kind, {kept[i], result});
  return result;
}

Expr atomRule(ExprKind kind, const Expr &a, const Expr &b) {
  try {
    switch (kind) {
    case ExprKind::FloorDiv:
      return floorDivRule(a, b);
    case ExprKind::Mod:
      return modRule(a, b);
    default:
      return minMaxRule(kind, a, b);
    }
  } catch (const CoefficientOverflow &) {
    // Deterministic, so simplifying this node again lands here again.
    return canonicalNode(kind, {a, b});
  }
}

Expr simplifyRaw(const Expr &e) {
  const ExprNode &n = *e.node();
  if (n.canonical)
    return e;
  switch (n.kind) {
  case ExprKind::Const:
    return Expr(n.value);
  case ExprKind::Sym: {
    auto node = std::make_shared<ExprNode>(n);
    node->canonical = true;
    return Expr(std::shared_ptr<const ExprNode>(std::move(node)));
  }
  case ExprKind::Add: {
    Poly sum;
    for (const Expr &op : n.operands)
      sum = addPoly(std::move(sum), toPoly(simplifyRaw(op)));
    return fromPoly(sum);
  }
  case ExprKind::Mul: {
    Poly product = constantPoly(1);
    for (const Expr &op : n.operands)
      product = mulPoly(product, toPoly(simplifyRaw(op)));
    return fromPoly(product);
  }
  default:
    assert(n.operands.size() == 2 && "binary expression node");
    return atomRule(n.kind, simplifyRaw(n.operands[0]),
                    simplifyRaw(n.operands[1]));
  }
}

/// Runs a simplification, reporting coefficient overflow as a user error
/// that quotes what was being built. `what` is called only then: printing
/// the operands on every operation would cost more than the arithmetic.
template <typename F, typename W> Expr guarded(F &&build, W &&what) {
  try {
    return build();
  } catch (const CoefficientOverflow &) {
    throw Error("integer overflow while simplifying " + what());
  }
}

std::string quote(const Expr &e) { return "'" + e.str() + "'"; }

Expr binary(ExprKind kind, const Expr &a, const Expr &b) {
  const char *name = kind == ExprKind::FloorDiv ? "floordiv"
                     : kind == ExprKind::Mod    ? "mod"
                     : kind == ExprKind::Min    ? "min"
                                                : "max";
  return guarded(
      [&] { return atomRule(kind, simplifyRaw(a), simplifyRaw(b)); },
      [&] {
        return std::string(name) + "(" + quote(a) + ", " + quote(b) + ")";
      });
}

// ---- provablyLessEqual -----------------------------------------------------

bool polyNonNegative(const Poly &p);

/// Whether an atom is >= 0 whenever every symbol is.
bool atomNonNegative(const Expr &atom) {
  switch (atom.kind()) {
  case ExprKind::Sym:
    return true;
  case ExprKind::Mod: {
    auto c = atom.operands()[1].asConstant();
    return c && *c > 0;
  }
  case ExprKind::FloorDiv: {
    auto c = atom.operands()[1].asConstant();
    return c && *c > 0 && polyNonNegative(toPoly(atom.operands()[0]));
  }
  case ExprKind::Min:
    return polyNonNegative(toPoly(atom.operands()[0])) &&
           polyNonNegative(toPoly(atom.operands()[1]));
  case ExprKind::Max:
    return polyNonNegative(toPoly(atom.operands()[0])) ||
           polyNonNegative(toPoly(atom.operands()[1]));
  default:
    return false;
  }
}

/// Non-negative coefficients on monomials that are each non-negative (an
/// atom of unknown sign is fine when it occurs an even number of times).
bool polyNonNegative(const Poly &p) {
  for (const auto &[m, c] : p) {
    if (c < 0)
      return false;
    for (std::size_t i = 0; i < m.size();) {
      std::size_t j = i;
      while (j < m.size() && m[j] == m[i])
        ++j;
      if ((j - i) % 2 == 1 && !atomNonNegative(m[i]))
        return false;
      i = j;
    }
  }
  return true;
}

/// Proves p >= 0 by replacing one min/max/floordiv/mod term at a time with a
/// bound in the right direction and recursing; `budget` caps the search.
bool proveNonNegative(const Poly &p, int &budget) {
  if (budget-- <= 0)
    return false;
  if (polyNonNegative(p))
    return true;
  for (const auto &term : p) {
    const Monomial &m = term.first;
    std::int64_t k = term.second; // a plain local: lambdas capture it
    if (m.size() != 1)
      continue;
    const Expr &atom = m[0];
    Poly rest = p;
    rest.erase(m);
    auto with = [&](const Poly &replacement) {
      return addPoly(rest, scalePoly(replacement, k));
    };
    switch (atom.kind()) {
    case ExprKind::Min:
    case ExprKind::Max: {
      // k*min(x, y) is at least the smaller of k*x and k*y, so both must be
      // proven; with k < 0 (or for max) it is at least either one.
      Poly x = with(toPoly(atom.operands()[0]));
      Poly y = with(toPoly(atom.operands()[1]));
      bool needBoth = (atom.kind() == ExprKind::Min) == (k > 0);
      bool ok =
          needBoth ? proveNonNegative(x, budget) && proveNonNegative(y, budget)
                   : proveNonNegative(x, budget) || proveNonNegative(y, budget);
      if (ok)
        return true;
      break;
    }
    case ExprKind::Mod: {
      // 0 <= mod(y, c) <= c - 1 for c > 0.
      auto c = atom.operands()[1].asConstant();
      if (c && *c > 0 &&
          proveNonNegative(with(constantPoly(k > 0 ? 0 : *c - 1)), budget))
        return true;
      break;
    }
    case ExprKind::FloorDiv: {
      // y - (c - 1) <= c*floordiv(y, c) <= y for c > 0; usable when c | k.
      auto c = atom.operands()[1].asConstant();
      if (!c || *c <= 0 || k % *c != 0)
        break;
      Poly y = toPoly(atom.operands()[0]);
      if (k > 0)
        y = addPoly(std::move(y), constantPoly(1 - *c));
      Poly bound = addPoly(rest, scalePoly(y, k / *c));
      if (proveNonNegative(bound, budget))
        return true;
      break;
    }
    default:
      break;
    }
  }
  return false;
}

} // namespace

Expr simplify(const Expr &e) {
  return guarded([&] { return simplifyRaw(e); }, [&] { return quote(e); });
}

namespace {

/// Both operands constant: the common case in shapes and volumes, without
/// building polynomials. Overflow falls through to the general path, which
/// reports it.
template <typename Op>
std::optional<Expr> foldConstants(const Expr &a, const Expr &b, Op op) {
  if (!a.isConstant() || !b.isConstant())
    return std::nullopt;
  std::int64_t out = 0;
  if (op(*a.asConstant(), *b.asConstant(), &out))
    return std::nullopt;
  return Expr(out);
}

/// a - b when both are canonical and differ only in their constant term
/// (a range's `i + 1` and `i`): the difference of the constants, without
/// building polynomials. nullopt otherwise.
std::optional<Expr> sameTermsDifference(const Expr &a, const Expr &b) {
  if (!a.node()->canonical || !b.node()->canonical)
    return std::nullopt;
  // A canonical sum keeps its constant last.
  auto split = [](const Expr &e) {
    std::pair<std::span<const Expr>, std::int64_t> out{
        std::span<const Expr>(&e, 1), 0};
    if (e.kind() == ExprKind::Const)
      out = {{}, *e.asConstant()};
    else if (e.kind() == ExprKind::Add) {
      std::span<const Expr> ops = e.operands();
      if (ops.back().kind() == ExprKind::Const)
        out = {ops.first(ops.size() - 1), *ops.back().asConstant()};
      else
        out.first = ops;
    }
    return out;
  };
  auto [ta, ca] = split(a);
  auto [tb, cb] = split(b);
  if (ta.size() != tb.size())
    return std::nullopt;
  for (std::size_t i = 0; i < ta.size(); ++i)
    if (compareExpr(ta[i], tb[i]) != 0)
      return std::nullopt;
  std::int64_t d = 0;
  if (__builtin_sub_overflow(ca, cb, &d))
    return std::nullopt;
  return Expr(d);
}

} // namespace

Expr operator+(const Expr &a, const Expr &b) {
  if (auto c = foldConstants(a, b, [](auto x, auto y, auto *r) {
        return __builtin_add_overflow(x, y, r);
      }))
    return *c;
  return guarded(
      [&] {
        return fromPoly(
            addPoly(toPoly(simplifyRaw(a)), toPoly(simplifyRaw(b))));
      },
      [&] { return quote(a) + " + " + quote(b); });
}

Expr sum(const std::vector<Expr> &terms) {
  std::int64_t constant = 0;
  std::vector<const Expr *> symbolic;
  for (const Expr &t : terms) {
    std::int64_t next = 0;
    if (t.isConstant() &&
        !__builtin_add_overflow(constant, *t.asConstant(), &next)) {
      constant = next;
      continue;
    }
    symbolic.push_back(&t); // symbolic, or an overflow the sum reports
  }
  if (symbolic.empty())
    return Expr(constant);
  return guarded(
      [&] {
        Poly p = constantPoly(constant);
        for (const Expr *t : symbolic)
          for (const auto &[m, c] : toPoly(simplifyRaw(*t)))
            addTerm(p, m, c);
        return fromPoly(p);
      },
      [&] {
        return "a sum of " + std::to_string(terms.size()) + " terms";
      });
}

Expr operator-(const Expr &a, const Expr &b) {
  if (auto c = foldConstants(a, b, [](auto x, auto y, auto *r) {
        return __builtin_sub_overflow(x, y, r);
      }))
    return *c;
  if (auto c = sameTermsDifference(a, b))
    return *c;
  return guarded(
      [&] {
        return fromPoly(addPoly(toPoly(simplifyRaw(a)),
                                scalePoly(toPoly(simplifyRaw(b)), -1)));
      },
      [&] { return quote(a) + " - " + quote(b); });
}

Expr operator-(const Expr &a) {
  return guarded(
      [&] { return fromPoly(scalePoly(toPoly(simplifyRaw(a)), -1)); },
      [&] { return "-" + quote(a); });
}

Expr operator*(const Expr &a, const Expr &b) {
  if (auto c = foldConstants(a, b, [](auto x, auto y, auto *r) {
        return __builtin_mul_overflow(x, y, r);
      }))
    return *c;
  return guarded(
      [&] {
        return fromPoly(
            mulPoly(toPoly(simplifyRaw(a)), toPoly(simplifyRaw(b))));
      },
      [&] { return quote(a) + " * " + quote(b); });
}

Expr floorDiv(const Expr &a, const Expr &b) {
  return binary(ExprKind::FloorDiv, a, b);
}

Expr mod(const Expr &a, const Expr &b) { return binary(ExprKind::Mod, a, b); }

Expr min(const Expr &a, const Expr &b) { return binary(ExprKind::Min, a, b); }

Expr max(const Expr &a, const Expr &b) { return binary(ExprKind::Max, a, b); }

Expr ceilDiv(const Expr &a, const Expr &b) { return floorDiv(a + b - 1, b); }

Expr Expr::substitute(
    const std::map<std::string, Expr, std::less<>> &map) const {
  switch (kind()) {
  case ExprKind::Const:
    return simplify(*this);
  case ExprKind::Sym: {
    auto it = map.find(symbolName());
    return it == map.end() ? simplify(*this) : simplify(it->second);
  }
  case ExprKind::Add: {
    Expr sum = 0;
    for (const Expr &op : operands())
      sum = sum + op.substitute(map);
    return sum;
  }
  case ExprKind::Mul: {
    Expr product = 1;
    for (const Expr &op : operands())
      product = product * op.substitute(map);
    return product;
  }
  default: {
    Expr a = operands()[0].substitute(map);
    Expr b = operands()[1].substitute(map);
    return binary(kind(), a, b);
  }
  }
}

bool provablyLessEqual(const Expr &a, const Expr &b) {
  try {
    Poly diff =
        addPoly(toPoly(simplify(b)), scalePoly(toPoly(simplify(a)), -1));
    int budget = 256;
    return proveNonNegative(diff, budget);
  } catch (const CoefficientOverflow &) {
    return false;
  } catch (const Error &) {
    return false;
  }
}

} // namespace weir::ir
