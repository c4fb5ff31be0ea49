#pragma once
/// \file
/// `layout-transform`: a 2-D convolution (group 1, explicit pads, f32,
/// constant weights) moves to the blocked channel layout NCHWc
/// (transforms/expansion/blocked_layout.h): its input is reordered to
/// [N, C/b, H, W, b], its weights to [K/b, C/b, KH, KW, b, b] (once, at
/// apply time), it becomes a `BlockedConv`, and a reorder back gives the
/// NCHW output. The conversions sit at the boundaries and cancel: when the
/// input is already the reorder of a blocked tensor — directly, or through
/// elementwise operators on same-shape operands (Relu, Add of a residual,
/// ...), which then run on the blocked tensors — the convolution reads the
/// blocked tensor, and a reorder whose result nothing reads any more goes.
/// So a chain conv → relu → conv → add → relu → conv, transformed
/// convolution by convolution, ends with one reorder at each end.
///
/// Ids: the Conv's id passes to its BlockedConv; elementwise operators
/// keep theirs; removed reorders disappear.

#include "transforms/transformation.h"

namespace weir::transforms {

class LayoutTransform : public Transformation {
public:
  std::string_view id() const override { return "layout-transform"; }
  Tier tier() const override { return Tier::Movement; }
  std::string_view summary() const override {
    return "Move a convolution to the blocked NCHWc layout, cancelling "
           "adjacent reorders";
  }
  std::string_view description() const override;
  std::vector<ParamSpec> params() const override;
  /// The blocked expansion sums the input channels in another order
  /// (cb, kh, kw, ci instead of c, kh, kw).
  Exactness exactness() const override { return {false, 1e-4, 1e-5}; }
  const Pattern &pattern() const override;
  CheckResult check(const ir::Program &program, const Match &match,
                    const Params &params) const override;
  ApplyResult apply(const ir::Program &program, const Match &match,
                    const Params &params) const override;
};

} // namespace weir::transforms
