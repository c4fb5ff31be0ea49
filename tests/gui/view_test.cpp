/// \file
/// The graph view's navigation under QTest (offscreen): the minimap pans
/// the main view where it is clicked or dragged and shows what the view
/// shows; a map scope collapses into one box and expands back.

#include "app/studio/document.h"
#include "app/studio/graph_panel.h"
#include "app/studio/main_window.h"
#include "app/studio/minimap.h"
#include "tests/gui/test_environment.h"

#include <QMouseEvent>
#include <QTest>

#include <cmath>

using namespace weir;
using namespace weir::studio;

namespace {

const QString kSample = WEIR_SAMPLE_MODEL;
constexpr int kTimeoutMs = 60000;

workspace::Workspace &wsOf(MainWindow &w) { return *w.document()->workspace(); }

bool waitForGraph(MainWindow &w) {
  return QTest::qWaitFor(
      [&] {
        return !w.graphPanel()->layingOut() &&
               w.graphPanel()->shownProgram() == wsOf(w).programPtr();
      },
      kTimeoutMs);
}

int nodeItems(GraphPanel *panel) {
  int n = 0;
  for (QGraphicsItem *item : panel->scene()->items())
    n += qgraphicsitem_cast<NodeItem *>(item) != nullptr;
  return n;
}

/// Double-clicks node `id` in the graph.
void doubleClickNode(GraphPanel *panel, ir::NodeId id) {
  NodeItem *item = panel->scene()->nodeItem(id);
  QVERIFY(item);
  GraphView *view = panel->view();
  view->centerOn(item);
  QTest::mouseDClick(view->viewport(), Qt::LeftButton, {},
                     view->mapFromScene(item->scenePos()));
}

/// Whether the main view is centred on `p`, to a few scene units.
bool centredOn(GraphView *view, QPointF p) {
  QPointF c = view->mapToScene(view->viewport()->rect().center());
  return std::abs(c.x() - p.x()) < 4 && std::abs(c.y() - p.y()) < 4;
}

} // namespace

class ViewTest : public QObject {
  Q_OBJECT

private slots:
  void initTestCase() { env_ = std::make_unique<testing::TestEnvironment>(); }
  void cleanup() { env_->clear(); }
  void cleanupTestCase() { env_.reset(); }
  void minimapPansTheView();
  void scopesCollapseAndExpand();

private:
  std::unique_ptr<testing::TestEnvironment> env_;
};

void ViewTest::minimapPansTheView() {
  MainWindow w;
  w.show();
  QVERIFY(QTest::qWaitForWindowExposed(&w));
  w.openFile(kSample);
  QVERIFY(waitForGraph(w));
  GraphView *view = w.graphPanel()->view();
  Minimap *map = w.graphPanel()->minimap();
  QVERIFY(map->isVisible());
  // In the view's bottom-right corner.
  QVERIFY(map->geometry().right() > view->width() / 2);
  QVERIFY(map->geometry().bottom() > view->height() / 2);

  // Zoomed in, so that the view can pan.
  view->resetTransform();
  view->zoomBy(2);
  QRectF scene = w.graphPanel()->scene()->sceneRect();
  QVERIFY(!view->mapToScene(view->viewport()->rect())
               .boundingRect()
               .contains(scene));
  QPointF target(scene.center().x(), scene.top() + scene.height() * 0.6);
  QPoint click = map->mapFromScene(target);
  // A minimap pixel spans several scene units: where the click lands.
  target = map->mapToScene(click);
  QTest::mouseClick(map->viewport(), Qt::LeftButton, {}, click);
  QPointF c = view->mapToScene(view->viewport()->rect().center());
  QVERIFY2(centredOn(view, target),
           qPrintable(QString("centre %1,%2 target %3,%4 scene %5x%6")
                          .arg(c.x())
                          .arg(c.y())
                          .arg(target.x())
                          .arg(target.y())
                          .arg(scene.width())
                          .arg(scene.height())));
  // The minimap's rectangle is what the view shows.
  QRectF shown = view->mapToScene(view->viewport()->rect()).boundingRect();
  QCOMPARE(map->visibleRect(), shown);
  QVERIFY(shown.contains(target));

  // Dragging pans as the pointer moves.
  QPointF second(scene.center().x(), scene.top() + scene.height() * 0.4);
  QPoint to = map->mapFromScene(second);
  second = map->mapToScene(to);
  QTest::mousePress(map->viewport(), Qt::LeftButton, {}, click);
  QMouseEvent move(QEvent::MouseMove, QPointF(to),
                   map->viewport()->mapToGlobal(QPointF(to)), Qt::NoButton,
                   Qt::LeftButton, Qt::NoModifier);
  QApplication::sendEvent(map->viewport(), &move);
  QVERIFY(centredOn(view, second));
  QTest::mouseRelease(map->viewport(), Qt::LeftButton, {}, to);
}

