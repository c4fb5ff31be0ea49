#pragma once
/// \file
/// The proof that an access stays inside its container, for every
/// iteration of the loops around it. Lowering asks it about each index of
/// each load and store; what it cannot prove gets a bounds guard in the
/// generated code (loop_ir.h, BoundsGuard), so no validated program makes
/// generated code touch memory outside its buffers.
///
/// Two arguments, either of which proves `0 <= index < extent`:
/// - intervals (ir/interval.h): each loop variable's constant range, from
///   its loop's bounds under the enclosing loops' ranges;
/// - symbolic extremes: an index affine in the loop variables reaches its
///   least and greatest value at its loops' first and last iterations
///   (`begin` and `end - 1`, through the enclosing loops in turn); those
///   are compared with the extent by ir::provablyLessEqual, which takes
///   program symbols as non-negative. This covers shapes with a batch
///   size N: `n` in [0, N) indexes a dimension of N.

#include "ir/expr.h"
#include "ir/interval.h"
#include "ir/subset.h"

#include <map>
#include <optional>
#include <string>

namespace weir::codegen::lowering {

class BoundsProof {
public:
  /// A loop over `range` (its bounds substituted) around what follows.
  void enter(const std::string &var, const ir::Range &range);
  void leave(const std::string &var);

  /// Whether `0 <= index < extent` at every iteration of the loops entered.
  bool inBounds(const ir::Expr &index, const ir::Expr &extent) const;

private:
  /// The least (or greatest) value of `e` over the loops, as an expression
  /// in program symbols only; nullopt when `e` is not affine in them.
  std::optional<ir::Expr> extreme(const ir::Expr &e, bool greatest,
                                  int depth) const;

  std::map<std::string, ir::Range, std::less<>> ranges_;
  ir::IntervalEnv intervals_;
};

} // namespace weir::codegen::lowering
