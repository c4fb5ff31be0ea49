#include "app/studio/autosave.h"

#include "app/studio/document.h"
#include "workspace/session.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSettings>
#include <QStandardPaths>
#include <QtConcurrent/QtConcurrentRun>

namespace weir::studio {

Autosave::Autosave(Document &document, QObject *parent)
    : QObject(parent), doc_(document) {
  connect(&doc_, &Document::opened, this, &Autosave::onOpened);
  connect(&doc_, &Document::saved, this, &Autosave::onSaved);
  // Queued: the workspace announces a step before the undo stack holds
  // it, and "modified" is the stack's.
  connect(&doc_, &Document::programChanged, this, &Autosave::onChanged,
          Qt::QueuedConnection);
  connect(&watcher_, &QFutureWatcher<QString>::finished, this,
          &Autosave::finished);
  connect(&timer_, &QTimer::timeout, this, [this] {
    if (dirty_)
      writeNow();
  });
  timer_.start(intervalSeconds() * 1000);
}

Autosave::~Autosave() { watcher_.waitForFinished(); }

QString Autosave::folder() {
  QString dir = qEnvironmentVariable("WEIR_STUDIO_AUTOSAVE_DIR");
  if (dir.isEmpty())
    dir = QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) +
          "/autosave";
  return dir;
}

QString Autosave::fileFor(const QString &document) {
  if (document.isEmpty())
    return {};
  QFileInfo info(document);
  QByteArray digest = QCryptographicHash::hash(info.absoluteFilePath().toUtf8(),
                                               QCryptographicHash::Sha256)
                          .toHex()
                          .left(16);
  return QDir(folder()).filePath(info.completeBaseName() + "-" +
                                 QString::fromLatin1(digest) + ".weir");
}

QString Autosave::recoverable(const QString &document) {
  QString file = fileFor(document);
  if (file.isEmpty())
    return {};
  QFileInfo autosave(file), original(document);
  if (!autosave.exists())
    return {};
  // A document changed after the autosave (saved by another program) is
  // newer than what would be recovered.
  if (original.exists() && autosave.lastModified() < original.lastModified())
    return {};
  return file;
}

int Autosave::intervalSeconds() {
  return std::max(1, QSettings().value("autosave/intervalSeconds", 60).toInt());
}

void Autosave::onOpened() {
  discarded_ = false;
  QString previous = file_;
  file_ = fileFor(doc_.documentFile());
  if (doc_.recovered()) {
    // The recovered steps are still unsaved: keep them on disk.
    dirty_ = true;
    writeNow();
    return;
  }
  // The previous document was saved or discarded on purpose (the window
  // asks before opening another).
  if (!previous.isEmpty() && !running_)
    QFile::remove(previous);
  dirty_ = false;
  QString found = recoverable(doc_.documentFile());
  if (!found.isEmpty())
    emit recoveryAvailable(found, doc_.documentFile());
}

void Autosave::onSaved() {
  // Saved, perhaps under a new name: no autosave under either.
  QString previous = file_;
  file_ = fileFor(doc_.documentFile());
  dirty_ = false;
  if (running_) {
    again_ = true; // finished() removes what the write left
    return;
  }
  QFile::remove(previous);
  QFile::remove(file_);
}

void Autosave::onChanged() {
  dirty_ = true;
  writeNow();
}

void Autosave::writeNow() {
  if (discarded_)
    return;
  if (running_) {
    again_ = true;
    return;
  }
  std::shared_ptr<workspace::Workspace> ws = doc_.sharedWorkspace();
  if (!ws || file_.isEmpty())
    return;
  dirty_ = false;
  if (!doc_.isModified()) {
    QFile::remove(file_);
    return;
  }
  if (!QDir().mkpath(folder())) {
    emit writeFailed(tr("Cannot create the autosave folder %1").arg(folder()));
    return;
  }
  running_ = true;
  writing_ = file_;
  std::string path = file_.toStdString();
  watcher_.setFuture(QtConcurrent::run([ws, path]() -> QString {
    try {
      auto lock = ws->lock();
      workspace::SaveOptions options;
      options.snapshot = ws->source().modelPath.empty();
      workspace::saveSession(*ws, path, options);
      return {};
    } catch (const std::exception &e) {
      return QString::fromUtf8(e.what());
    }
  }));
}

void Autosave::finished() {
  running_ = false;
  QString error = watcher_.result();
  // What was written no longer stands for an unsaved open document: it
  // was saved, closed or another one opened meanwhile.
  bool stale = writing_ != file_ || !doc_.isModified();
  if (stale || discarded_)
    QFile::remove(writing_);
  if (!error.isEmpty())
    emit writeFailed(error);
  else if (!stale && !discarded_)
    emit written(writing_);
  if (again_) {
    again_ = false;
    writeNow();
  }
}

void Autosave::discard() {
  watcher_.waitForFinished();
  running_ = false;
  again_ = false;
  dirty_ = false;
  discarded_ = true;
  if (!file_.isEmpty())
    QFile::remove(file_);
}

} // namespace weir::studio
