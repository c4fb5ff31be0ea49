#pragma once
/// \file
/// Index arithmetic transformations reason with: an index expression as a
/// constant plus integer multiples of chosen variables, and the flat
/// element offset of an index into a container.

#include "ir/expr.h"
#include "ir/program.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace weir::ir {

/// e = constant + Σ coef[v]·v over the chosen variables; the constant may
/// hold other symbols.
struct Affine {
  Expr constant;
  std::map<std::string, std::int64_t> coef;
};

/// `e` as an Affine in `vars` (integer coefficients), or nullopt when it is
/// not one (floordiv, mod, min, products of variables, symbolic factors).
std::optional<Affine> affineIn(const Expr &e,
                               const std::vector<std::string> &vars);

/// The flat element offset of `index` in `c`: Σ index[d]·stride[d], with
/// the container's strides (row-major unless it has others).
Expr flatOffset(const Container &c, const std::vector<Expr> &index);

} // namespace weir::ir
