#pragma once
/// \file
/// `view-elimination`: a map that only copies an array with its dimensions
/// permuted (a Transpose, after expansion) is folded into what reads the
/// copy: maps read the original element directly, and a gemm reads the
/// original as a strided matrix (its leading dimension and, when rows and
/// columns swap, its transpose flag change). The copy is never made.
/// Reshapes and the like become views at tier 1 (`reshape-to-view`); this
/// is their counterpart for data that really moves.
///
/// Ids: readers keep theirs; the copy map and the copy's access node go.

#include "transforms/transformation.h"

namespace weir::transforms {

class ViewElimination : public Transformation {
public:
  std::string_view id() const override { return "view-elimination"; }
  Tier tier() const override { return Tier::Movement; }
  std::string_view summary() const override {
    return "Fold a transposing copy into the memlets of what reads it";
  }
  std::string_view description() const override;
  const Pattern &pattern() const override;
  CheckResult check(const ir::Program &program, const Match &match,
                    const Params &params) const override;
  ApplyResult apply(const ir::Program &program, const Match &match,
                    const Params &params) const override;
};

} // namespace weir::transforms
