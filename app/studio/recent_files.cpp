#include "app/studio/recent_files.h"

#include <QAction>
#include <QFileInfo>
#include <QMenu>
#include <QSettings>

namespace weir::studio {

namespace {
const char *const kKey = "recentFiles";
}

RecentFiles::RecentFiles(QMenu *menu, QObject *parent)
    : QObject(parent), menu_(menu) {
  rebuild();
}

QStringList RecentFiles::files() const {
  return QSettings().value(kKey).toStringList();
}

void RecentFiles::add(const QString &path) {
  if (path.isEmpty())
    return;
  QString file = QFileInfo(path).absoluteFilePath();
  QStringList list = files();
  list.removeAll(file);
  list.prepend(file);
  store(list);
}

void RecentFiles::choose(const QString &path) {
  if (QFileInfo::exists(path)) {
    emit openRequested(path);
    return;
  }
  QStringList list = files();
  list.removeAll(path);
  store(list);
  emit missing(path);
}

void RecentFiles::store(const QStringList &files) {
  QSettings().setValue(kKey, files.mid(0, kMax));
  rebuild();
}

void RecentFiles::rebuild() {
  menu_->clear();
  QStringList list = files();
  for (int i = 0; i < list.size(); ++i) {
    const QString &file = list[i];
    // &1 … &9, then 1&0: the usual keyboard accelerators.
    QString number = i < 9 ? QString("&%1").arg(i + 1) : QString("1&0");
    QAction *a = menu_->addAction(
        QString("%1  %2").arg(number, QFileInfo(file).fileName()));
    a->setToolTip(file);
    a->setData(file);
    // Queued: choosing rebuilds the menu, which deletes this action.
    connect(
        a, &QAction::triggered, this, [this, file] { choose(file); },
        Qt::QueuedConnection);
  }
  menu_->setEnabled(!list.isEmpty());
}

} // namespace weir::studio