void ViewTest::scopesCollapseAndExpand() {
  MainWindow w;
  w.show();
  QVERIFY(QTest::qWaitForWindowExposed(&w));
  w.openFile(kSample);
  w.document()->apply("expand-all");
  QVERIFY(waitForGraph(w));
  GraphPanel *panel = w.graphPanel();
  const ir::State &state = wsOf(w).program().states[0];
  const int all = nodeItems(panel);
  QCOMPARE(std::size_t(all), state.nodes.size());

  // The first map scope with something inside besides its exit.
  const ir::Node *entry = nullptr;
  for (const ir::Node &n : state.nodes)
    if (!entry && n.kind == ir::NodeKind::MapEntry)
      entry = &n;
  QVERIFY(entry);
  const std::uint64_t hash = wsOf(w).hash();

  doubleClickNode(panel, entry->id);
  QVERIFY(QTest::qWaitFor(
      [&] { return !panel->layingOut() && nodeItems(panel) < all; },
      kTimeoutMs));
  QVERIFY(panel->scopeCollapsed(entry->id));
  NodeItem *box = panel->scene()->nodeItem(entry->id);
  QVERIFY(box);
  const int inside = int(box->collapsedScope());
  QVERIFY(inside >= 2); // at least the body and the exit
  QCOMPARE(nodeItems(panel), all - inside);
  QVERIFY(box->glyph().details.join(" ").contains(
      QString("%1 nodes inside").arg(inside)));
  QVERIFY(!panel->scene()->nodeItem(entry->map().partner));
  // A hidden node's highlight (a match, a failed check) marks its box.
  panel->highlight({entry->map().partner});
  QVERIFY(box->highlighted());
  panel->highlight({});
  QVERIFY(!box->highlighted());
  // Only the view changed.
  QCOMPARE(wsOf(w).hash(), hash);

  // Expanding restores every node.
  doubleClickNode(panel, entry->id);
  QVERIFY(QTest::qWaitFor(
      [&] { return !panel->layingOut() && nodeItems(panel) == all; },
      kTimeoutMs));
  QVERIFY(!panel->scopeCollapsed(entry->id));
  QCOMPARE(panel->scene()->nodeItem(entry->id)->collapsedScope(),
           std::size_t(0));

  // Collapsing every scope (the context menu's action) leaves the access
  // nodes and one box per top-level scope.
  for (const ir::Node &n : state.nodes)
    if (n.kind == ir::NodeKind::MapEntry)
      panel->setScopeCollapsed(n.id, true);
  QVERIFY(QTest::qWaitFor(
      [&] { return !panel->layingOut() && nodeItems(panel) < all - inside; },
      kTimeoutMs));
  for (const ir::Node &n : state.nodes)
    if (n.kind == ir::NodeKind::Tasklet)
      QVERIFY(!panel->scene()->nodeItem(n.id));
}

QTEST_MAIN(ViewTest)
#include "view_test.moc"
