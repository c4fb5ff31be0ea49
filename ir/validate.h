#pragma once
/// \file
/// Structural validation of a Program. Every transformation's result is
/// validated in tests and debug builds; the CLI's `weir validate` prints the
/// diagnostics.

#include "ir/program.h"

#include <string>
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

/// True when any diagnostic is an error.
bool hasErrors(const std::vector<Diagnostic> &diagnostics);

} // namespace weir::ir
