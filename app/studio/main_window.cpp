#include "app/studio/main_window.h"

#include "app/studio/autosave.h"
#include "app/studio/code_dock.h"
#include "app/studio/command_palette.h"
#include "app/studio/document.h"
#include "app/studio/graph_panel.h"
#include "app/studio/history_dock.h"
#include "app/studio/overlay.h"
#include "app/studio/properties_dock.h"
#include "app/studio/recent_files.h"
#include "app/studio/recipe_export.h"
#include "app/studio/run_dock.h"
#include "app/studio/theme.h"
#include "app/studio/transformations_dock.h"
#include "app/studio/verify_runner.h"
#include "ir/error.h"
#include "ir/hash.h"

#include <QAction>
#include <QActionGroup>
#include <QCloseEvent>
#include <QComboBox>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QStatusBar>
#include <QToolBar>
#include <QUndoStack>

namespace weir::studio {

MainWindow::MainWindow(QWidget *parent)
    : QMainWindow(parent), document_(new Document(this)),
      panel_(new GraphPanel(this)),
      transformations_(new TransformationsDock(*document_, this)),
      history_(new HistoryDock(document_->undoStack(), this)),
      properties_(new PropertiesDock(this)), code_(new CodeDock(this)),
      run_(new RunDock(*document_, *panel_, this)),
      states_(new QComboBox(this)), find_(new QLineEdit(this)),
      statusProgram_(new QLabel(this)), statusLayout_(new QLabel(this)),
      cancelLayout_(new QPushButton(tr("Cancel layout"), this)),
      statusVerify_(new QLabel(this)), verifyBusy_(new QProgressBar(this)),
      verifier_(new VerifyRunner(this)),
      autosave_(new Autosave(*document_, this)),
      palette_(new CommandPalette(this)) {
  setCentralWidget(panel_);
  addDockWidget(Qt::RightDockWidgetArea, transformations_);
  addDockWidget(Qt::RightDockWidgetArea, properties_);
  addDockWidget(Qt::LeftDockWidgetArea, history_);
  addDockWidget(Qt::BottomDockWidgetArea, code_);
  addDockWidget(Qt::BottomDockWidgetArea, run_);
  // The generated code of a large model is long to make; it appears when
  // asked for. Running compiles too.
  code_->hide();
  run_->hide();
  statusBar()->addWidget(statusProgram_, 1);
  statusBar()->addPermanentWidget(statusVerify_);
  // Indeterminate: verification reports no progress of its own.
  verifyBusy_->setRange(0, 0);
  verifyBusy_->setMaximumWidth(120);
  verifyBusy_->hide();
  statusBar()->addPermanentWidget(verifyBusy_);
  openBusy_ = new QProgressBar(this);
  openBusy_->setRange(0, 0); // busy: import and replay report no steps
  openBusy_->setMaximumWidth(120);
  openBusy_->hide();
  statusBar()->addPermanentWidget(openBusy_);
  statusBar()->addPermanentWidget(statusLayout_);
  cancelLayout_->setToolTip(tr("Stop waiting for this layout and keep the "
                               "graph shown now (Esc on the graph)"));
  cancelLayout_->setFlat(true);
  cancelLayout_->hide();
  statusBar()->addPermanentWidget(cancelLayout_);
  createActions();
  resize(1400, 900);
  resizeDocks({history_, transformations_}, {220, 420}, Qt::Horizontal);

  // A long compile shows its progress where the window's status goes too.
  connect(run_, &RunDock::compileProgress, this, [this](int done, int total) {
    if (done < total)
      statusBar()->showMessage(
          tr("Compiling: %1 of %2 pieces (Cancel in the Run dock)")
              .arg(done)
              .arg(total));
    else
      statusBar()->clearMessage();
  });
  connect(run_, &RunDock::finished, this,
          [this] { statusBar()->clearMessage(); });
  connect(document_, &Document::opened, this, &MainWindow::onOpened);
  connect(document_, &Document::openFailed, this,
          [this](const QString &path, const QString &message) {
            statusBar()->clearMessage();
            openBusy_->hide();
            QMessageBox::warning(this, tr("Cannot open"),
                                 tr("Cannot open %1:\n%2").arg(path, message));
          });
  connect(document_, &Document::programChanged, this,
          &MainWindow::onProgramChanged);
  connect(document_, &Document::modifiedChanged, this,
          &MainWindow::updateTitle);
  connect(document_, &Document::sessionPathChanged, this,
          &MainWindow::updateTitle);
  connect(panel_, &GraphPanel::nodeSelected, this, [this](ir::NodeId id) {
    selected_ = Selected::Node;
    selectedId_ = id;
    transformations_->setSelectedNode(id);
    code_->showNode(id);
    showSelection();
  });
  connect(panel_, &GraphPanel::edgeSelected, this, [this](ir::EdgeId id) {
    selected_ = Selected::Edge;
    selectedId_ = id;
    transformations_->setSelectedNode(std::nullopt);
    code_->showNode(std::nullopt);
    showSelection();
  });
  connect(panel_, &GraphPanel::selectionCleared, this, [this] {
    selected_ = Selected::None;
    transformations_->setSelectedNode(std::nullopt);
    code_->showNode(std::nullopt);
    showSelection();
  });
  connect(code_, &CodeDock::nodeActivated, panel_, &GraphPanel::selectNode);
  connect(panel_, &GraphPanel::visibleNodesChanged, transformations_,
          &TransformationsDock::setVisibleNodes);
  connect(
      panel_, &GraphPanel::laidOut, this,
      [this](double seconds, std::size_t nodes) {
        statusLayout_->setText(
            tr("%1 nodes laid out in %2 s").arg(nodes).arg(seconds, 0, 'f', 2));
      });
  connect(panel_, &GraphPanel::layoutFailed, this, [this](const QString &m) {
    statusLayout_->setText(tr("layout failed: %1").arg(m));
  });
  connect(panel_, &GraphPanel::layingOutChanged, cancelLayout_,
          &QWidget::setVisible);
  connect(cancelLayout_, &QPushButton::clicked, panel_,
          &GraphPanel::cancelLayout);
  connect(panel_, &GraphPanel::layoutCancelled, this, [this] {
    statusLayout_->setText(
        tr("layout cancelled; the graph shows the previous layout"));
  });
  connect(verifier_, &VerifyRunner::finished, this, &MainWindow::onVerified);
  connect(transformations_, &TransformationsDock::highlightRequested, panel_,
          &GraphPanel::highlight);
  connect(states_, &QComboBox::currentIndexChanged, this,
          &MainWindow::showState);

  // Autosave and recovery (autosave.h); the question waits until the
  // opening is over.
  connect(autosave_, &Autosave::recoveryAvailable, this,
          &MainWindow::offerRecovery, Qt::QueuedConnection);
  connect(autosave_, &Autosave::writeFailed, this, [this](const QString &m) {
    statusBar()->showMessage(tr("Autosave failed: %1").arg(m), 8000);
  });
  connect(document_, &Document::opened, this,
          [this] { recent_->add(document_->documentFile()); });
  connect(document_, &Document::saved, this,
          [this] { recent_->add(document_->sessionPath()); });
  connect(recent_, &RecentFiles::openRequested, this,
          [this](const QString &path) {
            if (maybeSave())
              openInBackground(path);
          });
  connect(recent_, &RecentFiles::missing, this, [this](const QString &path) {
    statusBar()->showMessage(
        tr("%1 no longer exists; it was removed from the recent files.")
            .arg(path),
        8000);
  });
  connect(palette_, &CommandPalette::transformationChosen, this,
          [this](const QString &id) {
            transformations_->show();
            if (!transformations_->applyFirstApplicable(id))
              statusBar()->showMessage(transformations_->lastError(), 8000);
          });
  restoreLayout();
  updateTitle();
}

MainWindow::~MainWindow() {
  // The runner waits for its worker when the children go; its result must
  // not reach this half-destroyed window then.
  disconnect(verifier_, nullptr, this, nullptr);
}

void MainWindow::createActions() {
  QMenu *file = menuBar()->addMenu(tr("&File"));
  file->addAction(tr("&Open…"), QKeySequence::Open, this,
                  &MainWindow::openDialog);
  recent_ = new RecentFiles(file->addMenu(tr("Open &Recent")), this);
  file->addAction(tr("&Save"), QKeySequence::Save, this, &MainWindow::save);
  file->addAction(tr("Save &As…"), QKeySequence::SaveAs, this,
                  &MainWindow::saveAs);
  file->addAction(tr("&Export graph…"), this, &MainWindow::exportGraph);
  file->addAction(tr("Export recipe as &Python…"), this,
                  &MainWindow::exportRecipeDialog);
  file->addSeparator();
  file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

  QMenu *edit = menuBar()->addMenu(tr("&Edit"));
  undo_ = document_->undoStack()->createUndoAction(this, tr("&Undo"));
  undo_->setShortcut(QKeySequence::Undo);
  redo_ = document_->undoStack()->createRedoAction(this, tr("&Redo"));
  redo_->setShortcuts({QKeySequence(tr("Ctrl+Shift+Z")), QKeySequence::Redo});
  edit->addAction(undo_);
  edit->addAction(redo_);
  edit->addSeparator();
  verify_ = edit->addAction(tr("&Verify current version"),
                            QKeySequence(tr("Ctrl+Shift+V")), this,
                            &MainWindow::verifyCurrentVersion);
  verify_->setToolTip(tr("Run the current version and version 0 on the same "
                         "random inputs and compare their outputs"));
  verify_->setEnabled(false);
  connect(document_, &Document::opened, this, [this] {
    verify_->setEnabled(!verifier_->busy());
    // A result about the previous document's versions.
    if (!verifier_->busy())
      statusVerify_->clear();
  });

  QMenu *view = menuBar()->addMenu(tr("&View"));
  QAction *fit = view->addAction(tr("&Fit graph"), QKeySequence(tr("Ctrl+0")),
                                 panel_, &GraphPanel::fit);
  QAction *zoomIn = view->addAction(tr("Zoom &in"), QKeySequence::ZoomIn, this,
                                    [this] { panel_->zoomBy(1.25); });
  QAction *zoomOut = view->addAction(tr("Zoom &out"), QKeySequence::ZoomOut,
                                     this, [this] { panel_->zoomBy(0.8); });
  QAction *minimap =
      view->addAction(tr("&Minimap"), QKeySequence(tr("Ctrl+M")));
  minimap->setCheckable(true);
  minimap->setChecked(true);
  connect(minimap, &QAction::toggled, panel_->minimap(), &QWidget::setVisible);
  // View only: the program, its hash and history stay as they are.
  view->addAction(tr("Co&llapse all operator groups"), panel_,
                  &GraphPanel::collapseAllGroups);
  view->addAction(tr("E&xpand all"), panel_, &GraphPanel::expandAll);
  view->addSeparator();
  for (QDockWidget *dock : std::initializer_list<QDockWidget *>{
           transformations_, history_, properties_, code_, run_})
    view->addAction(dock->toggleViewAction());
  view->addSeparator();
  QMenu *theme = view->addMenu(tr("&Theme"));
  auto *themes = new QActionGroup(this);
  themeLight_ =
      theme->addAction(tr("&Light"), this, [] { setTheme(Theme::Light); });
  themeDark_ =
      theme->addAction(tr("&Dark"), this, [] { setTheme(Theme::Dark); });
  for (QAction *a : {themeLight_, themeDark_}) {
    a->setCheckable(true);
    themes->addAction(a);
  }
  applySavedTheme();
  QMenu *overlay = view->addMenu(tr("&Overlay"));
  auto *overlays = new QActionGroup(this);
  const std::pair<Overlay, QString> overlayItems[] = {
      {Overlay::None, tr("&None")},
      {Overlay::BytesMoved, tr("&Bytes moved per edge")},
      {Overlay::Flops, tr("&FLOPs per node")},
      {Overlay::Intensity, tr("&Arithmetic intensity (FLOP/byte)")}};
  for (const auto &[o, text] : overlayItems) {
    Overlay which = o;
    QAction *a = overlay->addAction(
        text, this, [this, which] { panel_->setOverlay(which); });
    a->setCheckable(true);
    a->setChecked(which == Overlay::None);
    overlays->addAction(a);
  }
  (savedTheme() == Theme::Dark ? themeDark_ : themeLight_)->setChecked(true);
  QAction *paletteAction =
      view->addAction(tr("&Command palette…"), QKeySequence(tr("Ctrl+Shift+P")),
                      palette_, &CommandPalette::popup);
  addAction(paletteAction);

  // The menu's undo and redo name the step; the toolbar's stay short.
  QToolBar *bar = addToolBar(tr("Graph"));
  bar->setObjectName("graph-toolbar");
  QUndoStack *stack = document_->undoStack();
  QAction *undo = bar->addAction(tr("Undo"), stack, &QUndoStack::undo);
  QAction *redo = bar->addAction(tr("Redo"), stack, &QUndoStack::redo);
  undo->setEnabled(false);
  redo->setEnabled(false);
  connect(stack, &QUndoStack::canUndoChanged, undo, &QAction::setEnabled);
  connect(stack, &QUndoStack::canRedoChanged, redo, &QAction::setEnabled);
  bar->addSeparator();
  bar->addAction(fit);
  bar->addAction(zoomIn);
  bar->addAction(zoomOut);
  bar->addSeparator();
  bar->addWidget(new QLabel(tr(" State "), this));
  bar->addWidget(states_);
  bar->addSeparator();
  find_->setPlaceholderText(tr("Find a node (name, op, container)"));
  find_->setClearButtonEnabled(true);
  find_->setMaximumWidth(280);
  bar->addWidget(find_);
  QAction *findAction =
      view->addAction(tr("&Find…"), QKeySequence::Find, this, [this] {
        find_->setFocus();
        find_->selectAll();
      });
  addAction(findAction);
  connect(find_, &QLineEdit::returnPressed, this, [this] {
    if (!panel_->findNext(find_->text()))
      statusBar()->showMessage(tr("No node matches \"%1\"").arg(find_->text()),
                               4000);
  });
}

void MainWindow::openFile(const QString &path) { document_->open(path); }

void MainWindow::openInBackground(const QString &path) {
  statusBar()->showMessage(tr("Opening %1…").arg(path));
  openBusy_->show();
  document_->openInBackground(path);
}

void MainWindow::saveFile(const QString &path) { document_->save(path); }

void MainWindow::onOpened() {
  statusBar()->clearMessage();
  openBusy_->hide();
  const ir::Program &p = document_->workspace()->program();
  QSignalBlocker block(states_);
  states_->clear();
  for (const ir::State &s : p.states)
    states_->addItem(QString::fromStdString(s.name));
  states_->setEnabled(p.states.size() > 1);
  selected_ = Selected::None;
  transformations_->setSelectedNode(std::nullopt);
  panel_->reset();
  shownVersion_ = document_->workspace()->current();
  showCurrentVersion();
}

void MainWindow::onProgramChanged() {
  updateTitle();
  if (refreshQueued_)
    return;
  refreshQueued_ = true;
  QMetaObject::invokeMethod(this, &MainWindow::showCurrentVersion,
                            Qt::QueuedConnection);
}

void MainWindow::showCurrentVersion() {
  refreshQueued_ = false;
  workspace::Workspace *ws = document_->workspace();
  const workspace::Change &c = document_->lastChange();
  // Only one apply from the version shown has a map from the shown ids to
  // the new ones; after undo or redo a selected node that still exists
  // stays selected.
  const transforms::IdMap *idMap = c.kind == workspace::ChangeKind::Applied &&
                                           c.from == shownVersion_ &&
                                           c.to == ws->current()
                                       ? &ws->versions()[c.to].idMap
                                       : nullptr;
  shownVersion_ = ws->current();
  int state = std::max(0, states_->currentIndex());
  panel_->showProgram(ws->programPtr(), state, idMap);
  transformations_->refresh();
  code_->setProgram(ws->programPtr());
  statusProgram_->setText(
      tr("%1 nodes · version %2 of %3 · hash %4")
          .arg(ws->program().nodeCount())
          .arg(ws->current())
          .arg(ws->versions().size() - 1)
          .arg(QString::fromStdString(ir::hashHex(ws->hash()))));
  statusLayout_->setText(tr("laying out…"));
  updateTitle();
}

void MainWindow::showState(int index) {
  if (workspace::Workspace *ws = document_->workspace()) {
    selected_ = Selected::None;
    panel_->showProgram(ws->programPtr(), index);
    statusLayout_->setText(tr("laying out…"));
  }
}

void MainWindow::showSelection() {
  // The panel's program: the one the selection's ids belong to.
  const auto &program = panel_->shownProgram();
  if (!program)
    return;
  int state = panel_->shownState();
  switch (selected_) {
  case Selected::Node:
    properties_->showNode(program, state, selectedId_);
    break;
  case Selected::Edge:
    properties_->showEdge(program, state, selectedId_);
    break;
  case Selected::None: {
    // The version's hash as the workspace computed it: hashing again would
    // read every weight.
    std::uint64_t hash = 0;
    for (const workspace::Version &v : document_->workspace()->versions())
      if (v.programIfLoaded() == program)
        hash = v.hash();
    properties_->showProgram(program, hash);
    break;
  }
  }
}

void MainWindow::verifyCurrentVersion() {
  workspace::Workspace *ws = document_->workspace();
  if (!ws || verifier_->busy())
    return;
  if (ws->current() == 0) {
    statusVerify_->setText(tr("version 0 is the imported model: nothing to "
                              "verify"));
    return;
  }
  if (!verifier_->start(*ws))
    return;
  verify_->setEnabled(false);
  verifyBusy_->show();
  statusVerify_->setText(
      tr("verifying version %1 against version 0…").arg(ws->current()));
  statusVerify_->setToolTip({});
}

void MainWindow::onVerified() {
  const VerifyRunner::Outcome &o = verifier_->outcome();
  verifyBusy_->hide();
  verify_->setEnabled(document_->workspace() != nullptr);
  QString line = o.ok ? tr("version %1 verified against version %2")
                            .arg(o.version)
                            .arg(o.reference)
                      : tr("version %1 FAILED verification against version %2")
                            .arg(o.version)
                            .arg(o.reference);
  statusVerify_->setText(line);
  statusVerify_->setToolTip(o.text);
  // Non-modal: the user keeps working while it is open; a later result
  // replaces it.
  if (!verifyMessage_) {
    verifyMessage_ = new QMessageBox(this);
    verifyMessage_->setWindowTitle(tr("Verify"));
    verifyMessage_->setAttribute(Qt::WA_DeleteOnClose);
    verifyMessage_->setModal(false);
  }
  verifyMessage_->setIcon(o.ok ? QMessageBox::Information
                               : QMessageBox::Warning);
  verifyMessage_->setText(line + ".");
  verifyMessage_->setInformativeText(
      tr("%1 (%2 s)").arg(o.text).arg(o.seconds, 0, 'f', 2));
  verifyMessage_->show();
}

QString MainWindow::verifyStatusText() const { return statusVerify_->text(); }

QMessageBox *MainWindow::verifyMessage() { return verifyMessage_; }

void MainWindow::updateTitle() {
  setWindowTitle(document_->workspace()
                     ? tr("%1[*] — Weir Studio").arg(document_->displayName())
                     : tr("Weir Studio"));
  setWindowModified(document_->isModified());
}

void MainWindow::closeEvent(QCloseEvent *event) {
  if (!maybeSave()) {
    event->ignore();
    return;
  }
  saveLayout();
  // A clean close: nothing to recover next time.
  autosave_->discard();
  event->accept();
}

void MainWindow::saveLayout() {
  QSettings settings;
  settings.setValue("window/geometry", saveGeometry());
  settings.setValue("window/state", saveState());
}

void MainWindow::restoreLayout() {
  QSettings settings;
  restoreGeometry(settings.value("window/geometry").toByteArray());
  restoreState(settings.value("window/state").toByteArray());
}

bool MainWindow::askRecovery(const QString &document) {
  QString answer = qEnvironmentVariable("WEIR_STUDIO_RECOVER");
  if (answer == "yes" || answer == "no")
    return answer == "yes";
  return QMessageBox::question(
             this, tr("Recover unsaved steps?"),
             tr("Weir Studio did not close cleanly while %1 had unsaved "
                "steps. Recover them from the autosave?")
                 .arg(QFileInfo(document).fileName()),
             QMessageBox::Yes | QMessageBox::No,
             QMessageBox::Yes) == QMessageBox::Yes;
}

void MainWindow::offerRecovery(const QString &autosave,
                               const QString &document) {
  // Another document may have been opened since it was found.
  if (document_->documentFile() != document || !QFileInfo::exists(autosave))
    return;
  if (!askRecovery(document)) {
    QFile::remove(autosave);
    return;
  }
  statusBar()->showMessage(tr("Recovering %1…").arg(document));
  document_->recoverInBackground(autosave, document);
}

bool MainWindow::maybeSave() {
  if (!document_->isModified())
    return true;
  auto answer = QMessageBox::warning(
      this, tr("Weir Studio"),
      tr("%1 has steps that are not saved in a session.")
          .arg(document_->displayName()),
      QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel);
  if (answer == QMessageBox::Save)
    return save();
  return answer == QMessageBox::Discard;
}

void MainWindow::openDialog() {
  if (!maybeSave())
    return;
  QString path = QFileDialog::getOpenFileName(
      this, tr("Open a model or session"), QString(),
      tr("Models and sessions (*.onnx *.weir *.json);;All files (*)"));
  if (path.isEmpty())
    return;
  openInBackground(path);
}

bool MainWindow::save() {
  if (document_->sessionPath().isEmpty())
    return saveAs();
  try {
    saveFile(document_->sessionPath());
    return true;
  } catch (const std::exception &e) {
    QMessageBox::warning(this, tr("Cannot save"), QString::fromUtf8(e.what()));
    return false;
  }
}

bool MainWindow::saveAs() {
  if (!document_->workspace())
    return false;
  QString suggested = document_->sessionPath();
  if (suggested.isEmpty() && !document_->modelPath().isEmpty()) {
    QFileInfo model(document_->modelPath());
    suggested = model.absolutePath() + "/" + model.completeBaseName() + ".weir";
  }
  QString path = QFileDialog::getSaveFileName(
      this, tr("Save the session"), suggested, tr("Weir sessions (*.weir)"));
  if (path.isEmpty())
    return false;
  if (QFileInfo(path).suffix() != "weir")
    path += ".weir";
  try {
    saveFile(path);
    return true;
  } catch (const std::exception &e) {
    QMessageBox::warning(this, tr("Cannot save"), QString::fromUtf8(e.what()));
    return false;
  }
}

void MainWindow::exportRecipe(const QString &path) {
  if (!document_->workspace())
    throw Error("nothing is open to export");
  exportRecipeAsPython(*document_->workspace(), path);
}

void MainWindow::exportRecipeDialog() {
  if (!document_->workspace())
    return;
  QString path = QFileDialog::getSaveFileName(
      this, tr("Export the recipe as Python"), QString(), tr("Python (*.py)"));
  if (path.isEmpty())
    return;
  try {
    exportRecipe(path);
  } catch (const std::exception &e) {
    QMessageBox::warning(this, tr("Cannot export"),
                         QString::fromUtf8(e.what()));
  }
}

void MainWindow::exportGraph() {
  QString path = QFileDialog::getSaveFileName(
      this, tr("Export the graph"), QString(), tr("SVG (*.svg);;PNG (*.png)"));
  if (path.isEmpty())
    return;
  if (!panel_->exportImage(path))
    QMessageBox::warning(this, tr("Cannot export"),
                         tr("Could not write %1.").arg(path));
}

} // namespace weir::studio
