#pragma once
/// \file
/// `fold-constants`: an operator whose inputs are all constant (or a Shape
/// of a statically shaped value) is computed now, and so is every operator
/// downstream that becomes constant in turn — whole Shape→Gather→Concat
/// chains fold in one step.

#include "transforms/transformation.h"

namespace weir::transforms {

class FoldConstants : public Transformation {
public:
  std::string_view id() const override { return "fold-constants"; }
  Tier tier() const override { return Tier::Expansion; }
  std::string_view summary() const override {
    return "Compute operators whose inputs are constant, and the constant "
           "subgraph they start";
  }
  std::string_view description() const override;
  std::vector<ParamSpec> params() const override;
  Exactness exactness() const override { return {false, 1e-5, 1e-6}; }
  const Pattern &pattern() const override;
  CheckResult check(const ir::Program &program, const Match &match,
                    const Params &params) const override;
  ApplyResult apply(const ir::Program &program, const Match &match,
                    const Params &params) const override;
};

} // namespace weir::transforms
