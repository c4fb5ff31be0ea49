#pragma once
/// \file
/// The scene of one state: a NodeItem per node and an EdgeItem per memlet,
/// placed where the layout put them (a collapsed map scope is one box:
/// scope_view.h). It only draws; selection is the scene's own
/// (QGraphicsScene::selectionChanged) and the panel reads it. A double
/// click on a map entry, exit or collapsed scope, or the context menu's
/// Collapse/Expand, asks for the scope to be toggled; the context menu of
/// a node in an operator group offers to collapse the group, and a double
/// click on a collapsed group's box (or its menu) to expand it.

#include "app/studio/edge_item.h"
#include "app/studio/glyph.h"
#include "app/studio/graph_layout.h"
#include "app/studio/node_item.h"
#include "app/studio/overlay.h"
#include "app/studio/scope_view.h"
#include "ir/analysis.h"
#include "ir/program.h"

#include <QGraphicsScene>

#include <string>
#include <unordered_map>
#include <vector>

namespace weir::studio {

class GraphScene : public QGraphicsScene {
  Q_OBJECT

public:
  explicit GraphScene(QObject *parent = nullptr);

  /// Replaces every item. `layout.centers[i]` belongs to `graph.nodes[i]`,
  /// `layout.edgePaths[j]` to `graph.edges[j]`; `traffic` (may be null)
  /// gives the edges' volumes.
  void build(const ir::State &state, const SceneGraph &graph,
             const ir::StateAnalysis *traffic, const LayoutResult &layout);

  /// Removes every item. QGraphicsScene::clear() alone would leave the
  /// id maps pointing at deleted items.
  void clearGraph();

  NodeItem *nodeItem(ir::NodeId id) const;
  /// The item node `id` is drawn as: its own, or the box of the collapsed
  /// scope or group hiding it; null when the node is not in the scene.
  NodeItem *shownItem(ir::NodeId id) const;
  /// The hidden nodes and the boxes they are drawn in.
  const std::unordered_map<ir::NodeId, ir::NodeId> &hiddenIn() const {
    return hiddenIn_;
  }
  /// The operator group node `id` belongs to; empty when none.
  QString groupOf(ir::NodeId id) const;
  EdgeItem *edgeItem(ir::EdgeId id) const;
  /// Highlights exactly these nodes (those absent from the state are
  /// ignored; a node hidden in a collapsed scope highlights its box).
  void highlight(const std::vector<ir::NodeId> &ids);
  /// Colours the items as `colors` says; the others get their usual
  /// colours back.
  void setOverlay(const OverlayColors &colors);

signals:
  /// The user asked to collapse or expand the scope of map entry `entry`.
  void scopeToggleRequested(weir::ir::NodeId entry);
  /// The user asked to collapse or expand operator group `name`.
  void groupToggleRequested(const QString &name);

protected:
  void mouseDoubleClickEvent(QGraphicsSceneMouseEvent *event) override;
  void contextMenuEvent(QGraphicsSceneContextMenuEvent *event) override;

private:
  /// The map entry whose scope `item` opens, closes or stands for; 0 when
  /// none.
  ir::NodeId scopeOf(const QGraphicsItem *item) const;

  std::unordered_map<ir::NodeId, ir::NodeId> entryOfExit_;
  std::unordered_map<ir::NodeId, ir::NodeId> hiddenIn_;
  std::unordered_map<ir::NodeId, std::string> groupOf_;
  std::unordered_map<ir::NodeId, NodeItem *> nodes_;
  std::unordered_map<ir::EdgeId, EdgeItem *> edges_;
};

} // namespace weir::studio
