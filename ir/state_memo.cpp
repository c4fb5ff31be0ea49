/// \file
/// Indexes of one program version's states (see state_memo.h).

#include "ir/state_memo.h"

namespace weir::ir {
namespace {

thread_local const UseStateMemo *innermost = nullptr;

} // namespace

StateMemo::StateMemo(std::shared_ptr<const Program> program)
    : program_(std::move(program)) {}

bool StateMemo::holds(const State &state) const {
  const std::vector<State> &states = program_->states;
  return !states.empty() && &state >= &states.front() &&
         &state <= &states.back();
}

std::shared_ptr<const void> StateMemo::find(const State &state,
                                            std::type_index kind) const {
  std::lock_guard lock(mutex_);
  auto it = indexes_.find({&state, kind});
  return it == indexes_.end() ? nullptr : it->second;
}

void StateMemo::add(const State &state, std::type_index kind,
                    std::shared_ptr<const void> index) const {
  std::lock_guard lock(mutex_);
  indexes_.emplace(std::make_pair(&state, kind), std::move(index));
}

UseStateMemo::UseStateMemo(const StateMemo *memo)
    : memo_(memo), outer_(innermost) {
  innermost = this;
}

UseStateMemo::~UseStateMemo() { innermost = outer_; }

const StateMemo *memoHolding(const State &state) {
  for (const UseStateMemo *use = innermost; use; use = use->outer_)
    if (use->memo_ && use->memo_->holds(state))
      return use->memo_;
  return nullptr;
}

} // namespace weir::ir
