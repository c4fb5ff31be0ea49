#pragma once
/// \file
/// Keeps the GUI tests off the user's settings and autosaves: QSettings in
/// a temporary folder (INI), QStandardPaths in test mode, autosaves in a
/// temporary folder (WEIR_STUDIO_AUTOSAVE_DIR), and any autosave found on
/// opening declined (WEIR_STUDIO_RECOVER=no) unless a test says otherwise.

#include <QCoreApplication>
#include <QDir>
#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryDir>

namespace weir::studio::testing {

class TestEnvironment {
public:
  TestEnvironment() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName("weir-test");
    QCoreApplication::setApplicationName("weir-studio-test");
    QSettings::setDefaultFormat(QSettings::IniFormat);
    QSettings::setPath(QSettings::IniFormat, QSettings::UserScope,
                       settings_.path());
    qputenv("WEIR_STUDIO_AUTOSAVE_DIR", autosaves_.path().toUtf8());
    qputenv("WEIR_STUDIO_RECOVER", "no");
  }
  QString autosaveFolder() const { return autosaves_.path(); }
  /// What the autosave folder holds.
  QStringList autosaves() const {
    return QDir(autosaves_.path()).entryList(QDir::Files);
  }
  void clear() {
    for (const QString &f : autosaves())
      QDir(autosaves_.path()).remove(f);
    QSettings().clear();
  }

private:
  QTemporaryDir settings_;
  QTemporaryDir autosaves_;
};

} // namespace weir::studio::testing
