#pragma once
/// \file
/// `in-place`: an elementwise map that reads each element of a transient
/// for the last time and writes its result to the same position of
/// another transient of the same type and layout writes into the first
/// one instead, so the program needs one buffer fewer (the peak of live
/// transient memory falls; the bytes moved do not change).
///
/// Ids: unchanged; the output container is renamed to the input.

#include "transforms/transformation.h"

namespace weir::transforms {

class InPlace : public Transformation {
public:
  std::string_view id() const override { return "in-place"; }
  Tier tier() const override { return Tier::Movement; }
  std::string_view summary() const override {
    return "Let an elementwise map write its result over the input it "
           "consumes";
  }
  std::string_view description() const override;
  const Pattern &pattern() const override;
  CheckResult check(const ir::Program &program, const Match &match,
                    const Params &params) const override;
  ApplyResult apply(const ir::Program &program, const Match &match,
                    const Params &params) const override;
};

} // namespace weir::transforms
