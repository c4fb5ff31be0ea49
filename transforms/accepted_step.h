#pragma once
/// \file
/// applyIfAccepted for a caller that keeps the result as a shared version
/// (the workspace). The result comes back shared, with a memo of its own
/// (ir/state_memo.h) holding the indexes its validation built — the node
/// index, the map parameters' bounds, the scope parents — so the checks
/// that run on the new version next, and the validation of the step after
/// it (which compares with this version), do not build them again.

#include "ir/state_memo.h"
#include "transforms/transformation.h"

#include <memory>
#include <variant>

namespace weir::transforms {

struct AcceptedStep {
  std::shared_ptr<const ir::Program> program;
  IdMap idMap;
  std::shared_ptr<const ir::StateMemo> memo; ///< of `program`
};

/// Whether acceptStep validates the result (see Workspace's deferred
/// validation).
enum class ResultCheck : std::uint8_t { Validate, Defer };

/// applyIfAccepted's refusal, or its result, validated unless `check` is
/// Defer, with the result's memo; throws as applyIfAccepted does.
std::variant<CheckResult, AcceptedStep>
acceptStep(const ir::Program &program, const Transformation &t,
           const Match &match, const Params &params, InputValidity input,
           ResultCheck check = ResultCheck::Validate);

} // namespace weir::transforms
