/// \file
/// weir-studio's Python dock on the embedded interpreter: `ws` is the open
/// workspace (same hash, rebound when another file opens), steps applied or
/// undone from Python redraw the graph and join the History dock (and the
/// window's undo takes them back), errors print a traceback and change
/// nothing, statements continue over lines, and a plugin transformation
/// loaded at start-up is listed by the Transformations dock (its checks
/// run on the dock's worker thread, which must take Python's lock).
///
/// And a plugin that kills the process (`os._exit`, or a segmentation
/// fault as a broken C extension gives) loses no work: this binary runs
/// itself as the window that crashes (WEIR_CRASH_CHILD), after saving a
/// session and making one more step; the session still opens to what was
/// saved, and the autosave recovers the unsaved step.

#include "app/python_host/plugin_host.h"
#include "app/python_host/python_console.h"
#include "app/studio/autosave.h"
#include "app/studio/document.h"
#include "app/studio/graph_panel.h"
#include "app/studio/main_window.h"
#include "app/studio/python_dock.h"
#include "app/studio/transformations_dock.h"
#include "ir/hash.h"
#include "tests/gui/gui_test_helpers.h"
#include "tests/gui/test_environment.h"
#include "workspace/session.h"
#include "workspace/workspace.h"

#include <QAction>
#include <QApplication>
#include <QFile>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QThreadPool>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QTest>
#include <QTreeWidget>
#include <QUndoStack>

#include <algorithm>

#include <memory>
#include <optional>

using namespace weir;
using namespace weir::studio;
using namespace weir::studio::testing;

class PythonDockTest : public QObject {
  Q_OBJECT

private slots:
  void initTestCase();
  void cleanupTestCase();
  void init();
  void cleanup();
  void wsIsTheOpenWorkspace();
  void applyAndUndoFromPythonJoinTheHistory();
  void errorsPrintATracebackAndChangeNothing();
  void statementsContinueOverLines();
  void typedLinesRunAndComeBackWithUpAndDown();
  void wsFollowsTheOpenFile();
  void windowStepsHashAsPythonSteps();
  void pluginTransformationsAreListed();
  void aCrashingPluginLosesNoWork_data();
  void aCrashingPluginLosesNoWork();

private:
  workspace::Workspace &ws() { return *window_->document()->workspace(); }
  PythonDock *dock() { return window_->findChild<PythonDock *>(); }
  void open(const QString &path);

  std::unique_ptr<testing::TestEnvironment> env_;
  std::optional<app::PluginHost> python_;
  std::unique_ptr<MainWindow> window_;
};

void PythonDockTest::initTestCase() {
  env_ = std::make_unique<testing::TestEnvironment>();
  // Only the repository's example plugins, as `weir-studio --plugins`.
  python_.emplace(std::vector<std::string>{WEIR_PLUGIN_DIR}, false, true);
}

void PythonDockTest::cleanupTestCase() {
  // As weir-studio's main does: the pool's work may need Python's lock,
  // which the host takes back for good when it goes.
  QThreadPool::globalInstance()->waitForDone();
  python_.reset();
  env_.reset();
}

void PythonDockTest::init() {
  window_ = std::make_unique<MainWindow>();
  installPythonDock(*window_, std::make_unique<app::PythonConsole>());
  QVERIFY(dock() && dock()->available());
  open(WEIR_SAMPLE_MODEL);
}

void PythonDockTest::cleanup() {
  window_.reset();
  env_->clear();
}

void PythonDockTest::open(const QString &path) {
  window_->openFile(path);
  QVERIFY(waitForGraph(*window_));
}

void PythonDockTest::wsIsTheOpenWorkspace() {
  QString printed = dock()->run("print(ws.hash)");
  QCOMPARE(printed.trimmed(), QString::fromStdString(ir::hashHex(ws().hash())));
  QCOMPARE(dock()->run("print(ws.model_path)").trimmed(),
           QString(WEIR_SAMPLE_MODEL));
}

