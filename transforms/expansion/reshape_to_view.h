#pragma once
/// \file
/// `reshape-to-view`: a Reshape, Flatten, Squeeze or Unsqueeze whose output
/// is a plain transient becomes a view of its input — the same elements
/// under a new shape, copied by nobody.

#include "transforms/transformation.h"

namespace weir::transforms {

class ReshapeToView : public Transformation {
public:
  std::string_view id() const override { return "reshape-to-view"; }
  Tier tier() const override { return Tier::Expansion; }
  std::string_view summary() const override {
    return "Turn a Reshape, Flatten, Squeeze or Unsqueeze into a view of its "
           "input (no copy)";
  }
  std::string_view description() const override;
  const Pattern &pattern() const override;
  CheckResult check(const ir::Program &program, const Match &match,
                    const Params &params) const override;
  ApplyResult apply(const ir::Program &program, const Match &match,
                    const Params &params) const override;
};

} // namespace weir::transforms
