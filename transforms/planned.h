#pragma once
/// \file
/// A transformation whose check computes what its rewrite needs (which
/// tiles, which buffers merge, which connectors move): the check makes a
/// plan once and the rewrite takes it, rather than the rewrite planning
/// again. Derive from PlannedTransformation<Plan> and write `plan` (the
/// preconditions, and the plan when they hold) and `rewrite` (the edit,
/// given the plan); check, apply and checkAndApply come from here, so
/// applyChecked plans once per step.

#include "ir/error.h"
#include "transforms/transformation.h"

#include <string>
#include <variant>

namespace weir::transforms {

/// What `plan` finds: the verdict, and the plan when it is ok.
template <typename Plan> struct Planned {
  CheckResult verdict;
  Plan plan{};

  static Planned refuse(CheckResult why) { return {std::move(why), Plan{}}; }
  static Planned accept(Plan plan) {
    return {CheckResult::success(), std::move(plan)};
  }
};

template <typename Plan> class PlannedTransformation : public Transformation {
public:
  using Transformation::Transformation;

  CheckResult check(const ir::Program &program, const Match &match,
                    const Params &params) const final {
    return plan(program, match, params).verdict;
  }
  /// For callers that apply without checking first: plans, and throws
  /// "<id> at <match>: <reason>" when the plan is refused.
  ApplyResult apply(const ir::Program &program, const Match &match,
                    const Params &params) const final {
    Planned<Plan> p = plan(program, match, params);
    if (!p.verdict)
      throw refusalError(id(), match, p.verdict);
    return rewrite(program, match, params, p.plan);
  }
  std::variant<CheckResult, ApplyResult>
  checkAndApply(const ir::Program &program, const Match &match,
                const Params &params) const final {
    Planned<Plan> p;
    try {
      p = plan(program, match, params);
    } catch (const Error &e) {
      return CheckResult::failure(e.what());
    }
    if (!p.verdict)
      return p.verdict;
    return rewrite(program, match, params, p.plan);
  }

protected:
  /// The preconditions beyond the pattern's, and the plan when they hold.
  /// Must not throw for a bad program: a failure is a refusal.
  virtual Planned<Plan> plan(const ir::Program &program, const Match &match,
                             const Params &params) const = 0;
  /// The edit, given the plan `plan` made for this program and match.
  virtual ApplyResult rewrite(const ir::Program &program, const Match &match,
                              const Params &params, const Plan &plan) const = 0;
};

} // namespace weir::transforms