void PythonDockTest::applyAndUndoFromPythonJoinTheHistory() {
  std::uint64_t before = ws().hash();
  QUndoStack *stack = window_->document()->undoStack();
  dock()->run("m = ws.matches('expand-all')[0]");
  dock()->run("ws.apply('expand-all', m)");
  QCOMPARE(ws().current(), std::size_t{1});
  QVERIFY(ws().hash() != before);
  QCOMPARE(stack->count(), 1);
  QCOMPARE(stack->index(), 1);
  QVERIFY(window_->document()->isModified());
  QVERIFY(waitForGraph(*window_)); // the graph shows the expanded program

  // The window's undo takes back what Python applied ...
  window_->undoAction()->trigger();
  QCOMPARE(ws().current(), std::size_t{0});
  QCOMPARE(ws().hash(), before);
  QCOMPARE(dock()->run("print(ws.current)").trimmed(), QString("0"));
  // ... and Python's redo and undo move the History dock.
  dock()->run("ws.redo()");
  QCOMPARE(stack->index(), 1);
  dock()->run("ws.undo()");
  QCOMPARE(stack->index(), 0);
  QCOMPARE(stack->count(), 1);
  QVERIFY(window_->redoAction()->isEnabled());
  window_->redoAction()->trigger();
  QCOMPARE(ws().current(), std::size_t{1});
  QVERIFY(waitForGraph(*window_));
}

void PythonDockTest::errorsPrintATracebackAndChangeNothing() {
  std::uint64_t before = ws().hash();
  QString printed = dock()->run("1 / 0");
  QVERIFY2(printed.contains("ZeroDivisionError"), qPrintable(printed));
  printed = dock()->run("ws.apply('no-such-transformation', {})");
  QVERIFY2(printed.contains("no-such-transformation"), qPrintable(printed));
  printed = dock()->run("exit()");
  QVERIFY2(printed.contains("does not close"), qPrintable(printed));
  QCOMPARE(ws().hash(), before);
  QCOMPARE(window_->document()->undoStack()->count(), 0);
  QVERIFY(!window_->document()->isModified());
  // Still usable.
  QCOMPARE(dock()->run("print(6 * 7)").trimmed(), QString("42"));
}

void PythonDockTest::statementsContinueOverLines() {
  QVERIFY(dock()->run("for i in range(3):").isEmpty());
  QVERIFY(dock()->run("    print(i * i)").isEmpty());
  QCOMPARE(dock()->run(""), QString("0\n1\n4\n"));
}

void PythonDockTest::typedLinesRunAndComeBackWithUpAndDown() {
  QLineEdit *input = dock()->input();
  dock()->show();
  input->setFocus();
  QTest::keyClicks(input, "x = 20 + 1");
  QTest::keyClick(input, Qt::Key_Return);
  QTest::keyClicks(input, "print(x * 2)");
  QTest::keyClick(input, Qt::Key_Return);
  QVERIFY(dock()->output()->toPlainText().endsWith(">>> print(x * 2)\n42"));
  QVERIFY(input->text().isEmpty());
  QTest::keyClick(input, Qt::Key_Up);
  QCOMPARE(input->text(), QString("print(x * 2)"));
  QTest::keyClick(input, Qt::Key_Up);
  QCOMPARE(input->text(), QString("x = 20 + 1"));
  QTest::keyClick(input, Qt::Key_Down);
  QTest::keyClick(input, Qt::Key_Down);
  QVERIFY(input->text().isEmpty());
}

void PythonDockTest::wsFollowsTheOpenFile() {
  open(WEIR_MLP_MODEL);
  QCOMPARE(dock()->run("print(ws.model_path)").trimmed(),
           QString(WEIR_MLP_MODEL));
  QCOMPARE(dock()->run("print(ws.hash)").trimmed(),
           QString::fromStdString(ir::hashHex(ws().hash())));
}

