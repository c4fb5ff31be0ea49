#pragma once
/// \file
/// `tasklet-fusion`: a tasklet that hands a value directly to another
/// tasklet in the same scope (an empty memlet between their connectors, as
/// map-fusion leaves them) becomes one tasklet running the first body, then
/// the second (DaCe's TaskletFusion).
///
/// Ids: the fused tasklet keeps the first tasklet's id; the id map sends
/// the second to it, so every other match listed before the fusion (the next
/// link of a chain a → b → c, in either order) still names existing nodes.

#include "transforms/transformation.h"

namespace weir::transforms {

class TaskletFusion : public Transformation {
public:
  std::string_view id() const override { return "tasklet-fusion"; }
  Tier tier() const override { return Tier::Fusion; }
  std::string_view summary() const override {
    return "Fuse a tasklet into the tasklet it hands its value to";
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
