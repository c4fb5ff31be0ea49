#pragma once
/// \file
/// The open document: one workspace (workspace/workspace.h), the
/// session file it was opened from or saved to, and the undo stack that
/// mirrors the workspace's versions. It is the model adapter between the
/// core and the widgets (STYLE.md, Qt undoframework): views read the
/// workspace and listen to the signals; every change goes through here.
///
/// The undo stack holds one command per applied step, in step with the
/// workspace: stack index i is workspace version i. Applying runs the
/// workspace's apply first and pushes a command only when it succeeded, so
/// a failure leaves both untouched; undo, redo and QUndoView's "revert to
/// this entry" (QUndoStack::setIndex) move the workspace with its own
/// undo()/redo(), which re-run nothing. Modified is "the stack is not at
/// its clean index", set on open and on save.

#include "workspace/workspace.h"

#include <QFutureWatcher>
#include <QObject>
#include <QString>
#include <QUndoStack>

#include <memory>
#include <string>

namespace weir::studio {

class Document : public QObject {
  Q_OBJECT

public:
  explicit Document(QObject *parent = nullptr);
  ~Document() override;

  /// Opens a model (ONNX, or a Weir program `.json`) or a session
  /// (`.weir`: the model with its recipe replayed, each step in the
  /// history). Throws weir::Error; the document is then unchanged.
  void open(const QString &path);
  /// The same on a worker thread: opened() or openFailed() follow on this
  /// thread. A newer request (this or open()) wins; an older one finishing
  /// later is ignored.
  void openInBackground(const QString &path);
  /// Recovers from an autosave (autosave.h) on a worker thread: the
  /// session at `autosave` is opened, but the document stands for
  /// `original` (the model or session the user had open), so Save writes
  /// there, and it is modified: the recovered steps are not saved yet.
  /// opened() or openFailed(autosave, …) follow.
  void recoverInBackground(const QString &autosave, const QString &original);
  /// Whether the open workspace came from an autosave and has not been
  /// saved since.
  bool recovered() const { return recovered_; }
  /// The file being opened in the background; "" when none is.
  QString opening() const { return opening_; }
  /// Saves a session (the format of `weir optimize -o` and Python's
  /// `ws.save`), atomically; a workspace without a model file (opened from
  /// a session's snapshot) is saved with a snapshot. Throws weir::Error.
  void save(const QString &path);

  /// Applies a step through the undo stack. Throws weir::Error with the
  /// workspace's reason when it fails; nothing changes then.
  void apply(const std::string &transformation,
             const transforms::Match &match = {},
             const transforms::Params &params = {});

  /// Brings the undo stack in step with the workspace after something
  /// else moved it (the Python dock's `ws.apply`, `ws.undo`, ...): one
  /// command per version, the index at the current one, marked modified.
  /// Does nothing when they already agree.
  void syncHistory();

  /// Null until something is open. Shared so background work (match
  /// listing, code generation) can keep it alive.
  workspace::Workspace *workspace() const { return ws_.get(); }
  std::shared_ptr<workspace::Workspace> sharedWorkspace() const { return ws_; }
  QUndoStack *undoStack() { return &stack_; }

  /// The session file, or "" when the document came from a model and has
  /// not been saved.
  QString sessionPath() const { return sessionPath_; }
  /// The model file the workspace started from ("" for a snapshot).
  QString modelPath() const;
  /// The file the document stands for: the session, else the model.
  QString documentFile() const {
    return sessionPath_.isEmpty() ? modelPath() : sessionPath_;
  }
  /// A short name for the title bar.
  QString displayName() const;
  bool isModified() const { return !stack_.isClean(); }

  /// The last change to the current version, for mapping a selection.
  const workspace::Change &lastChange() const { return lastChange_; }

signals:
  /// A different workspace is open (after open() or openInBackground()).
  void opened();
  void openFailed(const QString &path, const QString &message);
  /// The current version changed (apply, undo, redo, revert).
  void programChanged();
  void modifiedChanged(bool modified);
  void sessionPathChanged();
  /// The session was written by save().
  void saved();

private:
  class StepCommand;
  struct Loaded {
    QString path;
    std::shared_ptr<workspace::Workspace> workspace;
    QString error;
    QString original; ///< recovering: the file the document stands for
  };
  void loaded();
  void adopt(std::shared_ptr<workspace::Workspace> ws, const QString &path,
             bool recovered = false);
  void watch();

  std::shared_ptr<workspace::Workspace> ws_;
  int observer_ = 0;
  QUndoStack stack_;
  bool following_ = false; ///< syncHistory: commands leave ws_ alone
  QString sessionPath_;
  workspace::Change lastChange_;
  QString opening_;
  bool recovered_ = false;
  QFutureWatcher<Loaded> loader_;
};

} // namespace weir::studio
