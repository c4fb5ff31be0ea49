/// \file
/// The Run dock under QTest (offscreen): a run of an optimized version
/// fills latency and error (tiny against version 0), and teaching mode
/// steps the reference interpreter, highlights the node it ran and shows
/// the selected edge's values as an interpreter of our own computes them.

#include "app/studio/document.h"
#include "app/studio/graph_panel.h"
#include "app/studio/main_window.h"
#include "app/studio/run_dock.h"
#include "codegen/cpu/compile.h"
#include "core/interp/interpreter.h"
#include "core/runtime/npy.h"
#include "core/runtime/random_tensor.h"
#include "tests/gui/gui_test_helpers.h"
#include "tests/gui/test_environment.h"

#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <limits>

using namespace weir;
using namespace weir::studio;
using namespace weir::studio::testing;

namespace {

/// This test waits twice the shared kTimeoutMs.
constexpr int kSlowTimeoutMs = 120000;

} // namespace

class RunDockTest : public QObject {
  Q_OBJECT

private slots:
  void initTestCase() { env_ = std::make_unique<testing::TestEnvironment>(); }
  void cleanup() { env_->clear(); }
  void cleanupTestCase() { env_.reset(); }
  void runFillsLatencyAndError();
  void stepShowsWhatTheInterpreterComputes();
  void runsOnChosenInputs();
  void closingWhileRunningIsSafe();
  void compileShowsProgressAndCancels();

private:
  std::unique_ptr<testing::TestEnvironment> env_;
};

void RunDockTest::runFillsLatencyAndError() {
  MainWindow w;
  w.show();
  QVERIFY(QTest::qWaitForWindowExposed(&w));
  w.openFile(kSample);
  RunDock *dock = w.runDock();
  dock->show();
  w.document()->apply("fold-batchnorm",
                      firstApplicable(wsOf(w), "fold-batchnorm"));
  QCOMPARE(wsOf(w).current(), std::size_t(1));
  QCOMPARE(dock->medianMs(), -1.0);
  QVERIFY(dock->latencyText().isEmpty());

  QSignalSpy finished(dock, &RunDock::finished);
  dock->setSeed(7);
  QTest::mouseClick(dock->runButton(), Qt::LeftButton);
  QVERIFY(dock->running());
  QVERIFY(!dock->runButton()->isEnabled());
  // The window stays responsive while compiling: events are processed.
  QVERIFY(finished.wait(kSlowTimeoutMs));
  QVERIFY2(dock->statusText().contains("seed 7"),
           qPrintable(dock->statusText()));
  QVERIFY(dock->medianMs() > 0);
  QVERIFY(dock->latencyText().contains("median of 5 runs"));
  // Folding a batch norm reorders float arithmetic: close, not identical.
  QVERIFY(dock->maxAbsError() >= 0);
  QVERIFY2(dock->maxAbsError() < 1e-3, qPrintable(dock->errorText()));
  QVERIFY(dock->errorText().contains("max abs"));
  QVERIFY(dock->runButton()->isEnabled());
  qInfo("%s; %s; %s", qPrintable(dock->statusText()),
        qPrintable(dock->latencyText()), qPrintable(dock->errorText()));
}

void RunDockTest::stepShowsWhatTheInterpreterComputes() {
  MainWindow w;
  w.show();
  QVERIFY(QTest::qWaitForWindowExposed(&w));
  w.openFile(kSample);
  RunDock *dock = w.runDock();
  dock->show();
  dock->setSeed(3);
  QVERIFY(waitForGraph(w, wsOf(w).programPtr(), kSlowTimeoutMs));

  // Step until a map scope (a computation) has run.
  QSignalSpy stepped(dock, &RunDock::stepped);
  const ir::Node *ran = nullptr;
  for (int i = 0; i < 200 && !ran; ++i) {
    QTest::mouseClick(dock->stepButton(), Qt::LeftButton);
    QVERIFY(stepped.wait(kSlowTimeoutMs));
    QCOMPARE(dock->stepsDone(), i + 1);
    const ir::State &s = dock->steppedProgram()->states[0];
    const ir::Node *n = s.findNode(dock->lastStepNode());
    QVERIFY(n);
    if (n->kind != ir::NodeKind::MapEntry)
      continue;
    // A scope that wrote varied values (not an initializing fill).
    const ir::Edge *e = s.outEdges(n->map().partner).front();
    const runtime::Tensor &v = dock->interpreter()->value(e->memlet.container);
    for (std::int64_t k = 1; k < v.elementCount() && !ran; ++k)
      if (v.getAsDouble(k) != v.getAsDouble(0))
        ran = n;
  }
  QVERIFY(ran);
  qInfo("stepped %d nodes to '%s'", dock->stepsDone(), ran->label.c_str());
  const std::shared_ptr<const ir::Program> program = dock->steppedProgram();
  QVERIFY(waitForGraph(w, program, kSlowTimeoutMs));
  NodeItem *item = w.graphPanel()->scene()->nodeItem(ran->id);
  QVERIFY(item);
  QVERIFY(item->highlighted());

  // The edge out of the scope's exit: what the scope wrote.
  const ir::State &s = program->states[0];
  std::vector<const ir::Edge *> out = s.outEdges(ran->map().partner);
  QVERIFY(!out.empty());
  const ir::Edge *edge = out.front();
  w.graphPanel()->scene()->clearSelection();
  w.graphPanel()->scene()->edgeItem(edge->id)->setSelected(true);
  QString text = dock->valuesText();
  QVERIFY2(text.startsWith(QString::fromStdString(edge->memlet.container)),
           qPrintable(text));

  // An interpreter of our own, the same steps on the same inputs.
  ir::Bindings dims;
  for (const std::string &symbol : program->symbols)
    dims.emplace(symbol, 1);
  interp::Interpreter mine(*program, runtime::randomInputs(*program, 3, dims));
  for (int i = 0; i < dock->stepsDone(); ++i)
    mine.step();
  const runtime::Tensor &t = mine.value(edge->memlet.container);
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (std::int64_t i = 0; i < t.elementCount(); ++i) {
    lo = std::min(lo, t.getAsDouble(i));
    hi = std::max(hi, t.getAsDouble(i));
  }
  QVERIFY(hi > lo); // the scope wrote something
  QString expected =
      QString("min %1 · max %2").arg(lo, 0, 'g', 6).arg(hi, 0, 'g', 6);
  QVERIFY2(text.contains(expected), qPrintable(text + " / " + expected));
  QVERIFY(text.contains(QString::number(t.getAsDouble(0), 'g', 6)));

  // Stopping shows the workspace's version again.
  dock->stopStepping();
  QVERIFY(!dock->stepping());
  QVERIFY(waitForGraph(w, wsOf(w).programPtr(), kSlowTimeoutMs));
}

