/// \file
/// The Transformations dock's preview under QTest (offscreen): previewing
/// a match changes nothing, shows the step's result with its new and
/// changed nodes highlighted and its removed nodes listed; Cancel leaves
/// the workspace as it was, and Apply makes the same version as applying
/// the step directly.

#include "app/studio/document.h"
#include "app/studio/graph_panel.h"
#include "app/studio/main_window.h"
#include "app/studio/preview_dialog.h"
#include "app/studio/transformations_dock.h"
#include "ir/hash.h"
#include "tests/gui/gui_test_helpers.h"
#include "tests/gui/test_environment.h"
#include "workspace/session.h"

#include <QListWidget>
#include <QPushButton>
#include <QTest>
#include <QTreeWidget>

using namespace weir;
using namespace weir::studio;
using namespace weir::studio::testing;

namespace {

/// Selects `match` of `transformation` in the dock; false when not listed.
bool selectMatch(MainWindow &w, const std::string &transformation,
                 const transforms::Match &match) {
  QTreeWidgetItem *item = matchItem(w, transformation, match);
  if (!item)
    return false;
  w.transformationsDock()->tree()->setCurrentItem(item);
  return true;
}

} // namespace

class PreviewTest : public QObject {
  Q_OBJECT

private slots:
  void initTestCase() { env_ = std::make_unique<testing::TestEnvironment>(); }
  void cleanup() { env_->clear(); }
  void cleanupTestCase() { env_.reset(); }
  void previewCommitsOnlyOnApply();

private:
  std::unique_ptr<testing::TestEnvironment> env_;
};

void PreviewTest::previewCommitsOnlyOnApply() {
  MainWindow w;
  w.show();
  QVERIFY(QTest::qWaitForWindowExposed(&w));
  w.openFile(kSample);
  std::unique_ptr<workspace::Workspace> ref =
      workspace::openModel(kSample.toStdString());
  const std::uint64_t before = wsOf(w).hash();
  transforms::Match fold = firstApplicable(*ref, "fold-batchnorm");
  QVERIFY(waitForMatches(w));
  TransformationsDock *dock = w.transformationsDock();
  QVERIFY(selectMatch(w, "fold-batchnorm", fold));
  QVERIFY(dock->previewButton()->isEnabled());

  // Preview, then Cancel: nothing changes.
  QTest::mouseClick(dock->previewButton(), Qt::LeftButton);
  QPointer<PreviewDialog> preview = dock->preview();
  QVERIFY(preview);
  QVERIFY(preview->isVisible());
  QCOMPARE(wsOf(w).hash(), before);
  QCOMPARE(wsOf(w).versions().size(), std::size_t(1));
  const ProgramDiff &diff = preview->diff();
  // The batch norm goes; the convolution takes its weights.
  QVERIFY(!diff.removed.empty());
  QCOMPARE(preview->removedList()->count(), int(diff.removed.size()));
  QVERIFY(!diff.changed.empty() || !diff.added.empty());
  ir::NodeId conv = fold.node("conv");
  QVERIFY(std::find(diff.changed.begin(), diff.changed.end(), conv) !=
          diff.changed.end());
  GraphPanel *panel = preview->graphPanel();
  QVERIFY(QTest::qWaitFor(
      [&] {
        return !panel->layingOut() && panel->shownProgram() == preview->after();
      },
      kTimeoutMs));
  for (ir::NodeId id : diff.changed)
    QVERIFY(panel->scene()->nodeItem(id)->highlighted());
  for (ir::NodeId id : diff.added)
    QVERIFY(panel->scene()->nodeItem(id)->highlighted());
  // The main graph still shows the current version.
  QVERIFY(w.graphPanel()->shownProgram() != preview->after());
  QTest::mouseClick(preview->cancelButton(), Qt::LeftButton);
  QVERIFY(QTest::qWaitFor([&] { return preview.isNull(); }, kTimeoutMs));
  QCOMPARE(wsOf(w).hash(), before);
  QCOMPARE(wsOf(w).versions().size(), std::size_t(1));

  // Preview, then Apply: the same version as applying directly.
  QVERIFY(selectMatch(w, "fold-batchnorm", fold));
  QVERIFY(dock->previewCurrent());
  preview = dock->preview();
  QVERIFY(preview);
  const std::uint64_t previewed = ir::structuralHash(*preview->after());
  QCOMPARE(wsOf(w).hash(), before);
  QTest::mouseClick(preview->applyButton(), Qt::LeftButton);
  ref->apply("fold-batchnorm", fold);
  QCOMPARE(dock->lastError(), QString());
  QCOMPARE(wsOf(w).hash(), ref->hash());
  QCOMPARE(previewed, ref->hash());
  QCOMPARE(wsOf(w).versions().size(), std::size_t(2));
  QVERIFY(QTest::qWaitFor([&] { return preview.isNull(); }, kTimeoutMs));
}

QTEST_MAIN(PreviewTest)
#include "preview_test.moc"
