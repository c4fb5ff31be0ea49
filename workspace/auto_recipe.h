#pragma once
/// \file
/// The `auto` recipe: steps picked by target, applied to a workspace one by
/// one so that its history (and recipe) lists exactly what was done. For the
/// CPU, tiers in order:
///   1. fold-constants until nothing folds (shape arithmetic, constant
///      bounds become constants later steps can read);
///   2. remove-identity everywhere (Identity, inference Dropout);
///   3. fold-batchnorm everywhere (Conv + BatchNormalization);
///   4. reshape-to-view everywhere (Reshape, Flatten, Squeeze, Unsqueeze
///      whose output is a plain transient);
///   5. expand with implementation=winograd on each 3x3 unit-stride Conv
///      with constant filters, at least 2^24 multiply-adds and an output
///      at least 14 wide (Winograd F(2x2, 3x3); smaller ones do not repay
///      the tile transforms), then expand-all (default implementations:
///      BLAS GEMM, im2col Conv);
///   6. init-fusion everywhere (bias fills of GEMMs into their epilogues);
///   7. epilogue-fusion everywhere (elementwise maps on GEMM outputs);
///   8. map-fusion everywhere (a producer map into its consumer, every
///      array between them at once);
///   9. reduction-fusion everywhere (cheap values recomputed in the maps,
///      reductions included, that read them);
///  10. tasklet-fusion everywhere (the tasklets fusion chained);
///  11. epilogue-fusion again (maps that fusion made line up with a GEMM);
///  12. view-elimination everywhere (transposing copies folded into their
///      readers);
///  13. in-place everywhere (elementwise maps writing over their input);
///  14. buffer-reuse with order = true (transients of one shape with
///      disjoint lifetimes share a buffer).
/// The other fusion and data-movement transformations join as they land.
/// Validation is deferred (Workspace::DeferredValidation) to the end of
/// each transformation's steps.

#include "workspace/workspace.h"

#include <functional>
#include <string>

namespace weir::workspace {

/// Called after each applied step (the CLI prints it).
using StepListener =
    std::function<void(const Version &before, const Version &after)>;

/// Applies the auto recipe for `target` ("cpu"); returns the steps applied.
/// Throws weir::Error for an unknown target.
int applyAutoRecipe(Workspace &ws, const std::string &target,
                    const StepListener &listener = {});

} // namespace weir::workspace
