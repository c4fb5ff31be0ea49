/// \file
/// weir-studio's workbench features under QTest (offscreen): autosave and
/// recovery after a crash, recent files and the saved window layout, the
/// recipe exported as Python (and run), the command palette driven by
/// keyboard, and the themes. Each compares with the core Workspace doing
/// the same steps.

#include "app/studio/autosave.h"
#include "app/studio/command_palette.h"
#include "app/studio/document.h"
#include "app/studio/graph_panel.h"
#include "app/studio/main_window.h"
#include "app/studio/overlay.h"
#include "app/studio/properties_dock.h"
#include "app/studio/recent_files.h"
#include "app/studio/recipe_export.h"
#include "app/studio/text_format.h"
#include "app/studio/theme.h"
#include "app/studio/transformations_dock.h"
#include "ir/analysis.h"
#include "ir/error.h"
#include "ir/hash.h"
#include "tests/gui/gui_test_helpers.h"
#include "tests/gui/test_environment.h"
#include "transforms/registry.h"
#include "workspace/session.h"

#include <QAbstractButton>
#include <QApplication>
#include <QFile>
#include <QLineEdit>
#include <QListWidget>
#include <QMenu>
#include <QMessageBox>
#include <QProcess>
#include <QSettings>
#include <QSignalSpy>
#include <QStatusBar>
#include <QStyle>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>
#include <QTreeWidget>
#include <QUndoStack>

using namespace weir;
using namespace weir::studio;
using namespace weir::studio::testing;

namespace {

/// The steps as the history shows them.
QStringList history(MainWindow &w) {
  QStringList out;
  QUndoStack *stack = w.document()->undoStack();
  for (int i = 0; i < stack->count(); ++i)
    out << stack->text(i);
  return out;
}

QStringList recipeSteps(const workspace::Workspace &ws) {
  QStringList out;
  for (const workspace::Step &s : ws.recipe().steps)
    out << QString::fromStdString(s.str());
  return out;
}

/// Answers the next message box with `button` (a close asks about unsaved
/// steps).
void answerNextMessageBox(QMessageBox::StandardButton button) {
  auto *timer = new QTimer(qApp); // freed with the app if no box comes
  QObject::connect(timer, &QTimer::timeout, [timer, button] {
    if (auto *box =
            qobject_cast<QMessageBox *>(QApplication::activeModalWidget())) {
      timer->stop();
      timer->deleteLater();
      box->button(button)->click();
    }
  });
  timer->start(20);
}

} // namespace

class WorkbenchTest : public QObject {
  Q_OBJECT

private slots:
  void initTestCase() { env_ = std::make_unique<testing::TestEnvironment>(); }
  void cleanup() { env_->clear(); }
  void cleanupTestCase() { env_.reset(); }
  void recoversAfterACrash();
  void declinedOrSavedAutosavesGo();
  void recentFilesAndLayoutPersist();
  void exportsTheRecipeAsPython();
  void commandPaletteByKeyboard();
  void themesSwitchAndPersist();
  void overlaysColourByTheAnalysis();

private:
  std::unique_ptr<testing::TestEnvironment> env_;
};

