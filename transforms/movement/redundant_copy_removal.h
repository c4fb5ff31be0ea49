#pragma once
/// \file
/// `redundant-copy-removal` (DaCe's RedundantArray and RedundantSecondArray):
/// a plain copy — an access-to-access edge, or a map whose one tasklet is
/// `y = x` reading A at its parameters plus constants and writing B at its
/// parameters plus other constants (Concat, Pad, Slice and Split expand to
/// these) — between an array that exists only for the copy and another
/// one. Either the source A, written only before the copy and read only by
/// it, disappears and its producers write straight into B's slice (memlet
/// subsets shifted by the copy's offset), or the destination B, written
/// only by the copy, disappears and its readers read A's sub-box.
///
/// Ids: the copy map's nodes (entry, tasklet, exit) disappear; every other
/// node keeps its id.

#include "transforms/transformation.h"

namespace weir::transforms {

class RedundantCopyRemoval : public Transformation {
public:
  std::string_view id() const override { return "redundant-copy-removal"; }
  Tier tier() const override { return Tier::Movement; }
  std::string_view summary() const override {
    return "Remove an array that only feeds, or only receives, a plain copy";
  }
  std::string_view description() const override;
  const Pattern &pattern() const override;
  CheckResult check(const ir::Program &program, const Match &match,
                    const Params &params) const override;
  ApplyResult apply(const ir::Program &program, const Match &match,
                    const Params &params) const override;
};

} // namespace weir::transforms
