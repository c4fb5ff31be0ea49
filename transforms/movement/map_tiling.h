#pragma once
/// \file
/// `map-tiling` (DaCe's MapTiling, TVM's split): a map over i, j with
/// ranges [b, e) becomes an outer map over tile origins (step = tile size
/// times the range's step) whose body is the original map, now iterating
/// [origin, min(origin + T·step, e)). The inner map keeps its parameters,
/// tasklets and memlets; the memlets between the two scopes describe what
/// one tile touches. Iteration order changes from row-major to tile by
/// tile, so a map whose writes could collide in a different order is
/// refused (see the description).
///
/// Ids: every node keeps its id (the original entry and exit become the
/// inner map); the outer entry and exit are new.

#include "transforms/transformation.h"

namespace weir::transforms {

/// A constant c with e <= c for every value of the symbols, found by
/// choosing one side of each min() (`min(o + 16, 37) - o` <= 16); nullopt
/// when none is found. Shared with local-storage, which sizes its buffer by
/// it.
std::optional<std::int64_t> constantUpperBound(const ir::Expr &e);

} // namespace weir::transforms
