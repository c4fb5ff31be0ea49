#include "app/studio/graph_scene.h"

#include "app/studio/text_format.h"

#include <QGraphicsSceneContextMenuEvent>
#include <QGraphicsSceneMouseEvent>
#include <QMenu>

#include <set>

namespace weir::studio {

namespace {

/// The memlet, then what it moves in all: `A[i, 0:64]`, `4,096 el · 16.0
/// KiB`. Edges inside a scope move elements but no bytes (ir/analysis.h).
QStringList edgeLabel(const ir::Edge &e, const ir::EdgeTraffic *traffic) {
  // Exporters' container names run long; the full memlet is in the
  // tooltip and the Properties dock.
  constexpr int kLabelChars = 40;
  QString memlet = QString::fromStdString(e.memlet.str());
  if (memlet.size() > kLabelChars)
    memlet = memlet.left(kLabelChars - 1) + "…";
  QStringList lines{memlet};
  if (traffic && !e.memlet.empty()) {
    QString volume = countText(traffic->elements) + " el";
    if (traffic->bytes.asConstant() != std::optional<std::int64_t>(0))
      volume += " · " + bytesText(traffic->bytes);
    lines << volume;
  }
  return lines;
}

} // namespace

GraphScene::GraphScene(QObject *parent) : QGraphicsScene(parent) {}

void GraphScene::build(const ir::State &state, const SceneGraph &graph,
                       const ir::StateAnalysis *traffic,
                       const LayoutResult &layout) {
  clearGraph();
  hiddenIn_ = graph.hiddenIn;
  groupOf_ = graph.groupOf;
  std::unordered_map<ir::EdgeId, const ir::EdgeTraffic *> trafficOf;
  if (traffic)
    for (const ir::EdgeTraffic &t : traffic->edges)
      trafficOf[t.edge] = &t;

  for (std::size_t i = 0; i < graph.nodes.size(); ++i) {
    const SceneGraph::Node &n = graph.nodes[i];
    auto *item = new NodeItem(n.id, n.glyph);
    if (n.group.empty())
      item->setCollapsedScope(n.inside);
    else
      item->setCollapsedGroup(QString::fromStdString(n.group));
    item->setPos(layout.centers[i].x, layout.centers[i].y);
    addItem(item);
    nodes_[n.id] = item;
    if (n.glyph.kind == ir::NodeKind::MapExit)
      if (const ir::Node *exit = state.findNode(n.id))
        entryOfExit_[n.id] = exit->map().partner;
  }
  for (std::size_t j = 0; j < graph.edges.size(); ++j) {
    const SceneGraph::Edge &drawn = graph.edges[j];
    const ir::Edge &e = state.edges[drawn.index];
    std::vector<QPointF> route;
    for (const LayoutPoint &p : layout.edgePaths[j])
      route.emplace_back(p.x, p.y);
    auto it = trafficOf.find(e.id);
    QStringList label =
        edgeLabel(e, it == trafficOf.end() ? nullptr : it->second);
    QString tip = QString::fromStdString(e.memlet.str());
    if (label.size() > 1)
      tip += "\n" + label.back();
    QPointF from(layout.centers[drawn.src].x, layout.centers[drawn.src].y);
    QPointF to(layout.centers[drawn.dst].x, layout.centers[drawn.dst].y);
    auto *item = new EdgeItem(e.id, route, from, to, label, tip);
    addItem(item);
    edges_[e.id] = item;
  }
  setSceneRect(QRectF(-20, -20, layout.width + 40, layout.height + 40));
}

void GraphScene::clearGraph() {
  nodes_.clear();
  edges_.clear();
  entryOfExit_.clear();
  hiddenIn_.clear();
  groupOf_.clear();
  clear();
}

ir::NodeId GraphScene::scopeOf(const QGraphicsItem *item) const {
  auto *node = qgraphicsitem_cast<const NodeItem *>(item);
  if (!node)
    return 0;
  if (node->collapsedScope() > 0 ||
      node->glyph().kind == ir::NodeKind::MapEntry)
    return node->nodeId();
  auto it = entryOfExit_.find(node->nodeId());
  return it == entryOfExit_.end() ? 0 : it->second;
}

void GraphScene::mouseDoubleClickEvent(QGraphicsSceneMouseEvent *event) {
  QGraphicsItem *item = itemAt(event->scenePos(), QTransform());
  // The items are rebuilt once the new layout arrives: not from inside
  // their own event.
  auto *node = qgraphicsitem_cast<NodeItem *>(item);
  if (node && !node->collapsedGroup().isEmpty()) {
    event->accept();
    QMetaObject::invokeMethod(
        this,
        [this, name = node->collapsedGroup()] {
          emit groupToggleRequested(name);
        },
        Qt::QueuedConnection);
    return;
  }
  if (ir::NodeId entry = scopeOf(item)) {
    event->accept();
    QMetaObject::invokeMethod(
        this, [this, entry] { emit scopeToggleRequested(entry); },
        Qt::QueuedConnection);
    return;
  }
  QGraphicsScene::mouseDoubleClickEvent(event);
}

void GraphScene::contextMenuEvent(QGraphicsSceneContextMenuEvent *event) {
  auto *node =
      qgraphicsitem_cast<NodeItem *>(itemAt(event->scenePos(), QTransform()));
  QString group = node ? node->collapsedGroup() : QString();
  bool groupBox = !group.isEmpty();
  if (node && !groupBox)
    group = groupOf(node->nodeId());
  ir::NodeId entry = groupBox ? 0 : scopeOf(node);
  if (!entry && group.isEmpty()) {
    QGraphicsScene::contextMenuEvent(event);
    return;
  }
  QMenu menu;
  QAction *toggleScope = nullptr, *toggleGroup = nullptr;
  if (entry)
    toggleScope =
        menu.addAction(node->collapsedScope() > 0 ? tr("&Expand scope")
                                                  : tr("&Collapse scope"));
  if (!group.isEmpty())
    toggleGroup = menu.addAction((groupBox ? tr("Expand operator group '%1'")
                                           : tr("Collapse operator group '%1'"))
                                     .arg(group));
  // The menu is modal: the scene may change under it, so only ids and
  // names are used once it returns.
  QAction *chosen = menu.exec(event->screenPos());
  if (chosen && chosen == toggleScope)
    emit scopeToggleRequested(entry);
  else if (chosen && chosen == toggleGroup)
    emit groupToggleRequested(group);
  event->accept();
}

NodeItem *GraphScene::nodeItem(ir::NodeId id) const {
  auto it = nodes_.find(id);
  return it == nodes_.end() ? nullptr : it->second;
}

NodeItem *GraphScene::shownItem(ir::NodeId id) const {
  auto box = hiddenIn_.find(id);
  return nodeItem(box == hiddenIn_.end() ? id : box->second);
}

QString GraphScene::groupOf(ir::NodeId id) const {
  auto it = groupOf_.find(id);
  return it == groupOf_.end() ? QString() : QString::fromStdString(it->second);
}

EdgeItem *GraphScene::edgeItem(ir::EdgeId id) const {
  auto it = edges_.find(id);
  return it == edges_.end() ? nullptr : it->second;
}

void GraphScene::setOverlay(const OverlayColors &colors) {
  for (auto &[id, item] : nodes_) {
    auto it = colors.nodes.find(id);
    item->setOverlayColor(it == colors.nodes.end() ? QColor() : it->second);
  }
  for (auto &[id, item] : edges_) {
    auto it = colors.edges.find(id);
    item->setOverlayColor(it == colors.edges.end() ? QColor() : it->second);
  }
}

void GraphScene::highlight(const std::vector<ir::NodeId> &ids) {
  std::set<ir::NodeId> marked;
  for (ir::NodeId id : ids) {
    auto box = hiddenIn_.find(id);
    marked.insert(box == hiddenIn_.end() ? id : box->second);
  }
  for (auto &[id, item] : nodes_)
    item->setHighlighted(marked.count(id) > 0);
}

} // namespace weir::studio