void WorkbenchTest::recoversAfterACrash() {
  QSettings().setValue("autosave/intervalSeconds", 7);
  QCOMPARE(Autosave::intervalSeconds(), 7);
  QSettings().remove("autosave/intervalSeconds");
  QCOMPARE(Autosave::intervalSeconds(), 60);

  const QString autosave = Autosave::fileFor(kSample);
  QVERIFY(autosave.startsWith(env_->autosaveFolder()));
  std::uint64_t hash = 0;
  QStringList steps;
  {
    MainWindow w;
    w.openFile(kSample);
    QCOMPARE(w.autosave()->file(), autosave);
    QSignalSpy written(w.autosave(), &Autosave::written);
    // Written after each step.
    w.document()->apply("fold-batchnorm",
                        firstApplicable(wsOf(w), "fold-batchnorm"));
    QVERIFY(written.wait(kTimeoutMs));
    QCOMPARE(written.back().front().toString(), autosave);
    w.document()->apply("expand-all", firstApplicable(wsOf(w), "expand-all"));
    w.document()->apply("map-fusion", firstApplicable(wsOf(w), "map-fusion"));
    QVERIFY(QTest::qWaitFor(
        [&] { return written.count() >= 2 && !w.autosave()->busy(); },
        kTimeoutMs));
    hash = wsOf(w).hash();
    steps = history(w);
    QCOMPARE(steps.size(), 3);
    // The autosave is a session the core opens to the same program.
    QCOMPARE(workspace::openSession(autosave.toStdString())->hash(), hash);
  } // destroyed without a close, as by a crash: the autosave stays
  QCOMPARE(env_->autosaves(), QStringList{QFileInfo(autosave).fileName()});

  // The next start: the document's autosave is newer than the document.
  QCOMPARE(Autosave::recoverable(kSample), autosave);
  qputenv("WEIR_STUDIO_RECOVER", "yes");
  MainWindow next;
  QSignalSpy found(next.autosave(), &Autosave::recoveryAvailable);
  next.openFile(kSample);
  QCOMPARE(found.count(), 1);
  QVERIFY(QTest::qWaitFor([&] { return next.document()->recovered(); },
                          kTimeoutMs));
  qputenv("WEIR_STUDIO_RECOVER", "no");
  QCOMPARE(wsOf(next).hash(), hash);
  QCOMPARE(history(next), steps);
  QCOMPARE(recipeSteps(wsOf(next)), steps);
  // It stands for the model, with unsaved steps, which stay autosaved.
  QCOMPARE(next.document()->modelPath(), QFileInfo(kSample).absoluteFilePath());
  QVERIFY(next.document()->sessionPath().isEmpty());
  QVERIFY(next.document()->isModified());
  QVERIFY(
      QTest::qWaitFor([&] { return !next.autosave()->busy(); }, kTimeoutMs));
  QVERIFY(QFileInfo::exists(autosave));
  // Undo reaches the import.
  next.document()->undoStack()->setIndex(0);
  QCOMPARE(wsOf(next).hash(),
           workspace::openModel(kSample.toStdString())->hash());
  next.document()->undoStack()->setIndex(3);

  // A clean close (the unsaved steps discarded) leaves no autosave.
  next.show();
  answerNextMessageBox(QMessageBox::Discard);
  QVERIFY(next.close());
  QVERIFY(!QFileInfo::exists(autosave));
  QCOMPARE(env_->autosaves(), QStringList());
}

void WorkbenchTest::declinedOrSavedAutosavesGo() {
  const QString autosave = Autosave::fileFor(kSample);
  std::uint64_t imported = 0;
  {
    MainWindow w;
    w.openFile(kSample);
    imported = wsOf(w).hash();
    QSignalSpy written(w.autosave(), &Autosave::written);
    w.document()->apply("expand-all", firstApplicable(wsOf(w), "expand-all"));
    QVERIFY(written.wait(kTimeoutMs));
    // Back to the saved state: nothing unsaved, no autosave.
    w.document()->undoStack()->undo();
    QVERIFY(QTest::qWaitFor([&] { return !QFileInfo::exists(autosave); },
                            kTimeoutMs));
    w.document()->undoStack()->redo();
    QVERIFY(written.wait(kTimeoutMs));
  }
  QVERIFY(QFileInfo::exists(autosave));
  // Declined: the autosave goes, the document is the model as imported.
  {
    MainWindow w;
    QSignalSpy found(w.autosave(), &Autosave::recoveryAvailable);
    w.openFile(kSample);
    QCOMPARE(found.count(), 1);
    QVERIFY(QTest::qWaitFor([&] { return !QFileInfo::exists(autosave); },
                            kTimeoutMs));
    QCOMPARE(wsOf(w).hash(), imported);
    QVERIFY(!w.document()->recovered());

    // Saved as a session: neither the model's nor the session's autosave
    // is left.
    QSignalSpy written(w.autosave(), &Autosave::written);
    w.document()->apply("expand-all", firstApplicable(wsOf(w), "expand-all"));
    QVERIFY(written.wait(kTimeoutMs));
    QTemporaryDir dir;
    QString session = dir.filePath("cnn.weir");
    w.saveFile(session);
    QCOMPARE(w.autosave()->file(), Autosave::fileFor(session));
    QVERIFY(QTest::qWaitFor(
        [&] { return !w.autosave()->busy() && env_->autosaves().isEmpty(); },
        kTimeoutMs));
    // A step on the session is autosaved under the session's name.
    w.document()->apply("map-fusion", firstApplicable(wsOf(w), "map-fusion"));
    QVERIFY(written.wait(kTimeoutMs));
    QCOMPARE(env_->autosaves(),
             QStringList{QFileInfo(Autosave::fileFor(session)).fileName()});
  }
}

