#pragma once
/// \file
/// When may a loop run its iterations in parallel (or in SIMD lanes)? When
/// no two iterations touch one element of a container the body writes. The
/// proof here is deliberately simple and sound: for every written container
/// there is a dimension whose index is, in every access of the body, the
/// same expression `var + rest`, where `rest` depends only on names that do
/// not vary inside the loop. Distinct iterations then use distinct indices
/// in that dimension, so each element belongs to one iteration. Or, more
/// generally, the dimension's index is in every access `a·var + rest + c +
/// Σ b·u` with one coefficient a, one invariant `rest`, integer offsets c
/// and u that vary inside the loop over known constant ranges, and all the
/// `c + Σ b·u` lie in an interval shorter than |a|: the iterations then
/// touch disjoint intervals of that dimension (an im2col's row `c·9 + 3·k0
/// + k1` is private to each channel c; a Winograd tile's outputs `4·tx +
/// j`, j in 0..3, to each tile column tx).

#include "ir/affine.h"
#include "ir/expr.h"

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace weir::codegen {

/// One element access of a loop body, by its per-dimension index.
struct Access {
  std::string container;
  std::vector<ir::Expr> index;
  bool write = false;
};

struct AccessLog {
  std::vector<Access> accesses;
  /// A library routine runs in the body (it parallelizes itself).
  bool callsLibrary = false;
};

using ir::VarBounds;

/// See the file comment. `invariant` names the symbols and loop variables
/// that are fixed while `var` runs; `inner` bounds loop variables that vary
/// inside it.
bool iterationsArePrivate(const AccessLog &log, const std::string &var,
                          const std::set<std::string, std::less<>> &invariant,
                          const std::map<std::string, VarBounds> &inner = {});

} // namespace weir::codegen
