#pragma once
/// \file
/// `parallelize` (TVM's parallel): mark a map cpu-parallel when no two of
/// its iterations touch one element that either writes, so the lowering
/// may run them on the thread pool. Exact.
///
/// Ids: unchanged.

#include "transforms/transformation.h"

namespace weir::transforms {

class Parallelize : public Transformation {
public:
  std::string_view id() const override { return "parallelize"; }
  Tier tier() const override { return Tier::Movement; }
  std::string_view summary() const override {
    return "Mark a map whose iterations are provably independent as "
           "cpu-parallel";
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
