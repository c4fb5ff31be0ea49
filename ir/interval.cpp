#include "ir/interval.h"

#include <algorithm>
#include <vector>

namespace weir::ir {

std::optional<Interval> boundOf(const Expr &e, const IntervalEnv &env) {
  switch (e.kind()) {
  case ExprKind::Const:
    return Interval{*e.asConstant(), *e.asConstant()};
  case ExprKind::Sym: {
    auto it = env.find(e.symbolName());
    if (it == env.end())
      return std::nullopt;
    return it->second;
  }
  default:
    break;
  }
  std::vector<Interval> ops;
  for (const Expr &o : e.operands()) {
    auto b = boundOf(o, env);
    if (!b)
      return std::nullopt;
    ops.push_back(*b);
  }
  Interval r = ops[0];
  for (std::size_t k = 1; k < ops.size(); ++k) {
    const Interval &b = ops[k];
    switch (e.kind()) {
    case ExprKind::Add:
      if (__builtin_add_overflow(r.lo, b.lo, &r.lo) ||
          __builtin_add_overflow(r.hi, b.hi, &r.hi))
        return std::nullopt;
      break;
    case ExprKind::Mul: {
      std::int64_t c[4];
      if (__builtin_mul_overflow(r.lo, b.lo, &c[0]) ||
          __builtin_mul_overflow(r.lo, b.hi, &c[1]) ||
          __builtin_mul_overflow(r.hi, b.lo, &c[2]) ||
          __builtin_mul_overflow(r.hi, b.hi, &c[3]))
        return std::nullopt;
      r = {*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
      break;
    }
    case ExprKind::FloorDiv: {
      if (b.lo != b.hi || b.lo <= 0)
        return std::nullopt;
      auto fdiv = [](std::int64_t a, std::int64_t d) {
        std::int64_t q = a / d;
        return (a % d != 0 && a < 0) ? q - 1 : q;
      };
      r = {fdiv(r.lo, b.lo), fdiv(r.hi, b.lo)};
      break;
    }
    case ExprKind::Mod:
      if (b.lo != b.hi || b.lo <= 0)
        return std::nullopt;
      r = {0, b.lo - 1};
      break;
    case ExprKind::Min:
      r = {std::min(r.lo, b.lo), std::min(r.hi, b.hi)};
      break;
    case ExprKind::Max:
      r = {std::max(r.lo, b.lo), std::max(r.hi, b.hi)};
      break;
    default:
      return std::nullopt;
    }
  }
  return r;
}

} // namespace weir::ir
