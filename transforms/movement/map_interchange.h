#pragma once
/// \file
/// `map-interchange` (DaCe's MapInterchange, TVM's reorder): reorder the
/// parameters of one map — two of them (`first`, `second`) or a whole
/// `permutation` — or, with `nested`, swap an outer map with the one map
/// its scope holds. Exact: refused when the new order would change the
/// order in which two iterations touch one element (a sum over two
/// reordered parameters, a read of what another iteration writes).
///
/// Ids: unchanged (a nested swap keeps both entries and exits in place and
/// exchanges their parameters and ranges).

#include "transforms/transformation.h"

namespace weir::transforms {

class MapInterchange : public Transformation {
public:
  std::string_view id() const override { return "map-interchange"; }
  Tier tier() const override { return Tier::Movement; }
  std::string_view summary() const override {
    return "Reorder the dimensions of a map, or swap two nested maps "
           "(loop interchange)";
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
