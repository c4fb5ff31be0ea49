/// \file
/// weir-studio under QTest (offscreen): the window's edits — a node picked
/// in the graph, a transformation applied from the dock, undo and redo by
/// keyboard, a revert from the history — must leave exactly the program
/// the core Workspace gives for the same steps, and a saved session must
/// reopen to it. Also the layout pieces the window relies on.

#include "app/studio/code_dock.h"
#include "app/studio/document.h"
#include "app/studio/graph_layout.h"
#include "app/studio/graph_panel.h"
#include "app/studio/history_dock.h"
#include "app/studio/layout_runner.h"
#include "app/studio/main_window.h"
#include "app/studio/properties_dock.h"
#include "app/studio/transformations_dock.h"
#include "ir/error.h"
#include "tests/gui/gui_test_helpers.h"
#include "tests/gui/test_environment.h"
#include "workspace/session.h"

#include <QCheckBox>
#include <QElapsedTimer>
#include <QFile>
#include <QFontDatabase>
#include <QImage>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>
#include <QTreeWidget>
#include <QUndoStack>
#include <QUndoView>

using namespace weir;
using namespace weir::studio;
using namespace weir::studio::testing;

namespace {

/// Selects the match in the dock and presses Apply.
void applyFromDock(MainWindow &w, const std::string &transformation,
                   const transforms::Match &match) {
  QVERIFY(waitForMatches(w));
  QTreeWidgetItem *item = matchItem(w, transformation, match);
  QVERIFY2(item, match.str().c_str());
  w.transformationsDock()->tree()->setCurrentItem(item);
  QPushButton *apply = w.transformationsDock()->applyButton();
  QVERIFY(apply->isEnabled());
  QTest::mouseClick(apply, Qt::LeftButton);
  QCOMPARE(w.transformationsDock()->lastError(), QString());
}

} // namespace

class StudioTest : public QObject {
  Q_OBJECT

private slots:
  void initTestCase() { env_ = std::make_unique<testing::TestEnvironment>(); }
  void cleanup() { env_->clear(); }
  void cleanupTestCase() { env_.reset(); }
  void fontsAreAvailable();
  void layoutFollowsEdges();
  void newestLayoutWins();
  void editsMatchTheWorkspace();
  void sessionRoundTrip();
  void opensInTheBackground();
  void failuresLeaveTheDocumentAsItWas();
  void propertiesFollowTheSelection();
  void graphExportsAsSvgAndPng();
  void codeDockShowsGeneratedCode();
  void largeGraphLaysOutInTheBackground();

private:
  /// The windows autosave and read settings: kept out of the user's.
  std::unique_ptr<testing::TestEnvironment> env_;
};

void StudioTest::fontsAreAvailable() {
  // Glyph sizes come from font metrics; without a font every label
  // measures zero (QT_QPA_FONTDIR, see tests/gui/CMakeLists.txt).
  QVERIFY(!QFontDatabase::families().isEmpty());
}

void StudioTest::layoutFollowsEdges() {
  LayoutGraph g;
  g.nodes = {{80, 40}, {120, 50}, {60, 30}};
  g.edges = {{0, 1}, {1, 2}, {0, 2}};
  GraphvizLayout dot;
  LayoutResult r = dot.run(g);
  QCOMPARE(r.centers.size(), std::size_t(3));
  QCOMPARE(r.edgePaths.size(), std::size_t(3));
  // y points down: every edge goes down the page.
  QVERIFY(r.centers[0].y < r.centers[1].y);
  QVERIFY(r.centers[1].y < r.centers[2].y);
  for (const auto &path : r.edgePaths) {
    QVERIFY(path.size() >= 4);
    QCOMPARE((path.size() - 1) % 3, std::size_t(0));
  }
  for (const LayoutPoint &c : r.centers) {
    QVERIFY(c.x >= 0 && c.x <= r.width);
    QVERIFY(c.y >= 0 && c.y <= r.height);
  }
}

void StudioTest::newestLayoutWins() {
  LayoutRunner runner;
  QSignalSpy done(&runner, &LayoutRunner::finished);
  LayoutGraph g;
  for (int i = 0; i < 300; ++i) {
    g.nodes.push_back({60, 30});
    if (i > 0)
      g.edges.push_back({std::size_t(i - 1), std::size_t(i)});
  }
  runner.request(g);
  runner.request(g);
  std::uint64_t last = runner.request(g);
  QVERIFY(QTest::qWaitFor([&] { return !runner.busy(); }, kTimeoutMs));
  QTest::qWait(50); // anything else queued would have arrived by now
  QCOMPARE(done.count(), 1);
  QCOMPARE(done.front().front().value<std::uint64_t>(), last);

  // Cancelled: nothing is reported.
  runner.request(g);
  runner.cancel();
  QVERIFY(!runner.busy());
  QTest::qWait(300);
  QCOMPARE(done.count(), 1);
}

