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
///   re-run but the replay that rebuilds a dropped program (see Version).
///   Versions are program values whose heavy parts (weights, tasklet code,
///   expressions, subgraphs) are shared between them.
/// - recipe() is the list of steps up to the current version; replay()
///   applies a recipe all-or-nothing.
/// - A recipe may defer validation (DeferredValidation): Weir's own steps
///   are then validated where it asks (validatePending()), not one by one.
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

#include <atomic>
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
  /// Whether the import specialized the model's shape arithmetic
  /// (onnx_import::ImportOptions::specializeShapes). A session records it,
  /// so that one saved before specialization existed (which says nothing)
  /// re-imports the way it was made and its recipe replays.
  bool specializedShapes = true;
};

class Workspace;

/// One version of the program: the imported program, or the result of one
/// step.
///
/// A long recipe makes hundreds of versions of a program of thousands of
/// nodes, and each held its own copy: DenseNet-121's 461 steps held 3.3 GB.
/// The workspace therefore keeps the programs of a few versions resident —
/// the first, every checkpointEvery()-th, those within kRecent of the
/// current one, and every result of a step that does not replay exactly (a
/// plugin's) — and drops the others. The checkpoints stay at most
/// kMaxCheckpoints: a history longer than kCheckpointEvery times that
/// spaces them twice as far apart, and so on (keeping every 16th, the
/// recipe of a 4,000-node DenseNet-style stack had reached 3.6 GB when it
/// was stopped; so spaced, it held 517 MB well into its run, and finished). program() rebuilds a dropped program
/// by replaying the steps since the nearest resident version (Weir's
/// transformations are deterministic: the same step on the same program
/// makes the same program, which the workspace tests check by hash).
class Version {
public:
  std::optional<Step> step; ///< none for the first version
  transforms::IdMap idMap;  ///< previous version's ids -> this one's
  transforms::Exactness exactness;
  double seconds = 0; ///< time the step took

  /// The program, rebuilt if it was dropped (throws weir::Error when the
  /// rebuild fails). Takes the workspace's lock to rebuild, not otherwise.
  std::shared_ptr<const ir::Program> program() const;
  /// The program when it is in memory (resident, or dropped but still held
  /// by someone), else null; never rebuilds.
  std::shared_ptr<const ir::Program> programIfLoaded() const;
  /// Whether the workspace keeps this version's program in memory.
  bool resident() const { return cell_->kept.load() != nullptr; }

  /// ir::structuralHash of the program, computed when first asked for (it
  /// reads every node and weight; a recipe's steps mostly never need it).
  std::uint64_t hash() const;

private:
  friend class Workspace;
  /// Atomic: readers (a hash, the GUI) need no lock while the program is
  /// in memory; the workspace changes them under its lock.
  struct Cell {
    std::atomic<std::shared_ptr<const ir::Program>> kept; ///< while resident
    std::atomic<std::weak_ptr<const ir::Program>> lent; ///< once dropped
    std::once_flag hashOnce;
    std::atomic<bool> hashed = false;
    std::uint64_t hash = 0;
  };
  /// Shared by the copies of one version (the history's vector grows).
  std::shared_ptr<Cell> cell_ = std::make_shared<Cell>();
  /// A step's result's memo, from attempt() until the workspace adopts it.
  std::shared_ptr<const ir::StateMemo> memo_;
  const Workspace *owner_ = nullptr;
  std::size_t index_ = 0;
  bool replaysExactly_ = true; ///< whether its step may be replayed
  /// Whether its program is known to validate: false for a step's result
  /// whose validation was deferred and not done since.
  bool validated_ = true;
};

enum class ChangeKind : std::uint8_t { Applied, Undone, Redone, Reverted };

struct Change {
  ChangeKind kind = ChangeKind::Applied;
  std::size_t from = 0, to = 0; ///< version indices
};

using Observer = std::function<void(const Workspace &, const Change &)>;

class Workspace {
public:
  explicit Workspace(ir::Program program, Source source = {});

  /// Versions whose programs stay in memory (see Version): the first,
  /// every checkpointEvery()-th, and those within kRecent of the current.
  static constexpr std::size_t kCheckpointEvery = 16;
  static constexpr std::size_t kMaxCheckpoints = 64;
  static constexpr std::size_t kRecent = 4;
  /// The checkpoints' spacing for the history as long as it is now:
  /// kCheckpointEvery, doubled until at most kMaxCheckpoints fit.
  std::size_t checkpointEvery() const;

