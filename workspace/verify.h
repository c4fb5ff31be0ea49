#pragma once
/// \file
/// Verification: run a program before and after a transformation (or a
/// whole recipe) on the same inputs and compare the outputs with the
/// tolerance the transformations declare. Exact transformations must give
/// bit-identical outputs.
///
/// Both programs run on the CPU backend. Library nodes left in either are
/// expanded first with the default implementations (a program must be
/// runnable to be verified; an operator no implementation handles is
/// reported by name).

#include "core/interp/bind_inputs.h"
#include "ir/program.h"
#include "transforms/transformation.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace weir::workspace {

struct VerifyOptions {
  /// Seed of the random inputs (runtime::randomInputs); ignored for inputs
  /// given in `inputs`.
  std::uint64_t seed = 0;
  interp::TensorMap inputs;
  /// Sizes of symbolic dimensions of the random inputs; a symbol not given
  /// here is 1 (batch size 1).
  ir::Bindings dims;
  /// Override the declared tolerance.
  std::optional<transforms::Exactness> tolerance;
  int threads = 0; ///< 0 = the number of cores
};

struct OutputCheck {
  std::string name;
  bool ok = true;
  double maxAbs = 0, maxRel = 0;
  std::string problem; ///< "" when ok
};

struct VerifyReport {
  bool ok = true;
  transforms::Exactness tolerance;
  std::vector<OutputCheck> outputs;
  double seconds = 0;
  /// "verified: 2 outputs bit-identical" / "MISMATCH: output 'y': ..."
  std::string str() const;
};

/// The loosest of several declared tolerances (exact only when all are).
transforms::Exactness
combineTolerances(const std::vector<transforms::Exactness> &steps);

/// Runs both programs and compares. Throws weir::Error when either cannot
/// be expanded, compiled or run, or their inputs or outputs differ in name.
VerifyReport verifyPrograms(const ir::Program &before, const ir::Program &after,
                            const transforms::Exactness &tolerance,
                            const VerifyOptions &options = {});

} // namespace weir::workspace
