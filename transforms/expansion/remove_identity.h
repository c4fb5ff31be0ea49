#pragma once
/// \file
/// `remove-identity`: an Identity, or a Dropout in inference mode, is
/// removed; its consumers read its input directly.

#include "transforms/transformation.h"

namespace weir::transforms {

class RemoveIdentity : public Transformation {
public:
  std::string_view id() const override { return "remove-identity"; }
  Tier tier() const override { return Tier::Expansion; }
  std::string_view summary() const override {
    return "Remove Identity and inference-mode Dropout operators";
  }
  std::string_view description() const override;
  const Pattern &pattern() const override;
  CheckResult check(const ir::Program &program, const Match &match,
                    const Params &params) const override;
  ApplyResult apply(const ir::Program &program, const Match &match,
                    const Params &params) const override;
};

} // namespace weir::transforms
