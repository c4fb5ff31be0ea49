#include "ir/affine.h"

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

Expr flatOffset(const Container &c, const std::vector<Expr> &index) {
  std::vector<Expr> strides = c.strides.size() == c.shape.size()
                                  ? c.strides
                                  : rowMajorStrides(c.shape);
  Expr flat(0);
  for (std::size_t d = 0; d < index.size() && d < strides.size(); ++d)
    flat = flat + index[d] * strides[d];
  return flat;
}

} // namespace weir::ir