  const ir::Program &program() const {
    return *versions_[current_].cell_->kept.load();
  }
  std::shared_ptr<const ir::Program> programPtr() const {
    return versions_[current_].cell_->kept.load();
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

  /// `question` asked of the current version under the workspace's lock,
  /// with the indexes its checks and matches build (adjacency, scope
  /// parents) shared for that version (ir/state_memo.h): a recipe's own
  /// filter between steps then builds no index of its own.
  bool ask(const std::function<bool(const ir::Program &)> &question) const;
  /// Those indexes of the current version, for work on its program on
  /// another thread (a memo is safe to share): `weir optimize`'s step
  /// report counts each step's result with the scope parents its checks
  /// built.
  std::shared_ptr<const ir::StateMemo> sharedMemo() const;

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

  /// Deferred validation, the way DaCe's apply_transformations_repeated
  /// validates once at its end rather than after each application: while
  /// one of these lives, the results of Weir's own transformations (those
  /// that replay exactly, so a version can be rebuilt to find the step that
  /// broke the program) are not validated step by step, and
  /// validatePending() validates the current version once. A plugin's
  /// steps are still validated one by one. A version left unvalidated
  /// counts as not known to validate: a step applied to it validates its
  /// result in full, and compiling validates in any case (codegen::lower).
  class DeferredValidation {
  public:
    explicit DeferredValidation(Workspace &ws);
    ~DeferredValidation();
    DeferredValidation(const DeferredValidation &) = delete;
    DeferredValidation &operator=(const DeferredValidation &) = delete;

  private:
    Workspace &ws_;
  };
  /// Validates the current version when a deferred step made it. When it
  /// has errors, finds the first step since the last validated version
  /// whose result does not validate, goes back to the version before that
  /// step, drops it and every version after it, and throws the weir::Error
  /// the step would have thrown had it been validated ("<id> at <match>
  /// produced an invalid program: ..."). Returns false when the current
  /// version needed no validation.
  bool validatePending();

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
  friend class Version; // rebuild()
  /// Marks a change in progress; throws when one already is.
  class Busy;
  void notify(const Change &change) const;
  /// The version `step` produces from `from`, or nullopt (with the reason
  /// in `refusal`) when its check refuses; throws when the transformation
  /// fails or its result does not validate. Changes nothing.
  /// `input`: whether `from` is known to validate (validity()). With
  /// `deferrable`, a step of a transformation that replays exactly is not
  /// validated while validation is deferred (the version records that).
  std::optional<Version> attempt(const ir::Program &from, const Step &step,
                                 transforms::CheckResult *refusal,
                                 transforms::InputValidity input,
                                 bool deferrable = false) const;
  /// attempt(), with a refusal thrown as weir::Error.
  Version derive(const ir::Program &from, const Step &step,
                 transforms::InputValidity input) const;
  /// Whether version `index`'s program validates without errors, as far as
  /// the workspace knows: every step's result did (attempt() refuses one
  /// that does not) unless its validation was deferred and not done since;
  /// the first version is validated once, when a step is first applied to
  /// it.
  transforms::InputValidity validity(std::size_t index) const;
  /// The indexes of the current version's states, shared by every check
  /// and match on it (ir/state_memo.h); guarded by mutex_.
  const ir::StateMemo *memo() const;
  /// Appends `v` as version `versions_.size()`.
  void append(Version v);
  /// Whether version `index` stays resident while `current` is current.
  bool keepsResident(const Version &v, std::size_t current) const;
  /// Makes version `index` current and resident, rebuilding its program
  /// when it was dropped; throws (changing nothing) when that fails.
  void moveTo(std::size_t index);
  /// After the current version moved from `previous` (and is resident):
  /// drops the programs of the versions that need not stay resident any
  /// more.
  void settle(std::size_t previous);
  /// Version `index`'s program, replayed from the nearest earlier version
  /// still in memory. Takes the lock.
  std::shared_ptr<const ir::Program> rebuild(std::size_t index) const;

  Source source_;
  std::vector<Version> versions_;
  std::size_t current_ = 0;
  transforms::MatchCache cache_;
  /// The current version's; a step's result brings its own, with the
  /// indexes its validation built (transforms/accepted_step.h).
  mutable std::shared_ptr<const ir::StateMemo> memo_;
  /// The spacing settle() last dropped checkpoints for.
  std::size_t spacedAt_ = kCheckpointEvery;
  /// Whether the first version validates, once known (guarded by mutex_).
  mutable std::optional<bool> firstValidates_;
  /// The last programs rebuilt, so that walking the history in order
  /// rebuilds each version from the one before.
  mutable std::vector<std::shared_ptr<const ir::Program>> rebuilt_;
  std::vector<std::pair<int, Observer>> observers_;
  int nextObserver_ = 1;
  mutable std::recursive_mutex mutex_;
  bool busy_ = false; ///< a step is being applied (guarded by mutex_)
  int deferring_ = 0;  ///< live DeferredValidations (guarded by mutex_)
};

} // namespace weir::workspace
