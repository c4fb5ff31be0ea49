#include "app/studio/edge_item.h"

#include "app/studio/glyph.h"
#include "app/studio/node_item.h"

#include <QFontMetricsF>
#include <QPainter>
#include <QPainterPathStroker>
#include <QStyleOptionGraphicsItem>

#include <cmath>

namespace weir::studio {

namespace {

constexpr double kArrowLength = 7;
constexpr double kArrowWidth = 3.5;

} // namespace

EdgeItem::EdgeItem(ir::EdgeId id, const std::vector<QPointF> &route,
                   QPointF from, QPointF to, QStringList label,
                   const QString &toolTip)
    : id_(id), label_(std::move(label)) {
  if (route.size() >= 4) {
    path_.moveTo(route[0]);
    for (std::size_t i = 1; i + 2 < route.size(); i += 3)
      path_.cubicTo(route[i], route[i + 1], route[i + 2]);
  } else {
    path_.moveTo(from);
    path_.lineTo(to);
  }
  // The arrowhead continues the path's last direction up to the head
  // node's border, where Graphviz (told to draw none) ends the route.
  QPointF tip = path_.currentPosition();
  double angle = path_.angleAtPercent(1) * M_PI / 180;
  QPointF back(-std::cos(angle), std::sin(angle));
  QPointF side(-back.y(), back.x());
  arrow_ << tip << tip + back * kArrowLength + side * kArrowWidth
         << tip + back * kArrowLength - side * kArrowWidth;

  QPainterPathStroker stroker;
  stroker.setWidth(6);
  hit_ = stroker.createStroke(path_);

  QFontMetricsF fm(glyphFont());
  double w = 0;
  for (const QString &line : label_)
    w = std::max(w, fm.horizontalAdvance(line));
  labelAt_ =
      path_.pointAtPercent(0.5) + QPointF(4, -fm.height() * label_.size() / 2);
  QRectF labelRect(labelAt_, QSizeF(w, fm.height() * label_.size()));
  bounds_ = path_.boundingRect()
                .united(arrow_.boundingRect())
                .united(labelRect)
                .adjusted(-3, -3, 3, 3);
  setFlag(ItemIsSelectable);
  setToolTip(toolTip);
}

void EdgeItem::setOverlayColor(const QColor &color) {
  if (color != overlay_) {
    overlay_ = color;
    update();
  }
}

void EdgeItem::paint(QPainter *painter, const QStyleOptionGraphicsItem *,
                     QWidget *) {
  QColor color = isSelected()         ? QColor(0x15, 0x65, 0xc0)
                 : overlay_.isValid() ? overlay_
                                      : QColor(0x44, 0x44, 0x44);
  // An overlaid edge is drawn wide so its colour shows.
  painter->setPen(QPen(color, isSelected()         ? 2.5
                              : overlay_.isValid() ? 4.0
                                                   : 1.0));
  painter->setBrush(Qt::NoBrush);
  painter->drawPath(path_);
  painter->setBrush(color);
  painter->drawPolygon(arrow_);

  if (QStyleOptionGraphicsItem::levelOfDetailFromTransform(
          painter->worldTransform()) < kTextLevelOfDetail * 1.5)
    return;
  QFont font = glyphFont();
  QFontMetricsF fm(font);
  painter->setFont(font);
  painter->setPen(QColor(0x20, 0x40, 0x80));
  double y = labelAt_.y();
  for (const QString &line : label_) {
    painter->drawText(QPointF(labelAt_.x(), y + fm.ascent()), line);
    y += fm.height();
  }
}

} // namespace weir::studio
