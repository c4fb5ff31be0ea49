#include "app/studio/minimap.h"

#include <QEvent>
#include <QMouseEvent>
#include <QScrollBar>

namespace weir::studio {

namespace {

constexpr int kWidth = 200, kHeight = 150, kMargin = 8;

} // namespace

Minimap::Minimap(QGraphicsView *main) : QGraphicsView(main), main_(main) {
  setObjectName("minimap");
  setScene(main->scene());
  setInteractive(false);
  setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  setRenderHints(QPainter::Antialiasing);
  setFrameShape(QFrame::Box);
  setBackgroundBrush(main->backgroundBrush());
  setCursor(Qt::PointingHandCursor);
  setToolTip(tr("Overview: click or drag to move the view"));
  resize(kWidth, kHeight);
  // The rectangle follows the main view's scrolling and zooming (a zoom
  // changes the scroll ranges).
  for (QScrollBar *bar :
       {main->horizontalScrollBar(), main->verticalScrollBar()}) {
    connect(bar, &QScrollBar::valueChanged, viewport(),
            qOverload<>(&QWidget::update));
    connect(bar, &QScrollBar::rangeChanged, viewport(),
            qOverload<>(&QWidget::update));
  }
  if (scene())
    connect(scene(), &QGraphicsScene::sceneRectChanged, this, &Minimap::refit);
  main->installEventFilter(this);
  place();
}

QRectF Minimap::visibleRect() const {
  return main_->mapToScene(main_->viewport()->rect()).boundingRect();
}

void Minimap::refit() {
  if (scene())
    fitInView(scene()->sceneRect(), Qt::KeepAspectRatio);
  viewport()->update();
}

void Minimap::place() {
  move(main_->width() - width() - kMargin - 16,
       main_->height() - height() - kMargin - 16);
  raise();
}

bool Minimap::eventFilter(QObject *watched, QEvent *event) {
  if (watched == main_ && event->type() == QEvent::Resize)
    place();
  return QGraphicsView::eventFilter(watched, event);
}

void Minimap::drawForeground(QPainter *painter, const QRectF &) {
  QPen pen(QColor(0x1e, 0x88, 0xe5));
  pen.setCosmetic(true);
  pen.setWidth(2);
  painter->setPen(pen);
  painter->setBrush(QColor(0x1e, 0x88, 0xe5, 40));
  painter->drawRect(visibleRect());
}

void Minimap::panTo(const QPoint &pos) { main_->centerOn(mapToScene(pos)); }

void Minimap::mousePressEvent(QMouseEvent *event) {
  if (event->button() != Qt::LeftButton)
    return;
  dragging_ = true;
  panTo(event->position().toPoint());
  event->accept();
}

void Minimap::mouseMoveEvent(QMouseEvent *event) {
  if (dragging_ && (event->buttons() & Qt::LeftButton))
    panTo(event->position().toPoint());
  event->accept();
}

void Minimap::mouseReleaseEvent(QMouseEvent *event) {
  dragging_ = false;
  event->accept();
}

void Minimap::wheelEvent(QWheelEvent *event) { event->accept(); }

void Minimap::resizeEvent(QResizeEvent *event) {
  QGraphicsView::resizeEvent(event);
  refit();
}

} // namespace weir::studio
