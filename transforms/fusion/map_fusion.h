#pragma once
/// \file
/// `map-fusion`: a map that writes a transient element by element, and the
/// map with the same iteration space that reads it back element by element,
/// become one map in which the value goes from the producing tasklet to the
/// consuming one directly (DaCe's MapFusion). When the first map writes
/// several arrays the second reads (a diamond), every one of them is handed
/// over in the same step.
///
/// Ids: the fused map keeps the producer's MapEntry and the consumer's
/// MapExit, so every other match listed before the fusion (the next link of
/// a chain A → B → C, in either order) still names existing nodes. The id
/// map sends the consumer's entry to the kept entry and the producer's exit
/// to the kept exit; a removed intermediate access node is absent.

#include "transforms/transformation.h"

namespace weir::transforms {

class MapFusion : public Transformation {
public:
  std::string_view id() const override { return "map-fusion"; }
  Tier tier() const override { return Tier::Fusion; }
  std::string_view summary() const override {
    return "Fuse a map into the map that reads its output element by element";
  }
  std::string_view description() const override;
  const Pattern &pattern() const override;
  CheckResult check(const ir::Program &program, const Match &match,
                    const Params &params) const override;
  ApplyResult apply(const ir::Program &program, const Match &match,
                    const Params &params) const override;
};

} // namespace weir::transforms
