#include "ir/affine.h"

#include <algorithm>
#include <limits>

namespace weir::ir {

std::optional<Affine> affineIn(const Expr &e,
                               const std::vector<std::string> &vars) {
  std::map<std::string, Expr, std::less<>> zero;
  for (const std::string &v : vars)
    zero[v] = Expr(0);
  Affine a{e.substitute(zero), {}};
  Expr rebuilt = a.constant;
  for (const std::string &v : vars) {
    auto one = zero;
    one[v] = Expr(1);
    auto c = (e.substitute(one) - a.constant).asConstant();
    if (!c)
      return std::nullopt;
    a.coef[v] = *c;
    rebuilt = rebuilt + Expr(*c) * Expr::symbol(v);
  }
  // Canonical forms are equal exactly when the expression is affine.
  if (rebuilt != e)
    return std::nullopt;
  return a;
}

std::map<std::string, VarBounds>
constantBounds(const std::vector<std::string> &params,
               const std::vector<Range> &ranges) {
  std::map<std::string, VarBounds> bounds;
  for (std::size_t k = 0; k < params.size() && k < ranges.size(); ++k) {
    auto b = ranges[k].begin.asConstant(), e = ranges[k].end.asConstant(),
         st = ranges[k].step.asConstant();
    if (b && e && st && *st > 0 && *e > *b)
      bounds[params[k]] = {*b, *b + (*e - *b - 1) / *st * *st};
  }
  return bounds;
}

bool disjointPerValue(const std::vector<const Expr *> &dims,
                      const std::string &var,
                      const std::function<bool(const std::string &)> &invariant,
                      const std::map<std::string, VarBounds> &bounds) {
  if (dims.empty())
    return false;
  std::vector<std::string> vars{var};
  for (const auto &[name, b] : bounds)
    if (name != var)
      vars.push_back(name);
  std::optional<Affine> first;
  std::int64_t step = 0;
  std::int64_t lo = std::numeric_limits<std::int64_t>::max();
  std::int64_t hi = std::numeric_limits<std::int64_t>::min();
  for (const Expr *d : dims) {
    std::optional<Affine> a = affineIn(*d, vars);
    if (!a)
      return false;
    auto coef = a->coef.find(var);
    std::int64_t c = coef == a->coef.end() ? 0 : coef->second;
    if (c == 0 || (first && c != step))
      return false;
    if (!first) {
      for (const std::string &s : a->constant.freeSymbols())
        if (!invariant(s))
          return false;
      first = a;
      step = c;
    }
    std::optional<std::int64_t> offset =
        (a->constant - first->constant).asConstant();
    if (!offset)
      return false;
    std::int64_t low = *offset, high = *offset;
    for (const auto &[name, b] : a->coef) {
      if (name == var || b == 0)
        continue;
      const VarBounds &r = bounds.at(name);
      low += b * (b > 0 ? r.first : r.last);
      high += b * (b > 0 ? r.last : r.first);
    }
    lo = std::min(lo, low);
    hi = std::max(hi, high);
  }
  return hi - lo < (step < 0 ? -step : step);
}

Expr flatOffset(const Container &c, const std::vector<Expr> &index) {
  std::vector<Expr> strides =
      c.strides.size() == c.shape.size() ? c.strides : rowMajorStrides(c.shape);
  Expr flat(0);
  for (std::size_t d = 0; d < index.size() && d < strides.size(); ++d)
    flat = flat + index[d] * strides[d];
  return flat;
}

} // namespace weir::ir