void WorkbenchTest::recentFilesAndLayoutPersist() {
  QTemporaryDir dir;
  QStringList made;
  for (int i = 0; i < 12; ++i) {
    made << QDir(dir.path()).absoluteFilePath(QString("m%1.onnx").arg(i));
    QFile f(made.back());
    QVERIFY(f.open(QIODevice::WriteOnly));
  }
  {
    MainWindow w;
    RecentFiles *recent = w.recentFiles();
    QVERIFY(recent->files().isEmpty());
    QVERIFY(!recent->menu()->isEnabled());
    for (const QString &f : made)
      recent->add(f);
    // At most ten, newest first; the menu follows.
    QCOMPARE(recent->files(), QStringList(made.rbegin(), made.rbegin() + 10));
    QCOMPARE(recent->menu()->actions().size(), RecentFiles::kMax);
    QCOMPARE(recent->menu()->actions().front()->data().toString(), made[11]);
    // Opening a document puts it first; one already listed moves up.
    w.openFile(kSample);
    QCOMPARE(recent->files().front(), QFileInfo(kSample).absoluteFilePath());
    recent->add(made[5]);
    QCOMPARE(recent->files().front(), made[5]);
    QCOMPARE(recent->files().count(made[5]), 1);
    QCOMPARE(recent->files().size(), 10);

    // A file that is gone is dropped when chosen, with a message.
    QVERIFY(QFile::remove(made[11]));
    QSignalSpy missing(recent, &RecentFiles::missing);
    QAction *gone = nullptr;
    for (QAction *a : recent->menu()->actions())
      if (a->data().toString() == made[11])
        gone = a;
    QVERIFY(gone);
    gone->trigger();
    QVERIFY(missing.wait(kTimeoutMs));
    QVERIFY(!recent->files().contains(made[11]));
    QVERIFY(w.statusBar()->currentMessage().contains(made[11]));
    // One that exists is opened (in the background).
    QSignalSpy opened(w.document(), &Document::opened);
    recent->choose(QFileInfo(kSample).absoluteFilePath());
    QVERIFY(opened.wait(kTimeoutMs));

    // A layout to remember: the Properties dock closed, the
    // Transformations dock on the left, another size.
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    w.propertiesDock()->hide();
    w.addDockWidget(Qt::LeftDockWidgetArea, w.transformationsDock());
    w.resize(1000, 700);
    QVERIFY(w.close());
  }
  QVERIFY(QSettings().contains("window/state"));
  MainWindow again;
  again.show();
  QVERIFY(QTest::qWaitForWindowExposed(&again));
  QVERIFY(again.propertiesDock()->isHidden());
  QCOMPARE(again.dockWidgetArea(again.transformationsDock()),
           Qt::LeftDockWidgetArea);
  QCOMPARE(again.size(), QSize(1000, 700));
  // The list survived too.
  QCOMPARE(again.recentFiles()->files().size(), 9);
  QCOMPARE(again.recentFiles()->menu()->actions().size(), 9);
}

