#pragma once
/// \file
/// One edge (memlet) of the graph view: the route Graphviz gave, as a
/// cached QPainterPath, an arrowhead, and a label with the memlet
/// (`A[i, 0:64]`) and the data it moves in all (elements and bytes).

#include "ir/program.h"

#include <QColor>
#include <QGraphicsItem>
#include <QPainterPath>
#include <QPolygonF>
#include <QStringList>

#include <vector>

namespace weir::studio {

class EdgeItem : public QGraphicsItem {
public:
  enum { Type = UserType + 2 };

  /// `route`: cubic Bézier control points (start, then three per segment);
  /// fewer than four draws a straight line from `from` to `to`.
  EdgeItem(ir::EdgeId id, const std::vector<QPointF> &route, QPointF from,
           QPointF to, QStringList label, const QString &toolTip);

  ir::EdgeId edgeId() const { return id_; }
  const QStringList &label() const { return label_; }
  /// The overlay's colour (overlay.h); invalid for the usual one.
  void setOverlayColor(const QColor &color);
  QColor overlayColor() const { return overlay_; }

  int type() const override { return Type; }
  QRectF boundingRect() const override { return bounds_; }
  QPainterPath shape() const override { return hit_; }
  void paint(QPainter *painter, const QStyleOptionGraphicsItem *option,
             QWidget *widget) override;

private:
  ir::EdgeId id_;
  QPainterPath path_;
  QPainterPath hit_; ///< a wider stroke, easier to click
  QPolygonF arrow_;
  QStringList label_;
  QPointF labelAt_; ///< top left of the label
  QRectF bounds_;
  QColor overlay_;
};

} // namespace weir::studio
