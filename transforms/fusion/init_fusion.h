#pragma once
/// \file
/// `init-fusion`: the map that fills a gemm's accumulator before the gemm
/// adds its product to it (beta != 0; a convolution's or Gemm's bias
/// broadcast over the output) becomes a term of the gemm's epilogue
/// (ir/primitives.h), and the gemm starts from zero: the accumulator is no
/// longer written, then read and written again.
///
/// Ids: the gemm keeps its id; the initializing map and the access node
/// between it and the gemm disappear.

#include "transforms/transformation.h"

namespace weir::transforms {

class InitFusion : public Transformation {
public:
  std::string_view id() const override { return "init-fusion"; }
  Tier tier() const override { return Tier::Fusion; }
  std::string_view summary() const override {
    return "Add what initializes a gemm's accumulator in its epilogue "
           "instead";
  }
  std::string_view description() const override;
  /// The initial value is added after the product instead of before it:
  /// one rounding moves.
  Exactness exactness() const override { return {false, 1e-5, 1e-6}; }
  const Pattern &pattern() const override;
  CheckResult check(const ir::Program &program, const Match &match,
                    const Params &params) const override;
  ApplyResult apply(const ir::Program &program, const Match &match,
                    const Params &params) const override;
};

} // namespace weir::transforms
