#pragma once
/// \file
/// The reductions other expansions build on (reduction.cpp).

#include "transforms/operators/expansion.h"

namespace weir::operators {

/// Softmax (or, with `log`, log-softmax) of `x` over the flagged `axes`
/// into container `out` of x's shape: a Max-resolved maximum, a
/// Sum-resolved exp(x - max), then a normalizing map. Fails unless x is
/// floating point.
void addSoftmax(ExpansionContext &ctx, const ir::Container &x,
                const std::vector<bool> &axes, bool log,
                const std::string &out);

} // namespace weir::operators
