#pragma once
/// \file
/// `sibling-map-fusion`: two maps over the same ranges that read the same
/// data and do not depend on each other become one map, which reads the
/// shared data once (DaCe's horizontal MapFusion; DNNFusion's fusion of
/// operators sharing an input).
///
/// Ids: the fused map keeps the first map's entry and exit; the id map
/// sends the second's entry and exit to them.

#include "transforms/transformation.h"

namespace weir::transforms {

class SiblingMapFusion : public Transformation {
public:
  std::string_view id() const override { return "sibling-map-fusion"; }
  Tier tier() const override { return Tier::Fusion; }
  std::string_view summary() const override {
    return "Join two independent maps over the same ranges that read the "
           "same data";
  }
  std::string_view description() const override;
  const Pattern &pattern() const override;
  CheckResult check(const ir::Program &program, const Match &match,
                    const Params &params) const override;
  ApplyResult apply(const ir::Program &program, const Match &match,
                    const Params &params) const override;
};

} // namespace weir::transforms
