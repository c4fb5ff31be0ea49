#pragma once
/// \file
/// `reduction-fusion`: a cheap one-to-one value that a map writes into a
/// transient is recomputed inside every map that reads it, reductions
/// included, and the transient disappears. This is what stitches a
/// reduction to its elementwise neighbours: softmax's scaled scores, read
/// by the max pass, the exp-sum pass and the normalisation, or layer-norm's
/// centred values, read by the variance pass and the normalisation, are
/// no longer stored once and loaded several times (docs/fusion.md).
///
/// Ids: every node that stays keeps its id; the array's access node goes,
/// and so does the producer map when nothing else is left in it. The
/// recomputed tasklets are new nodes (they stand for no old one).

#include "transforms/transformation.h"

namespace weir::transforms {

class ReductionFusion : public Transformation {
public:
  std::string_view id() const override { return "reduction-fusion"; }
  Tier tier() const override { return Tier::Fusion; }
  std::string_view summary() const override {
    return "Recompute a cheap elementwise value in every map that reads it, "
           "reductions included, instead of storing it";
  }
  std::string_view description() const override;
  std::vector<ParamSpec> params() const override;
  const Pattern &pattern() const override;
  CheckResult check(const ir::Program &program, const Match &match,
                    const Params &params) const override;
  ApplyResult apply(const ir::Program &program, const Match &match,
                    const Params &params) const override;
};

} // namespace weir::transforms
