/// \file
/// The Code dock's C++ mapped back to the graph (code_dock.h): on the
/// sample model after expand-all, each `// node: <label>` region belongs to
/// its map entry; selecting a node highlights and scrolls to its lines,
/// clicking a line selects its node, and "Selected node only" shows just
/// the node's lines.

#include "app/studio/code_dock.h"
#include "app/studio/document.h"
#include "app/studio/graph_panel.h"
#include "app/studio/main_window.h"
#include "tests/gui/gui_test_helpers.h"
#include "tests/gui/test_environment.h"

#include <QCheckBox>
#include <QPlainTextEdit>
#include <QScrollBar>
#include <QTest>
#include <QTextBlock>

#include <algorithm>
#include <map>

using namespace weir;
using namespace weir::studio;
using namespace weir::studio::testing;

namespace {

/// This test waits twice the shared kTimeoutMs.
constexpr int kSlowTimeoutMs = 120000;

std::optional<ir::NodeId> selectedNode(GraphPanel *panel) {
  QList<QGraphicsItem *> items = panel->scene()->selectedItems();
  if (items.size() != 1)
    return std::nullopt;
  if (auto *n = qgraphicsitem_cast<NodeItem *>(items.front()))
    return n->nodeId();
  return std::nullopt;
}

/// Clicks line `v` of the view (0-based, as shown).
void clickLine(QPlainTextEdit *view, int v) {
  view->verticalScrollBar()->setValue(std::max(0, v - 2));
  QTextCursor c(view->document()->findBlockByNumber(v));
  QPoint at = view->cursorRect(c).center() + QPoint(4, 0);
  QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, at);
}

} // namespace

class CodeMapTest : public QObject {
  Q_OBJECT

private slots:
  void initTestCase() { env_ = std::make_unique<testing::TestEnvironment>(); }
  void cleanup() { env_->clear(); }
  void cleanupTestCase() { env_.reset(); }
  void linesMapToNodesBothWays();

private:
  std::unique_ptr<testing::TestEnvironment> env_;
};

void CodeMapTest::linesMapToNodesBothWays() {
  MainWindow w;
  w.show();
  QVERIFY(QTest::qWaitForWindowExposed(&w));
  w.openFile(kSample);
  QVERIFY(waitForGraph(w, kSlowTimeoutMs));
  w.document()->apply("expand-all", firstApplicable(wsOf(w), "expand-all"));
  QVERIFY(waitForGraph(w, kSlowTimeoutMs));
  CodeDock *code = w.codeDock();
  code->show();
  QVERIFY(QTest::qWaitFor(
      [&] { return !code->busy() && !code->cppText().isEmpty(); },
      kSlowTimeoutMs));

  // Every marker of a map entry's label opens a region of that entry.
  const ir::State &state = wsOf(w).program().states.front();
  std::map<QString, ir::NodeId> entries;
  std::map<QString, int> uses;
  for (const ir::Node &n : state.nodes) {
    ++uses[QString::fromStdString(n.label)];
    if (n.kind == ir::NodeKind::MapEntry)
      entries[QString::fromStdString(n.label)] = n.id;
  }
  const QStringList lines = code->cppText().split('\n');
  QVERIFY(!code->nodeAtLine(0)); // the header comment
  std::vector<std::pair<int, ir::NodeId>> markers;
  for (int i = 0; i < int(lines.size()); ++i) {
    QString t = lines[i].trimmed();
    if (!t.startsWith("// node: "))
      continue;
    auto it = entries.find(t.mid(9));
    if (it == entries.end())
      continue;
    markers.push_back({i, it->second});
    QCOMPARE(code->nodeAtLine(i), std::optional(it->second));
    QCOMPARE(code->nodeAtLine(i + 1), std::optional(it->second));
    std::vector<int> mine = code->linesOf(it->second);
    QVERIFY(std::find(mine.begin(), mine.end(), i) != mine.end());
  }
  QVERIFY2(markers.size() >= 2, qPrintable(code->cppText().left(4000)));

  // Graph → code: the node's lines are highlighted and scrolled to.
  GraphPanel *panel = w.graphPanel();
  ir::NodeId first = markers.front().second;
  ir::NodeId last = markers.back().second;
  QVERIFY(first != last);
  panel->selectNode(last);
  QCOMPARE(selectedNode(panel), std::optional(last));
  QCOMPARE(code->highlightedLines(), code->linesOf(last));
  int at = code->cppView()->textCursor().blockNumber();
  QCOMPARE(code->nodeAtLine(code->shownLines().at(std::size_t(at))),
           std::optional(last));

  // Code → graph: clicking a line of another node selects it.
  clickLine(code->cppView(), markers.front().first + 1);
  QCOMPARE(selectedNode(panel), std::optional(first));
  QCOMPARE(code->highlightedLines(), code->linesOf(first));

  // "Selected node only": just the node's lines, and clicks still map.
  code->selectedOnly()->setChecked(true);
  std::vector<int> mine = code->linesOf(first);
  QCOMPARE(code->shownLines(), mine);
  QStringList shown = code->cppView()->toPlainText().split('\n');
  QCOMPARE(int(shown.size()), int(mine.size()));
  QVERIFY(shown.front().trimmed().startsWith("// node: "));
  for (std::size_t k = 0; k < mine.size(); ++k)
    QCOMPARE(shown[qsizetype(k)], lines[mine[k]]);
  panel->selectNode(last);
  QCOMPARE(code->shownLines(), code->linesOf(last));
  code->selectedOnly()->setChecked(false);
  QCOMPARE(int(code->shownLines().size()), int(lines.size()));
  QCOMPARE(code->highlightedLines(), code->linesOf(last));

  // Nothing selected: nothing highlighted.
  panel->scene()->clearSelection();
  QVERIFY(code->highlightedLines().empty());
}

QTEST_MAIN(CodeMapTest)
#include "code_map_test.moc"
