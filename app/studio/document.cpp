#include "app/studio/document.h"

#include <QSignalBlocker>

#include "ir/error.h"
#include "workspace/session.h"

#include <QFileInfo>
#include <QUndoCommand>
#include <QtConcurrent/QtConcurrentRun>

#include <cassert>

namespace weir::studio {

/// One applied step. The workspace has already applied it when the command
/// is pushed, so the first redo() (which push() calls) does nothing.
class Document::StepCommand : public QUndoCommand {
public:
  StepCommand(Document &doc, std::size_t version, const QString &text)
      : QUndoCommand(text), doc_(doc), version_(version) {}

  void undo() override {
    if (doc_.following_)
      return;
    assert(doc_.ws_->current() == version_);
    doc_.ws_->undo();
  }
  void redo() override {
    if (pending_ || doc_.following_) {
      pending_ = false;
      return;
    }
    assert(doc_.ws_->current() + 1 == version_);
    doc_.ws_->redo();
  }

private:
  Document &doc_;
  std::size_t version_; ///< the workspace version this step made
  bool pending_ = true;
};

Document::Document(QObject *parent) : QObject(parent) {
  connect(&loader_, &QFutureWatcher<Loaded>::finished, this, &Document::loaded);
  connect(&stack_, &QUndoStack::cleanChanged, this,
          [this](bool clean) { emit modifiedChanged(!clean); });
}

Document::~Document() {
  // The window listening to modifiedChanged may be half destroyed (the
  // document is its child): nothing is signalled from here on.
  blockSignals(true);
  QSignalBlocker quiet(stack_);
  // The commands call into the workspace; they go first.
  stack_.clear();
  if (ws_)
    ws_->removeObserver(observer_);
}

namespace {

/// Reads a model or session: the slow part of opening (import, shape
/// inference, replaying a recipe), free of the document so it can run on
/// any thread.
/// `snapshot`: an autosave, which holds a snapshot when the workspace had
/// no model file.
std::shared_ptr<workspace::Workspace> load(const QString &path,
                                           bool snapshot = false) {
  std::string file = path.toStdString();
  if (QFileInfo(path).suffix() == "weir")
    return workspace::openSession(file, {.useSnapshot = snapshot});
  return workspace::openModel(file);
}

} // namespace

void Document::open(const QString &path) {
  std::shared_ptr<workspace::Workspace> ws = load(path);
  opening_.clear();
  adopt(std::move(ws), path);
}

void Document::openInBackground(const QString &path) {
  opening_ = path;
  loader_.setFuture(QtConcurrent::run([path]() -> Loaded {
    try {
      return {path, load(path), {}};
    } catch (const std::exception &e) {
      return {path, nullptr, QString::fromUtf8(e.what())};
    }
  }));
}

void Document::recoverInBackground(const QString &autosave,
                                   const QString &original) {
  opening_ = autosave;
  loader_.setFuture(QtConcurrent::run([autosave, original]() -> Loaded {
    try {
      return {autosave, load(autosave, true), {}, original};
    } catch (const std::exception &e) {
      return {autosave, nullptr, QString::fromUtf8(e.what()), original};
    }
  }));
}

void Document::loaded() {
  Loaded l = loader_.result();
  // Only the newest request counts: an older one finishing late is not
  // what the user asked for last.
  if (l.path != opening_)
    return;
  opening_.clear();
  if (l.workspace && !l.original.isEmpty())
    adopt(std::move(l.workspace), l.original, true);
  else if (l.workspace)
    adopt(std::move(l.workspace), l.path);
  else
    emit openFailed(l.path, l.error);
}

void Document::adopt(std::shared_ptr<workspace::Workspace> ws,
                     const QString &path, bool recovered) {
  stack_.clear();
  if (ws_)
    ws_->removeObserver(observer_);
  ws_ = std::move(ws);
  sessionPath_ = QFileInfo(path).suffix() == "weir"
                     ? QFileInfo(path).absoluteFilePath()
                     : QString();
  // A session's replayed steps are history like any other: they can be
  // undone.
  for (std::size_t v = 1; v <= ws_->current(); ++v)
    stack_.push(new StepCommand(
        *this, v, QString::fromStdString(ws_->versions()[v].step->str())));
  // Recovered steps are not in any saved file: modified until saved.
  recovered_ = recovered;
  if (recovered)
    stack_.resetClean();
  else
    stack_.setClean();
  lastChange_ = {workspace::ChangeKind::Reverted, ws_->current(),
                 ws_->current()};
  watch();
  emit opened();
  emit sessionPathChanged();
  emit modifiedChanged(isModified());
}

void Document::watch() {
  observer_ = ws_->addObserver(
      [this](const workspace::Workspace &, const workspace::Change &change) {
        lastChange_ = change;
        emit programChanged();
      });
}

void Document::save(const QString &path) {
  if (!ws_)
    throw Error("nothing is open to save");
  workspace::SaveOptions options;
  options.snapshot = ws_->source().modelPath.empty();
  workspace::saveSession(*ws_, path.toStdString(), options);
  sessionPath_ = QFileInfo(path).absoluteFilePath();
  recovered_ = false;
  stack_.setClean();
  emit sessionPathChanged();
  emit saved();
}

void Document::apply(const std::string &transformation,
                     const transforms::Match &match,
                     const transforms::Params &params) {
  if (!ws_)
    throw Error("nothing is open to transform");
  const workspace::Version &v = ws_->apply(transformation, match, params);
  stack_.push(new StepCommand(*this, ws_->current(),
                              QString::fromStdString(v.step->str())));
}

void Document::syncHistory() {
  if (!ws_)
    return;
  const auto &versions = ws_->versions();
  int last = static_cast<int>(versions.size()) - 1;
  int current = static_cast<int>(ws_->current());
  auto stepText = [&](int v) {
    return QString::fromStdString(versions[v].step->str());
  };
  bool inStep = stack_.count() == last && stack_.index() == current;
  for (int i = 0; inStep && i < last; ++i)
    inStep = stack_.command(i)->text() == stepText(i + 1);
  if (inStep)
    return;
  following_ = true;
  stack_.clear();
  for (int v = 1; v <= last; ++v)
    stack_.push(new StepCommand(*this, v, stepText(v)));
  stack_.setIndex(current);
  following_ = false;
  stack_.resetClean();
}

QString Document::modelPath() const {
  return ws_ ? QString::fromStdString(ws_->source().modelPath) : QString();
}

QString Document::displayName() const {
  if (!sessionPath_.isEmpty())
    return QFileInfo(sessionPath_).fileName();
  if (!modelPath().isEmpty())
    return QFileInfo(modelPath()).fileName();
  return ws_ ? QString::fromStdString(ws_->program().name) : tr("(nothing)");
}

} // namespace weir::studio