void StudioTest::editsMatchTheWorkspace() {
  MainWindow w;
  w.show();
  QVERIFY(QTest::qWaitForWindowExposed(&w));
  w.openFile(kSample);
  std::unique_ptr<workspace::Workspace> ref =
      workspace::openModel(kSample.toStdString());
  QCOMPARE(wsOf(w).hash(), ref->hash());
  QVERIFY(waitForGraph(w));

  // Pick the convolution that fold-batchnorm would fold into, by clicking
  // it in the graph.
  transforms::Match fold = firstApplicable(*ref, "fold-batchnorm");
  ir::NodeId conv = fold.node("conv");
  NodeItem *item = w.graphPanel()->scene()->nodeItem(conv);
  QVERIFY(item);
  GraphView *view = w.graphPanel()->view();
  view->centerOn(item);
  QTest::mouseClick(view->viewport(), Qt::LeftButton, {},
                    view->mapFromScene(item->scenePos()));
  QVERIFY(item->isSelected());
  QVERIFY(w.propertiesDock()->text().contains("operator: Conv"));

  // Step 1, with the dock showing only the matches that bind the node.
  QVERIFY(waitForMatches(w));
  w.transformationsDock()->setScope(TransformationsDock::Scope::SelectedNode);
  applyFromDock(w, "fold-batchnorm", fold);
  ref->apply("fold-batchnorm", fold);
  QCOMPARE(wsOf(w).hash(), ref->hash());
  QVERIFY(w.document()->isModified());
  QVERIFY(waitForGraph(w));
  // The convolution survives the fold and stays selected.
  QVERIFY(w.graphPanel()->scene()->nodeItem(conv)->isSelected());

  // Step 2: a whole-program step; step 3: a fusion of what it made.
  w.transformationsDock()->setScope(TransformationsDock::Scope::WholeProgram);
  applyFromDock(w, "expand-all", firstApplicable(*ref, "expand-all"));
  ref->apply("expand-all", firstApplicable(*ref, "expand-all"));
  QCOMPARE(wsOf(w).hash(), ref->hash());
  transforms::Match fuse = firstApplicable(*ref, "map-fusion");
  applyFromDock(w, "map-fusion", fuse);
  ref->apply("map-fusion", fuse);
  QCOMPARE(wsOf(w).hash(), ref->hash());
  QCOMPARE(w.document()->undoStack()->count(), 3);

  // Undo and redo from the keyboard.
  w.activateWindow();
  QVERIFY(QTest::qWaitForWindowActive(&w));
  QTest::keyClick(&w, Qt::Key_Z, Qt::ControlModifier);
  ref->undo();
  QCOMPARE(wsOf(w).hash(), ref->hash());
  QTest::keyClick(&w, Qt::Key_Z, Qt::ControlModifier | Qt::ShiftModifier);
  ref->redo();
  QCOMPARE(wsOf(w).hash(), ref->hash());
  QCOMPARE(wsOf(w).current(), std::size_t(3));

  // Revert by clicking the first step in the history (row 0 is the
  // imported model).
  w.historyDock()->show();
  QUndoView *history = w.historyDock()->view();
  QModelIndex row = history->model()->index(1, 0);
  QTest::mouseClick(history->viewport(), Qt::LeftButton, {},
                    history->visualRect(row).center());
  ref->revert(1);
  QCOMPARE(wsOf(w).current(), std::size_t(1));
  QCOMPARE(wsOf(w).hash(), ref->hash());
  // Later steps stay reachable.
  QVERIFY(w.redoAction()->isEnabled());
  QVERIFY(waitForGraph(w));
  QCOMPARE(w.graphPanel()->scene()->items().isEmpty(), false);

  // Back to the imported model: not modified any more.
  QTest::mouseClick(
      history->viewport(), Qt::LeftButton, {},
      history->visualRect(history->model()->index(0, 0)).center());
  ref->revert(0);
  QCOMPARE(wsOf(w).hash(), ref->hash());
  QVERIFY(!w.document()->isModified());
}

