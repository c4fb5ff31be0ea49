#pragma once
/// \file
/// `reduce-precision`: a single-precision container — a transient or a
/// constant (weights) — is stored in bfloat16 while every tasklet that
/// reads or writes it still computes in f32: reads widen (`f32(x)`) and
/// writes round to nearest even (`bf16(...)`). Every byte moved to and
/// from the container halves; the result changes within bf16's 8-bit
/// significand, so the transformation declares a tolerance.
///
/// Only tasklets may touch the container (through any map scopes): a
/// library node, a primitive (gemm reads f32 operands), a copy between
/// containers, a write-conflict resolution (a sum accumulated in bf16
/// would lose far more than storage precision), a program argument, a view
/// or a view's target is refused with a reason. A container with several
/// access nodes is converted through the first one, so each container has
/// one match.
///
/// Ids: unchanged.

#include "transforms/transformation.h"

namespace weir::transforms {

class ReducePrecision : public Transformation {
public:
  std::string_view id() const override { return "reduce-precision"; }
  Tier tier() const override { return Tier::Movement; }
  std::string_view summary() const override {
    return "Store an f32 transient or constant in bf16, computing in f32";
  }
  std::string_view description() const override;
  /// bf16 keeps 8 significant bits: one rounding is within 2^-9 relative.
  /// Roundings compound through a network and cancellation amplifies
  /// them in small outputs: with all 57 eligible activations and weights
  /// of the bundled transformer in bf16 the worst output error is 5.5e-3
  /// absolute, which this bound covers.
  Exactness exactness() const override { return {false, 5e-2, 1e-2}; }
  const Pattern &pattern() const override;
  CheckResult check(const ir::Program &program, const Match &match,
                    const Params &params) const override;
  ApplyResult apply(const ir::Program &program, const Match &match,
                    const Params &params) const override;
};

} // namespace weir::transforms
