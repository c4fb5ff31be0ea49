#pragma once
/// \file
/// Structural validation of a Program. Every transformation's result is
/// validated in tests and debug builds; the CLI's `weir validate` prints the
/// diagnostics.

#include "ir/program.h"

#include <string>
#include <string_view>
#include <vector>

namespace weir::ir {

enum class Severity : std::uint8_t { Error, Warning };

/// One finding, with the ids of the nodes and edges involved so a viewer can
/// highlight them.
struct Diagnostic {
  Severity severity = Severity::Error;
  std::string message;
  std::string state; ///< state name, "" for program-level findings
  std::vector<NodeId> nodes;
  std::vector<EdgeId> edges;

  /// "error: state 'main': ... [nodes 3, 7] [edges 2]"
  std::string str() const;
};

/// All findings, errors and warnings, in a deterministic order.
std::vector<Diagnostic> validate(const Program &program);
/// validate(program) for a program made from `validBase` (a step's input),
/// which validated without errors: the same findings, sooner, as a node or
/// edge the step left alone is not checked again for errors it cannot have
/// (ir/validation_baseline.h). A `validBase` with errors makes the answer
/// wrong.
std::vector<Diagnostic> validate(const Program &program,
                                 const Program &validBase);

/// True when any diagnostic is an error.
bool hasErrors(const std::vector<Diagnostic> &diagnostics);

/// Program metadata an importer sets when it could not verify the shapes
/// the model declares (ONNX shape inference stopped early); its value says
/// why. Such a program can be viewed and transformed, not run.
inline constexpr std::string_view kShapesUnverified = "shapes_unverified";

/// Throws weir::Error unless `program` may run: it validates (the message
/// names the first three errors) and nothing marks its shapes unverified.
/// Every backend and the interpreter call it before anything else.
void requireRunnable(const Program &program);

} // namespace weir::ir
