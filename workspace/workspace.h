#pragma once
/// \file
/// The Workspace: the session object every front end uses (docs/DESIGN.md,
/// "Workspace"). It holds the program's versions — the imported program,
/// then one version per applied step — and a current position in them:
///
/// - apply() checks, applies and validates a transformation on the current
///   version and, only if all of that succeeds, appends the result (dropping
///   the redo tail). Anything that fails or throws leaves the workspace
///   exactly as it was and out of the history.
/// - undo(), redo() and revert() move the current position; nothing is
///   re-run. Versions are program values whose heavy parts (weights,
///   tasklet code, expressions, subgraphs) are shared between them.
/// - recipe() is the list of steps up to the current version; replay()
///   applies a recipe all-or-nothing.
/// - Observers hear about every change (the GUI redraws).
/// - Threads: every member function that changes the workspace, lists
///   matches, checks or verifies holds the workspace's (recursive) lock,
///   so calls from several threads take turns; the inline accessors do
///   not, so a reader on another thread holds lock() while it reads. A
///   change requested from inside a running step (a plugin calling undo)
///   is refused with a weir::Error, never interleaved.
/// - verify() runs the imported program and the current one on the same
///   seeded inputs and compares outputs within the loosest tolerance the
///   applied steps declare.

#include "ir/program.h"
#include "ir/state_memo.h"
#include "transforms/match_cache.h"
#include "transforms/transformation.h"
#include "workspace/recipe.h"
#include "workspace/verify.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace weir::workspace {

/// Where the workspace's first version came from (a session records it).
struct Source {
  std::string modelPath; ///< "" when built in memory
  std::string sha256;    ///< of the model file; "" when unknown
};

struct Version {
  std::shared_ptr<const ir::Program> program;
  std::optional<Step> step; ///< none for the first version
  transforms::IdMap idMap;  ///< previous version's ids -> this one's
  transforms::Exactness exactness;
  double seconds = 0; ///< time the step took

  /// ir::structuralHash of the program, computed when first asked for (it
  /// reads every node and weight; a recipe's steps mostly never need it).
  std::uint64_t hash() const;

private:
  struct HashCell {
    std::once_flag once;
    std::uint64_t value = 0;
  };
  std::shared_ptr<HashCell> hash_ = std::make_shared<HashCell>();
};

enum class ChangeKind : std::uint8_t { Applied, Undone, Redone, Reverted };

struct Change {
  ChangeKind kind = ChangeKind::Applied;
  std::size_t from = 0, to = 0; ///< version indices
};

class Workspace;
using Observer = std::function<void(const Workspace &, const Change &)>;

class Workspace {
public:
  explicit Workspace(ir::Program program, Source source = {});

  const ir::Program &program() const { return *versions_[current_].program; }
  std::shared_ptr<const ir::Program> programPtr() const {
    return versions_[current_].program;
  }
  std::uint64_t hash() const { return versions_[current_].hash(); }
  const Source &source() const { return source_; }

  /// All versions, including those after current() that redo can reach.
  const std::vector<Version> &versions() const { return versions_; }
  std::size_t current() const { return current_; }

  /// Matches of one transformation (by id) in the current version, from the
  /// incremental cache; not yet filtered by check().
  std::vector<transforms::Match> matches(std::string_view transformation);
  /// Matches of every registered transformation.
  std::vector<std::pair<std::string, std::vector<transforms::Match>>>
  allMatches();
  const transforms::MatchCache &matchCache() const { return cache_; }

  /// Whether the step would apply to the current version, and if not why.
  transforms::CheckResult check(std::string_view transformation,
                                const transforms::Match &match = {},
                                const transforms::Params &params = {}) const;
  /// Applies one step; returns the new version. Throws weir::Error (naming
  /// the transformation, the match and the reason) when the transformation
  /// is unknown, the check fails, the apply throws or its result does not
  /// validate; the workspace is then unchanged.
  const Version &apply(std::string_view transformation,
                       const transforms::Match &match = {},
                       const transforms::Params &params = {});
  /// apply(), except that a check that refuses is an answer, not an
  /// error: returns nullptr (and the reason in `refusal` when given) with
  /// the workspace unchanged. Checking and applying this way plans the step
  /// once, where check() then apply() plans it twice.
  const Version *tryApply(std::string_view transformation,
                          const transforms::Match &match = {},
                          const transforms::Params &params = {},
                          transforms::CheckResult *refusal = nullptr);

  bool canUndo() const { return current_ > 0; }
  bool canRedo() const { return current_ + 1 < versions_.size(); }
  /// Throw weir::Error when there is nothing to undo or redo.
  void undo();
  void redo();
  /// Make version `index` current (0 = as imported); later versions stay
  /// reachable by redo until the next apply.
  void revert(std::size_t index);

  /// The steps from the first version to the current one.
  Recipe recipe() const;
  /// Applies every step of `recipe` to the current version; all or nothing.
  /// A step whose recorded labels differ from the nodes it names fails with
  /// both names. Throws weir::Error naming the step.
  void replay(const Recipe &recipe);

  /// The first version against the current one (see verify.h).
  VerifyReport verify(const VerifyOptions &options = {}) const;
  /// Version `index` - 1 against version `index`.
  VerifyReport verifyStep(std::size_t index,
                          const VerifyOptions &options = {}) const;

  /// Returns an id for removeObserver. Observers run after the change is
  /// complete; an observer that throws is skipped, not the change.
  int addObserver(Observer observer);
  void removeObserver(int id);

  /// The workspace's lock, for reading it from another thread.
  std::unique_lock<std::recursive_mutex> lock() const {
    return std::unique_lock(mutex_);
  }

private:
  /// Marks a change in progress; throws when one already is.
  class Busy;
  void notify(const Change &change) const;
  /// The version `step` produces from `from`, or nullopt (with the reason
  /// in `refusal`) when its check refuses; throws when the transformation
  /// fails or its result does not validate. Changes nothing.
  std::optional<Version> attempt(const ir::Program &from, const Step &step,
                                 transforms::CheckResult *refusal) const;
  /// attempt(), with a refusal thrown as weir::Error.
  Version derive(const ir::Program &from, const Step &step) const;
  /// The indexes of the current version's states, shared by every check
  /// and match on it (ir/state_memo.h); guarded by mutex_.
  const ir::StateMemo *memo() const;

  Source source_;
  std::vector<Version> versions_;
  std::size_t current_ = 0;
  transforms::MatchCache cache_;
  mutable std::unique_ptr<ir::StateMemo> memo_;
  std::vector<std::pair<int, Observer>> observers_;
  int nextObserver_ = 1;
  mutable std::recursive_mutex mutex_;
  bool busy_ = false; ///< a step is being applied (guarded by mutex_)
};

} // namespace weir::workspace
