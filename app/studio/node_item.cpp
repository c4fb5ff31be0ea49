#include "app/studio/node_item.h"

#include <QFontMetricsF>
#include <QPainter>
#include <QStyleOptionGraphicsItem>

namespace weir::studio {

namespace {

QPainterPath outlineFor(const Glyph &g) {
  double w = g.size.width(), h = g.size.height();
  QRectF r(-w / 2, -h / 2, w, h);
  QPainterPath p;
  switch (g.kind) {
  case ir::NodeKind::Access:
    p.addEllipse(r);
    break;
  case ir::NodeKind::Tasklet: {
    double c = std::min(w, h) * 0.28;
    p.moveTo(r.left() + c, r.top());
    p.lineTo(r.right() - c, r.top());
    p.lineTo(r.right(), r.top() + c);
    p.lineTo(r.right(), r.bottom() - c);
    p.lineTo(r.right() - c, r.bottom());
    p.lineTo(r.left() + c, r.bottom());
    p.lineTo(r.left(), r.bottom() - c);
    p.lineTo(r.left(), r.top() + c);
    p.closeSubpath();
    break;
  }
  case ir::NodeKind::MapEntry:
  case ir::NodeKind::MapExit: {
    // Wide towards the inside of the scope: below an entry, above an exit.
    double s = h * 0.5;
    bool entry = g.kind == ir::NodeKind::MapEntry;
    double topInset = entry ? s : 0, bottomInset = entry ? 0 : s;
    p.moveTo(r.left() + topInset, r.top());
    p.lineTo(r.right() - topInset, r.top());
    p.lineTo(r.right() - bottomInset, r.bottom());
    p.lineTo(r.left() + bottomInset, r.bottom());
    p.closeSubpath();
    break;
  }
  case ir::NodeKind::Library:
    p.addRect(r);
    break;
  case ir::NodeKind::Primitive: {
    double c = 8;
    p.moveTo(r.left() + c, r.top());
    p.lineTo(r.right(), r.top());
    p.lineTo(r.right(), r.bottom() - c);
    p.lineTo(r.right() - c, r.bottom());
    p.lineTo(r.left(), r.bottom());
    p.lineTo(r.left(), r.top() + c);
    p.closeSubpath();
    break;
  }
  }
  return p;
}

QColor fillFor(const Glyph &g) {
  switch (g.kind) {
  case ir::NodeKind::Access:
    return g.constant ? QColor(0xe8, 0xe8, 0xe8) : QColor(Qt::white);
  case ir::NodeKind::Tasklet:
    return QColor(0xff, 0xf4, 0xcc);
  case ir::NodeKind::MapEntry:
  case ir::NodeKind::MapExit:
    return QColor(0xdd, 0xea, 0xfb);
  case ir::NodeKind::Library:
    return QColor(0xe6, 0xf2, 0xe1);
  case ir::NodeKind::Primitive:
    return QColor(0xf1, 0xe3, 0xf8);
  }
  return Qt::white;
}

} // namespace

NodeItem::NodeItem(ir::NodeId id, Glyph glyph)
    : id_(id), glyph_(std::move(glyph)), outline_(outlineFor(glyph_)) {
  setFlag(ItemIsSelectable);
  setToolTip(glyph_.title + "\n" + glyph_.details.join("\n"));
  // Above the edges that end on it.
  setZValue(1);
}

void NodeItem::setOverlayColor(const QColor &color) {
  if (color != overlay_) {
    overlay_ = color;
    update();
  }
}

void NodeItem::setHighlighted(bool on) {
  if (on != highlighted_) {
    highlighted_ = on;
    update();
  }
}

QRectF NodeItem::boundingRect() const {
  return outline_.boundingRect().adjusted(-3, -3, 6, 6);
}

void NodeItem::paint(QPainter *painter, const QStyleOptionGraphicsItem *,
                     QWidget *) {
  QPen pen(Qt::black, glyph_.argument ? 2.0 : 1.0);
  if (glyph_.kind == ir::NodeKind::Library)
    pen.setWidthF(1.5);
  if (glyph_.kind == ir::NodeKind::Primitive) {
    pen.setColor(QColor(0x6a, 0x1b, 0x9a));
    pen.setWidthF(2.0);
  }
  if (highlighted_) {
    pen.setColor(QColor(0xe6, 0x7e, 0x00));
    pen.setWidthF(3.0);
  }
  if (isSelected()) {
    pen.setColor(QColor(0x15, 0x65, 0xc0));
    pen.setWidthF(3.0);
  }
  painter->setPen(pen);
  QColor fill = overlay_.isValid() ? overlay_ : fillFor(glyph_);
  if (inside_ > 0 || !group_.isEmpty()) {
    // A stack: more behind the box than it shows.
    if (inside_ > 0 && !overlay_.isValid())
      fill = QColor(0xdd, 0xea, 0xfb);
    painter->setBrush(fill);
    painter->drawPath(outline_.translated(3, 3));
  }
  painter->setBrush(fill);
  painter->drawPath(outline_);

  double lod = QStyleOptionGraphicsItem::levelOfDetailFromTransform(
      painter->worldTransform());
  if (lod < kTextLevelOfDetail)
    return;
  painter->setPen(Qt::black);
  QFont titleFont = glyphTitleFont(), detailFont = glyphFont();
  QFontMetricsF title(titleFont), detail(detailFont);
  double h = title.height() + detail.height() * double(glyph_.details.size());
  double w = glyph_.size.width();
  double y = -h / 2;
  painter->setFont(titleFont);
  painter->drawText(QRectF(-w / 2, y, w, title.height()), Qt::AlignCenter,
                    glyph_.title);
  y += title.height();
  painter->setFont(detailFont);
  for (const QString &line : glyph_.details) {
    painter->drawText(QRectF(-w / 2, y, w, detail.height()), Qt::AlignCenter,
                      line);
    y += detail.height();
  }
}

} // namespace weir::studio
