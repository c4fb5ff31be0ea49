/// \file
/// Cancelling a layout from the window, and Edit ▸ Verify current version
/// (verify_runner.h) under QTest (offscreen): a cancelled layout leaves the
/// previous scene and a later change lays out as usual; verification runs
/// on a worker thread while the event loop keeps running, reports a
/// correct version as verified and a deliberately wrong one as failed, and
/// closing the window while it runs is safe.

#include "app/studio/document.h"
#include "app/studio/graph_panel.h"
#include "app/studio/main_window.h"
#include "app/studio/verify_runner.h"
#include "tests/gui/gui_test_helpers.h"
#include "tests/gui/test_environment.h"

#include <QAction>
#include <QApplication>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTest>
#include <QTimer>

using namespace weir;
using namespace weir::studio;
using namespace weir::studio::testing;

namespace {

/// Verification compiles two programs with LLVM: twice the shared timeout.
constexpr int kSlowTimeoutMs = 120000;

/// Whether a label in `w`'s status bar says `text`.
bool statusSays(MainWindow &w, const QString &text) {
  for (QLabel *l : w.statusBar()->findChildren<QLabel *>())
    if (l->text().contains(text))
      return true;
  return false;
}

} // namespace

class VerifyTest : public QObject {
  Q_OBJECT

private slots:
  void initTestCase() { env_ = std::make_unique<testing::TestEnvironment>(); }
  void cleanup() { env_->clear(); }
  void cleanupTestCase() { env_.reset(); }
  void cancelKeepsTheSceneAndLaterLayoutsWork();
  void escapeCancelsTheLayout();
  void verifyReportsOkWhileTheWindowResponds();
  void wrongVersionFailsVerify();
  void closingWhileVerifyingIsSafe();

private:
  std::unique_ptr<testing::TestEnvironment> env_;
};

void VerifyTest::cancelKeepsTheSceneAndLaterLayoutsWork() {
  MainWindow w;
  w.show();
  QVERIFY(QTest::qWaitForWindowExposed(&w));
  w.openFile(kSample);
  QVERIFY(waitForGraph(w));
  GraphPanel *panel = w.graphPanel();
  std::shared_ptr<const ir::Program> old = panel->shownProgram();
  qsizetype items = panel->scene()->items().size();
  QVERIFY(!w.cancelLayoutButton()->isVisible());

  std::shared_ptr<const ir::Program> big = syntheticNetwork(1500);
  QSignalSpy laidOut(panel, &GraphPanel::laidOut);
  QSignalSpy cancelled(panel, &GraphPanel::layoutCancelled);
  panel->showProgram(big, 0);
  QVERIFY(panel->layingOut());
  QVERIFY(w.cancelLayoutButton()->isVisible());
  QTest::mouseClick(w.cancelLayoutButton(), Qt::LeftButton);
  QCOMPARE(cancelled.count(), 1);
  QVERIFY(!panel->layingOut());
  QVERIFY(!w.cancelLayoutButton()->isVisible());
  QVERIFY(statusSays(w, "cancelled"));
  QCOMPARE(panel->shownProgram(), old);
  QCOMPARE(panel->scene()->items().size(), items);

  // The next change lays out as usual (after dot finishes the dropped
  // layout on its thread), and the dropped layout never shows.
  w.document()->apply("fold-batchnorm",
                      firstApplicable(wsOf(w), "fold-batchnorm"));
  QVERIFY(waitForGraph(w, kSlowTimeoutMs));
  QCOMPARE(laidOut.count(), 1);
  QVERIFY(laidOut.front().at(1).value<std::size_t>() !=
          big->states[0].nodes.size());
  QVERIFY(panel->shownProgram() != big);
  QVERIFY(statusSays(w, "laid out"));
  QTest::qWait(50); // anything else queued would have arrived by now
  QCOMPARE(laidOut.count(), 1);
  QCOMPARE(panel->shownProgram(), wsOf(w).programPtr());
}

void VerifyTest::escapeCancelsTheLayout() {
  MainWindow w;
  w.show();
  QVERIFY(QTest::qWaitForWindowExposed(&w));
  w.openFile(kSample);
  QVERIFY(waitForGraph(w));
  std::shared_ptr<const ir::Program> old = w.graphPanel()->shownProgram();
  w.activateWindow();
  w.graphPanel()->view()->setFocus();
  QVERIFY2(QTest::qWaitForWindowActive(&w),
           "the window did not become active; the shortcut needs it");
  w.graphPanel()->showProgram(syntheticNetwork(1500), 0);
  QVERIFY(w.graphPanel()->layingOut());
  QTest::keyClick(w.graphPanel()->view(), Qt::Key_Escape);
  QVERIFY(!w.graphPanel()->layingOut());
  QCOMPARE(w.graphPanel()->shownProgram(), old);
}

