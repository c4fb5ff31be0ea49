#pragma once
/// \file
/// `vectorize` (TVM's vectorize, DaCe's Vectorization): mark an innermost
/// map vectorized when its last parameter walks memory at unit stride (or
/// not at all) in every memlet, no write combines, and its iterations are
/// private, so the lowering marks the innermost loop for LLVM's loop
/// vectorizer. Exact (no fast-math: the vectorizer keeps the order of
/// floating-point operations).
///
/// Ids: unchanged.

#include "transforms/transformation.h"

namespace weir::transforms {

class Vectorize : public Transformation {
public:
  std::string_view id() const override { return "vectorize"; }
  Tier tier() const override { return Tier::Movement; }
  std::string_view summary() const override {
    return "Mark an innermost map whose last dimension is unit-stride as "
           "vectorized";
  }
  std::string_view description() const override;
  const Pattern &pattern() const override;
  CheckResult check(const ir::Program &program, const Match &match,
                    const Params &params) const override;
  ApplyResult apply(const ir::Program &program, const Match &match,
                    const Params &params) const override;
};

} // namespace weir::transforms
