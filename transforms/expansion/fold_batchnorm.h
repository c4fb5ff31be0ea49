#pragma once
/// \file
/// `fold-batchnorm`: Conv followed by an inference-mode BatchNormalization
/// becomes one Conv with the normalization folded into its weights and bias.

#include "transforms/transformation.h"

namespace weir::transforms {

class FoldBatchNorm : public Transformation {
public:
  std::string_view id() const override { return "fold-batchnorm"; }
  Tier tier() const override { return Tier::Expansion; }
  std::string_view summary() const override {
    return "Fold an inference-mode BatchNormalization into the Conv before it";
  }
  std::string_view description() const override;
  Exactness exactness() const override { return {false, 1e-4, 1e-5}; }
  const Pattern &pattern() const override;
  CheckResult check(const ir::Program &program, const Match &match,
                    const Params &params) const override;
  ApplyResult apply(const ir::Program &program, const Match &match,
                    const Params &params) const override;
};

} // namespace weir::transforms
