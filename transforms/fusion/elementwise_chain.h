#pragma once
/// \file
/// `elementwise-chain`: a whole chain of maps, each reading the previous
/// one's output element by element (a chain of elementwise operators after
/// expansion: bias, GELU's dozen steps, a residual add), becomes one map
/// with one tasklet in a single step. It is `map-fusion` down the chain
/// from its head until no fusion passes, then `tasklet-fusion` inside the
/// fused map until none passes — the same rewrites the auto recipe runs
/// one by one, as one undoable step.
///
/// Matches only a chain's head (a map no map-fusion feeds); a map further
/// down is refused naming the map that is fused into it.
///
/// Ids: those of map-fusion and tasklet-fusion, composed: the head's
/// MapEntry and the last map's MapExit stay.

#include "transforms/transformation.h"

namespace weir::transforms {

class ElementwiseChain : public Transformation {
public:
  std::string_view id() const override { return "elementwise-chain"; }
  Tier tier() const override { return Tier::Fusion; }
  std::string_view summary() const override {
    return "Fuse a whole chain of elementwise maps into one map and tasklet";
  }
  std::string_view description() const override;
  const Pattern &pattern() const override;
  CheckResult check(const ir::Program &program, const Match &match,
                    const Params &params) const override;
  ApplyResult apply(const ir::Program &program, const Match &match,
                    const Params &params) const override;
};

} // namespace weir::transforms
