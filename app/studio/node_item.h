#pragma once
/// \file
/// One node of the graph view: its glyph (glyph.h) at the position the
/// layout gave. It only draws and reports selection; what a click means is
/// the panel's business.

#include "app/studio/glyph.h"
#include "ir/program.h"

#include <QColor>
#include <QGraphicsItem>
#include <QPainterPath>
#include <QString>

namespace weir::studio {

class NodeItem : public QGraphicsItem {
public:
  enum { Type = UserType + 1 };

  NodeItem(ir::NodeId id, Glyph glyph);

  ir::NodeId nodeId() const { return id_; }
  const Glyph &glyph() const { return glyph_; }
  /// Marks the node as part of something the user is looking at (a match,
  /// the nodes a failed check names).
  void setHighlighted(bool on);
  bool highlighted() const { return highlighted_; }
  /// The overlay's fill (overlay.h); invalid for the glyph's own.
  void setOverlayColor(const QColor &color);
  QColor overlayColor() const { return overlay_; }
  /// Stands for a collapsed map scope hiding `inside` nodes (0: it does
  /// not); drawn as a stack of boxes.
  void setCollapsedScope(std::size_t inside) { inside_ = inside; }
  std::size_t collapsedScope() const { return inside_; }
  /// Stands for the collapsed operator group `name` (empty: it does not);
  /// drawn as a stack of boxes too.
  void setCollapsedGroup(const QString &name) { group_ = name; }
  const QString &collapsedGroup() const { return group_; }

  int type() const override { return Type; }
  QRectF boundingRect() const override;
  QPainterPath shape() const override { return outline_; }
  void paint(QPainter *painter, const QStyleOptionGraphicsItem *option,
             QWidget *widget) override;

private:
  ir::NodeId id_;
  Glyph glyph_;
  QPainterPath outline_; ///< centred on (0, 0)
  bool highlighted_ = false;
  QColor overlay_;
  std::size_t inside_ = 0;
  QString group_;
};

/// Below this zoom (scene units per pixel inverted), text is not drawn:
/// it would be unreadable and it dominates drawing time on large graphs.
constexpr double kTextLevelOfDetail = 0.4;

} // namespace weir::studio