void WorkbenchTest::exportsTheRecipeAsPython() {
  MainWindow w;
  w.openFile(kSample);
  std::unique_ptr<workspace::Workspace> ref =
      workspace::openModel(kSample.toStdString());
  for (const char *t : {"fold-batchnorm", "expand-all", "map-fusion"}) {
    transforms::Match m = firstApplicable(*ref, t);
    ref->apply(t, m);
    w.document()->apply(t, m);
  }
  QCOMPARE(wsOf(w).hash(), ref->hash());
  QTemporaryDir dir;
  QString path = dir.filePath("recipe.py");
  {
    QFile old(path); // replaced whole
    QVERIFY(old.open(QIODevice::WriteOnly));
    old.write(QByteArray(100000, '#'));
  }
  w.exportRecipe(path);
  QFile file(path);
  QVERIFY(file.open(QIODevice::ReadOnly));
  QString text = QString::fromUtf8(file.readAll());
  QCOMPARE(text, QString::fromStdString(
                     ref->recipe().asPython(ref->source().modelPath)));
  QVERIFY(text.contains("map-fusion"));
  QCOMPARE(QDir(dir.path()).entryList(QDir::Files), QStringList{"recipe.py"});
  // Undone steps are not in it.
  w.document()->undoStack()->undo();
  w.exportRecipe(path);
  file.close(); // it was replaced: the open file is the old one
  QVERIFY(file.open(QIODevice::ReadOnly));
  QVERIFY(!QString::fromUtf8(file.readAll()).contains("map-fusion"));
  w.document()->undoStack()->redo();
  w.exportRecipe(path);
  QVERIFY_THROWS_EXCEPTION(Error, w.exportRecipe(dir.filePath("no/such.py")));

  // The script replays to the same program with the `weir` package.
  QDir package(WEIR_PYTHON_DIR "/weir");
  QVERIFY2(!package.entryList({"_weir*.so"}, QDir::Files).isEmpty(),
           "the Python package is not built in " WEIR_PYTHON_DIR);
  QProcess python;
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.insert("PYTHONPATH", WEIR_PYTHON_DIR);
  env.insert("PYTHONDONTWRITEBYTECODE", "1");
  env.insert("WEIR_PLUGIN_PATH", "");
  if (QString preload = WEIR_PYTHON_PRELOAD; !preload.isEmpty()) {
    // An instrumented extension in an uninstrumented interpreter.
    env.insert("LD_PRELOAD", preload);
    env.insert("ASAN_OPTIONS", "detect_leaks=0");
  }
  python.setProcessEnvironment(env);
  python.start(WEIR_PYTHON, {"-c", "exec(open(" + QString("'%1'").arg(path) +
                                       ").read()); print(ws.hash)"});
  QVERIFY(python.waitForFinished(120000));
  QVERIFY2(python.exitCode() == 0, python.readAllStandardError().constData());
  QCOMPARE(QString::fromUtf8(python.readAllStandardOutput()).trimmed(),
           QString::fromStdString(ir::hashHex(ref->hash())));
}

