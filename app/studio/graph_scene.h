#pragma once
/// \file
/// The scene of one state: a NodeItem per node and an EdgeItem per memlet,
/// placed where the layout put them. It only draws; selection is the
/// scene's own (QGraphicsScene::selectionChanged) and the panel reads it.

#include "app/studio/edge_item.h"
#include "app/studio/glyph.h"
#include "app/studio/graph_layout.h"
#include "app/studio/node_item.h"
#include "app/studio/overlay.h"
#include "ir/analysis.h"
#include "ir/program.h"

#include <QGraphicsScene>

#include <unordered_map>
#include <vector>

namespace weir::studio {

class GraphScene : public QGraphicsScene {
  Q_OBJECT

public:
  explicit GraphScene(QObject *parent = nullptr);

  /// Replaces every item. `glyphs[i]` and `layout.centers[i]` belong to
  /// `state.nodes[i]`, `layout.edgePaths[j]` to `state.edges[j]`;
  /// `traffic` (may be null) gives the edges' volumes.
  void build(const ir::State &state, const std::vector<Glyph> &glyphs,
             const ir::StateAnalysis *traffic, const LayoutResult &layout);

  NodeItem *nodeItem(ir::NodeId id) const;
  EdgeItem *edgeItem(ir::EdgeId id) const;
  /// Highlights exactly these nodes (those absent from the state are
  /// ignored).
  void highlight(const std::vector<ir::NodeId> &ids);
  /// Colours the items as `colors` says; the others get their usual
  /// colours back.
  void setOverlay(const OverlayColors &colors);

private:
  std::unordered_map<ir::NodeId, NodeItem *> nodes_;
  std::unordered_map<ir::EdgeId, EdgeItem *> edges_;
};

} // namespace weir::studio
