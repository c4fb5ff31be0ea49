#pragma once
/// \file
/// The limits a user can rely on: inputs past them are refused with a
/// message naming the limit, before anything is allocated or compiled.
/// Reading a model has its own (onnx/limits.h: file, tensor and total
/// bytes, subgraph nesting); the rest are here, one place for all of them.
///
/// | limit | default | checked by |
/// |---|---|---|
/// | one tensor or buffer at run time | 4 GiB | run (interpreter, JIT) |
/// | all transient buffers together | 16 GiB | compile and run |
/// | a symbol bound at run time | 2^31 - 1 | compile and run |
/// | map scopes nested in one another | 64 | the validator |
/// | steps in a recipe | 100,000 | reading a recipe or session |
/// | loop IR statements of one compile | 2,000,000 | the JIT, the C++ export |
/// | tasklet and expression nesting | 1,000 | their parsers (ir/tasklet.h) |

#include "ir/program.h"

#include <cstdint>

namespace weir::ir {

/// Map scopes nested deeper than this are refused by the validator (real
/// programs nest a handful; the lowering and the interpreter recurse once
/// per level).
inline constexpr int kMaxScopeDepth = 64;
/// Steps a recipe (or a session's recipe) may hold.
inline constexpr std::size_t kMaxRecipeSteps = 100000;
/// Loop IR statements one compile may hold: code generation time grows with
/// them, and this many take minutes.
inline constexpr std::size_t kMaxLoopStatements = 2000000;

/// The memory limits of one run; the callers that run programs take them as
/// an option, so a harness or an embedding can tighten them.
struct RunLimits {
  /// Largest single buffer: an input, an output or a transient.
  std::int64_t maxTensorBytes = std::int64_t(4) << 30;
  /// Largest sum of every transient buffer (ir/memory.h's `allocated`).
  std::int64_t maxTransientBytes = std::int64_t(16) << 30;
  /// Largest value a program symbol may be bound to.
  std::int64_t maxSymbolValue = (std::int64_t(1) << 31) - 1;
};

/// Checks `program` against `limits` with its symbols bound by `symbols`.
/// A container whose size needs a symbol `symbols` lacks is not checked
/// (a later call, with every symbol bound, checks it), except that the
/// transient total counts unbound symbols as 1. Throws weir::Error naming
/// the symbol or container, its size and the limit.
void checkRunLimits(const Program &program, const Bindings &symbols,
                    const RunLimits &limits = {});

} // namespace weir::ir
