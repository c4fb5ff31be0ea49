#pragma once
/// \file
/// `weir conformance` (conformance.cpp).

#include "app/cli/commands.h"

namespace weir::cli {

/// `weir conformance [--json] [--filter FILE] [--dir DIR] [--only S] ...`:
/// runs every ONNX backend test under the test-data root and reports
/// pass/fail/skip per test and totals. Returns 0 whenever the run completes.
int conformanceCommand(const Args &args);

} // namespace weir::cli
