#pragma once
/// \file
/// `expand`: one library node becomes its chosen implementation (the op's
/// default when the `implementation` parameter is empty). See
/// expansion.h for the implementations themselves.

#include "transforms/transformation.h"

namespace weir::transforms {

class Expand : public Transformation {
public:
  std::string_view id() const override { return "expand"; }
  Tier tier() const override { return Tier::Expansion; }
  std::string_view summary() const override {
    return "Replace one operator by an implementation (maps and tasklets, or "
           "a library call)";
  }
  std::string_view description() const override;
  std::vector<ParamSpec> params() const override;
  Exactness exactness() const override;
  const Pattern &pattern() const override;
  CheckResult check(const ir::Program &program, const Match &match,
                    const Params &params) const override;
  ApplyResult apply(const ir::Program &program, const Match &match,
                    const Params &params) const override;
};

} // namespace weir::transforms
