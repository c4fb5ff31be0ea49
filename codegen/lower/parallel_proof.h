#pragma once
/// \file
/// When may a loop run its iterations in parallel (or in SIMD lanes)? When
/// no two iterations touch one element of a container the body writes. The
/// proof here is deliberately simple and sound: for every written container
/// there is a dimension whose index is, in every access of the body, the
/// same expression `var + rest`, where `rest` depends only on names that do
/// not vary inside the loop. Distinct iterations then use distinct indices
/// in that dimension, so each element belongs to one iteration.

#include "ir/expr.h"

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

/// See the file comment. `invariant` names the symbols and loop variables
/// that are fixed while `var` runs.
bool iterationsArePrivate(const AccessLog &log, const std::string &var,
                          const std::set<std::string, std::less<>> &invariant);

} // namespace weir::codegen
