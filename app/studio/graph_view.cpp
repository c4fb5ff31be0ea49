#include "app/studio/graph_view.h"

#include <QWheelEvent>

#include <algorithm>
#include <cmath>

namespace weir::studio {

namespace {

constexpr double kMinZoom = 0.01, kMaxZoom = 8;
/// Below this, fitting everything shows nothing readable.
constexpr double kSmallestFit = 0.2;
constexpr double kReadable = 0.8;

} // namespace

GraphView::GraphView(QWidget *parent) : QGraphicsView(parent) {
  setDragMode(ScrollHandDrag);
  setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
  setTransformationAnchor(AnchorUnderMouse);
  setBackgroundBrush(QColor(0xfa, 0xfa, 0xfa));
}

void GraphView::zoomBy(double factor) {
  double z = std::clamp(zoom() * factor, kMinZoom, kMaxZoom);
  setTransform(QTransform::fromScale(z, z));
  emit viewChanged();
}

QRectF GraphView::visibleSceneRect() const {
  return mapToScene(viewport()->rect()).boundingRect();
}

void GraphView::scrollContentsBy(int dx, int dy) {
  QGraphicsView::scrollContentsBy(dx, dy);
  emit viewChanged();
}

void GraphView::resizeEvent(QResizeEvent *event) {
  QGraphicsView::resizeEvent(event);
  emit viewChanged();
}

void GraphView::fitGraph() {
  if (!scene())
    return;
  QRectF r = scene()->sceneRect();
  fitInView(r, Qt::KeepAspectRatio);
  if (zoom() < kSmallestFit) {
    setTransform(QTransform::fromScale(kReadable, kReadable));
    centerOn(r.center().x(), r.top() + viewport()->height() / kReadable / 2);
  }
  emit viewChanged();
}

void GraphView::wheelEvent(QWheelEvent *event) {
  zoomBy(std::pow(1.0015, event->angleDelta().y()));
  event->accept();
}

} // namespace weir::studio
