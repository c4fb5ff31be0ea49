#pragma once
/// \file
/// Interval arithmetic over index expressions: the closed range of values
/// an Expr takes when each symbol lies in a known interval. The validator
/// bounds memlet subsets with it, and lowering proves accesses in bounds
/// (codegen/lower/bounds_proof.h).

#include "ir/expr.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace weir::ir {

/// Closed integer interval [lo, hi].
struct Interval {
  std::int64_t lo;
  std::int64_t hi;
};

using IntervalEnv = std::map<std::string, Interval, std::less<>>;

/// The values `e` can take when every symbol lies in its interval in `env`;
/// nullopt when a symbol is not in `env`, an operation is not bounded
/// (division by a non-constant), or the arithmetic would overflow.
std::optional<Interval> boundOf(const Expr &e, const IntervalEnv &env);

} // namespace weir::ir