void StudioTest::sessionRoundTrip() {
  QTemporaryDir dir;
  QVERIFY(dir.isValid());
  QString session = dir.filePath("cnn.weir");
  std::uint64_t saved = 0;
  {
    MainWindow w;
    w.openFile(kSample);
    w.document()->apply("fold-batchnorm",
                        firstApplicable(wsOf(w), "fold-batchnorm"));
    w.document()->apply("expand-all", firstApplicable(wsOf(w), "expand-all"));
    w.document()->undoStack()->undo();
    QVERIFY(w.document()->isModified());
    w.saveFile(session);
    QVERIFY(!w.document()->isModified());
    QCOMPARE(w.document()->sessionPath(),
             QFileInfo(session).absoluteFilePath());
    saved = wsOf(w).hash();
    // The file is what the command line and Python open.
    QCOMPARE(workspace::openSession(session.toStdString())->hash(), saved);
    // Saved over, atomically: no temporary is left beside it.
    w.document()->apply("expand-all", firstApplicable(wsOf(w), "expand-all"));
    w.saveFile(session);
    saved = wsOf(w).hash();
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files), QStringList{"cnn.weir"});
  }
  MainWindow again;
  again.openFile(session);
  QCOMPARE(wsOf(again).hash(), saved);
  QVERIFY(!again.document()->isModified());
  // The recipe's steps are history: undo reaches the imported model.
  QCOMPARE(again.document()->undoStack()->count(), 2);
  again.document()->undoStack()->setIndex(0);
  QCOMPARE(wsOf(again).hash(),
           workspace::openModel(kSample.toStdString())->hash());
  QVERIFY(again.document()->isModified());
}

void StudioTest::opensInTheBackground() {
  // The document alone: the window would answer a failure with a dialog.
  Document doc;
  QSignalSpy opened(&doc, &Document::opened);
  QSignalSpy failed(&doc, &Document::openFailed);
  std::uint64_t sample = workspace::openModel(kSample.toStdString())->hash();
  // The second request wins over the first.
  doc.openInBackground("/nonexistent/model.onnx");
  doc.openInBackground(kSample);
  QCOMPARE(doc.opening(), kSample);
  QVERIFY(opened.wait(kTimeoutMs));
  QVERIFY(doc.opening().isEmpty());
  QTest::qWait(100);
  QCOMPARE(failed.count(), 0);
  QCOMPARE(opened.count(), 1);
  QCOMPARE(doc.workspace()->hash(), sample);

  // A failure is reported, and the open document stays.
  doc.openInBackground("/nonexistent/model.onnx");
  QVERIFY(failed.wait(kTimeoutMs));
  QCOMPARE(failed.front().front().toString(),
           QString("/nonexistent/model.onnx"));
  QVERIFY(failed.front().back().toString().contains("/nonexistent/model.onnx"));
  QCOMPARE(doc.workspace()->hash(), sample);

  // The window shows a busy bar while it opens, and hides it after.
  MainWindow w;
  w.show();
  w.openInBackground(kSample);
  QVERIFY(w.openProgress()->isVisible());
  QTRY_VERIFY_WITH_TIMEOUT(!w.openProgress()->isVisible(), kTimeoutMs);
  QVERIFY(w.document()->workspace());
  QCOMPARE(w.document()->workspace()->hash(), sample);
}

void StudioTest::failuresLeaveTheDocumentAsItWas() {
  MainWindow w;
  w.openFile(kSample);
  std::uint64_t before = wsOf(w).hash();
  QVERIFY_THROWS_EXCEPTION(Error, w.openFile("/nonexistent/model.onnx"));
  QCOMPARE(wsOf(w).hash(), before);
  QCOMPARE(w.document()->modelPath(), QFileInfo(kSample).absoluteFilePath());

  // A step whose check fails: the workspace's reason, no history entry.
  transforms::Match bad = firstApplicable(wsOf(w), "fold-batchnorm");
  bad.roles.back().second = bad.roles.front().second;
  try {
    w.document()->apply("fold-batchnorm", bad);
    QFAIL("a bad match applied");
  } catch (const Error &e) {
    QVERIFY2(QString(e.what()).contains("fold-batchnorm"), e.what());
  }
  QCOMPARE(wsOf(w).hash(), before);
  QCOMPARE(w.document()->undoStack()->count(), 0);
  QVERIFY(!w.document()->isModified());
}