void VerifyTest::verifyReportsOkWhileTheWindowResponds() {
  MainWindow w;
  w.show();
  QVERIFY(QTest::qWaitForWindowExposed(&w));
  w.openFile(kSample);
  QVERIFY(w.verifyAction()->isEnabled());
  QCOMPARE(w.verifyAction()->shortcut(), QKeySequence("Ctrl+Shift+V"));
  w.document()->apply("fold-batchnorm",
                      firstApplicable(wsOf(w), "fold-batchnorm"));
  QSignalSpy finished(w.verifyRunner(), &VerifyRunner::finished);
  w.verifyAction()->trigger();
  QVERIFY(w.verifyRunner()->busy());
  QVERIFY(!w.verifyAction()->isEnabled());
  QVERIFY2(w.verifyStatusText().contains("verifying version 1"),
           qPrintable(w.verifyStatusText()));
  // The event loop keeps running while the worker compiles and runs.
  int ticks = 0;
  QTimer timer;
  connect(&timer, &QTimer::timeout, [&] { ticks += w.verifyRunner()->busy(); });
  timer.start(10);
  QVERIFY(finished.wait(kSlowTimeoutMs));
  QVERIFY(ticks > 0);
  const VerifyRunner::Outcome &o = w.verifyRunner()->outcome();
  QVERIFY2(o.ok, qPrintable(o.text));
  QCOMPARE(o.version, std::size_t(1));
  QCOMPARE(o.reference, std::size_t(0));
  QVERIFY2(o.text.startsWith("verified"), qPrintable(o.text));
  QVERIFY2(w.verifyStatusText().contains("version 1 verified"),
           qPrintable(w.verifyStatusText()));
  QVERIFY(w.verifyAction()->isEnabled());
  QVERIFY(w.verifyMessage());
  QVERIFY(w.verifyMessage()->isVisible());
  QVERIFY(!w.verifyMessage()->isModal());
  QVERIFY(w.verifyMessage()->informativeText().contains("verified"));
}

void VerifyTest::wrongVersionFailsVerify() {
  // A "step" that changes a weight, as in tests/workspace's
  // VerifyFindsAWrongTransformation, claiming to be exact.
  MainWindow w;
  w.openFile(kSample);
  auto changed = std::make_shared<ir::Program>(wsOf(w).program());
  for (auto &[name, c] : changed->containers)
    if (c.isConstant() && c.dtype == ir::DType::F32) {
      auto bytes = std::make_shared<std::vector<std::byte>>(*c.constant);
      (*bytes)[0] = std::byte(std::uint8_t((*bytes)[0]) ^ 0x40);
      (*bytes)[3] = std::byte(std::uint8_t((*bytes)[3]) ^ 0x20);
      c.constant = bytes;
      break;
    }
  QSignalSpy finished(w.verifyRunner(), &VerifyRunner::finished);
  QVERIFY(
      w.verifyRunner()->start(wsOf(w).programPtr(), changed, {true, 0, 0}, 1));
  QVERIFY(finished.wait(kSlowTimeoutMs));
  const VerifyRunner::Outcome &o = w.verifyRunner()->outcome();
  QVERIFY(!o.ok);
  QVERIFY2(o.text.contains("MISMATCH"), qPrintable(o.text));
  QVERIFY2(w.verifyStatusText().contains("FAILED"),
           qPrintable(w.verifyStatusText()));
  QVERIFY(w.verifyMessage());
  QCOMPARE(w.verifyMessage()->icon(), QMessageBox::Warning);
}

void VerifyTest::closingWhileVerifyingIsSafe() {
  auto w = std::make_unique<MainWindow>();
  w->openFile(kSample);
  w->document()->apply("fold-batchnorm",
                       firstApplicable(wsOf(*w), "fold-batchnorm"));
  w->verifyCurrentVersion();
  QVERIFY(w->verifyRunner()->busy());
  w.reset(); // waits for the worker; nothing lands in the destroyed window
  QTest::qWait(50);
}

QTEST_MAIN(VerifyTest)
#include "verify_test.moc"
