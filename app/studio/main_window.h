#pragma once
/// \file
/// The main window: the graph in the middle, the Transformations, History,
/// Properties, Code and Run docks around it, and the File, Edit and View menus.
/// It turns the user's intent into document calls (open, save, apply, undo)
/// and keeps the views in step with the document's signals.

#include <QMainWindow>
#include <QPointer>

class QAction;
class QComboBox;
class QLabel;
class QLineEdit;
class QMessageBox;
class QProgressBar;
class QPushButton;

namespace weir::studio {

class Autosave;
class CodeDock;
class CommandPalette;
class RecentFiles;
class Document;
class GraphPanel;
class HistoryDock;
class PropertiesDock;
class RunDock;
class TransformationsDock;
class VerifyRunner;

class MainWindow : public QMainWindow {
  Q_OBJECT

public:
  explicit MainWindow(QWidget *parent = nullptr);
  ~MainWindow() override;

  /// Opens a model or a session. Throws weir::Error; the window keeps what
  /// it showed then.
  void openFile(const QString &path);
  /// Opens on a worker thread; the window stays usable and says why when
  /// the file cannot be opened.
  void openInBackground(const QString &path);
  /// Saves the session to `path` (atomically). Throws weir::Error.
  void saveFile(const QString &path);
  /// Writes the history as a Python script (recipe_export.h). Throws
  /// weir::Error.
  void exportRecipe(const QString &path);

  Document *document() { return document_; }
  GraphPanel *graphPanel() { return panel_; }
  TransformationsDock *transformationsDock() { return transformations_; }
  HistoryDock *historyDock() { return history_; }
  PropertiesDock *propertiesDock() { return properties_; }
  CodeDock *codeDock() { return code_; }
  RunDock *runDock() { return run_; }
  QAction *undoAction() { return undo_; }
  QAction *redoAction() { return redo_; }
  QLineEdit *findField() { return find_; }
  /// The busy bar shown while a file opens in the background.
  QProgressBar *openProgress() { return openBusy_; }
  Autosave *autosave() { return autosave_; }
  RecentFiles *recentFiles() { return recent_; }
  CommandPalette *commandPalette() { return palette_; }
  QAction *themeAction(bool dark) { return dark ? themeDark_ : themeLight_; }
  /// The status bar's "Cancel layout" button, shown while a layout runs.
  QPushButton *cancelLayoutButton() { return cancelLayout_; }
  /// Edit ▸ Verify current version (Ctrl+Shift+V).
  QAction *verifyAction() { return verify_; }
  VerifyRunner *verifyRunner() { return verifier_; }
  /// Checks the current version against version 0 on a worker thread
  /// (verify_runner.h): a busy indicator in the status bar meanwhile, then
  /// the result there and in a non-modal message box.
  void verifyCurrentVersion();
  /// What the status bar says about the last verification ("" before).
  QString verifyStatusText() const;
  /// The last verification's message box while it is open, else null.
  QMessageBox *verifyMessage();
  /// How a found autosave is answered: WEIR_STUDIO_RECOVER=yes|no (tests,
  /// scripts), else a question to the user.
  bool askRecovery(const QString &document);

protected:
  void closeEvent(QCloseEvent *event) override;

private:
  void createActions();
  void onOpened();
  void onProgramChanged();
  void showCurrentVersion();
  void showState(int index);
  void showSelection();
  void onVerified();
  void updateTitle();
  /// Asks what to do with unsaved changes; false when the user cancels.
  bool maybeSave();
  void openDialog();
  bool save();
  bool saveAs();
  void exportGraph();
  void exportRecipeDialog();
  void offerRecovery(const QString &autosave, const QString &document);
  /// Window geometry and dock layout, in QSettings `window/…`.
  void saveLayout();
  void restoreLayout();

  Document *document_;
  GraphPanel *panel_;
  TransformationsDock *transformations_;
  HistoryDock *history_;
  PropertiesDock *properties_;
  CodeDock *code_;
  RunDock *run_;
  QComboBox *states_;
  QLineEdit *find_;
  QLabel *statusProgram_;
  QLabel *statusLayout_;
  QPushButton *cancelLayout_;
  QLabel *statusVerify_;
  QProgressBar *verifyBusy_;
  QProgressBar *openBusy_; ///< while a file opens in the background
  VerifyRunner *verifier_;
  QPointer<QMessageBox> verifyMessage_;
  QAction *verify_ = nullptr;
  QAction *undo_ = nullptr;
  QAction *redo_ = nullptr;
  QAction *themeLight_ = nullptr;
  QAction *themeDark_ = nullptr;
  Autosave *autosave_;
  RecentFiles *recent_ = nullptr;
  CommandPalette *palette_;
  /// The workspace version the views were last given, and whether a
  /// refresh is queued: a revert across many steps changes the version
  /// once per step, and the views catch up once.
  std::size_t shownVersion_ = 0;
  bool refreshQueued_ = false;
  /// What the Properties dock shows.
  enum class Selected { None, Node, Edge } selected_ = Selected::None;
  std::uint64_t selectedId_ = 0;
};

} // namespace weir::studio
