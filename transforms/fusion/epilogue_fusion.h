#pragma once
/// \file
/// `epilogue-fusion`: the elementwise map that reads a gemm's output C
/// element by element (a bias add, an activation, a residual add, a
/// scale, or all of them after map- and tasklet-fusion) becomes the gemm's
/// epilogue (ir/primitives.h): the gemm writes the map's output directly,
/// and its raw product is never stored and loaded back.
///
/// Ids: the gemm keeps its id (and its map's ids); the fused map's nodes
/// and the intermediate access node disappear.

#include "transforms/transformation.h"

namespace weir::transforms {

class EpilogueFusion : public Transformation {
public:
  std::string_view id() const override { return "epilogue-fusion"; }
  Tier tier() const override { return Tier::Fusion; }
  std::string_view summary() const override {
    return "Run the elementwise map that reads a gemm's output as the "
           "gemm's epilogue";
  }
  std::string_view description() const override;
  const Pattern &pattern() const override;
  CheckResult check(const ir::Program &program, const Match &match,
                    const Params &params) const override;
  ApplyResult apply(const ir::Program &program, const Match &match,
                    const Params &params) const override;
};

} // namespace weir::transforms