void PythonDockTest::windowStepsHashAsPythonSteps() {
  // Steps taken in the window (through the document, as the docks do) ...
  Document *doc = window_->document();
  for (const char *id :
       {"fold-batchnorm", "fold-batchnorm", "expand-all", "map-fusion"}) {
    std::vector<transforms::Match> found = ws().matches(id);
    auto applicable =
        std::find_if(found.begin(), found.end(),
                     [&](const auto &m) { return bool(ws().check(id, m)); });
    QVERIFY2(applicable != found.end(), id);
    doc->apply(id, *applicable);
  }
  // ... give, step by step, the hashes a separate Python workspace gets
  // for the same steps from the same model.
  dock()->run("w2 = weir.Workspace(weir.load(ws.model_path))");
  dock()->run("for v in ws.history[1:]:");
  dock()->run("    _ = w2.apply(v.transformation, v.match, **v.params)");
  dock()->run("    print(w2.hash)");
  QString printed = dock()->run("");
  QStringList hashes = printed.trimmed().split('\n');
  QCOMPARE(hashes.size(), 4);
  for (int v = 1; v <= 4; ++v)
    QCOMPARE(hashes[v - 1],
             QString::fromStdString(ir::hashHex(ws().versions()[v].hash())));
  QCOMPARE(doc->undoStack()->count(), 4); // Python's w2 is not the window's
}

void PythonDockTest::pluginTransformationsAreListed() {
  // The sample CNN has Relu -> MaxPool: the example plugin matches there.
  QVERIFY(waitForMatches(*window_));
  QTreeWidget *tree = window_->transformationsDock()->tree();
  QTreeWidgetItem *plugin = nullptr;
  for (int t = 0; t < tree->topLevelItemCount(); ++t)
    for (int i = 0; i < tree->topLevelItem(t)->childCount(); ++i)
      if (tree->topLevelItem(t)->child(i)->text(0) == "swap-relu-maxpool")
        plugin = tree->topLevelItem(t)->child(i);
  QVERIFY(plugin);
  QVERIFY2(plugin->text(1).contains("apply"), qPrintable(plugin->text(1)));
  dock()->run("ws.apply('swap-relu-maxpool', "
              "ws.matches('swap-relu-maxpool')[0])");
  QCOMPARE(ws().current(), std::size_t{1});
  QCOMPARE(window_->document()->undoStack()->count(), 1);
  QVERIFY(waitForMatches(*window_));
}

namespace {

/// A plugin that matches any access node and kills the process when
/// applied, the way WEIR_CRASH_MODE says.
const char *const kCrashPlugin = R"py(import ctypes
import os

import weir


@weir.transformation(id="crash-the-process", tier="fusion",
                     summary="Kills the process (a test of crash safety)")
class CrashTheProcess:
    pattern = weir.Pattern().node("a", "access")

    def can_apply(self, program, match, params):
        return True

    def apply(self, editor, match, params):
        if os.environ.get("WEIR_CRASH_MODE") == "segfault":
            ctypes.string_at(0)  # a read of address 0, as a broken C extension
        os._exit(70)
)py";

