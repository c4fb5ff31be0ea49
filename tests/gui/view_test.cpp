/// \file
/// The graph view's navigation under QTest (offscreen): the minimap pans
/// the main view where it is clicked or dragged and shows what the view
/// shows; a map scope, or the nodes one operator expanded into, collapses
/// into one box and expands back.

#include "app/studio/document.h"
#include "app/studio/graph_panel.h"
#include "app/studio/main_window.h"
#include "app/studio/minimap.h"
#include "app/studio/scope_view.h"
#include "onnx/import.h"
#include "tests/gui/gui_test_helpers.h"
#include "tests/gui/test_environment.h"
#include "workspace/workspace.h"

#include <QAction>
#include <QMouseEvent>
#include <QTest>

#include <QUndoStack>

#include <algorithm>
#include <cmath>
#include <set>

using namespace weir;
using namespace weir::studio;
using namespace weir::studio::testing;

namespace {

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

/// The action of the main window's menus called `text` (mnemonic left
/// out); null when none.
QAction *menuAction(MainWindow &w, const QString &text) {
  for (QAction *a : w.findChildren<QAction *>())
    if (a->text().remove('&') == text)
      return a;
  return nullptr;
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
  void operatorGroupsAreFoundByLabel();
  void operatorGroupsCollapseAndExpand();
  void groupsOfATransformer();

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

/// The group `name` of `groups`; null when none.
const OperatorGroup *findGroup(const std::vector<OperatorGroup> &groups,
                               const std::string &name) {
  for (const OperatorGroup &g : groups)
    if (g.name == name)
      return &g;
  return nullptr;
}

void ViewTest::operatorGroupsAreFoundByLabel() {
  workspace::Workspace ws(
      onnx_import::importModel(kSample.toStdString()).program);
  ws.apply("expand-all");
  const ir::Program &program = ws.program();
  const ir::State &state = program.states[0];
  std::vector<OperatorGroup> groups = operatorGroups(program, state);
  std::set<std::string> names;
  for (const OperatorGroup &g : groups)
    names.insert(g.name);
  // One node each (bn1.normalize, relu1.map, ...): no group.
  QCOMPARE(names, (std::set<std::string>{"conv1", "conv2", "fc", "gap", "pool1",
                                         "proj"}));

  // conv1: its five maps (entry, exit, body), the GEMM primitive and the
  // padded input, the columns and the zeroed output between them; not its
  // weights (constants), its input nor the output BatchNormalization reads.
  const OperatorGroup *conv1 = findGroup(groups, "conv1");
  QVERIFY(conv1);
  std::vector<ir::NodeId> expected;
  const ir::Node *firstOut = nullptr;
  for (const ir::Node &n : state.nodes) {
    bool own =
        n.kind != ir::NodeKind::Access && n.label.rfind("conv1.", 0) == 0;
    if (n.kind == ir::NodeKind::Access) {
      const std::string &c = n.access().container;
      own = c == "conv1_padded" || c == "conv1_columns";
      if (c == "conv1_out" && !firstOut) {
        firstOut = &n;
        own = true;
      }
    }
    if (own)
      expected.push_back(n.id);
  }
  QVERIFY(firstOut);
  QCOMPARE(expected.size(), std::size_t(19));
  QCOMPARE(conv1->nodes, expected);
  QCOMPARE(state.findNode(conv1->nodes.front())->label,
           std::string("conv1.pad_fill"));

  // Collapsed, it is one box: what crosses its border ends on the box, the
  // rest is not drawn.
  SceneGraph graph = sceneGraph(program, state, {}, {"conv1"});
  QCOMPARE(graph.nodes.size(), state.nodes.size() - 18);
  std::size_t box = graph.nodes.size();
  for (std::size_t i = 0; i < graph.nodes.size(); ++i)
    if (graph.nodes[i].id == conv1->nodes.front())
      box = i;
  QVERIFY(box < graph.nodes.size());
  QCOMPARE(graph.nodes[box].group, std::string("conv1"));
  QCOMPARE(graph.nodes[box].inside, std::size_t(18));
  QCOMPARE(graph.nodes[box].glyph.title, QString("▸ conv1"));
  QVERIFY(graph.nodes[box].glyph.details.contains("operator group"));
  QVERIFY(graph.nodes[box].glyph.details.contains("19 nodes inside"));
  std::set<std::string> neighbours;
  for (const SceneGraph::Edge &e : graph.edges) {
    if (e.src != box && e.dst != box)
      continue;
    const ir::Node &other =
        *state.findNode(graph.nodes[e.src == box ? e.dst : e.src].id);
    QCOMPARE(other.kind, ir::NodeKind::Access);
    neighbours.insert(other.access().container +
                      (e.src == box ? " out" : " in"));
  }
  QCOMPARE(neighbours,
           (std::set<std::string>{"input in", "conv1.weight in",
                                  "conv1.bias in", "conv1_out out"}));
  for (ir::NodeId id : conv1->nodes)
    if (id != conv1->nodes.front())
      QCOMPARE(graph.hiddenIn.at(id), conv1->nodes.front());
  // A collapsed scope inside the group is hidden with it.
  SceneGraph both = sceneGraph(
      program, state, {conv1->nodes.front(), conv1->nodes[3]}, {"conv1"});
  QCOMPARE(both.nodes.size(), graph.nodes.size());
}

void ViewTest::groupsOfATransformer() {
  // Operator names with dots of their own (`/encoder/layer.0/...`).
  QString path = kSample;
  path.replace("cnn.onnx", "transformer.onnx");
  workspace::Workspace ws(onnx_import::importModel(path.toStdString()).program);
  ws.apply("expand-all");
  const ir::Program &program = ws.program();
  const ir::State &state = program.states[0];
  std::vector<OperatorGroup> groups = operatorGroups(program, state);
  QVERIFY(!groups.empty());
  std::set<ir::NodeId> seen;
  std::set<std::string> collapse;
  std::size_t hidden = 0;
  for (const OperatorGroup &g : groups) {
    QVERIFY(g.nodes.size() >= 2);
    QVERIFY(g.name.find("/encoder/layer.0/") == 0 || g.name.front() == '/');
    for (ir::NodeId id : g.nodes) {
      QVERIFY(seen.insert(id).second); // in one group only
      const ir::Node &n = *state.findNode(id);
      if (n.kind != ir::NodeKind::Access)
        QVERIFY(n.label.rfind(g.name + ".", 0) == 0);
    }
    collapse.insert(g.name);
    hidden += g.nodes.size() - 1;
  }
  SceneGraph graph = sceneGraph(program, state, {}, collapse);
  QCOMPARE(graph.nodes.size(), state.nodes.size() - hidden);
  QCOMPARE(graph.hiddenIn.size(), hidden);
}

void ViewTest::operatorGroupsCollapseAndExpand() {
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
  const std::uint64_t hash = wsOf(w).hash();
  const std::size_t versions = wsOf(w).versions().size();
  const std::size_t current = wsOf(w).current();
  std::vector<OperatorGroup> groups = operatorGroups(wsOf(w).program(), state);
  const OperatorGroup *conv1 = findGroup(groups, "conv1");
  QVERIFY(conv1);
  const int size = int(conv1->nodes.size());
  const ir::NodeId first = conv1->nodes.front(), last = conv1->nodes.back();
  // What the context menu offers on any of its nodes.
  QCOMPARE(panel->scene()->groupOf(last), QString("conv1"));
  QCOMPARE(panel->scene()->groupOf(first), QString("conv1"));

  panel->setGroupCollapsed("conv1", true);
  QVERIFY(QTest::qWaitFor(
      [&] { return !panel->layingOut() && nodeItems(panel) < all; },
      kTimeoutMs));
  QCOMPARE(nodeItems(panel), all - (size - 1));
  NodeItem *box = panel->scene()->nodeItem(first);
  QVERIFY(box);
  QCOMPARE(box->collapsedGroup(), QString("conv1"));
  QVERIFY(!panel->scene()->nodeItem(last));
  // Edges crossing the border end on the box; those inside are gone.
  for (const ir::Edge &e : state.edges) {
    bool in = std::count(conv1->nodes.begin(), conv1->nodes.end(), e.src) > 0;
    bool out = std::count(conv1->nodes.begin(), conv1->nodes.end(), e.dst) > 0;
    EdgeItem *edge = panel->scene()->edgeItem(e.id);
    if (in && out) {
      QVERIFY(!edge);
    } else if (in || out) {
      QVERIFY(edge);
      QVERIFY(edge->sceneBoundingRect().intersects(
          box->sceneBoundingRect().adjusted(-2, -2, 2, 2)));
    }
  }
  // A hidden node's highlight and selection land on the box.
  panel->highlight({last});
  QVERIFY(box->highlighted());
  panel->highlight({});
  panel->selectNode(last);
  QVERIFY(box->isSelected());
  QCOMPARE(wsOf(w).hash(), hash);

  // It stays collapsed while its nodes exist: undo removes them, redo
  // brings them back.
  w.document()->undoStack()->undo();
  QVERIFY(waitForGraph(w));
  QVERIFY(panel->groupCollapsed("conv1"));
  w.document()->undoStack()->redo();
  QVERIFY(waitForGraph(w));
  QCOMPARE(wsOf(w).hash(), hash);
  QVERIFY(panel->scene()->nodeItem(first));
  QCOMPARE(panel->scene()->nodeItem(first)->collapsedGroup(), QString("conv1"));
  QCOMPARE(nodeItems(panel), all - (size - 1));

  // A double click on the box expands it.
  doubleClickNode(panel, first);
  QVERIFY(QTest::qWaitFor(
      [&] { return !panel->layingOut() && nodeItems(panel) == all; },
      kTimeoutMs));
  QVERIFY(!panel->groupCollapsed("conv1"));
  QVERIFY(panel->scene()->nodeItem(first)->collapsedGroup().isEmpty());

  // The View menu: collapse every group, then expand all.
  int hidden = 0;
  for (const OperatorGroup &g : groups)
    hidden += int(g.nodes.size()) - 1;
  QAction *collapseAll = menuAction(w, "Collapse all operator groups");
  QAction *expandAll = menuAction(w, "Expand all");
  QVERIFY(collapseAll && expandAll);
  collapseAll->trigger();
  QVERIFY(QTest::qWaitFor(
      [&] { return !panel->layingOut() && nodeItems(panel) < all; },
      kTimeoutMs));
  QCOMPARE(nodeItems(panel), all - hidden);
  for (const OperatorGroup &g : groups)
    QCOMPARE(panel->scene()->nodeItem(g.nodes.front())->collapsedGroup(),
             QString::fromStdString(g.name));
  panel->setScopeCollapsed(state.nodes.back().id, true); // not an entry
  expandAll->trigger();
  QVERIFY(QTest::qWaitFor(
      [&] { return !panel->layingOut() && nodeItems(panel) == all; },
      kTimeoutMs));
  for (const OperatorGroup &g : groups)
    QVERIFY(!panel->groupCollapsed(g.name));
  QCOMPARE(wsOf(w).hash(), hash);
  QCOMPARE(wsOf(w).versions().size(), versions);
  QCOMPARE(wsOf(w).current(), current);
}

QTEST_MAIN(ViewTest)
#include "view_test.moc"
