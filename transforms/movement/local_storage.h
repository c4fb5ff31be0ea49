#pragma once
/// \file
/// `local-storage` (DaCe's InLocalStorage/OutLocalStorage, TVM's
/// cache_read/cache_write): in a tiled nest — an outer map whose body holds
/// an inner map — the part of one array the inner map reads in one tile is
/// copied into a small transient buffer before the inner map runs, and the
/// inner map reads the buffer (index minus the tile's origin). With
/// `direction = out` the inner map writes the buffer instead and a copy
/// after it stores the tile into the array.
///
/// Ids: every node keeps its id; the buffer's access node and the copy
/// map's entry, tasklet and exit are new.

#include "transforms/transformation.h"

namespace weir::transforms {

class LocalStorage : public Transformation {
public:
  std::string_view id() const override { return "local-storage"; }
  Tier tier() const override { return Tier::Movement; }
  std::string_view summary() const override {
    return "Stage the tile an inner map reads (or writes) in a small local "
           "buffer";
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
