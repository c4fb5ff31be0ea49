#pragma once
/// \file
/// File → Open Recent: the last ten documents opened or saved, newest
/// first, kept in QSettings (`recentFiles`). A file that no longer exists
/// is dropped from the list when chosen, and missing() says so.

#include <QObject>
#include <QStringList>

class QMenu;

namespace weir::studio {

class RecentFiles : public QObject {
  Q_OBJECT

public:
  static constexpr int kMax = 10;

  /// Fills `menu` (owned by the caller) now and whenever the list changes.
  explicit RecentFiles(QMenu *menu, QObject *parent = nullptr);

  /// Puts `path` (made absolute) first; the oldest past kMax goes.
  void add(const QString &path);
  QStringList files() const;
  QMenu *menu() const { return menu_; }
  /// What choosing `path` from the menu does (public for tests).
  void choose(const QString &path);

signals:
  void openRequested(const QString &path);
  /// `path` was chosen but is gone; it left the list.
  void missing(const QString &path);

private:
  void store(const QStringList &files);
  void rebuild();

  QMenu *menu_;
};

} // namespace weir::studio
