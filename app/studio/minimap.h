#pragma once
/// \file
/// The minimap: a small overview of the whole scene in the bottom-right
/// corner of the graph view, with the part the view shows drawn as a
/// rectangle. Clicking or dragging in it centres the main view there. It
/// draws the main view's scene (no copy) and follows its scrolling and
/// zooming.

#include <QGraphicsView>

namespace weir::studio {

class Minimap : public QGraphicsView {
  Q_OBJECT

public:
  /// Lives on `main` (a child widget of it), over its corner.
  explicit Minimap(QGraphicsView *main);

  /// The scene rectangle the main view shows.
  QRectF visibleRect() const;
  /// Fits the whole scene again (after it was rebuilt).
  void refit();

protected:
  bool eventFilter(QObject *watched, QEvent *event) override;
  void drawForeground(QPainter *painter, const QRectF &rect) override;
  void mousePressEvent(QMouseEvent *event) override;
  void mouseMoveEvent(QMouseEvent *event) override;
  void mouseReleaseEvent(QMouseEvent *event) override;
  void wheelEvent(QWheelEvent *event) override;
  void resizeEvent(QResizeEvent *event) override;

private:
  void place();
  void panTo(const QPoint &pos);

  QGraphicsView *main_;
  bool dragging_ = false;
};

} // namespace weir::studio
