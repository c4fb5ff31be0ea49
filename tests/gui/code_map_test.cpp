/// \file
/// The Code dock's C++ mapped back to the graph (code_dock.h): on the
/// sample model after expand-all, each `// node: <label>` region belongs to
/// its map entry; selecting a node highlights and scrolls to its lines,
/// clicking a line selects its node, and "Selected node only" shows just
/// the node's lines. The LLVM IR maps the same way, by the labels its
/// blocks are named after (codegen/cpu/llvm_emit.h).

#include "app/studio/code_dock.h"
#include "app/studio/document.h"
#include "app/studio/graph_panel.h"
#include "app/studio/main_window.h"
#include "tests/gui/gui_test_helpers.h"
#include "tests/gui/test_environment.h"

#include <QCheckBox>
#include <QComboBox>
#include <QPlainTextEdit>
#include <QScrollBar>
#include <QSignalSpy>
#include <QTabWidget>
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
  void llvmLinesMapToNodes();

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

void CodeMapTest::llvmLinesMapToNodes() {
  MainWindow w;
  w.show();
  QVERIFY(QTest::qWaitForWindowExposed(&w));
  w.openFile(kSample);
  QVERIFY(waitForGraph(w, kSlowTimeoutMs));
  w.document()->apply("expand-all", firstApplicable(wsOf(w), "expand-all"));
  QVERIFY(waitForGraph(w, kSlowTimeoutMs));
  CodeDock *code = w.codeDock();
  code->show();
  QVERIFY(QTest::qWaitFor([&] { return !code->busy(); }, kSlowTimeoutMs));
  QSignalSpy ready(code, &CodeDock::llvmReady);
  code->generateLLVMIR();
  QVERIFY(ready.wait(kSlowTimeoutMs));
  code->findChild<QTabWidget *>()->setCurrentIndex(1);
  using Tab = CodeDock::Tab;

  // Lines of the IR belong to map entries, each from a block named after
  // the entry's label.
  const ir::State &state = wsOf(w).program().states.front();
  std::map<ir::NodeId, QString> entries;
  for (const ir::Node &n : state.nodes)
    if (n.kind == ir::NodeKind::MapEntry)
      entries[n.id] = QString::fromStdString(n.label);
  const QStringList lines = code->llvmText().split('\n');
  QVERIFY(!code->nodeAtLine(0, Tab::LLVM)); // the module's header
  std::map<ir::NodeId, int> firstLine;
  for (int i = 0; i < int(lines.size()); ++i) {
    std::optional<ir::NodeId> node = code->nodeAtLine(i, Tab::LLVM);
    if (node && entries.count(*node) && !firstLine.count(*node)) {
      firstLine[*node] = i;
      QVERIFY2(lines[i].contains(entries[*node] + "$"), qPrintable(lines[i]));
    }
  }
  QVERIFY2(firstLine.size() >= 2, qPrintable(code->llvmText().left(4000)));
  // Prefer a convolution's im2col or gemm map, when the sample has one.
  auto pick = firstLine.begin();
  for (auto it = firstLine.begin(); it != firstLine.end(); ++it)
    if (entries[it->first].contains("im2col") ||
        entries[it->first].contains("gemm"))
      pick = it;
  ir::NodeId node = pick->first;
  ir::NodeId other =
      (pick == firstLine.begin() ? std::next(pick) : firstLine.begin())->first;

  // Code → graph: clicking a line of the node's block selects the node.
  GraphPanel *panel = w.graphPanel();
  panel->selectNode(other);
  QCOMPARE(selectedNode(panel), std::optional(other));
  clickLine(code->llvmView(), pick->second + 1);
  QCOMPARE(selectedNode(panel), std::optional(node));

  // Graph → code: the node's IR lines are highlighted.
  std::vector<int> mine = code->linesOf(node, Tab::LLVM);
  QVERIFY(!mine.empty());
  QCOMPARE(code->highlightedLines(Tab::LLVM), mine);
  panel->selectNode(other);
  QCOMPARE(code->highlightedLines(Tab::LLVM), code->linesOf(other, Tab::LLVM));

  // "Selected node only" filters the IR too.
  code->selectedOnly()->setChecked(true);
  QCOMPARE(code->shownLines(Tab::LLVM), code->linesOf(other, Tab::LLVM));
  QStringList shown = code->llvmView()->toPlainText().split('\n');
  QCOMPARE(int(shown.size()), int(code->linesOf(other, Tab::LLVM).size()));
  code->selectedOnly()->setChecked(false);
  QCOMPARE(int(code->shownLines(Tab::LLVM).size()), int(lines.size()));

  // The optimized IR keeps the names, so it maps too.
  code->findChild<QComboBox *>()->setCurrentIndex(1);
  QVERIFY(code->llvmText() != lines.join('\n'));
  QVERIFY(!code->linesOf(other, Tab::LLVM).empty());
  QCOMPARE(code->highlightedLines(Tab::LLVM), code->linesOf(other, Tab::LLVM));
}

QTEST_MAIN(CodeMapTest)
#include "code_map_test.moc"
