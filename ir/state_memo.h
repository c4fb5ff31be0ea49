#pragma once
/// \file
/// Indexes of the states of one program version, built once and shared by
/// every check that runs on that version.
///
/// Checking a match builds indexes over its whole state (adjacency, scope
/// parents); a recipe checks thousands of matches per version, so building
/// them each time made optimizing quadratic in the program's size. A
/// StateMemo holds such indexes for the states of one immutable program
/// (it keeps the program alive, so its states stay where they are). While
/// a UseStateMemo is in scope on a thread, memoized() returns the memo's
/// index for a state of that program, building it on first use; for any
/// other state (a transformation's working copy) it builds a fresh one.
///
///     ir::StateMemo memo(version);         // per version (the workspace's)
///     ir::UseStateMemo use(&memo);          // around checks on it
///     auto parents = ir::sharedScopeParents(state);  // built once
///
/// UseStateMemos nest: a state is looked up in the innermost memo that
/// holds it. Validating a step's result against its input has both in
/// scope, so the indexes validation builds for the result (node index, map
/// parameter bounds, scope parents) stay in the result's memo for the
/// checks that run on it next.

#include "ir/program.h"

#include <map>
#include <memory>
#include <mutex>
#include <typeindex>
#include <utility>

namespace weir::ir {

class StateMemo {
public:
  explicit StateMemo(std::shared_ptr<const Program> program);
  StateMemo(const StateMemo &) = delete;
  StateMemo &operator=(const StateMemo &) = delete;

  const Program &program() const { return *program_; }
  /// Whether `state` is one of the program's states (not a copy of one).
  bool holds(const State &state) const;

  std::shared_ptr<const void> find(const State &state,
                                   std::type_index kind) const;
  void add(const State &state, std::type_index kind,
           std::shared_ptr<const void> index) const;

private:
  std::shared_ptr<const Program> program_;
  mutable std::mutex mutex_;
  mutable std::map<std::pair<const State *, std::type_index>,
                   std::shared_ptr<const void>>
      indexes_;
};

/// Puts `memo` (may be null) in scope on the current thread, inside the
/// memos already in scope there.
class UseStateMemo {
public:
  explicit UseStateMemo(const StateMemo *memo);
  ~UseStateMemo();
  UseStateMemo(const UseStateMemo &) = delete;
  UseStateMemo &operator=(const UseStateMemo &) = delete;

private:
  friend const StateMemo *memoHolding(const State &state);
  const StateMemo *memo_;
  const UseStateMemo *outer_;
};

/// The innermost memo in scope on this thread that holds `state`, or null.
const StateMemo *memoHolding(const State &state);

/// The index of kind T of `state`: the memo's that holds the state, else
/// `build()` fresh.
template <typename T, typename Build>
std::shared_ptr<const T> memoized(const State &state, Build build) {
  const StateMemo *memo = memoHolding(state);
  if (!memo)
    return std::make_shared<const T>(build());
  if (auto found = memo->find(state, typeid(T)))
    return std::static_pointer_cast<const T>(found);
  auto index = std::make_shared<const T>(build());
  memo->add(state, typeid(T), index);
  return index;
}

} // namespace weir::ir
