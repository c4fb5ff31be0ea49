#pragma once
/// \file
/// Index arithmetic transformations reason with: an index expression as a
/// constant plus integer multiples of chosen variables, and the flat
/// element offset of an index into a container.

#include "ir/expr.h"
#include "ir/program.h"

#include <cstdint>
#include <functional>
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

/// The constant values [first, last] a variable takes.
struct VarBounds {
  std::int64_t first = 0, last = 0;
};

/// The bounds of those of `params` whose `ranges` are constant and not
/// empty (the last value a positive step reaches).
std::map<std::string, VarBounds>
constantBounds(const std::vector<std::string> &params,
               const std::vector<Range> &ranges);

/// Whether distinct values of `var` give disjoint index sets through the
/// index expressions `dims` (one per access of a container, in one
/// dimension): each is `a·var + rest + c_k + Σ b·u` with one coefficient a,
/// one `rest` whose symbols all satisfy `invariant`, integer offsets c_k
/// and variables u bounded in `bounds`, and every `c_k + Σ b·u` lies in one
/// interval shorter than |a|. Then the value v touches only [a·v + lo,
/// a·v + hi]. `var + rest` is the case a = 1 with nothing else; an
/// im2col's row `9·c + 3·k0 + k1` (k0, k1 in 0..2) is another, and a
/// Winograd tile's outputs `4·tx + j`, j in 0..3, a third.
bool disjointPerValue(const std::vector<const Expr *> &dims,
                      const std::string &var,
                      const std::function<bool(const std::string &)> &invariant,
                      const std::map<std::string, VarBounds> &bounds);

/// The flat element offset of `index` in `c`: Σ index[d]·stride[d], with
/// the container's strides (row-major unless it has others).
Expr flatOffset(const Container &c, const std::vector<Expr> &index);

} // namespace weir::ir