void WorkbenchTest::commandPaletteByKeyboard() {
  MainWindow w;
  w.show();
  QVERIFY(QTest::qWaitForWindowExposed(&w));
  w.openFile(kSample);
  std::unique_ptr<workspace::Workspace> ref =
      workspace::openModel(kSample.toStdString());
  QVERIFY(QTest::qWaitFor(
      [&] {
        return !w.transformationsDock()->refreshing() &&
               w.transformationsDock()->listedProgram() == wsOf(w).programPtr();
      },
      kTimeoutMs));
  w.activateWindow();
  QVERIFY(QTest::qWaitForWindowActive(&w));

  CommandPalette *palette = w.commandPalette();
  auto open = [&] {
    w.activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&w));
    QTest::keyClick(&w, Qt::Key_P, Qt::ControlModifier | Qt::ShiftModifier);
    QVERIFY(palette->isVisible());
    QVERIFY(palette->filterField()->hasFocus());
  };
  open();
  // Every transformation, and the window's actions.
  QStringList all = palette->visibleEntries();
  for (const auto &t : transforms::transformations())
    QVERIFY(all.contains(QString("Transformation: %1 — %2")
                             .arg(qstr(t->id()), qstr(t->summary()))));
  for (const char *a :
       {"File › Open…", "File › Save As…", "File › Export recipe as Python…",
        "View › Fit graph", "Theme › Dark", "Overlay › FLOPs per node",
        "View › Transformations", "View › Command palette…"})
    QVERIFY2(std::any_of(all.begin(), all.end(),
                         [&](const QString &e) { return e.startsWith(a); }),
             a);

  // A transformation: its first applicable match is applied.
  QTest::keyClicks(palette->filterField(), "fold BATCHNORM");
  QCOMPARE(palette->visibleEntries().size(), 1);
  QTest::keyClick(palette->filterField(), Qt::Key_Return);
  QVERIFY(!palette->isVisible());
  ref->apply("fold-batchnorm", firstApplicable(*ref, "fold-batchnorm"));
  QCOMPARE(wsOf(w).hash(), ref->hash());
  QCOMPARE(w.document()->undoStack()->count(), 1);

  // Down moves past the first entry; Escape closes without running.
  open();
  QTest::keyClicks(palette->filterField(), "zoom");
  QCOMPARE(palette->visibleEntries().size(), 2);
  QVERIFY(palette->list()->currentItem()->text().startsWith("View › Zoom in"));
  QTest::keyClick(palette->filterField(), Qt::Key_Down);
  QVERIFY(palette->list()->currentItem()->text().startsWith("View › Zoom out"));
  QTest::keyClick(palette->filterField(), Qt::Key_Down); // stays at the end
  QVERIFY(palette->list()->currentItem()->text().startsWith("View › Zoom out"));
  QTest::keyClick(palette->filterField(), Qt::Key_Up);
  QVERIFY(palette->list()->currentItem()->text().startsWith("View › Zoom in"));
  QTest::keyClick(palette->filterField(), Qt::Key_Escape);
  QVERIFY(!palette->isVisible());

  // An action: undo, named after the step.
  open();
  QTest::keyClicks(palette->filterField(), "undo fold");
  QCOMPARE(palette->visibleEntries().size(), 1);
  QTest::keyClick(palette->filterField(), Qt::Key_Return);
  ref->undo();
  QCOMPARE(wsOf(w).hash(), ref->hash());

  // A transformation with nothing applicable: the reason, no step.
  QVERIFY(QTest::qWaitFor(
      [&] {
        return w.transformationsDock()->listedProgram() == wsOf(w).programPtr();
      },
      kTimeoutMs));
  std::string none;
  for (const auto &t : transforms::transformations()) {
    bool applies = false;
    for (const transforms::Match &m : ref->matches(t->id()))
      applies = applies || ref->check(t->id(), m).ok;
    if (!applies) {
      none = std::string(t->id());
      break;
    }
  }
  QVERIFY(!none.empty());
  open();
  // Its id may be part of another's ("map-fusion"): Down to it.
  QString entry = "Transformation: " + qstr(none) + " —";
  QTest::keyClicks(palette->filterField(), qstr(none));
  for (int i = 0; i < palette->visibleEntries().size() &&
                  !palette->list()->currentItem()->text().startsWith(entry);
       ++i)
    QTest::keyClick(palette->filterField(), Qt::Key_Down);
  QVERIFY(palette->list()->currentItem()->text().startsWith(entry));
  QTest::keyClick(palette->filterField(), Qt::Key_Return);
  QCOMPARE(wsOf(w).hash(), ref->hash());
  QVERIFY(w.transformationsDock()->lastError().contains("no match applies"));
  QCOMPARE(w.transformationsDock()->tree()->currentItem()->text(0), qstr(none));
}

void WorkbenchTest::themesSwitchAndPersist() {
  MainWindow w;
  QVERIFY(w.themeAction(false)->isChecked());
  w.themeAction(true)->trigger();
  QCOMPARE(QSettings().value("view/theme").toString(), QString("dark"));
  QCOMPARE(QApplication::style()->name().toLower(), QString("fusion"));
  QPalette dark = QApplication::palette();
  QVERIFY(dark.color(QPalette::Window).lightness() < 80);
  QVERIFY(dark.color(QPalette::WindowText).lightness() > 180);
  QVERIFY(dark.color(QPalette::Base).lightness() < 80);
  // The graph canvas stays light, so the glyphs' black text and pale
  // fills keep their contrast.
  QVERIFY(w.graphPanel()->view()->backgroundBrush().color().lightness() > 200);
  {
    // Remembered: the next window starts dark.
    MainWindow next;
    QVERIFY(next.themeAction(true)->isChecked());
    QCOMPARE(QApplication::palette().color(QPalette::Window),
             dark.color(QPalette::Window));
  }
  w.themeAction(false)->trigger();
  QCOMPARE(QSettings().value("view/theme").toString(), QString("light"));
  QVERIFY(QApplication::palette().color(QPalette::Window).lightness() > 180);
  QVERIFY(QApplication::palette().color(QPalette::WindowText).lightness() < 80);
  QCOMPARE(savedTheme(), Theme::Light);
}

