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

class MapTiling : public Transformation {
public:
  std::string_view id() const override { return "map-tiling"; }
  Tier tier() const override { return Tier::Movement; }
  std::string_view summary() const override {
    return "Split a map into an outer map over tiles and an inner map over "
           "one tile";
  }
  std::string_view description() const override;
  std::vector<ParamSpec> params() const override;
  const Pattern &pattern() const override;
  CheckResult check(const ir::Program &program, const Match &match,
                    const Params &params) const override;
  ApplyResult apply(const ir::Program &program, const Match &match,
                    const Params &params) const override;
};

/// A constant c with e <= c for every value of the symbols, found by
/// choosing one side of each min() (`min(o + 16, 37) - o` <= 16); nullopt
/// when none is found. Shared with local-storage, which sizes its buffer by
/// it.
std::optional<std::int64_t> constantUpperBound(const ir::Expr &e);

} // namespace weir::transforms
