#include "app/studio/graph_panel.h"

#include <QFileInfo>
#include <QImage>
#include <QPainter>
#include <QShortcut>
#include <QSvgGenerator>
#include <QVBoxLayout>

#include <algorithm>

namespace weir::studio {

GraphPanel::GraphPanel(QWidget *parent)
    : QWidget(parent), view_(new GraphView(this)), scene_(new GraphScene(this)),
      legend_(new OverlayLegend(view_)), minimap_(nullptr),
      visibleTimer_(new QTimer(this)) {
  view_->setScene(scene_);
  minimap_ = new Minimap(view_);
  auto *layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(view_);
  connect(&runner_, &LayoutRunner::finished, this, &GraphPanel::onLaidOut);
  connect(&runner_, &LayoutRunner::failed, this,
          [this](std::uint64_t, const QString &message) {
            pending_ = {};
            emit layoutFailed(message);
          });
  // After onLaidOut and the failure handler: the runner is idle by then.
  connect(&runner_, &LayoutRunner::finished, this, &GraphPanel::noteBusy);
  connect(&runner_, &LayoutRunner::failed, this, &GraphPanel::noteBusy);
  // Esc on the graph cancels a slow layout (the window also offers a
  // button while one runs).
  cancelShortcut_ = new QShortcut(QKeySequence(Qt::Key_Escape), this);
  cancelShortcut_->setContext(Qt::WidgetWithChildrenShortcut);
  cancelShortcut_->setEnabled(false);
  connect(cancelShortcut_, &QShortcut::activated, this,
          &GraphPanel::cancelLayout);
  connect(scene_, &QGraphicsScene::selectionChanged, this,
          &GraphPanel::onSelectionChanged);
  connect(scene_, &GraphScene::scopeToggleRequested, this,
          &GraphPanel::toggleScope);
  connect(scene_, &GraphScene::groupToggleRequested, this,
          &GraphPanel::toggleGroup);
  // Scrolling fires for every pixel: the nodes in view are worked out once
  // the view rests.
  visibleTimer_->setSingleShot(true);
  visibleTimer_->setInterval(120);
  connect(view_, &GraphView::viewChanged, visibleTimer_,
          qOverload<>(&QTimer::start));
  connect(visibleTimer_, &QTimer::timeout, this,
          &GraphPanel::updateVisibleNodes);
}

GraphPanel::~GraphPanel() {
  visibleTimer_->stop();
  disconnect(view_, nullptr, visibleTimer_, nullptr);
  scene_->blockSignals(true);
  delete scene_;
  // It watches the view's events and scroll bars: gone before the view.
  delete minimap_;
}

void GraphPanel::showProgram(std::shared_ptr<const ir::Program> program,
                             int stateIndex, const transforms::IdMap *idMap) {
  if (idMap && selectedNode_)
    selectedNode_ = idMap->find(*selectedNode_);
  if (!program || stateIndex < 0 ||
      std::size_t(stateIndex) >= program->states.size()) {
    reset();
    return;
  }
  const ir::State &state = program->states[std::size_t(stateIndex)];
  Pending p;
  p.program = program;
  p.state = stateIndex;
  p.graph = sceneGraph(*program, state, collapsed_, collapsedGroups_);
  p.ticket = runner_.request(p.graph.layoutGraph());
  pending_ = std::move(p);
  noteBusy();
}

void GraphPanel::cancelLayout() {
  if (!runner_.busy())
    return;
  // The runner drops the running job's result and any queued request;
  // forgetting pending_ makes relayout() start from the shown scene.
  runner_.cancel();
  pending_ = {};
  noteBusy();
  emit layoutCancelled();
}

void GraphPanel::noteBusy() {
  if (busy_ == runner_.busy())
    return;
  busy_ = runner_.busy();
  cancelShortcut_->setEnabled(busy_);
  emit layingOutChanged(busy_);
}

void GraphPanel::relayout() {
  if (pending_.program)
    showProgram(pending_.program, pending_.state);
  else if (shown_)
    showProgram(shown_, shownState_);
}

void GraphPanel::setScopeCollapsed(ir::NodeId entry, bool collapsed) {
  if (collapsed == scopeCollapsed(entry))
    return;
  if (collapsed)
    collapsed_.insert(entry);
  else
    collapsed_.erase(entry);
  relayout();
}

void GraphPanel::toggleScope(ir::NodeId entry) {
  setScopeCollapsed(entry, !scopeCollapsed(entry));
}

void GraphPanel::setGroupCollapsed(const std::string &name, bool collapsed) {
  if (collapsed == groupCollapsed(name))
    return;
  if (collapsed)
    collapsedGroups_.insert(name);
  else
    collapsedGroups_.erase(name);
  relayout();
}

void GraphPanel::toggleGroup(const QString &name) {
  std::string n = name.toStdString();
  setGroupCollapsed(n, !groupCollapsed(n));
}

void GraphPanel::collapseAllGroups() {
  // A copy: relayout() replaces pending_.
  std::shared_ptr<const ir::Program> program =
      pending_.program ? pending_.program : shown_;
  int state = pending_.program ? pending_.state : shownState_;
  if (!program)
    return;
  bool changed = false;
  for (const OperatorGroup &g :
       operatorGroups(*program, program->states[std::size_t(state)]))
    changed = collapsedGroups_.insert(g.name).second || changed;
  if (changed)
    relayout();
}

void GraphPanel::expandAll() {
  if (collapsed_.empty() && collapsedGroups_.empty())
    return;
  collapsed_.clear();
  collapsedGroups_.clear();
  relayout();
}

void GraphPanel::reset() {
  runner_.cancel();
  pending_ = {};
  rebuilding_ = true;
  scene_->clearGraph();
  rebuilding_ = false;
  shown_.reset();
  analysis_.reset();
  legend_->showFor({});
  selectedNode_.reset();
  selectedEdge_.reset();
  highlighted_.clear();
  collapsed_.clear();
  collapsedGroups_.clear();
  visibleTimer_->start();
  noteBusy();
}

void GraphPanel::onLaidOut(std::uint64_t ticket,
                           std::shared_ptr<const LayoutResult> result) {
  if (ticket != pending_.ticket)
    return;
  Pending p = std::move(pending_);
  pending_ = {};
  const ir::State &state = p.program->states[std::size_t(p.state)];
  ir::ProgramAnalysis analysis = ir::analyze(*p.program);
  const ir::StateAnalysis *traffic = nullptr;
  for (const ir::StateAnalysis &s : analysis.states)
    if (s.state == state.name)
      traffic = &s;

  bool first = !shown_ || shownState_ != p.state;
  rebuilding_ = true;
  scene_->build(state, p.graph, traffic, *result);
  shown_ = p.program;
  shownState_ = p.state;
  if (selectedNode_) {
    // A node now hidden in a box: the box is selected instead.
    if (NodeItem *item = scene_->shownItem(*selectedNode_)) {
      item->setSelected(true);
      selectedNode_ = item->nodeId();
    } else {
      selectedNode_.reset();
    }
  } else if (selectedEdge_) {
    if (EdgeItem *item = scene_->edgeItem(*selectedEdge_))
      item->setSelected(true);
    else
      selectedEdge_.reset();
  }
  scene_->highlight(highlighted_);
  analysis_ = traffic ? std::optional(*traffic) : std::nullopt;
  applyOverlay();
  rebuilding_ = false;
  if (first)
    view_->fitGraph();
  minimap_->refit();
  visibleTimer_->start();
  emit laidOut(result->seconds, p.graph.nodes.size());
  // The selection may have vanished with the step that made this version.
  if (selectedNode_)
    emit nodeSelected(*selectedNode_);
  else if (selectedEdge_)
    emit edgeSelected(*selectedEdge_);
  else
    emit selectionCleared();
}

void GraphPanel::setOverlay(Overlay overlay) {
  overlay_ = overlay;
  applyOverlay();
}

void GraphPanel::applyOverlay() {
  OverlayColors colors;
  if (analysis_)
    colors = overlayColors(overlay_, *analysis_);
  scene_->setOverlay(colors);
  legend_->showFor(colors);
}

std::vector<ir::NodeId> GraphPanel::visibleNodes() const {
  std::set<ir::NodeId> ids;
  for (QGraphicsItem *item : scene_->items(view_->visibleSceneRect()))
    if (auto *n = qgraphicsitem_cast<NodeItem *>(item))
      ids.insert(n->nodeId());
  // A node hidden in a collapsed scope or group is seen where its box is.
  std::vector<ir::NodeId> hidden;
  for (const auto &[id, box] : scene_->hiddenIn())
    if (ids.count(box))
      hidden.push_back(id);
  ids.insert(hidden.begin(), hidden.end());
  return {ids.begin(), ids.end()};
}

void GraphPanel::updateVisibleNodes() {
  std::vector<ir::NodeId> ids = visibleNodes();
  if (ids == visible_)
    return;
  visible_ = std::move(ids);
  emit visibleNodesChanged(visible_);
}

void GraphPanel::selectNode(ir::NodeId id) {
  if (NodeItem *item = scene_->shownItem(id)) {
    scene_->clearSelection();
    item->setSelected(true);
    view_->centerOn(item);
  }
}

bool GraphPanel::findNext(const QString &text) {
  if (!shown_ || text.isEmpty())
    return false;
  const ir::CowList<ir::Node> &nodes =
      shown_->states[std::size_t(shownState_)].nodes;
  std::size_t start = 0;
  for (std::size_t i = 0; selectedNode_ && i < nodes.size(); ++i)
    if (nodes[i].id == *selectedNode_)
      start = i + 1;
  for (std::size_t k = 0; k < nodes.size(); ++k) {
    const ir::Node &n = nodes[(start + k) % nodes.size()];
    NodeItem *item = scene_->nodeItem(n.id);
    if (!item)
      continue;
    const Glyph &g = item->glyph();
    bool hit =
        g.title.contains(text, Qt::CaseInsensitive) ||
        QString::fromStdString(n.label).contains(text, Qt::CaseInsensitive);
    for (const QString &line : g.details)
      hit = hit || line.contains(text, Qt::CaseInsensitive);
    if (hit) {
      selectNode(n.id);
      return true;
    }
  }
  return false;
}

bool GraphPanel::exportImage(const QString &path) {
  if (!shown_)
    return false;
  QRectF area = scene_->sceneRect();
  if (QFileInfo(path).suffix().compare("svg", Qt::CaseInsensitive) == 0) {
    QSvgGenerator svg;
    svg.setFileName(path);
    svg.setSize(area.size().toSize());
    svg.setViewBox(QRectF(QPointF(0, 0), area.size()));
    svg.setTitle(QString::fromStdString(shown_->name));
    QPainter painter;
    if (!painter.begin(&svg))
      return false;
    scene_->render(&painter, QRectF(QPointF(0, 0), area.size()), area);
    return painter.end();
  }
  constexpr double kMaxSide = 16384;
  double scale =
      std::min({2.0, kMaxSide / area.width(), kMaxSide / area.height()});
  QImage image((area.size() * scale).toSize(), QImage::Format_ARGB32);
  image.fill(Qt::white);
  QPainter painter(&image);
  painter.setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
  scene_->render(&painter, QRectF(image.rect()), area);
  painter.end();
  return image.save(path);
}

void GraphPanel::highlight(const std::vector<ir::NodeId> &ids) {
  highlighted_ = ids;
  scene_->highlight(ids);
  if (!ids.empty())
    if (NodeItem *item = scene_->shownItem(ids.front()))
      view_->ensureVisible(item);
}

void GraphPanel::onSelectionChanged() {
  if (rebuilding_)
    return;
  selectedNode_.reset();
  selectedEdge_.reset();
  QList<QGraphicsItem *> items = scene_->selectedItems();
  if (items.isEmpty()) {
    emit selectionCleared();
    return;
  }
  if (auto *n = qgraphicsitem_cast<NodeItem *>(items.front())) {
    selectedNode_ = n->nodeId();
    emit nodeSelected(n->nodeId());
  } else if (auto *e = qgraphicsitem_cast<EdgeItem *>(items.front())) {
    selectedEdge_ = e->edgeId();
    emit edgeSelected(e->edgeId());
  }
}

} // namespace weir::studio
