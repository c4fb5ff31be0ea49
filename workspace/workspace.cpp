#include "workspace/workspace.h"

#include "ir/error.h"
#include "ir/hash.h"
#include "ir/validate.h"
#include "transforms/accepted_step.h"
#include "transforms/registry.h"
#include "transforms/rewrite.h"

#include <chrono>
#include <cxxabi.h>

namespace weir::workspace {

using transforms::Match;
using transforms::Params;

class Workspace::Busy {
public:
  explicit Busy(Workspace &ws) : ws_(ws) {
    if (ws_.busy_)
      throw Error("the workspace is busy applying a step; it cannot change "
                  "until that step ends (a plugin or another thread tried)");
    ws_.busy_ = true;
  }
  ~Busy() { ws_.busy_ = false; }
  Busy(const Busy &) = delete;
  Busy &operator=(const Busy &) = delete;

private:
  Workspace &ws_;
};

std::shared_ptr<const ir::Program> Version::program() const {
  if (std::shared_ptr<const ir::Program> p = programIfLoaded())
    return p;
  return owner_->rebuild(index_);
}

std::shared_ptr<const ir::Program> Version::programIfLoaded() const {
  if (std::shared_ptr<const ir::Program> p = cell_->kept.load())
    return p;
  return cell_->lent.load().lock();
}

std::uint64_t Version::hash() const {
  if (cell_->hashed)
    return cell_->hash;
  // The program first: a rebuild takes the workspace's lock, which must
  // never be waited for inside call_once (a thread holding the lock may be
  // waiting for this hash).
  std::shared_ptr<const ir::Program> p = program();
  std::call_once(cell_->hashOnce, [&] {
    cell_->hash = ir::structuralHash(*p);
    cell_->hashed = true;
  });
  return cell_->hash;
}

Workspace::Workspace(ir::Program program, Source source)
    : source_(std::move(source)) {
  Version v;
  v.cell_->kept.store(std::make_shared<const ir::Program>(std::move(program)));
  append(std::move(v));
}

void Workspace::append(Version v) {
  v.owner_ = this;
  v.index_ = versions_.size();
  versions_.push_back(std::move(v));
}

std::size_t Workspace::checkpointEvery() const {
  std::size_t every = kCheckpointEvery;
  while (versions_.size() / every > kMaxCheckpoints)
    every *= 2;
  return every;
}

bool Workspace::keepsResident(const Version &v, std::size_t current) const {
  std::size_t i = v.index_;
  return i % checkpointEvery() == 0 || !v.replaysExactly_ ||
         (i + kRecent >= current && i <= current + kRecent);
}

void Workspace::moveTo(std::size_t index) {
  // Rebuilding may throw; nothing has changed until it is done.
  std::shared_ptr<const ir::Program> program = versions_[index].program();
  std::size_t previous = current_;
  current_ = index;
  versions_[index].cell_->kept.store(std::move(program));
  settle(previous);
}

void Workspace::settle(std::size_t previous) {
  // Only the versions near the previous current one can have left the
  // resident set (the others were settled before, or were just made),
  // unless the history grew long enough to space the checkpoints further
  // apart: then every version is looked at, once per doubling.
  std::size_t lo = previous > kRecent ? previous - kRecent : 0,
              hi = previous + kRecent;
  if (std::size_t every = checkpointEvery(); every != spacedAt_) {
    spacedAt_ = every;
    lo = 0;
    hi = versions_.size();
  }
  for (std::size_t i = lo; i <= hi && i < versions_.size(); ++i) {
    Version &v = versions_[i];
    if (v.resident() && !keepsResident(v, current_)) {
      v.cell_->lent.store(v.cell_->kept.load());
      v.cell_->kept.store(nullptr);
    }
  }
}

std::shared_ptr<const ir::Program> Workspace::rebuild(std::size_t index) const {
  std::lock_guard lock(mutex_);
  // Back to the nearest version in memory (version 0 always is).
  std::size_t from = index;
  std::shared_ptr<const ir::Program> at;
  while (!(at = versions_[from].programIfLoaded()))
    --from;
  for (std::size_t i = from + 1; i <= index; ++i) {
    const Version &v = versions_[i];
    try {
      at = derive(*at, *v.step, validity(i - 1)).cell_->kept.load();
    } catch (const Error &e) {
      throw Error("version " + std::to_string(i) +
                  " could not be rebuilt by replaying its step: " + e.what());
    }
    // A version whose hash is known must come back the same.
    if (v.cell_->hashed && ir::structuralHash(*at) != v.cell_->hash)
      throw Error("version " + std::to_string(i) + " (" +
                  v.step->transformation +
                  ") came back different when its step was replayed");
    v.cell_->lent.store(at);
  }
  // The last two rebuilt stay, so that a walk along the history rebuilds
  // each version from the one before it.
  rebuilt_.push_back(at);
  if (rebuilt_.size() > 2)
    rebuilt_.erase(rebuilt_.begin());
  return at;
}

std::vector<Match> Workspace::matches(std::string_view transformation) {
  auto t = transforms::requireTransformation(transformation);
  std::lock_guard lock(mutex_);
  ir::UseStateMemo use(memo());
  return cache_.matches(program(), *t);
}

std::vector<std::pair<std::string, std::vector<Match>>>
Workspace::allMatches() {
  std::lock_guard lock(mutex_);
  ir::UseStateMemo use(memo());
  return cache_.allMatches(program());
}

std::shared_ptr<const ir::StateMemo> Workspace::sharedMemo() const {
  std::lock_guard lock(mutex_);
  memo();
  return memo_;
}

bool Workspace::ask(
    const std::function<bool(const ir::Program &)> &question) const {
  std::lock_guard lock(mutex_);
  ir::UseStateMemo use(memo());
  return question(program());
}

transforms::CheckResult Workspace::check(std::string_view transformation,
                                         const Match &match,
                                         const Params &params) const {
  auto t = transforms::findTransformation(transformation);
  if (!t)
    return transforms::CheckResult::failure("unknown transformation '" +
                                            std::string(transformation) + "'");
  std::lock_guard lock(mutex_);
  ir::UseStateMemo use(memo());
  return transforms::checkMatch(program(), *t, match, params);
}

transforms::InputValidity Workspace::validity(std::size_t index) const {
  if (index > 0)
    return versions_[index].validated_ ? transforms::InputValidity::Valid
                                       : transforms::InputValidity::Unknown;
  std::lock_guard lock(mutex_);
  if (!firstValidates_)
    firstValidates_ =
        !ir::hasErrors(ir::validate(*versions_[0].cell_->kept.load()));
  return *firstValidates_ ? transforms::InputValidity::Valid
                          : transforms::InputValidity::Unknown;
}

const ir::StateMemo *Workspace::memo() const {
  if (!memo_ || &memo_->program() != &program())
    memo_ = std::make_shared<const ir::StateMemo>(programPtr());
  return memo_.get();
}

std::optional<Version>
Workspace::attempt(const ir::Program &from, const Step &step,
                   transforms::CheckResult *refusal,
                   transforms::InputValidity input, bool deferrable) const {
  auto t = transforms::requireTransformation(step.transformation);
  bool defer = deferrable && deferring_ > 0 && t->replaysExactly();
  auto start = std::chrono::steady_clock::now();
  std::variant<transforms::CheckResult, transforms::AcceptedStep> outcome;
  try {
    outcome = transforms::acceptStep(from, *t, step.match, step.params, input,
                                     defer ? transforms::ResultCheck::Defer
                                           : transforms::ResultCheck::Validate);
  } catch (const Error &) {
    throw;
  } catch (const Interrupted &) {
    throw; // the user asked to stop (Ctrl+C in a plugin)
  } catch (abi::__forced_unwind &) {
    throw; // the thread is being cancelled; let it end
  } catch (const std::exception &e) {
    // A faulty transformation (or plugin) must not take the session down.
    throw Error(step.transformation + " at " + step.match.str() +
                " failed: " + e.what());
  } catch (...) {
    throw Error(step.transformation + " at " + step.match.str() +
                " failed with an exception that is not a std::exception");
  }
  if (auto *refused = std::get_if<transforms::CheckResult>(&outcome)) {
    if (refusal)
      *refusal = std::move(*refused);
    return std::nullopt;
  }
  transforms::AcceptedStep &r = std::get<transforms::AcceptedStep>(outcome);
  Version v;
  v.exactness = t->exactness();
  v.replaysExactly_ = t->replaysExactly();
  v.validated_ = !defer;
  v.cell_->kept.store(std::move(r.program));
  v.memo_ = std::move(r.memo);
  v.idMap = std::move(r.idMap);
  v.step = step;
  v.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  return v;
}

Version Workspace::derive(const ir::Program &from, const Step &step,
                          transforms::InputValidity input) const {
  transforms::CheckResult refusal;
  std::optional<Version> v = attempt(from, step, &refusal, input);
  if (!v)
    throw transforms::refusalError(step.transformation, step.match, refusal);
  return std::move(*v);
}

namespace {

/// The step with the labels of the nodes its match names in `program`.
Step labelled(const ir::Program &program, std::string_view transformation,
              const Match &match, const Params &params) {
  Step s{std::string(transformation), match, params, {}};
  for (const ir::State &state : program.states)
    if (state.name == match.state)
      for (const auto &[role, id] : match.roles)
        if (const ir::Node *n = state.findNode(id))
          s.labels[role] = n->label;
  return s;
}

} // namespace

const Version &Workspace::apply(std::string_view transformation,
                                const Match &match, const Params &params) {
  transforms::CheckResult refusal;
  const Version *v = tryApply(transformation, match, params, &refusal);
  if (!v)
    throw transforms::refusalError(transformation, match, refusal);
  return *v;
}

const Version *Workspace::tryApply(std::string_view transformation,
                                   const Match &match, const Params &params,
                                   transforms::CheckResult *refusal) {
  std::lock_guard lock(mutex_);
  std::size_t from = current_;
  {
    Busy busy(*this);
    std::shared_ptr<const ir::Program> base = programPtr();
    ir::UseStateMemo use(memo());
    std::optional<Version> v =
        attempt(*base, labelled(*base, transformation, match, params), refusal,
                validity(current_), true);
    if (!v)
      return nullptr;
    // Nothing above changed the workspace; from here nothing throws but
    // allocation.
    versions_.resize(current_ + 1);
    append(std::move(*v));
    current_ = versions_.size() - 1;
    memo_ = std::move(versions_.back().memo_); // the new version's indexes
    settle(from);
  }
  notify({ChangeKind::Applied, from, current_});
  return &versions_[current_];
}

Workspace::DeferredValidation::DeferredValidation(Workspace &ws) : ws_(ws) {
  std::lock_guard lock(ws_.mutex_);
  ++ws_.deferring_;
}

Workspace::DeferredValidation::~DeferredValidation() {
  std::lock_guard lock(ws_.mutex_);
  --ws_.deferring_;
}

bool Workspace::validatePending() {
  std::lock_guard lock(mutex_);
  if (versions_[current_].validated_)
    return false;
  // Against the last version known to validate, when it is in memory: the
  // two-program form checks again only what the steps since changed.
  std::size_t base = current_;
  while (base > 0 && !versions_[base].validated_)
    --base;
  auto validated = [&](std::size_t from, const ir::Program &result,
                       bool rebuild) {
    std::shared_ptr<const ir::Program> before =
        rebuild ? versions_[from].program() : versions_[from].programIfLoaded();
    if (!before || validity(from) != transforms::InputValidity::Valid)
      return ir::validate(result);
    return ir::validate(result, *before);
  };
  if (!ir::hasErrors(validated(base, *programPtr(), false))) {
    versions_[current_].validated_ = true;
    return true;
  }
  // Step by step from there, to the first that broke it.
  for (std::size_t i = base + 1; i <= current_; ++i) {
    const Step &step = *versions_[i].step;
    std::string problem;
    try {
      std::vector<ir::Diagnostic> d =
          validated(i - 1, *versions_[i].program(), true);
      if (ir::hasErrors(d))
        problem = d.front().str();
    } catch (const Error &e) { // a rebuild that failed
      problem = e.what();
    }
    if (problem.empty()) {
      versions_[i].validated_ = true;
      continue;
    }
    std::size_t from = current_;
    {
      Busy busy(*this);
      moveTo(i - 1);
      versions_.resize(i);
    }
    notify({ChangeKind::Reverted, from, current_});
    throw Error(step.transformation + " at " + step.match.str() +
                " produced an invalid program: " + problem);
  }
  throw Error("internal error: version " + std::to_string(current_) +
              " does not validate against version " + std::to_string(base) +
              ", though each step since does");
}

void Workspace::undo() {
  std::lock_guard lock(mutex_);
  {
    Busy busy(*this);
    if (!canUndo())
      throw Error("nothing to undo");
    moveTo(current_ - 1);
  }
  notify({ChangeKind::Undone, current_ + 1, current_});
}

void Workspace::redo() {
  std::lock_guard lock(mutex_);
  {
    Busy busy(*this);
    if (!canRedo())
      throw Error("nothing to redo");
    moveTo(current_ + 1);
  }
  notify({ChangeKind::Redone, current_ - 1, current_});
}

void Workspace::revert(std::size_t index) {
  std::lock_guard lock(mutex_);
  std::size_t from = current_;
  {
    Busy busy(*this);
    if (index >= versions_.size())
      throw Error("there is no version " + std::to_string(index) + " (the " +
                  "history has " + std::to_string(versions_.size()) +
                  " versions)");
    moveTo(index);
  }
  notify({ChangeKind::Reverted, from, current_});
}

Recipe Workspace::recipe() const {
  std::lock_guard lock(mutex_);
  Recipe r;
  for (std::size_t i = 1; i <= current_; ++i)
    r.steps.push_back(*versions_[i].step);
  return r;
}

void Workspace::replay(const Recipe &recipe) {
  std::lock_guard lock(mutex_);
  std::optional<Busy> busy(std::in_place, *this);
  std::vector<Version> fresh;
  std::shared_ptr<const ir::Program> at = programPtr();
  memo();
  std::shared_ptr<const ir::StateMemo> atMemo = memo_; // `at`'s indexes
  // The versions this replay makes, and the current one once it is done:
  // those that will not stay resident are dropped as they are made.
  const std::size_t first = current_ + 1,
                    last = current_ + recipe.steps.size();
  for (std::size_t i = 0; i < recipe.steps.size(); ++i) {
    const Step &step = recipe.steps[i];
    std::string where = "recipe step " + std::to_string(i + 1) + " (" +
                        step.transformation + ")";
    // The nodes must be the ones the recipe was recorded on.
    for (const auto &[role, label] : step.labels) {
      ir::NodeId id = 0;
      for (const auto &[r, n] : step.match.roles)
        if (r == role)
          id = n;
      const ir::Node *node = nullptr;
      for (const ir::State &s : at->states)
        if (s.name == step.match.state)
          node = s.findNode(id);
      if (!node)
        throw Error(where + ": there is no node %" + std::to_string(id) +
                    " (the recipe expects '" + label +
                    "'); was it recorded on another model?");
      if (node->label != label)
        throw Error(where + ": node %" + std::to_string(id) + " is '" +
                    node->label + "', the recipe expects '" + label +
                    "'; was it recorded on another model?");
    }
    try {
      ir::UseStateMemo use(atMemo.get());
      fresh.push_back(derive(
          *at, step,
          i == 0 ? validity(current_) : transforms::InputValidity::Valid));
    } catch (const Error &e) {
      throw Error(where + ": " + e.what());
    }
    Version &made = fresh.back();
    made.owner_ = this;
    made.index_ = first + i;
    at = made.cell_->kept.load();
    atMemo = std::move(made.memo_);
    if (!keepsResident(made, last)) {
      made.cell_->lent.store(at);
      made.cell_->kept.store(nullptr);
    }
  }
  if (fresh.empty())
    return;
  std::size_t from = current_;
  versions_.resize(current_ + 1);
  for (Version &v : fresh)
    append(std::move(v));
  current_ = versions_.size() - 1;
  memo_ = std::move(atMemo); // the last step's result's indexes
  settle(from);
  busy.reset();
  notify({ChangeKind::Applied, from, current_});
}

VerifyReport Workspace::verify(const VerifyOptions &options) const {
  // The programs are shared values: copy the pointers, then run unlocked.
  std::shared_ptr<const ir::Program> first, now;
  std::vector<transforms::Exactness> steps;
  {
    std::lock_guard lock(mutex_);
    for (std::size_t i = 1; i <= current_; ++i)
      steps.push_back(versions_[i].exactness);
    first = versions_[0].cell_->kept.load();
    now = programPtr();
  }
  return verifyPrograms(*first, *now, combineTolerances(steps), options);
}

VerifyReport Workspace::verifyStep(std::size_t index,
                                   const VerifyOptions &options) const {
  std::shared_ptr<const ir::Program> before, after;
  transforms::Exactness exactness;
  {
    std::lock_guard lock(mutex_);
    if (index == 0 || index >= versions_.size())
      throw Error("there is no step " + std::to_string(index) + " to verify");
    before = versions_[index - 1].program();
    after = versions_[index].program();
    exactness = versions_[index].exactness;
  }
  return verifyPrograms(*before, *after, exactness, options);
}

int Workspace::addObserver(Observer observer) {
  std::lock_guard lock(mutex_);
  observers_.emplace_back(nextObserver_, std::move(observer));
  return nextObserver_++;
}

void Workspace::removeObserver(int id) {
  std::lock_guard lock(mutex_);
  std::erase_if(observers_, [&](const auto &o) { return o.first == id; });
}

void Workspace::notify(const Change &change) const {
  // A copy: an observer may add or remove observers (itself included).
  auto observers = observers_;
  for (const auto &[id, observer] : observers) {
    try {
      observer(*this, change);
    } catch (const Interrupted &) {
      throw;
    } catch (abi::__forced_unwind &) {
      throw;
    } catch (...) {
      // The change is complete; a failing listener must not undo it.
    }
  }
}

} // namespace weir::workspace
