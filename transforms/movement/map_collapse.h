#pragma once
/// \file
/// `map-collapse` (DaCe's MapCollapse, TVM's fuse of loop axes): an outer
/// map whose scope holds exactly one inner map and nothing else becomes
/// one map over both parameter lists (outer first), so the lowering sees
/// one loop nest it may parallelize as a whole and the inner body's
/// memlets, already per iteration, stay as they are. Exact: the iteration
/// order is the nest's order.
///
/// Ids: the inner entry and exit are mapped to the outer ones.

#include "transforms/transformation.h"

namespace weir::transforms {

class MapCollapse : public Transformation {
public:
  std::string_view id() const override { return "map-collapse"; }
  Tier tier() const override { return Tier::Movement; }
  std::string_view summary() const override {
    return "Merge a map nest of two maps into one map over both parameter "
           "lists";
  }
  std::string_view description() const override;
  const Pattern &pattern() const override;
  CheckResult check(const ir::Program &program, const Match &match,
                    const Params &params) const override;
  ApplyResult apply(const ir::Program &program, const Match &match,
                    const Params &params) const override;
};

} // namespace weir::transforms