void StudioTest::propertiesFollowTheSelection() {
  MainWindow w;
  w.show();
  w.openFile(kSample);
  QVERIFY(waitForGraph(w));
  // Nothing selected: the program's totals (as `weir inspect` prints them).
  QVERIFY(w.propertiesDock()->text().contains("FLOPs: 3,613,322"));
  const ir::State &state = wsOf(w).program().states.front();
  const ir::Edge &edge = state.edges.front();
  w.graphPanel()->scene()->edgeItem(edge.id)->setSelected(true);
  QString text = w.propertiesDock()->text();
  QVERIFY(
      text.contains("memlet: " + QString::fromStdString(edge.memlet.str())));
  QVERIFY(text.contains("bytes moved: "));
  QVERIFY(text.contains("type: f32["));
  w.graphPanel()->scene()->clearSelection();
  QVERIFY(w.propertiesDock()->text().contains("program: weir_cnn"));

  // Ctrl+F, type, Enter: the nodes that match, one after the other (the
  // Relu operators and the containers named after them).
  w.activateWindow();
  QVERIFY(QTest::qWaitForWindowActive(&w));
  QTest::keyClick(&w, Qt::Key_F, Qt::ControlModifier);
  QVERIFY(w.findField()->hasFocus());
  QTest::keyClicks(w.findField(), "relu");
  int operators = 0;
  for (int i = 0; i < 8; ++i) {
    QTest::keyClick(w.findField(), Qt::Key_Return);
    QString found = w.propertiesDock()->text();
    QVERIFY2(found.contains("relu", Qt::CaseInsensitive), qPrintable(found));
    operators += found.contains("operator: Relu");
  }
  QVERIFY(operators >= 2);
}

void StudioTest::graphExportsAsSvgAndPng() {
  MainWindow w;
  w.openFile(kSample);
  QVERIFY(waitForGraph(w));
  QTemporaryDir dir;
  QVERIFY(w.graphPanel()->exportImage(dir.filePath("g.svg")));
  QFile svg(dir.filePath("g.svg"));
  QVERIFY(svg.open(QIODevice::ReadOnly));
  QByteArray text = svg.readAll();
  QVERIFY(text.contains("<svg"));
  QVERIFY(text.contains("conv1.weight"));
  QVERIFY(w.graphPanel()->exportImage(dir.filePath("g.png")));
  QImage png(dir.filePath("g.png"));
  QVERIFY(!png.isNull());
  QVERIFY(png.width() > 200 && png.height() > 200);
}

void StudioTest::codeDockShowsGeneratedCode() {
  MainWindow w;
  w.show();
  w.openFile(kSample);
  CodeDock *code = w.codeDock();
  QSignalSpy cpp(code, &CodeDock::cppReady);
  code->show();
  QVERIFY(cpp.wait(kTimeoutMs));
  // The imported model still holds operators: its expanded form is shown.
  QVERIFY(code->cppText().contains("extern \"C\" int weir_"));
  QSignalSpy llvm(code, &CodeDock::llvmReady);
  code->generateLLVMIR();
  QVERIFY(llvm.wait(kTimeoutMs));
  QVERIFY(code->llvmText().contains("define"));
}

void StudioTest::largeGraphLaysOutInTheBackground() {
  std::shared_ptr<const ir::Program> p = syntheticNetwork(5000);
  GraphPanel panel;
  panel.resize(800, 600);
  panel.show();
  QSignalSpy laidOut(&panel, &GraphPanel::laidOut);
  QElapsedTimer clock;
  clock.start();
  panel.showProgram(p, 0);
  qint64 prepared = clock.elapsed();
  // The event loop keeps running while dot works on its thread.
  int ticks = 0;
  QTimer timer;
  connect(&timer, &QTimer::timeout, [&] { ticks += panel.layingOut(); });
  timer.start(10);
  QVERIFY(laidOut.wait(kTimeoutMs * 3));
  qint64 total = clock.elapsed();
  QVERIFY(ticks > 0);
  QCOMPARE(panel.shownProgram(), p);
  QCOMPARE(std::size_t(panel.scene()->items().size()),
           p->states[0].nodes.size() + p->states[0].edges.size());
  qInfo("%zu nodes: glyphs %lld ms, layout %.2f s (dot), shown after %lld ms",
        p->states[0].nodes.size(), prepared, laidOut.front().front().toDouble(),
        total);
}

QTEST_MAIN(StudioTest)
#include "studio_test.moc"
