#pragma once
/// \file
/// Autosave and crash recovery. While the open document has unsaved
/// steps, its session (workspace::saveSession, with a snapshot when the
/// workspace has no model file; written atomically) is kept in a file of
/// its own under the autosave folder: after each step and undo/redo, and
/// every `autosave/intervalSeconds` (QSettings, default 60) when something
/// changed since. Saving the document or closing it cleanly removes the
/// file; a crash leaves it. When a document is opened and its autosave is
/// newer than the document's file, recoveryAvailable() offers it.
///
/// Writes run on a worker thread under the workspace's lock, one at a
/// time; a change during a write writes again after it.

#include <QFutureWatcher>
#include <QObject>
#include <QString>
#include <QTimer>

namespace weir::studio {

class Document;

class Autosave : public QObject {
  Q_OBJECT

public:
  explicit Autosave(Document &document, QObject *parent = nullptr);
  /// Waits for a write in flight and leaves the file: only a clean close
  /// (discard()) removes it.
  ~Autosave() override;

  /// `$WEIR_STUDIO_AUTOSAVE_DIR`, else `autosave/` under
  /// QStandardPaths::AppDataLocation.
  static QString folder();
  /// The autosave of a document file (model or session): its base name and
  /// a digest of its absolute path, `.weir`. "" for "".
  static QString fileFor(const QString &document);
  /// The autosave of `document` when it exists and is newer than
  /// `document`; "" otherwise.
  static QString recoverable(const QString &document);
  /// QSettings `autosave/intervalSeconds`, at least 1; 60 when unset.
  static int intervalSeconds();

  /// The open document's autosave file ("" when nothing is open).
  QString file() const { return file_; }
  /// Writes the document's session now (or removes the autosave when the
  /// document has nothing unsaved); asynchronous.
  void writeNow();
  /// Whether a write is in flight or queued.
  bool busy() const { return running_; }
  /// A clean close: waits for a write in flight and removes the autosave.
  void discard();

signals:
  /// An autosave finished writing.
  void written(const QString &path);
  void writeFailed(const QString &message);
  /// The opened document has an autosave newer than its file: a crash
  /// left it. Emitted after opened(), never for a recovered document.
  void recoveryAvailable(const QString &autosave, const QString &document);

private:
  void onOpened();
  void onSaved();
  void onChanged();
  void finished();

  Document &doc_;
  QTimer timer_;
  QFutureWatcher<QString> watcher_; ///< the error text, "" on success
  QString file_;
  QString writing_; ///< the file the write in flight writes
  bool running_ = false;
  bool again_ = false;     ///< changed during the write in flight
  bool dirty_ = false;     ///< changed since the last write
  bool discarded_ = false; ///< closed cleanly: nothing more is written
};

} // namespace weir::studio
