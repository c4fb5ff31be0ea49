#pragma once
/// \file
/// `transient-to-register` (scalar replacement): a transient that lives
/// entirely inside one map scope — every access node of it directly in
/// the scope, every memlet naming it inside — whose per-iteration
/// footprint is a small constant box gets Storage::Register and that box
/// as its shape. Lowering then allocates it per iteration inside the loop
/// body, the analysis counts no bytes for it, and the transient-memory
/// report leaves it out.
///
/// Ids: unchanged.

#include "transforms/transformation.h"

namespace weir::transforms {

class TransientToRegister : public Transformation {
public:
  std::string_view id() const override { return "transient-to-register"; }
  Tier tier() const override { return Tier::Movement; }
  std::string_view summary() const override {
    return "Keep a small transient private to each iteration of its map";
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