void WorkbenchTest::overlaysColourByTheAnalysis() {
  // The heat scale runs from pale to red, always light enough for text.
  QVERIFY(heatColor(0).lightness() > heatColor(1).lightness());
  QVERIFY(heatColor(1).red() > heatColor(1).green() + 100);
  QCOMPARE(heatColor(2), heatColor(1));

  MainWindow w;
  w.show();
  w.openFile(kSample);
  QVERIFY(QTest::qWaitFor(
      [&] {
        return !w.graphPanel()->layingOut() &&
               w.graphPanel()->shownProgram() == wsOf(w).programPtr();
      },
      kTimeoutMs));
  GraphPanel *panel = w.graphPanel();
  QVERIFY(!panel->legend()->isVisible());
  const ir::State &state = wsOf(w).program().states.front();
  ir::StateAnalysis analysis = ir::analyze(wsOf(w).program()).states.front();

  // Bytes: the edge moving the most is the hottest; one moving less is
  // cooler; one moving nothing keeps the usual colour.
  panel->setOverlay(Overlay::BytesMoved);
  QVERIFY(panel->legend()->isVisible());
  const ir::EdgeTraffic *most = nullptr, *least = nullptr, *none = nullptr;
  for (const ir::EdgeTraffic &t : analysis.edges) {
    std::int64_t b = t.bytes.asConstant().value_or(0);
    if (b == 0)
      none = &t;
    else if (!most || b > *most->bytes.asConstant())
      most = &t;
    if (b > 0 && (!least || b < *least->bytes.asConstant()))
      least = &t;
  }
  QVERIFY(most && least && most != least);
  EdgeItem *hot = panel->scene()->edgeItem(most->edge);
  QCOMPARE(hot->overlayColor(), heatColor(1));
  QColor cool = panel->scene()->edgeItem(least->edge)->overlayColor();
  QVERIFY(cool.isValid() && cool != heatColor(1));
  QVERIFY(cool.lightness() > hot->overlayColor().lightness());
  if (none)
    QVERIFY(!panel->scene()->edgeItem(none->edge)->overlayColor().isValid());
  for (const ir::Node &n : state.nodes)
    QVERIFY(!panel->scene()->nodeItem(n.id)->overlayColor().isValid());
  QVERIFY(panel->legend()->text().contains(
      bytesText(most->bytes))); // the scale's top

  // FLOPs: the node computing the most is the hottest; edges go back.
  panel->setOverlay(Overlay::Flops);
  const ir::NodeCost *busiest = nullptr;
  for (const ir::NodeCost &c : analysis.nodes)
    if (c.flops.asConstant().value_or(0) > 0 &&
        (!busiest || *c.flops.asConstant() > *busiest->flops.asConstant()))
      busiest = &c;
  QVERIFY(busiest);
  QCOMPARE(panel->scene()->nodeItem(busiest->node)->overlayColor(),
           heatColor(1));
  QVERIFY(!hot->overlayColor().isValid());
  QVERIFY(panel->legend()->text().startsWith("FLOPs per node"));

  // Kept across a step (a new layout), and off again with None.
  w.document()->apply("expand-all", firstApplicable(wsOf(w), "expand-all"));
  QVERIFY(QTest::qWaitFor(
      [&] {
        return !panel->layingOut() &&
               panel->shownProgram() == wsOf(w).programPtr();
      },
      kTimeoutMs));
  int coloured = 0;
  for (const ir::Node &n : wsOf(w).program().states.front().nodes)
    coloured += panel->scene()->nodeItem(n.id)->overlayColor().isValid();
  QVERIFY(coloured > 0);
  panel->setOverlay(Overlay::None);
  QVERIFY(!panel->legend()->isVisible());
  for (const ir::Node &n : wsOf(w).program().states.front().nodes)
    QVERIFY(!panel->scene()->nodeItem(n.id)->overlayColor().isValid());
}

QTEST_MAIN(WorkbenchTest)
#include "workbench_test.moc"
