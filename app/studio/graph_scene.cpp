#include "app/studio/graph_scene.h"

#include "app/studio/text_format.h"

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

void GraphScene::build(const ir::State &state, const std::vector<Glyph> &glyphs,
                       const ir::StateAnalysis *traffic,
                       const LayoutResult &layout) {
  clear();
  nodes_.clear();
  edges_.clear();
  std::unordered_map<ir::EdgeId, const ir::EdgeTraffic *> trafficOf;
  if (traffic)
    for (const ir::EdgeTraffic &t : traffic->edges)
      trafficOf[t.edge] = &t;

  std::unordered_map<ir::NodeId, QPointF> centerOf;
  for (std::size_t i = 0; i < state.nodes.size(); ++i) {
    const ir::Node &n = state.nodes[i];
    auto *item = new NodeItem(n.id, glyphs[i]);
    QPointF c(layout.centers[i].x, layout.centers[i].y);
    item->setPos(c);
    centerOf[n.id] = c;
    addItem(item);
    nodes_[n.id] = item;
  }
  for (std::size_t j = 0; j < state.edges.size(); ++j) {
    const ir::Edge &e = state.edges[j];
    std::vector<QPointF> route;
    for (const LayoutPoint &p : layout.edgePaths[j])
      route.emplace_back(p.x, p.y);
    auto it = trafficOf.find(e.id);
    QStringList label =
        edgeLabel(e, it == trafficOf.end() ? nullptr : it->second);
    QString tip = QString::fromStdString(e.memlet.str());
    if (label.size() > 1)
      tip += "\n" + label.back();
    auto *item =
        new EdgeItem(e.id, route, centerOf[e.src], centerOf[e.dst], label, tip);
    addItem(item);
    edges_[e.id] = item;
  }
  setSceneRect(QRectF(-20, -20, layout.width + 40, layout.height + 40));
}

NodeItem *GraphScene::nodeItem(ir::NodeId id) const {
  auto it = nodes_.find(id);
  return it == nodes_.end() ? nullptr : it->second;
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
  for (auto &[id, item] : nodes_)
    item->setHighlighted(std::find(ids.begin(), ids.end(), id) != ids.end());
}

} // namespace weir::studio