void RunDockTest::runsOnChosenInputs() {
  MainWindow w;
  w.openFile(kSample);
  RunDock *dock = w.runDock();
  const ir::Program &p = wsOf(w).program();
  QCOMPARE(p.inputs.size(), std::size_t(1));
  QString input = QString::fromStdString(p.inputs.front());

  // A file that is not there: said so, nothing runs.
  dock->setInputFile(input, "/nonexistent/x.npy");
  dock->run();
  QVERIFY(!dock->running());
  QVERIFY2(dock->statusText().contains("/nonexistent/x.npy"),
           qPrintable(dock->statusText()));

  // A real one: the run says it used it.
  QTemporaryDir dir;
  QString file = dir.filePath("x.npy");
  runtime::writeNpy(file.toStdString(),
                    runtime::randomInputs(p, 5).at(p.inputs.front()));
  dock->setInputFile(input, file);
  QSignalSpy finished(dock, &RunDock::finished);
  dock->run();
  QVERIFY(finished.wait(kSlowTimeoutMs));
  QVERIFY2(dock->statusText().contains("the chosen inputs"),
           qPrintable(dock->statusText()));
  QCOMPARE(dock->maxAbsError(), 0.0); // version 0 against itself
  QVERIFY(dock->medianMs() > 0);
}

void RunDockTest::closingWhileRunningIsSafe() {
  auto w = std::make_unique<MainWindow>();
  w->openFile(kSample);
  w->runDock()->run();
  QVERIFY(w->runDock()->running());
  w->runDock()->step();
  w.reset(); // waits for the worker; nothing lands in the destroyed dock
  QTest::qWait(50);
}

void RunDockTest::compileShowsProgressAndCancels() {
  MainWindow w;
  w.show();
  QVERIFY(QTest::qWaitForWindowExposed(&w));
  w.openFile(kSample);
  RunDock *dock = w.runDock();
  dock->show();
  QSignalSpy finished(dock, &RunDock::finished);
  QSignalSpy progress(dock, &RunDock::compileProgress);
  // Cancelled at once: the run ends, saying so, and Run works again. On a
  // loaded machine this thread may lose the processor between run() and
  // cancel() for longer than the sample takes to compile (a tenth of a
  // second), and the run then ends as a run: a few tries, each from
  // nothing (earlier tests compiled the sample in this process, and a
  // compilation kept in memory would end before the cancel is read).
  for (int attempt = 0; attempt < 5; ++attempt) {
    codegen::forgetCompilations();
    dock->run();
    QVERIFY(dock->cancelButton()->isVisible());
    dock->cancel();
    QVERIFY(finished.wait(kSlowTimeoutMs));
    if (dock->statusText().contains("compilation cancelled"))
      break;
  }
  QVERIFY2(dock->statusText().contains("compilation cancelled"),
           qPrintable(dock->statusText()));
  QVERIFY(!dock->cancelButton()->isVisible());
  QVERIFY(dock->runButton()->isEnabled());

  // A run to the end reports pieces as they compile, up to all of them.
  progress.clear();
  dock->run();
  QVERIFY(finished.wait(kSlowTimeoutMs));
  QVERIFY(dock->medianMs() > 0);
  QVERIFY(!progress.isEmpty());
  int total = progress.last().at(1).toInt();
  QVERIFY(total > 1);
  QCOMPARE(progress.last().at(0).toInt(), total);
}

QTEST_MAIN(RunDockTest)
#include "run_dock_test.moc"