/// The crashing window (run as a child process): opens the sample, makes two
/// steps and saves them as FOLDER/saved.weir, makes a third (autosaved, not
/// saved), prints the two hashes, then applies the crashing plugin.
int crashChild(int argc, char **argv) {
  QApplication app(argc, argv);
  QStandardPaths::setTestModeEnabled(true);
  const QString folder = qEnvironmentVariable("WEIR_CRASH_CHILD");
  app::PluginHost python({folder.toStdString()}, false, true);
  MainWindow w;
  w.openFile(WEIR_SAMPLE_MODEL);
  if (!waitForGraph(w))
    return 2;
  Document &doc = *w.document();
  workspace::Workspace &ws = wsOf(w);
  doc.apply("fold-batchnorm", firstApplicable(ws, "fold-batchnorm"));
  doc.apply("expand-all", firstApplicable(ws, "expand-all"));
  QSignalSpy saved(&doc, &Document::saved);
  doc.save(folder + "/saved.weir");
  if (saved.isEmpty() && !saved.wait(kTimeoutMs))
    return 3;
  const std::uint64_t savedHash = ws.hash();
  QSignalSpy written(w.autosave(), &Autosave::written);
  doc.apply("map-fusion", firstApplicable(ws, "map-fusion"));
  if (!QTest::qWaitFor(
          [&] { return !written.isEmpty() && !w.autosave()->busy(); },
          kTimeoutMs))
    return 4;
  std::printf("saved %s\nunsaved %s\n", ir::hashHex(savedHash).c_str(),
              ir::hashHex(ws.hash()).c_str());
  std::fflush(stdout);
  doc.apply("crash-the-process", firstApplicable(ws, "crash-the-process"));
  return 5; // not reached
}

} // namespace

void PythonDockTest::aCrashingPluginLosesNoWork_data() {
  QTest::addColumn<QString>("mode");
  QTest::newRow("os._exit") << "exit";
  QTest::newRow("segmentation fault") << "segfault";
}

void PythonDockTest::aCrashingPluginLosesNoWork() {
  QFETCH(QString, mode);
  QTemporaryDir folder;
  QFile plugin(folder.filePath("crash_plugin.py"));
  QVERIFY(plugin.open(QIODevice::WriteOnly));
  plugin.write(kCrashPlugin);
  plugin.close();

  QProcess child;
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.insert("WEIR_CRASH_CHILD", folder.path());
  env.insert("WEIR_CRASH_MODE", mode);
  // The sanitizers' report of the deliberate fault is not the test's.
  env.insert("ASAN_OPTIONS", "detect_leaks=0:handle_segv=0");
  child.setProcessEnvironment(env);
  child.start(QCoreApplication::applicationFilePath(), {});
  QVERIFY(child.waitForFinished(120000));
  const QString out = QString::fromUtf8(child.readAllStandardOutput());
  const QString err = QString::fromUtf8(child.readAllStandardError());
  if (mode == "exit") {
    QCOMPARE(child.exitStatus(), QProcess::NormalExit);
    QVERIFY2(child.exitCode() == 70, qPrintable(err));
  } else {
    QVERIFY2(child.exitStatus() == QProcess::CrashExit, qPrintable(err));
  }
  QStringList lines = out.trimmed().split('\n');
  QCOMPARE(lines.size(), 2);
  const QString savedHash = lines[0].section(' ', 1);
  const QString unsavedHash = lines[1].section(' ', 1);

  // The saved session is intact and opens to what was saved.
  const QString session = folder.filePath("saved.weir");
  QCOMPARE(QString::fromStdString(ir::hashHex(
               workspace::openSession(session.toStdString())->hash())),
           savedHash);
  // Reopening it offers the autosave, which holds the unsaved step.
  QCOMPARE(Autosave::recoverable(session), Autosave::fileFor(session));
  qputenv("WEIR_STUDIO_RECOVER", "yes");
  MainWindow next;
  next.openFile(session);
  QVERIFY(QTest::qWaitFor([&] { return next.document()->recovered(); },
                          kTimeoutMs));
  qputenv("WEIR_STUDIO_RECOVER", "no");
  QCOMPARE(QString::fromStdString(ir::hashHex(wsOf(next).hash())),
           unsavedHash);
  QVERIFY(next.document()->isModified());
}

int main(int argc, char **argv) {
  if (qEnvironmentVariableIsSet("WEIR_CRASH_CHILD"))
    return crashChild(argc, argv);
  QApplication app(argc, argv);
  app.setAttribute(Qt::AA_Use96Dpi, true);
  PythonDockTest test;
  QTEST_SET_MAIN_SOURCE_PATH
  return QTest::qExec(&test, argc, argv);
}
#include "python_dock_test.moc"
