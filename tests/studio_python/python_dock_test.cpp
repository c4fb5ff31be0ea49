/// \file
/// weir-studio's Python dock on the embedded interpreter: `ws` is the open
/// workspace (same hash, rebound when another file opens), steps applied or
/// undone from Python redraw the graph and join the History dock (and the
/// window's undo takes them back), errors print a traceback and change
/// nothing, statements continue over lines, and a plugin transformation
/// loaded at start-up is listed by the Transformations dock (its checks
/// run on the dock's worker thread, which must take Python's lock).

#include "app/python_host/plugin_host.h"
#include "app/python_host/python_console.h"
#include "app/studio/document.h"
#include "app/studio/graph_panel.h"
#include "app/studio/main_window.h"
#include "app/studio/python_dock.h"
#include "app/studio/transformations_dock.h"
#include "ir/hash.h"
#include "tests/gui/gui_test_helpers.h"
#include "tests/gui/test_environment.h"
#include "workspace/workspace.h"

#include <QAction>
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

QTEST_MAIN(PythonDockTest)
#include "python_dock_test.moc"
