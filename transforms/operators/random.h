#pragma once
/// \file
/// Random draws for the expansions of the random generators and of
/// training-mode Dropout (random.cpp): a map over an output whose tasklet
/// draws from hash(seed, flat index), the tasklet language's
/// counter-based generator.

#include "transforms/operators/expansion.h"

#include <cstdint>

namespace weir::operators {

/// The index of `y`'s element in a random map's parameters (i0, i1, ...):
/// what its inputs and outputs are indexed with.
std::vector<ir::Expr> elementIndex(const ir::Container &y);

/// The node's seed: its `seed` attribute's bits (a float, or an integer
/// for Dropout), else a hash of the node's name.
std::uint64_t seedOf(const ExpansionContext &ctx);

/// A map over `y`'s shape whose tasklet first draws `u`, uniform in [0, 1)
/// (with `normal`, `z`, standard normal, instead), then runs `code`.
void addRandomMap(ExpansionContext &ctx, const ir::Container &y,
                  std::uint64_t seed, bool normal, const std::string &code,
                  std::vector<ir::MappedInput> inputs,
                  const std::vector<ir::MappedOutput> &outputs);

/// Dropout with training_mode true: y = x / (1 - ratio) where a draw is at
/// least the ratio, else 0; the mask says which were kept.
void expandTrainingDropout(ExpansionContext &ctx);

} // namespace weir::operators
